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

// MaxRestoreMany is the largest batch one exact restore (Restorer) takes.
const MaxRestoreMany = 500

// Restorer is an engine that writes whole records as they are: id, item,
// status, created and updated times, expiry and successor. A held id is left
// as it was and its receipt says replayed; every record written is one
// OpRestore change. engine/bolt, engine/memory, engine/postgres and
// engine/remote (over HTTP, op "restore") offer it.
type Restorer interface {
	Restore(ctx context.Context, recs []Record) ([]StoreReceipt, error)
}

// ValidateRestore checks a batch for Restorer.Restore: 1..MaxRestoreMany
// records, each with its item, an id that is the item's fingerprint, a known
// status and both times set.
func ValidateRestore(recs []Record) error {
	if len(recs) == 0 || len(recs) > MaxRestoreMany {
		return Invalid("restore takes between 1 and %d records, not %d", MaxRestoreMany, len(recs))
	}
	for i := range recs {
		r := &recs[i]
		if r.Item == nil {
			return Invalid("record %d (%s) has no item to restore", i, r.ID)
		}
		if err := r.Item.Validate(); err != nil {
			return Invalid("record %d (%s): %w", i, r.ID, err)
		}
		if fp := r.Item.Fingerprint(); fp != r.ID {
			return Invalid("record %d (%s) holds an item whose fingerprint is %s", i, r.ID, fp)
		}
		if _, ok := ParseStatus(string(r.Status)); !ok {
			return Invalid("record %d (%s) has status `%s`", i, r.ID, r.Status)
		}
		if r.CreatedAt.IsZero() || r.UpdatedAt.IsZero() {
			return Invalid("record %d (%s) has no created_at or updated_at", i, r.ID)
		}
	}
	return nil
}

// Whole is r with its listing fields (kind, text, meta, confidence) taken
// from its item, as an engine holds it: what a restore sends on the wire.
func (r Record) Whole() Record {
	if r.Item == nil {
		return r
	}
	w := RecordOf(r.ID, r.Item, r.Status, r.CreatedAt, r.UpdatedAt, r.ExpiresAt, r.SupersededBy)
	w.Item = r.Item
	return w
}

// Restore stores forgotten records again (those read with their item). An
// engine that offers Restorer gets them whole, in batches of MaxRestoreMany:
// same id, times, status, expiry and successor, so each is back in its place
// in every order, and the change feed says restore. Any other engine gets
// them through store_many with their status and expiry, in batches of
// MaxStoreMany per set of options (new times; also when a Restorer answers
// Unsupported, a server whose engine cannot), and the superseded ones are
// superseded again by their successors (a successor that is gone leaves its
// record active). It returns how many records were written.
func Restore(ctx context.Context, e Engine, records []Record) (int, error) {
	if r, ok := e.(Restorer); ok {
		n, err := restoreExact(ctx, r, records)
		// A server whose engine cannot restore whole records says so
		// before writing anything: those records are stored instead.
		if n > 0 || err == nil || !errors.Is(err, ErrUnsupported) {
			return n, err
		}
	}
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

func restoreExact(ctx context.Context, r Restorer, records []Record) (int, error) {
	whole := make([]Record, 0, len(records))
	for _, rec := range records {
		if rec.Item != nil {
			whole = append(whole, rec)
		}
	}
	n := 0
	for start := 0; start < len(whole); start += MaxRestoreMany {
		end := min(start+MaxRestoreMany, len(whole))
		rs, err := r.Restore(ctx, whole[start:end])
		if err != nil {
			return n, err
		}
		for _, x := range rs {
			if !x.Replayed {
				n++
			}
		}
	}
	return n, nil
}

// SnapshotForget reads, with their items, the records a forget of target
// would remove, so that Restore can put them back after it: the named ids
// that reach admits (nil: every namespace outside service sandboxes; a
// forget by ids removes an id anywhere, so name the sandbox the ids were
// read in), or every record the filter matches (a browse walk of the filter, every
// status and expired records included, as forget removes them). It stops
// after more than max records (max <= 0: no bound); the caller then knows
// the forget is too large to keep.
func SnapshotForget(ctx context.Context, e Engine, target ForgetTarget, reach *Reach, max int) ([]Record, error) {
	ids := target.IDs
	if target.Filter != nil {
		ids, reach = nil, target.Filter.Reach
		q := BrowseQuery{Filter: *target.Filter, Limit: BrowseMaxLimit}
		for {
			page, err := e.Browse(ctx, q)
			if err != nil {
				return nil, err
			}
			for _, r := range page.Records {
				ids = append(ids, r.ID)
			}
			if page.Continuation == nil || (max > 0 && len(ids) > max) {
				break
			}
			q.Cursor = *page.Continuation
		}
	}
	return GetRecordsInChunks(ctx, e, ids, reach)
}
