package conformance

import (
	"encoding/json"
	"slices"
	"time"

	"mnemo/contract"
)

// checkRestoreExact asserts an engine that offers contract.Restorer writes
// whole records back exactly: the same id, item, status, created and updated
// times, expiry and successor, in the same place in every order; a held id
// is a replay that changes nothing; the feed logs each record written as a
// restore; a record whose id is not its item's fingerprint is refused.
func checkRestoreExact(r *run) error {
	rs, ok := r.e.(contract.Restorer)
	if !ok {
		return skip("the engine does not restore whole records")
	}
	ms := func(s string) time.Time {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			panic(err)
		}
		return t
	}
	a := r.document("restore-a", r.taggedMeta("restore", "alpha"))
	b := r.document("restore-b", r.taggedMeta("restore"))
	c := r.document("restore-c", r.taggedMeta("restore", "gamma"))
	expires := ms("2199-01-02T03:04:05.678Z")
	by := c.Fingerprint()
	want := []contract.Record{
		{ID: a.Fingerprint(), Item: &a, Status: contract.StatusActive, CreatedAt: ms("2020-01-02T03:04:05.123Z"), UpdatedAt: ms("2021-06-07T08:09:10.456Z"), ExpiresAt: &expires},
		{ID: b.Fingerprint(), Item: &b, Status: contract.StatusSuperseded, CreatedAt: ms("2019-05-06T07:08:09.010Z"), UpdatedAt: ms("2020-05-06T07:08:09.010Z"), SupersededBy: &by},
		{ID: c.Fingerprint(), Item: &c, Status: contract.StatusCandidate, CreatedAt: ms("2022-03-04T05:06:07.089Z"), UpdatedAt: ms("2022-03-04T05:06:07.089Z")},
	}
	ids := recordIDs(want)
	r.remember(ids...)
	head, err := r.e.Changes(r.ctx, contract.ChangesRequest{Limit: 1, FromNow: true})
	if err != nil {
		return engineErr(err)
	}
	got, err := rs.Restore(r.ctx, want)
	if err != nil {
		return engineErr(err)
	}
	for i, x := range got {
		if x.ID != ids[i] || x.Replayed {
			return fail("restore's receipt %d is %+v; want id %s, not replayed", i, x, ids[i])
		}
	}
	same := func(when string) error {
		held, err := r.getRecords(ids, nil)
		if err != nil {
			return err
		}
		if len(held) != len(want) {
			return fail("%s: get_records read %d of the %d restored records", when, len(held), len(want))
		}
		for i := range want {
			w := want[i]
			w.Kind, w.Text, w.Meta, w.Confidence = held[i].Kind, held[i].Text, held[i].Meta, held[i].Confidence
			x, _ := json.Marshal(w)
			y, _ := json.Marshal(held[i])
			if string(x) != string(y) {
				return fail("%s: record %s reads %s; want %s", when, w.ID, y, x)
			}
		}
		return nil
	}
	if err := same("after restore"); err != nil {
		return err
	}
	// In order: created_at ascending is b, a, c; updated_at descending c, a, b.
	for _, o := range []struct {
		key  contract.SortKey
		want []string
	}{
		{contract.SortKey{Field: contract.BrowseFieldCreatedAt, Dir: contract.SortAsc}, []string{ids[1], ids[0], ids[2]}},
		{contract.SortKey{Field: contract.BrowseFieldUpdatedAt, Dir: contract.SortDesc}, []string{ids[2], ids[0], ids[1]}},
	} {
		p, err := r.e.Browse(r.ctx, contract.BrowseQuery{Filter: r.tagFilter("restore"), Status: contract.Statuses(), OrderBy: []contract.SortKey{o.key}, Limit: 10})
		if err != nil {
			return engineErr(err)
		}
		if got := recordIDs(p.Records); !slices.Equal(got, o.want) {
			return fail("browse by %s %s lists the restored records as %v; want %v", o.key.Field, o.key.Dir, got, o.want)
		}
	}
	feed, err := r.e.Changes(r.ctx, contract.ChangesRequest{Since: head.Next, Limit: contract.MaxChangesLimit})
	if err != nil {
		return engineErr(err)
	}
	var restored []string
	for _, ch := range feed.Changes {
		if slices.Contains(ids, ch.ID) {
			if ch.Op != contract.OpRestore {
				return fail("the feed logs restored record %s as %s; want %s", ch.ID, ch.Op, contract.OpRestore)
			}
			restored = append(restored, ch.ID)
		}
	}
	if !sameSet(restored, ids) {
		return fail("the feed logs restores of %v; want %v", restored, ids)
	}
	// Again: every record is held, so each is a replay and nothing moves.
	changed := want[0]
	changed.UpdatedAt = ms("2024-01-01T00:00:00.000Z")
	again, err := rs.Restore(r.ctx, []contract.Record{changed, want[1]})
	if err != nil {
		return engineErr(err)
	}
	if len(again) != 2 || !again[0].Replayed || !again[1].Replayed {
		return fail("restoring held records answered %+v; want two replays", again)
	}
	if err := same("after a replayed restore"); err != nil {
		return err
	}
	// Forget one, restore it: it is back exactly.
	if _, err := r.e.Forget(r.ctx, contract.ForgetTarget{IDs: []string{ids[0]}}); err != nil {
		return engineErr(err)
	}
	if _, err := rs.Restore(r.ctx, want[:1]); err != nil {
		return engineErr(err)
	}
	if err := same("after a forget and its restore"); err != nil {
		return err
	}
	bad := want[0]
	bad.ID = ids[1]
	_, err = rs.Restore(r.ctx, []contract.Record{bad})
	return wantKind(err, contract.KindInvalidRequest, "a restore of a record whose id is not its item's fingerprint")
}
