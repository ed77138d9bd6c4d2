package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"mnemo/contract"
)

// The change feed's checks (contract/changes.go): order, no gaps, no
// duplicates, every mutation once and nothing else, forgets without content,
// reach confinement, wait, validation and the past-head since. Engines that
// persist also run CheckChangesResume, and engines with a configurable
// retention CheckChangesRetention.

// feedHead is the feed's head as a from_now read reports it.
func feedHead(ctx context.Context, e contract.Engine) (uint64, error) {
	p, err := e.Changes(ctx, contract.ChangesRequest{FromNow: true, Limit: 1})
	if err != nil {
		return 0, engineErr(err)
	}
	if len(p.Changes) != 0 {
		return 0, fail("a from_now read without wait returned %d changes; want none", len(p.Changes))
	}
	if p.Next != p.Head {
		return 0, fail("a from_now read answered next %d, head %d; want next = head", p.Next, p.Head)
	}
	return p.Head, nil
}

// feedAfter reads every change after since under reach, page by page (small
// pages, so paging is exercised), checking that Next moves on and pages
// follow each other in order.
func feedAfter(ctx context.Context, e contract.Engine, since uint64, reach *contract.Reach) ([]contract.Change, error) {
	var out []contract.Change
	for range maxPages {
		p, err := e.Changes(ctx, contract.ChangesRequest{Since: since, Limit: 3, Reach: reach})
		if err != nil {
			return nil, engineErr(err)
		}
		if len(p.Changes) > 3 {
			return nil, fail("a changes page of limit 3 held %d changes", len(p.Changes))
		}
		for _, c := range p.Changes {
			if c.Seq <= since {
				return nil, fail("reading after seq %d returned seq %d", since, c.Seq)
			}
		}
		if n := len(p.Changes); n > 0 {
			last := p.Changes[n-1].Seq
			if (n == 3 && p.Next != last) || p.Next < last {
				return nil, fail("a changes page of %d ending at seq %d answered next %d; want the last seq shown (or, on a short page, a seq past it)", n, last, p.Next)
			}
		}
		if p.Next < since || p.Next > p.Head {
			return nil, fail("reading after seq %d answered next %d with head %d", since, p.Next, p.Head)
		}
		out = append(out, p.Changes...)
		if p.Next == p.Head {
			return out, nil
		}
		if p.Next == since {
			return nil, fail("a changes read after seq %d below head %d did not move on", since, p.Head)
		}
		since = p.Next
	}
	return nil, fail("reading the feed did not reach its head within %d pages", maxPages)
}

// ordered checks seqs strictly increase (so none repeats).
func ordered(cs []contract.Change) error {
	for i := 1; i < len(cs); i++ {
		if cs[i].Seq <= cs[i-1].Seq {
			return fail("the feed returned seq %d after seq %d; want strictly increasing seqs, each once", cs[i].Seq, cs[i-1].Seq)
		}
	}
	return nil
}

// ownChanges keeps the changes to ids, in feed order.
func ownChanges(cs []contract.Change, ids []string) []contract.Change {
	var out []contract.Change
	for _, c := range cs {
		if slices.Contains(ids, c.ID) {
			out = append(out, c)
		}
	}
	return out
}

// expectedChange is one change a check made: its op, record, status and
// whether its record must be attached when read (false: must not be).
type expectedChange struct {
	op     contract.ChangeOp
	id     string
	status contract.Status
	record bool
	// group: consecutive changes of one group (a forget by filter) may come in
	// any order among themselves.
	group int
}

