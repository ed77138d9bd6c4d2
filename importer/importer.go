// Package importer streams a JSONL file of StoreItems (or mnemo's export
// lines) into an engine in store_many batches: each line is parsed and
// validated on its own, a bad line is reported with its number while every
// other line is stored, and a second run replays what the first stored
// (docs/spec/cli.md, import). The CLI's import, import --from and demo run it.
package importer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"mnemo/contract"
	"mnemo/ingest"
	"mnemo/jsonerr"
)

// importLine is one parsed line of an import file: the item and how to store it.
type importLine struct {
	item contract.StoreItem
	// status is the line's own status; empty means the import's default.
	status    contract.Status
	expiresAt *time.Time
	// supersededBy is set for a superseded record of an export: it is stored
	// active and superseded once every line is in.
	supersededBy string
	// unknownMeta are the item's meta keys the contract does not know (and
	// does not keep).
	unknownMeta []string
}

// lineEnvelope is the export line format {"id", "item", "status", "expires_at",
// "superseded_by"}; a bare StoreItem line carries its "type" at the top level.
type lineEnvelope struct {
	ID           *string         `json:"id"`
	Item         json.RawMessage `json:"item"`
	Type         json.RawMessage `json:"type"`
	Status       *string         `json:"status"`
	ExpiresAt    *string         `json:"expires_at"`
	SupersededBy *string         `json:"superseded_by"`
}

// parseLine reads one non-blank line: a bare StoreItem or the export
// format, with mnemo's optional status and expires_at. The item is validated
// and an id, when given, must be the item's fingerprint.
func parseLine(data []byte) (importLine, error) {
	if out, ok := parseLineQuick(data); ok {
		return out, nil
	}
	return decodeLine(data)
}

// decodeLine is parseLine through encoding/json, which reads any line and
// words what is wrong with one.
func decodeLine(data []byte) (importLine, error) {
	var out importLine
	var env lineEnvelope
	if err := json.Unmarshal(data, &env); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) && typ.Field == "" {
			return out, contract.Invalid("a line must be a JSON object, not %s", typ.Value)
		}
		if errors.As(err, &typ) {
			return out, contract.Invalid("field %q must be %s, not %s", typ.Field, jsonerr.TypeName(typ.Type.Kind().String()), typ.Value)
		}
		return out, contract.Invalid("invalid JSON: %s", jsonerr.Text(err))
	}
	itemJSON, err := env.itemJSON(data)
	if err != nil {
		return out, err
	}
	// The line decoded, so itemJSON is valid JSON: one pass reads what it
	// lacks and the meta keys the contract does not keep.
	missing, unknownMeta := contract.ItemKeys(itemJSON)
	if missing != "" {
		return out, contract.Invalid("invalid item: %s", missing)
	}
	// UnmarshalJSON itself, not json.Unmarshal: the line decoded, so the
	// item is valid JSON and need not be checked again.
	if err := out.item.UnmarshalJSON(itemJSON); err != nil {
		return out, contract.Invalid("invalid item: %s", jsonerr.Text(err))
	}
	out.unknownMeta = unknownMeta
	return out, env.apply(&out)
}

// parseLineQuick reads a line as parseLine does, without encoding/json's
// two passes over the whole line (its check, then its decoding, which
// skipped the item's text once more): the envelope in one pass of its own
// (scanEnvelope), the item by its own scanner. It takes only lines it reads
// exactly as encoding/json would and that parseLine accepts; anything else
// (ok false) is left to parseLine's encoding/json path, which reads it or
// words the error (FuzzParseLineQuick).
func parseLineQuick(data []byte) (out importLine, ok bool) {
	env, ok := scanEnvelope(data)
	if !ok {
		return out, false
	}
	itemJSON, err := env.itemJSON(data)
	if err != nil {
		return out, false
	}
	// UnmarshalJSON accepts only valid JSON, which ItemKeys needs.
	if out.item.UnmarshalJSON(itemJSON) != nil {
		return importLine{}, false
	}
	missing, unknownMeta := contract.ItemKeys(itemJSON)
	if missing != "" {
		return importLine{}, false
	}
	out.unknownMeta = unknownMeta
	if env.apply(&out) != nil {
		return importLine{}, false
	}
	return out, true
}

