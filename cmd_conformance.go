package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"mnemo/contract"
	"mnemo/contract/conformance"
	"mnemo/engine/bolt"
)

func newConformanceCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "conformance [--remote URL]",
		Short: "Run the contract's conformance suite against a scratch store or a server",
		Long: `Run every check of the conformance suite and print one line per check (PASS,
SKIP or FAIL with the reason). Without --remote the suite runs against a new
scratch store in a temporary directory, never against your store; with --remote
it runs against that server (the suite leaves foreign data untouched). Exits 0
when every check passes or is skipped, 1 otherwise.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			var e contract.Engine
			target := ""
			if url := a.remoteURL(); url != "" {
				s, err := a.openedStore(ctx)
				if err != nil {
					return err
				}
				e, target = s.Engine, s.Label
			} else {
				dir, err := os.MkdirTemp("", "mnemo-conformance-*")
				if err != nil {
					return contract.EngineErr("cannot create a scratch store: %w", err)
				}
				defer func() { _ = os.RemoveAll(dir) }()
				scratch, err := bolt.Open(dir, bolt.Options{LockTimeout: storeLockTimeout, Logger: a.logger})
				if err != nil {
					return err
				}
				defer func() { _ = scratch.Close() }()
				e, target = scratch, "a scratch store"
			}
			fmt.Fprintf(a.stdout, "conformance of %s (%s)\n", e.Descriptor().Label, target)
			report := conformance.Run(ctx, e)
			passed, skipped, failed := 0, 0, 0
			for _, r := range report.Results {
				switch {
				case r.Skipped:
					skipped++
					fmt.Fprintf(a.stdout, "SKIP  %-32s %s\n", r.Name, oneLine(r.Detail))
				case r.Passed:
					passed++
					fmt.Fprintf(a.stdout, "PASS  %-32s %s\n", r.Name, r.Duration.Round(time.Millisecond))
				default:
					failed++
					fmt.Fprintf(a.stdout, "FAIL  %-32s %s\n", r.Name, oneLine(r.Detail))
				}
			}
			fmt.Fprintf(a.stdout, "%d passed, %d skipped, %d failed\n", passed, skipped, failed)
			if failed > 0 {
				return exitError{code: exitFailure}
			}
			return nil
		},
	}
}
