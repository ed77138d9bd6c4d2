package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"mnemo/cliout"
	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/postgres"
	"mnemo/server/local"
)

func newCompactCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "compact",
		Short: "Rewrite the store's file with full pages, giving back the space its pages leave empty",
		Long: `Rewrite mnemo.db with every page full and print its size before and after.
Records arrive keyed by ids and times in no order, so bbolt's pages end up
about half to two thirds full, and bbolt never returns freed space to the file
system. The copy is written beside the store and renamed over it, so a crash
leaves the old file or the new one; records, ids, sequence numbers and the
change feed are unchanged, and so the search index and the other derived
files stay valid. Records written before the store had its record dictionary
(a store of an earlier release, or a new store's first few hundred) are
rewritten compressed against it, which takes them from about 850 to 450
bytes on the bench corpus. The search index is then merged into one or two segments,
which answer keyword fetch faster than the many a bulk load leaves (at 1M records,
p50 3.0 ms against 4.4 to 4.9). Needs the store to itself: it refuses, naming
the process, while another mnemo process uses the store.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir := a.storeDir()
			if postgres.IsURL(dir) {
				return contract.Invalid("mnemo compact rewrites a directory store; PostgreSQL gives space back with VACUUM FULL")
			}
			if h, ok := local.Held(dir); ok {
				return contract.Unavailable("mnemo compact rewrites the store's file and needs it to itself: process %d holds %s (a TUI, an agent's mnemo mcp, a server or a script); stop it and run compact again", h.PID, dir)
			}
			rep, err := bolt.Compact(dir)
			if err != nil {
				return err
			}
			return a.answer(rep, func(s *cliout.Screen) {
				s.KeyValues([][2]string{
					{"store", rep.Dir},
					{"before", humanBytes(rep.Before)},
					{"after", humanBytes(rep.After)},
					{"search index before", humanBytes(rep.IndexBefore)},
					{"search index after", humanBytes(rep.IndexAfter)},
				})
			})
		},
	}
}

// humanBytes prints a size in binary units, one decimal.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
