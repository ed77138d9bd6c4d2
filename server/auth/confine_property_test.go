package auth_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/server/auth"
	"mnemo/server/wire"
)

// propertyFixture is one tagged and one untagged record in every namespace
// of a tree three levels deep, teams, agents and service sandboxes at every
// level: ids by namespace.
type propertyFixture struct {
	nss    []contract.Namespace
	tagged map[string]contract.Namespace // id -> namespace
	items  map[string]contract.StoreItem
}

func newPropertyFixture(t *testing.T, e contract.Engine) *propertyFixture {
	t.Helper()
	segs := []contract.Segment{{Kind: contract.SegTeam, ID: "acme"}, {Kind: contract.SegTeam, ID: "gamma"},
		{Kind: contract.SegAgent, ID: "bot"}, {Kind: contract.SegService, ID: "job"}}
	f := &propertyFixture{nss: []contract.Namespace{contract.Root()}, tagged: map[string]contract.Namespace{}, items: map[string]contract.StoreItem{}}
	level := []contract.Namespace{contract.Root()}
	for range 3 {
		var next []contract.Namespace
		for _, n := range level {
			for _, s := range segs {
				c, err := n.Child(s)
				if err != nil {
					t.Fatal(err)
				}
				next = append(next, c)
			}
		}
		f.nss = append(f.nss, next...)
		level = next
	}
	var batch []contract.StoreItem
	for _, ns := range f.nss {
		for _, tag := range []string{"wipe-test", "keep"} {
			item := doc(ns.String(), fmt.Sprintf("note kept at %s, tagged %s", ns, tag))
			if ns.IsRoot() {
				item.Meta.Namespace = contract.Root()
			}
			item.Meta.Tags = []string{tag}
			batch = append(batch, item)
		}
	}
	ctx := context.Background()
	for start := 0; start < len(batch); start += contract.MaxStoreMany {
		chunk := batch[start:min(start+contract.MaxStoreMany, len(batch))]
		recs, err := contract.StoreMany(ctx, e, chunk)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range recs {
			if chunk[i].Meta.Tags[0] == "wipe-test" {
				f.tagged[r.ID] = chunk[i].Meta.Namespace
				f.items[r.ID] = chunk[i]
			}
		}
	}
	return f
}