// itemJSON is the line's item: the envelope's, or the whole line when it
// is a bare StoreItem.
func (env *lineEnvelope) itemJSON(data []byte) ([]byte, error) {
	switch {
	case env.Item != nil && env.Type != nil:
		return nil, contract.Invalid("a line is either a StoreItem or {\"id\", \"item\"}, not both")
	case env.Item != nil:
		return env.Item, nil
	case env.Type == nil:
		return nil, contract.Invalid("a line must be a StoreItem (with \"type\") or {\"id\", \"item\"}")
	case env.ID != nil:
		return nil, contract.Invalid("an \"id\" goes with {\"id\", \"item\"}, not beside a bare StoreItem")
	}
	return data, nil
}

// apply checks the item read into out and sets what the envelope says
// beside it: the id it must have, its status and expiry.
func (env *lineEnvelope) apply(out *importLine) error {
	if err := out.item.Validate(); err != nil {
		return err
	}
	if env.ID != nil {
		if fp := out.item.Fingerprint(); *env.ID != fp {
			return contract.Invalid("id %s does not match the item's fingerprint %s", *env.ID, fp)
		}
	}
	if env.Status != nil {
		s, ok := contract.ParseStatus(*env.Status)
		if !ok {
			return contract.Invalid("`%s` is not a status, expected one of active, candidate, superseded", *env.Status)
		}
		out.status = s
	}
	if env.ExpiresAt != nil {
		t, err := contract.ParseTime(*env.ExpiresAt)
		if err != nil {
			return contract.Invalid("expires_at `%s` is not an RFC 3339 instant", *env.ExpiresAt)
		}
		out.expiresAt = &t
	}
	if env.SupersededBy != nil {
		if out.status != "" && out.status != contract.StatusSuperseded {
			return contract.Invalid("superseded_by goes with status `superseded`, not `%s`", out.status)
		}
		out.status = contract.StatusSuperseded
		out.supersededBy = *env.SupersededBy
		if !isRecordID(out.supersededBy) {
			return contract.Invalid("superseded_by `%s` is not a record id", out.supersededBy)
		}
	} else if out.status == contract.StatusSuperseded {
		return contract.Invalid("status `superseded` needs superseded_by, the id of the record that replaces it")
	}
	return nil
}

