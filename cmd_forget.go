package main

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"mnemo/cliout"
	"mnemo/contract"
	"mnemo/server/wire"
)

// forgetPlan is a validated forget: what to remove and how.
type forgetPlan struct {
	ids    []string
	reach  *contract.Reach
	filter *contract.MetaFilter
}

// dryRunFirst is how many records a dry run by filter lists.
const dryRunFirst = 10

// forgetAnswer is forget's answer, as the HTTP API's: how many records went,
// and how many named ids were left alone (absent, or outside the reach).
type forgetAnswer = wire.ForgetAnswer

func newForgetCommand(a *app) *cobra.Command {
	var (
		ids    []string
		reach  string
		filter string
		dryRun bool
		yes    bool
	)
	cmd := &cobra.Command{
		Use:   "forget (--ids ID... [--reach JSON] | --filter JSON)",
		Short: "Remove items by id or by filter",
		Long: `Remove items from every read path. Either by id (--ids a,b or --ids a --ids b;
with --reach only ids inside that reach are removed, through forget_within) or by
filter (--filter JSON; an empty filter, which would mean everything, is refused).
Prints a ForgetReport. --dry-run reports what would go without removing anything.
On a terminal, mnemo asks before forgetting unless --yes is given.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			plan, err := planForget(cmd, splitIDs(ids), reach, filter)
			if err != nil {
				return err
			}
			e, err := a.engine(cmd.Context())
			if err != nil {
				return err
			}
			interactive := !yes && a.isTerminal(a.stdin) && a.isTerminal(a.stderr)
			if dryRun || interactive {
				report, err := plan.dryRun(cmd.Context(), e)
				if err != nil {
					return err
				}
				if dryRun {
					return a.answer(report, func(s *cliout.Screen) { cliout.DrawDryRun(s, report) })
				}
				if report.WouldForget == 0 {
					none := forgetAnswer{Skipped: len(plan.ids)}
					return a.answer(none, func(s *cliout.Screen) { cliout.DrawForget(s, none, plan.skipReason(e)) })
				}
				if len(report.First) > 0 {
					s := a.out().NewScreenOn(a.stderr)
					cliout.DrawDryRunList(s, report)
					_ = s.Flush()
				}
				if !a.confirm(fmt.Sprintf("forget %d %s? [y/N] ", report.WouldForget, cliout.Plural(report.WouldForget, "record", "records"))) {
					return errAborted
				}
			}
			report, err := plan.run(cmd.Context(), e)
			if err != nil {
				return err
			}
			return a.answer(report, func(s *cliout.Screen) { cliout.DrawForget(s, report, plan.skipReason(e)) })
		},
	}
	cmd.Flags().StringSliceVar(&ids, "ids", nil, "ids to forget (comma-separated or repeated)")
	_ = cmd.RegisterFlagCompletionFunc("ids", a.idFlag)
	cmd.Flags().StringVar(&reach, "reach", "", "with --ids: forget only ids inside this Reach (JSON)")
	cmd.Flags().StringVar(&filter, "filter", "", "forget everything this MetaFilter (JSON) matches")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "report what would be forgotten without removing it")
	cmd.Flags().BoolVar(&yes, "yes", false, "do not ask for confirmation")
	return cmd
}

// planForget checks the flags and the target before any storage work.
func planForget(cmd *cobra.Command, ids []string, reach, filter string) (forgetPlan, error) {
	var plan forgetPlan
	byIDs, byFilter := cmd.Flags().Changed("ids"), cmd.Flags().Changed("filter")
	switch {
	case byIDs && byFilter:
		return plan, usageError("forget takes --ids or --filter, not both")
	case !byIDs && !byFilter:
		return plan, usageError("forget needs --ids ID... or --filter JSON")
	case byFilter && cmd.Flags().Changed("reach"):
		return plan, usageError("--reach goes with --ids; put a reach inside the --filter instead")
	}
	if byFilter {
		f, err := parseFilterFlag("--filter", filter)
		if err != nil {
			return plan, err
		}
		if err := contract.ForgetFilter(f).Validate(); err != nil {
			return plan, err
		}
		plan.filter = &f
		return plan, nil
	}
	r, err := parseReachFlag("--reach", reach)
	if err != nil {
		return plan, err
	}
	deduped, err := contract.ForgetWithinIDs(ids)
	if err != nil {
		return plan, err
	}
	plan.ids, plan.reach = deduped, r
	return plan, nil
}

// dryRun counts what the plan would remove: ids through get (under the reach),
// a filter through browse's exact total (every status, expired records too,
// as forget takes them), with its first records.
func (p forgetPlan) dryRun(ctx context.Context, e contract.Engine) (cliout.DryRun, error) {
	if p.filter != nil {
		page, err := e.Browse(ctx, contract.BrowseQuery{Filter: *p.filter, Limit: dryRunFirst})
		if err != nil {
			return cliout.DryRun{}, err
		}
		rep := cliout.DryRun{DryRun: true, WouldForget: page.Total, More: max(page.Total-len(page.Records), 0)}
		for _, r := range page.Records {
			rep.First = append(rep.First, cliout.DryRunRecord{ID: r.ID, Text: r.Text, Namespace: r.Meta.Namespace, CreatedAt: contract.FormatMillis(r.CreatedAt)})
		}
		return rep, nil
	}
	hits, err := contract.GetInChunks(ctx, e, p.ids, p.reach)
	if err != nil {
		return cliout.DryRun{}, err
	}
	found := make([]string, 0, len(hits))
	for _, h := range hits {
		found = append(found, h.ID)
	}
	return cliout.DryRun{DryRun: true, WouldForget: len(found), IDs: found}, nil
}

// counter is a server's client: its forgets say how many ids the server
// left alone (engine/remote).
type counter interface {
	ForgetCounted(ctx context.Context, target contract.ForgetTarget) (wire.ForgetAnswer, error)
	ForgetWithinCounted(ctx context.Context, ids []string, reach contract.Reach) (wire.ForgetAnswer, error)
}

// run forgets; a forget by ids says how many it skipped (the server's count,
// or the ids named that did not go).
func (p forgetPlan) run(ctx context.Context, e contract.Engine) (forgetAnswer, error) {
	if p.filter != nil {
		rep, err := e.Forget(ctx, contract.ForgetFilter(*p.filter))
		return forgetAnswer{Forgotten: rep.Forgotten}, err
	}
	if c, ok := e.(counter); ok {
		if p.reach != nil {
			return c.ForgetWithinCounted(ctx, p.ids, *p.reach)
		}
		return c.ForgetCounted(ctx, contract.ForgetIDs(p.ids...))
	}
	var rep contract.ForgetReport
	var err error
	if p.reach != nil {
		rep, err = contract.ForgetWithin(ctx, e, p.ids, *p.reach)
	} else {
		rep, err = e.Forget(ctx, contract.ForgetIDs(p.ids...))
	}
	return forgetAnswer{Forgotten: rep.Forgotten, Skipped: max(len(p.ids)-rep.Forgotten, 0)}, err
}

// skipReason says why a forget by ids leaves an id alone.
func (p forgetPlan) skipReason(e contract.Engine) string {
	switch {
	case isCounterEngine(e):
		return "not in the store, or outside what your token may change"
	case p.reach != nil:
		return "not in the store, or outside --reach"
	}
	return "not in the store"
}

func isCounterEngine(e contract.Engine) bool {
	_, ok := e.(counter)
	return ok
}

// confirm asks a yes/no question on stderr and reads the answer from stdin.
func (a *app) confirm(question string) bool {
	fmt.Fprint(a.stderr, question)
	line, _ := bufio.NewReader(a.stdin).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	return false
}