func describeChanges(cs []contract.Change, names map[string]string) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		n := names[c.ID]
		if n == "" {
			n = c.ID
		}
		parts[i] = fmt.Sprintf("%d:%s %s (%s)", c.Seq, c.Op, n, c.Status)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func matchChanges(got []contract.Change, want []expectedChange, names map[string]string) error {
	if len(got) != len(want) {
		return fail("the feed holds %d changes to the check's records, want %d: %s", len(got), len(want), describeChanges(got, names))
	}
	for i := 0; i < len(want); {
		j := i + 1
		for want[i].group != 0 && j < len(want) && want[j].group == want[i].group {
			j++
		}
		// Within a group, match as a set.
		used := make([]bool, j-i)
		for k := i; k < j; k++ {
			c := got[k]
			found := false
			for m := i; m < j; m++ {
				w := want[m]
				if used[m-i] || w.id != c.ID || w.op != c.Op {
					continue
				}
				used[m-i], found = true, true
				if c.Status != w.status {
					return fail("the %s of %s carries status `%s`, want `%s`", c.Op, names[c.ID], c.Status, w.status)
				}
				if w.record && (c.Record == nil || c.Record.ID != c.ID) {
					return fail("the %s of %s (seq %d) carries no record, though the record exists", c.Op, names[c.ID], c.Seq)
				}
				if !w.record && c.Record != nil {
					return fail("the %s of %s (seq %d) carries the record's content, though it is forgotten: removals and forgotten records never carry content", c.Op, names[c.ID], c.Seq)
				}
				break
			}
			if !found {
				return fail("the feed's change %d of the check's records is %s of %s; want the order %v, got %s", k+1, c.Op, names[c.ID], describeExpected(want, names), describeChanges(got, names))
			}
		}
		i = j
	}
	return nil
}

