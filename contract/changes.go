package contract

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// The change feed (docs/spec/design.md §4): every mutation gets the store's next change
// sequence number and appears once, in order, in the feed. A store that wrote
// (a replay is no change), a review's approve and reject, a supersede, every
// forget (by ids, by filter, within) and a restore of whole records are
// changes; expiry is not a mutation.

// ChangeOp is what a change did.
type ChangeOp string

// Change operations.
const (
	// OpStore is a store that wrote a new record.
	OpStore ChangeOp = "store"
	// OpApprove is a review that made a candidate active.
	OpApprove ChangeOp = "approve"
	// OpReject is a review that forgot a candidate.
	OpReject ChangeOp = "reject"
	// OpSupersede marks a record superseded.
	OpSupersede ChangeOp = "supersede"
	// OpForget is a forget by ids, by filter or within a reach.
	OpForget ChangeOp = "forget"
	// OpRestore puts a record back whole, as it was (an undo of a forget,
	// a restore of a backup): its id, times, status and supersession; also
	// a superseded candidate made a candidate again by an undo.
	OpRestore ChangeOp = "restore"
)

// ChangeOps lists every operation, in the order above (a fresh slice; an
// op's one-byte storage code is its index + 1).
func ChangeOps() []ChangeOp {
	return []ChangeOp{OpStore, OpApprove, OpReject, OpSupersede, OpForget, OpRestore}
}

// Removes tells whether the change took the record away (reject, forget).
func (o ChangeOp) Removes() bool { return o == OpReject || o == OpForget }

// ChangeOpOfCode reads an op from its one-byte storage code.
func ChangeOpOfCode(c byte) (ChangeOp, bool) {
	ops := ChangeOps()
	if c == 0 || int(c) > len(ops) {
		return "", false
	}
	return ops[c-1], true
}

// Code is the op's one-byte storage code (0 for an unknown op).
func (o ChangeOp) Code() byte {
	for i, x := range ChangeOps() {
		if x == o {
			return byte(i + 1)
		}
	}
	return 0
}

// Change is one entry of the feed. Status is the record's status after the
// change, or for a reject or forget the status it had when it was removed.
// Record is set for a change whose record still exists when the feed is read
// (store, approve, supersede): the record as get_records returns it without
// the item, in its current state. A removal never carries content: only its
// id, namespace and status; and a record forgotten since a store is not
// attached to that store's change either.
type Change struct {
	Seq       uint64
	At        time.Time
	Op        ChangeOp
	ID        string
	Namespace Namespace
	Status    Status
	Record    *Record
	// shared is the change's JSON, encoded once for every reader of a
	// change an engine hands to many (Shared); nil: encoded on each call.
	shared *sharedJSON
}

// sharedJSON is a change's JSON, encoded by the first MarshalJSON.
type sharedJSON struct {
	once sync.Once
	b    []byte
	err  error
}

// Shared returns c encoding its JSON at most once, however many copies of
// it are marshalled: an engine that hands the same change to many readers
// (one per waiting watcher) shares it so the change and its record are
// encoded once, not once per reader. The change and its record must not be
// modified afterwards.
func (c Change) Shared() Change {
	c.shared = &sharedJSON{}
	return c
}

type changeWire struct {
	Seq       uint64    `json:"seq"`
	At        string    `json:"at"`
	Op        ChangeOp  `json:"op"`
	ID        string    `json:"id"`
	Namespace Namespace `json:"namespace"`
	Status    Status    `json:"status"`
	Record    *Record   `json:"record,omitempty"`
}

// MarshalJSON writes {seq, at, op, id, namespace, status, record?}; the
// namespace is printed ("root" for the root), at has milliseconds.
// The bytes of a Shared change are the same for every call: the caller must
// not modify them.
func (c Change) MarshalJSON() ([]byte, error) {
	if c.shared != nil {
		c.shared.once.Do(func() { c.shared.b, c.shared.err = c.encode() })
		return c.shared.b, c.shared.err
	}
	return c.encode()
}

func (c Change) encode() ([]byte, error) {
	n := 128
	if c.Record != nil {
		n += c.Record.sizeHint()
	}
	return c.appendJSON(make([]byte, 0, n))
}

