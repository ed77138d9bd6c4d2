package index

import (
	"slices"
	"testing"

	"mnemo/contract"
)

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
