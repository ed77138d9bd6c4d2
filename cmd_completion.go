package main

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"mnemo/cliout"
	"mnemo/contract"
	"mnemo/ui/common"
)

func newCompletionCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "Print a shell completion script",
		Long: `Print the completion script for a shell. For example:

  mnemo completion bash > ~/.local/share/bash-completion/completions/mnemo
  mnemo completion zsh > "${fpath[1]}/_mnemo"
  mnemo completion fish > ~/.config/fish/completions/mnemo.fish

Completion knows the store: facet names for explore and narrow, the fetch
modes the engine declares, and, when the store opens within a moment, the
namespaces, tags and other facet values for narrow and the ids for get,
review, supersede and forget --ids.`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"bash", "zsh", "fish"},
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(a.stdout, true)
			case "zsh":
				return root.GenZshCompletion(a.stdout)
			case "fish":
				return root.GenFishCompletion(a.stdout, true)
			}
			return contract.Invalid("no completion for shell `%s`; choose bash, zsh or fish", args[0])
		},
	}
}

// completionBudget is how long a completion may spend opening the store and
// reading from it; past it, the shell gets no store values rather than a wait.
const completionBudget = 1500 * time.Millisecond

// completionLockTimeout is how long a completion waits for another process's
// lock on the store (a running server is attached to instead, as usual).
const completionLockTimeout = 150 * time.Millisecond

// completionLimit bounds the values one completion offers.
const completionLimit = 200

// completeFromStore runs read on the store when it opens within the budget,
// and answers no completions (and no file names) otherwise: a missing store
// is never created by a completion, and a slow one never holds up the shell.
func (a *app) completeFromStore(cmd *cobra.Command, read func(ctx context.Context, e contract.Engine) []cobra.Completion) ([]cobra.Completion, cobra.ShellCompDirective) {
	if err := a.setup(cmd); err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	if a.remoteURL() == "" {
		if _, err := os.Stat(a.storeDir()); err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), completionBudget)
	defer cancel()
	a.lockTimeout = completionLockTimeout
	done := make(chan []cobra.Completion, 1)
	go func() {
		s, err := a.openEngine(ctx)
		if err != nil {
			done <- nil
			return
		}
		comps := read(ctx, s.Engine)
		_ = s.Close()
		done <- comps
	}()
	select {
	case comps := <-done:
		return comps, cobra.ShellCompDirectiveNoFileComp
	case <-ctx.Done():
		// The open goes on in the background and closes what it opened; the
		// process ends with the completion anyway.
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeIDs offers the ids of the newest records, each with its text.
func (a *app) completeIDs(cmd *cobra.Command, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return a.completeFromStore(cmd, func(ctx context.Context, e contract.Engine) []cobra.Completion {
		page, err := e.List(ctx, contract.ListRequest{Limit: completionLimit})
		if err != nil {
			return nil
		}
		var comps []cobra.Completion
		for _, h := range page.Items {
			if strings.HasPrefix(h.ID, toComplete) {
				comps = append(comps, cobra.CompletionWithDesc(h.ID, common.Cut(common.OneLine(h.Text), 60)))
			}
		}
		return comps
	})
}

// completeFacetValues offers the values of a facet in the store, most
// frequent first, each with its count.
func (a *app) completeFacetValues(cmd *cobra.Command, facet contract.Facet, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return a.completeFromStore(cmd, func(ctx context.Context, e contract.Engine) []cobra.Completion {
		page, err := e.Explore(ctx, contract.ExploreRequest{Facet: facet, Limit: contract.MaxBuckets})
		if err != nil {
			return nil
		}
		var comps []cobra.Completion
		for _, b := range page.Buckets {
			if b.Value != "" && strings.HasPrefix(b.Value, toComplete) {
				comps = append(comps, cobra.CompletionWithDesc(b.Value, cliout.Counted(b.Count, "record", "records")))
			}
		}
		return comps
	})
}

// completeFacets offers the facet names, for explore and narrow.
func completeFacets(toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var comps []cobra.Completion
	for _, f := range facetNames() {
		if strings.HasPrefix(f, toComplete) {
			comps = append(comps, f)
		}
	}
	return comps, cobra.ShellCompDirectiveNoFileComp
}

// completeModes offers the fetch modes the engine declares (all three when
// the store cannot be opened quickly).
func (a *app) completeModes(cmd *cobra.Command, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	comps, dir := a.completeFromStore(cmd, func(_ context.Context, e contract.Engine) []cobra.Completion {
		var comps []cobra.Completion
		for _, m := range e.Descriptor().FetchModes {
			comps = append(comps, string(m))
		}
		return comps
	})
	if comps == nil {
		comps = []cobra.Completion{string(contract.ModeKeyword), string(contract.ModeVector), string(contract.ModeHybrid)}
	}
	var out []cobra.Completion
	for _, c := range comps {
		if strings.HasPrefix(c, toComplete) {
			out = append(out, c)
		}
	}
	return out, dir
}

// idArgs completes every positional argument with ids.
func (a *app) idArgs(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return a.completeIDs(cmd, toComplete)
}

// firstIDArg completes the first positional argument with ids, and nothing after it.
func (a *app) firstIDArg(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return a.completeIDs(cmd, toComplete)
}

// idFlag completes a flag's value with ids.
func (a *app) idFlag(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return a.completeIDs(cmd, toComplete)
}
