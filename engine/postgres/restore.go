package postgres

import (
	"context"
	"encoding/json"

	"mnemo/contract"
)

// MaxRestore is the largest batch Restore takes.
const MaxRestore = contract.MaxRestoreMany

// Restore writes whole records as they are, system fields included (status,
// created and updated times, expiry, successor), for moving a store here
// from another engine and for an exact undo of a forget (contract.Restorer);
// the feed logs each record written as a restore. Each record's item must be set and its id must be the
// item's fingerprint. A held id is left as it was and its receipt says
// replayed, so an interrupted copy is resumed by running it again.
func (e *Engine) Restore(ctx context.Context, recs []contract.Record) ([]contract.StoreReceipt, error) {
	if err := contract.ValidateRestore(recs); err != nil {
		return nil, err
	}
	out := make([]contract.StoreReceipt, len(recs))
	first := map[string]int{}
	var rows []*row
	for i := range recs {
		r := &recs[i]
		if r.Item == nil {
			return nil, contract.Invalid("record %s has no item to restore", r.ID)
		}
		if err := r.Item.Validate(); err != nil {
			return nil, err
		}
		if fp := r.Item.Fingerprint(); fp != r.ID {
			return nil, contract.Invalid("record %s holds an item whose fingerprint is %s", r.ID, fp)
		}
		out[i].ID = r.ID
		if _, dup := first[r.ID]; dup {
			out[i].Replayed = true
			continue
		}
		first[r.ID] = i
		status := r.Status
		if _, ok := contract.ParseStatus(string(status)); !ok {
			return nil, contract.Invalid("record %s has status `%s`", r.ID, status)
		}
		js, err := json.Marshal(*r.Item)
		if err != nil {
			return nil, contract.EngineErr("encode item %s: %w", r.ID, err)
		}
		w := &row{id: r.ID, item: *r.Item, itemJSON: string(js), status: status,
			created: r.CreatedAt.UnixMilli(), updated: r.UpdatedAt.UnixMilli(), superBy: r.SupersededBy}
		if r.ExpiresAt != nil {
			ms := r.ExpiresAt.UnixMilli()
			w.expires = &ms
		}
		rows = append(rows, w)
	}
	inserted, err := e.insertRows(ctx, rows, contract.OpRestore)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if !inserted[r.id] {
			out[first[r.id]].Replayed = true
		}
	}
	return out, nil
}
