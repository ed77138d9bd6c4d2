package bench

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"mnemo/bench/corpus"
	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/memory"
	"mnemo/engine/retrieval"
)

func TestRunOnReferenceEngine(t *testing.T) {
	const records = 2_500
	e := memory.New()
	var progress bytes.Buffer
	tab, err := Run(context.Background(), e, Options{Records: records, Seed: 3, Iterations: 3, Out: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Len(); got != records {
		t.Fatalf("engine holds %d records after the load, want %d", got, records)
	}
	if tab.Import.Stored != records || tab.Import.Replayed != 0 {
		t.Fatalf("import stored %d and replayed %d, want %d and 0", tab.Import.Stored, tab.Import.Replayed, records)
	}
	if tab.Import.Batches < records/BatchSize {
		t.Fatalf("%d batches for %d records", tab.Import.Batches, records)
	}
	// Browse without a reach leaves the service sandbox out.
	wantSuperseded, visibleSuperseded, visibleNeedles := 0, 0, 0
	corpus.Each(records, 3, func(i int, en corpus.Entry) bool {
		visible := contract.AdmittedBy(nil, en.Item.Meta.Namespace)
		if en.Status == contract.StatusSuperseded {
			wantSuperseded++
			if visible {
				visibleSuperseded++
			}
		}
		if visible && corpus.IsNeedle(i) {
			visibleNeedles++
		}
		return true
	})
	if wantSuperseded == 0 || tab.Import.Superseded != wantSuperseded {
		t.Fatalf("superseded %d, corpus has %d", tab.Import.Superseded, wantSuperseded)
	}
	sup, err := e.Browse(context.Background(), contract.BrowseQuery{Limit: 1, Status: []contract.Status{contract.StatusSuperseded}})
	if err != nil || sup.Total != visibleSuperseded {
		t.Fatalf("engine reports %d superseded (err %v), want %d", sup.Total, err, visibleSuperseded)
	}

	// browse shapes, root facets, two narrows, clusters and their upkeep, fetch in three modes and
	// keyword under two filters, recall
	wantRows := 6 + len(contract.Facets()) + 1 + 2 + 3 + 2 + 1
	if len(tab.Rows) != wantRows {
		t.Fatalf("%d rows, want %d", len(tab.Rows), wantRows)
	}
	unbudgeted := map[string]bool{"recall top 5 (reference)": true,
		"keyword fetch top 10 in a folder": true, "keyword fetch top 10 at a commit": true}
	for _, r := range tab.Rows {
		if r.Samples != 3 {
			t.Errorf("%s: %d samples, want 3", r.Name, r.Samples)
		}
		if r.P50 <= 0 || r.P95 < r.P50 {
			t.Errorf("%s: p50 %s p95 %s", r.Name, r.P50, r.P95)
		}
		if strings.HasPrefix(r.Note, wrongAnswer) {
			t.Errorf("%s: the reference engine answered wrongly: %s", r.Name, r.Note)
		}
		if r.Budget.None() != unbudgeted[r.Name] {
			t.Errorf("%s: budget %q, docs/spec/design.md §8 sets one only for keyword fetch among ranked reads", r.Name, r.Budget)
		}
	}
	needle := tab.Rows[4]
	if needle.Peer != PeerContains || !strings.HasSuffix(needle.Note, fmt.Sprintf("total %d", visibleNeedles)) || visibleNeedles != 1 {
		t.Errorf("needle row %q answered %q, want total %d (1)", needle.Name, needle.Note, visibleNeedles)
	}

	md := tab.Markdown()
	t.Log(md)
	for _, want := range []string{"| browse 200, default order, exact total | 3 |", "explore at the root: status", "keyword fetch top 10", "| vector fetch top 10 | 3 |", "| hybrid fetch top 10 | 3 |", "| recall top 5 (reference) | 3 |", "| — | answer ok |", "store_many import, end to end", "records superseded"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if !strings.Contains(progress.String(), "round 3/3 done") {
		t.Errorf("progress output: %q", progress.String())
	}
}

// wrongEngine answers browse with a total that counts only the page, the
// fault the conformance suite also plants; the bench must flag it.
type wrongEngine struct{ *memory.Engine }

func (w wrongEngine) Browse(ctx context.Context, q contract.BrowseQuery) (contract.BrowsePage, error) {
	p, err := w.Engine.Browse(ctx, q)
	p.Total = len(p.Records)
	return p, err
}

func TestRunFlagsWrongAnswers(t *testing.T) {
	tab, err := Run(context.Background(), wrongEngine{memory.New()}, Options{Records: 600, Iterations: 1})
	if err != nil {
		t.Fatal(err)
	}
	if tab.Passed() {
		t.Fatal("a run with wrong totals passed")
	}
	if r := tab.Rows[0]; r.Pass || !strings.HasPrefix(r.Note, wrongAnswer) {
		t.Fatalf("default browse row: pass=%v note=%q", r.Pass, r.Note)
	}
}

func TestRunRefusesAUsedStore(t *testing.T) {
	e := memory.New()
	if _, err := contract.Store(context.Background(), e, contract.Document("already here", contract.MemoryMeta{})); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), e, Options{Records: 100}); err == nil || !strings.Contains(err.Error(), "empty store") {
		t.Fatalf("Run on a used store: %v", err)
	}
}

func TestRunStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, memory.New(), Options{Records: 1000}); err == nil {
		t.Fatal("a cancelled run succeeded")
	}
}

