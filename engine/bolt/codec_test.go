package bolt

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"mnemo/contract"
)

func sampleRecords() []storedRecord {
	at := time.Date(2026, 5, 6, 7, 8, 9, 123456789, time.UTC)
	meta := contract.MemoryMeta{
		Namespace: contract.MustNamespace("team:acme/agent:writer"), Workspace: contract.Ptr("/w"), Folder: contract.Ptr("/w/src"),
		FilePath: contract.Ptr("/w/src/a.go"), Language: contract.Ptr("go"), Repo: contract.Ptr("acme/app"), Commit: contract.Ptr("c0ffee"),
		URL: contract.Ptr("https://x.test"), ThreadID: contract.Ptr("t1"), Turns: &contract.TurnRange{First: 1, Last: 4},
		AgentID: contract.Ptr("writer"), ToolCall: &contract.ToolCallRef{Name: "grep", ID: contract.Ptr("call-1")},
		Source: contract.SourceRef{Kind: contract.SourceGithub, ID: contract.Ptr("gh-1")}, Tags: []string{"a", "b"},
		ObservedAt: &at, Derive: contract.Ptr(false), ObservedActor: &contract.ObservedActor{ID: "user:p", Name: contract.Ptr("P")},
	}
	full := contract.Learning("prefers tabs", contract.LearningPreference, 0.8, meta)
	js, _ := full.MarshalJSON()
	bare := contract.Document("x", contract.MemoryMeta{})
	bjs, _ := bare.MarshalJSON()
	return []storedRecord{
		{ord: 7, status: contract.StatusCandidate, kind: contract.KindLearning, created: 1, updated: 2, expires: at.UnixNano(),
			supersededBy: "abc", text: full.RenderText(), confidence: 0.8, meta: meta, itemJSON: js},
		{ord: 0, status: contract.StatusActive, kind: contract.KindDocument, created: -5, updated: 9, expires: noTime,
			text: "x", meta: contract.MemoryMeta{Source: contract.SourceRef{Kind: contract.SourceAgent}}, itemJSON: bjs},
	}
}

func TestRecordCodecRoundTrips(t *testing.T) {
	for _, want := range sampleRecords() {
		got, err := (&recordCodec{}).decode(encodeRecord(&want), partFull, parseNS)
		if err != nil {
			t.Fatal(err)
		}
		gj, _ := json.Marshal(struct {
			A contract.MemoryMeta
			B string
		}{got.meta, string(got.itemJSON)})
		wj, _ := json.Marshal(struct {
			A contract.MemoryMeta
			B string
		}{want.meta, string(want.itemJSON)})
		if string(gj) != string(wj) || got.ord != want.ord || got.status != want.status || got.kind != want.kind ||
			got.created != want.created || got.updated != want.updated || got.expires != want.expires ||
			got.supersededBy != want.supersededBy || got.text != want.text || got.confidence != want.confidence {
			t.Fatalf("round trip\n got %+v\nwant %+v", got, want)
		}
		if text, ok := (&recordCodec{}).text(encodeRecord(&want)); !ok || text != want.text {
			t.Fatalf("recordText = %q, %v", text, ok)
		}
	}
}

func TestDescMillisKeysSortNewestFirst(t *testing.T) {
	a, b, c := descMillisKey(2000, "b"), descMillisKey(1000, "a"), descMillisKey(-1000, "a")
	if !(string(a) < string(b) && string(b) < string(c)) {
		t.Fatal("keys do not sort newest first")
	}
	if string(descMillisKey(5, "a")) >= string(descMillisKey(5, "b")) {
		t.Fatal("equal instants do not sort by id")
	}
	if ms, id, ok := splitDescMillisKey(descMillisKey(-42, "z")); !ok || ms != -42 || id != "z" {
		t.Fatalf("split = %d %q %v", ms, id, ok)
	}
	if string(confKey(0.9, "b")) >= string(confKey(0.1, "a")) || string(confKey(0.5, "a")) >= string(confKey(0.5, "b")) {
		t.Fatal("confidence keys do not sort desc then id")
	}
}

// FuzzDecodeRecord feeds arbitrary bytes to the decoder: it may refuse them
// but must never panic, and what it accepts must re-encode to a record that
// decodes the same.
func FuzzDecodeRecord(f *testing.F) {
	c := dictCodec(f)
	for _, r := range sampleRecords() {
		f.Add(encodeRecord(&r))
		f.Add(c.encode(&r))
	}
	f.Add([]byte{})
	f.Add([]byte{recordV1, 0, 0, 0, 1, 9, 9})
	f.Add([]byte{recordV2, 0, 0, 0, 1, 9, 9})
	f.Add([]byte{recordV3, 0, 0, 0, 1, 9, 9})
	for _, it := range itemSamples()[300:320] {
		js, _ := it.MarshalJSON()
		r := storedRecord{kind: it.Type, status: contract.StatusActive, expires: noTime, text: it.RenderText(), meta: it.Meta}
		r.setItem(&it, js)
		f.Add(encodeRecord(&r))
		f.Add(c.encode(&r))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := c.decode(data, partFull, parseNS)
		if err != nil {
			return
		}
		again, err := c.decode(c.encode(&s), partFull, parseNS)
		if err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		if again.text != s.text || again.ord != s.ord || again.supersededBy != s.supersededBy {
			t.Fatalf("re-encoded record differs")
		}
		_, _ = c.text(data)
	})
}

