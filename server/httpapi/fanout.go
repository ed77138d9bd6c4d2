package httpapi

import (
	"context"
	"strconv"
	"sync"

	"mnemo/contract"
	"mnemo/server/wire"
)

// The change streams of one reach share one reader of the feed (a hub): the
// hub reads each page of changes once from the engine, encodes it once as an
// event, and hands the same bytes to every stream following that reach, so
// twenty followers of a busy reach cost one read and one encoding per page
// plus twenty writes, not twenty of each. A hub never waits for a stream:
// each stream takes its frames from a queue of its own, and one whose queue
// is full (its client is not taking its events) is let go by the hub; it
// then reads the feed on its own until it has caught up and joins again, and
// its writes still drop the client after Options.StreamWriteTimeout. Streams
// of different reaches (or page limits) never share a hub, so a stream only
// ever carries pages read under its own principal's reach.

// DefaultStreamQueue bounds the frames a stream's queue holds
// (Options.StreamQueue). A stream whose client takes events more slowly than
// this many pages arrive is let go by its hub and reads on its own (at 100
// pages a second, a client that has not taken an event for a third of a
// second): the hub's memory per stream is bounded and no stream ever holds
// up the others.
const DefaultStreamQueue = 32

// hubWait is how long a hub's read waits for a change. Streams send their
// own heartbeats (their own wait), so this bounds only how stale the hub's
// position gets on a quiet reach.
const hubWait = DefaultStreamBeat

// hubKey tells apart the hubs: streams share one when the engine would give
// them the same pages (the reach their principal's bound narrowed the
// request to, and the page size).
type hubKey struct {
	reach string
	limit int
}

func keyOf(reach *contract.Reach, limit int) hubKey {
	k := hubKey{limit: limit}
	if reach != nil {
		// Floor is not on the wire's at/inherit/descendants; it narrows
		// what an inheriting reach admits, so it is part of the key.
		k.reach = reach.At.String() + "\x00" + strconv.FormatBool(reach.Inherit) + strconv.FormatBool(reach.Descendants) + "\x00" + strconv.Itoa(reach.Floor)
	}
	return k
}

// frame is one page a hub read: the changes after since up to next, encoded
// once as a "changes" event (nil for an empty page, which streams do not
// forward: they send their own heartbeats). A frame is shared by every
// stream of the hub and never modified.
type frame struct {
	since, next uint64
	changes     int
	event       []byte
}

// subscriber is one stream's place in a hub.
type subscriber struct {
	hub *hub
	ch  chan *frame
	// gone is closed when the hub lets the stream go (its queue was full,
	// or the hub's read failed): no frame is sent after it.
	gone chan struct{}
}

// hub reads the feed for the streams of one key.
type hub struct {
	key   hubKey
	reach *contract.Reach
	limit int
	// pos is the since of the hub's next read: every frame it sends after
	// a stream joined starts there or later.
	pos    uint64
	subs   map[*subscriber]struct{}
	cancel context.CancelFunc
	dead   bool
}

// fanout holds the live hubs of a handler.
type fanout struct {
	mu   sync.Mutex
	hubs map[hubKey]*hub
}

// join adds a stream at pos to the hub of key (starting one at pos when there
// is none) and returns where the hub's next frame will start: the stream
// reads what lies between pos and there on its own.
func (h *Handler) join(key hubKey, reach *contract.Reach, limit int, pos uint64) (*subscriber, uint64) {
	f := &h.fan
	f.mu.Lock()
	defer f.mu.Unlock()
	hb := f.hubs[key]
	if hb == nil {
		if f.hubs == nil {
			f.hubs = map[hubKey]*hub{}
		}
		ctx, cancel := h.drainable(context.Background())
		hb = &hub{key: key, reach: reach, limit: limit, pos: pos, subs: map[*subscriber]struct{}{}, cancel: cancel}
		f.hubs[key] = hb
		go h.runHub(ctx, hb)
	}
	s := &subscriber{hub: hb, ch: make(chan *frame, h.opts.StreamQueue), gone: make(chan struct{})}
	hb.subs[s] = struct{}{}
	return s, hb.pos
}

// leave takes s out of its hub (if the hub has not let it go already); the
// hub of the last stream stops.
func (h *Handler) leave(s *subscriber) {
	h.fan.mu.Lock()
	defer h.fan.mu.Unlock()
	if _, ok := s.hub.subs[s]; ok {
		delete(s.hub.subs, s)
		close(s.gone)
	}
	h.stopIfIdle(s.hub)
}

// stopIfIdle stops hb when no stream follows it. The caller holds fan.mu.
func (h *Handler) stopIfIdle(hb *hub) {
	if len(hb.subs) == 0 && !hb.dead {
		h.endHub(hb)
	}
}

// endHub stops hb and lets its streams go. The caller holds fan.mu.
func (h *Handler) endHub(hb *hub) {
	hb.dead = true
	hb.cancel()
	if h.fan.hubs[hb.key] == hb {
		delete(h.fan.hubs, hb.key)
	}
	for s := range hb.subs {
		delete(hb.subs, s)
		close(s.gone)
	}
}

// broadcast hands fr to every stream of hb, letting go of those whose queue
// is full, and moves the hub on. It never blocks.
func (h *Handler) broadcast(hb *hub, fr *frame) bool {
	h.fan.mu.Lock()
	defer h.fan.mu.Unlock()
	if hb.dead {
		return false
	}
	hb.pos = fr.next
	for s := range hb.subs {
		select {
		case s.ch <- fr:
		default:
			delete(hb.subs, s)
			close(s.gone)
		}
	}
	h.stopIfIdle(hb)
	return !hb.dead
}

// runHub reads the feed after hb.pos under hb's reach, page after page, until
// its last stream leaves (ctx ends) or a read fails: its streams then read on
// their own, and meet the failure themselves if it lasts. After a page of
// changes it lets commits gather (Options.StreamGather) before it reads
// again, as a stream on its own does.
func (h *Handler) runHub(ctx context.Context, hb *hub) {
	h.fan.mu.Lock()
	since := hb.pos
	h.fan.mu.Unlock()
	for {
		page, err := h.e.Changes(ctx, contract.ChangesRequest{Since: since, Limit: hb.limit, Reach: hb.reach, Wait: hubWait})
		if err != nil {
			h.fan.mu.Lock()
			if !hb.dead {
				if ctx.Err() == nil {
					h.logEngineError("changes", err)
				}
				h.endHub(hb)
			}
			h.fan.mu.Unlock()
			return
		}
		fr := &frame{since: since, next: page.Next, changes: len(page.Changes)}
		if fr.changes > 0 {
			fr.event, err = wire.AppendJSONEvent(nil, wire.EventChanges, strconv.FormatUint(page.Next, 10), page.AppendJSON)
			if err != nil {
				h.logEngineError("changes", err)
				h.fan.mu.Lock()
				h.endHub(hb)
				h.fan.mu.Unlock()
				return
			}
		}
		if fr.next != since || fr.changes > 0 {
			if !h.broadcast(hb, fr) {
				return
			}
		}
		since = page.Next
		if fr.changes > 0 && h.opts.StreamGather > 0 {
			if !sleepCtx(ctx, h.opts.StreamGather) {
				return
			}
		}
	}
}
