package contract

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// encodeWire is MarshalWire as it was before its hand-written answers:
// encoding/json, compact, HTML characters as they are.
func encodeWire(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// TestMarshalWireIsEncodingJSONs: what MarshalWire writes by hand (a browse
// page, a get's records, a page of changes, a change, a record) is byte for
// byte what encoding/json wrote for it, over many drawn pages.
func TestMarshalWireIsEncodingJSONs(t *testing.T) {
	type browseWire BrowsePage // encoding/json's way: the page's alias
	type changesWire struct {
		Changes []Change `json:"changes"`
		Next    uint64   `json:"next"`
		Head    uint64   `json:"head"`
		Floor   uint64   `json:"floor"`
	}
	rng := rand.New(rand.NewPCG(4, 12))
	item := Document("with its <item>", MetaFromSource(SourceAgent, nil))
	continuations := []func() *string{
		func() *string { return nil },
		func() *string { return Ptr("eyJrIjoiYWJjIiwidiI6MX0") },
		func() *string { return Ptr("") },
		func() *string { return Ptr(randomText(rng)) },
	}
	for i := range 3000 {
		var records []Record
		if n := rng.IntN(6); n > 0 || rng.IntN(2) == 0 {
			records = []Record{}
			for range n {
				r := randomRecord(rng)
				if rng.IntN(8) == 0 {
					r.Item = &item
				}
				records = append(records, *r)
			}
		}
		page := BrowsePage{Records: records, Total: rng.IntN(1_000_000) - 10, Continuation: continuations[rng.IntN(len(continuations))]()}
		got, err := MarshalWire(page)
		want := encodeWire(t, browseWire{Records: EmptyIfNil(records), Total: page.Total, Continuation: page.Continuation})
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("browse page %d:\nby hand  %s (%v)\nencoding %s", i, got, err, want)
		}
		// The page inside another answer (encoding/json calls MarshalJSON).
		got, err = MarshalWire(struct{ Page BrowsePage }{page})
		if want := `{"Page":` + string(want) + `}`; err != nil || string(got) != want {
			t.Fatalf("browse page %d inside an answer:\n%s (%v)\nwant %s", i, got, err, want)
		}
		got, err = MarshalWire(records)
		if want := encodeWire(t, records); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("records %d:\nby hand  %s (%v)\nencoding %s", i, got, err, want)
		}
		for j := range records {
			got, err = MarshalWire(records[j])
			if want := encodeWire(t, records[j]); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("record %d.%d:\nby hand  %s (%v)\nencoding %s", i, j, got, err, want)
			}
		}
		changes := ChangesPage{Next: rng.Uint64(), Head: rng.Uint64(), Floor: rng.Uint64(), Changes: []Change{}}
		for j := range records {
			r := &records[j]
			changes.Changes = append(changes.Changes, Change{Seq: uint64(j), At: r.CreatedAt, Op: OpStore, ID: r.ID, Namespace: r.Meta.Namespace, Status: r.Status, Record: r})
		}
		got, err = MarshalWire(changes)
		want = encodeWire(t, changesWire{changes.Changes, changes.Next, changes.Head, changes.Floor})
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("changes %d:\nby hand  %s (%v)\nencoding %s", i, got, err, want)
		}
		for j, c := range changes.Changes {
			got, err = MarshalWire(c)
			if want := encodeWire(t, c); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("change %d.%d:\nby hand  %s (%v)\nencoding %s", i, j, got, err, want)
			}
		}
	}
}

// FuzzMarshalWireString: a browse page's continuation, whatever it holds,
// is written as encoding/json writes a string on the wire.
func FuzzMarshalWireString(f *testing.F) {
	for _, s := range []string{"", "eyJrIjoiYWJjIn0", "a\"b", "<&>", "\u2028", "\xff", "\x7f", "\x00", "日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := appendWireString([]byte("x"), s)
		if want := "x" + string(encodeWire(t, s)); err != nil || string(got) != want {
			t.Fatalf("%q: %s (%v), want %s", s, got, err, want)
		}
	})
}

func BenchmarkMarshalWireBrowsePage(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	page := BrowsePage{Total: 95044, Continuation: Ptr("eyJrIjoiYWJjIiwidiI6MX0")}
	for range 50 {
		r := randomRecord(rng)
		r.Text = "agent 3 note 4417 about deploy and cache w3q4417, and what the deploy left in the cache"
		page.Records = append(page.Records, *r)
	}
	b.Run("by-hand", func(b *testing.B) {
		for b.Loop() {
			if _, err := MarshalWire(page); err != nil {
				b.Fatal(err)
			}
		}
	})
	// encoding-json: the page as it was written before, through its alias
	// (each record's JSON checked and compacted), then checked and
	// compacted once more as the answer.
	b.Run("encoding-json", func(b *testing.B) {
		type browseWire BrowsePage
		for b.Loop() {
			var buf, out bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(browseWire(page)); err != nil {
				b.Fatal(err)
			}
			if err := json.Compact(&out, buf.Bytes()); err != nil {
				b.Fatal(err)
			}
		}
	})
}