// isRecordID tells whether s looks like a fingerprint: 40 lowercase hex digits.
func isRecordID(s string) bool {
	if len(s) != 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Summary is import's answer on stdout.
type Summary struct {
	Stored   int         `json:"stored"`
	Replayed int         `json:"replayed"`
	Failed   int         `json:"failed"`
	Errors   []LineError `json:"errors"`
	// Skipped lists the entries of another system's data (import --from)
	// that were not imported, with where they are and why.
	Skipped []ingest.Skip `json:"skipped,omitempty"`
}

// LineError is one failed line.
type LineError struct {
	Line  int    `json:"line"`
	Error string `json:"error"`
	// Location is where the record came from, for import --from.
	Location string `json:"location,omitempty"`
}

// parsedLine is a line on its way from the reader to the store.
type parsedLine struct {
	number int
	line   importLine
	err    error
}

// Importer streams a JSONL file into store_many batches. One Importer runs once.
type Importer struct {
	Engine contract.Engine
	// Batch is the most items one store_many call carries (1..100).
	Batch int
	// DefaultStatus applies to lines without a status of their own.
	DefaultStatus contract.Status
	// OnProgress, when set, is told after each batch how far the import got.
	OnProgress func(bytesRead int64, records int)
	// Logger, when set, receives per-batch timings (--debug).
	Logger *slog.Logger
	// Trickle keeps the search index up with the records as they arrive (a
	// follow's small imports), where an import otherwise defers it to its end.
	Trickle bool
	// Bulk has an engine that takes more than a store_many at once
	// (contract.BulkStorer) store up to that many lines a call, in one transaction,
	// instead of Batch.
	Bulk bool

	// group is how many lines of one options group go in one call, and bulk
	// the engine taking them when it is more than Batch.
	group int
	bulk  contract.BulkStorer
	// pipe, when the bulk engine has it, takes each group while the one
	// before it commits; flight is that one, stored but not yet booked.
	pipe   contract.BulkPipeliner
	flight *inFlight

	summary    Summary
	supersedes []pendingSupersede
	// pending holds valid lines waiting for a full store_many of their options.
	// The lines are copies: a pointer into the reader's batch would keep
	// the whole batch while one rare line of it waits (a 100k import's
	// peak RSS grew by 280 MB with groups of 1,000).
	pending      map[optionsKey][]parsedLine
	pendingOrder []optionsKey
	pendingCount int
	bytesRead    atomic.Int64
	// unknownMeta is each meta key the contract does not know, with the
	// first line it appeared on, in that order (written by read only).
	unknownMeta []UnknownKey
}

// UnknownKey is a meta key an import met that the contract ignores.
type UnknownKey struct {
	Key  string
	Line int
}

// UnknownMeta lists each meta key the import met that the contract does not
// know (and does not keep), with the first line it appeared on, in that order.
// Read it after Run returns.
func (im *Importer) UnknownMeta() []UnknownKey { return im.unknownMeta }

type pendingSupersede struct {
	line     int
	id, by   string
	replayed bool
}

// errImportCut is returned by run when the import stopped early; the summary
// tells how far it got.
type errImportCut struct{ cause error }

func (e errImportCut) Error() string { return e.cause.Error() }
func (e errImportCut) Unwrap() error { return e.cause }

// RunFrom imports what src reads at path (another system's memory, ingest),
// placed under place: the source's records stream into Run as export lines,
// each failed line is named by its location in the source, and the summary
// lists what the source skipped. An error of the source itself wins over the
// import's, which only says the stream was cut.
func (im *Importer) RunFrom(ctx context.Context, src ingest.Source, path string, place contract.Namespace) (Summary, error) {
	pr, pw := io.Pipe()
	done := make(chan *ingest.Written, 1)
	var readErr error
	go func() {
		w, err := ingest.WriteJSONL(ctx, src, path, place, pw)
		readErr = err
		pw.CloseWithError(err)
		done <- w
	}()
	sum, err := im.Run(ctx, pr)
	_, _ = io.Copy(io.Discard, pr)
	written := <-done
	for i := range sum.Errors {
		if n := sum.Errors[i].Line; n >= 1 && n <= len(written.Locations) {
			sum.Errors[i].Location = written.Locations[n-1]
		}
	}
	sum.Skipped = written.Skipped
	if readErr != nil {
		return sum, readErr
	}
	return sum, err
}

// Run reads r to the end, storing every valid line. Lines that fail are listed
// in the summary; an engine failure stops the import (what was stored stays).
func (im *Importer) Run(ctx context.Context, r io.Reader) (Summary, error) {
	if im.Batch < 1 || im.Batch > contract.MaxStoreMany {
		return im.summary, contract.Invalid("--batch must be between 1 and %d", contract.MaxStoreMany)
	}
	im.summary.Errors = []LineError{}
	im.group = im.Batch
	if b, ok := im.Engine.(contract.BulkStorer); ok && im.Bulk && !im.Trickle && b.BulkItems() > im.Batch {
		im.group, im.bulk = b.BulkItems(), b
		im.pipe, _ = b.(contract.BulkPipeliner)
	}
	// A local store defers its search index while the lines arrive and
	// catches up once they are in (engine/bolt's SetBulk).
	if b, ok := im.Engine.(interface{ SetBulk(bool) }); ok && !im.Trickle {
		b.SetBulk(true)
		defer b.SetBulk(false)
	}
	interrupted := ctx.Err
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan []parsedLine, 4)
	readErr := make(chan error, 1)
	// Parsing runs beside storing so the two overlap on a multi-core machine.
	go func() {
		defer close(batches)
		readErr <- im.read(ctx, r, batches)
	}()
	var storeErr error
	for b := range batches {
		if storeErr != nil {
			continue // drain so the reader can finish
		}
		if err := ctx.Err(); err != nil {
			storeErr = err
			cancel()
			continue
		}
		if err := im.storeBatch(ctx, b); err != nil {
			storeErr = err
			cancel()
			continue
		}
		if im.OnProgress != nil {
			im.OnProgress(im.bytesRead.Load(), im.summary.Stored+im.summary.Replayed)
		}
	}
	if rerr := <-readErr; storeErr == nil && rerr != nil {
		storeErr = rerr
	}
	if storeErr == nil {
		storeErr = im.flushAll(ctx)
	}
	// Nothing is left in flight when Run returns, whatever happened.
	if err := im.land(ctx); storeErr == nil {
		storeErr = err
	}
	if storeErr == nil {
		storeErr = im.applySupersedes(ctx)
		slices.SortStableFunc(im.summary.Errors, func(a, b LineError) int { return a.Line - b.Line })
	}
	if storeErr != nil {
		if interrupted() != nil {
			storeErr = contract.Unavailable("import interrupted; what was stored stays, and running it again replays it")
		}
		return im.summary, errImportCut{storeErr}
	}
	return im.summary, nil
}

