// Package storecopy copies every record of one store into another, whatever
// the engines (a directory, PostgreSQL, a running server): the item, status,
// created and updated times, expiry and supersession. It streams the source
// page by page, resumes a copy that was cut (what is there replays), and
// verifies the result by the counts per status and a sample read back from
// both stores. `mnemo copy` runs it.
package storecopy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"mnemo/contract"
	"mnemo/engine/postgres"
	"mnemo/paging"
	"mnemo/server/local"
)

// pageSize is how many records one copy step reads and writes.
const pageSize = contract.MaxGetIDs

// Report is `mnemo copy`'s answer.
type Report struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
	// Read counts the source records walked; Copied those new in the
	// destination, Replayed those it already held (a resumed copy).
	Read     int `json:"read"`
	Copied   int `json:"copied"`
	Replayed int `json:"replayed"`
	// TimesKept tells whether created_at and updated_at were carried over
	// (PostgreSQL and local directories); a running server stamps its own.
	TimesKept bool `json:"times_kept"`
	// SourceCounts and DestinationCounts are the records per status after the copy.
	SourceCounts      map[contract.Status]uint64 `json:"source_counts"`
	DestinationCounts map[contract.Status]uint64 `json:"destination_counts"`
	// Sampled is how many ids were read back from both stores and compared.
	Sampled  int  `json:"sampled"`
	Verified bool `json:"verified"`
	// SourceRecords counts every record the source holds, service sandboxes
	// included, when it can; more than read means records in sandboxes, which
	// a copy with --reach naming the sandbox moves.
	SourceRecords int `json:"source_records,omitempty"`
	// Unlinked lists supersessions that could not be made in the destination
	// because the successor is not held there (it was forgotten in the source).
	Unlinked []string `json:"unlinked,omitempty"`
	// Problem says why the copy did not verify ("" when it did).
	Problem string `json:"-"`
}

// Store is one side of a copy: an opened engine and its label.
type Store struct {
	Engine contract.Engine
	// Label names the store in the report (a password masked).
	Label string
	// Records, when set, counts every record the store holds, service
	// sandboxes included (the report's source_records).
	Records func(ctx context.Context) (int, error)
}

// Options are a copy's settings.
type Options struct {
	// Reach is what to walk; nil walks every record outside service sandboxes.
	Reach *contract.Reach
	// Sample is how many ids to read back from both stores and compare.
	Sample int
	// Clock is the destination's clock when this process holds a directory
	// store (open it with Clock.Now as its clock); nil when the destination
	// was opened otherwise.
	Clock *Clock
	// Progress, when set, is told how many records were read of how many;
	// Walked, when set, is told once the walk is over, before the
	// verification reads both stores.
	Progress func(done, total int)
	Walked   func()
}

// Clock is the destination's clock during a copy: it reads the time of
// the record being written, so a directory store keeps the source's times.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *Clock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.t.IsZero() {
		return time.Now()
	}
	return c.t
}

