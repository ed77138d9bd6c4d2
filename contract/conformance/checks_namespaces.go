package conformance

import (
	"errors"
	"fmt"
	"slices"

	"mnemo/contract"
)

// checkNamespaces is the reference's namespaces check: reach of, exact and
// subtree over a small tree, the service sandbox, get and fetch confined by a
// reach, namespace explore, and forgets confined by reach.
func checkNamespaces(r *run) error {
	m := r.marker
	a := r.ns("agent:" + m + "-a")
	b := r.ns("agent:" + m + "-b")
	scout := r.ns("agent:" + m + "-a/agent:scout")
	job := r.ns("agent:" + m + "-a/service:job")
	learning := func(text string, ns contract.Namespace) contract.StoreItem {
		meta := r.taggedMeta("namespaces")
		meta.Namespace = ns
		return contract.Learning(m+" "+text, contract.LearningFact, 0.9, meta)
	}
	items := []contract.StoreItem{
		learning("root shared fact", contract.Root()),
		learning("same shared fact", a),
		learning("same shared fact", b),
		learning("scout shared fact", scout),
		learning("job shared fact", job),
	}
	recs, err := r.storeMany(items)
	if err != nil {
		return err
	}
	if len(recs) != len(items) {
		return fail("store_many of 5 items answered %d receipts", len(recs))
	}
	idRoot, idA, idB, idScout, idJob := recs[0].ID, recs[1].ID, recs[2].ID, recs[3].ID, recs[4].ID
	if idA == idB {
		return fail("the same text at two nodes got one id `%s`", idA)
	}
	names := map[string]string{idRoot: "root", idA: "a", idB: "b", idScout: "scout", idJob: "job"}
	named := func(ids []string) string {
		out := make([]string, len(ids))
		for i, id := range ids {
			if n, ok := names[id]; ok {
				out[i] = n
			} else {
				out[i] = id
			}
		}
		return fmt.Sprint(out)
	}
	tag := r.tagFilter("namespaces")
	listing := func(reach *contract.Reach) ([]string, error) {
		f := tag.Clone()
		f.Reach = reach
		hits, err := r.listAll(f)
		if err != nil {
			return nil, err
		}
		return hitIDs(hits), nil
	}
	of, exact, subtree := contract.ReachOf, contract.ReachExact, contract.ReachSubtree
	cases := []struct {
		label string
		reach contract.Reach
		want  []string
	}{
		{"of(a)", of(a), []string{idRoot, idA}},
		{"of(b)", of(b), []string{idRoot, idB}},
		{"of(scout)", of(scout), []string{idRoot, idA, idScout}},
		{"of(root)", of(contract.Root()), []string{idRoot}},
		{"exact(a)", exact(a), []string{idA}},
		{"subtree(a)", subtree(a), []string{idA, idScout}},
		{"subtree(root)", subtree(contract.Root()), []string{idRoot, idA, idB, idScout}},
		{"exact(job)", exact(job), []string{idJob}},
		{"subtree(job)", subtree(job), []string{idJob}},
		{"of(job)", of(job), []string{idRoot, idA, idJob}},
		// mnemo's extension: inherited ancestors stop at a floor
		// (inherit_from), as serve mode narrows a request by a bound.
		{"of(scout) from a", floored(of(scout), a), []string{idA, idScout}},
		{"of(job) from a", floored(of(job), a), []string{idA, idJob}},
	}
	for _, c := range cases {
		got, err := listing(&c.reach)
		if err != nil {
			return err
		}
		if !sameSet(got, c.want) {
			return fail("listing with reach %s answered %s; want %s", c.label, named(got), named(c.want))
		}
	}
	all, err := listing(nil)
	if err != nil {
		return err
	}
	if slices.Contains(all, idJob) {
		return fail("a listing with no reach entered the service sandbox")
	}

	exportIDs := func(reach *contract.Reach) ([]string, error) {
		f := tag.Clone()
		f.Reach = reach
		ex, err := r.exportAll(f)
		if err != nil {
			return nil, err
		}
		out := make([]string, len(ex))
		for i, x := range ex {
			out[i] = x.ID
		}
		return out, nil
	}
	if ids, err := exportIDs(nil); errors.Is(err, contract.ErrUnsupported) {
		// Export is optional; the rest of the check still applies.
	} else if err != nil {
		return err
	} else {
		if slices.Contains(ids, idJob) {
			return fail("an export with no reach entered the service sandbox")
		}
		sa := subtree(a)
		if ids, err = exportIDs(&sa); err != nil {
			return err
		}
		if slices.Contains(ids, idJob) {
			return fail("an export with reach subtree(a) entered the service sandbox")
		}
		ej := exact(job)
		if ids, err = exportIDs(&ej); err != nil {
			return err
		}
		if !slices.Contains(ids, idJob) {
			return fail("an export with reach exact(job) left out the job item")
		}
	}

	ob := of(b)
	hits, err := r.e.Get(r.ctx, contract.GetRequest{IDs: []string{idRoot, idA, idB, idScout, idJob}, Reach: &ob})
	if err != nil {
		return engineErr(err)
	}
	if got := hitIDs(hits); !slices.Equal(got, []string{idRoot, idB}) {
		return fail("get with reach of(b) answered %s; want [root b]", named(got))
	}

	if len(r.desc.FetchModes) > 0 {
		mode := r.desc.FetchModes[0]
		f := tag.Clone()
		oa := of(a)
		f.Reach = &oa
		page, err := r.e.Fetch(r.ctx, contract.FetchRequest{Query: m + " shared fact", Mode: mode, Filter: f, Limit: 20})
		if err != nil {
			return engineErr(err)
		}
		for _, h := range page.Hits {
			if h.ID != idRoot && h.ID != idA {
				return fail("%s fetch with reach of(a) returned %s", mode, named([]string{h.ID}))
			}
		}
		page, err = r.e.Fetch(r.ctx, contract.FetchRequest{Query: m + " job shared fact", Mode: mode, Filter: tag, Limit: 20})
		if err != nil {
			return engineErr(err)
		}
		if slices.Contains(hitIDs(page.Hits), idJob) {
			return fail("%s fetch with no reach entered the service sandbox", mode)
		}
	}

	ex, err := r.e.Explore(r.ctx, contract.ExploreRequest{Facet: contract.FacetNamespace, Filter: tag, Limit: 10})
	if err != nil {
		return engineErr(err)
	}
	wantBuckets := map[string]uint64{"root": 1, a.String(): 1, b.String(): 1, scout.String(): 1}
	gotBuckets := map[string]uint64{}
	for _, bk := range ex.Buckets {
		gotBuckets[bk.Value] = bk.Count
	}
	if fmt.Sprint(gotBuckets) != fmt.Sprint(wantBuckets) {
		return fail("explore by namespace answered %v; want %v", gotBuckets, wantBuckets)
	}

	rep, err := contract.ForgetWithin(r.ctx, r.e, []string{idA, idScout, idJob}, of(b))
	if err != nil {
		return engineErr(err)
	}
	if rep.Forgotten != 0 {
		return fail("forget_within of ids outside reach of(b) forgot %d", rep.Forgotten)
	}
	fb := tag.Clone()
	eb := exact(b)
	fb.Reach = &eb
	rep, err = r.e.Forget(r.ctx, contract.ForgetFilter(fb))
	if err != nil {
		return engineErr(err)
	}
	if rep.Forgotten != 1 {
		return fail("forget by filter with reach exact(b) forgot %d; want 1", rep.Forgotten)
	}
	sr := subtree(contract.Root())
	if got, err := listing(&sr); err != nil {
		return err
	} else if !sameSet(got, []string{idRoot, idA, idScout}) {
		return fail("after forgetting b the subtree(root) listing is %s; want [root a scout]", named(got))
	}
	rep, err = r.e.Forget(r.ctx, contract.ForgetIDs(idJob))
	if err != nil {
		return engineErr(err)
	}
	if rep.Forgotten != 1 {
		return fail("forget by the id of a sandboxed item forgot %d; want 1", rep.Forgotten)
	}
	ej := exact(job)
	if got, err := listing(&ej); err != nil {
		return err
	} else if len(got) != 0 {
		return fail("after forgetting job the exact(job) listing is %s", named(got))
	}
	rep, err = contract.ForgetWithin(r.ctx, r.e, []string{idScout, idRoot}, subtree(a))
	if err != nil {
		return engineErr(err)
	}
	if rep.Forgotten != 1 {
		return fail("forget_within([scout, root], subtree(a)) forgot %d; want 1", rep.Forgotten)
	}
	if got, err := listing(&sr); err != nil {
		return err
	} else if !sameSet(got, []string{idRoot, idA}) {
		return fail("after forget_within the subtree(root) listing is %s; want [root a]", named(got))
	}
	return nil
}

// floored is r inheriting its ancestors only from `from` down.
func floored(r contract.Reach, from contract.Namespace) contract.Reach {
	r.Floor = from.Depth()
	return r
}
