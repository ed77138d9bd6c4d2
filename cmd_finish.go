package main

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"mnemo/engine/postgres"
	"mnemo/server/local"
	"mnemo/storeopen"
)

// finishImportCommand is the hidden command mnemo import starts, as a
// process of its own, to finish a large import's background work.
const finishImportCommand = "finish-import"

// finishAfter is what an import hands to its finisher: the store (a local
// store's directory, or a postgres:// URL whose load left its indexes to
// build), and whether to rewrite it with full pages once settled (a local
// store it filled from empty).
type finishAfter struct {
	dir     string
	compact bool
}

// newFinishImportCommand is `mnemo finish-import`: it takes the store an
// import has just let go and does what the import's own process would have
// done before exiting (bolt Settle): the search index and the content index
// caught up, every record embedded with the learned generation, then, with
// --compact, the full-page rewrite. Other processes use the store through it
// meanwhile, as through any holder. When another process took the store
// first, this one waits for it to let go, then takes over.
func newFinishImportCommand(a *app) *cobra.Command {
	var compact bool
	cmd := &cobra.Command{
		Use:    finishImportCommand,
		Short:  "Finish a large import's background work (mnemo import starts it)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			lowerPriority()
			// More Ps than cores: a call it serves finds an idle P rather
			// than queueing behind the background work, and the kernel
			// shares the cores (a browse of 50 through it while it worked
			// on a 100k import took 54-128 ms, median about 80, against
			// 66-180, median about 140, with one P a core).
			runtime.GOMAXPROCS(2 * runtime.NumCPU())
			return a.finishImport(cmd.Context(), finishAfter{dir: a.storeDir(), compact: compact})
		},
	}
	cmd.Flags().BoolVar(&compact, "compact", false, "then rewrite the store with full pages, as an import into an empty store does")
	return cmd
}

// handOffImport starts the finisher of an import whose store this process
// has let go (a.finishAfter), and says so on stderr. When it cannot be
// started, the work is done here, before exiting, as --wait does.
func (a *app) handOffImport(f finishAfter) {
	var args, env []string
	pg := postgres.IsURL(f.dir)
	if pg {
		// In the environment, not the arguments: any user's ps lists those,
		// and the URL may hold a password.
		env = []string{"MNEMO_DB=" + f.dir}
	} else {
		dir, err := filepath.Abs(f.dir)
		if err != nil {
			dir = f.dir
		}
		args = []string{"--db", dir}
	}
	if a.flags.config != "" {
		args = append(args, "--config", a.configPath)
	}
	if a.flags.debug {
		args = append(args, "--debug")
	}
	args = append(args, finishImportCommand)
	if f.compact {
		args = append(args, "--compact")
	}
	pid, err := a.startFinisher(args, env)
	if err == nil && pg {
		a.logger.Info("import: the finisher builds the indexes", "finisher", pid)
		fmt.Fprintf(a.stderr, "mnemo %s: the records are stored; process %d builds the search indexes and the facet counts in the background (reads are exact meanwhile, contains and keyword fetch slower; --wait waits)\n", a.filler(), pid)
		return
	}
	if err == nil {
		a.logger.Info("import: finishing in the background", "finisher", pid, "compact", f.compact)
		then := ""
		if f.compact {
			then = ", then rewrites the store with full pages"
		}
		how := "mnemo info shows how far"
		if a.filler() == "import" {
			how += "; --wait waits"
		}
		fmt.Fprintf(a.stderr, "mnemo %s: the records are stored; process %d catches the search index up and embeds them in the background%s (%s)\n", a.filler(), pid, then, how)
		return
	}
	a.logger.Warn("import: the finisher did not start; finishing here", "err", err)
	if err := a.finishImport(context.Background(), f); err != nil {
		a.logger.Warn("import: finishing", "err", err)
	}
}

// finisherEnv is env for the finisher: a profile file the import writes
// (MNEMO_CPUPROFILE, MNEMO_MEMPROFILE) is the finisher's with
// ".finish-import" added, so the two processes do not write one file.
func finisherEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, val, _ := strings.Cut(kv, "=")
		if (name == "MNEMO_CPUPROFILE" || name == "MNEMO_MEMPROFILE") && val != "" {
			kv += "." + finishImportCommand
		}
		out = append(out, kv)
	}
	return out
}

// finishImport opens the local store in f.dir, waits until this process
// holds it (awaitHolding), waits for its background work, lets it go and,
// with f.compact, rewrites it with full pages (compactImported, which skips
// the rewrite when another process has taken the store meanwhile).
func (a *app) finishImport(ctx context.Context, f finishAfter) error {
	opts := a.openOptions()
	opts.MustExist = true
	// The store's clusters are a long-lived holder's work (their first
	// pass over a 100k store took 11 s of this process's CPU, delaying
	// the rest); the next holder keeps them, from where any pass stopped.
	opts.Clusters = nil
	s, err := storeopen.Open(ctx, "", f.dir, opts)
	if err != nil {
		return err
	}
	// A PostgreSQL store: the indexes and counts its load left.
	if fl, ok := s.Engine.(interface{ FinishLeftLoad(context.Context) error }); ok {
		err := fl.FinishLeftLoad(ctx)
		if cerr := s.Close(); err == nil {
			err = cerr
		}
		return err
	}
	ls, ok := s.Engine.(*local.Store)
	if !ok {
		_ = s.Close()
		return usageError(fmt.Sprintf("%s finishes a local store's import; %s is not one", finishImportCommand, s.Label))
	}
	if err := a.awaitHolding(ctx, ls); err != nil {
		_ = s.Close()
		return err
	}
	// The records are embedded once, with the generation they keep.
	if err = ls.LearnFirst(ctx); err == nil {
		err = ls.WaitIdle(ctx)
	}
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if f.compact {
		a.compactImported(ls.Dir())
	}
	return nil
}

// finishPoll is how often a finisher that found the store held by another
// process looks whether that one has let it go.
const finishPoll = time.Second

// awaitHolding returns once this process holds the store. A command run
// right after the import may have taken it first: that process serves the
// others and catches the index up meanwhile, and when it lets go, this one
// takes the store over on its next call (a call to a holder that has
// stopped finds the store a new one), and finishes what is left.
func (a *app) awaitHolding(ctx context.Context, ls *local.Store) error {
	for told := false; ls.Role() != local.Holding; {
		if !told {
			a.logger.Info("import finisher: another process holds the store; taking it over when it lets go", "dir", ls.Dir())
			told = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(finishPoll):
		}
		if _, err := ls.Status(ctx); err != nil {
			a.logger.Debug("import finisher: asking the holder", "err", err)
		}
	}
	return nil
}
