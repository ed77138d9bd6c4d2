package main

import (
	"encoding/json"
	"path/filepath"

	"github.com/spf13/cobra"

	"mnemo/cliout"
	"mnemo/contract"
	"mnemo/engine/curate"
	"mnemo/jsonerr"
)

// clustersApplied is what `mnemo clusters --apply` prints; --undo reads it back.
type clustersApplied struct {
	DryRun     bool          `json:"dry_run"`
	Keep       curate.Keep   `json:"keep"`
	Steps      []curate.Step `json:"steps"`
	Superseded int           `json:"superseded"`
	Done       []curate.Done `json:"done"`
}

func newClustersCommand(a *app) *cobra.Command {
	var filter, keep, dismiss string
	var limit int
	var apply, dryRun, undo bool
	cmd := &cobra.Command{
		Use:   "clusters [--filter JSON] [--limit N] [--apply --keep newest|confident [--dry-run] | --undo | --dismiss KEY]",
		Short: "List repeats and conflicts in a scope, and resolve them",
		Long: `List the clusters of a scope: records of one kind that say the same thing (repeats)
or the same thing with another value (conflicts), largest first. Counts are exact for
the scope (its active and candidate records). Piped, or with --json, prints
{"records","clustered","count","conflicts","dismissed","clusters":[{"key","kind",
"conflict","differences","size","members":[{"id",...}]}],"kept"}, the suggested keeper
first. "kept" says the clusters were read from what the store keeps: the process that
holds a local store (the TUI, serve, mcp, watch) clusters all of it in the background
and keeps it up to date; without one, the scope is clustered by a pass over it.

--apply --keep newest|confident resolves every listed cluster: the newest member
(observed_at, else created_at) or the most confident stays and supersedes the rest.
--dry-run prints the steps and changes nothing. The answer's "done" list undoes it:
pipe it back into "mnemo clusters --undo". --dismiss KEY says a cluster's records
are different: it stays hidden until a new record joins it (docs/curation.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if dryRun && !apply {
				return usageError("--dry-run goes with --apply")
			}
			if apply && (undo || dismiss != "") || undo && dismiss != "" {
				return usageError("give one of --apply, --undo and --dismiss")
			}
			if cmd.Flags().Changed("keep") && !apply {
				return usageError("--keep goes with --apply")
			}
			if limit < 0 {
				return usageError("--limit must not be negative")
			}
			e, err := a.engine(ctx)
			if err != nil {
				return err
			}
			if undo {
				var in clustersApplied
				if err := json.NewDecoder(a.stdin).Decode(&in); err != nil {
					return contract.Invalid("--undo reads the JSON that --apply printed on stdin: %s", jsonerr.Text(err))
				}
				if err := curate.Undo(ctx, e, in.Done); err != nil {
					return err
				}
				return a.writeJSON(map[string]int{"restored": len(in.Done)})
			}
			f, err := parseFilterFlag("--filter", filter)
			if err != nil {
				return err
			}
			dismissed, err := curate.LoadDismissed(a.dismissedPath(), a.storeKey())
			if err != nil {
				return contract.ConfigErr("%s", err)
			}
			found, records, kept, err := curate.Clusters(ctx, e, f, a.cfg.CurateConfig())
			if err != nil {
				return err
			}
			clusters, hidden := dismissed.Visible(found)
			if dismiss != "" {
				for _, c := range clusters {
					if c.Key == dismiss {
						if err := dismissed.Dismiss(c); err != nil {
							return contract.EngineErr("%s", err)
						}
						return a.writeJSON(map[string]any{"dismissed": c.Key, "members": c.IDs()})
					}
				}
				return contract.NotFound("no cluster %s in this scope (it may be resolved or dismissed already)", dismiss)
			}
			if limit > 0 && len(clusters) > limit && apply {
				clusters = clusters[:limit]
			}
			if apply {
				k, err := curate.ParseKeep(keep)
				if err != nil {
					return usageError(err.Error())
				}
				out := clustersApplied{DryRun: dryRun, Keep: k, Steps: curate.Plan(clusters, k), Done: []curate.Done{}}
				for _, s := range out.Steps {
					out.Superseded += len(s.Supersede)
				}
				if !dryRun {
					if out.Done, err = curate.Apply(ctx, e, out.Steps); err != nil {
						return err
					}
				}
				return a.writeJSON(out)
			}
			rep := curate.NewReport(records, clusters, hidden, limit)
			rep.Kept = kept
			return a.answer(rep, func(s *cliout.Screen) { cliout.DrawClusters(s, rep) })
		},
	}
	cmd.Flags().StringVar(&filter, "filter", "", "a MetaFilter as JSON: the scope")
	cmd.Flags().IntVar(&limit, "limit", 0, "print (or apply) at most this many clusters, largest first (0: all)")
	cmd.Flags().BoolVar(&apply, "apply", false, "resolve the clusters: keep one member, supersede the rest")
	cmd.Flags().StringVar(&keep, "keep", string(curate.KeepNewest), "with --apply: newest or confident")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "with --apply: print what would change, change nothing")
	cmd.Flags().BoolVar(&undo, "undo", false, "take back an --apply: reads its JSON answer on stdin")
	cmd.Flags().StringVar(&dismiss, "dismiss", "", "say the cluster with this key holds different records")
	return cmd
}

// dismissedPath is where dismissed clusters are kept.
func (a *app) dismissedPath() string {
	return filepath.Join(a.settings.StateDir, "dismissed.json")
}

// storeKey names the store dismissals belong to: the server, else the store.
func (a *app) storeKey() string {
	if url := a.remoteURL(); url != "" {
		return url
	}
	return a.storeDir()
}

// reachOrAll reads a --reach flag; none means the whole tree.
func reachOrAll(value string) (contract.Reach, error) {
	r, err := parseReachFlag("--reach", value)
	if err != nil || r != nil {
		if r == nil {
			return contract.Reach{}, err
		}
		return *r, err
	}
	return contract.ReachSubtree(contract.Namespace{}), nil
}

func newConsolidateCommand(a *app) *cobra.Command {
	var reach string
	var kinds []string
	cmd := &cobra.Command{
		Use:   "consolidate [--reach JSON] [--kind KIND]...",
		Short: "Run the contract's consolidate on a reach",
		Long: `Ask the engine to build beliefs for a reach (default: the whole tree), limited to
some kinds with --kind. Prints the ConsolidateReceipt {"status","scopes","built"?}.
mnemo's engines consolidate on demand: beliefs are derived from the reach's clusters
when read, so this counts them and completes (docs/curation.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := reachOrAll(reach)
			if err != nil {
				return err
			}
			req := contract.ConsolidateRequest{Reach: r}
			for _, k := range kinds {
				req.Kinds = append(req.Kinds, contract.ItemKind(k))
			}
			if err := req.Validate(); err != nil {
				return err
			}
			e, err := a.engine(cmd.Context())
			if err != nil {
				return err
			}
			rec, err := contract.Consolidate(cmd.Context(), e, req)
			if err != nil {
				return err
			}
			return a.writeJSON(rec)
		},
	}
	cmd.Flags().StringVar(&reach, "reach", "", "the part of the tree (a Reach as JSON); default: all of it")
	cmd.Flags().StringArrayVar(&kinds, "kind", nil, "consolidate only this kind (document, conversation, learning); repeatable")
	return cmd
}

