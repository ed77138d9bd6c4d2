package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"mnemo/cliout"
	"mnemo/contract"
	"mnemo/paging"
)

// defaultPageLimit is the page size of list, fetch and recall when --limit is unset.
const defaultPageLimit = 10

// allPageLimit is the page size list --all walks with.
const allPageLimit = 200

func newGetCommand(a *app) *cobra.Command {
	var reach string
	cmd := &cobra.Command{
		Use:   "get ID...",
		Short: "Read items by id, in the order named",
		Long: `Read items by id. Prints a JSON array of hits in the order the ids were named;
ids that do not exist, or lie outside --reach, are left out.`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: a.idArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := parseReachFlag("--reach", reach)
			if err != nil {
				return err
			}
			req := contract.GetRequest{IDs: args, Reach: r}
			return ask(cmd, a, req, func(e contract.Engine, ctx context.Context, req contract.GetRequest) ([]contract.Hit, error) {
				hits, err := e.Get(ctx, req)
				return contract.EmptyIfNil(hits), err
			}, cliout.DrawGet)
		},
	}
	cmd.Flags().StringVar(&reach, "reach", "", "only ids this Reach admits (JSON, e.g. '{\"at\":\"team:acme\",\"descendants\":true}')")
	return cmd
}

// browseCounts says in words what a browse's total counts: which statuses,
// and whether expired records are in it (they are unless the query names a
// now), so the number reads the same as info's and the TUI's.
func browseCounts(q contract.BrowseQuery) string {
	what := "every status"
	if q.Status != nil {
		names := make([]string, len(q.Status))
		for i, st := range q.Status {
			names[i] = string(st)
			if st == contract.StatusCandidate {
				names[i] = "to review"
			}
		}
		what = strings.Join(names, ", ")
	}
	if q.Now == nil {
		return what + ", expired ones included"
	}
	return what + ", expired ones left out"
}

// checkPageLimit refuses a page larger than browse's (contract.BrowseMaxLimit),
// as browse does and as a server does for every listing: one rule for every
// read that pages, the limit named in the message.
func checkPageLimit(op string, n int, rest string) error {
	if n > contract.BrowseMaxLimit {
		return contract.Invalid("%s --limit must be at most %s, not %s; %s", op, cliout.Count(contract.BrowseMaxLimit), cliout.Count(n), rest)
	}
	return nil
}

