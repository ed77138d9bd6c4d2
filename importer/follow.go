package importer

import (
	"context"
	"time"

	"mnemo/contract"
	"mnemo/ingest"
)

// Poll is what one poll of a follow imported.
type Poll struct {
	// First is the poll that read everything the source held at the start.
	First bool
	// Summary is this poll's import alone.
	Summary Summary
	// Total is every poll's so far, this one included.
	Total Summary
}

// Follow imports what src reads, then reads it again every interval until ctx
// ends, importing what is new each time: src keeps its own place between
// reads (ingest.ClaudeCodeTail), so a poll reads only what was written since.
// im runs the first import, which reads everything and may be large (ctx
// cuts it, as it cuts Run); the later ones are small and run to their end
// even when ctx ends during one, so what a poll read is stored. onPoll, when
// set, is told of every poll that stored, replayed, failed or skipped
// anything, and of the first one in any case. The summary is every poll's.
func Follow(ctx context.Context, im *Importer, src ingest.Source, place contract.Namespace,
	interval time.Duration, onPoll func(Poll)) (Summary, error) {
	total := Summary{Errors: []LineError{}}
	sum, err := im.RunFrom(ctx, src, "", place)
	total.add(sum)
	if onPoll != nil {
		onPoll(Poll{First: true, Summary: sum, Total: total})
	}
	if err != nil {
		return total, err
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return total, nil
		case <-tick.C:
		}
		next := &Importer{Engine: im.Engine, Batch: im.Batch, DefaultStatus: im.DefaultStatus,
			Logger: im.Logger, Trickle: true}
		sum, err := next.RunFrom(context.WithoutCancel(ctx), src, "", place)
		total.add(sum)
		if onPoll != nil && (sum.Stored+sum.Replayed+sum.Failed > 0 || len(sum.Skipped) > 0) {
			onPoll(Poll{Summary: sum, Total: total})
		}
		if err != nil {
			return total, err
		}
	}
}

// add counts s into the summary.
func (t *Summary) add(s Summary) {
	t.Stored += s.Stored
	t.Replayed += s.Replayed
	t.Failed += s.Failed
	t.Errors = append(t.Errors, s.Errors...)
	t.Skipped = append(t.Skipped, s.Skipped...)
}
