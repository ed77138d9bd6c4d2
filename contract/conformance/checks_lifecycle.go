package conformance

import (
	"errors"
	"fmt"
	"slices"

	"mnemo/contract"
)

// mnemo's checks of exact explore, the record lifecycle (review, supersede,
// hidden statuses) and forget across every read path.

func checkExploreExact(r *run) error {
	if _, err := r.fixture(); err != nil {
		return err
	}
	listed, err := r.listAll(r.filter())
	if err != nil {
		return err
	}
	recs, err := r.getRecords(hitIDs(listed), nil)
	if err != nil {
		return err
	}
	status := map[string]contract.Status{}
	for _, rec := range recs {
		status[rec.ID] = rec.Status
	}
	if len(status) != len(listed) {
		return fail("get_records read %d of the %d listed records", len(status), len(listed))
	}
	for _, facet := range contract.Facets() {
		counts := map[string]uint64{}
		var missing uint64
		for i := range listed {
			h := &listed[i]
			vals := facet.Values(h.Kind, &h.Meta, status[h.ID])
			if len(vals) == 0 {
				missing++
			}
			for _, v := range vals {
				counts[v]++
			}
		}
		p, err := r.e.Explore(r.ctx, contract.ExploreRequest{Facet: facet, Filter: r.filter(), Limit: contract.MaxBuckets})
		if err != nil {
			return engineErr(err)
		}
		got := map[string]uint64{}
		for i, b := range p.Buckets {
			got[b.Value] = b.Count
			if i > 0 {
				prev := p.Buckets[i-1]
				if b.Count > prev.Count || (b.Count == prev.Count && b.Value <= prev.Value) {
					return fail("explore by %s ordered bucket `%s` (%d) after `%s` (%d); want count descending, then value ascending", facet, b.Value, b.Count, prev.Value, prev.Count)
				}
			}
		}
		if p.Truncated {
			return fail("explore by %s was truncated; explore counts exactly", facet)
		}
		if p.Total != uint64(len(listed)) || p.Missing != missing {
			return fail("explore by %s counted total %d, missing %d; the listing gives total %d, missing %d", facet, p.Total, p.Missing, len(listed), missing)
		}
		if fmt.Sprint(got) != fmt.Sprint(counts) || p.MoreBuckets != 0 {
			return fail("explore by %s answered %v (more %d); the listing counts %v", facet, got, p.MoreBuckets, counts)
		}
		if len(counts) > 1 {
			one, err := r.e.Explore(r.ctx, contract.ExploreRequest{Facet: facet, Filter: r.filter(), Limit: 1})
			if err != nil {
				return engineErr(err)
			}
			if len(one.Buckets) != 1 || one.Buckets[0] != p.Buckets[0] || one.MoreBuckets != uint64(len(counts)-1) {
				return fail("explore by %s with limit 1 answered %v with %d more; want %v with %d more", facet, one.Buckets, one.MoreBuckets, p.Buckets[0], len(counts)-1)
			}
		}
	}
	candidates := uint64(0)
	for _, s := range status {
		if s == contract.StatusCandidate {
			candidates++
		}
	}
	f := r.filter()
	f.Statuses = []contract.Status{contract.StatusCandidate}
	p, err := r.e.Explore(r.ctx, contract.ExploreRequest{Facet: contract.FacetStatus, Filter: f, Limit: 10})
	if err != nil {
		return engineErr(err)
	}
	if p.Total != candidates || (candidates > 0 && (len(p.Buckets) != 1 || p.Buckets[0].Value != "candidate")) {
		return fail("explore by status over statuses [candidate] answered total %d, buckets %v; the run holds %d candidates", p.Total, p.Buckets, candidates)
	}
	return nil
}

func (r *run) recordOf(id string) (*contract.Record, error) {
	recs, err := r.getRecords([]string{id}, nil)
	if err != nil {
		return nil, err
	}
	if len(recs) != 1 {
		return nil, nil
	}
	return &recs[0], nil
}