// Copy copies every record the reach sees from src into dst and verifies
// the result. The report is filled in as far as the copy got; an error means
// it stopped, a report whose Problem is set means it ran but did not verify.
func Copy(ctx context.Context, src, dst Store, opts Options) (Report, error) {
	if src.Label == dst.Label {
		return Report{}, contract.Invalid("copy needs two different stores, not %s twice", src.Label)
	}
	reach, sample := opts.Reach, opts.Sample
	sink := newSink(dst.Engine, opts.Clock)
	rep := Report{Source: src.Label, Destination: dst.Label, TimesKept: sink.timesKept()}
	total, err := statusCounts(ctx, src.Engine, reach)
	if err != nil {
		return rep, err
	}
	all := sumCounts(total)
	// Into PostgreSQL the copy is a bulk load: once enough is in, the
	// store's GIN indexes and facet counts are built once at the end
	// (engine/postgres SetBulk), before the verification reads them.
	pg, bulk := dst.Engine.(*postgres.Engine)
	if bulk {
		pg.SetBulk(true)
		defer pg.SetBulk(false)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	var sampled []string
	writer := newWriter(ctx, sink)
	req := contract.ListRequest{Filter: contract.MetaFilter{Reach: reach}, Limit: pageSize}
	err = paging.Walk(nil, "copy", func(cursor *string) (*string, error) {
		req.Cursor = cursor
		page, err := src.Engine.Export(ctx, req)
		if err != nil {
			return nil, err
		}
		if len(page.Items) == 0 {
			return page.NextCursor, nil
		}
		ids := make([]string, len(page.Items))
		for i, it := range page.Items {
			ids[i] = it.ID
		}
		recs, err := src.Engine.GetRecords(ctx, contract.GetRequest{IDs: ids, Reach: reach})
		if err != nil {
			return nil, err
		}
		if err := writer.submit(recs); err != nil {
			return nil, err
		}
		for _, r := range recs {
			// Reservoir sample of the ids copied.
			rep.Read++
			if len(sampled) < sample {
				sampled = append(sampled, r.ID)
			} else if j := rng.IntN(rep.Read); j < sample {
				sampled[j] = r.ID
			}
		}
		if opts.Progress != nil {
			opts.Progress(rep.Read, all)
		}
		return page.NextCursor, nil
	})
	if opts.Walked != nil {
		opts.Walked()
	}
	fresh, replayed, werr := writer.wait()
	rep.Copied, rep.Replayed = fresh, replayed
	if err == nil {
		err = werr
	}
	if err != nil {
		return rep, err
	}
	if rep.Unlinked, err = sink.finish(ctx); err != nil {
		return rep, err
	}
	if bulk {
		pg.SetBulk(false)
		if err := pg.WaitIndex(ctx); err != nil {
			return rep, err
		}
	}
	if rep.SourceCounts, err = statusCounts(ctx, src.Engine, reach); err != nil {
		return rep, err
	}
	if rep.DestinationCounts, err = statusCounts(ctx, dst.Engine, reach); err != nil {
		return rep, err
	}
	if src.Records != nil {
		if rep.SourceRecords, err = src.Records(ctx); err != nil {
			return rep, err
		}
	}
	rep.Sampled = len(sampled)
	problem := verify(ctx, src.Engine, dst.Engine, reach, sampled, rep.TimesKept, rep.Unlinked)
	for _, s := range contract.Statuses() {
		if rep.DestinationCounts[s] < rep.SourceCounts[s] && problem == "" && len(rep.Unlinked) == 0 {
			problem = fmt.Sprintf("the destination holds %d %s records, the source %d", rep.DestinationCounts[s], s, rep.SourceCounts[s])
		}
	}
	rep.Verified = problem == ""
	rep.Problem = problem
	return rep, nil
}

// statusCounts is every record the reach sees per status (without a reach,
// every record outside service sandboxes).
func statusCounts(ctx context.Context, e contract.Engine, reach *contract.Reach) (map[contract.Status]uint64, error) {
	page, err := e.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetStatus, Filter: contract.MetaFilter{Reach: reach}, Limit: len(contract.Statuses())})
	if err != nil {
		return nil, err
	}
	out := map[contract.Status]uint64{}
	for _, s := range contract.Statuses() {
		out[s] = 0
	}
	for _, b := range page.Buckets {
		out[contract.Status(b.Value)] = b.Count
	}
	return out, nil
}

func sumCounts(m map[contract.Status]uint64) int {
	n := uint64(0)
	for _, c := range m {
		n += c
	}
	return int(n)
}

// verify reads the sampled ids from both stores and compares every
// field the copy carries; it returns what differs, "" when nothing does.
func verify(ctx context.Context, src, dst contract.Engine, reach *contract.Reach, ids []string, timesKept bool, unlinked []string) string {
	skip := map[string]bool{}
	for _, id := range unlinked {
		skip[id] = true
	}
	a, err := contract.GetRecordsInChunks(ctx, src, ids, reach)
	if err != nil {
		return "reading the sample from the source: " + err.Error()
	}
	b, err := contract.GetRecordsInChunks(ctx, dst, ids, reach)
	if err != nil {
		return "reading the sample from the destination: " + err.Error()
	}
	held := map[string]contract.Record{}
	for _, r := range b {
		held[r.ID] = r
	}
	for _, r := range a {
		got, ok := held[r.ID]
		if !ok {
			return "record " + r.ID + " is missing from the destination"
		}
		if skip[r.ID] {
			continue
		}
		if !timesKept {
			got.CreatedAt, got.UpdatedAt = r.CreatedAt, r.UpdatedAt
		}
		x, _ := json.Marshal(r)
		y, _ := json.Marshal(got)
		if string(x) != string(y) {
			return "record " + r.ID + " differs: source " + string(x) + ", destination " + string(y)
		}
	}
	return ""
}

