// Command mnemo is a terminal explorer for AI-agent memory and the command line
// of the embedded memory engine under it: every operation of the contract is
// reachable from the shell with the contract's JSON in and out (docs/spec/cli.md).
//
// This file is the cobra wiring only; each command lives in a cmd_*.go file and
// talks to a contract.Engine opened by storeopen (engine.go says with what).
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes one mnemo invocation and returns its exit code (docs/spec/cli.md section 3).
// Tests call it in-process with their own streams.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return newApp(stdin, stdout, stderr).execute(args)
}

// execute runs the command line args on this app and returns the exit code.
func (a *app) execute(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// MNEMO_CPUPROFILE=FILE writes a CPU profile of the whole run (the
	// README's performance figures say where the time goes from these).
	if path := os.Getenv("MNEMO_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil && pprof.StartCPUProfile(f) == nil {
			defer func() {
				pprof.StopCPUProfile()
				_ = f.Close()
			}()
		}
	}
	defer a.close()
	// MNEMO_MEMPROFILE=FILE writes a heap profile when the command ends,
	// before the store closes (what a long-lived process holds).
	if path := os.Getenv("MNEMO_MEMPROFILE"); path != "" {
		defer func() {
			if f, err := os.Create(path); err == nil {
				_ = pprof.WriteHeapProfile(f)
				_ = f.Close()
			}
		}()
	}
	root := newRootCommand(a)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	return a.report(err)
}

// commandConstructors lists every subcommand. A helper adding a command (serve,
// audit, mcp) appends its constructor here.
var commandConstructors = []func(*app) *cobra.Command{
	newTUICommand,
	newDemoCommand,
	newImportCommand,
	newExportCommand,
	newCopyCommand,
	newStoreCommand,
	newGetCommand,
	newListCommand,
	newFetchCommand,
	newRecallCommand,
	newExploreCommand,
	newNarrowCommand,
	newBrowseCommand,
	newForgetCommand,
	newReviewCommand,
	newSupersedeCommand,
	newClustersCommand,
	newConsolidateCommand,
	newBeliefsCommand,
	newFingerprintCommand,
	newHealthCommand,
	newInfoCommand,
	newConformanceCommand,
	newBenchCommand,
	newMCPCommand,
	newCompletionCommand,
	newServeCommand,
	newAuditCommand,
	newCheckCommand,
	newCompactCommand,
	newBackupCommand,
	newRestoreCommand,
	newWatchCommand,
	newFinishImportCommand,
}

func newRootCommand(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "mnemo",
		Short: "Explore, search and curate the memory of AI agents",
		Long: `mnemo is a terminal explorer for AI-agent memory and the embedded memory engine under it.

With no subcommand it opens the TUI on the store (same as "mnemo tui"). Every other
command speaks the memory contract's JSON on stdin and stdout, so scripts and agents
use the same store as the TUI. On a terminal the answers are tables and text for a
person instead; piped, or with --json (-o json), they are the contract JSON.`,
		Args:              cobra.NoArgs,
		SilenceErrors:     true,
		SilenceUsage:      true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return a.setup(cmd) },
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runTUI(cmd.Context(), tuiFlags{})
		},
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SuggestionsMinimumDistance = 2
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return commandUsageError(c, err.Error()) })

	pf := root.PersistentFlags()
	pf.StringVar(&a.flags.db, "db", "", "the store: a directory or a postgres:// URL (env MNEMO_DB; default $XDG_DATA_HOME/mnemo)")
	pf.StringVar(&a.flags.remote, "remote", "", "talk to a running \"mnemo serve\" at this URL (env MNEMO_REMOTE; token from MNEMO_TOKEN)")
	pf.StringVar(&a.flags.config, "config", "", "config file (default $XDG_CONFIG_HOME/mnemo/config.toml)")
	pf.BoolVar(&a.flags.debug, "debug", false, "log to $XDG_STATE_HOME/mnemo/mnemo.log (never to the terminal)")
	pf.BoolVar(&a.flags.json, "json", false, "print the contract JSON even on a terminal (same as -o json)")
	pf.StringVarP(&a.flags.output, "output", "o", "", "json: the contract JSON; text: the human form even when piped (default: text on a terminal, JSON otherwise)")

	for _, build := range commandConstructors {
		root.AddCommand(build(a))
	}
	usageArgs(root)
	return root
}

// usageArgs makes every command's argument errors usage errors (exit 2) that
// say what the command takes; an unknown subcommand gets cobra's suggestions.
func usageArgs(cmd *cobra.Command) {
	if check := cmd.Args; check != nil {
		cmd.Args = func(c *cobra.Command, args []string) error {
			if err := check(c, args); err != nil {
				if !c.HasParent() && len(args) > 0 {
					return unknownCommandError(c, args[0])
				}
				return commandUsageError(c, err.Error())
			}
			return nil
		}
	}
	for _, sub := range cmd.Commands() {
		usageArgs(sub)
	}
}
