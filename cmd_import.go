package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"mnemo/cliout"
	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/importer"
	"mnemo/ingest"
	"mnemo/server/local"
	"mnemo/storeopen"
)

func newImportCommand(a *app) *cobra.Command {
	var (
		status, from, place string
		batch               int
		dryRun, follow      bool
		wait                bool
	)
	cmd := &cobra.Command{
		Use:   "import FILE|-|PATH",
		Short: "Store a JSONL file of items, or another system's memory (--from)",
		Long: `Store every line of a JSONL file ("-" reads stdin). A line is a StoreItem, or the
export format {"id", "item"} with mnemo's optional "status" ("active",
"candidate", "superseded" with "superseded_by") and "expires_at". Lines go to the
store in store_many batches of --batch items; without --batch, into a PostgreSQL
store or a local one this process holds, up to 2,000 lines go in one transaction
(each durable when its transaction commits), the next prepared while it commits.

A line that is malformed or invalid, or whose id is not its item's fingerprint, is
reported with its line number and every other line is still stored. Running the
same file again replays what was stored. Prints {"stored", "replayed", "failed",
"errors": [{"line", "error"}]}; exits 0 when every line was stored or replayed,
2 otherwise. A progress bar goes to stderr when it is a terminal.

An import of 10,000 records or more into a local store returns once they are
stored (durable, and readable by list, get, browse and explore). A process of
its own, whose pid it prints on stderr, then finishes what the import started
while other commands use the store through it: the search index catches up
(fetch waits for it meanwhile; mnemo info shows how far), the records are
embedded, and a store the import filled from empty is rewritten with full
pages, as mnemo compact does. --wait does all of it before exiting, and says
the rewrite's sizes on stderr. A smaller import finishes before it exits.

--from SOURCE reads another system's memory at PATH (a file, a folder or a
URL) instead; without --from, a PATH that only one source fits is read as
that source, and one that fits none is read as JSONL. Sources:
` + importSourcesHelp() + `
--place NAMESPACE puts everything under that namespace. --dry-run prints what
would be stored (counts per kind and namespace, the first records, what is
skipped and why) and stores nothing. An entry that cannot be imported is
listed with its location under "skipped" ({"location", "reason"}), a failed
record's error names its "location" too, and the import exits 2; every record's
source id is "SOURCE:LOCATION", and running it again stores nothing new.
--follow (claude-code) then keeps importing what sessions write, a line once
it is whole, until Ctrl-C; the TUI shows it arriving. See docs/import.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			defaultStatus, err := importStatusFlag(status)
			if err != nil {
				return err
			}
			if batch < 1 || batch > contract.MaxStoreMany {
				return usageError("--batch must be between 1 and 100")
			}
			src, err := importSourceOf(from, args[0])
			if err != nil {
				return err
			}
			var where contract.Namespace
			if place != "" {
				if where, err = contract.ParseNamespace(place); err != nil {
					return usageError("--place: " + contract.AsError(err).Message)
				}
			}
			if src == nil && (place != "" || dryRun || follow) {
				var given []string
				for _, f := range []struct {
					name string
					set  bool
				}{{"--place", place != ""}, {"--dry-run", dryRun}, {"--follow", follow}} {
					if f.set {
						given = append(given, f.name)
					}
				}
				verb := "goes"
				if len(given) > 1 {
					verb = "go"
				}
				return usageError(fmt.Sprintf("%s %s with --from SOURCE: %s is read as the contract's JSONL",
					strings.Join(given, " and "), verb, args[0]))
			}
			if follow && (src.Name() != ingest.NewClaudeCodeTail("").Name() || dryRun) {
				return usageError("--follow goes with --from claude-code (transcripts grow as a session writes them), without --dry-run")
			}
			if src != nil {
				if err := ingest.CheckPath(src, args[0]); err != nil {
					return err
				}
				if dryRun {
					p, err := ingest.DryRun(cmd.Context(), src, args[0], where, 5)
					if err != nil {
						return err
					}
					return a.answer(p, func(s *cliout.Screen) { cliout.DrawPreview(s, p) })
				}
				e, err := a.engine(cmd.Context())
				if err != nil {
					return err
				}
				settings := importSettings{status: defaultStatus, batch: batch, bulk: !cmd.Flags().Changed("batch"), wait: wait}
				if follow {
					return a.importStream(cmd.Context(), e, 0, settings,
						func(im *importer.Importer, endProgress func()) (importer.Summary, error) {
							return importer.Follow(cmd.Context(), im, ingest.NewClaudeCodeTail(args[0]), where, followEvery,
								func(p importer.Poll) { a.sayFollowed(p, args[0], endProgress) })
						})
				}
				return a.importStream(cmd.Context(), e, 0, settings,
					func(im *importer.Importer, _ func()) (importer.Summary, error) {
						return im.RunFrom(cmd.Context(), src, args[0], where)
					})
			}
			in, size, closeIn, err := a.openImportSource(args[0])
			if err != nil {
				return err
			}
			defer closeIn()
			e, err := a.engine(cmd.Context())
			if err != nil {
				return err
			}
			return a.importStream(cmd.Context(), e, size, importSettings{status: defaultStatus, batch: batch, bulk: !cmd.Flags().Changed("batch"), wait: wait},
				func(im *importer.Importer, _ func()) (importer.Summary, error) { return im.Run(cmd.Context(), in) })
		},
	}
	cmd.Flags().StringVar(&status, "status", "", "status of lines that name none: active (default) or candidate")
	cmd.Flags().IntVar(&batch, "batch", contract.MaxStoreMany, "items per store_many call (1..100)")
	cmd.Flags().StringVar(&from, "from", "", "read another system's memory: "+strings.Join(ingest.Names(), ", "))
	cmd.Flags().StringVar(&place, "place", "", "with --from: put everything under this namespace")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "with --from: print what would be stored, store nothing")
	cmd.Flags().BoolVar(&follow, "follow", false, "with --from claude-code: keep importing what sessions write, until Ctrl-C")
	cmd.Flags().BoolVar(&wait, "wait", false, "finish the search index, the embeddings and the rewrite before exiting, however many records came")
	return cmd
}

func importStatusFlag(status string) (contract.Status, error) {
	switch status {
	case "", string(contract.StatusActive):
		return contract.StatusActive, nil
	case string(contract.StatusCandidate):
		return contract.StatusCandidate, nil
	}
	return "", contract.Invalid("--status must be `active` or `candidate`, not `%s`", status)
}

// openImportSource opens FILE, or stdin for "-"; size is 0 when unknown.
func (a *app) openImportSource(name string) (io.Reader, int64, func(), error) {
	if name == "-" {
		if a.isTerminal(a.stdin) {
			return nil, 0, nil, usageError("import - reads JSONL from stdin, which is a terminal; pipe a file in or name it")
		}
		return a.stdin, 0, func() {}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, 0, nil, contract.Invalid("import file %s does not exist", name)
		}
		return nil, 0, nil, contract.Invalid("cannot open import file %s: %v", name, unwrapPathError(err))
	}
	var size int64
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	return f, size, func() { _ = f.Close() }, nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

type importSettings struct {
	status contract.Status
	batch  int
	// bulk: --batch was not given, so a store that can takes up to 2,000
	// lines a transaction (importer.Importer.Bulk).
	bulk bool
	// wait: --wait, the import's background work is finished before it
	// exits whatever its size.
	wait bool
}

// importStream runs an import (run, on the importer it is handed) with a
// progress bar on a terminal (size is the input's, 0 when unknown), and
// prints its summary on stdout in every case. run may end the progress bar
// early (endProgress), when what it does next is not the import's progress.
func (a *app) importStream(ctx context.Context, e contract.Engine, size int64, s importSettings,
	run func(im *importer.Importer, endProgress func()) (importer.Summary, error)) error {
	im := &importer.Importer{Engine: e, Batch: s.batch, Bulk: s.bulk, DefaultStatus: s.status, Logger: a.logger}
	var bar *cliout.ProgressBar
	if a.isTerminal(a.stderr) {
		bar = cliout.NewProgressBar(a.stderr, size, time.Now)
		im.OnProgress = bar.Update
	}
	endProgress := func() {
		if bar != nil {
			bar.Finish()
			bar = nil
		}
	}
	fresh := a.fillsFromEmpty(ctx, a.store)
	// A PostgreSQL store's bulk load leaves building its indexes to a
	// process of its own (the finisher, as a local store's import leaves
	// its background work); --wait builds them here.
	if l, ok := e.(interface{ LeaveBulkFinish() }); ok && !s.wait {
		l.LeaveBulkFinish()
	}
	started := time.Now()
	summary, err := run(im, endProgress)
	endProgress()
	// Its finisher builds the indexes a PostgreSQL load left, an import
	// cut short by an error included.
	if bl, ok := e.(interface{ BulkLeft() bool }); ok && bl.BulkLeft() {
		a.finishAfter = &finishAfter{dir: a.storeDir()}
	}
	elapsed := time.Since(started)
	a.logger.Info("import", "stored", summary.Stored, "replayed", summary.Replayed, "failed", summary.Failed,
		"seconds", elapsed.Seconds())
	for _, u := range im.UnknownMeta() {
		fmt.Fprintf(a.stderr, "mnemo import: line %d: meta key %q is not part of the contract; it is ignored (not kept) wherever it appears in this file\n", u.Line, u.Key)
	}
	if werr := a.answer(summary, func(s *cliout.Screen) {
		cliout.DrawImportAnswer(s, summary, a.holds(ctx, e))
	}); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	a.afterImport(a.store, summary.Stored, fresh, s.wait)
	if summary.Failed > 0 || len(summary.Skipped) > 0 {
		return exitError{code: exitInvalid}
	}
	return nil
}

// A store this process holds keeps mnemo.db's pages cached for the
// rewrite that follows the import (bolt.Engine.RewriteAfterClose), and
// hands its background work to the import's finisher.
var (
	_ interface{ RewriteAfterClose() }          = (*local.Store)(nil)
	_ interface{ HandOffBackgroundWork() bool } = (*local.Store)(nil)
)

// afterImport decides what follows an import (or a copy) of stored records
// into s once s is let go: one into an empty local store this
// process holds (fresh) of compactMin records or more is rewritten with full
// pages; one of finishMin or more hands the background work its writes
// started (the search index's catch-up, the content index, the embeddings)
// and that rewrite to a process of its own, the finisher, and returns,
// unless wait. The records are durable and readable either way; the
// contract lets ranked reads lag behind them.
func (a *app) afterImport(s *storeopen.Store, stored int, fresh, wait bool) {
	compact := fresh && stored >= a.compactMin
	keepPages := func() {
		if r, ok := s.Engine.(interface{ RewriteAfterClose() }); ok {
			r.RewriteAfterClose()
		}
	}
	if !wait && stored >= a.finishMin && s.Dir != "" {
		if h, ok := s.Engine.(interface{ HandOffBackgroundWork() bool }); ok && h.HandOffBackgroundWork() {
			a.finishAfter = &finishAfter{dir: s.Dir, compact: compact}
			if compact {
				keepPages()
			}
			return
		}
	}
	if compact {
		a.compactAfter = s.Dir
		keepPages()
	}
}

// finishImportAbove is the fewest records an import must store for its
// background work to go to a process of its own: below it the work takes a
// few seconds at most, and the import does it before it exits.
const finishImportAbove = 10_000

// fillsFromEmpty tells whether s is an empty local store this process
// holds, so that an import or a copy fills it from empty: once it has
// settled, nothing else can have written it, and the file is rewritten with
// full pages (a store written in one pass should not keep the half-empty
// pages and freed space its many write transactions leave: about a fifth of
// the file).
func (a *app) fillsFromEmpty(ctx context.Context, s *storeopen.Store) bool {
	if s == nil || s.Dir == "" || s.HeldBy == nil || s.HeldBy(ctx) != os.Getpid() {
		return false
	}
	n, err := s.Records(ctx)
	return err == nil && n == 0
}

// filler names the command whose records filled a new store in what it
// says on stderr: copy, or import (a finisher speaks for its import).
func (a *app) filler() string {
	if a.command == "copy" {
		return "copy"
	}
	return "import"
}

// compactImported rewrites the store an import filled from empty, when no
// other process took it meanwhile, and says so on stderr with the sizes;
// a failure leaves the store as the import wrote it (bolt.Compact renames
// its copy over the file only when the copy is whole).
func (a *app) compactImported(dir string) {
	if _, held := local.Held(dir); held {
		return
	}
	started := time.Now()
	rep, err := bolt.Compact(dir)
	if err != nil {
		a.logger.Warn("compacting the imported store", "err", err)
		fmt.Fprintf(a.stderr, "mnemo %s: the new store was not rewritten with full pages (%s); mnemo compact does it later\n", a.filler(), contract.AsError(err).Message)
		return
	}
	a.logger.Info("compacted the imported store", "before", rep.Before, "after", rep.After, "seconds", time.Since(started).Seconds())
	fmt.Fprintf(a.stderr, "mnemo %s: rewrote the new store with full pages (%s -> %s) and merged its search index (%s -> %s) in %.1f s\n", a.filler(),
		humanBytes(rep.Before), humanBytes(rep.After), humanBytes(rep.IndexBefore), humanBytes(rep.IndexAfter), time.Since(started).Seconds())
}

func importSourcesHelp() string {
	var b strings.Builder
	for _, s := range ingest.Sources() {
		fmt.Fprintf(&b, "  %-13s %s\n", s.Name(), s.Describe())
	}
	return b.String()
}

// importSourceOf is the source --from names, or the one PATH fits; nil means
// the contract's own JSONL.
func importSourceOf(from, path string) (ingest.Source, error) {
	if from != "" {
		return ingest.Lookup(from)
	}
	if path == "-" || strings.Contains(path, "://") && !strings.HasPrefix(path, "postgres") {
		return nil, nil
	}
	src, err := ingest.Detect(path)
	if err != nil && strings.Contains(err.Error(), "cannot tell") {
		if st, serr := os.Stat(path); serr == nil && st.IsDir() {
			return nil, err // a folder is never the contract's JSONL
		}
		return nil, nil
	}
	return src, err
}

// followEvery is how often import --follow looks for what sessions wrote.
const followEvery = time.Second

// sayFollowed tells stderr what a poll of import --follow stored: after the
// first, that it follows now; after each later one that stored or skipped
// anything, a line with the counts; and each skip and failure by location.
func (a *app) sayFollowed(p importer.Poll, path string, endProgress func()) {
	s := p.Summary
	if p.First {
		endProgress()
		fmt.Fprintf(a.stderr, "mnemo import: stored %d %s (%d already held); following %s for what sessions write, Ctrl-C ends\n",
			s.Stored, cliout.Plural(s.Stored, "new record", "new records"), s.Replayed, path)
	} else {
		fmt.Fprintf(a.stderr, "mnemo import: %s stored %d %s", time.Now().Format("15:04:05"), s.Stored, cliout.Plural(s.Stored, "new record", "new records"))
		if s.Replayed > 0 {
			fmt.Fprintf(a.stderr, ", %d already held", s.Replayed)
		}
		if s.Failed > 0 {
			fmt.Fprintf(a.stderr, ", %d failed", s.Failed)
		}
		fmt.Fprintf(a.stderr, " (%d in all)\n", p.Total.Stored)
	}
	for _, k := range s.Skipped {
		fmt.Fprintf(a.stderr, "mnemo import: skipped %s: %s\n", k.Location, k.Reason)
	}
	for _, e := range s.Errors {
		fmt.Fprintf(a.stderr, "mnemo import: failed %s: %s\n", e.Location, e.Error)
	}
}