func wantMessage(err error, kind contract.ErrorKind, msg, what string) error {
	if e := wantKind(err, kind, what); e != nil {
		return e
	}
	var ce *contract.Error
	if errors.As(err, &ce) && ce.Message != msg {
		return fail("%s answered `%s`; want `%s: %s`", what, err, kind, msg)
	}
	return nil
}

func checkReview(r *run) error {
	meta := r.taggedMeta(r.marker + "-review")
	approve := contract.Learning(r.marker+" review approve", contract.LearningFact, 0.5, meta)
	reject := contract.Learning(r.marker+" review reject", contract.LearningFact, 0.5, meta)
	var ids []string
	for _, it := range []contract.StoreItem{approve, reject} {
		rec, err := r.storeWith(it, contract.WriteOptions{Status: contract.StatusCandidate})
		if err != nil {
			return err
		}
		ids = append(ids, rec.ID)
	}
	before, err := r.recordOf(ids[0])
	if err != nil {
		return err
	}
	if before == nil || before.Status != contract.StatusCandidate {
		return fail("a candidate store does not read back as a candidate")
	}
	res, err := r.e.Review(r.ctx, contract.ReviewRequest{ID: ids[0], Action: contract.ReviewApprove})
	if err != nil {
		return engineErr(err)
	}
	if res.Record == nil || res.Record.ID != ids[0] || res.Record.Status != contract.StatusActive {
		return fail("approving a candidate answered %s; want the record, now active, under the same id", wireJSON(res))
	}
	after, err := r.recordOf(ids[0])
	if err != nil {
		return err
	}
	if after == nil || after.Status != contract.StatusActive {
		return fail("an approved candidate does not read back as active")
	}
	if after.UpdatedAt.Before(before.UpdatedAt) || !after.CreatedAt.Equal(before.CreatedAt) {
		return fail("approving moved created_at from %s to %s or updated_at back from %s to %s",
			contract.FormatMillis(before.CreatedAt), contract.FormatMillis(after.CreatedAt), contract.FormatMillis(before.UpdatedAt), contract.FormatMillis(after.UpdatedAt))
	}
	again, err := r.storeWith(approve, contract.WriteOptions{Status: contract.StatusCandidate})
	if err != nil {
		return err
	}
	if !again.Replayed || again.ID != ids[0] {
		return fail("storing an approved item again as a candidate answered %+v; want a replay of `%s`", again, ids[0])
	}
	if still, err := r.recordOf(ids[0]); err != nil {
		return err
	} else if still == nil || still.Status != contract.StatusActive {
		return fail("a replayed store changed the held record's status; a replay must leave it as it was")
	}
	res, err = r.e.Review(r.ctx, contract.ReviewRequest{ID: ids[1], Action: contract.ReviewReject})
	if err != nil {
		return engineErr(err)
	}
	if res.Record != nil || res.Forgotten != 1 {
		return fail("rejecting a candidate answered %s; want {forgotten: 1}", wireJSON(res))
	}
	if gone, err := r.recordOf(ids[1]); err != nil {
		return err
	} else if gone != nil {
		return fail("a rejected candidate can still be read")
	}
	_, err = r.e.Review(r.ctx, contract.ReviewRequest{ID: ids[0], Action: contract.ReviewApprove})
	if e := wantMessage(err, contract.KindConflict, fmt.Sprintf("record %s is 'active', not a candidate", ids[0]), "approving an active record"); e != nil {
		return e
	}
	missing := r.marker + "-missing"
	_, err = r.e.Review(r.ctx, contract.ReviewRequest{ID: missing, Action: contract.ReviewReject})
	if e := wantMessage(err, contract.KindNotFound, fmt.Sprintf("record %s does not exist", missing), "reviewing an unknown id"); e != nil {
		return e
	}
	_, err = r.e.Review(r.ctx, contract.ReviewRequest{ID: ids[0], Action: "archive"})
	return wantKind(err, contract.KindInvalidRequest, "a review action other than approve or reject")
}

