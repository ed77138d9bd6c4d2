package bench

import (
	"fmt"
	"strings"
	"time"
)

// Budget is a row's limit: P95 always, P50 for rows that have one. Zero means
// no limit.
type Budget struct {
	P50, P95 time.Duration
}

func (b Budget) admits(p50, p95 time.Duration) bool {
	return (b.P50 == 0 || p50 <= b.P50) && (b.P95 == 0 || p95 <= b.P95)
}

// String is the budget as docs/spec/design.md writes it.
func (b Budget) String() string {
	var parts []string
	if b.P50 > 0 {
		parts = append(parts, "p50 <= "+ms(b.P50))
	}
	if b.P95 > 0 {
		parts = append(parts, "p95 <= "+ms(b.P95))
	}
	if len(parts) == 0 {
		return NoBudget
	}
	return strings.Join(parts, ", ")
}

// NoBudget is the budget column of a row docs/spec/design.md §8 sets no limit for
// (vector and hybrid fetch, recall): such a row passes on its answer alone.
const NoBudget = "—"

// None tells whether the budget sets no limit.
func (b Budget) None() bool { return b.P50 == 0 && b.P95 == 0 }

// budgets are a row's limits at the two sizes docs/spec/design.md §8 names.
type budgets struct{ at100k, at1M Budget }

// Scale picks the column: a corpus up to 100k records is held to the 100k
// budget, anything larger to the 1M budget.
type Scale int

// The two budget columns of docs/spec/design.md §8.
const (
	Scale100k Scale = iota
	Scale1M
)

func scaleOf(records int) Scale {
	if records <= 100_000 {
		return Scale100k
	}
	return Scale1M
}

func (s Scale) String() string {
	if s == Scale1M {
		return "1M"
	}
	return "100k"
}

func (b budgets) at(s Scale) Budget {
	if s == Scale1M {
		return b.at1M
	}
	return b.at100k
}

func msd(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }

// The budgets of docs/spec/design.md §8.
var (
	budgetWindowed      = budgets{Budget{P95: msd(2)}, Budget{P95: msd(5)}}
	budgetFiltered      = budgets{Budget{P95: msd(5)}, Budget{P95: msd(20)}}
	budgetHead          = budgets{Budget{P95: msd(5)}, Budget{P95: msd(10)}}
	budgetSort          = budgets{Budget{P95: msd(10)}, Budget{P95: msd(50)}}
	budgetContains      = budgets{Budget{P95: msd(10)}, Budget{P95: msd(50)}}
	budgetPage2         = budgets{Budget{P95: msd(2)}, Budget{P95: msd(5)}}
	budgetExploreRoot   = budgets{Budget{P95: msd(5)}, Budget{P95: msd(10)}}
	budgetExploreNarrow = budgets{Budget{P95: msd(25)}, Budget{P95: msd(100)}}
	budgetKeyword       = budgets{Budget{P50: msd(2), P95: msd(10)}, Budget{P95: msd(20)}}
	budgetVector        = budgets{Budget{P95: msd(25)}, Budget{P95: msd(100)}} // vector or hybrid fetch top 10
	// budgetClusters is issue 26's: the clusters of a 10k scope in 2 s at 1M
	// records (held at 100k too, where the scope is about 10k as well).
	budgetClusters = budgets{Budget{P95: msd(2000)}, Budget{P95: msd(2000)}}
	// budgetUpkeep: a change reaches a live TUI within about 50 ms; keeping
	// its clusters up to date takes a fifth of that at most.
	budgetUpkeep = budgets{Budget{P95: msd(10)}, Budget{P95: msd(10)}}
)

// importBudget is the store_many import floor in records per second, at
// both sizes: docs/spec/design.md §8's import row, and for engine/postgres
// (whose descriptor id is postgres.EngineID) the floor §8 gives it.
func importBudget(engine string) float64 {
	if engine == "postgres" {
		return 5000
	}
	return 20000
}

// peerP95 is the SQLite peer's best p95 recorded in docs/spec/design.md §8 for a shape,
// at exactly 100k or 1M records; 0 when there is none.
func peerP95(peer string, records int) time.Duration {
	table := map[int]map[string]float64{
		100_000:   {PeerWindowed: 2.0, PeerFiltered: 6.5, PeerHead: 4.6, PeerSort: 13.3, PeerContains: 51, PeerKeysetTwo: 1.9},
		1_000_000: {PeerWindowed: 7.4, PeerFiltered: 61, PeerHead: 12.3, PeerSort: 105, PeerContains: 477, PeerKeysetTwo: 9.1},
	}
	return msd(table[records][peer])
}

// Import is how the load went.
type Import struct {
	Stored, Replayed, Batches int
	Elapsed                   time.Duration
	// PerSecond counts every record handed to store_many over the wall time of
	// the whole load (corpus generation included, as a file import would parse).
	PerSecond        float64
	Superseded       int
	SupersedeElapsed time.Duration
	// IndexCatchUp is how long the search index took to catch up after a
	// bulk load that deferred it (0 when the engine does not defer).
	IndexCatchUp time.Duration
	// KeysPut is how long the end of the load took (engine/bolt puts the
	// ordered keys a bulk load deferred), counted in Elapsed.
	KeysPut time.Duration
	Budget  float64
	Pass    bool
}

