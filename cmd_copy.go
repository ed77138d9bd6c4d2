package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	neturl "net/url"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/postgres"
	"mnemo/server/local"
)

// copyPage is how many records one copy step reads and writes.
const copyPage = contract.MaxGetIDs

// copyReport is `mnemo copy`'s answer.
type copyReport struct {
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
}

func newCopyCommand(a *app) *cobra.Command {
	var (
		sample int
		reach  string
	)
	cmd := &cobra.Command{
		Use:   "copy SRC DST",
		Short: "Copy every record from one store to another (a directory or a postgres:// URL, either way)",
		Long: `Copy every record of SRC into DST: the item, status, created and updated times,
expiry and supersession. Each of SRC and DST is a store directory, a postgres://
URL or a running server's http(s):// URL (token from MNEMO_TOKEN). Records are
streamed page by page with a progress bar on a terminal; running the same copy
again resumes it (what was copied is replayed, never duplicated). At the end the
counts per status of both stores are compared and a sample of ids is read back
from both and compared field by field; the report is printed (JSON when piped).

Like export, the copy walks every record outside service sandboxes; --reach
names what to walk instead (a sandbox, say), and "source_records" in the report
counts every record the source holds, sandboxes included. Copy a sandbox before
the rest when records outside it are superseded by records inside it.`,
		Example: `  mnemo copy ~/.local/share/mnemo 'postgres://mnemo@db.example/mnemo?schema=team'
  mnemo copy 'postgres:///mnemo?host=/var/run/postgresql' ./store-backup`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := parseReachFlag("--reach", reach)
			if err != nil {
				return err
			}
			return copyStores(cmd.Context(), a, args[0], args[1], r, sample)
		},
	}
	cmd.Flags().IntVar(&sample, "verify-sample", 200, "how many ids to read back from both stores and compare")
	cmd.Flags().StringVar(&reach, "reach", "", `copy what this reach (JSON, e.g. {"at":"team:acme/service:digest","inherit":false,"descendants":true}) sees`)
	return cmd
}

// copyClock is the destination's clock during a copy: it reads the time of
// the record being written, so a directory store keeps the source's times.
type copyClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *copyClock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func (c *copyClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.t.IsZero() {
		return time.Now()
	}
	return c.t
}

// openLocation opens a store by its location: a server URL, a postgres:// URL
// or a directory (adjust sees a directory store's options).
func openLocation(ctx context.Context, a *app, loc string, adjust func(*bolt.Options)) (*openStore, error) {
	if postgres.IsURL(loc) {
		return openPostgres(ctx, a, loc)
	}
	if u, err := neturl.Parse(loc); err == nil && (u.Scheme == "http" || u.Scheme == "https" || u.Scheme == "unix") {
		return openRemote(ctx, a, loc)
	}
	return openLocalWith(ctx, a, expandHome(loc), adjust)
}