// dictCodec is a codec holding one dictionary made from records like
// sampleRecords' with varied text, as a store's would be.
func dictCodec(tb testing.TB) *recordCodec {
	tb.Helper()
	var adding []*storedRecord
	for i := range 200 {
		for _, r := range sampleRecords() {
			r.text = fmt.Sprintf("note %d: the deploy of service %d waits for the canary in region %d", i, i%17, i%5)
			it := contract.Document(r.text, r.meta)
			r.itemJSON, _ = it.MarshalJSON()
			adding = append(adding, &r)
		}
	}
	d := buildDict(nil, adding)
	if d == nil {
		tb.Fatal("no dictionary from the sample")
	}
	var c recordCodec
	c.add(d)
	return &c
}

// TestVersion3RecordsReadAndUpgrade: with a dictionary, a writer writes
// version 3; every layout decodes to the same record and upgrades to version
// 3 without changing a field; a record naming a dictionary the store lacks,
// or declaring a damaged length, is refused.
func TestVersion3RecordsReadAndUpgrade(t *testing.T) {
	c := dictCodec(t)
	var plain recordCodec
	v2Bytes, v3Bytes := 0, 0
	for _, want := range sampleRecords() {
		v3 := c.encode(&want)
		if v3[0] != recordV3 {
			t.Fatalf("a codec with a dictionary wrote version %d", v3[0])
		}
		for _, part := range []recordPart{partHeader, partHit, partFull} {
			got, err := c.decode(v3, part, parseNS)
			if err != nil || got.ord != want.ord || got.meta.Namespace.String() != want.meta.Namespace.String() {
				t.Fatalf("version 3 part %d decoded to %+v, %v", part, got, err)
			}
		}
		if got, err := c.decode(v3, partFull, parseNS); err != nil || !sameRecord(got, want) {
			t.Fatalf("version 3 decoded to %+v, %v", got, err)
		}
		if text, ok := c.text(v3); !ok || text != want.text {
			t.Fatalf("text of version 3 = %q, %v", text, ok)
		}
		for _, old := range [][]byte{encodeRecordV1(&want), encodeRecord(&want)} {
			up, err := c.upgrade(old)
			if err != nil || up[0] != recordV3 {
				t.Fatalf("upgrade of version %d: %v", old[0], err)
			}
			if got, err := c.decode(up, partFull, parseNS); err != nil || !sameRecord(got, want) {
				t.Fatalf("version %d upgraded to 3 decoded to %+v, %v", old[0], got, err)
			}
		}
		if again, _ := c.upgrade(v3); string(again) != string(v3) {
			t.Fatal("upgrading a version 3 record changed it")
		}
		if _, err := plain.decode(v3, partFull, parseNS); !errors.Is(err, errMissingDict) {
			t.Fatalf("a record of a dictionary the codec lacks: %v", err)
		}
		if _, ok := plain.text(v3); ok {
			t.Fatal("text read a record of a dictionary the codec lacks")
		}
		h := recordHeaderLen(v3)
		bad := append(append([]byte(nil), v3[:h+1]...), 0xff, 0xff, 0xff, 0xff, 0x0f) // 4 GiB
		bad = append(bad, v3[h+2:]...)
		if _, err := c.decode(bad, partFull, parseNS); err == nil {
			t.Fatal("a version 3 body declaring 4 GiB decoded")
		}
		v2Bytes += len(encodeRecord(&want))
		v3Bytes += len(v3)
	}
	if v3Bytes >= v2Bytes {
		t.Fatalf("against a dictionary of their kind, records take %d bytes, %d without", v3Bytes, v2Bytes)
	}
}

// TestDictionaryUndo: a dictionary whose transaction did not commit is
// dropped, and the next is made with the same id.
func TestDictionaryUndo(t *testing.T) {
	c := dictCodec(t)
	d := c.dict(1)
	if id, cur := c.current(); id != 1 || cur != d {
		t.Fatalf("current dictionary %d", id)
	}
	c.add(d)
	if id, _ := c.current(); id != 2 {
		t.Fatalf("after a second, current is %d", id)
	}
	c.drop()
	if id, _ := c.current(); id != 1 || c.dict(2) != nil {
		t.Fatalf("after the undo, current is %d", id)
	}
	if c.wants(dictMinRecords, 0) {
		t.Fatal("a codec with a dictionary wants another")
	}
	var plain recordCodec
	if plain.wants(dictMinRecords-1, 0) || !plain.wants(dictMinRecords-1, 1) {
		t.Fatal("a store wants its dictionary at dictMinRecords records")
	}
}