// sink writes source records into the destination.
type sink interface {
	write(ctx context.Context, recs []contract.Record) (fresh, replayed int, err error)
	// finish applies what had to wait for the whole walk (supersessions) and
	// returns the ids whose successor the destination does not hold.
	finish(ctx context.Context) ([]string, error)
	timesKept() bool
}

// restorer is an engine that writes whole records as they are (engine/postgres).
type restorer interface {
	Restore(ctx context.Context, recs []contract.Record) ([]contract.StoreReceipt, error)
}

func newSink(e contract.Engine, clock *Clock) sink {
	if r, ok := e.(restorer); ok {
		return &restoreSink{r: r}
	}
	// The clock sets the records' times only in a store this process
	// holds; through another process the times are that process's own.
	ls, ok := e.(*local.Store)
	held := ok && ls.Role() == local.Holding && clock != nil
	return &contractSink{e: e, clock: clock, local: held}
}

// restoreSink writes through Restore: every field in one statement.
type restoreSink struct{ r restorer }

func (s *restoreSink) timesKept() bool { return true }

func (s *restoreSink) finish(context.Context) ([]string, error) { return nil, nil }

func (s *restoreSink) write(ctx context.Context, recs []contract.Record) (int, int, error) {
	rs, err := s.r.Restore(ctx, recs)
	if err != nil {
		return 0, 0, err
	}
	fresh := 0
	for _, r := range rs {
		if !r.Replayed {
			fresh++
		}
	}
	return fresh, len(rs) - fresh, nil
}

// contractSink writes through the contract: store_many with the status and
// expiry, an approval for an active record that was a candidate (its updated
// time differs from its creation), and, after the walk, each supersession.
// With a local directory store the clock reads each record's own times.
type contractSink struct {
	e       contract.Engine
	clock   *Clock
	local   bool
	pending []contract.Record // superseded records, applied by finish
}

func (s *contractSink) timesKept() bool { return s.local }

func (s *contractSink) setClock(t time.Time) {
	if s.local {
		s.clock.set(t)
	}
}

// storeStatus is what a record is stored as before its later history is replayed.
func storeStatus(r *contract.Record) contract.Status {
	if r.Status == contract.StatusCandidate || (r.Status == contract.StatusActive && !r.UpdatedAt.Equal(r.CreatedAt)) {
		return contract.StatusCandidate
	}
	return contract.StatusActive
}

func (s *contractSink) write(ctx context.Context, recs []contract.Record) (int, int, error) {
	fresh, replayed := 0, 0
	var approve []contract.Record
	for i := 0; i < len(recs); {
		// One store_many per run of records sharing creation time, stored
		// status and expiry.
		j := i + 1
		for j < len(recs) && j-i < contract.MaxStoreMany && sameBatch(&recs[i], &recs[j]) {
			j++
		}
		items := make([]contract.StoreItem, 0, j-i)
		for k := i; k < j; k++ {
			items = append(items, *recs[k].Item)
		}
		s.setClock(recs[i].CreatedAt)
		rs, err := s.e.StoreManyWith(ctx, items, contract.WriteOptions{Status: storeStatus(&recs[i]), ExpiresAt: recs[i].ExpiresAt})
		if err != nil {
			return fresh, replayed, err
		}
		for k, r := range rs {
			if r.Replayed {
				replayed++
			} else {
				fresh++
			}
			rec := recs[i+k]
			if rec.Status == contract.StatusActive && storeStatus(&rec) == contract.StatusCandidate {
				approve = append(approve, rec)
			}
			if rec.Status == contract.StatusSuperseded && rec.SupersededBy != nil {
				s.pending = append(s.pending, rec)
			}
		}
		i = j
	}
	if len(approve) > 0 {
		// Approve what is still a candidate (a resumed copy may have done some).
		held, err := s.statuses(ctx, approve)
		if err != nil {
			return fresh, replayed, err
		}
		for _, r := range approve {
			if held[r.ID] != contract.StatusCandidate {
				continue
			}
			s.setClock(r.UpdatedAt)
			if _, err := s.e.Review(ctx, contract.ReviewRequest{ID: r.ID, Action: contract.ReviewApprove}); err != nil {
				return fresh, replayed, err
			}
		}
	}
	return fresh, replayed, nil
}

