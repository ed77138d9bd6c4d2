package main

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"mnemo/engine/curate"
	"os"

	"github.com/spf13/cobra"

	"mnemo/cliout"
	"mnemo/config"
	"mnemo/contract"
	"mnemo/engine/remote"
	"mnemo/importer"
	"mnemo/ui"
)

// demoCorpus is the built-in demo corpus (testdata/demo/demo.jsonl): about
// 1,500 memories of a software team's agents in the import line format.
//
//go:embed testdata/demo/demo.jsonl
var demoCorpus []byte

// tuiFlags are the TUI's own flags.
type tuiFlags struct {
	readOnly bool
	plain    bool
}

func newTUICommand(a *app) *cobra.Command {
	var f tuiFlags
	cmd := &cobra.Command{
		Use:   "tui",
		Short: "Open the terminal UI (the default command)",
		Long: `Open the terminal UI on the store (or on a server with --remote): explore by
facets, browse and sort, search, ask, review candidates and forget.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runTUI(cmd.Context(), f)
		},
	}
	cmd.Flags().BoolVar(&f.readOnly, "readonly", false, "no forget, no review")
	cmd.Flags().BoolVar(&f.plain, "plain", false, "ASCII borders and spinners")
	return cmd
}

// runTUI opens the engine and runs the TUI on the terminal until the user quits.
func (a *app) runTUI(ctx context.Context, f tuiFlags) error {
	if !a.hasTerminal() {
		return usageError("the TUI needs a terminal; in scripts use a command (see mnemo --help)")
	}
	keys, err := loadKeymap(a.cfg.Keys)
	if err != nil {
		return contract.ConfigErr("%s: %w", a.configPath, err)
	}
	s, err := a.openedStore(ctx)
	if err != nil {
		return err
	}
	readOnly := f.readOnly
	if !readOnly {
		// A reader's token over --remote: the TUI offers no write action.
		writes, err := remote.Writes(ctx, s.Engine)
		if err != nil {
			return err
		}
		readOnly = !writes
	}
	opts := ui.Options{
		Engine:     s.Engine,
		StoreLabel: s.Label,
		Keys:       keys,
		ReadOnly:   readOnly,
		Plain:      f.plain || a.cfg.Theme == config.ThemePlain,
		Mouse:      a.cfg.Mouse != nil && *a.cfg.Mouse,
		Logger:     a.logger,
		Live:       true,
		Curate:     a.cfg.CurateConfig(),
	}
	// Dismissed clusters are this user's, beside the other state (as
	// `mnemo clusters --dismiss` keeps them); a file that cannot be read
	// leaves the session its own.
	if d, err := curate.LoadDismissed(a.dismissedPath(), a.storeKey()); err == nil {
		opts.Dismissed = d
	} else {
		fmt.Fprintf(a.stderr, "mnemo: dismissed clusters are kept for this session only: %v\n", err)
	}
	// The process's own terminal is the TUI's default; other streams (tests,
	// pipes handed in by a host) are passed explicitly.
	if _, isFile := a.stdin.(*os.File); !isFile {
		opts.Input = a.stdin
	}
	if _, isFile := a.stdout.(*os.File); !isFile {
		opts.Output = a.stdout
	}
	if !readOnly {
		opts.LoadDemo = func(ctx context.Context) error {
			_, err := storeDemo(ctx, s.Engine)
			return err
		}
	}
	return ui.Run(ctx, opts)
}

// storeDemo stores the demo corpus; a second run replays it.
func storeDemo(ctx context.Context, e contract.Engine) (importer.Summary, error) {
	im := &importer.Importer{Engine: e, Batch: contract.MaxStoreMany, DefaultStatus: contract.StatusActive}
	summary, err := im.Run(ctx, bytes.NewReader(demoCorpus))
	if err == nil && summary.Failed > 0 {
		err = contract.EngineErr("the demo corpus has %d bad lines (first: line %d: %s)", summary.Failed,
			summary.Errors[0].Line, summary.Errors[0].Error)
	}
	return summary, err
}

func newDemoCommand(a *app) *cobra.Command {
	var noTUI bool
	var f tuiFlags
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Store the built-in demo corpus and open the TUI on it",
		Long: `Store the built-in demo corpus (about 1,500 memories of a software team's agents:
documents, conversations and learnings over namespaces, with candidates awaiting
review and some expiring records) and open the TUI. A second run replays: nothing
is stored twice. Prints the import summary; --no-tui only stores.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !noTUI && !a.hasTerminal() {
				return usageError("the TUI needs a terminal; use mnemo demo --no-tui to only store the corpus")
			}
			e, err := a.engine(cmd.Context())
			if err != nil {
				return err
			}
			summary, err := storeDemo(cmd.Context(), e)
			if werr := a.answer(summary, func(s *cliout.Screen) { cliout.DrawImport(s, summary, a.holds(cmd.Context(), e)) }); err == nil {
				err = werr
			}
			if err != nil || noTUI {
				return err
			}
			return a.runTUI(cmd.Context(), f)
		},
	}
	cmd.Flags().BoolVar(&noTUI, "no-tui", false, "only store the corpus")
	cmd.Flags().BoolVar(&f.plain, "plain", false, "ASCII borders and spinners")
	return cmd
}

// hasTerminal tells whether the TUI can run: the process's own stdin and stdout
// must be a terminal; streams handed in by a host (tests, SSH) are its business.
func (a *app) hasTerminal() bool {
	for _, stream := range []any{a.stdin, a.stdout} {
		if _, isFile := stream.(*os.File); isFile && !a.isTerminal(stream) {
			return false
		}
	}
	return true
}