func describeExpected(want []expectedChange, names map[string]string) string {
	parts := make([]string, len(want))
	for i, w := range want {
		parts[i] = fmt.Sprintf("%s %s", w.op, names[w.id])
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func checkChangesValidation(r *run) error {
	bad := []struct {
		req  contract.ChangesRequest
		what string
	}{
		{contract.ChangesRequest{Limit: 0}, "a changes read with limit 0"},
		{contract.ChangesRequest{Limit: contract.MaxChangesLimit + 1}, "a changes read with limit 1001"},
		{contract.ChangesRequest{Limit: 1, Wait: -time.Second}, "a changes read with a negative wait"},
		{contract.ChangesRequest{Limit: 1, Wait: contract.MaxChangesWait + time.Second}, "a changes read waiting 61s"},
		{contract.ChangesRequest{Limit: 1, Since: 1, FromNow: true}, "a changes read with both since and from_now"},
	}
	for _, b := range bad {
		_, err := r.e.Changes(r.ctx, b.req)
		if e := wantKind(err, contract.KindInvalidRequest, b.what); e != nil {
			return e
		}
	}
	head, err := feedHead(r.ctx, r.e)
	if err != nil {
		return err
	}
	_, err = r.e.Changes(r.ctx, contract.ChangesRequest{Since: head + 1_000_000_000, Limit: 1})
	if e := wantKind(err, contract.KindExpired, "a since past the feed's head"); e != nil {
		return e
	}
	p, err := r.e.Changes(r.ctx, contract.ChangesRequest{Since: head, Limit: 1})
	if err != nil {
		return engineErr(err)
	}
	if p.Head < head {
		return fail("the feed's head went back from %d to %d", head, p.Head)
	}
	return nil
}

// checkChangesOrder makes one of every mutation and reads them back: each
// once, in order, none for a replay, removals without content.
func checkChangesOrder(r *run) error {
	var lastErr error
	// A writer outside the suite can land a change between the check's own
	// (a gap for this check's purpose); a real gap shows up every time.
	for attempt := 0; attempt < 3; attempt++ {
		err := changesOrderOnce(r, attempt)
		var g *gapSeen
		if !errors.As(err, &g) {
			return err
		}
		lastErr = g.err
	}
	return lastErr
}

type gapSeen struct{ err error }

func (g *gapSeen) Error() string { return g.err.Error() }

func changesOrderOnce(r *run, attempt int) error {
	tag := fmt.Sprintf("%s-feed%d", r.marker, attempt)
	ns := r.ns("agent:" + r.marker + "-feed")
	meta := r.taggedMeta(tag)
	meta.Namespace = ns
	item := func(label string) contract.StoreItem {
		return contract.Learning(fmt.Sprintf("%s feed %s %d", r.marker, label, attempt), contract.LearningFact, 0.5, meta)
	}
	head, err := feedHead(r.ctx, r.e)
	if err != nil {
		return err
	}
	a, b, c, d, e, f, g, h := item("a"), item("b"), item("c"), item("d"), item("e"), item("f"), item("g"), item("h")
	names := map[string]string{}
	for label, it := range map[string]contract.StoreItem{"a": a, "b": b, "c": c, "d": d, "e": e, "f": f, "g": g, "h": h} {
		names[it.Fingerprint()] = label
	}
	id := func(it contract.StoreItem) string { return it.Fingerprint() }
	if _, err := r.storeWith(a, contract.WriteOptions{Status: contract.StatusCandidate}); err != nil {
		return err
	}
	if _, err := r.store(b); err != nil {
		return err
	}
	if rec, err := r.storeWith(a, contract.WriteOptions{}); err != nil {
		return err
	} else if !rec.Replayed {
		return fail("storing an item twice did not replay")
	}
	if _, err := r.storeMany([]contract.StoreItem{c, d, b}); err != nil {
		return err
	}
	if _, err := r.e.Review(r.ctx, contract.ReviewRequest{ID: id(a), Action: contract.ReviewApprove}); err != nil {
		return engineErr(err)
	}
	if _, err := r.e.Supersede(r.ctx, contract.SupersedeRequest{ID: id(b), By: id(c)}); err != nil {
		return engineErr(err)
	}
	if _, err := r.e.Forget(r.ctx, contract.ForgetIDs(id(d))); err != nil {
		return engineErr(err)
	}
	if _, err := r.storeWith(e, contract.WriteOptions{Status: contract.StatusCandidate}); err != nil {
		return err
	}
	if _, err := r.e.Review(r.ctx, contract.ReviewRequest{ID: id(e), Action: contract.ReviewReject}); err != nil {
		return engineErr(err)
	}
	if _, err := r.storeMany([]contract.StoreItem{f, g}); err != nil {
		return err
	}
	filtered := r.tagFilter(tag)
	filtered.Kinds = []contract.ItemKind{contract.KindLearning}
	filtered.Statuses = []contract.Status{contract.StatusCandidate}
	if _, err := r.storeWith(h, contract.WriteOptions{Status: contract.StatusCandidate}); err != nil {
		return err
	}
	// Forget by filter: the candidates of the tag (h only).
	if _, err := r.e.Forget(r.ctx, contract.ForgetFilter(filtered)); err != nil {
		return engineErr(err)
	}
	if _, err := contract.ForgetWithin(r.ctx, r.e, []string{id(f), id(g)}, contract.ReachExact(ns)); err != nil {
		return engineErr(err)
	}
	all, err := feedAfter(r.ctx, r.e, head, nil)
	if err != nil {
		return err
	}
	if err := ordered(all); err != nil {
		return err
	}
	ids := []string{id(a), id(b), id(c), id(d), id(e), id(f), id(g), id(h)}
	own := ownChanges(all, ids)
	for _, ch := range own {
		if !ch.Namespace.Equal(ns) {
			return fail("the %s of %s names namespace `%s`, want `%s`", ch.Op, names[ch.ID], ch.Namespace, ns)
		}
		if ch.At.IsZero() || time.Since(ch.At) > time.Hour || time.Until(ch.At) > time.Hour {
			return fail("the %s of %s happened at %s; want about now", ch.Op, names[ch.ID], contract.FormatMillis(ch.At))
		}
	}
	act, cand, sup := contract.StatusActive, contract.StatusCandidate, contract.StatusSuperseded
	want := []expectedChange{
		{op: contract.OpStore, id: id(a), status: cand, record: true},
		{op: contract.OpStore, id: id(b), status: act, record: true},
		{op: contract.OpStore, id: id(c), status: act, record: true},
		{op: contract.OpStore, id: id(d), status: act},
		{op: contract.OpApprove, id: id(a), status: act, record: true},
		{op: contract.OpSupersede, id: id(b), status: sup, record: true},
		{op: contract.OpForget, id: id(d), status: act},
		{op: contract.OpStore, id: id(e), status: cand},
		{op: contract.OpReject, id: id(e), status: cand},
		{op: contract.OpStore, id: id(f), status: act},
		{op: contract.OpStore, id: id(g), status: act},
		{op: contract.OpStore, id: id(h), status: cand},
		{op: contract.OpForget, id: id(h), status: cand},
		{op: contract.OpForget, id: id(f), status: act, group: 1},
		{op: contract.OpForget, id: id(g), status: act, group: 1},
	}
	if err := matchChanges(own, want, names); err != nil {
		return err
	}
	for _, ch := range own {
		if ch.Record != nil && ch.Record.Item != nil {
			return fail("the %s of %s carries the stored item; the feed's records come without it", ch.Op, names[ch.ID])
		}
	}
	if rec := own[0].Record; rec.Status != act || rec.Text != a.RenderText() {
		return fail("the store of a carries the record %s; want it as get_records reads it now (active)", wireJSON(rec))
	}
	// No gaps: an unconfined reader sees every seq between the check's first
	// and last change (the check writes nothing into a service sandbox).
	first, last := own[0].Seq, own[len(own)-1].Seq
	for i := 1; i < len(all); i++ {
		if all[i].Seq > first && all[i].Seq <= last && all[i].Seq != all[i-1].Seq+1 {
			return &gapSeen{fail("the feed jumps from seq %d to seq %d; an unconfined reader must see every change, with no gap", all[i-1].Seq, all[i].Seq)}
		}
	}
	// Resuming from any seq gives the rest, unchanged.
	mid := own[len(own)/2].Seq - 1
	rest, err := feedAfter(r.ctx, r.e, mid, nil)
	if err != nil {
		return err
	}
	if got, want := describeChanges(ownChanges(rest, ids), names), describeChanges(own[len(own)/2:], names); got != want {
		return fail("resuming after seq %d read %s; want %s", mid, got, want)
	}
	return nil
}

// checkChangesReach: the feed is confined by reach; a forget in another reach
// is invisible; a sandbox is invisible without naming it; a confined reader
// moves on past the changes it may not see.
func checkChangesReach(r *run) error {
	m := r.marker
	x := r.ns("agent:" + m + "-fx")
	y := r.ns("agent:" + m + "-fy")
	job := r.ns("agent:" + m + "-fx/service:job")
	item := func(label string, ns contract.Namespace) contract.StoreItem {
		meta := r.taggedMeta(m + "-feedreach")
		meta.Namespace = ns
		return contract.Document(m+" feed reach "+label, meta)
	}
	head, err := feedHead(r.ctx, r.e)
	if err != nil {
		return err
	}
	ix, iy, ij := item("x", x), item("y", y), item("job", job)
	ids, err := r.storeNew(ix, iy, ij)
	if err != nil {
		return err
	}
	if _, err := r.e.Forget(r.ctx, contract.ForgetIDs(ids[1])); err != nil {
		return engineErr(err)
	}
	names := map[string]string{ids[0]: "x", ids[1]: "y", ids[2]: "job"}
	seen := func(reach *contract.Reach) (string, error) {
		cs, err := feedAfter(r.ctx, r.e, head, reach)
		if err != nil {
			return "", err
		}
		if err := ordered(cs); err != nil {
			return "", err
		}
		for _, c := range cs {
			if !contract.AdmittedBy(reach, c.Namespace) {
				return "", fail("a read under %s returned a change at `%s`, outside it", wireJSON(reach), c.Namespace)
			}
		}
		own := ownChanges(cs, ids)
		parts := make([]string, len(own))
		for i, c := range own {
			parts[i] = string(c.Op) + " " + names[c.ID]
		}
		return strings.Join(parts, ", "), nil
	}
	cases := []struct {
		label string
		reach *contract.Reach
		want  string
	}{
		{"subtree(x)", contract.Ptr(contract.ReachSubtree(x)), "store x"},
		{"exact(x)", contract.Ptr(contract.ReachExact(x)), "store x"},
		{"subtree(y)", contract.Ptr(contract.ReachSubtree(y)), "store y, forget y"},
		{"exact(job)", contract.Ptr(contract.ReachExact(job)), "store job"},
		{"no reach", nil, "store x, store y, forget y"},
	}
	for _, c := range cases {
		got, err := seen(c.reach)
		if err != nil {
			return err
		}
		if got != c.want {
			return fail("the feed under %s shows [%s]; want [%s]", c.label, got, c.want)
		}
	}
	// A confined reader whose page holds nothing it may see still moves on.
	p, err := r.e.Changes(r.ctx, contract.ChangesRequest{Since: head, Limit: contract.MaxChangesLimit, Reach: contract.Ptr(contract.ReachExact(r.ns("agent:" + m + "-nobody")))})
	if err != nil {
		return engineErr(err)
	}
	if len(p.Changes) != 0 {
		return fail("a reach holding nothing read %d changes", len(p.Changes))
	}
	if p.Next <= head {
		return fail("a confined read past 4 changes it may not see answered next %d; want it past them (> %d)", p.Next, head)
	}
	return nil
}

// checkChangesWait: a waiting read wakes on a write it may see, waits out its
// wait when nothing comes, and honours its context.
func checkChangesWait(r *run) error {
	ns := r.ns("agent:" + r.marker + "-fwait")
	reach := contract.ReachExact(ns)
	head, err := feedHead(r.ctx, r.e)
	if err != nil {
		return err
	}
	start := time.Now()
	p, err := r.e.Changes(r.ctx, contract.ChangesRequest{Since: head, Limit: 10, Reach: &reach, Wait: 300 * time.Millisecond})
	if err != nil {
		return engineErr(err)
	}
	if el := time.Since(start); len(p.Changes) != 0 || el < 250*time.Millisecond || el > 20*time.Second {
		return fail("a read waiting 300ms on a quiet reach returned %d changes after %s; want none after about 300ms", len(p.Changes), el.Round(time.Millisecond))
	}
	meta := r.taggedMeta(r.marker + "-feedwait")
	meta.Namespace = ns
	it := contract.Document(r.marker+" feed wait", meta)
	type answer struct {
		p   contract.ChangesPage
		err error
		at  time.Time
	}
	done := make(chan answer, 1)
	go func() {
		p, err := r.e.Changes(r.ctx, contract.ChangesRequest{Since: p.Next, Limit: 10, Reach: &reach, Wait: 30 * time.Second})
		done <- answer{p, err, time.Now()}
	}()
	time.Sleep(150 * time.Millisecond)
	stored := time.Now()
	if _, err := r.store(it); err != nil {
		return err
	}
	select {
	case a := <-done:
		if a.err != nil {
			return engineErr(a.err)
		}
		if len(a.p.Changes) != 1 || a.p.Changes[0].ID != it.Fingerprint() || a.p.Changes[0].Op != contract.OpStore {
			return fail("a waiting read woke with %s; want the store it waited for", describeChanges(a.p.Changes, nil))
		}
		if a.at.Sub(stored) > 5*time.Second {
			return fail("a waiting read woke %s after the write", a.at.Sub(stored).Round(time.Millisecond))
		}
	case <-time.After(20 * time.Second):
		return fail("a read waiting 30s did not wake within 20s of a write it may see")
	}
	ctx, cancel := context.WithCancel(r.ctx)
	time.AfterFunc(150*time.Millisecond, cancel)
	start = time.Now()
	_, err = r.e.Changes(ctx, contract.ChangesRequest{FromNow: true, Limit: 10, Reach: &reach, Wait: 30 * time.Second})
	if el := time.Since(start); el > 10*time.Second {
		return fail("a waiting read whose context was cancelled after 150ms returned after %s", el.Round(time.Millisecond))
	}
	if err == nil {
		return fail("a waiting read whose context was cancelled answered without an error")
	}
	return nil
}

// CheckChangesResume proves the feed survives a reopen: changes read before
// closing are the same after reopening, and reading resumes from a since with
// nothing missed. open returns the engine on the same store each time; close
// closes it. It leaves nothing behind.
func CheckChangesResume(ctx context.Context, open func() (contract.Engine, error), close func(contract.Engine) error) error {
	e, err := open()
	if err != nil {
		return err
	}
	r := newRun(ctx, e)
	ns := r.ns("agent:" + r.marker + "-resume")
	reach := contract.ReachExact(ns)
	meta := r.meta()
	meta.Namespace = ns
	head, err := feedHead(ctx, e)
	if err != nil {
		return err
	}
	var ids []string
	for i := range 4 {
		rec, err := r.store(contract.Document(fmt.Sprintf("%s resume %d", r.marker, i), meta))
		if err != nil {
			return err
		}
		ids = append(ids, rec.ID)
	}
	if _, err := e.Forget(ctx, contract.ForgetIDs(ids[3])); err != nil {
		return err
	}
	before, err := feedAfter(ctx, e, head, &reach)
	if err != nil {
		return err
	}
	p, err := e.Changes(ctx, contract.ChangesRequest{Since: head, Limit: 2, Reach: &reach})
	if err != nil {
		return err
	}
	if err := close(e); err != nil {
		return err
	}
	if e, err = open(); err != nil {
		return err
	}
	defer func() { _ = close(e) }()
	after, err := feedAfter(ctx, e, head, &reach)
	if err != nil {
		return err
	}
	if describeChanges(after, nil) != describeChanges(before, nil) || len(before) != 5 {
		return fail("after a reopen the feed reads %s; before it read %s (want 5 changes)", describeChanges(after, nil), describeChanges(before, nil))
	}
	rest, err := feedAfter(ctx, e, p.Next, &reach)
	if err != nil {
		return err
	}
	if describeChanges(rest, nil) != describeChanges(before[2:], nil) {
		return fail("resuming after seq %d across a reopen read %s; want %s", p.Next, describeChanges(rest, nil), describeChanges(before[2:], nil))
	}
	if _, err := e.Forget(ctx, contract.ForgetIDs(ids...)); err != nil {
		return err
	}
	return nil
}

// CheckChangesRetention proves a feed configured to keep only keep changes
// (and a negligible age) refuses a since it pruned with an Expired error, and
// still answers from the oldest seq it keeps. It leaves nothing behind.
func CheckChangesRetention(ctx context.Context, e contract.Engine, keep int) error {
	r := newRun(ctx, e)
	meta := r.meta()
	meta.Namespace = r.ns("agent:" + r.marker + "-retention")
	head, err := feedHead(ctx, e)
	if err != nil {
		return err
	}
	var ids []string
	for i := range keep + 3 {
		time.Sleep(2 * time.Millisecond)
		rec, err := r.store(contract.Document(fmt.Sprintf("%s retention %d", r.marker, i), meta))
		if err != nil {
			return err
		}
		ids = append(ids, rec.ID)
	}
	// One more write prunes what the last ones left behind.
	rec, err := r.store(contract.Document(r.marker+" retention last", meta))
	if err != nil {
		return err
	}
	ids = append(ids, rec.ID)
	defer func() { _, _ = e.Forget(ctx, contract.ForgetIDs(ids...)) }()
	_, err = e.Changes(ctx, contract.ChangesRequest{Since: head, Limit: 10})
	if err == nil || !errors.Is(err, contract.ErrExpired) {
		return fail("reading after seq %d, long pruned, answered %v; want an expired error", head, err)
	}
	if !strings.Contains(err.Error(), "reload") {
		return fail("the expired error `%v` does not tell the client to reload", err)
	}
	now, err := feedHead(ctx, e)
	if err != nil {
		return err
	}
	p, err := e.Changes(ctx, contract.ChangesRequest{FromNow: true, Limit: 1})
	if err != nil {
		return err
	}
	if p.Floor != now-uint64(keep) {
		return fail("a feed keeping %d changes at head %d answered floor %d; want %d", keep, now, p.Floor, now-uint64(keep))
	}
	if _, err := e.Changes(ctx, contract.ChangesRequest{Since: p.Floor, Limit: 1}); err != nil {
		return fail("reading after the floor %d: %v", p.Floor, err)
	}
	cs, err := feedAfter(ctx, e, now-uint64(keep), nil)
	if err != nil {
		return fail("reading the last %d changes kept: %v", keep, err)
	}
	if len(ownChanges(cs, ids)) != keep {
		return fail("reading the last %d changes kept gave %d of them", keep, len(ownChanges(cs, ids)))
	}
	return nil
}