// UnmarshalJSON reads a change.
func (c *Change) UnmarshalJSON(data []byte) error {
	var w changeWire
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	at, err := ParseTime(w.At)
	if err != nil {
		return fmt.Errorf("change at: %w", err)
	}
	*c = Change{Seq: w.Seq, At: at, Op: w.Op, ID: w.ID, Namespace: w.Namespace, Status: w.Status, Record: w.Record}
	return nil
}

// Limits of the change feed.
const (
	// MaxChangesLimit bounds one page of changes.
	MaxChangesLimit = 1000
	// DefaultChangesLimit is the page size the HTTP API and `mnemo watch` use
	// when none is given.
	DefaultChangesLimit = 100
	// MaxChangesWait bounds one long poll.
	MaxChangesWait = 60 * time.Second
	// MaxChangesScan bounds the changes one read examines (the ones outside
	// the caller's reach included), so a confined reader of a busy feed gets
	// an answer, empty perhaps, with a Next that moved on.
	MaxChangesScan = 10 * MaxChangesLimit
)

// ChangesRequest reads the changes after Since, confined by Reach like every
// read (nil: every namespace but service sandboxes). With FromNow (and Since
// 0) the read starts at the feed's head: a client that has just loaded its
// state takes the head from that answer. With Wait, a read that finds nothing
// blocks until a change the caller may see arrives, the wait ends, or ctx is
// done; the answer is then an empty page whose Next is where to resume.
type ChangesRequest struct {
	Since   uint64        `json:"since"`
	Limit   int           `json:"limit"`
	Reach   *Reach        `json:"reach,omitempty"`
	Wait    time.Duration `json:"-"`
	FromNow bool          `json:"from_now,omitempty"`
}

// Validate checks the limit, the wait and that from_now names no since.
func (r ChangesRequest) Validate() error {
	if r.Limit < 1 || r.Limit > MaxChangesLimit {
		return Invalid("changes limit must be between 1 and %d, not %d", MaxChangesLimit, r.Limit)
	}
	if r.Wait < 0 || r.Wait > MaxChangesWait {
		return Invalid("changes wait must be between 0s and %s, not %s", MaxChangesWait, r.Wait)
	}
	if r.FromNow && r.Since != 0 {
		return Invalid("changes takes a since or from_now, not both")
	}
	return nil
}

// ChangesPage is one page of the feed. Next is the since of the following
// call: the seq of the last change examined, which for a confined caller may
// lie past the last change it was shown (the feed's seqs are the store's, so
// a caller sees gaps where other reaches changed). Head is the newest seq in
// the feed when it was read; Floor the smallest since it still answers (every
// change after Floor is kept; 0 until the feed has pruned anything).
type ChangesPage struct {
	Changes []Change `json:"changes"`
	Next    uint64   `json:"next"`
	Head    uint64   `json:"head"`
	Floor   uint64   `json:"floor"`
}

