package contract

import "context"

// GetInChunks reads the listing hits of ids under reach (nil: the contract's
// no reach), MaxGetIDs at a time since a get takes at most that many; the
// hits come in the order of the ids, absent ids left out.
func GetInChunks(ctx context.Context, e Engine, ids []string, reach *Reach) ([]Hit, error) {
	return inChunks(ids, func(chunk []string) ([]Hit, error) {
		return e.Get(ctx, GetRequest{IDs: chunk, Reach: reach})
	})
}

// GetRecordsInChunks is GetInChunks for whole records (stored item included).
func GetRecordsInChunks(ctx context.Context, e Engine, ids []string, reach *Reach) ([]Record, error) {
	return inChunks(ids, func(chunk []string) ([]Record, error) {
		return e.GetRecords(ctx, GetRequest{IDs: chunk, Reach: reach})
	})
}

func inChunks[T any](ids []string, read func(chunk []string) ([]T, error)) ([]T, error) {
	var out []T
	for start := 0; start < len(ids); start += MaxGetIDs {
		got, err := read(ids[start:min(start+MaxGetIDs, len(ids))])
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}
