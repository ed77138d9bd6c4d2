package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"mnemo/bench"
	"mnemo/contract"
	"mnemo/engine/bolt"
)

func newBenchCommand(a *app) *cobra.Command {
	var (
		records    int
		seed       int64
		iterations int
		dir        string
	)
	cmd := &cobra.Command{
		Use:   "bench [--records N]",
		Short: "Benchmark a scratch store on a generated corpus and print a table",
		Long: `Generate the benchmark corpus, import it into a new scratch store (never your
store), time every shape of design.md section 8 (browse, explore, keyword fetch,
import throughput) and print a Markdown table with median, p95, the budget and the
SQLite peer's figure. Progress goes to stderr. Exits 0 when every row meets its
budget, 1 otherwise.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if records < 1 {
				return usageError("--records must be positive")
			}
			scratch := dir
			if scratch == "" {
				tmp, err := os.MkdirTemp("", "mnemo-bench-*")
				if err != nil {
					return contract.EngineErr("cannot create a scratch store: %v", err)
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
			defer func() { _ = e.Close() }()
			table, err := bench.Run(cmd.Context(), e, bench.Options{Records: records, Seed: seed, Iterations: iterations, Out: a.stderr})
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
		},
	}
	cmd.Flags().IntVar(&records, "records", 10_000, "corpus size")
	cmd.Flags().Int64Var(&seed, "seed", 1, "corpus seed")
	cmd.Flags().IntVar(&iterations, "iterations", 20, "measured rounds per shape")
	cmd.Flags().StringVar(&dir, "dir", "", "an empty directory for the scratch store (default: a temporary one, removed after)")
	return cmd
}