// encodeRecordV1 writes the layout of stores before schema 4 (records
// uncompressed), as those binaries did, to prove they still read.
func encodeRecordV1(r *storedRecord) []byte {
	w := encodeHeader(r, recordV1)
	encodeBody(&w, r)
	return w.Buf
}

// sameRecord says whether two decoded records hold the same fields.
func sameRecord(a, b storedRecord) bool {
	ja, _ := json.Marshal(a.meta)
	jb, _ := json.Marshal(b.meta)
	return string(ja) == string(jb) && string(a.itemJSON) == string(b.itemJSON) && a.ord == b.ord &&
		a.status == b.status && a.kind == b.kind && a.created == b.created && a.updated == b.updated &&
		a.expires == b.expires && a.supersededBy == b.supersededBy && a.text == b.text && math.Float32bits(a.confidence) == math.Float32bits(b.confidence)
}

// TestVersion1RecordsReadAndUpgrade: a record in the old layout decodes to
// the record it was, and upgrade turns it into the compressed layout
// (smaller when the item repeats its text) without changing a field.
func TestVersion1RecordsReadAndUpgrade(t *testing.T) {
	long := sampleRecords()[0]
	long.text = strings.Repeat("the deploy of the checkout service waits for the canary ", 20)
	it := contract.Learning(long.text, contract.LearningPreference, 0.8, long.meta)
	long.itemJSON, _ = it.MarshalJSON()
	for _, want := range append(sampleRecords(), long) {
		v1 := encodeRecordV1(&want)
		got, err := (&recordCodec{}).decode(v1, partFull, parseNS)
		if err != nil || !sameRecord(got, want) {
			t.Fatalf("version 1 decoded to %+v, %v", got, err)
		}
		v2, err := (&recordCodec{}).upgrade(v1)
		if err != nil || v2[0] != recordV2 {
			t.Fatalf("upgrade: %v", err)
		}
		if got, err = (&recordCodec{}).decode(v2, partFull, parseNS); err != nil || !sameRecord(got, want) {
			t.Fatalf("upgraded record decoded to %+v, %v", got, err)
		}
		if again, _ := (&recordCodec{}).upgrade(v2); string(again) != string(v2) {
			t.Fatal("upgrading a version 2 record changed it")
		}
		if string(encodeRecord(&want)) != string(v2) {
			t.Fatal("the upgraded record differs from the one a writer writes")
		}
		for _, b := range [][]byte{v1, v2} {
			if text, ok := (&recordCodec{}).text(b); !ok || text != want.text {
				t.Fatalf("recordText = %q, %v", text, ok)
			}
		}
	}
	v1, v2 := encodeRecordV1(&long), encodeRecord(&long)
	if len(v2)*2 > len(v1) {
		t.Fatalf("a record that repeats its text takes %d bytes compressed, %d before", len(v2), len(v1))
	}
	if _, err := (&recordCodec{}).upgrade([]byte{9, 1, 2}); err == nil {
		t.Fatal("a record of an unknown layout was upgraded")
	}
}

// FuzzUpgradeRecord: arbitrary bytes are refused or upgraded to a record
// that decodes as the original did.
func FuzzUpgradeRecord(f *testing.F) {
	dict := dictCodec(f)
	for _, r := range sampleRecords() {
		f.Add(encodeRecordV1(&r))
		f.Add(encodeRecord(&r))
		f.Add(dict.encode(&r))
	}
	f.Add([]byte{recordV1, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, c := range []*recordCodec{{}, dict} {
			up, err := c.upgrade(data)
			if err != nil {
				continue
			}
			a, errA := dict.decode(data, partFull, parseNS)
			b, errB := dict.decode(up, partFull, parseNS)
			if (errA == nil) != (errB == nil) || (errA == nil && !sameRecord(a, b)) {
				t.Fatalf("upgrade changed what the record says: %v / %v", errA, errB)
			}
		}
	})
}

// TestDamagedBodyLengthIsRefused: a compressed body whose declared length
// is damaged is a corrupt record, not a huge allocation.
func TestDamagedBodyLengthIsRefused(t *testing.T) {
	r := sampleRecords()[0]
	b := encodeRecord(&r)
	h := recordHeaderLen(b)
	bad := append(append([]byte(nil), b[:h]...), 0xff, 0xff, 0xff, 0xff, 0x0f) // 4 GiB
	bad = append(bad, b[h+1:]...)
	if _, err := (&recordCodec{}).decode(bad, partFull, parseNS); err == nil {
		t.Fatal("a body declaring 4 GiB decoded")
	}
	if _, ok := (&recordCodec{}).text(bad); ok {
		t.Fatal("recordText read a body declaring 4 GiB")
	}
}