func sameBatch(a, b *contract.Record) bool {
	if !a.CreatedAt.Equal(b.CreatedAt) || storeStatus(a) != storeStatus(b) {
		return false
	}
	if (a.ExpiresAt == nil) != (b.ExpiresAt == nil) {
		return false
	}
	return a.ExpiresAt == nil || a.ExpiresAt.Equal(*b.ExpiresAt)
}

// statuses reads the destination's status of each record.
func (s *contractSink) statuses(ctx context.Context, recs []contract.Record) (map[string]contract.Status, error) {
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.ID
	}
	got, err := contract.GetRecordsInChunks(ctx, s.e, ids, &contract.Reach{Descendants: true})
	if err != nil {
		return nil, err
	}
	out := make(map[string]contract.Status, len(got))
	for _, r := range got {
		out[r.ID] = r.Status
	}
	return out, nil
}

func (s *contractSink) finish(ctx context.Context) ([]string, error) {
	held, err := s.statuses(ctx, s.pending)
	if err != nil {
		return nil, err
	}
	var unlinked []string
	for _, r := range s.pending {
		if held[r.ID] == contract.StatusSuperseded {
			continue
		}
		s.setClock(r.UpdatedAt)
		_, err := s.e.Supersede(ctx, contract.SupersedeRequest{ID: r.ID, By: *r.SupersededBy})
		if errors.Is(err, contract.ErrNotFound) {
			unlinked = append(unlinked, r.ID)
			continue
		}
		if err != nil {
			return nil, err
		}
	}
	return unlinked, nil
}

// writers is how many pages a sink that takes whole records writes at
// once: PostgreSQL's per-row index work runs on several connections.
const writers = 4

// writer writes pages through a sink: in order, one at a time, for a
// sink that replays history through the contract; on writers
// goroutines for a sink that writes whole records (each carries its own
// fields, so order does not matter and a re-run replays what was written).
type writer struct {
	sink     sink
	ctx      context.Context
	cancel   context.CancelFunc
	pages    chan []contract.Record
	wg       sync.WaitGroup
	mu       sync.Mutex
	fresh    int
	replayed int
	err      error
}

func newWriter(ctx context.Context, sink sink) *writer {
	w := &writer{sink: sink}
	if _, whole := sink.(*restoreSink); !whole {
		w.ctx = ctx
		return w
	}
	w.ctx, w.cancel = context.WithCancel(ctx)
	w.pages = make(chan []contract.Record, writers)
	for range writers {
		w.wg.Go(func() {
			for recs := range w.pages {
				w.record(w.sink.write(w.ctx, recs))
			}
		})
	}
	return w
}

func (w *writer) record(fresh, replayed int, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.fresh += fresh
	w.replayed += replayed
	if err != nil && w.err == nil {
		w.err = err
		if w.cancel != nil {
			w.cancel()
		}
	}
}

func (w *writer) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// submit writes one page, or hands it to a writer; it returns the first
// error any write has met.
func (w *writer) submit(recs []contract.Record) error {
	if err := w.failed(); err != nil {
		return err
	}
	if w.pages == nil {
		w.record(w.sink.write(w.ctx, recs))
		return w.failed()
	}
	select {
	case w.pages <- recs:
		return nil
	case <-w.ctx.Done():
		if err := w.failed(); err != nil {
			return err
		}
		return contract.Unavailable("copy stopped: %v", w.ctx.Err())
	}
}

// wait finishes every page handed over and returns the totals.
func (w *writer) wait() (fresh, replayed int, err error) {
	if w.pages != nil {
		close(w.pages)
		w.wg.Wait()
		w.cancel()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fresh, w.replayed, w.err
}
