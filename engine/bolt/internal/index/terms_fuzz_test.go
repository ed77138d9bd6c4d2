package index

import (
	"slices"
	"strings"
	"testing"
	"time"

	"mnemo/contract"
)

// FuzzPathPrefixes checks the folder/file_path translation against
// contract.PathMatch for arbitrary held and wanted paths.
func FuzzPathPrefixes(f *testing.F) {
	for _, seed := range [][2]string{{"/a/b", "/a"}, {"/ab", "/a"}, {"/a", "/a/"}, {"", ""}, {"/", "//"},
		{"a//b", "a/"}, {"/a/b/", "/a/b"}, {"x", ""}, {"/x", ""}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, held, want string) {
		base := strings.TrimRight(want, "/")
		got := held == want || slices.Contains(pathPrefixes(held), prefixTerm(base))
		if exp := contract.PathMatch(want, &held); got != exp {
			t.Fatalf("held %q want %q: index says %v, contract says %v", held, want, got, exp)
		}
	})
}

// FuzzSubtreeAnchors checks the descendants reach translation against
// contract.Reach.Admits for namespaces built from fuzzed segment kinds.
func FuzzSubtreeAnchors(f *testing.F) {
	f.Add([]byte{0, 6, 1}, []byte{0})
	f.Add([]byte{6, 0}, []byte{})
	f.Add([]byte{1, 2, 3, 6, 4}, []byte{1, 2})
	f.Fuzz(func(t *testing.T, nsKinds, atKinds []byte) {
		ns := fuzzNamespace(nsKinds)
		at := fuzzNamespace(atKinds)
		reach := contract.ReachSubtree(at)
		got := slices.Contains(subtreeAnchors(ns), at.String())
		if exp := reach.Admits(ns); got != exp {
			t.Fatalf("ns %s, subtree of %s: index says %v, contract says %v", ns, at, got, exp)
		}
	})
}

// fuzzNamespace maps bytes to segments over a tiny alphabet, so generated
// namespaces share prefixes often.
func fuzzNamespace(kinds []byte) contract.Namespace {
	var segs []contract.Segment
	for i, k := range kinds {
		if i == contract.MaxDepth {
			break
		}
		kind := contract.SegmentKinds()[int(k)%len(contract.SegmentKinds())]
		id := string(rune('a' + int(k/7)%2))
		segs = append(segs, contract.Segment{Kind: kind, ID: id})
	}
	ns, err := contract.NewNamespace(segs...)
	if err != nil {
		panic(err)
	}
	return ns
}

// FuzzFarTermOrder checks that far terms sort like the instants they encode.
func FuzzFarTermOrder(f *testing.F) {
	f.Add(int64(-62135596800), int64(0), int64(253402300799), int64(999999999))
	f.Add(int64(-1), int64(5), int64(0), int64(0))
	f.Fuzz(func(t *testing.T, s1, n1, s2, n2 int64) {
		a := time.Unix(s1, n1%1_000_000_000)
		b := time.Unix(s2, n2%1_000_000_000)
		ta, tb := farTerm(a), farTerm(b)
		if got, want := strings.Compare(ta, tb), a.Compare(b); got != want {
			t.Fatalf("%v vs %v: terms compare %d, instants %d", a, b, got, want)
		}
	})
}
