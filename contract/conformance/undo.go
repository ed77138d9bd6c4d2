package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"mnemo/contract"
)

// UndoProperty checks the undo of a forget on an engine that offers
// contract.Restorer: it fills a fresh workspace with records of every kind,
// status, namespace, time and expiry (written whole through Restore), then
// for rounds random forgets, by ids and by filter, it reads what the forget
// will remove (contract.SnapshotForget, as the TUI does), forgets it, puts it
// back (contract.Restore) and compares the store with what it was: every
// record field by field, the browse walk in every sort order both ways, and
// every facet's explore counts. The workspace's records are forgotten at the
// end. It returns the first difference.
func UndoProperty(ctx context.Context, e contract.Engine, seed uint64, rounds int) error {
	if _, ok := e.(contract.Restorer); !ok {
		return fmt.Errorf("engine `%s` does not restore whole records", e.Descriptor().ID)
	}
	rng := rand.New(rand.NewPCG(seed, 25))
	ws := fmt.Sprintf("mnemo-undo/%d-%d", seed, time.Now().UnixNano())
	filter := contract.MetaFilter{Workspace: &ws}
	defer func() { _, _ = e.Forget(context.WithoutCancel(ctx), contract.ForgetTarget{Filter: &filter}) }()
	tags := []string{"release", "kafka", "db", "ops", "ui"}
	nss := []contract.Namespace{contract.Root(), contract.MustNamespace("team:acme"), contract.MustNamespace("team:acme/agent:bot")}
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func() time.Time {
		return base.Add(time.Duration(rng.IntN(30*24*3600)) * time.Second).Add(time.Duration(rng.IntN(1000)) * time.Millisecond)
	}
	var seedRecs []contract.Record
	for i := range 160 {
		m := contract.MemoryMeta{Workspace: &ws, Namespace: nss[rng.IntN(len(nss))], Source: contract.SourceRef{Kind: contract.SourceAgent}}
		for _, t := range tags {
			if rng.IntN(3) == 0 {
				m.Tags = append(m.Tags, t)
			}
		}
		if rng.IntN(4) == 0 {
			o := at()
			m.ObservedAt = &o
		}
		text := fmt.Sprintf("undo %d record %d about %s", seed, i, strings.Join(m.Tags, " "))
		var it contract.StoreItem
		if rng.IntN(3) == 0 {
			it = contract.Learning(text, contract.LearningKinds()[rng.IntN(len(contract.LearningKinds()))], float32(rng.IntN(100))/100, m)
		} else {
			it = contract.Document(text, m)
		}
		created := at()
		// Ties on created_at are common: the tie-break by id must hold too.
		if i > 0 && rng.IntN(5) == 0 {
			created = seedRecs[rng.IntN(len(seedRecs))].CreatedAt
		}
		rec := contract.Record{ID: it.Fingerprint(), Item: &it, Status: contract.StatusActive, CreatedAt: created, UpdatedAt: created}
		switch rng.IntN(6) {
		case 0:
			rec.Status = contract.StatusCandidate
		case 1:
			rec.UpdatedAt = created.Add(time.Duration(rng.IntN(3600)) * time.Second)
		case 2:
			if len(seedRecs) > 0 {
				by := seedRecs[rng.IntN(len(seedRecs))].ID
				rec.Status, rec.SupersededBy = contract.StatusSuperseded, &by
				rec.UpdatedAt = created.Add(time.Minute)
			}
		}
		switch rng.IntN(5) {
		case 0:
			x := base.Add(-24 * time.Hour) // expired
			rec.ExpiresAt = &x
		case 1:
			x := base.AddDate(5, 0, 0)
			rec.ExpiresAt = &x
		}
		seedRecs = append(seedRecs, rec)
	}
	if n, err := contract.Restore(ctx, e, seedRecs); err != nil || n != len(seedRecs) {
		return fmt.Errorf("seeding %d records wrote %d: %v", len(seedRecs), n, err)
	}
	before, err := undoState(ctx, e, filter)
	if err != nil {
		return err
	}
	for round := range rounds {
		ids, err := undoIDs(ctx, e, filter)
		if err != nil {
			return err
		}
		var target contract.ForgetTarget
		var what string
		if rng.IntN(2) == 0 {
			n := 1 + rng.IntN(12)
			pick := make([]string, 0, n)
			for range n {
				pick = append(pick, ids[rng.IntN(len(ids))])
			}
			target, what = contract.ForgetIDs(pick...), fmt.Sprintf("ids %v", pick)
		} else {
			f := filter
			switch rng.IntN(3) {
			case 0:
				f.TagsAny = []string{tags[rng.IntN(len(tags))]}
			case 1:
				r := contract.ReachSubtree(nss[1+rng.IntN(len(nss)-1)])
				f.Reach = &r
			default:
				f.Kinds = []contract.ItemKind{contract.KindLearning}
				f.Statuses = []contract.Status{contract.StatusCandidate, contract.StatusSuperseded}
			}
			b, _ := json.Marshal(f)
			target, what = contract.ForgetTarget{Filter: &f}, "filter "+string(b)
		}
		snap, err := contract.SnapshotForget(ctx, e, target, nil, 0)
		if err != nil {
			return fmt.Errorf("round %d (%s): snapshot: %w", round, what, err)
		}
		rep, err := e.Forget(ctx, target)
		if err != nil {
			return fmt.Errorf("round %d (%s): forget: %w", round, what, err)
		}
		if rep.Forgotten != len(snap) {
			return fmt.Errorf("round %d (%s): forget removed %d records, the snapshot for undo holds %d", round, what, rep.Forgotten, len(snap))
		}
		if n, err := contract.Restore(ctx, e, snap); err != nil || n != len(snap) {
			return fmt.Errorf("round %d (%s): undo restored %d of %d: %v", round, what, n, len(snap), err)
		}
		after, err := undoState(ctx, e, filter)
		if err != nil {
			return err
		}
		if after != before {
			return fmt.Errorf("round %d (%s): after undo the store differs:\n%s", round, what, firstDiff(before, after))
		}
	}
	return nil
}

