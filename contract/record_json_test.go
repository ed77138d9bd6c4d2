package contract

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"
	"unicode/utf8"
)

// wireChangeJSON is a change through encoding/json, as Change.MarshalJSON
// wrote it before it was written by hand.
func wireChangeJSON(c *Change) ([]byte, error) {
	// The outer record hides changeWire's and comes in its place, last.
	type viaWire struct {
		changeWire
		Record *wireRecord `json:"record,omitempty"`
	}
	return json.Marshal(viaWire{changeWire: changeWire{Seq: c.Seq, At: FormatMillis(c.At), Op: c.Op, ID: c.ID,
		Namespace: c.Namespace, Status: c.Status}, Record: recordViaWire(c.Record)})
}

// recordViaWire wraps a record so encoding/json writes it by reflection
// (recordWire), not through the hand-written MarshalJSON under test.
func recordViaWire(r *Record) *wireRecord {
	if r == nil {
		return nil
	}
	return &wireRecord{r}
}

type wireRecord struct{ r *Record }

func (w *wireRecord) MarshalJSON() ([]byte, error) { return w.r.wireJSON() }

// randomText draws strings with everything a JSON string writer treats
// apart: quotes, backslashes, controls, < > &, U+2028 and U+2029, bytes
// that start no valid UTF-8, runes of two to four bytes, long plain runs.
func randomText(rng *rand.Rand) string {
	parts := []string{"a", "plain words ", "\"", "\\", "\n", "\t", "\x00", "\x1f", "\b", "\f", "\r", "<", ">", "&",
		"\u2028", "\u2029", "\xff", "\xe2\x80", "é", "日本", "🙂", "\u007f", "abcdefghijklmnop", "</script>"}
	var b []byte
	for range rng.IntN(12) {
		b = append(b, parts[rng.IntN(len(parts))]...)
	}
	return string(b)
}

func randomRecord(rng *rand.Rand) *Record {
	at := time.Date(2026, 12, 7, 14, 0, 0, 0, time.UTC).Add(time.Duration(rng.Int64N(1e15)))
	opt := func() *string {
		if rng.IntN(3) == 0 {
			return Ptr(randomText(rng))
		}
		return nil
	}
	namespaces := []string{"root", "team:acme", "team:acme/agent:a1", "user:kim", "team:load/agent:a3"}
	meta := MemoryMeta{Namespace: MustNamespace(namespaces[rng.IntN(len(namespaces))]), Workspace: opt(), Folder: opt(),
		FilePath: opt(), Language: opt(), Repo: opt(), Commit: opt(), URL: opt(), ThreadID: opt(), AgentID: opt()}
	kinds := []SourceKind{"", SourceAgent, SourceConversation}
	meta.Source = SourceRef{Kind: kinds[rng.IntN(len(kinds))], ID: opt()}
	for range rng.IntN(4) {
		meta.Tags = append(meta.Tags, randomText(rng))
	}
	if rng.IntN(4) == 0 {
		meta.Turns = &TurnRange{First: uint32(rng.IntN(9)), Last: uint32(9 + rng.IntN(9))}
	}
	if rng.IntN(4) == 0 {
		meta.ObservedAt = Ptr(at.Add(-time.Duration(rng.Int64N(1e12))))
	}
	if rng.IntN(4) == 0 {
		meta.Derive = Ptr(rng.IntN(2) == 0)
	}
	if rng.IntN(4) == 0 {
		meta.ObservedActor = &ObservedActor{ID: randomText(rng), Name: opt()}
	}
	r := &Record{ID: randomText(rng), Kind: []ItemKind{KindDocument, KindLearning}[rng.IntN(2)], Text: randomText(rng), Meta: meta,
		Status: []Status{StatusActive, StatusCandidate, StatusSuperseded, ""}[rng.IntN(4)], CreatedAt: at, UpdatedAt: at.Add(time.Second),
		SupersededBy: opt()}
	if rng.IntN(2) == 0 {
		confidences := []float32{0, 1, 0.1, 0.625, 1e-7, 0.3333333}
		r.Confidence = Ptr(F32(confidences[rng.IntN(len(confidences))]))
	}
	if rng.IntN(3) == 0 {
		r.ExpiresAt = Ptr(at.Add(time.Hour).In(time.FixedZone("x", 3600)))
	}
	return r
}

