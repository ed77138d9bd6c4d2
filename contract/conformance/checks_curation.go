package conformance

import (
	"slices"

	"mnemo/contract"
)

// checkSupersedeUndo: a supersede taken back (curation's undo) makes the
// record active again with no successor, or a candidate again when the undo
// names that status; taking back what is not so is a conflict that changes
// nothing, and a status outside an undo is invalid.
func checkSupersedeUndo(r *run) error {
	meta := r.taggedMeta(r.marker + "-undo")
	ids, err := r.storeNew(contract.Learning(r.marker+" undo old", contract.LearningFact, 0.5, meta),
		contract.Learning(r.marker+" undo new", contract.LearningFact, 0.75, meta))
	if err != nil {
		return err
	}
	_, err = r.e.Supersede(r.ctx, contract.SupersedeRequest{ID: ids[0], By: ids[1], Undo: true})
	if e := wantKind(err, contract.KindConflict, "undoing a supersede that never happened"); e != nil {
		return e
	}
	if _, err := r.e.Supersede(r.ctx, contract.SupersedeRequest{ID: ids[0], By: ids[1]}); err != nil {
		return engineErr(err)
	}
	_, err = r.e.Supersede(r.ctx, contract.SupersedeRequest{ID: ids[0], By: ids[0] + "x", Undo: true})
	if e := wantKind(err, contract.KindConflict, "undoing a supersede by another successor"); e != nil {
		return e
	}
	rec, err := r.e.Supersede(r.ctx, contract.SupersedeRequest{ID: ids[0], By: ids[1], Undo: true})
	if err != nil {
		return engineErr(err)
	}
	if rec.ID != ids[0] || rec.Status != contract.StatusActive || rec.SupersededBy != nil {
		return fail("undoing a supersede answered %s; want the record active with no successor", wireJSON(rec))
	}
	back, err := r.recordOf(ids[0])
	if err != nil {
		return err
	}
	if back == nil || back.Status != contract.StatusActive || back.SupersededBy != nil {
		return fail("a record whose supersede was undone reads back as %s", wireJSON(back))
	}

	// A candidate superseded goes back to being a candidate (not approved)
	// when the undo names the status it had; a status is only for an undo,
	// and only active or candidate.
	cand, err := r.storeWith(contract.Learning(r.marker+" undo candidate", contract.LearningFact, 0.4, meta), contract.WriteOptions{Status: contract.StatusCandidate})
	if err != nil {
		return err
	}
	_, err = r.e.Supersede(r.ctx, contract.SupersedeRequest{ID: cand.ID, By: ids[1], Status: contract.StatusCandidate})
	if e := wantKind(err, contract.KindInvalidRequest, "a supersede that names a status without undo"); e != nil {
		return e
	}
	if _, err := r.e.Supersede(r.ctx, contract.SupersedeRequest{ID: cand.ID, By: ids[1]}); err != nil {
		return engineErr(err)
	}
	_, err = r.e.Supersede(r.ctx, contract.SupersedeRequest{ID: cand.ID, By: ids[1], Undo: true, Status: contract.StatusSuperseded})
	if e := wantKind(err, contract.KindInvalidRequest, "undoing a supersede back to superseded"); e != nil {
		return e
	}
	rec, err = r.e.Supersede(r.ctx, contract.SupersedeRequest{ID: cand.ID, By: ids[1], Undo: true, Status: contract.StatusCandidate})
	if err != nil {
		return engineErr(err)
	}
	if rec.Status != contract.StatusCandidate || rec.SupersededBy != nil {
		return fail("undoing a candidate's supersede answered %s; want the record a candidate again with no successor", wireJSON(rec))
	}
	if back, err = r.recordOf(cand.ID); err != nil {
		return err
	}
	if back == nil || back.Status != contract.StatusCandidate || back.SupersededBy != nil {
		return fail("a candidate whose supersede was undone reads back as %s", wireJSON(back))
	}
	return nil
}

// checkBeliefsEvidence: an engine that consolidates on demand or
// automatically answers, for two copies of one statement inside the reach,
// a belief whose evidence names both, and never one drawn from outside it.
func checkBeliefsEvidence(r *run) error {
	if c := r.desc.Consolidation; c != contract.ConsolidationOnDemand && c != contract.ConsolidationAutomatic {
		return skip("the engine consolidates %s", c)
	}
	node := r.ns("agent:" + r.marker + "-evidence")
	text := r.marker + " evidence: the nightly backup of the billing database runs at two in the morning and keeps thirty days"
	a, b, out := r.meta(), r.meta(), r.meta()
	a.Namespace, b.Namespace, out.Namespace = node, node, r.ns("agent:"+r.marker+"-elsewhere")
	b.Tags = []string{"copy"}
	out.Tags = []string{"outside"}
	ids, err := r.storeNew(contract.Document(text, a), contract.Document(text, b), contract.Document(text, out))
	if err != nil {
		return err
	}
	reach := contract.ReachExact(node)
	if _, err := contract.Consolidate(r.ctx, r.e, contract.ConsolidateRequest{Reach: reach}); err != nil {
		return engineErr(err)
	}
	hits, err := contract.Beliefs(r.ctx, r.e, contract.BeliefsRequest{Reach: reach, Limit: 10})
	if err != nil {
		return engineErr(err)
	}
	for _, h := range hits {
		if slices.Contains(h.Evidence, ids[2]) {
			return fail("belief `%s` draws on `%s`, which is outside the reach", h.ID, ids[2])
		}
		if slices.Contains(h.Evidence, ids[0]) && slices.Contains(h.Evidence, ids[1]) {
			if h.Kind != contract.KindLearning || !slices.Contains(h.Meta.Tags, contract.BeliefTag) {
				return fail("belief `%s` is not a learning tagged belief", h.ID)
			}
			return nil
		}
	}
	return fail("beliefs answered %d hits, none with both copies of one statement as evidence", len(hits))
}