func newListCommand(a *app) *cobra.Command {
	var (
		filter string
		limit  int
		cursor string
		all    bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List items without a query, newest first",
		Long: `List items without a query, newest first (created_at descending, then id).
Prints a ListPage; pass its next_cursor to --cursor for the next page. With --all,
prints every matching hit as JSON lines, walking every page.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := parseFilterFlag("--filter", filter)
			if err != nil {
				return err
			}
			req := contract.ListRequest{Filter: f, Limit: limit}
			if cursor != "" {
				req.Cursor = &cursor
			}
			if all && !cmd.Flags().Changed("limit") {
				req.Limit = allPageLimit
			}
			if err := req.Validate(); err != nil {
				return err
			}
			if err := checkPageLimit("list", req.Limit, "--all walks every page"); err != nil {
				return err
			}
			e, err := a.engine(cmd.Context())
			if err != nil {
				return err
			}
			if !all {
				page, err := e.List(cmd.Context(), req)
				if err != nil {
					return err
				}
				return a.answer(page, func(s *cliout.Screen) { cliout.DrawList(s, page) })
			}
			if a.human() {
				var hits []contract.Hit
				err := paging.Walk(req.Cursor, "list", func(c *string) (*string, error) {
					req.Cursor = c
					page, err := e.List(cmd.Context(), req)
					hits = append(hits, page.Items...)
					return page.NextCursor, err
				})
				if err != nil {
					return err
				}
				return a.answer(nil, func(s *cliout.Screen) { cliout.DrawList(s, contract.ListPage{Items: hits}) })
			}
			out := cliout.NewJSONLines(a.stdout)
			err = paging.Walk(req.Cursor, "list", func(c *string) (*string, error) {
				req.Cursor = c
				page, err := e.List(cmd.Context(), req)
				if err != nil {
					return nil, err
				}
				for _, h := range page.Items {
					if err := out.Write(h); err != nil {
						return nil, err
					}
				}
				return page.NextCursor, nil
			})
			if ferr := out.Flush(); err == nil {
				err = ferr
			}
			return err
		},
	}
	cmd.Flags().StringVar(&filter, "filter", "", "a MetaFilter as JSON, e.g. '{\"tags_any\":[\"style\"],\"kinds\":[\"learning\"]}'")
	cmd.Flags().IntVar(&limit, "limit", defaultPageLimit, "items per page (with --all: per request)")
	cmd.Flags().StringVar(&cursor, "cursor", "", "continue after a previous page's next_cursor")
	cmd.Flags().BoolVar(&all, "all", false, "print every matching hit as JSON lines")
	return cmd
}

func newFetchCommand(a *app) *cobra.Command {
	var (
		mode   string
		filter string
		limit  int
		cursor string
	)
	cmd := &cobra.Command{
		Use:   "fetch QUERY...",
		Short: "Ranked retrieval: keyword, vector or hybrid",
		Long: `Ranked retrieval of raw items for a query (the words are joined by spaces).
Prints a FetchPage. --mode defaults to hybrid when the engine offers it. Candidates
and superseded records are hidden unless the filter names them in "statuses".`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := parseFilterFlag("--filter", filter)
			if err != nil {
				return err
			}
			req := contract.FetchRequest{Query: strings.Join(args, " "), Filter: f, Limit: limit}
			if cursor != "" {
				req.Cursor = &cursor
			}
			if err := checkPageLimit("fetch", limit, "--cursor pages through the rest"); err != nil {
				return err
			}
			if mode != "" {
				m, ok := contract.ParseFetchMode(mode)
				if !ok {
					return contract.Invalid("`%s` is not a fetch mode, expected one of keyword, vector, hybrid", mode)
				}
				req.Mode = m
			}
			var used contract.FetchMode // the mode asked for, or the engine's default
			return ask(cmd, a, req, func(e contract.Engine, ctx context.Context, req contract.FetchRequest) (contract.FetchPage, error) {
				if req.Mode == "" {
					req.Mode = defaultMode(e.Descriptor())
				}
				used = req.Mode
				return e.Fetch(ctx, req)
			}, func(s *cliout.Screen, page contract.FetchPage) { cliout.DrawFetch(s, page, used) })
		},
	}
	cmd.Flags().StringVar(&mode, "mode", "", "keyword, vector or hybrid (default: hybrid if offered, else the engine's first mode)")
	_ = cmd.RegisterFlagCompletionFunc("mode", func(c *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return a.completeModes(c, toComplete)
	})
	cmd.Flags().StringVar(&filter, "filter", "", "a MetaFilter as JSON")
	cmd.Flags().IntVar(&limit, "limit", defaultPageLimit, "hits per page")
	cmd.Flags().StringVar(&cursor, "cursor", "", "continue after a previous page's next_cursor")
	return cmd
}

// defaultMode is hybrid when the engine serves it, else its first declared mode.
func defaultMode(d contract.Descriptor) contract.FetchMode {
	if d.Supports(contract.ModeHybrid) || len(d.FetchModes) == 0 {
		return contract.ModeHybrid
	}
	return d.FetchModes[0]
}

func newRecallCommand(a *app) *cobra.Command {
	var (
		filter       string
		limit        int
		instructions string
	)
	cmd := &cobra.Command{
		Use:   "recall QUESTION...",
		Short: "Answer a question from memory, with citations",
		Long: `Ask a question of memory (the words are joined by spaces). Prints a RecallAnswer:
the answer, the citations it draws on, and the model that wrote it.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := parseFilterFlag("--filter", filter)
			if err != nil {
				return err
			}
			req := contract.RecallRequest{Question: strings.Join(args, " "), Filter: f, Limit: limit}
			if cmd.Flags().Changed("instructions") {
				req.Instructions = &instructions
			}
			return ask(cmd, a, req, contract.Engine.Recall, cliout.DrawRecall)
		},
	}
	cmd.Flags().StringVar(&filter, "filter", "", "a MetaFilter as JSON")
	cmd.Flags().IntVar(&limit, "limit", defaultPageLimit, "at most this many citations")
	cmd.Flags().StringVar(&instructions, "instructions", "", "how to answer (length, bullets, ...)")
	return cmd
}

