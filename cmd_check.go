package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"mnemo/cliout"
	"mnemo/contract"
	"mnemo/engine/bolt"
)

func newCheckCommand(a *app) *cobra.Command {
	var repair bool
	cmd := &cobra.Command{
		Use:   "check [--repair]",
		Short: "Verify the store's derived structures against its records; --repair rebuilds what disagrees",
		Long: `Read every record and compare what is derived from them (the ordered browse
keys, the per-namespace totals, the in-memory table, the vectors, the content
index and the search index) with the records, like "bbolt check" or SQLite's
"PRAGMA integrity_check". Prints a report with, per structure, how many entries
were compared and every disagreement counted with examples. --repair rebuilds
what disagrees (the records are the truth and are never changed) and checks
again. Exits 0 when the store is consistent, 1 otherwise. The check runs in the
process holding the store (this one, or the one other commands reach).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.openedStore(cmd.Context())
			if err != nil {
				return err
			}
			e, ok := s.Engine.(storeChecker)
			if !ok {
				return contract.Unsupported("mnemo check verifies a local store's derived structures; %s is not a local store", s.Label)
			}
			var bar *cliout.ProgressBar
			if a.isTerminal(a.stderr) {
				bar = cliout.NewProgressBar(a.stderr, 0, time.Now)
				bar.Verb = "checking"
			}
			rep, err := e.Check(cmd.Context(), repair, func(done, total int) {
				if bar != nil {
					bar.Total = int64(total)
					bar.Update(int64(done), done)
				}
			})
			if bar != nil {
				bar.Finish()
			}
			if err != nil {
				return err
			}
			if err := a.answer(rep, func(s *cliout.Screen) { cliout.DrawCheck(s, rep) }); err != nil {
				return err
			}
			if !rep.Consistent {
				return exitError{code: exitFailure}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&repair, "repair", false, "rebuild every structure that disagrees with the records, then check again")
	return cmd
}

// storeChecker is a local store: its check runs where the store is held.
type storeChecker interface {
	Check(ctx context.Context, repair bool, progress func(done, total int)) (bolt.CheckReport, error)
}
