package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"mnemo/cliout"
	"mnemo/contract"
)

// watchWait is how long one read of the feed waits for a change before asking
// again (over --remote the reads are served from one stream of the feed).
const watchWait = 30 * time.Second

func newWatchCommand(a *app) *cobra.Command {
	var (
		since   string
		filter  string
		fromNow bool
	)
	cmd := &cobra.Command{
		Use:   "watch [--since N] [--filter JSON] [--from-now]",
		Short: "Print each change to memory as it happens, one JSON line each",
		Long: `Follow the change feed like "tail -f" for memory: one JSON line per change,
{"seq", "at", "op", "id", "namespace", "status", "record"?}, as it happens (op is
store, approve, reject, supersede, forget or restore; a removal never carries the
record; a restore is a record put back as it was by an undo: a forgotten one, or a
superseded candidate a candidate again).

By default it prints every change the feed still keeps (at least the last 7 days or
1,000,000 changes), then follows. --from-now prints only what happens from now on;
--since N resumes after seq N (the seq of the last line printed), with nothing missed.
A since the feed no longer keeps is an error of its own (exit 7): reload and start
again with --from-now. --filter takes a MetaFilter: its reach narrows the feed on the
server; a change with its record must match the whole filter; a removal (whose
content the feed never carries) is judged by its namespace and status, and, when the
filter names more, printed only if this watch printed a change of that record before.

It attaches to a running "mnemo serve" like every command (--remote, or the server
that holds the store). It ends on Ctrl-C and when its output is closed
("mnemo watch | head -3" ends after three lines).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := parseFilterFlag("--filter", filter)
			if err != nil {
				return err
			}
			if fromNow && cmd.Flags().Changed("since") {
				return usageError("--since and --from-now exclude each other")
			}
			e, err := a.engine(cmd.Context())
			if err != nil {
				return err
			}
			w := watcher{a: a, e: e, filter: f, fromNow: fromNow}
			if cmd.Flags().Changed("since") {
				n, err := strconv.ParseUint(strings.TrimSpace(since), 10, 64)
				if err != nil {
					return usageError(fmt.Sprintf("--since takes a change seq, a whole number from 0 (the seq of the last line printed), not %q; --from-now starts at the newest change", since))
				}
				w.since, w.resume = n, true
			}
			return w.run(cmd.Context())
		},
	}
	cmd.Flags().StringVar(&since, "since", "", "resume after this seq (the last one printed)")
	cmd.Flags().StringVar(&filter, "filter", "", "print only changes matching this MetaFilter (JSON)")
	cmd.Flags().BoolVar(&fromNow, "from-now", false, "print only the changes made from now on")
	return cmd
}

// watcher follows the feed and prints it.
type watcher struct {
	a       *app
	e       contract.Engine
	filter  contract.MetaFilter
	fromNow bool
	resume  bool
	since   uint64
	// matched holds the ids whose changes matched a content filter.
	matched map[string]bool
}

func (w *watcher) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// A closed output ends the watch at once, not at the next change.
	if f, ok := w.a.stdout.(*os.File); ok {
		if f == os.Stdout {
			// A write to a closed pipe returns EPIPE, a clean end, rather
			// than killing the process with SIGPIPE.
			signal.Ignore(syscall.SIGPIPE)
		}
		stop := onOutputClosed(f, cancel)
		defer stop()
	}
	out := cliout.NewJSONLines(w.a.stdout)
	req := contract.ChangesRequest{Limit: contract.MaxChangesLimit, Reach: w.filter.Reach}
	switch {
	case w.fromNow:
		req.FromNow = true
	case w.resume:
		req.Since = w.since
	default:
		// Everything the feed keeps: from its floor.
		p, err := w.e.Changes(ctx, contract.ChangesRequest{FromNow: true, Limit: 1, Reach: w.filter.Reach})
		if err != nil {
			return w.ended(ctx, err)
		}
		req.Since = p.Floor
	}
	if req.FromNow {
		// Take the head first, so a change made while the first poll is on
		// its way is not missed.
		p, err := w.e.Changes(ctx, req)
		if err != nil {
			return w.ended(ctx, err)
		}
		req.FromNow, req.Since = false, p.Next
	}
	req.Wait = watchWait
	retry := time.Duration(0)
	for {
		p, err := w.e.Changes(ctx, req)
		if err != nil {
			if ctx.Err() == nil && contract.KindOf(err) == contract.KindUnavailable {
				// The server went away: say so once, and try again with the
				// same since, so nothing is missed when it is back.
				if retry == 0 {
					fmt.Fprintf(w.a.stderr, "mnemo: %s; retrying from seq %d\n", contract.AsError(err).Message, req.Since)
				}
				retry = min(max(2*retry, 500*time.Millisecond), 5*time.Second)
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(retry):
				}
				continue
			}
			return w.ended(ctx, err)
		}
		retry = 0
		for i := range p.Changes {
			if !w.matches(&p.Changes[i]) {
				continue
			}
			if err := out.Write(p.Changes[i]); err != nil {
				return w.closed(err)
			}
		}
		if err := out.Flush(); err != nil {
			return w.closed(err)
		}
		req.Since = p.Next
	}
}

// matches applies --filter. A change with its record must match the whole
// filter (the reach was applied by the engine). One without (a removal, or a
// record forgotten since) is judged by its status; when the filter names more
// than a reach and statuses, it passes only if this watch matched the id
// before, since the feed never carries a removed record's content.
func (w *watcher) matches(c *contract.Change) bool {
	if !w.filter.AdmitsStatus(c.Status, false) {
		return false
	}
	if c.Record != nil {
		if !w.filter.Matches(c.Record.Kind, &c.Record.Meta) {
			return false
		}
		if w.contentFilter() {
			if w.matched == nil {
				w.matched = map[string]bool{}
			}
			w.matched[c.ID] = true
		}
		return true
	}
	return !w.contentFilter() || w.matched[c.ID]
}

// contentFilter tells whether --filter names fields beyond reach and statuses.
func (w *watcher) contentFilter() bool {
	f := w.filter.Clone()
	f.Reach, f.Statuses = nil, nil
	return !f.IsEmpty()
}

// ended is the watch's end on err: a clean one when it was interrupted or
// its output closed.
func (w *watcher) ended(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// closed is the watch's end on a failed write: a closed output is a clean end.
func (w *watcher) closed(err error) error {
	if errors.Is(err, os.ErrClosed) || errors.Is(err, io.ErrClosedPipe) || isBrokenPipe(err) {
		return nil
	}
	return contract.EngineErr("cannot write the change: %w", err)
}