func newExploreCommand(a *app) *cobra.Command {
	var (
		filter string
		limit  int
	)
	cmd := &cobra.Command{
		Use:   "explore FACET",
		Short: "Count items by one facet, with exact counts",
		Long: `Group the items a filter selects by one facet and count them. Prints an
ExplorePage. Facets: ` + facetList() + `.`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: facetNames(),
		RunE: func(cmd *cobra.Command, args []string) error {
			facet, err := parseFacetArg(args[0])
			if err != nil {
				return err
			}
			f, err := parseFilterFlag("--filter", filter)
			if err != nil {
				return err
			}
			req := contract.ExploreRequest{Facet: facet, Filter: f, Limit: limit}
			return ask(cmd, a, req, contract.Engine.Explore, cliout.DrawExplore)
		},
	}
	cmd.Flags().StringVar(&filter, "filter", "", "a MetaFilter as JSON")
	cmd.Flags().IntVar(&limit, "limit", 50, "at most this many buckets (1..500)")
	return cmd
}

func newNarrowCommand(a *app) *cobra.Command {
	var filter string
	cmd := &cobra.Command{
		Use:   "narrow FACET VALUE",
		Short: "Print the filter narrowed to one facet value (scripted drill-down)",
		Long: `Print the MetaFilter that results from narrowing --filter to VALUE of FACET,
as explore's drill-down does. Feed it back to --filter of list, explore or forget.`,
		Args:        cobra.ExactArgs(2),
		Annotations: map[string]string{argChoicesAnnotation: facetList()},
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			switch len(args) {
			case 0:
				return completeFacets(toComplete)
			case 1:
				if facet, ok := contract.ParseFacet(args[0]); ok {
					return a.completeFacetValues(c, facet, toComplete)
				}
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(_ *cobra.Command, args []string) error {
			facet, err := parseFacetArg(args[0])
			if err != nil {
				return err
			}
			f, err := parseFilterFlag("--filter", filter)
			if err != nil {
				return err
			}
			narrowed, err := facet.Narrow(f, args[1])
			if err != nil {
				return err
			}
			return a.writeJSON(narrowed)
		},
	}
	cmd.Flags().StringVar(&filter, "filter", "", "the MetaFilter to narrow, as JSON (default: none)")
	return cmd
}

func newBrowseCommand(a *app) *cobra.Command {
	var query string
	cmd := &cobra.Command{
		Use:   "browse",
		Short: "The exactly counted, sortable, keyset-paged listing",
		Long: `Browse records with exact totals, sorting and keyset paging. The browse query
(JSON, docs/spec/contract.md section 4) comes from --query or stdin; none means the first 50
records by updated_at descending. Prints a BrowsePage; pass its continuation as
"cursor" in the same query for the next page.

Example:
  mnemo browse --query '{"status":"candidate","order_by":[{"field":"confidence","dir":"desc"}]}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data := []byte(query)
			if !cmd.Flags().Changed("query") && !a.isTerminal(a.stdin) {
				in, err := a.readInput("a browse query")
				if err != nil {
					return err
				}
				data = in
			}
			if len(strings.TrimSpace(string(data))) == 0 {
				data = []byte("{}")
			}
			q, err := contract.ParseBrowseQuery(data)
			if err != nil {
				return err
			}
			e, err := a.engine(cmd.Context())
			if err != nil {
				return err
			}
			page, err := e.Browse(cmd.Context(), q)
			if err != nil {
				return err
			}
			return a.answer(page, func(s *cliout.Screen) { cliout.DrawBrowse(s, page, data, browseCounts(q)) })
		},
	}
	cmd.Flags().StringVar(&query, "query", "", "the browse query as JSON (default: read stdin)")
	return cmd
}

func facetNames() []string {
	names := make([]string, len(contract.Facets()))
	for i, f := range contract.Facets() {
		names[i] = string(f)
	}
	return names
}

func facetList() string { return strings.Join(facetNames(), ", ") }

// ask validates a request, opens the engine, asks it and prints the answer:
// a table on a terminal, JSON otherwise.
func ask[Q interface{ Validate() error }, A any](cmd *cobra.Command, a *app, req Q,
	call func(contract.Engine, context.Context, Q) (A, error), draw func(*cliout.Screen, A)) error {
	if err := req.Validate(); err != nil {
		return err
	}
	e, err := a.engine(cmd.Context())
	if err != nil {
		return err
	}
	answer, err := call(e, cmd.Context(), req)
	if err != nil {
		return err
	}
	return a.answer(answer, func(s *cliout.Screen) { draw(s, answer) })
}