// read splits r into lines and batches, parsing each line.
func (im *Importer) read(ctx context.Context, r io.Reader, out chan<- []parsedLine) error {
	br := bufio.NewReaderSize(r, 256<<10)
	batch := make([]parsedLine, 0, im.Batch)
	valid := 0
	send := func() bool {
		if len(batch) == 0 {
			return true
		}
		select {
		case out <- batch:
		case <-ctx.Done():
			return false
		}
		batch = make([]parsedLine, 0, im.Batch)
		valid = 0
		return true
	}
	for number := 1; ; number++ {
		raw, err := br.ReadBytes('\n')
		im.bytesRead.Add(int64(len(raw)))
		if len(raw) > 0 {
			line := bytes.TrimSpace(raw)
			if len(line) > 0 {
				parsed, perr := parseLine(line)
				for _, k := range parsed.unknownMeta {
					if !slices.ContainsFunc(im.unknownMeta, func(u UnknownKey) bool { return u.Key == k }) {
						im.unknownMeta = append(im.unknownMeta, UnknownKey{Key: k, Line: number})
					}
				}
				batch = append(batch, parsedLine{number: number, line: parsed, err: perr})
				if perr == nil {
					valid++
				}
				// Invalid lines ride along for ordering but do not fill the batch.
				if valid == im.Batch || len(batch) >= 4*im.Batch {
					if !send() {
						return ctx.Err()
					}
				}
			}
		}
		if err == io.EOF {
			if !send() {
				return ctx.Err()
			}
			return nil
		}
		if err != nil {
			return contract.EngineErr("cannot read the import at line %d: %w", number, err)
		}
	}
}

// optionsKey groups lines that store with the same options.
type optionsKey struct {
	status  contract.Status
	expires int64
	hasExp  bool
}

// maxPendingBatches bounds how many batches' worth of lines wait for others
// with the same options, so a file where every line has its own expiry still
// streams in bounded memory; maxPendingLines bounds them in lines, whatever
// the size of a bulk store's batches.
const (
	maxPendingBatches = 10
	maxPendingLines   = 10_000
)

// storeBatch files the valid lines of one batch by their store options and
// stores every group that is full. Lines with the same options share one
// store_many across batches: each call is a durable transaction, and a file
// that mixes statuses and expiries line by line would otherwise cost one
// transaction per run of equal options.
func (im *Importer) storeBatch(ctx context.Context, batch []parsedLine) error {
	if im.pending == nil {
		im.pending = map[optionsKey][]parsedLine{}
	}
	for i := range batch {
		pl := &batch[i]
		if pl.err != nil {
			im.fail(pl.number, pl.err)
			continue
		}
		k := im.keyOf(&pl.line)
		group, ok := im.pending[k]
		if !ok {
			im.pendingOrder = append(im.pendingOrder, k)
		}
		im.pending[k] = append(group, *pl)
		im.pendingCount++
		if len(im.pending[k]) == im.group {
			if err := im.flushGroup(ctx, k); err != nil {
				return err
			}
		}
	}
	if im.pendingCount > min(maxPendingBatches*im.group, max(maxPendingLines, im.group)) {
		return im.flushAll(ctx)
	}
	return nil
}

// flushGroup stores the pending lines of one options group.
func (im *Importer) flushGroup(ctx context.Context, k optionsKey) error {
	lines := im.pending[k]
	delete(im.pending, k)
	im.pendingOrder = slices.DeleteFunc(im.pendingOrder, func(o optionsKey) bool { return o == k })
	im.pendingCount -= len(lines)
	if len(lines) == 0 {
		return nil
	}
	return im.storeGroup(ctx, k, lines)
}

// flushAll stores every pending group, oldest first.
func (im *Importer) flushAll(ctx context.Context) error {
	for len(im.pendingOrder) > 0 {
		if err := im.flushGroup(ctx, im.pendingOrder[0]); err != nil {
			return err
		}
	}
	return nil
}

func (im *Importer) keyOf(l *importLine) optionsKey {
	s := l.status
	if s == "" {
		s = im.DefaultStatus
	}
	// A superseded line is stored active; supersede comes once both records
	// are in.
	k := optionsKey{status: contract.RestoreStatus(s)}
	if l.expiresAt != nil {
		k.expires, k.hasExp = l.expiresAt.UnixNano(), true
	}
	return k
}

func (k optionsKey) options() contract.WriteOptions {
	opts := contract.WriteOptions{Status: k.status}
	if k.hasExp {
		t := time.Unix(0, k.expires).UTC()
		opts.ExpiresAt = &t
	}
	return opts
}

// inFlight is a group StartBulk took that is not yet booked.
type inFlight struct {
	lines   []parsedLine
	items   []contract.StoreItem
	opts    contract.WriteOptions
	started time.Time
	wait    func() ([]contract.StoreReceipt, error)
}