// TestCompactHeaderRoundTrips: a record of layout 6 (a compact header) reads
// back every system field exactly, the flags' fields present or not, at the
// ends of their ranges (a difference of updated_at and created_at that
// overflows wraps back), and reads as the same record written in layout 5
// (the fixed header) does, which stores written before hold, and which
// mnemo compact upgrades to the same bytes. Its header is 12 bytes where
// the fixed one takes 36.
func TestCompactHeaderRoundTrips(t *testing.T) {
	c := dictCodec(t)
	id, _ := c.current()
	it := contract.Learning("prefers tabs", contract.LearningPreference, 0.8, contract.MemoryMeta{})
	js, _ := it.MarshalJSON()
	base := storedRecord{kind: contract.KindLearning, text: it.RenderText(), meta: it.Meta}
	base.setItem(&it, js)
	if base.item == nil {
		t.Fatal("the sample item is kept as JSON")
	}
	n := 0
	for _, ord := range []uint32{0, 1, 977, math.MaxUint32} {
		for _, created := range []int64{1773500966535, 0, -5, math.MinInt64 + 1, math.MaxInt64} {
			for _, updated := range []int64{created, created + 1, created - 7, math.MaxInt64, math.MinInt64 + 1} {
				for _, expires := range []int64{noTime, 0, 1773500966535000001, math.MaxInt64} {
					for _, conf := range []float32{0, 0.8, float32(math.Copysign(0, -1)), float32(math.NaN())} {
						for _, sup := range []string{"", "0123456789abcdef0123456789abcdef01234567"} {
							n++
							r := base
							r.ord, r.status = ord, statusByCode[n%3]
							r.created, r.updated, r.expires, r.confidence, r.supersededBy = created, updated, expires, conf, sup
							b := c.encode(&r)
							if b[0] != recordV6 {
								t.Fatalf("layout %d, want 6", b[0])
							}
							got, err := c.decode(b, partFull, parseNS)
							if err != nil {
								t.Fatalf("%+v: %v", r, err)
							}
							if got.ord != r.ord || got.status != r.status || got.kind != r.kind || got.created != r.created ||
								got.updated != r.updated || got.expires != r.expires || got.supersededBy != r.supersededBy ||
								math.Float32bits(got.confidence) != math.Float32bits(r.confidence) || got.text != r.text {
								t.Fatalf("round trip\n got %+v\nwant %+v", got, r)
							}
							w5 := encodeHeader(&r, recordV5)
							w5.Uvarint(id)
							v5 := append(w5.Buf, c.pack(&r).body...)
							old, err := c.decode(v5, partFull, parseNS)
							if err != nil || old.ord != got.ord || old.created != got.created || old.updated != got.updated ||
								old.expires != got.expires || old.supersededBy != got.supersededBy || old.text != got.text {
								t.Fatalf("layout 5 reads otherwise: %+v %v", old, err)
							}
							if h6, h5 := recordHeaderLen(b), recordHeaderLen(v5); h6 < 0 || h5 < 0 || string(b[h6:]) != string(v5[h5:]) {
								t.Fatalf("the headers' lengths %d and %d do not reach the same body", h6, h5)
							}
							// mnemo compact's upgrade of layout 5 writes what a writer writes now.
							if up, err := c.upgrade(v5); err != nil || string(up) != string(b) {
								t.Fatalf("layout 5 upgraded: %v\n%x\nwant\n%x", err, up, b)
							}
							if text, ok := c.text(b); !ok || text != r.text {
								t.Fatalf("text = %q %v", text, ok)
							}
						}
					}
				}
			}
		}
	}
	r := base
	r.ord, r.status, r.created, r.updated, r.expires = 812_345, contract.StatusActive, 1773500966535, 1773500966535, noTime
	r.confidence = 0
	if h := recordHeaderLen(c.encode(&r)); h != 12 {
		t.Errorf("a compact header without its flags' fields takes %d bytes, want 12", h)
	}
	// A flag no writer sets, or a code out of range, is refused.
	b := c.encode(&r)
	if _, err := c.decode(b, partFull, parseNS); err != nil {
		t.Fatal(err)
	}
	for _, flag := range []byte{1 << 7, 3, 3 << 2} {
		bad := append([]byte(nil), b...)
		bad[4] |= flag // version, a 3-byte ordinal, then the codes and flags
		if _, err := c.decode(bad, partFull, parseNS); err == nil {
			t.Errorf("a header byte of %08b was read", bad[4])
		}
	}
}