func checkSupersede(r *run) error {
	meta := r.taggedMeta(r.marker + "-supersede")
	old := contract.Learning(r.marker+" supersede old", contract.LearningFact, 0.5, meta)
	replacement := contract.Learning(r.marker+" supersede new", contract.LearningFact, 0.75, meta)
	ids, err := r.storeNew(old, replacement)
	if err != nil {
		return err
	}
	rec, err := r.e.Supersede(r.ctx, contract.SupersedeRequest{ID: ids[0], By: ids[1]})
	if err != nil {
		return engineErr(err)
	}
	if rec.ID != ids[0] || rec.Status != contract.StatusSuperseded || rec.SupersededBy == nil || *rec.SupersededBy != ids[1] {
		return fail("supersede answered %s; want the old record, superseded by `%s`", wireJSON(rec), ids[1])
	}
	back, err := r.recordOf(ids[0])
	if err != nil {
		return err
	}
	if back == nil || back.Status != contract.StatusSuperseded || back.SupersededBy == nil || *back.SupersededBy != ids[1] {
		return fail("a superseded record reads back as %s", wireJSON(back))
	}
	listed, err := r.listAll(r.tagFilter(r.marker + "-supersede"))
	if err != nil {
		return err
	}
	if !sameSet(hitIDs(listed), ids) {
		return fail("list must still show a superseded record; it answered %d of 2", len(listed))
	}
	missing := r.marker + "-missing"
	_, err = r.e.Supersede(r.ctx, contract.SupersedeRequest{ID: ids[0], By: missing})
	if e := wantMessage(err, contract.KindNotFound, fmt.Sprintf("record %s does not exist", missing), "superseding by an unknown id"); e != nil {
		return e
	}
	_, err = r.e.Supersede(r.ctx, contract.SupersedeRequest{ID: missing, By: ids[1]})
	if e := wantMessage(err, contract.KindNotFound, fmt.Sprintf("record %s does not exist", missing), "superseding an unknown id"); e != nil {
		return e
	}
	_, err = r.e.Supersede(r.ctx, contract.SupersedeRequest{ID: ids[1], By: ids[1]})
	return wantKind(err, contract.KindInvalidRequest, "a record superseding itself")
}

func checkStatusesHidden(r *run) error {
	tag := r.marker + "-hidden"
	meta := r.taggedMeta(tag)
	cand, err := r.storeWith(r.document("hidden candidate", meta), contract.WriteOptions{Status: contract.StatusCandidate})
	if err != nil {
		return err
	}
	ids, err := r.storeNew(r.document("hidden superseded", meta), r.document("hidden successor", meta))
	if err != nil {
		return err
	}
	sup, succ := ids[0], ids[1]
	if _, err := r.e.Supersede(r.ctx, contract.SupersedeRequest{ID: sup, By: succ}); err != nil {
		return engineErr(err)
	}
	hidden := map[string]string{cand.ID: "candidate", sup: "superseded"}
	for _, mode := range r.desc.FetchModes {
		for _, f := range []contract.MetaFilter{r.tagFilter(tag), r.filter()} {
			hits, err := r.fetchAll(contract.FetchRequest{Query: r.marker + " hidden", Mode: mode, Filter: f, Limit: 50})
			if err != nil {
				return err
			}
			got := hitIDs(hits)
			for id, what := range hidden {
				if slices.Contains(got, id) {
					return fail("%s fetch returned a %s record without asking for its status", mode, what)
				}
			}
			if f.TagsAny != nil && !slices.Contains(got, succ) {
				return fail("%s fetch of the marker missed the active record `%s`", mode, succ)
			}
		}
		f := r.tagFilter(tag)
		f.Statuses = []contract.Status{contract.StatusCandidate, contract.StatusSuperseded}
		hits, err := r.fetchAll(contract.FetchRequest{Query: r.marker + " hidden", Mode: mode, Filter: f, Limit: 50})
		if err != nil {
			return err
		}
		if got := hitIDs(hits); !sameSet(got, []string{cand.ID, sup}) {
			return fail("%s fetch with statuses [candidate superseded] answered %d records; want exactly the candidate and the superseded one", mode, len(got))
		}
	}
	for _, f := range []contract.MetaFilter{r.tagFilter(tag), r.filter()} {
		ans, err := r.e.Recall(r.ctx, contract.RecallRequest{Question: r.marker + " hidden", Filter: f, Limit: 50})
		if err != nil {
			return engineErr(err)
		}
		for _, c := range ans.Citations {
			if what, ok := hidden[c.ID]; ok {
				return fail("recall cited a %s record without asking for its status", what)
			}
		}
	}
	f := r.tagFilter(tag)
	f.Statuses = []contract.Status{contract.StatusCandidate}
	ans, err := r.e.Recall(r.ctx, contract.RecallRequest{Question: r.marker + " hidden", Filter: f, Limit: 10})
	if err != nil {
		return engineErr(err)
	}
	if len(ans.Citations) != 1 || ans.Citations[0].ID != cand.ID {
		return fail("recall with statuses [candidate] cited %d records; want exactly the candidate", len(ans.Citations))
	}
	listed, err := r.listAll(r.tagFilter(tag))
	if err != nil {
		return err
	}
	if !sameSet(hitIDs(listed), []string{cand.ID, sup, succ}) {
		return fail("list must show every status; it answered %d of 3 records", len(listed))
	}
	return nil
}

