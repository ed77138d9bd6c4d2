package bolt

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// strtab must behave as the map and slice it replaced: the same id for the
// same string, a new id per new string (in order), "" a value of its own,
// and every earlier value readable after the table grows.
func TestStrtabAgreesWithAMap(t *testing.T) {
	d := newStrtab()
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
		if got := d.intern(s); got != want {
			t.Fatalf("step %d: intern(%q) = %d, want %d", i, s, got, want)
		}
	}
	if d.len() != len(vals) {
		t.Fatalf("%d values, want %d", d.len(), len(vals))
	}
	for id, s := range vals {
		if got := d.val(uint32(id)); got != s {
			t.Fatalf("val(%d) = %q, want %q", id, got, s)
		}
		if id == 0 {
			continue
		}
		if got, ok := d.lookup(s); !ok || got != uint32(id) {
			t.Fatalf("lookup(%q) = %d %v, want %d", s, got, ok, id)
		}
	}
	if _, ok := d.lookup("never stored"); ok {
		t.Fatal("lookup found a string never stored")
	}
	if _, ok := newStrtab().lookup(""); ok {
		t.Fatal(`a new table claims to hold ""`)
	}
}