func newBeliefsCommand(a *app) *cobra.Command {
	var reach, query string
	var limit int
	cmd := &cobra.Command{
		Use:   "beliefs [--reach JSON] [--query TEXT] [--limit N]",
		Short: "Read the contract's beliefs: one learning per cluster",
		Long: `Print the beliefs of a reach (default: the whole tree) as a JSON array of hits:
one learning per cluster of repeats or conflicts, tagged belief, holding the kept
(newest) statement, a confidence drawn from its members and the members' ids as
"evidence". Ranked for --query when given, else most confident first.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := reachOrAll(reach)
			if err != nil {
				return err
			}
			req := contract.BeliefsRequest{Reach: r, Limit: limit}
			if cmd.Flags().Changed("query") {
				req.Query = &query
			}
			if err := req.Validate(); err != nil {
				return err
			}
			e, err := a.engine(cmd.Context())
			if err != nil {
				return err
			}
			hits, err := contract.Beliefs(cmd.Context(), e, req)
			if err != nil {
				return err
			}
			return a.writeJSON(hits)
		},
	}
	cmd.Flags().StringVar(&reach, "reach", "", "the part of the tree (a Reach as JSON); default: all of it")
	cmd.Flags().StringVar(&query, "query", "", "rank beliefs for this text")
	cmd.Flags().IntVar(&limit, "limit", 20, "at most this many beliefs")
	return cmd
}