func TestPercentileIsNearestRank(t *testing.T) {
	var s []time.Duration
	for i := 20; i >= 1; i-- {
		s = append(s, time.Duration(i)*time.Millisecond)
	}
	if p := percentile(s, 50); p != 10*time.Millisecond {
		t.Errorf("p50 of 1..20 ms = %s, want the 10th", p)
	}
	if p := percentile(s, 95); p != 19*time.Millisecond {
		t.Errorf("p95 of 1..20 ms = %s, want the 19th", p)
	}
	if p := percentile(s[:1], 95); p != 20*time.Millisecond {
		t.Errorf("p95 of one sample = %s", p)
	}
}

func TestBudgetScale(t *testing.T) {
	for _, tc := range []struct {
		records int
		want    time.Duration
	}{{1_000, msd(2)}, {100_000, msd(2)}, {100_001, msd(5)}, {1_000_000, msd(5)}} {
		if got := budgetWindowed.at(scaleOf(tc.records)).P95; got != tc.want {
			t.Errorf("%d records: windowed budget %s, want %s", tc.records, got, tc.want)
		}
	}
	if peerP95(PeerContains, 100_000) != msd(51) || peerP95(PeerContains, 50_000) != 0 {
		t.Error("peer p95 is only known at 100k and 1M")
	}
}

// TestRunOnBoltStore runs the whole bench on the product engine with a small
// corpus: every row must answer what the corpus says (timings are not judged).
func TestRunOnBoltStore(t *testing.T) {
	if testing.Short() {
		t.Skip("opens a real store")
	}
	e, err := bolt.Open(t.TempDir(), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	}()
	tab, err := Run(context.Background(), e, Options{Records: 1_200, Seed: 5, Iterations: 2})
	if err != nil {
		t.Fatal(err)
	}
	if tab.Import.Stored != 1_200 || tab.Import.Superseded == 0 {
		t.Fatalf("import: %+v", tab.Import)
	}
	for _, r := range tab.Rows {
		if strings.HasPrefix(r.Note, wrongAnswer) {
			t.Errorf("%s: %s", r.Name, r.Note)
		}
	}
	// The store declares every fetch mode and answers recall extractively.
	for _, name := range []string{"keyword fetch top 10", "vector fetch top 10", "hybrid fetch top 10", "recall top 5 (" + retrieval.ExtractiveModelID + ")"} {
		if r := rowNamed(t, tab, name); r.Name != name || r.Samples != 2 {
			t.Errorf("row %q: %+v", name, r)
		}
	}
	t.Log(tab.Markdown())
}
