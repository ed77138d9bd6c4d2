package contract

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/bits"
	"reflect"
	"testing"
)

func FuzzParseNamespace(f *testing.F) {
	for _, s := range []string{"", "root", " root ", "agent:x", "team:acme/agent:writer", "agent", "robot:x", "agent:",
		"agent:a.b", "agent:a/", "agent:a//agent:b", "ws:main/service:flow/agent:a-b_C9", "agent:a:b", "\tuser:u\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ns, err := ParseNamespace(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidRequest) {
				t.Fatalf("ParseNamespace(%q) failed with a non-contract error %v", s, err)
			}
			return
		}
		printed := ns.String()
		again, err := ParseNamespace(printed)
		if err != nil {
			t.Fatalf("printed form %q of %q does not parse: %v", printed, s, err)
		}
		if !again.Equal(ns) || again.String() != printed {
			t.Fatalf("parse -> print -> parse drifted: %q -> %q -> %q", s, printed, again.String())
		}
		if ns.Depth() > MaxDepth {
			t.Fatalf("%q parsed deeper than %d", s, MaxDepth)
		}
	})
}

func FuzzStoreItemJSON(f *testing.F) {
	for _, s := range []string{
		`{"type":"document","body":{"text":"x"},"meta":{"source":{"kind":"agent"}}}`,
		`{"type":"learning","text":"prefers tabs","kind":"preference","confidence":0.8,"meta":{"namespace":"team:acme/agent:writer","source":{"kind":"agent"},"tags":["style"]}}`,
		`{"type":"conversation","turns":[{"role":"user","text":"hi","at":"2025-05-06T07:08:09Z"},{"role":"assistant","text":"yo","tool_calls":[{"name":"read_plan","id":"call-1"}]}],"meta":{"thread_id":"t1","source":{"kind":"conversation","id":"t1"}}}`,
		`{"meta":{"observed_at":"2026-01-02T03:04:05.5+02:00","derive":false,"turns":{"first":1,"last":2}},"title":"<T>","body":{"uri":"u"},"type":"document","x":1}`,
		`{"type":"learning","text":"a\u2028b\u0000","kind":"fact","confidence":1e-7,"evidence":"e"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var it StoreItem
		if err := json.Unmarshal(data, &it); err != nil {
			return
		}
		if c := float64(it.Confidence); it.Type == KindLearning && math.IsInf(c, 0) {
			// A number beyond f32 range decodes to an infinity and prints as
			// null, exactly like serde; Validate refuses such an item.
			if it.Validate() == nil {
				t.Fatalf("an infinite confidence passed Validate")
			}
			return
		}
		wire, err := json.Marshal(it)
		if err != nil {
			t.Fatalf("marshal of a decoded item failed: %v", err)
		}
		var back StoreItem
		if err := json.Unmarshal(wire, &back); err != nil {
			t.Fatalf("wire form %s does not decode: %v", wire, err)
		}
		if !bytes.Equal(it.CanonicalJSON(), back.CanonicalJSON()) {
			t.Fatalf("canonical form drifted:\n%s\n%s", it.CanonicalJSON(), back.CanonicalJSON())
		}
		if it.Fingerprint() != back.Fingerprint() {
			t.Fatalf("fingerprint drifted for %s", wire)
		}
		wire2, _ := json.Marshal(back)
		if !bytes.Equal(wire, wire2) {
			t.Fatalf("wire form drifted:\n%s\n%s", wire, wire2)
		}
		if !json.Valid(it.CanonicalJSON()) {
			t.Fatalf("canonical form is not JSON: %q", it.CanonicalJSON())
		}
	})
}

func FuzzMetaFilterJSON(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"reach":{"at":"team:acme","inherit":false,"descendants":true}}`,
		`{"workspace":"w","folder":"/a/","file_path":"/a/b","kinds":["learning"],"sources":["rss"],"tags_any":["x"],"statuses":["candidate"]}`,
		`{"observed_after":"2000-01-01T00:00:00Z","observed_before":"2002-01-01T00:00:00.5Z","turns":{"first":4,"last":5},"tool_call":"t"}`,
		`{"reach":{},"thread_id":"tm-redacted:00","unknown":[1,2]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var mf MetaFilter
		if err := json.Unmarshal(data, &mf); err != nil {
			return
		}
		wire, err := json.Marshal(mf)
		if err != nil {
			t.Fatalf("marshal of a decoded filter failed: %v", err)
		}
		var back MetaFilter
		if err := json.Unmarshal(wire, &back); err != nil {
			t.Fatalf("wire form %s does not decode: %v", wire, err)
		}
		wire2, _ := json.Marshal(back)
		if !bytes.Equal(wire, wire2) {
			t.Fatalf("filter drifted:\n%s\n%s", wire, wire2)
		}
		if mf.IsEmpty() != back.IsEmpty() {
			t.Fatalf("emptiness drifted for %s", wire)
		}
	})
}

func FuzzParseBrowseQuery(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"limit":1000,"offset":3}`, `{"status":[],"kind":"learning"}`,
		`{"filter":{"reach":{"at":"team:acme"},"statuses":["active"]},"now":"2026-11-29T18:00:00.000Z"}`,
		`{"filters":[{"field":"content","op":"contains","value":"Élan"},{"field":"confidence","op":"between","min":0.1,"max":0.9},{"field":"updated_at","op":"between_days","from_day":"2026-01-01","until_day":"2026-02-01"},{"field":"namespace","op":"within","value":"root"},{"field":"status","op":"not_in","values":["superseded"]}]}`,
		`{"order_by":[{"field":"confidence","dir":"desc"},{"field":"observed_at","dir":"asc"}],"cursor":"eyJ2IjoxfQ"}`,
		`{"limit":0}`, `{"now":"2026-02-31T00:00:00.000Z"}`, `{"filters":[{"field":"x"}]}`, `[]`, `{"filters":[{"field":"confidence","op":"gt","value":1e999}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		q, err := ParseBrowseQuery(data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Kind != KindInvalidRequest || e.Code != CodeInvalidQuery {
				t.Fatalf("ParseBrowseQuery error %v is not an invalid-query error", err)
			}
			return
		}
		if err := q.Validate(); err != nil {
			t.Fatalf("a parsed query fails Validate: %v\n%s", err, data)
		}
		wire, err := json.Marshal(q)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		back, err := ParseBrowseQuery(wire)
		if err != nil {
			t.Fatalf("re-marshalled query %s does not parse: %v", wire, err)
		}
		wire2, _ := json.Marshal(back)
		if !bytes.Equal(wire, wire2) {
			t.Fatalf("query drifted:\n%s\n%s", wire, wire2)
		}
		if q.Identity() != back.Identity() || q.EffectiveLimit() != back.EffectiveLimit() || q.Offset != back.Offset || q.Cursor != back.Cursor {
			t.Fatalf("re-marshalled query differs: %s", wire)
		}
		// Matching and ordering never panic on a valid query.
		r := rec("x", learning(0.5), observed("2026-01-01T00:00:00Z"))
		_ = q.Matches(&r)
		_ = CompareRecords(q.Order(), &r, &r)
	})
}

func FuzzDecodeCursor(f *testing.F) {
	r := rec("last", learning(0.25), observed("2026-01-01T00:00:00Z"))
	orders := [][]SortKey{nil, {{"confidence", "desc"}}, {{"observed_at", "asc"}, {"namespace", "asc"}, {"kind", "desc"}}}
	for i, o := range orders {
		q := BrowseQuery{OrderBy: o}
		f.Add(EncodeCursor(q, &r), uint8(i))
	}
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	f.Add(enc(`{"v":1,"fp":"00000000","key":[],"id":"a"}`), uint8(0))
	f.Add(enc(`{"v":1,"fp":"`+(BrowseQuery{}).Fingerprint()+`","key":[null],"id":"a"}`), uint8(0))
	f.Add(enc(`{"v":1.0,"fp":"`+(BrowseQuery{OrderBy: orders[1]}).Fingerprint()+`","key":[1e999],"id":""}`), uint8(1))
	f.Add("!!", uint8(2))
	f.Fuzz(func(t *testing.T, cursor string, which uint8) {
		q := BrowseQuery{OrderBy: orders[int(which)%len(orders)], Cursor: cursor}
		pos, err := q.DecodeCursor()
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Kind != KindInvalidRequest || e.Code != CodeContinuationInvalid {
				t.Fatalf("DecodeCursor error %v is not continuation-invalid", err)
			}
			return
		}
		if cursor == "" {
			if pos != nil {
				t.Fatal("no cursor decodes to a position")
			}
			return
		}
		if pos == nil || pos.ID == "" || len(pos.Key) != len(q.Order()) {
			t.Fatalf("accepted cursor decoded to %+v", pos)
		}
		_ = pos.After(q.Order(), &r)
	})
}

// FuzzChangesPageScan: the hand scan of a page of changes accepts only what
// encoding/json accepts, and reads it the same.
func FuzzChangesPageScan(f *testing.F) {
	for _, s := range []string{
		`{"changes":[],"next":4,"head":4,"floor":0}`,
		`{"changes":null,"next":1}`,
		`{"changes":[{"seq":1,"at":"2026-12-01T14:04:12.254Z","op":"forget","id":"a","namespace":"team:acme","status":"active"}],"next":1,"head":2,"floor":0}`,
		`{"changes":[{"seq":2,"at":"2026-12-01T14:04:12.254Z","op":"store","id":"x","namespace":"team:acme","status":"active","record":{"id":"x","kind":"document","text":"plain \u003cb\u003e é","meta":{"namespace":"team:acme","source":{"kind":"agent","id":"c1"},"tags":["a","b"],"agent_id":"w","turns":{"first":1,"last":2},"derive":true,"observed_actor":{"id":"u"}},"status":"active","created_at":"2026-12-01T14:04:12.254Z","updated_at":"2026-12-01T14:04:12.254Z"}}],"next":2,"head":2,"floor":0}`,
		`{"changes":[{"seq":3,"at":"x","op":"approve","id":"y","namespace":"root","status":"candidate","record":{"id":"y","kind":"learning","text":"t","meta":{},"confidence":0.5,"status":"candidate","created_at":"a","updated_at":"b","expires_at":"c","superseded_by":null,"extra":[1,{"a":"}"}]}}],"Next":3}`,
		` {"changes" : [ ] , "next" : 10 } `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ok := scanChangesPage(data)
		if !ok {
			return
		}
		slow, err := decodeChangesPage(data)
		if err != nil {
			t.Fatalf("the scan read %q, encoding/json refuses it: %v", data, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q:\nscanned %+v\nencoding/json %+v", data, fast, slow)
		}
	})
}

// FuzzChangesDecoder: a ChangesDecoder reading pages one after another
// answers what UnmarshalJSON answers for each (the same page or the same
// error), and a page it answered is not changed by the pages read after it
// (its scratch is reused, never what it handed out).
func FuzzChangesDecoder(f *testing.F) {
	first := `{"changes":[{"seq":2,"at":"2026-12-01T14:04:12.254Z","op":"store","id":"x","namespace":"team:acme","status":"active","record":{"id":"x","kind":"document","text":"plain","meta":{"namespace":"team:acme","source":{"kind":"agent"},"tags":["a"],"agent_id":"w"},"status":"active","created_at":"2026-12-01T14:04:12.254Z","updated_at":"2026-12-01T14:04:12.254Z"}}],"next":2,"head":2,"floor":0}`
	f.Add([]byte(first), []byte(`{"changes":[],"next":4,"head":4,"floor":0}`))
	f.Add([]byte(first), []byte(first))
	f.Add([]byte(`{"changes":null,"next":1}`), []byte(`{"changes":[{"seq":3,"at":"2026-12-01T14:04:12.254Z","op":"forget","id":"y","namespace":"root","status":"active"}],"next":3}`))
	f.Add([]byte(`not json`), []byte(first))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var d ChangesDecoder
		pages := make([]*ChangesPage, 3)
		for i, data := range [][]byte{a, b, a} {
			data = bytes.Clone(data)
			got, err := d.Decode(data)
			var want ChangesPage
			wantErr := want.UnmarshalJSON(data)
			if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
				t.Fatalf("%q: the decoder says %v, UnmarshalJSON %v", data, err, wantErr)
			}
			if err != nil {
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%q:\ndecoder %+v\nUnmarshalJSON %+v", data, got, want)
			}
			pages[i] = &got
		}
		if pages[0] != nil && !reflect.DeepEqual(pages[0], pages[2]) {
			t.Fatalf("a page read again differs, or was changed by the pages read after it:\n%+v\n%+v", pages[0], pages[2])
		}
	})
}

// FuzzStrSpecial: the scan's eight-bytes-at-a-time test finds a quote, a
// backslash, a control character or a non-ASCII byte exactly when one of
// the eight is, and its lowest mark is the first such byte (str enters the
// block there).
func FuzzStrSpecial(f *testing.F) {
	for _, s := range []string{"abcdefgh", "abc\"defg", "\\bcdefgh", "abcdefg\x1f", "abcdefg\x20", "\x80bcdefgh", "!#[]^_`~", "\x00\x00\x00\x00\x00\x00\x00\x00", "\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x21"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 8 {
			return
		}
		b = b[:8]
		want, first := false, 8
		for i, c := range b {
			if c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
				want, first = true, min(first, i)
			}
		}
		if got := special(binary.LittleEndian.Uint64(b)); got != want {
			t.Fatalf("%q: special says %v", b, got)
		}
		if got := bits.TrailingZeros64(specialBytes(binary.LittleEndian.Uint64(b))) >> 3; got != first {
			t.Fatalf("%q: the first special byte is at %d, specialBytes marks %d first", b, first, got)
		}
	})
}