// undoIDs lists the workspace's records.
func undoIDs(ctx context.Context, e contract.Engine, f contract.MetaFilter) ([]string, error) {
	var ids []string
	q := contract.BrowseQuery{Filter: f, Limit: contract.BrowseMaxLimit}
	for range maxPages {
		p, err := e.Browse(ctx, q)
		if err != nil {
			return nil, err
		}
		ids = append(ids, recordIDs(p.Records)...)
		if p.Continuation == nil {
			return ids, nil
		}
		q.Cursor = *p.Continuation
	}
	return nil, fmt.Errorf("browse never ended")
}

// undoState is the workspace as a user sees it, one line per fact: every
// record, every browse order (with and without a now that hides expired
// records), and every facet's counts.
func undoState(ctx context.Context, e contract.Engine, f contract.MetaFilter) (string, error) {
	var b strings.Builder
	ids, err := undoIDs(ctx, e, f)
	if err != nil {
		return "", err
	}
	recs, err := contract.GetRecordsInChunks(ctx, e, ids, nil)
	if err != nil {
		return "", err
	}
	for _, r := range recs {
		j, _ := json.Marshal(r)
		fmt.Fprintf(&b, "record %s\n", j)
	}
	now := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	for _, field := range contract.BrowseSortFields() {
		for _, dir := range []string{contract.SortAsc, contract.SortDesc} {
			for _, withNow := range []bool{false, true} {
				q := contract.BrowseQuery{Filter: f, OrderBy: []contract.SortKey{{Field: field, Dir: dir}}, Limit: 97}
				if withNow {
					q.Now = &now
				}
				var order []string
				total := 0
				for range maxPages {
					p, err := e.Browse(ctx, q)
					if err != nil {
						return "", err
					}
					order = append(order, recordIDs(p.Records)...)
					total = p.Total
					if p.Continuation == nil {
						break
					}
					q.Cursor = *p.Continuation
				}
				fmt.Fprintf(&b, "browse %s %s now=%v total=%d %v\n", field, dir, withNow, total, order)
			}
		}
	}
	for _, facet := range contract.Facets() {
		p, err := e.Explore(ctx, contract.ExploreRequest{Facet: facet, Filter: f, Limit: contract.MaxBuckets})
		if err != nil {
			return "", err
		}
		j, _ := json.Marshal(p)
		fmt.Fprintf(&b, "explore %s %s\n", facet, j)
	}
	return b.String(), nil
}

// firstDiff names the first line that differs.
func firstDiff(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(x), len(y)) {
		if x[i] != y[i] {
			return "before: " + x[i] + "\nafter:  " + y[i]
		}
	}
	return fmt.Sprintf("before: %d lines, after: %d lines", len(x), len(y))
}