// Row is one timed operation.
type Row struct {
	Name string
	// Peer is the peer bench's shape id, for browse rows.
	Peer     string
	Samples  int
	P50, P95 time.Duration
	Budget   Budget
	Pass     bool
	// PeerP95 is the peer's p95 from docs/spec/design.md §8 at this size, 0 when unknown.
	PeerP95 time.Duration
	// Note describes the last answer; it starts with "WRONG: " when the answer
	// did not match the corpus.
	Note string
}

// Table is the result of a run.
type Table struct {
	Engine     string
	Records    int
	Seed       int64
	Iterations int
	GoVersion  string
	GOMAXPROCS int
	Started    time.Time
	// LoadAvg and LoadAvgEnd are the 1-minute load average at start and end.
	LoadAvg, LoadAvgEnd string
	Import              Import
	Rows                []Row
	// Reused: the rows were timed on an existing store (no import).
	Reused bool
	// Processes are the rows measured on new mnemo processes.
	Processes []ProcessRow
}

// Passed tells whether the import and every row met their budgets.
func (t Table) Passed() bool {
	if !t.Import.Pass && !t.Reused {
		return false
	}
	for _, r := range t.Rows {
		if !r.Pass {
			return false
		}
	}
	for _, r := range t.Processes {
		if !r.Pass {
			return false
		}
	}
	return true
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond)) }

// msSigned is d in milliseconds with its sign, as a difference is written.
func msSigned(d time.Duration) string {
	return fmt.Sprintf("%+.3f", float64(d)/float64(time.Millisecond))
}

func msNum(d time.Duration) string { return fmt.Sprintf("%.3f", float64(d)/float64(time.Millisecond)) }

// result is the row's result column: a row without a budget is judged on its
// answer only, and says so.
func (r Row) result() string {
	if r.Budget.None() && r.Pass {
		return "answer ok"
	}
	return passWord(r.Pass)
}

func passWord(ok bool) string {
	if ok {
		return "pass"
	}
	return "FAIL"
}

// Markdown renders the table for the README.
func (t Table) Markdown() string {
	var b strings.Builder
	scale := scaleOf(t.Records)
	fmt.Fprintf(&b, "engine `%s`, %d records (seed %d), %d rounds after one warm-up call per row; %s, GOMAXPROCS %d",
		t.Engine, t.Records, t.Seed, t.Iterations, t.GoVersion, t.GOMAXPROCS)
	if t.LoadAvg != "" {
		fmt.Fprintf(&b, "; load average %s at start, %s at end", t.LoadAvg, t.LoadAvgEnd)
	}
	fmt.Fprintf(&b, "; budgets of the %s column of docs/spec/design.md §8.\n\n", scale)
	fmt.Fprintf(&b, "| operation | samples | p50 ms | p95 ms | budget | result | SQLite peer p95 ms | peer / mnemo | answer |\n")
	fmt.Fprintf(&b, "|---|---:|---:|---:|---|---|---:|---:|---|\n")
	unbudgeted := false
	for _, r := range t.Rows {
		unbudgeted = unbudgeted || r.Budget.None()
		peer, ratio := "", ""
		if r.PeerP95 > 0 && r.P95 > 0 {
			peer = msNum(r.PeerP95)
			ratio = fmt.Sprintf("%.1fx", float64(r.PeerP95)/float64(r.P95))
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n",
			r.Name, r.Samples, msNum(r.P50), msNum(r.P95), r.Budget, r.result(), peer, ratio, strings.ReplaceAll(r.Note, "|", "\\|"))
	}
	im := t.Import
	if t.Reused {
		return b.String()
	}
	fmt.Fprintf(&b, "| store_many import, end to end | %d batches | | | >= %.0f records/s | %s | | | %d stored, %d replayed in %s = %.0f records/s |\n",
		im.Batches, im.Budget, passWord(im.Pass), im.Stored, im.Replayed, im.Elapsed.Round(time.Millisecond), im.PerSecond)
	if unbudgeted {
		fmt.Fprintf(&b, "\nRows with budget %s have none in docs/spec/design.md §8 and pass on their answer alone; keyword fetch's budget (%s here) is the yardstick to read them by.\n",
			NoBudget, budgetKeyword.at(scale))
	}
	if im.KeysPut >= time.Millisecond {
		fmt.Fprintf(&b, "\nThe load's end (its deferred ordered keys put) took %s, counted in the load's time.\n", im.KeysPut.Round(time.Millisecond))
	}
	if im.IndexCatchUp > 0 {
		fmt.Fprintf(&b, "\nThe load deferred the search index (a bulk load); it caught up %s after the load ended, before the rows were timed.\n",
			im.IndexCatchUp.Round(time.Millisecond))
	}
	if im.Superseded > 0 {
		fmt.Fprintf(&b, "\n%d records superseded after the load in %s.\n", im.Superseded, im.SupersedeElapsed.Round(time.Millisecond))
	}
	return b.String()
}

// ProcessMarkdown renders the rows measured on new processes.
func (t Table) ProcessMarkdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "New processes on the closed store (%d runs each):\n\n", processAttempts)
	fmt.Fprintf(&b, "| operation | samples | p50 ms | p95 ms | budget | result | note |\n|---|---:|---:|---:|---|---|---|\n")
	for _, r := range t.Processes {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s |\n",
			r.Name, r.Samples, r.p50(), r.p95(), r.budget(), passWord(r.Pass), strings.ReplaceAll(r.Note, "|", "\\|"))
	}
	return b.String()
}
