package contract

import (
	"context"
	"errors"
	"time"
)

// RestoreStatus is the status a record is stored back with (undo, import):
// its own, except that a superseded record is stored active and superseded
// again once its successor is back, since a store cannot name a successor.
func RestoreStatus(s Status) Status {
	if s == StatusSuperseded {
		return StatusActive
	}
	return s
}

// Restore stores forgotten records again (those read with their item) with
// their status and expiry, in batches of MaxStoreMany per set of options, and
// supersedes the superseded ones again by their successors (a successor that
// is gone leaves its record active). Ids are fingerprints, so every record
// comes back under its id. It returns how many records were stored.
func Restore(ctx context.Context, e Engine, records []Record) (int, error) {
	type options struct {
		status  Status
		expires string
	}
	groups := map[options][]StoreItem{}
	expiry := map[options]*time.Time{}
	var order []options
	var superseded []Record
	for _, r := range records {
		if r.Item == nil {
			continue
		}
		g := options{status: RestoreStatus(r.Status)}
		if r.Status == StatusSuperseded {
			superseded = append(superseded, r)
		}
		if r.ExpiresAt != nil {
			g.expires = FormatMillis(*r.ExpiresAt)
			expiry[g] = r.ExpiresAt
		}
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], *r.Item)
	}
	n := 0
	for _, g := range order {
		items := groups[g]
		for start := 0; start < len(items); start += MaxStoreMany {
			end := min(start+MaxStoreMany, len(items))
			rec, err := e.StoreManyWith(ctx, items[start:end], WriteOptions{Status: g.status, ExpiresAt: expiry[g]})
			if err != nil {
				return n, err
			}
			n += len(rec)
		}
	}
	for _, r := range superseded {
		if r.SupersededBy == nil {
			continue
		}
		if _, err := e.Supersede(ctx, SupersedeRequest{ID: r.ID, By: *r.SupersededBy}); err != nil && !errors.Is(err, ErrNotFound) {
			return n, err
		}
	}
	return n, nil
}
