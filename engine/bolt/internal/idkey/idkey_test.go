package idkey

import (
	"strings"
	"testing"
)

// A fingerprint is named by its 20 bytes; every id, of any form, reads back
// from its name, so no two ids share a name; fingerprints' names sort as
// the fingerprints do.
func TestNamesReadBack(t *testing.T) {
	fp := "4eade029172e37649710845c640ee05a22dc4255"
	if n := Name(fp); len(n) != Len || ID(n) != fp || ID([]byte(n)) != fp {
		t.Fatalf("a fingerprint is named %q (%d bytes), reads back %q", n, len(n), ID(n))
	}
	for _, id := range []string{"", "a", "r", "rabc", "R", strings.Repeat("x", 19), "R" + strings.Repeat("x", 18),
		strings.Repeat("y", 20), strings.ToUpper(fp), fp[:39], fp + "0", "g" + fp[1:]} {
		if got := ID(Name(id)); got != id {
			t.Errorf("%q is named %q, which reads back %q", id, Name(id), got)
		}
	}
}

func TestFingerprintNamesSortAsTheirIDs(t *testing.T) {
	ids := []string{"0000000000000000000000000000000000000000", "09ffffffffffffffffffffffffffffffffffffff",
		"0a00000000000000000000000000000000000000", "4eade029172e37649710845c640ee05a22dc4255", "4eade029172e37649710845c640ee05a22dc4256",
		"a000000000000000000000000000000000000000", "ffffffffffffffffffffffffffffffffffffffff"}
	for i := 1; i < len(ids); i++ {
		if Name(ids[i-1]) >= Name(ids[i]) {
			t.Errorf("%s sorts before %s, its name does not", ids[i-1], ids[i])
		}
	}
}

func FuzzName(f *testing.F) {
	for _, s := range []string{"", "r", "4eade029172e37649710845c640ee05a22dc4255", strings.Repeat("z", 19)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if got := ID(Name(id)); got != id {
			t.Fatalf("%q is named %q, which reads back %q", id, Name(id), got)
		}
	})
}