func (im *Importer) storeGroup(ctx context.Context, k optionsKey, lines []parsedLine) error {
	items := make([]contract.StoreItem, len(lines))
	for i, pl := range lines {
		items[i] = pl.line.item
	}
	opts := k.options()
	started := time.Now()
	if im.pipe != nil {
		// This group is prepared while the one before it commits; then that
		// one is booked, in the order the groups were taken.
		next := &inFlight{lines: lines, items: items, opts: opts, started: started, wait: im.pipe.StartBulk(ctx, items, opts)}
		err := im.land(ctx)
		im.flight = next
		return err
	}
	var receipts []contract.StoreReceipt
	var err error
	if im.bulk != nil {
		receipts, err = im.bulk.StoreBulk(ctx, items, opts)
	} else {
		receipts, err = im.Engine.StoreManyWith(ctx, items, opts)
	}
	return im.book(ctx, lines, items, opts, receipts, err, started)
}

// land waits for the group in flight, if any, and books it.
func (im *Importer) land(ctx context.Context) error {
	f := im.flight
	if f == nil {
		return nil
	}
	im.flight = nil
	receipts, err := f.wait()
	return im.book(ctx, f.lines, f.items, f.opts, receipts, err, f.started)
}

// book counts a stored group's lines from its receipts. A group the engine
// refused as invalid is stored again line by line, and the lines it refuses
// are the failures.
func (im *Importer) book(ctx context.Context, lines []parsedLine, items []contract.StoreItem, opts contract.WriteOptions,
	receipts []contract.StoreReceipt, err error, started time.Time) error {
	if im.Logger != nil {
		im.Logger.Debug("import batch", "items", len(items), "ms", time.Since(started).Milliseconds(), "err", err)
	}
	if err == nil && len(receipts) != len(items) {
		return contract.EngineErr("store_many answered %d receipts for %d items", len(receipts), len(items))
	}
	if err != nil {
		if contract.KindOf(err) != contract.KindInvalidRequest {
			return err
		}
		// The engine refused the batch: find the lines it refuses one by one and
		// store the rest.
		receipts = make([]contract.StoreReceipt, len(items))
		for i := range items {
			r, err := im.Engine.StoreWith(ctx, items[i], opts)
			if err != nil {
				if contract.KindOf(err) != contract.KindInvalidRequest {
					return err
				}
				lines[i].err = err
				continue
			}
			receipts[i] = r
		}
	}
	for i, pl := range lines {
		if pl.err != nil {
			im.fail(pl.number, pl.err)
			continue
		}
		if receipts[i].Replayed {
			im.summary.Replayed++
		} else {
			im.summary.Stored++
		}
		if pl.line.supersededBy != "" {
			im.supersedes = append(im.supersedes, pendingSupersede{line: pl.number, id: receipts[i].ID,
				by: pl.line.supersededBy, replayed: receipts[i].Replayed})
		}
	}
	return nil
}

func (im *Importer) fail(line int, err error) {
	im.summary.Failed++
	im.summary.Errors = append(im.summary.Errors, LineError{Line: line, Error: contract.AsError(err).Error()})
}

// applySupersedes marks superseded records once every line is stored, so a
// record may name a successor that comes later in the file. A replayed record
// already superseded by the same successor is left as it is.
func (im *Importer) applySupersedes(ctx context.Context) error {
	done := map[string]string{}
	var replayed []string
	for _, p := range im.supersedes {
		if p.replayed {
			replayed = append(replayed, p.id)
		}
	}
	recs, err := contract.GetRecordsInChunks(ctx, im.Engine, replayed, nil)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if r.Status == contract.StatusSuperseded && r.SupersededBy != nil {
			done[r.ID] = *r.SupersededBy
		}
	}
	for _, p := range im.supersedes {
		if done[p.id] == p.by {
			continue
		}
		if _, err := im.Engine.Supersede(ctx, contract.SupersedeRequest{ID: p.id, By: p.by}); err != nil {
			switch contract.KindOf(err) {
			case contract.KindInvalidRequest, contract.KindNotFound, contract.KindConflict:
			default:
				return err
			}
			// The record is stored (active) but could not be superseded: the
			// line counts as failed, not stored.
			if p.replayed {
				im.summary.Replayed--
			} else {
				im.summary.Stored--
			}
			im.summary.Failed++
			im.summary.Errors = append(im.summary.Errors, LineError{Line: p.line,
				Error: "stored as active, but not superseded: " + contract.AsError(err).Error()})
		}
	}
	return nil
}