func checkForgetNoGhost(r *run) error {
	tag := r.marker + "-ghost"
	ids, err := r.storeNew(r.document("ghost quokka", r.taggedMeta(tag)))
	if err != nil {
		return err
	}
	id := ids[0]
	question := r.marker + " ghost quokka"
	fetched := func() (map[contract.FetchMode]bool, error) {
		out := map[contract.FetchMode]bool{}
		for _, mode := range r.desc.FetchModes {
			hits, err := r.fetchAll(contract.FetchRequest{Query: question, Mode: mode, Filter: r.filter(), Limit: 50})
			if err != nil {
				return nil, err
			}
			out[mode] = slices.Contains(hitIDs(hits), id)
		}
		return out, nil
	}
	seen, err := fetched()
	if err != nil {
		return err
	}
	for mode, ok := range seen {
		if !ok {
			return fail("%s fetch missed a freshly stored item, so forgetting it proves nothing", mode)
		}
	}
	rep, err := r.e.Forget(r.ctx, contract.ForgetIDs(id))
	if err != nil {
		return engineErr(err)
	}
	if rep.Forgotten != 1 {
		return fail("forgetting one held id reported %d forgotten", rep.Forgotten)
	}
	if seen, err = fetched(); err != nil {
		return err
	}
	for mode, ok := range seen {
		if ok {
			return fail("%s fetch still returns a forgotten item", mode)
		}
	}
	ans, err := r.e.Recall(r.ctx, contract.RecallRequest{Question: question, Filter: r.filter(), Limit: 50})
	if err != nil {
		return engineErr(err)
	}
	for _, c := range ans.Citations {
		if c.ID == id {
			return fail("recall still cites a forgotten item")
		}
	}
	ex, err := r.e.Explore(r.ctx, contract.ExploreRequest{Facet: contract.FacetTag, Filter: r.filter(), Limit: contract.MaxBuckets})
	if err != nil {
		return engineErr(err)
	}
	for _, b := range ex.Buckets {
		if b.Value == tag {
			return fail("explore still counts a forgotten item under its tag")
		}
	}
	if listed, err := r.listAll(r.tagFilter(tag)); err != nil {
		return err
	} else if len(listed) != 0 {
		return fail("list still shows a forgotten item")
	}
	if hits, err := r.e.Get(r.ctx, contract.GetRequest{IDs: []string{id}}); err != nil {
		return engineErr(err)
	} else if len(hits) != 0 {
		return fail("get still reads a forgotten item")
	}
	if rec, err := r.recordOf(id); err != nil {
		return err
	} else if rec != nil {
		return fail("get_records still reads a forgotten item")
	}
	if p, err := r.browsePage(contract.BrowseQuery{Filter: r.tagFilter(tag)}); err != nil {
		return err
	} else if len(p.Records) != 0 || p.Total != 0 {
		return fail("browse still shows a forgotten item (total %d)", p.Total)
	}
	exported, err := r.exportAll(r.tagFilter(tag))
	if errors.Is(err, contract.ErrUnsupported) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(exported) != 0 {
		return fail("export still hands back a forgotten item")
	}
	return nil
}
