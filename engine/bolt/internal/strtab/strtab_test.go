package strtab

import (
	"fmt"
	"math/rand/v2"
	"mnemo/engine/bolt/internal/sections"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// strtab must behave as the map and slice it replaced: the same id for the
// same string, a new id per new string (in order), "" a value of its own,
// and every earlier value readable after the table grows.
func TestStrtabAgreesWithAMap(t *testing.T) {
	d := New()
	ids := map[string]uint32{}
	vals := []string{""}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 50_000 {
		var s string
		switch rng.IntN(10) {
		case 0:
			s = ""
		case 1, 2:
			s = vals[rng.IntN(len(vals))]
		default:
			s = fmt.Sprintf("value/%d/%x", rng.IntN(40_000), rng.Uint32()%7)
		}
		want, seen := ids[s]
		if !seen {
			want = uint32(len(vals))
			vals = append(vals, s)
			ids[s] = want
		}
		if got := d.Intern(s); got != want {
			t.Fatalf("step %d: intern(%q) = %d, want %d", i, s, got, want)
		}
	}
	if d.Len() != len(vals) {
		t.Fatalf("%d values, want %d", d.Len(), len(vals))
	}
	for id, s := range vals {
		if got := d.Val(uint32(id)); got != s {
			t.Fatalf("val(%d) = %q, want %q", id, got, s)
		}
		if id == 0 {
			continue
		}
		if got, ok := d.Lookup(s); !ok || got != uint32(id) {
			t.Fatalf("lookup(%q) = %d %v, want %d", s, got, ok, id)
		}
	}
	if _, ok := d.Lookup("never stored"); ok {
		t.Fatal("lookup found a string never stored")
	}
	if _, ok := New().Lookup(""); ok {
		t.Fatal(`a new table claims to hold ""`)
	}
}

// A table written and read back holds the same ids for the same values, and
// takes new values after them; the values used does not mark are zeros in
// the file, their ids kept.
func TestWriteAndReadBack(t *testing.T) {
	d := New()
	for _, s := range []string{"team:acme", "", "secret-forgotten", "go"} {
		d.Intern(s)
	}
	data := saved(t, d, []bool{true, true, true, false, true})
	if strings.Contains(string(data), "secret-forgotten") {
		t.Error("a value no live row names was written")
	}
	r := sections.NewReader(data)
	back := Read(r)
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"team:acme", "", "go"} {
		want, _ := d.Lookup(s)
		if got, ok := back.Lookup(s); !ok || got != want {
			t.Errorf("%q: id %d %v, want %d", s, got, ok, want)
		}
	}
	if id := back.Intern("new value"); id != uint32(d.Len()) || back.Val(id) != "new value" {
		t.Errorf("a new value after reading back: id %d %q", id, back.Val(id))
	}
	// The value written as zeros is not found by its old bytes: interned
	// again, it is a new value.
	if id, ok := back.Lookup("secret-forgotten"); ok {
		t.Errorf("a value written as zeros is found by its bytes: id %d", id)
	}
	if id := back.Intern("secret-forgotten"); id != uint32(d.Len())+1 || back.Val(id) != "secret-forgotten" {
		t.Errorf("a forgotten value interned again: id %d %q", id, back.Val(id))
	}
	// The hash is not in the file: the bytes, the offsets and the id of ""
	// are its only sections.
	rs := sections.NewReader(data)
	sections.Next[byte](rs)
	sections.Next[uint32](rs)
	sections.One[uint32](rs)
	if rs.Err() != nil || len(sections.Next[byte](rs)) != 0 {
		t.Errorf("the file holds more than three sections (%v)", rs.Err())
	}

	bad := slices.Clone(data)
	// The offsets' section: make them run backwards.
	rr := sections.NewReader(bad)
	sections.Next[byte](rr)
	offs := sections.Next[uint32](rr)
	offs[2], offs[3] = offs[3]+1, offs[2]
	r = sections.NewReader(bad)
	Read(r)
	if r.Err() == nil {
		t.Error("offsets that go backwards were read")
	}
}

// A table read back makes its hash once, on the first lookup or Hash,
// whichever comes first: lookups from many goroutines beside a Hash in the
// background all find their values (run with -race).
func TestAReadTableHashesOnceBesideLookups(t *testing.T) {
	d := New()
	var vals []string
	for i := range 5000 {
		vals = append(vals, fmt.Sprintf("id-%05d", i))
		d.Intern(vals[i])
	}
	r := sections.NewReader(saved(t, d, nil))
	back := Read(r)
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	if back.slots != nil {
		t.Fatal("the hash was made as the table was read")
	}
	var wg sync.WaitGroup
	wg.Go(back.Hash)
	for g := range 8 {
		wg.Go(func() {
			for i := g; i < len(vals); i += 8 {
				if id, ok := back.Lookup(vals[i]); !ok || id != uint32(i+1) {
					t.Errorf("lookup(%q) = %d %v, want %d", vals[i], id, ok, i+1)
					return
				}
			}
		})
	}
	wg.Wait()
}

// saved is the bytes of a file d.Write(w, used) wrote.
func saved(t *testing.T, d *Table, used []bool) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "snap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := sections.NewWriter(f)
	d.Write(w, used)
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
