package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"mnemo/bench"
	"mnemo/bench/corpus"
	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/postgres"
	"mnemo/server/local"
)

func newBenchCommand(a *app) *cobra.Command {
	var (
		records    int
		seed       int64
		iterations int
		dir        string
		reuse      bool
		browseOnly bool
		convs      bool
		corpusOut  string
		// storeLatency: time stores on --dir from this process and print
		// them (a child of the shared-store rows).
		storeLatency string
	)
	cmd := &cobra.Command{
		Use:   "bench [--records N]",
		Short: "Benchmark a scratch store on a generated corpus and print a table",
		Long: `Generate the benchmark corpus, import it into a new scratch store (never your
store), time every shape of docs/spec/design.md section 8 (browse, explore, keyword fetch,
import throughput), then conversation fetch on a second scratch store of as many
generated conversation turns (--conversations=false leaves it out), and print
Markdown tables with median, p95, the budget and the SQLite peer's figure. With --db naming a postgres:// URL the scratch store is a new
schema in that database, dropped after. Progress goes to stderr. Exits 0 when every row meets its
budget, 1 otherwise.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if records < 1 {
				return usageError("--records must be positive")
			}
			opts := bench.Options{Records: records, Seed: seed, Iterations: iterations, Out: a.stderr}
			if storeLatency != "" {
				return a.benchStoreLatency(cmd, dir, storeLatency)
			}
			if corpusOut != "" {
				return writeCorpus(corpusOut, opts)
			}
			if loc := a.storeDir(); postgres.IsURL(loc) {
				return benchPostgres(cmd, a, loc, opts)
			}
			if reuse {
				return a.benchExisting(cmd, dir, opts, browseOnly)
			}
			scratch := dir
			if scratch == "" {
				tmp, err := os.MkdirTemp("", "mnemo-bench-*")
				if err != nil {
					return contract.EngineErr("cannot create a scratch store: %w", err)
				}
				defer func() { _ = os.RemoveAll(tmp) }()
				scratch = tmp
			} else if entries, err := os.ReadDir(scratch); err == nil && len(entries) > 0 {
				return usageError(fmt.Sprintf("--dir %s is not empty; bench needs an empty directory", scratch))
			}
			e, err := bolt.Open(scratch, bolt.Options{LockTimeout: storeLockTimeout, Logger: a.logger})
			if err != nil {
				return err
			}
			table, err := bench.Run(cmd.Context(), e, opts)
			if err != nil {
				_ = e.Close()
				return err
			}
			// The in-process rows are printed before the store closes, so a
			// long close or the process rows never cost them.
			if _, err := fmt.Fprint(a.stdout, table.Markdown()); err != nil {
				return err
			}
			// The store settled, as the load's own process leaves it: a
			// store the load filled from empty is then rewritten with full
			// pages as it closes (bolt.RewriteFilledAt), and the size row
			// says what that did.
			if err := e.WaitIndex(cmd.Context()); err != nil {
				_ = e.Close()
				return err
			}
			if err := e.Close(); err != nil {
				return err
			}
			sizeNote := "not rewritten at close"
			if rep, ok := e.Rewrote(); ok {
				sizeNote = fmt.Sprintf("mnemo.db rewritten with full pages as the load's process closed it, %.1f -> %.1f MB in %s",
					float64(rep.Before)/1e6, float64(rep.After)/1e6, rep.Took.Round(100*time.Millisecond))
			}
			if err := a.benchProcesses(&table, scratch, opts, sizeNote); err != nil {
				return err
			}
			passed := table.Passed()
			if convs {
				ok, err := a.benchConversations(cmd, opts)
				if err != nil {
					return err
				}
				passed = passed && ok
			}
			if !passed {
				return exitError{code: exitFailure}
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&records, "records", 10_000, "corpus size")
	cmd.Flags().Int64Var(&seed, "seed", 1, "corpus seed")
	cmd.Flags().IntVar(&iterations, "iterations", 20, "measured rounds per shape")
	cmd.Flags().StringVar(&dir, "dir", "", "an empty directory for the scratch store (default: a temporary one, removed after)")
	cmd.Flags().StringVar(&corpusOut, "write-corpus", "", "write the corpus as an import file (JSONL, with statuses and expiry) to this path instead of benchmarking, to time `mnemo import` on it")
	cmd.Flags().StringVar(&storeLatency, "store-latency", "", "time two writers' stores on --dir from this process and print each in ns (the shared-store rows run it)")
	_ = cmd.Flags().MarkHidden("store-latency")
	cmd.Flags().BoolVar(&a.benchAfterImport, "after-import", false, "also `mnemo import` the corpus into a new store and time the first process after it (the import's whole time)")
	cmd.Flags().BoolVar(&reuse, "reuse", false, "time the rows on the store an earlier run left in --dir (same --records and --seed), from this new process")
	cmd.Flags().BoolVar(&browseOnly, "browse-only", false, "with --reuse: only the browse and explore rows (what a browsing process does)")
	cmd.Flags().BoolVar(&convs, "conversations", true, "also time conversation fetch (keyword, and hybrid with the conversation levers) on a second scratch store of --records generated conversation turns")
	return cmd
}

// benchConversations times the conversation rows on a new scratch store,
// removed after, and prints them; it reports whether they passed.
func (a *app) benchConversations(cmd *cobra.Command, opts bench.Options) (bool, error) {
	dir, err := os.MkdirTemp("", "mnemo-bench-conv-*")
	if err != nil {
		return false, contract.EngineErr("cannot create a scratch store: %w", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	fmt.Fprintf(a.stderr, "timing conversation fetch on a store of %d turns\n", opts.Records)
	e, err := bolt.Open(dir, bolt.Options{LockTimeout: storeLockTimeout, Logger: a.logger})
	if err != nil {
		return false, err
	}
	table, err := bench.RunConversations(cmd.Context(), e, opts)
	if cerr := e.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err
	}
	_, err = fmt.Fprint(a.stdout, "\n"+table.Markdown())
	return table.Passed(), err
}

// benchExisting times the rows on an existing bench store.
func (a *app) benchExisting(cmd *cobra.Command, dir string, opts bench.Options, browseOnly bool) error {
	if dir == "" {
		return usageError("--reuse needs --dir: the store an earlier `mnemo bench --dir` left")
	}
	e, err := bolt.Open(dir, bolt.Options{LockTimeout: storeLockTimeout, Logger: a.logger})
	if err != nil {
		return err
	}
	defer func() { _ = e.Close() }()
	table, err := bench.RunExisting(cmd.Context(), e, opts, browseOnly)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprint(a.stdout, table.Markdown()); err != nil {
		return err
	}
	// A whole run again (not the browsing child the process rows start)
	// times the new processes too, on the closed store.
	if !browseOnly {
		if err := e.Close(); err != nil {
			return err
		}
		if err := a.benchProcesses(&table, dir, opts, ""); err != nil {
			return err
		}
	}
	if !table.Passed() {
		return exitError{code: exitFailure}
	}
	return nil
}

// benchProcesses times the rows a new process sees on the closed store in
// dir (cold open, cold first page, the memory of a process that only
// browses) and prints them; sizeNote, when set, ends the size row's note.
func (a *app) benchProcesses(table *bench.Table, dir string, opts bench.Options, sizeNote string) error {
	// The store as the load left it, before any new process opens it.
	size, err := bench.MeasureSize(dir, opts.Records)
	if err != nil {
		return err
	}
	if sizeNote != "" {
		size.Note += "; " + sizeNote
	}
	table.Processes = []bench.ProcessRow{size}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(a.stderr, "mnemo: cannot time new processes: %v\n", err)
		_, err = fmt.Fprint(a.stdout, "\n"+table.ProcessMarkdown())
		return err
	}
	fmt.Fprintf(a.stderr, "timing new processes on the store\n")
	rows, err := bench.MeasureProcesses(exe, dir, opts)
	rows = append([]bench.ProcessRow{size}, rows...)
	if err != nil {
		// The in-process rows stand on their own.
		fmt.Fprintf(a.stderr, "mnemo: cannot time new processes: %v\n", err)
	}
	fmt.Fprintf(a.stderr, "timing the shared store: through a holding process against in it\n")
	shared, err := bench.MeasureShared(exe, dir, opts)
	if err != nil {
		fmt.Fprintf(a.stderr, "mnemo: cannot time the shared store: %v\n", err)
	}
	rows = append(rows, shared...)
	if a.benchAfterImport {
		corpusPath := filepath.Join(filepath.Dir(dir), filepath.Base(dir)+"-corpus.jsonl")
		if err := writeCorpus(corpusPath, opts); err != nil {
			return err
		}
		defer os.Remove(corpusPath)
		fmt.Fprintf(a.stderr, "timing the first process after `mnemo import` of the corpus\n")
		after, err := bench.MeasureAfterImport(exe, corpusPath, opts)
		if err != nil {
			fmt.Fprintf(a.stderr, "mnemo: cannot time the first process after an import: %v\n", err)
		}
		rows = append(rows, after...)
	}
	table.Processes = rows
	_, err = fmt.Fprint(a.stdout, "\n"+table.ProcessMarkdown())
	return err
}

// benchStoreLatency times stores on the store in dir from this process, as
// its holder or through the process holding it, and prints them.
func (a *app) benchStoreLatency(cmd *cobra.Command, dir, label string) error {
	// A holder keeping the store's clusters as the `mnemo serve` the socket
	// side reaches does (at 1M a first pass of minutes at up to half a
	// core), begun at once and under way before the stores are timed
	// (StoreLatencies), so the two sides of the socket row differ by the
	// socket alone.
	cfg := a.cfg.CurateConfig()
	s, err := local.Open(cmd.Context(), dir, local.Options{MustExist: true, Logger: a.logger, Clusters: &cfg, ClustersNow: true})
	if err != nil {
		return err
	}
	defer func() { _ = s.Close() }()
	ds, err := bench.StoreLatencies(cmd.Context(), s, label)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "%d\n", d.Nanoseconds())
	}
	_, err = fmt.Fprint(a.stdout, b.String())
	return err
}

// benchPostgres runs the benchmark on a scratch schema of the database loc names.
func benchPostgres(cmd *cobra.Command, a *app, loc string, opts bench.Options) error {
	e, drop, err := postgres.OpenScratch(cmd.Context(), loc, postgres.Options{Logger: a.logger})
	if err != nil {
		return err
	}
	defer func() { _ = drop() }()
	table, err := bench.Run(cmd.Context(), e, opts)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprint(a.stdout, table.Markdown()); err != nil {
		return err
	}
	if !table.Passed() {
		return exitError{code: exitFailure}
	}
	return nil
}

// writeCorpus writes the bench corpus as `mnemo import` lines: the item, and
// the status and expiry the load would give it (superseded entries are
// stored active, as the load stores them before superseding), and syncs it.
func writeCorpus(path string, opts bench.Options) error {
	f, err := os.Create(path)
	if err != nil {
		return contract.Invalid("--write-corpus %s: %w", path, err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var werr error
	corpus.Each(opts.Records, opts.Seed, func(_ int, en corpus.Entry) bool {
		js, err := en.Item.MarshalJSON()
		if err != nil {
			werr = err
			return false
		}
		line := map[string]any{"item": json.RawMessage(js)}
		if en.Status == contract.StatusCandidate {
			line["status"] = string(contract.StatusCandidate)
		}
		if en.ExpiresAt != nil {
			line["expires_at"] = en.ExpiresAt.UTC().Format(time.RFC3339Nano)
		}
		b, err := json.Marshal(line)
		if err == nil {
			_, err = w.Write(append(b, '\n'))
		}
		werr = err
		return err == nil
	})
	if werr == nil {
		werr = w.Flush()
	}
	// On disk before it is read: the after-import rows time `mnemo import`
	// of this file right after it is written, and the kernel writing its
	// pages back meanwhile slowed that import's commits (1M: 52.1 s from a
	// file just copied, 48.2 s from the same file once synced).
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return contract.EngineErr("write the corpus to %s: %w", path, werr)
	}
	return nil
}
