package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"mnemo/contract"
	"mnemo/server/audit"
)

// Dump is a store as text, for comparing two stores field by field: one line
// per record the reaches admit (every record outside service sandboxes when
// none is given; name a sandbox's reach to include it), whole with its item,
// in id order, then one line per audit event when the engine keeps a log.
func Dump(ctx context.Context, e contract.Engine, reaches ...contract.Reach) (string, error) {
	if len(reaches) == 0 {
		reaches = []contract.Reach{contract.ReachSubtree(contract.Root())}
	}
	byID := map[string]string{}
	for _, reach := range reaches {
		ids, err := undoIDs(ctx, e, contract.MetaFilter{Reach: &reach})
		if err != nil {
			return "", err
		}
		recs, err := contract.GetRecordsInChunks(ctx, e, ids, &reach)
		if err != nil {
			return "", err
		}
		for _, r := range recs {
			j, err := json.Marshal(r)
			if err != nil {
				return "", err
			}
			byID[r.ID] = string(j)
		}
	}
	ids := make([]string, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var b strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&b, "record %s\n", byID[id])
	}
	if r, ok := e.(audit.Reader); ok {
		evs, err := r.ReadAudit(ctx, audit.Query{})
		if err != nil {
			return "", err
		}
		for _, ev := range evs {
			j, _ := json.Marshal(ev)
			fmt.Fprintf(&b, "audit %s\n", j)
		}
	}
	return b.String(), nil
}

// FirstDiff names the first line where two dumps differ ("" when equal).
func FirstDiff(a, b string) string {
	if a == b {
		return ""
	}
	return firstDiff(a, b)
}