// TestRecordJSONIsEncodingJSONs: records and changes written by hand are
// byte for byte what encoding/json wrote, over many drawn records.
func TestRecordJSONIsEncodingJSONs(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 7))
	for i := range 5000 {
		r := randomRecord(rng)
		got, err := r.MarshalJSON()
		want, werr := r.wireJSON()
		if err != nil || werr != nil || !bytes.Equal(got, want) {
			t.Fatalf("record %d:\nby hand  %s (%v)\nencoding %s (%v)", i, got, err, want, werr)
		}
		c := &Change{Seq: rng.Uint64(), At: r.CreatedAt, Op: ChangeOps()[rng.IntN(len(ChangeOps()))], ID: r.ID,
			Namespace: r.Meta.Namespace, Status: r.Status}
		if rng.IntN(3) > 0 {
			c.Record = r
		}
		got, err = c.MarshalJSON()
		want, werr = wireChangeJSON(c)
		if err != nil || werr != nil || !bytes.Equal(got, want) {
			t.Fatalf("change %d:\nby hand  %s (%v)\nencoding %s (%v)", i, got, err, want, werr)
		}
		// As a value encoding/json writes (a browse page's records).
		page, err := json.Marshal([]Record{*r})
		wantRecord, _ := r.wireJSON()
		if err != nil || string(page) != "["+string(wantRecord)+"]" {
			t.Fatalf("record %d in a page: %s (%v), want [%s]", i, page, err, wantRecord)
		}
	}
	// A record with its item goes through encoding/json; a confidence
	// that is no number is written as FormatF32 writes it (null).
	item := Document("with its item", MetaFromSource(SourceAgent, nil))
	r := Record{ID: "x", Kind: KindDocument, Text: "with its item", Status: StatusActive, Item: &item}
	got, err := r.MarshalJSON()
	want, _ := r.wireJSON()
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("a record with its item: %s (%v), want %s", got, err, want)
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Copysign(0, -1)} {
		r = Record{ID: "x", Confidence: Ptr(F32(float32(f)))}
		got, err := r.MarshalJSON()
		want, werr := r.wireJSON()
		if err != nil || werr != nil || !bytes.Equal(got, want) {
			t.Fatalf("confidence %v: %s (%v), want %s (%v)", f, got, err, want, werr)
		}
	}
}

// FuzzAppendJSONStringHTML: any string is written as encoding/json writes it.
func FuzzAppendJSONStringHTML(f *testing.F) {
	for _, s := range []string{"", "plain", "a\"b\\c", "<script>&</script>", "\u2028\u2029", "\xff\xfe", "\xe2\x80\xa8x", "\x00\x1f\x7f", "日本語 🙂 é", "0123456789abcdef<"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONStringHTML(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: %s, want %s", s, got, want)
		}
		// escapeHTMLFrom on the canonical form is the same string.
		if got := escapeHTMLFrom(appendJSONString([]byte("x"), s), 1); utf8.ValidString(s) && !bytes.Equal(got[1:], want) {
			t.Fatalf("%q canonical, escaped: %s, want %s", s, got[1:], want)
		}
	})
}

// BenchmarkChangeJSON: a change of the load test's kind (a stored document
// with its record), written by hand and through encoding/json.
func BenchmarkChangeJSON(b *testing.B) {
	at := time.Date(2026, 12, 7, 15, 10, 0, 123_000_000, time.UTC)
	meta := MetaFromSource(SourceAgent, nil)
	meta.Namespace = MustNamespace("team:load/agent:a3")
	meta.Tags = []string{"t2"}
	id := "00000000000000000000000000000000000a7f3e"
	c := Change{Seq: 912, At: at, Op: OpStore, ID: id, Namespace: meta.Namespace, Status: StatusActive,
		Record: &Record{ID: id, Kind: KindDocument, Text: "agent 3 note 912 about deploy and cache w3q912", Meta: meta,
			Status: StatusActive, CreatedAt: at, UpdatedAt: at}}
	b.Run("by-hand", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.MarshalJSON(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			if _, err := wireChangeJSON(&c); err != nil {
				b.Fatal(err)
			}
		}
	})
}
