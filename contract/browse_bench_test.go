package contract

import (
	"fmt"
	"testing"
	"time"
)

// benchRecords is Dawn's browse-budget seed adapted to our records: kinds and
// statuses cycle, 500 namespaces, a rare needle every 9973 rows, confidence
// (i % 100)/100 on learnings, one second apart.
func benchRecords(n int) []Record {
	statuses := []Status{StatusCandidate, StatusActive, StatusSuperseded}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	out := make([]Record, n)
	for i := range out {
		at := base.Add(time.Duration(i) * time.Second)
		r := Record{ID: fmt.Sprintf("r%09d", i), Kind: ItemKinds()[i%3], Status: statuses[i%3],
			CreatedAt: at, UpdatedAt: at, Meta: MemoryMeta{Namespace: MustNamespace(fmt.Sprintf("project:ns%d", i%500))}}
		if i%9973 == 0 {
			r.Text = fmt.Sprintf("rare needle %d", i)
		} else {
			r.Text = fmt.Sprintf("common filler content %d", i)
		}
		if r.Kind == KindLearning {
			r.Confidence = Ptr(F32(float32(i%100) / 100))
		}
		out[i] = r
	}
	return out
}

func BenchmarkBrowseSlice(b *testing.B) {
	records := benchRecords(100_000)
	first, _ := BrowseSlice(BrowseQuery{Limit: 200}, records)
	shapes := []struct {
		name string
		q    BrowseQuery
	}{
		{"windowed-fetch", BrowseQuery{Limit: 200}},
		{"keyset-continuation", BrowseQuery{Limit: 200, Cursor: *first.Continuation}},
		{"filtered-count", BrowseQuery{Limit: 200, Status: []Status{StatusActive}}},
		{"head-refresh", BrowseQuery{Limit: 1000}},
		{"non-default-sort", BrowseQuery{Limit: 200, OrderBy: []SortKey{{"confidence", "desc"}}}},
		{"content-contains", BrowseQuery{Limit: 200, Filters: []BrowseFilter{{Field: "content", Op: "contains", Text: "rare needle 49865"}}}},
		{"namespace-within", BrowseQuery{Limit: 200, Filters: []BrowseFilter{{Field: "namespace", Op: "within", Text: "project:ns123"}}}},
		{"namespace-sort", BrowseQuery{Limit: 200, OrderBy: []SortKey{{"namespace", "asc"}}}},
		{"deep-offset", BrowseQuery{Limit: 200, Offset: 50_000}},
	}
	for _, s := range shapes {
		b.Run(s.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := BrowseSlice(s.q, records); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkFoldCase(b *testing.B) {
	for _, s := range []string{"common filler content 12345", "Élan vital — ЖУРНАЛ записей"} {
		b.Run(fmt.Sprint(len(s)), func(b *testing.B) {
			for b.Loop() {
				_ = FoldCase(s)
			}
		})
	}
}
