package bolt_test

import (
	"context"
	"testing"

	"mnemo/contract"
	"mnemo/engine/curate"
)

// BenchmarkClustersScope times `mnemo clusters` on the shared bench store:
// read a scope of about a tenth of the store (the bench corpus's workspace
// whose count is closest to it) with browse to the end, then cluster it. Run it with
// MNEMO_BENCH_RECORDS=100000 for the 10k scope of docs/curation.md.
func BenchmarkClustersScope(b *testing.B) {
	s := sharedStore(b)
	ctx := context.Background()
	want, best, size := s.records/10, "", 0
	for _, ws := range []string{"platform", "support", "docs", "research", "personal", "data"} {
		page, err := s.e.Browse(ctx, contract.BrowseQuery{Filter: contract.MetaFilter{Workspace: &ws}, Limit: 1})
		if err != nil {
			b.Fatal(err)
		}
		if best == "" || abs(page.Total-want) < abs(size-want) {
			best, size = ws, page.Total
		}
	}
	if best == "" {
		b.Fatal("the bench store has no workspaces")
	}
	filter := contract.MetaFilter{Workspace: &best}
	var records, clusters int
	timed(b, func(int) error {
		rs, err := curate.Scope(ctx, s.e, filter)
		if err != nil {
			return err
		}
		records, clusters = len(rs), len(curate.Find(rs, curate.DefaultConfig()))
		return nil
	})
	b.ReportMetric(float64(records), "scope-records")
	b.ReportMetric(float64(clusters), "clusters")
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