// AppendJSON appends the page's JSON to dst, the same bytes encoding/json
// writes for it (but an absent list is written []), assembled by hand: encoding/json would validate and compact
// each change's JSON again, which for a page of 1,000 changes with their
// records costs more than encoding them (and undoes the sharing of Shared
// changes).
func (p ChangesPage) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"changes":[`...)
	for i, c := range p.Changes {
		if i > 0 {
			dst = append(dst, ',')
		}
		b, err := c.MarshalJSON()
		if err != nil {
			return dst, err
		}
		dst = append(dst, b...)
	}
	dst = append(dst, `],"next":`...)
	dst = strconv.AppendUint(dst, p.Next, 10)
	dst = append(dst, `,"head":`...)
	dst = strconv.AppendUint(dst, p.Head, 10)
	dst = append(dst, `,"floor":`...)
	dst = strconv.AppendUint(dst, p.Floor, 10)
	return append(dst, '}'), nil
}

// ChangeRetention says how long a feed keeps its changes: a change is pruned
// only once it is both older than MaxAge and more than MaxChanges changes
// behind the head, so the feed always holds at least the last MaxAge and at
// least the last MaxChanges changes.
type ChangeRetention struct {
	MaxAge     time.Duration
	MaxChanges uint64
}

// DefaultChangeRetention keeps 7 days or 1,000,000 changes, whichever is more.
func DefaultChangeRetention() ChangeRetention {
	return ChangeRetention{MaxAge: 7 * 24 * time.Hour, MaxChanges: 1_000_000}
}

// OrDefault fills unset fields with the defaults.
func (r ChangeRetention) OrDefault() ChangeRetention {
	d := DefaultChangeRetention()
	if r.MaxAge <= 0 {
		r.MaxAge = d.MaxAge
	}
	if r.MaxChanges == 0 {
		r.MaxChanges = d.MaxChanges
	}
	return r
}

// Prunable tells whether the change seq made at at may go, head being the
// feed's newest seq.
func (r ChangeRetention) Prunable(seq uint64, at, now time.Time, head uint64) bool {
	return head >= seq+r.MaxChanges && now.Sub(at) > r.MaxAge
}

// CheckSince refuses a since the feed can no longer answer: older than what
// it keeps (pruned is the newest seq pruned so far) or past its head (the
// store was replaced or restored).
func CheckSince(since, pruned, head uint64) error {
	if since < pruned {
		return Expired("changes after seq %d are no longer kept (this feed holds seq %d onward); reload the state and resume from the head the reload reports", since, pruned+1)
	}
	if since > head {
		return Expired("since %d is past this feed's head %d: the store was replaced or restored; reload the state and resume from its head", since, head)
	}
	return nil
}

// ChangeSignal wakes waiting readers when changes commit: C returns a channel
// that Notify closes. The zero value is ready; it is safe for concurrent use
// and Notify never blocks, so a slow reader never holds up a writer.
type ChangeSignal struct {
	mu sync.Mutex
	ch chan struct{}
}

// C is closed by the next Notify.
func (s *ChangeSignal) C() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

// Notify wakes every reader waiting on C.
func (s *ChangeSignal) Notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// ChangesReader reads one page of the feed without waiting: the changes after
// since that reach admits, at most limit of them, examining at most
// MaxChangesScan; with fromNow it returns no change and Next = Head.
type ChangesReader func(ctx context.Context, since uint64, limit int, reach *Reach, fromNow bool) (ChangesPage, error)

// ServeChanges is Changes for any engine: it validates req, reads, and when
// the read finds nothing and req waits, waits on wake (the channel of a
// ChangeSignal, taken before each read so no commit is missed) or on poll when
// it is positive (engines whose writers live in other processes), then reads
// again, until a change arrives, the wait ends or ctx is done.
func ServeChanges(ctx context.Context, req ChangesRequest, wake func() <-chan struct{}, poll time.Duration, read ChangesReader) (ChangesPage, error) {
	if err := req.Validate(); err != nil {
		return ChangesPage{}, err
	}
	var deadline <-chan time.Time
	if req.Wait > 0 {
		t := time.NewTimer(req.Wait)
		defer t.Stop()
		deadline = t.C
	}
	since, fromNow := req.Since, req.FromNow
	for {
		if err := ctx.Err(); err != nil {
			return ChangesPage{}, Unavailable("the changes read was cancelled: %w", err)
		}
		woken := wake()
		page, err := read(ctx, since, req.Limit, req.Reach, fromNow)
		if err != nil {
			return ChangesPage{}, err
		}
		page.Changes = EmptyIfNil(page.Changes)
		if len(page.Changes) > 0 || req.Wait <= 0 {
			return page, nil
		}
		moved := page.Next > since || fromNow
		since, fromNow = page.Next, false
		if moved && page.Next < page.Head {
			// Everything examined lay outside the reach and more follows.
			continue
		}
		var tick <-chan time.Time
		var pt *time.Timer
		if poll > 0 {
			pt = time.NewTimer(poll)
			tick = pt.C
		}
		stop := func() {
			if pt != nil {
				pt.Stop()
			}
		}
		select {
		case <-woken:
			stop()
		case <-tick:
		case <-deadline:
			stop()
			return page, nil
		case <-ctx.Done():
			stop()
			return ChangesPage{}, Unavailable("the changes read was cancelled: %w", ctx.Err())
		}
	}
}