// want is the tagged ids both the bound and the request admit, from
// Reach.Admits alone. A request without a reach asks for the whole bound.
func (f *propertyFixture) want(bound, req *contract.Reach) []string {
	var out []string
	for id, ns := range f.tagged {
		if contract.AdmittedBy(bound, ns) && (req == nil || req.Admits(ns)) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

func randomReach(rng *rand.Rand, nss []contract.Namespace) *contract.Reach {
	if rng.IntN(8) == 0 {
		return nil
	}
	return &contract.Reach{At: nss[rng.IntN(len(nss))], Inherit: rng.IntN(2) == 0, Descendants: rng.IntN(2) == 0}
}

func show(r *contract.Reach) string {
	if r == nil {
		return "none"
	}
	return auth.DescribeReach(*r)
}

// TestConfinedReadsAndForgetsTouchWhatBothReachesAdmit is the confinement's
// property: for random principal bounds and requested reaches (with and
// without inherit and descendants, sandboxes among the nodes, no reach at
// all), what a confined list, export, get, explore count, fetch and forget by
// filter touch over a bbolt store is exactly the records both reaches admit,
// computed from Reach.Admits; a request sharing nothing with the bound is
// refused and forgets nothing.
func TestConfinedReadsAndForgetsTouchWhatBothReachesAdmit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, err := bolt.Open(t.TempDir(), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	f := newPropertyFixture(t, store)
	allIDs := make([]string, 0, len(f.tagged))
	for id := range f.tagged {
		allIDs = append(allIDs, id)
	}
	slices.Sort(allIDs)
	tagged := func(r *contract.Reach) contract.MetaFilter {
		return contract.MetaFilter{Reach: r, TagsAny: []string{"wipe-test"}}
	}
	rng := rand.New(rand.NewPCG(7, 12))
	cases := 400
	if testing.Short() {
		cases = 60
	}
	refused, forgets, nonEmpty := 0, 0, 0
	for i := range cases {
		bound, req := randomReach(rng, f.nss), randomReach(rng, f.nss)
		if bound != nil && req != nil && rng.IntN(2) == 0 {
			// Most requests that matter lie on the bound's path: above it or below.
			var related []contract.Namespace
			for _, n := range f.nss {
				if n.IsWithin(bound.At) || bound.At.IsWithin(n) {
					related = append(related, n)
				}
			}
			req.At = related[rng.IntN(len(related))]
		}
		p := &auth.Principal{Name: "p", Role: auth.RoleCurator, Reach: bound}
		c := auth.Confine(store, p)
		want := f.want(bound, req)
		name := fmt.Sprintf("case %d: bound %s, request %s", i, show(bound), show(req))

		var listed []string
		var cursor *string
		var listErr error
		for {
			page, err := c.List(ctx, contract.ListRequest{Filter: tagged(req), Limit: 100, Cursor: cursor})
			if err != nil {
				listErr = err
				break
			}
			for _, h := range page.Items {
				listed = append(listed, h.ID)
			}
			if page.NextCursor == nil {
				break
			}
			cursor = page.NextCursor
		}
		if len(want) == 0 && req != nil {
			// No common namespace: refused, for every read and the forget.
			if !wire.IsForbidden(listErr) {
				t.Fatalf("%s: want a refusal, list answered %d records (%v)", name, len(listed), listErr)
			}
			if _, err := c.Forget(ctx, contract.ForgetFilter(tagged(req))); !wire.IsForbidden(err) {
				t.Fatalf("%s: forget: %v", name, err)
			}
			refused++
			continue
		}
		if listErr != nil {
			t.Fatalf("%s: list: %v", name, listErr)
		}
		slices.Sort(listed)
		if !slices.Equal(listed, want) {
			t.Fatalf("%s: list touched %d records, both admit %d", name, len(listed), len(want))
		}
		ex, err := c.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetKind, Filter: tagged(req), Limit: 10})
		if err != nil || int(ex.Total) != len(want) {
			t.Fatalf("%s: explore counts %d (%v), both admit %d", name, ex.Total, err, len(want))
		}
		hits, err := c.Get(ctx, contract.GetRequest{IDs: allIDs, Reach: req})
		if err != nil {
			t.Fatalf("%s: get: %v", name, err)
		}
		got := make([]string, len(hits))
		for j, h := range hits {
			got[j] = h.ID
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: get found %d records, both admit %d", name, len(got), len(want))
		}
		fp, err := c.Fetch(ctx, contract.FetchRequest{Query: "note kept", Mode: contract.ModeKeyword, Filter: tagged(req), Limit: 200})
		if err != nil {
			t.Fatalf("%s: fetch: %v", name, err)
		}
		got = got[:0]
		for _, h := range fp.Hits {
			got = append(got, h.ID)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: fetch ranked %d records, both admit %d", name, len(got), len(want))
		}
		if len(want) > 0 {
			nonEmpty++
		}
		if i%5 != 0 || len(want) == 0 {
			continue
		}
		forgets++
		// Forget by the same filter removes exactly those, then they are put back.
		rep, err := c.Forget(ctx, contract.ForgetFilter(tagged(req)))
		if err != nil || rep.Forgotten != len(want) {
			t.Fatalf("%s: forget removed %d (%v), both admit %d", name, rep.Forgotten, err, len(want))
		}
		for _, id := range allIDs {
			exact := contract.ReachExact(f.tagged[id])
			hits, err := store.Get(ctx, contract.GetRequest{IDs: []string{id}, Reach: &exact})
			if err != nil {
				t.Fatal(err)
			}
			if gone := len(hits) == 0; gone != slices.Contains(want, id) {
				t.Fatalf("%s: record at %s gone = %v after the forget", name, f.tagged[id], gone)
			}
		}
		back := make([]contract.StoreItem, len(want))
		for j, id := range want {
			back[j] = f.items[id]
		}
		for start := 0; start < len(back); start += contract.MaxStoreMany {
			if _, err := contract.StoreMany(ctx, store, back[start:min(start+contract.MaxStoreMany, len(back))]); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("%d cases: %d refused, %d with records (%d forgotten and put back)", cases, refused, nonEmpty, forgets)
	if refused == 0 || forgets < cases/20 {
		t.Fatal("the draw exercised too few refusals or forgets")
	}
}
