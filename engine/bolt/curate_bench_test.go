package bolt_test

import (
	"context"
	"testing"

	"mnemo/engine/curate"
)

// BenchmarkClustersScope times `mnemo clusters` on the shared bench store:
// read a scope of about 10k records (the most recently observed,
// curate.RecentScope) with browse to the end, then cluster it. Run it with
// MNEMO_BENCH_RECORDS=100000 (or 1000000) for docs/curation.md.
func BenchmarkClustersScope(b *testing.B) {
	s := sharedStore(b)
	ctx := context.Background()
	filter, err := curate.RecentScope(ctx, s.e, 10_000)
	if err != nil {
		b.Fatal(err)
	}
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