func copyStores(ctx context.Context, a *app, srcLoc, dstLoc string, reach *contract.Reach, sample int) error {
	src, err := openLocation(ctx, a, srcLoc, nil)
	if err != nil {
		return err
	}
	defer func() { _ = src.close() }()
	clock := &copyClock{}
	dst, err := openLocation(ctx, a, dstLoc, func(o *bolt.Options) { o.Clock = clock.now })
	if err != nil {
		return err
	}
	defer func() { _ = dst.close() }()
	if src.label == dst.label {
		return contract.Invalid("copy needs two different stores, not %s twice", src.label)
	}
	sink := newCopySink(dst.engine, clock)
	rep := copyReport{Source: src.label, Destination: dst.label, TimesKept: sink.timesKept()}
	total, err := statusCounts(ctx, src.engine, reach)
	if err != nil {
		return err
	}
	var bar *copyProgress
	if a.isTerminal(a.stderr) {
		bar = &copyProgress{w: a.stderr, total: sumCounts(total), start: time.Now()}
	}
	// Into PostgreSQL the copy is a bulk load: once enough is in, the
	// store's GIN indexes and facet counts are built once at the end
	// (engine/postgres SetBulk), before the verification reads them.
	pg, bulk := dst.engine.(*postgres.Engine)
	if bulk {
		pg.SetBulk(true)
		defer pg.SetBulk(false)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	var sampled []string
	writer := newCopyWriter(ctx, sink)
	req := contract.ListRequest{Filter: contract.MetaFilter{Reach: reach}, Limit: copyPage}
	err = walkPages(nil, "copy", func(cursor *string) (*string, error) {
		req.Cursor = cursor
		page, err := src.engine.Export(ctx, req)
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
		recs, err := src.engine.GetRecords(ctx, contract.GetRequest{IDs: ids, Reach: reach})
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
		if bar != nil {
			bar.update(rep.Read)
		}
		return page.NextCursor, nil
	})
	if bar != nil {
		bar.finish()
	}
	fresh, replayed, werr := writer.wait()
	rep.Copied, rep.Replayed = fresh, replayed
	if err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	if rep.Unlinked, err = sink.finish(ctx); err != nil {
		return err
	}
	if bulk {
		pg.SetBulk(false)
		if err := pg.WaitIndex(ctx); err != nil {
			return err
		}
	}
	if rep.SourceCounts, err = statusCounts(ctx, src.engine, reach); err != nil {
		return err
	}
	if rep.DestinationCounts, err = statusCounts(ctx, dst.engine, reach); err != nil {
		return err
	}
	if src.recordCount != nil || isCounter(src.engine) {
		if rep.SourceRecords, err = countRecords(ctx, src); err != nil {
			return err
		}
	}
	rep.Sampled = len(sampled)
	problem := verifyCopy(ctx, src.engine, dst.engine, reach, sampled, rep.TimesKept, rep.Unlinked)
	for _, s := range contract.Statuses() {
		if rep.DestinationCounts[s] < rep.SourceCounts[s] && problem == "" && len(rep.Unlinked) == 0 {
			problem = fmt.Sprintf("the destination holds %d %s records, the source %d", rep.DestinationCounts[s], s, rep.SourceCounts[s])
		}
	}
	rep.Verified = problem == ""
	if err := a.answer(rep, func(s *screen) { drawCopy(s, rep) }); err != nil {
		return err
	}
	if problem != "" {
		return contract.EngineErr("the copy did not verify: %s", problem)
	}
	return nil
}

func isCounter(e contract.Engine) bool {
	_, ok := e.(recordCounter)
	return ok
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

// verifyCopy reads the sampled ids from both stores and compares every
// field the copy carries; it returns what differs, "" when nothing does.
func verifyCopy(ctx context.Context, src, dst contract.Engine, reach *contract.Reach, ids []string, timesKept bool, unlinked []string) string {
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

// copySink writes source records into the destination.
type copySink interface {
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

func newCopySink(e contract.Engine, clock *copyClock) copySink {
	if r, ok := e.(restorer); ok {
		return &restoreSink{r: r}
	}
	// The clock sets the records' times only in a store this process
	// holds; through another process the times are that process's own.
	ls, ok := e.(*local.Store)
	held := ok && ls.Role() == local.Holding
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
	clock   *copyClock
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

// copyProgress draws the copy's progress on one terminal line of stderr.
type copyProgress struct {
	w     io.Writer
	total int
	start time.Time
	last  time.Time
}

func (p *copyProgress) update(done int) {
	now := time.Now()
	if now.Sub(p.last) < progressEvery {
		return
	}
	p.last = now
	elapsed := now.Sub(p.start)
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(done) / s
	}
	var b strings.Builder
	b.WriteString("copying ")
	if p.total > 0 {
		frac := min(float64(done)/float64(p.total), 1)
		const width = 24
		filled := int(frac * width)
		fmt.Fprintf(&b, "[%s%s] %3.0f%% ", strings.Repeat("=", filled), strings.Repeat(" ", width-filled), frac*100)
	}
	fmt.Fprintf(&b, "%s of %s records  %s rec/s", groupThousands(int64(done)), groupThousands(int64(p.total)), groupThousands(int64(rate)))
	if rate > 0 && done < p.total {
		fmt.Fprintf(&b, "  ETA %s", formatETA(time.Duration(float64(p.total-done)/rate*float64(time.Second))))
	}
	fmt.Fprint(p.w, "\r"+b.String()+"\x1b[K")
}

func (p *copyProgress) finish() {
	if !p.last.IsZero() {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

// copyWriters is how many pages a sink that takes whole records writes at
// once: PostgreSQL's per-row index work runs on several connections.
const copyWriters = 4

// copyWriter writes pages through a sink: in order, one at a time, for a
// sink that replays history through the contract; on copyWriters
// goroutines for a sink that writes whole records (each carries its own
// fields, so order does not matter and a re-run replays what was written).
type copyWriter struct {
	sink     copySink
	ctx      context.Context
	cancel   context.CancelFunc
	pages    chan []contract.Record
	wg       sync.WaitGroup
	mu       sync.Mutex
	fresh    int
	replayed int
	err      error
}

func newCopyWriter(ctx context.Context, sink copySink) *copyWriter {
	w := &copyWriter{sink: sink}
	if _, whole := sink.(*restoreSink); !whole {
		w.ctx = ctx
		return w
	}
	w.ctx, w.cancel = context.WithCancel(ctx)
	w.pages = make(chan []contract.Record, copyWriters)
	for range copyWriters {
		w.wg.Go(func() {
			for recs := range w.pages {
				w.record(w.sink.write(w.ctx, recs))
			}
		})
	}
	return w
}

func (w *copyWriter) record(fresh, replayed int, err error) {
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

func (w *copyWriter) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// submit writes one page, or hands it to a writer; it returns the first
// error any write has met.
func (w *copyWriter) submit(recs []contract.Record) error {
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
func (w *copyWriter) wait() (fresh, replayed int, err error) {
	if w.pages != nil {
		close(w.pages)
		w.wg.Wait()
		w.cancel()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fresh, w.replayed, w.err
}
