package metacodec_test

import (
	"reflect"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/internal/metacodec"
	"mnemo/engine/internal/metacodec/metacodectest"
)

var layouts = []struct {
	name string
	l    metacodec.Layout
}{{"fixed", metacodec.Fixed}, {"varint", metacodec.Varint}}

// stored is m as layout l keeps it: Fixed reads no tags for an empty list and
// agent for an unset source kind.
func stored(m contract.MemoryMeta, l metacodec.Layout) contract.MemoryMeta {
	if l == metacodec.Fixed {
		if len(m.Tags) == 0 {
			m.Tags = nil
		}
		m.Source.Kind = m.SourceKindOf()
	}
	return m
}

func roundTrip[T ~string | ~[]byte](t *testing.T, m contract.MemoryMeta, l metacodec.Layout, conv func([]byte) T) contract.MemoryMeta {
	t.Helper()
	w := metacodec.Writer{}
	metacodec.AppendMeta(&w, &m, l)
	w.U8(0xee) // what follows the metadata stays unread
	r := metacodec.NewReader(conv(w.Buf))
	var back contract.MemoryMeta
	ns := metacodec.ReadMeta(r, &back, l)
	if r.Err() != nil {
		t.Fatalf("reading back %+v: %v", m, r.Err())
	}
	if string(ns) != m.Namespace.String() {
		t.Fatalf("namespace read back %q, want %q", ns, m.Namespace.String())
	}
	if rest := r.Rest(); len(rest) != 1 || rest[0] != 0xee {
		t.Fatalf("left %x after the metadata, want ee", string(rest))
	}
	back.Namespace = m.Namespace
	return back
}

// TestMetadataReadsBackAsWritten: every fixture reads back as it was
// written, from bytes and from a string, in both layouts.
func TestMetadataReadsBackAsWritten(t *testing.T) {
	for _, lay := range layouts {
		for _, f := range metacodectest.Metas() {
			want := stored(f.Meta, lay.l)
			if got := roundTrip(t, f.Meta, lay.l, func(b []byte) []byte { return b }); !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s from bytes: read back %+v, want %+v", lay.name, f.Name, got, want)
			}
			if got := roundTrip(t, f.Meta, lay.l, func(b []byte) string { return string(b) }); !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s from a string: read back %+v, want %+v", lay.name, f.Name, got, want)
			}
		}
	}
}

// TestCutMetadataIsCorrupt: every proper prefix of a written value is
// refused, never read as something else.
func TestCutMetadataIsCorrupt(t *testing.T) {
	for _, lay := range layouts {
		for _, f := range metacodectest.Metas() {
			w := metacodec.Writer{}
			metacodec.AppendMeta(&w, &f.Meta, lay.l)
			for n := range len(w.Buf) {
				r := metacodec.NewReader(w.Buf[:n])
				var m contract.MemoryMeta
				metacodec.ReadMeta(r, &m, lay.l)
				if r.Err() == nil {
					t.Fatalf("%s %s: the first %d of %d bytes read as %+v", lay.name, f.Name, n, len(w.Buf), m)
				}
			}
		}
	}
}

// FuzzMetadataRoundTrip: metadata built from any inputs reads back as
// written in both layouts.
func FuzzMetadataRoundTrip(f *testing.F) {
	f.Add("team:acme", "ws", "go", uint32(3), uint32(9), "grep", int64(1773500966), uint32(535897932), "tag", uint8(0xff))
	f.Add("", "", "", uint32(0), uint32(1<<31), "", int64(-14182940), uint32(1), "", uint8(0))
	f.Fuzz(func(t *testing.T, ns, s1, s2 string, first, last uint32, tool string, sec int64, nsec uint32, tag string, mask uint8) {
		namespace, err := contract.ParseNamespace(ns)
		if err != nil {
			return
		}
		on := func(bit uint8) bool { return mask&(1<<bit) != 0 }
		p := func(bit uint8, s string) *string {
			if on(bit) {
				return &s
			}
			return nil
		}
		m := contract.MemoryMeta{Namespace: namespace, Workspace: p(0, s1), URL: p(1, s2), AgentID: p(2, s1+s2),
			Source: contract.SourceRef{Kind: contract.SourceKinds()[int(mask)%len(contract.SourceKinds())], ID: p(3, tag)}}
		if on(4) {
			m.Turns = &contract.TurnRange{First: first, Last: last}
			m.ToolCall = &contract.ToolCallRef{Name: tool, ID: p(5, s2)}
		}
		if on(5) {
			at := time.Unix(sec, int64(nsec%uint32(time.Second))).UTC()
			m.ObservedAt = &at
			m.Derive = contract.Ptr(on(6))
		}
		if on(6) {
			m.Tags = []string{tag, s1}
		}
		if on(7) {
			m.ObservedActor = &contract.ObservedActor{ID: s1, Name: p(0, tool)}
		}
		for _, lay := range layouts {
			want := stored(m, lay.l)
			if got := roundTrip(t, m, lay.l, func(b []byte) []byte { return b }); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: read back %+v, want %+v", lay.name, got, want)
			}
		}
	})
}

// FuzzReadMetadata: any bytes either fail to read or read as metadata that
// writes back and reads again as itself; reading never panics.
func FuzzReadMetadata(f *testing.F) {
	for _, lay := range layouts {
		for _, fx := range metacodectest.Metas() {
			w := metacodec.Writer{}
			w.U8(uint8(lay.l))
			metacodec.AppendMeta(&w, &fx.Meta, lay.l)
			f.Add(w.Buf)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		l := metacodec.Layout(data[0]%2 + 1)
		r := metacodec.NewReader(data[1:])
		var m contract.MemoryMeta
		ns := metacodec.ReadMeta(r, &m, l)
		if r.Err() != nil {
			return
		}
		namespace, err := contract.ParseNamespace(string(ns))
		if err != nil {
			return
		}
		m.Namespace = namespace
		if got := roundTrip(t, m, l, func(b []byte) string { return string(b) }); !reflect.DeepEqual(got, stored(m, l)) {
			t.Fatalf("read %+v, wrote it, read back %+v", m, got)
		}
	})
}
