package contract

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// randomRecords draws records (ids unique, as fingerprints are) whose sort fields collide often, so ties, nulls
// and the id tie-break are all exercised.
func randomRecords(rng *rand.Rand, n int) []Record {
	namespaces := []string{"root", "team:a", "team:a/agent:x", "team:ab", "agent:z"}
	statuses := []Status{StatusActive, StatusCandidate, StatusSuperseded}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	out := make([]Record, n)
	for i := range out {
		r := rec(fmt.Sprintf("%c%d-%d", 'A'+rng.IntN(40), rng.IntN(1000), i),
			withNS(namespaces[rng.IntN(len(namespaces))]), withStatus(statuses[rng.IntN(3)]),
			func(r *Record) {
				r.UpdatedAt = base.Add(time.Duration(rng.IntN(5)) * 24 * time.Hour).Add(time.Duration(rng.IntN(3)) * time.Microsecond)
				r.CreatedAt = base.Add(time.Duration(rng.IntN(5)) * time.Hour)
				r.Text = []string{"Tabs", "spaces", "ÉLAN tabs", "журнал"}[rng.IntN(4)]
			})
		switch rng.IntN(3) {
		case 0:
			learning(float32(rng.IntN(4)) / 4)(&r)
		case 1:
			r.Kind = KindConversation
		}
		if rng.IntN(2) == 0 {
			observed(fmt.Sprintf("2025-0%d-01T00:00:00Z", 1+rng.IntN(3)))(&r)
		}
		if rng.IntN(4) == 0 {
			expires(fmt.Sprintf("2026-01-0%dT00:00:00Z", 1+rng.IntN(5)))(&r)
		}
		out[i] = r
	}
	return out
}

func randomQuery(rng *rand.Rand) BrowseQuery {
	var q BrowseQuery
	fields := BrowseSortFields()
	rng.Shuffle(len(fields), func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
	for _, f := range fields[:rng.IntN(4)] {
		q.OrderBy = append(q.OrderBy, SortKey{f, []string{"asc", "desc"}[rng.IntN(2)]})
	}
	candidates := []BrowseFilter{
		{Field: "status", Op: "not_in", Values: []string{"superseded"}},
		{Field: "content", Op: "contains", Text: "TABS"},
		{Field: "namespace", Op: "within", Text: "team:a"},
		{Field: "confidence", Op: "gte", Num: 0.5},
		{Field: "observed_at", Op: "before_day", Day: "2025-03-01"},
		{Field: "updated_at", Op: "between_days", FromDay: "2026-01-02", UntilDay: "2026-01-03"},
	}
	for _, f := range candidates {
		if rng.IntN(4) == 0 {
			q.Filters = append(q.Filters, f)
		}
	}
	if rng.IntN(3) == 0 {
		q.Now = Ptr(time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC))
	}
	q.Limit = 1 + rng.IntN(30)
	if rng.IntN(3) == 0 {
		q.Offset = rng.IntN(40)
	}
	return q
}

func naiveBrowse(q BrowseQuery, records []Record) ([]string, int) {
	var matched []*Record
	for i := range records {
		if q.Matches(&records[i]) {
			matched = append(matched, &records[i])
		}
	}
	slices.SortFunc(matched, func(a, b *Record) int { return CompareRecords(q.Order(), a, b) })
	var out []string
	for _, r := range matched {
		out = append(out, r.ID)
	}
	return out, len(matched)
}

func TestBrowseSliceAgreesWithNaiveOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for round := range 300 {
		records := randomRecords(rng, 20+rng.IntN(120))
		q := randomQuery(rng)
		all, total := naiveBrowse(q, records)
		page, err := BrowseSlice(q, records)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		start := min(q.Offset, len(all))
		want := all[start:min(start+q.EffectiveLimit(), len(all))]
		if !slices.Equal(ids(page.Records), want) || page.Total != total {
			t.Fatalf("round %d query %s\n got %v (total %d)\nwant %v (total %d)", round, mustJSON(q), ids(page.Records), page.Total, want, total)
		}
		// A walk from the first page (no offset) visits the whole set once, in order.
		q.Offset = 0
		seen, totals, _ := walk(t, q, records)
		if !slices.Equal(seen, all) && !(len(seen) == 0 && len(all) == 0) {
			t.Fatalf("round %d query %s walk\n got %v\nwant %v", round, mustJSON(q), seen, all)
		}
		for _, tot := range totals {
			if tot != total {
				t.Fatalf("round %d: total %d on a page, want %d", round, tot, total)
			}
		}
	}
}

func mustJSON(q BrowseQuery) string {
	b, _ := q.MarshalJSON()
	return string(b)
}
