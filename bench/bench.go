// Package bench is the runner behind `mnemo bench`: it loads the generated
// corpus (bench/corpus) into any contract.Engine through store_many batches,
// then times the operations of docs/spec/design.md §8 (the browse shapes the SQLite peer
// in ../peerbench/dawn-sqlite also runs, explore at the root and after two
// narrows, fetch top 10 in each mode the engine declares, recall top 5) and
// reports median and p95 per row against the budget (rows §8 sets none for pass
// on their answer alone).
//
// Sampling follows the peer: each shape is called once to warm up, then
// Iterations rounds call every shape once, round-robin, and percentiles are
// nearest-rank (p50 is the 10th and p95 the 19th of 20 samples).
package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"mnemo/bench/corpus"
	"mnemo/contract"
)

// Options configure a run.
type Options struct {
	// Records is how many corpus entries to load (default 10,000).
	Records int
	// Seed picks the corpus (default 1).
	Seed int64
	// Iterations is the number of measured rounds (default 20, like the peer).
	Iterations int
	// Out receives progress lines; nil is silent.
	Out io.Writer
}

func (o Options) withDefaults() Options {
	if o.Records <= 0 {
		o.Records = 10_000
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Iterations <= 0 {
		o.Iterations = 20
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	return o
}

// BatchSize is the store_many batch the load uses on an engine without
// StoreBulk (the contract's maximum).
const BatchSize = contract.MaxStoreMany

// Run loads the corpus into e and times every row. The engine must be empty:
// each row's answer is checked against what the corpus says it must be.
func Run(ctx context.Context, e contract.Engine, opts Options) (Table, error) {
	opts = opts.withDefaults()
	t := Table{
		Engine: e.Descriptor().ID, Records: opts.Records, Seed: opts.Seed, Iterations: opts.Iterations,
		GoVersion: runtime.Version(), GOMAXPROCS: runtime.GOMAXPROCS(0), Started: time.Now().UTC(),
	}
	t.LoadAvg = loadAvg()
	before, err := e.Browse(ctx, contract.BrowseQuery{Limit: 1})
	if err != nil {
		return t, fmt.Errorf("counting existing records: %w", err)
	}
	if before.Total > 0 {
		// The answer checks need to know every record; a used store would also
		// time a different corpus than the one reported.
		return t, fmt.Errorf("bench needs an empty store, this one holds %d records", before.Total)
	}
	exp, err := load(ctx, e, opts, &t.Import)
	if err != nil {
		return t, err
	}
	fmt.Fprintf(opts.Out, "loaded %d records in %s (%.0f records/s), %d superseded\n",
		t.Import.Stored+t.Import.Replayed, t.Import.Elapsed.Round(time.Millisecond), t.Import.PerSecond, t.Import.Superseded)

	t.Import.Budget = importBudget(t.Engine)
	t.Import.Pass = t.Import.PerSecond >= t.Import.Budget

	return measure(ctx, e, opts, exp, t, true)
}

// RunExisting times the rows on a store an earlier Run loaded with the same
// Records and Seed, from this process (a new process's view: its own open,
// caches and memory). With browseOnly the fetch and recall rows are left
// out, so the run is what a browsing process does.
func RunExisting(ctx context.Context, e contract.Engine, opts Options, browseOnly bool) (Table, error) {
	opts = opts.withDefaults()
	t := Table{
		Engine: e.Descriptor().ID, Records: opts.Records, Seed: opts.Seed, Iterations: opts.Iterations,
		GoVersion: runtime.Version(), GOMAXPROCS: runtime.GOMAXPROCS(0), Started: time.Now().UTC(), Reused: true,
	}
	t.LoadAvg = loadAvg()
	var exp expected
	corpus.Each(opts.Records, opts.Seed, func(i int, en corpus.Entry) bool {
		exp.count(i, en)
		return true
	})
	// Rows are timed on the store as a running process has it: the table
	// and the content index loaded (vectors load on the first vector row).
	if w, ok := e.(interface{ WaitIndex(context.Context) error }); ok {
		if err := w.WaitIndex(ctx); err != nil {
			return t, err
		}
	}
	return measure(ctx, e, opts, exp, t, !browseOnly)
}

// measure warms and times the shapes round-robin: browse and explore, and
// with withRetrieval the fetch and recall rows.
func measure(ctx context.Context, e contract.Engine, opts Options, exp expected, t Table, withRetrieval bool) (Table, error) {
	scale := scaleOf(opts.Records)
	shapes, err := buildShapes(ctx, e, opts, exp, withRetrieval)
	if err != nil {
		return t, err
	}
	samples := make([][]time.Duration, len(shapes))
	notes := make([]string, len(shapes))
	var together, apart []int
	for i, s := range shapes {
		if s.apart {
			apart = append(apart, i)
		} else {
			together = append(together, i)
		}
	}
	// Warm every shape once, then measure round-robin like the peer; the
	// shapes that hold much memory (a clustering's records) run apart,
	// after the others, each on its own and let go of before the next, so
	// their heap is never the one the other rows are timed in.
	if err := measureRounds(ctx, opts, shapes, together, samples, notes); err != nil {
		return t, err
	}
	for _, i := range apart {
		if err := measureRounds(ctx, opts, shapes, []int{i}, samples, notes); err != nil {
			return t, err
		}
		if shapes[i].release != nil {
			shapes[i].release()
		}
		runtime.GC()
	}
	for i, s := range shapes {
		row := Row{Name: s.name, Peer: s.peer, Samples: len(samples[i]), Note: notes[i]}
		row.P50, row.P95 = percentile(samples[i], 50), percentile(samples[i], 95)
		row.Budget = s.budget.at(scale)
		row.Pass = row.Budget.admits(row.P50, row.P95) && !strings.HasPrefix(notes[i], wrongAnswer)
		row.PeerP95 = peerP95(s.peer, opts.Records)
		t.Rows = append(t.Rows, row)
	}
	t.LoadAvgEnd = loadAvg()
	return t, nil
}

// measureRounds warms the shapes at idx once (the warm-up's answer counts
// too), then times opts.Iterations rounds of them, round-robin.
func measureRounds(ctx context.Context, opts Options, shapes []shape, idx []int, samples [][]time.Duration, notes []string) error {
	for _, i := range idx {
		s := shapes[i]
		note, err := s.run(ctx, -1)
		if err == nil {
			note, err = s.judge(ctx, note)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		notes[i] = note
	}
	for round := 0; round < opts.Iterations; round++ {
		for _, i := range idx {
			s := shapes[i]
			if err := ctx.Err(); err != nil {
				return err
			}
			start := time.Now()
			note, err := s.run(ctx, round)
			d := time.Since(start)
			if err == nil {
				note, err = s.judge(ctx, note)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			samples[i] = append(samples[i], d)
			// A wrong answer in any round stays on the row.
			if !strings.HasPrefix(notes[i], wrongAnswer) {
				notes[i] = note
			}
		}
		if len(idx) > 1 {
			fmt.Fprintf(opts.Out, "round %d/%d done\n", round+1, opts.Iterations)
		}
	}
	if len(idx) == 1 {
		fmt.Fprintf(opts.Out, "%s: %d rounds done\n", shapes[idx[0]].name, opts.Iterations)
	}
	return nil
}

// expected holds what a correct engine must answer for the loaded corpus. A
// query without a reach sees everything but service sandboxes, so the browse
// and explore counts are of the records outside them.
type expected struct {
	total, visible, active, needles int
}

// count adds corpus entry i to what the answers must say.
func (exp *expected) count(i int, en corpus.Entry) {
	exp.total++
	if contract.AdmittedBy(nil, en.Item.Meta.Namespace) {
		exp.visible++
		if en.Status == contract.StatusActive {
			exp.active++
		}
		if corpus.IsNeedle(i) {
			exp.needles++
		}
	}
}

// load stores the corpus as `mnemo import` would: through StoreBulk, up to
// the engine's BulkItems a transaction, when the engine has it, through
// StoreManyWith in batches of 100 otherwise. Statuses and expiry are batch
// options, so entries wait in one bucket per (status, expiry), each flushed
// when full; superseded entries are stored active and superseded at the end.
func load(ctx context.Context, e contract.Engine, opts Options, res *Import) (expected, error) {
	var exp expected
	type pending struct {
		items []contract.StoreItem
		index []int
		opts  contract.WriteOptions
	}
	buckets := map[string]*pending{}
	var order []string
	// ids of entries that take part in a supersession, by corpus index.
	ids := map[int]string{}
	var supersede [][2]int
	var loadErr error
	group := BatchSize
	bulk, _ := e.(contract.BulkStorer)
	if bulk != nil && bulk.BulkItems() > group {
		group = bulk.BulkItems()
	} else {
		bulk = nil
	}
	// An engine that can (contract.BulkPipeliner) prepares each batch while
	// the one before it commits, as `mnemo import` has it do; landing books
	// the batch in flight.
	pipe, _ := bulk.(contract.BulkPipeliner)
	type inFlight struct {
		index []int
		wait  func() ([]contract.StoreReceipt, error)
	}
	var flight *inFlight
	book := func(index []int, receipts []contract.StoreReceipt, err error) bool {
		if err != nil {
			loadErr = fmt.Errorf("store_many: %w", err)
			return false
		}
		if len(receipts) != len(index) {
			loadErr = fmt.Errorf("store_many returned %d receipts for %d items", len(receipts), len(index))
			return false
		}
		for k, rc := range receipts {
			if rc.Replayed {
				res.Replayed++
			} else {
				res.Stored++
			}
			if _, want := ids[index[k]]; want {
				ids[index[k]] = rc.ID
			}
		}
		res.Batches++
		return true
	}
	land := func() bool {
		if flight == nil {
			return true
		}
		f := flight
		flight = nil
		receipts, err := f.wait()
		return book(f.index, receipts, err)
	}
	flush := func(p *pending) bool {
		if len(p.items) == 0 {
			return true
		}
		ok := true
		switch {
		case pipe != nil:
			next := &inFlight{index: slices.Clone(p.index), wait: pipe.StartBulk(ctx, slices.Clone(p.items), p.opts)}
			ok = land()
			flight = next
		case bulk != nil:
			receipts, err := bulk.StoreBulk(ctx, p.items, p.opts)
			ok = book(p.index, receipts, err)
		default:
			receipts, err := e.StoreManyWith(ctx, p.items, p.opts)
			ok = book(p.index, receipts, err)
		}
		p.items, p.index = p.items[:0], p.index[:0]
		return ok
	}
	// A local store defers its index during a bulk load, as `mnemo import`
	// has it do; the catch-up is timed after the load.
	if b, ok := e.(interface{ SetBulk(bool) }); ok {
		b.SetBulk(true)
		defer b.SetBulk(false)
	}
	start := time.Now()
	nextReport := 10_000
	eachGenerated(ctx, opts.Records, opts.Seed, func(i int, en corpus.Entry) bool {
		if ctx.Err() != nil {
			loadErr = ctx.Err()
			return false
		}
		exp.count(i, en)
		wo := contract.WriteOptions{ExpiresAt: en.ExpiresAt}
		if en.Status == contract.StatusCandidate {
			wo.Status = contract.StatusCandidate
		}
		if en.Status == contract.StatusSuperseded {
			supersede = append(supersede, [2]int{i, en.SupersededBy})
			ids[i], ids[en.SupersededBy] = "", ""
		}
		key := string(wo.Status)
		if wo.ExpiresAt != nil {
			key += "|" + wo.ExpiresAt.Format(time.RFC3339)
		}
		p := buckets[key]
		if p == nil {
			p = &pending{opts: wo}
			buckets[key] = p
			order = append(order, key)
		}
		p.items = append(p.items, en.Item)
		p.index = append(p.index, i)
		if len(p.items) == group && !flush(p) {
			return false
		}
		if i+1 >= nextReport {
			fmt.Fprintf(opts.Out, "loading: %d/%d\n", i+1, opts.Records)
			nextReport += max(10_000, opts.Records/10)
		}
		return true
	})
	if loadErr != nil {
		land()
		return exp, loadErr
	}
	for _, key := range order {
		if !flush(buckets[key]) {
			land()
			return exp, loadErr
		}
	}
	if !land() {
		return exp, loadErr
	}
	res.Elapsed = time.Since(start)
	res.PerSecond = float64(res.Stored+res.Replayed) / res.Elapsed.Seconds()

	supStart := time.Now()
	for _, s := range supersede {
		if _, err := e.Supersede(ctx, contract.SupersedeRequest{ID: ids[s[0]], By: ids[s[1]]}); err != nil {
			return exp, fmt.Errorf("supersede: %w", err)
		}
		res.Superseded++
	}
	res.SupersedeElapsed = time.Since(supStart)
	if b, ok := e.(interface {
		SetBulk(bool)
		WaitIndex(context.Context) error
	}); ok {
		// The end of the load puts the ordered keys it deferred (engine/bolt),
		// before `mnemo import` returns too: counted in the load's time.
		keysStart := time.Now()
		b.SetBulk(false)
		res.KeysPut = time.Since(keysStart)
		res.Elapsed += res.KeysPut
		res.PerSecond = float64(res.Stored+res.Replayed) / res.Elapsed.Seconds()
		fmt.Fprintf(opts.Out, "waiting for the search index to catch up\n")
		idxStart := time.Now()
		if err := b.WaitIndex(ctx); err != nil {
			return exp, fmt.Errorf("waiting for the index: %w", err)
		}
		res.IndexCatchUp = time.Since(idxStart)
	}
	// An embedder that learns from the store (engine/bolt's default) learns
	// and re-embeds once after the import, like the index's catch-up; the
	// rows are timed on the settled store.
	if w, ok := e.(interface {
		WaitEmbedder(context.Context) error
		EmbedderModel() string
	}); ok {
		fmt.Fprintf(opts.Out, "waiting for the embedder to learn from the store\n")
		start := time.Now()
		if err := w.WaitEmbedder(ctx); err != nil {
			return exp, fmt.Errorf("waiting for the embedder: %w", err)
		}
		fmt.Fprintf(opts.Out, "embedder %s ready in %s\n", w.EmbedderModel(), time.Since(start).Round(time.Millisecond))
	}
	return exp, nil
}

// eachGenerated is corpus.Each with the corpus generated on a goroutine of
// its own, a few hundred entries ahead of fn: `mnemo import` reads and
// parses its file beside its writes the same way (importer.Run), and
// generating an entry costs about what parsing a line does. fn returning
// false stops it.
func eachGenerated(ctx context.Context, n int, seed int64, fn func(i int, e corpus.Entry) bool) {
	type generated struct {
		i int
		e corpus.Entry
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	chunks := make(chan []generated, 4)
	go func() {
		defer close(chunks)
		chunk := make([]generated, 0, 256)
		corpus.Each(n, seed, func(i int, e corpus.Entry) bool {
			if chunk = append(chunk, generated{i, e}); len(chunk) == cap(chunk) {
				select {
				case chunks <- chunk:
				case <-ctx.Done():
					return false
				}
				chunk = make([]generated, 0, 256)
			}
			return true
		})
		if len(chunk) > 0 {
			select {
			case chunks <- chunk:
			case <-ctx.Done():
			}
		}
	}()
	for chunk := range chunks {
		for _, g := range chunk {
			if !fn(g.i, g.e) {
				cancel()
				for range chunks { // let the generator see the cancel and end
				}
				return
			}
		}
	}
}

// percentile is the nearest-rank percentile: the ceil(p/100*n)-th smallest sample.
func percentile(samples []time.Duration, p int) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	rank := (p*len(s) + 99) / 100
	return s[max(rank, 1)-1]
}

// loadAvg is the 1-minute load average, or "" where /proc is missing.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}