// FuzzStoreItemScan: whatever StoreItem the hand scan reads, encoding/json
// reads the same from the same bytes (the scan leaves everything else to it).
func FuzzStoreItemScan(f *testing.F) {
	for _, s := range []string{
		`{"type":"document","body":{"text":"plain \u003cb\u003e é"},"title":"t","mime":"text/plain","meta":{"namespace":"team:acme","source":{"kind":"agent","id":"c1"},"tags":["a","b"],"agent_id":"w","turns":{"first":1,"last":2},"derive":true,"observed_actor":{"id":"u"},"observed_at":"2026-12-01T14:04:12Z"}}`,
		`{"type":"document","body":{"uri":"https://example.com/a"},"meta":null,"extra":[1,{"a":"}"}]}`,
		`{"type":"document","body":{"text":"a","uri":"b"}}`,
		`{"type":"document","body":null}`,
		`{"type":"conversation","turns":[{"role":"user","text":"hi","at":"2026-12-01T14:04:12.5Z"},{"role":"assistant","text":"yo","tool_calls":[{"name":"grep","id":"1"}]}],"meta":{"thread_id":"t1","tags":[]}}`,
		`{"type":"conversation","turns":[]}`,
		`{"type":"conversation","turns":[null]}`,
		`{"type":"conversation","turns":[{"role":"robot","text":"x"}]}`,
		`{"type":"learning","text":"t","kind":"fact","confidence":0.5,"evidence":"e"}`,
		`{"type":"learning","text":"t","kind":"fact","confidence":"0.5"}`,
		`{"type":"learning","text":"t","kind":"fact","confidence":-1e-3}`,
		`{"type":"learning","text":"t","kind":"fact","confidence":1e999}`,
		`{"Type":"document","body":{"text":"x"}}`,
		`{"type":"document","type":"learning","body":{"text":"x"}}`,
		`{"type":"document","body":{"text":"x"},"meta":{"namespace":"bad ns"}}`,
		`{"type":"document","body":{"text":"x"},"meta":{"source":{}}}`,
		` {"type" : "document" , "body" : {"text" : "x"} } ` + "\r\n",
		`{"type":"document","body":{"text":"x"}} x`,
		"{\"type\":\"document\",\"body\":{\"text\":\"\xff\"}}",
		`null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ok := scanStoreItem(data)
		if !ok {
			return
		}
		slow, err := decodeStoreItem(data)
		if err != nil {
			t.Fatalf("the scan read %q, encoding/json refuses it: %v", data, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q:\nscanned %#v\nencoding/json %#v", data, fast, slow)
		}
	})
}

// TestStoreItemScanReadsWhatClientsWrite: items as clients write them and
// as mnemo writes them back (every kind, every meta field) take the hand
// scan, not encoding/json, and read as encoding/json reads them.
func TestStoreItemScanReadsWhatClientsWrite(t *testing.T) {
	for _, s := range []string{
		`{"type":"document","body":{"text":"plain \u003cb\u003e é"},"title":"t","mime":"text/plain","meta":{"namespace":"team:acme","workspace":"w","folder":"f","file_path":"a/b.go","language":"go","repo":"r","commit":"c","url":"https://x","thread_id":"t1","source":{"kind":"agent","id":"c1"},"tags":["a","b"],"agent_id":"w","turns":{"first":1,"last":2},"tool_call":{"name":"grep"},"derive":true,"observed_actor":{"id":"u","name":"U"},"observed_at":"2026-12-01T14:04:12Z"}}`,
		`{"type":"document","body":{"uri":"https://example.com/a"}}`,
		`{"type":"conversation","turns":[{"role":"user","text":"hi","at":"2026-12-01T14:04:12.5Z"},{"role":"assistant","text":"yo","tool_calls":[{"name":"grep","id":"1"}]}],"meta":{"thread_id":"t1"}}`,
		`{"type":"learning","text":"t","kind":"fact","confidence":0.5,"evidence":"e","meta":{"tags":["x"]}}`,
	} {
		var it StoreItem
		if err := json.Unmarshal([]byte(s), &it); err != nil {
			t.Fatal(err)
		}
		canon, err := it.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		for _, data := range [][]byte{[]byte(s), canon} {
			fast, ok := scanStoreItem(data)
			if !ok {
				t.Fatalf("the scan left %s to encoding/json", data)
			}
			slow, err := decodeStoreItem(data)
			if err != nil || !reflect.DeepEqual(fast, slow) {
				t.Fatalf("%s:\nscanned %#v\nencoding/json %#v (%v)", data, fast, slow, err)
			}
		}
	}
}

// appendJSONStringByByte is appendJSONString as it was written before its
// runs were copied eight bytes at a time: one character at a time.
func appendJSONStringByByte(buf []byte, s string) []byte {
	buf = append(buf, '"')
	for i := 0; i < len(s); {
		var n int
		buf, n = appendEscaped(buf, s[i:])
		i += n
	}
	return append(buf, '"')
}

// FuzzAppendJSONString: the canonical JSON of any string, valid UTF-8 or
// not, is what escaping it one byte at a time writes (ids are hashes of it).
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain text of some length, more than eight bytes", "quote\" back\\slash",
		"tab\tnew\nline\r\x00\x1f\x7f", "naïve 🙂 \xff\xfe broken", "12345678\"12345678", "\x80abcdefgh", "abcdefg\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, want := appendJSONString([]byte("x"), s), appendJSONStringByByte([]byte("x"), s)
		if string(got) != string(want) {
			t.Fatalf("%q: %q, want %q", s, got, want)
		}
	})
}

// FuzzBrowsePageScan: whatever a browse page's scan reads, BrowsePage
// answers what encoding/json answers reading it record by record, the
// same page or the same error.
func FuzzBrowsePageScan(f *testing.F) {
	for _, s := range []string{
		`{"records":[],"total":0,"continuation":null}`,
		`{"records":null,"total":3}`,
		`{"records":[{"id":"x","kind":"document","text":"plain \u003cb\u003e é","meta":{"namespace":"team:acme","source":{"kind":"agent","id":"c1"},"tags":["a","b"],"agent_id":"w","turns":{"first":1,"last":2},"derive":true,"observed_actor":{"id":"u"}},"status":"active","created_at":"2026-12-01T14:04:12.254Z","updated_at":"2026-12-01T14:04:12.254Z"}],"total":1,"continuation":"abc"}`,
		`{"records":[{"id":"y","kind":"learning","text":"t","meta":{},"confidence":0.5,"status":"candidate","created_at":"a","updated_at":"b","expires_at":"c","superseded_by":null,"extra":[1,{"a":"}"}]}],"Total":3}`,
		` {"total" : 18446744073709551615 , "records" : [ ] } `,
		`{"records":[],"total":1,"total":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got BrowsePage
		gotErr := got.UnmarshalJSON(data)
		var want BrowsePage
		wantErr := json.Unmarshal(data, (*browsePageJSON)(&want))
		if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Fatalf("%q: error %v, encoding/json %v", data, gotErr, wantErr)
		}
		if gotErr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\nread %+v\nencoding/json %+v", data, got, want)
		}
	})
}

// TestBrowsePageScanTakesServerPages: a page as servers write it is read
// by the scan, not left to encoding/json.
func TestBrowsePageScanTakesServerPages(t *testing.T) {
	next := "c2Vlaw"
	conf := F32(0.5)
	meta := MemoryMeta{Namespace: MustNamespace("team:load/agent:a1"), Tags: []string{"t1"}}
	meta.Source.Kind = SourceAgent
	at, err := ParseTime("2026-12-07T15:10:00.123Z")
	if err != nil {
		t.Fatal(err)
	}
	page := BrowsePage{Total: 2, Continuation: &next, Records: []Record{
		{ID: "a", Kind: KindDocument, Text: "note é <b>", Meta: meta, Status: StatusActive, CreatedAt: at, UpdatedAt: at},
		{ID: "b", Kind: KindLearning, Text: "learned", Meta: meta, Confidence: &conf, Status: StatusCandidate, CreatedAt: at, UpdatedAt: at},
	}}
	for _, p := range []BrowsePage{page, {Records: nil}} {
		body, err := p.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		s := scanner{b: body, s: string(body)}
		w, ok := s.browsePage()
		if !ok {
			t.Fatalf("the scan left %s to encoding/json", body)
		}
		if _, err := w.page(); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
	}
	// A get's answer: the page's records as a list.
	list, err := json.Marshal(page.Records)
	if err != nil {
		t.Fatal(err)
	}
	s := scanner{b: list, s: string(list)}
	if ws, ok := s.records(); !ok || len(ws) != 2 || s.i != len(list) {
		t.Fatalf("the scan left %s to encoding/json", list)
	}
}

// FuzzDecodeRecords: DecodeRecords answers what encoding/json answers
// reading a list of records one by one, the same records or the same error.
func FuzzDecodeRecords(f *testing.F) {
	for _, s := range []string{
		`[]`, `null`, ` [ ] `,
		`[{"id":"x","kind":"document","text":"plain \u003cb\u003e é","meta":{"namespace":"team:acme","source":{"kind":"agent","id":"c1"},"tags":["a","b"],"agent_id":"w"},"status":"active","created_at":"2026-12-01T14:04:12.254Z","updated_at":"2026-12-01T14:04:12.254Z"}]`,
		`[{"id":"y","kind":"learning","text":"t","meta":{},"confidence":0.5,"status":"candidate","created_at":"a","updated_at":"b"}]`,
		`[{"id":"z"}]`, `[null]`, `[] []`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, gotErr := DecodeRecords(data)
		var want []Record
		wantErr := json.Unmarshal(data, &want)
		if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Fatalf("%q: error %v, encoding/json %v", data, gotErr, wantErr)
		}
		if gotErr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\nread %+v\nencoding/json %+v", data, got, want)
		}
	})
}
