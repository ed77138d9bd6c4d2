// Package local shares one store directory among every mnemo process of its
// user on one machine, with no setup: the TUI, the `mnemo mcp` servers agent
// hosts start, every CLI command, watch, import and serve.
//
// One process holds the store: it has bbolt's lock, opens the store with
// engine/bolt, and serves it to the others over a private unix socket beside
// it (mnemo.sock, mode 0600; peers of another user are refused by their
// credentials as well). Every other process reaches the holder through that
// socket with engine/remote. A Store is either; callers see one
// contract.Engine and never know which.
//
// When the holder stops, or dies (kill -9 included: the kernel drops its
// lock), the next call of every other process finds the socket gone, takes
// the lock itself or attaches to whichever process took it, and goes on.
// What a call that was in flight does then follows from what it is:
//
//   - A call that never reached the holder (its connection was refused) is
//     sent again to the new holder, whatever it is.
//   - Reads, and stores (idempotent: an item's id is its fingerprint), are
//     sent again even when the holder may have seen them.
//   - Forget, erase, review, supersede, restore and consolidate that the
//     holder may have seen are not repeated: the caller gets Unavailable
//     saying so, and that the store went on under another process.
//
// The holder does the store's background work, whoever started it: engine/bolt
// catches the index up, embeds and learns; and a holder that stops with no
// other process attached first finishes what its own writes started
// (bolt.Engine.Settle), so the next short command finds the store as a
// long-lived process would have left it.
package local

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/curate"
	"mnemo/engine/remote"
	"mnemo/server"
	"mnemo/server/httpapi"
)

// SocketFile is the socket's name inside the store directory.
const SocketFile = "mnemo.sock"

// Defaults.
const (
	// DefaultTakeoverWait bounds how long a call waits for the store to have
	// a holder again after the last one stopped (a holder that starts serves
	// within milliseconds of taking the lock).
	DefaultTakeoverWait = 3 * time.Second
	// lockProbe is how long one attempt to take the lock waits: a holder
	// that is only starting or stopping lets go (or starts serving) soon.
	lockProbe = 50 * time.Millisecond
	// retryPause is the pause between two attempts to find a holder.
	retryPause = 10 * time.Millisecond
	// shutdownGrace bounds how long a stopping holder waits for the
	// requests its socket is serving.
	shutdownGrace = 10 * time.Second
)

// Options configure Open.
type Options struct {
	// Bolt opens the store when this process holds it (embedder, answerer,
	// logger, clock). Its LockTimeout is ignored: taking the lock is tried
	// briefly and often instead.
	Bolt bolt.Options
	// MustExist refuses a directory that holds no store, creating nothing:
	// read commands set it, so a mistyped path is an error, not an empty store.
	MustExist bool
	// ReadOnly opens the store for reading only (bbolt's shared lock): for a
	// store this user cannot write. Such a process never holds it for others.
	ReadOnly bool
	// TakeoverWait bounds the wait for a new holder (default DefaultTakeoverWait).
	TakeoverWait time.Duration
	// Token is the bearer token for a server of an earlier mnemo that holds
	// the store without the socket (default: the owner token it left).
	Token string
	// Settled, when set, is told what a stopping holder waits for while it
	// finishes its background work (about once a second).
	Settled func(what string)
	// Clusters are the thresholds the holder keeps the whole store's
	// clusters with (bolt's KeepClusters), begun a second after it takes
	// the store, so short commands never do the work, or at once with
	// ClustersNow (the TUI, which shows them); nil: none are kept.
	Clusters    *curate.Config
	ClustersNow bool
	Logger      *slog.Logger
}

// Role says how this process reaches the store.
type Role int

const (
	// Holding: this process holds the store and serves the others.
	Holding Role = iota
	// Attached: another process holds the store; calls go through its socket.
	Attached
	// Reading: the store is open read-only in this process.
	Reading
)

func (r Role) String() string {
	switch r {
	case Holding:
		return "holding"
	case Attached:
		return "attached"
	}
	return "read-only"
}

// Store is a local store directory shared with the user's other processes.
// It implements contract.Engine and is safe for concurrent use.
type Store struct {
	dir  string
	sock string
	opts Options
	log  *slog.Logger

	// mu guards the role; a switch (takeover) holds it to write, so calls
	// wait for the new role rather than race it.
	mu     sync.RWMutex
	gen    uint64
	role   Role
	engine contract.Engine // the current engine: bolt or the remote client
	bolt   *bolt.Engine    // while holding or reading
	client *remote.Client  // while attached
	serve  *socketServer   // while holding
	closed bool
	// handedOff: Close lets go without finishing this process's background
	// work, which another process takes over (HandOffBackgroundWork).
	handedOff bool
	// legacy: attached to a server of an earlier mnemo over its HTTP
	// address, which has none of the socket's own endpoints.
	legacy bool
	// holder names the holding this process attached to (Status.Holder),
	// and holderPID is its process.
	holder    string
	holderPID int
	// takeovers counts the role switches after Open (tests and info).
	takeovers atomic.Int64
}

var (
	_ contract.Engine        = (*Store)(nil)
	_ contract.BulkPipeliner = (*Store)(nil)
)

// Open opens the store in dir: it attaches to the process holding it, or
// takes it and serves the others.
func Open(ctx context.Context, dir string, opts Options) (*Store, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.TakeoverWait <= 0 {
		opts.TakeoverWait = DefaultTakeoverWait
	}
	if opts.Bolt.Logger == nil {
		opts.Bolt.Logger = opts.Logger
	}
	opts.Bolt.LockTimeout = lockProbe
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, contract.ConfigErr("store directory %s: %w", dir, err)
	}
	if err := checkDir(abs, opts.MustExist); err != nil {
		return nil, err
	}
	s := &Store{dir: abs, sock: SocketPath(abs), opts: opts, log: opts.Logger}
	if opts.ReadOnly {
		if err := s.openReadOnly(); err != nil {
			return nil, err
		}
		return s, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.acquire(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// checkDir refuses what cannot be a store before anything is created: a
// file, a directory of another user, or (mustExist) a place with no store.
func checkDir(dir string, mustExist bool) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if mustExist {
			return contract.NotFound("no store at %s: the directory does not exist (check --db, MNEMO_DB or the config file's store; mnemo store or mnemo import creates one)", dir)
		}
		return nil
	case errors.Is(err, fs.ErrPermission):
		return contract.ConfigErr("store %s cannot be read by this user: %w", dir, err)
	case err != nil:
		return contract.ConfigErr("store %s: %w", dir, err)
	case !st.IsDir():
		return contract.ConfigErr("store %s is a file, not a store directory", dir)
	}
	if owner, ok := ownerOf(st); ok && owner != os.Geteuid() && os.Geteuid() != 0 {
		if _, err := os.Stat(filepath.Join(dir, bolt.DBFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return contract.ConfigErr("store %s belongs to another user (uid %d); only its owner can use it", dir, owner)
		}
	}
	if mustExist {
		if _, err := os.Stat(filepath.Join(dir, bolt.DBFile)); errors.Is(err, fs.ErrNotExist) {
			return contract.NotFound("no store at %s: the directory holds no %s (check --db, MNEMO_DB or the config file's store; mnemo store or mnemo import creates one)", dir, bolt.DBFile)
		}
	}
	return nil
}

// ownerOf is the uid owning a file.
func ownerOf(st fs.FileInfo) (int, bool) {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(sys.Uid), true
	}
	return 0, false
}

// acquire finds the store a holder: the process serving the socket, or this
// one. The caller holds mu to write.
func (s *Store) acquire(ctx context.Context) error {
	deadline := time.Now().Add(s.opts.TakeoverWait)
	var lastLocked *bolt.LockedError
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return contract.Unavailable("opening the store %s was cancelled", s.dir)
		}
		if err := s.attach(ctx); err == nil {
			return nil
		} else if !errors.Is(err, errNoHolder) {
			return err
		}
		e, err := bolt.Open(s.dir, s.opts.Bolt)
		if err == nil {
			return s.hold(e)
		}
		if !errors.As(err, &lastLocked) {
			return s.openFailed(err)
		}
		if lastLocked.Addr != "" {
			// A server of an earlier mnemo holds the store without the
			// socket, and published its address and owner token beside it.
			if err := s.attachServer(ctx, lastLocked.Addr); err == nil {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return &LockedError{Dir: s.dir, PID: lastLocked.PID}
		}
		select {
		case <-ctx.Done():
		case <-time.After(retryPause):
		}
	}
}

// openFailed explains an open that failed for another reason than the lock.
// A store this user may read but not write opens read-only instead.
func (s *Store) openFailed(err error) error {
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		if rerr := s.openReadOnly(); rerr == nil {
			return nil
		}
		return contract.ConfigErr("store %s cannot be opened by this user (permission denied); only its owner can use it", s.dir)
	}
	return err
}

// openReadOnly opens the store for reading in this process.
func (s *Store) openReadOnly() error {
	o := s.opts.Bolt
	o.ReadOnly = true
	e, err := bolt.Open(s.dir, o)
	if err != nil {
		var locked *bolt.LockedError
		if errors.As(err, &locked) {
			return contract.Unavailable("store %s is read-only for this user and held by another user's process (pid %d); try again when it stops", s.dir, locked.PID)
		}
		if errors.Is(err, fs.ErrPermission) {
			return contract.ConfigErr("store %s cannot be read by this user (permission denied)", s.dir)
		}
		return err
	}
	s.gen++
	s.role, s.engine, s.bolt = Reading, e, e
	return nil
}

// LockedError says a process holds the store's lock without sharing it:
// an earlier mnemo, or a program that opened mnemo.db itself.
type LockedError struct {
	Dir string
	PID int
}

func (e *LockedError) Error() string {
	pid := "unknown"
	if e.PID > 0 {
		pid = strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("store %s is locked by process %s, which does not share it (an earlier mnemo, or another program that opened %s); stop it and try again", e.Dir, pid, bolt.DBFile)
}

// attachServer attaches to an earlier mnemo serve holding the store, with
// the token the options carry or the owner token it left beside the store.
func (s *Store) attachServer(ctx context.Context, addr string) error {
	token := s.opts.Token
	if token == "" {
		data, err := os.ReadFile(filepath.Join(s.dir, bolt.TokenFile))
		if err != nil {
			return err
		}
		token = strings.TrimSpace(string(data))
	}
	c, err := remote.New(serverURL(addr), token)
	if err != nil {
		return err
	}
	if err := c.Connect(ctx); err != nil {
		return err
	}
	s.gen++
	s.role, s.engine, s.client, s.bolt, s.serve, s.legacy = Attached, c, c, nil, nil, true
	s.holder, s.holderPID = "", 0
	return nil
}

// serverURL reads a serve.addr: a URL (http://, https://, unix:/path) or a
// bare host:port, which is HTTP.
func serverURL(addr string) string {
	if u, err := url.Parse(addr); err == nil {
		switch u.Scheme {
		case "http", "https", "unix":
			return addr
		}
	}
	return "http://" + addr
}

// errNoHolder: no process serves the socket.
var errNoHolder = errors.New("no process serves the store's socket")

// attach connects to the process serving the socket.
func (s *Store) attach(ctx context.Context) error {
	if err := dialable(s.sock); err != nil {
		return err
	}
	c, err := remote.New("unix://"+s.sock, "", remote.WithoutKeepAlive(), remote.WithoutChangeStream(),
		remote.WithTimeout(0))
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.Connect(cctx); err != nil {
		if holderGone(err) {
			// It died or stopped between the dial and the call.
			return errNoHolder
		}
		if errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			who := "the process holding store " + s.dir
			if pid := bolt.PIDOf(s.dir); pid > 0 {
				who += fmt.Sprintf(" (pid %d)", pid)
			}
			return contract.Unavailable("%s does not answer on its socket: it is stopped (Ctrl-Z in its terminal: `fg` resumes it) or stuck", who)
		}
		return contract.Unavailable("the process holding store %s does not answer on its socket: %s", s.dir, contract.AsError(err).Message)
	}
	var st Status
	if err := s.askHolder(cctx, http.MethodGet, adminStatus, nil, &st); err != nil {
		if dialable(s.sock) != nil {
			return errNoHolder
		}
		return err
	}
	s.gen++
	s.role, s.engine, s.client, s.bolt, s.serve, s.legacy = Attached, c, c, nil, nil, false
	s.holder, s.holderPID = st.Holder, st.PID
	s.log.Debug("attached to the process holding the store", "dir", s.dir, "holder", st.Holder)
	return nil
}

// dialable tells whether a process listens on the socket (errNoHolder when
// none), and refuses a socket this user may not use.
func dialable(path string) error {
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		_ = c.Close()
		return nil
	}
	if errors.Is(err, fs.ErrPermission) {
		return contract.ConfigErr("store %s is held by another user's process (its socket %s is not ours); only its owner can use it", filepath.Dir(path), path)
	}
	return errNoHolder
}

// hold makes this process the holder: it serves the socket from now on.
func (s *Store) hold(e *bolt.Engine) error {
	srv, err := startSocket(s.sock, e, s.log)
	if err != nil {
		_ = e.Close()
		return err
	}
	s.gen++
	s.role, s.engine, s.bolt, s.serve, s.client, s.legacy = Holding, e, e, srv, nil, false
	srv.keep = make(chan struct{})
	srv.kept = make(chan struct{})
	if s.opts.Clusters != nil && s.opts.ClustersNow {
		e.KeepClusters(*s.opts.Clusters)
		e.ClusterNow()
	}
	go keepUp(e, s.opts.Clusters, srv.keep, srv.kept, s.log)
	s.log.Debug("holding the store", "dir", s.dir, "socket", s.sock)
	return nil
}

// keepUpEvery is how often the holder looks whether writes call for
// background work, and keepUpAfter how many writes since it took the store
// do (what bolt's Settle embeds after, too).
const (
	keepUpEvery = time.Second
	keepUpAfter = 100
)

// keepUp is the holder's background work beyond what engine/bolt starts on
// its own: at once when the store calls for a generation of the learned
// embedder it lacks (bolt's EmbeddingDue), and once the writes of any process (through the socket or in this
// one) have added keepUpAfter records and then paused, the records are
// embedded and the learned embedder learns, as if a vector query had
// arrived. After its first second it also keeps the store's clusters
// (bolt's KeepClusters), when given the thresholds. Without it a store filled by imports was embedded and learned
// only at its first vector query, so a TUI's process and a served agent
// ranked the same store differently.
func keepUp(e *bolt.Engine, clusters *curate.Config, stop <-chan struct{}, done chan<- struct{}, log *slog.Logger) {
	defer close(done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	var last, kept uint64
	t := time.NewTicker(keepUpEvery)
	defer t.Stop()
	for first := true; ; first = false {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if first && clusters != nil {
			e.KeepClusters(*clusters)
			e.ClusterNow()
		}
		if first && e.EmbeddingDue() {
			// Work the last holder left (an import it did not see to the
			// end); looked at after a second, so short commands never start it.
			if err := e.WaitEmbedder(ctx); err != nil && ctx.Err() == nil {
				log.Warn("embedding the store's records failed", "err", err)
			}
		}
		now := e.WrittenHere()
		quiet := now == last
		last = now
		if !quiet || now-kept < keepUpAfter {
			continue
		}
		if err := e.WaitEmbedder(ctx); err != nil && ctx.Err() == nil {
			log.Warn("embedding the store's new records failed", "err", err)
		}
		kept = now
	}
}

// current is the engine calls go to now, with its generation.
func (s *Store) current() (contract.Engine, uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, s.gen, contract.Unavailable("the store is closed")
	}
	return s.engine, s.gen, nil
}

// takeover finds a new holder after the engine of generation gen failed
// (unless another call has already).
func (s *Store) takeover(ctx context.Context, gen uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return contract.Unavailable("the store is closed")
	}
	if s.gen != gen {
		return nil
	}
	if err := s.acquire(ctx); err != nil {
		return err
	}
	s.takeovers.Add(1)
	s.log.Info("the process holding the store stopped; went on", "dir", s.dir, "role", s.role.String())
	return nil
}

// Dir is the store directory.
func (s *Store) Dir() string { return s.dir }

// Role says how this process reaches the store now.
func (s *Store) Role() Role {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.role
}

// Takeovers counts how many times this process found the store a new holder.
func (s *Store) Takeovers() int { return int(s.takeovers.Load()) }

// Close lets go of the store. A holder with no other process attached first
// finishes the background work of this process's writes (bolt Settle),
// unless it has handed that work off (HandOffBackgroundWork); with processes
// attached it stops at once and one of them takes the work over.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	switch s.role {
	case Holding:
		if s.serve.attached() == 0 && !s.handedOff {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
			if err := s.bolt.Settle(ctx, s.opts.Settled); err != nil {
				s.log.Warn("background work left for the next process", "err", err)
			}
			cancel()
		}
		// The socket goes before the lock: a process that finds it gone
		// waits for the lock, and never sees a socket of this one again.
		s.serve.stop()
		close(s.serve.keep)
		<-s.serve.kept
		return s.bolt.Close()
	case Reading:
		return s.bolt.Close()
	}
	return nil
}

// HandOffBackgroundWork has Close let go at once, leaving the background
// work of this process's writes (the search index's catch-up, the content
// index, the embeddings) to the next process that holds the store, which
// its caller starts (mnemo import's finisher). It answers whether it
// applies: this process holds the store and no other process is attached
// (one that is takes the work over anyway when this one stops).
func (s *Store) HandOffBackgroundWork() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.role != Holding || s.serve.attached() != 0 {
		return false
	}
	s.handedOff = true
	return true
}

// RewriteAfterClose tells the engine this process holds that mnemo.db is
// rewritten once the store is closed (bolt.Engine.RewriteAfterClose); it
// does nothing in a process that does not hold the store.
func (s *Store) RewriteAfterClose() {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.role == Holding && !s.closed {
		s.bolt.RewriteAfterClose()
	}
}

// WaitIdle waits, in the process holding the store, until its background
// work is done: the index caught up, every record embedded with the
// generation of the learned embedder the store's text calls for. Through
// the socket it returns at once (the holder does the work on its own).
func (s *Store) WaitIdle(ctx context.Context) error {
	if e := s.held(); e != nil {
		return e.WaitEmbedder(ctx)
	}
	return nil
}

// held is the engine while this process holds the store, nil otherwise.
func (s *Store) held() *bolt.Engine {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.role != Holding {
		return nil
	}
	return s.bolt
}

// Clustering says how far the store's clustering is in this process, when
// it holds the store (bolt.Engine.ClusterStatus); ok is false otherwise.
func (s *Store) Clustering() (st bolt.ClusterStatus, ok bool) {
	e := s.held()
	if e == nil {
		return bolt.ClusterStatus{}, false
	}
	return e.ClusterStatus(), true
}

// LearnFirst, in the process holding the store, learns the store's next
// generation of the learned embedder before its records are embedded
// (bolt.Engine.LearnFirst: mnemo import's finisher); through the socket it
// does nothing.
func (s *Store) LearnFirst(ctx context.Context) error {
	if e := s.held(); e != nil {
		return e.LearnFirst(ctx)
	}
	return nil
}

// Holder describes the process holding the store.
type Holder struct {
	PID  int  `json:"pid"`
	Self bool `json:"self"`
}

// Holder tells which process holds the store.
func (s *Store) Holder(ctx context.Context) (Holder, error) {
	st, err := s.Status(ctx)
	if err != nil {
		return Holder{}, err
	}
	return Holder{PID: st.PID, Self: st.PID == os.Getpid()}, nil
}

// notSent tells whether a call failed before the holder could have seen it:
// its connection was refused, or the socket was gone.
func notSent(err error) bool {
	var ne *net.OpError
	if errors.As(err, &ne) && ne.Op == "dial" {
		return true
	}
	return false
}

// holderGone tells whether a call failed because the holder stopped.
func holderGone(err error) bool {
	if err == nil {
		return false
	}
	var ne *net.OpError
	if errors.As(err, &ne) {
		return true
	}
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// retry says what a call does when the holder stops under it.
type retry int

const (
	// again: reads and stores go to the new holder even if the old one saw them.
	again retry = iota
	// once: mutations that are not idempotent are sent again only when the
	// old holder cannot have seen them.
	once
)

// call runs op against the current engine, finding a new holder when the
// one it reached stopped.
func call[T any](s *Store, ctx context.Context, what string, r retry, op func(ctx context.Context, e contract.Engine) (T, error)) (T, error) {
	for {
		e, gen, err := s.current()
		if err != nil {
			var zero T
			return zero, err
		}
		opCtx, watched := s.watchHolder(ctx, gen)
		v, err := op(opCtx, e)
		if silent := watched(); silent != nil && err != nil {
			return v, silent.answer(what, r)
		}
		if err == nil || ctx.Err() != nil {
			return v, err
		}
		if !holderGone(err) {
			if !s.stoppedAnswering(gen, err) {
				return v, err
			}
			// A holder that is stopping answers Unavailable (a long poll
			// ended, a call that found its engine closed) and applied
			// nothing: ask whoever holds the store next.
			if terr := s.takeover(ctx, gen); terr != nil {
				return v, terr
			}
			continue
		}
		if s.isHolding(gen) {
			// This process's own engine closed under the call: the store is closing.
			return v, err
		}
		if r == once && !notSent(err) {
			if terr := s.takeover(ctx, gen); terr != nil {
				return v, terr
			}
			var zero T
			return zero, contract.Unavailable("the process holding the store stopped while this %s was in flight: it may or may not have been applied; the store went on under another process, so check (get, list) and run it again if needed", what)
		}
		if terr := s.takeover(ctx, gen); terr != nil {
			var zero T
			return zero, terr
		}
	}
}

// A call to another process's holding is watched: once it has run for
// probeAfter, this process asks the holder every probeEvery, on a
// connection of its own, whether it still answers (adminAlive, which
// touches nothing of the store). A holder that lets one ask go unanswered
// for probeWait is stopped (Ctrl-Z in its terminal) or stuck, and the call
// ends with a message that says so, rather than waiting for as long as the
// holder does: the agents on the store get an answer. A busy holder answers
// the asks, however long its call takes.
const (
	probeAfter = 3 * time.Second
	probeEvery = 3 * time.Second
	probeWait  = 5 * time.Second
)

// silentHolder is why a watched call was given up.
type silentHolder struct {
	dir   string
	pid   int
	since time.Time
}

func (e *silentHolder) Error() string { return "the holder does not answer" }

// answer is what the caller of a given-up call is told.
func (e *silentHolder) answer(what string, r retry) error {
	who := "the process holding store " + e.dir
	if e.pid > 0 {
		who += fmt.Sprintf(" (pid %d)", e.pid)
	}
	after := "retry when it answers"
	switch {
	case r == once:
		after = fmt.Sprintf("this %s may or may not be applied when that process resumes, so check (get, list) before running it again", what)
	case what == "store" || what == "store_many":
		after = "the store may be applied when that process resumes; sending it again is safe (it comes back as a replay)"
	}
	ce := contract.Unavailable("%s has not answered for %s: it is stopped (Ctrl-Z in its terminal: `fg` resumes it) or stuck; %s", who,
		time.Since(e.since).Round(time.Second), after)
	ce.Err = e
	return ce
}

// watchHolder answers the context a call of generation gen runs under and
// a function that ends the watch, answering the silentHolder that ended
// the call, if one did. Only a call to another process's holding through
// the socket is watched.
func (s *Store) watchHolder(ctx context.Context, gen uint64) (context.Context, func() *silentHolder) {
	s.mu.RLock()
	watched := s.gen == gen && s.role == Attached && !s.legacy
	pid := s.holderPID
	s.mu.RUnlock()
	if !watched {
		return ctx, func() *silentHolder { return nil }
	}
	cctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	since := time.Now()
	go func() {
		t := time.NewTimer(probeAfter)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-cctx.Done():
				return
			case <-t.C:
			}
			pctx, pcancel := context.WithTimeout(cctx, probeWait)
			err := s.askHolder(pctx, http.MethodGet, adminAlive, nil, nil)
			silent := err != nil && errors.Is(pctx.Err(), context.DeadlineExceeded) && cctx.Err() == nil
			pcancel()
			if silent {
				cancel(&silentHolder{dir: s.dir, pid: pid, since: since})
				return
			}
			// An answer, or none to be had (the holder is gone, and the
			// call fails on its own and finds the next one).
			t.Reset(probeEvery)
		}
	}()
	return cctx, func() *silentHolder {
		close(done)
		var silent *silentHolder
		errors.As(context.Cause(cctx), &silent)
		cancel(nil)
		return silent
	}
}

// stoppedAnswering tells whether err is the Unavailable answer of a holder
// that has stopped serving since: its socket no longer takes calls, or
// another holding answers on it now (a process may take the store over
// between the old holder's answer and this look).
func (s *Store) stoppedAnswering(gen uint64, err error) bool {
	var ce *contract.Error
	if !errors.As(err, &ce) || ce.Kind != contract.KindUnavailable || s.isHolding(gen) {
		return false
	}
	if dialable(s.sock) != nil {
		return true
	}
	s.mu.RLock()
	legacy, was := s.legacy, s.holder
	s.mu.RUnlock()
	if legacy {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var st Status
	if err := s.askHolder(ctx, http.MethodGet, adminStatus, nil, &st); err != nil {
		return holderGone(err) || dialable(s.sock) != nil
	}
	return st.Holder != was
}

// isHolding tells whether generation gen is this process holding the store.
func (s *Store) isHolding(gen uint64) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.gen == gen && s.role != Attached
}

// socketServer serves the store on the socket while this process holds it.
type socketServer struct {
	path  string
	l     net.Listener
	http  *http.Server
	api   *httpapi.Handler
	conns atomic.Int64
	done  chan struct{}
	// keep stops the holder's background work (keepUp); kept is closed when it has.
	keep, kept chan struct{}
	// holder names this holding (Status.Holder).
	holder string
}

// newHolderName names a holding of the store uniquely among the holdings
// of every process.
func newHolderName() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%d-%x", os.Getpid(), b)
}

// holding names this process's holding of the store ("" when attached).
func (s *Store) holding() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.serve == nil {
		return ""
	}
	return s.serve.holder
}

// startSocket listens on path (removing a socket left by a holder that died:
// this process holds the lock, so no live process serves it) and serves e.
func startSocket(path string, e *bolt.Engine, log *slog.Logger) (*socketServer, error) {
	if err := privateDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	if st, err := os.Lstat(path); err == nil && st.Mode()&os.ModeSocket != 0 {
		_ = os.Remove(path)
	}
	l, err := server.ListenPrivateSocket(path)
	if err != nil {
		return nil, err
	}
	l = peerChecked{l}
	api := httpapi.New(e, httpapi.Options{Open: true, AuditReader: e, Logger: log, MaxItemBytes: -1,
		ListingRate: httpapi.Rate{PerSecond: -1}, MaxStreamsPerPrincipal: -1})
	srv := &socketServer{path: path, l: l, api: api, done: make(chan struct{}), holder: newHolderName()}
	mux := http.NewServeMux()
	mux.Handle(adminPrefix, adminHandler(e, srv.holder))
	mux.Handle("/", api)
	srv.http = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ConnState: func(_ net.Conn, st http.ConnState) {
			switch st {
			case http.StateNew:
				srv.conns.Add(1)
			case http.StateClosed, http.StateHijacked:
				srv.conns.Add(-1)
			}
		}}
	go func() {
		defer close(srv.done)
		if err := srv.http.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("the store's socket stopped serving", "err", err)
		}
	}()
	return srv, nil
}

// maxSocketPath is the longest socket path Linux and macOS take (sun_path
// less its terminating NUL, on the stricter of the two).
const maxSocketPath = 103

// socketSpare is what server.ListenPrivateSocket adds to a socket's
// directory while it makes the socket (a private directory beside it).
const socketSpare = len("/.mnemo-socket-0123456789/s")

// SocketPath is where the process holding the store in dir serves it:
// mnemo.sock inside the store, or, when that path is too long for a unix
// socket, a file named by a hash of the store's path in this user's private
// runtime directory ($XDG_RUNTIME_DIR/mnemo, or mnemo-UID in the system's
// temporary directory), so every process finds the same one.
func SocketPath(dir string) string {
	if len(dir)+socketSpare <= maxSocketPath {
		return filepath.Join(dir, SocketFile)
	}
	base := os.Getenv("XDG_RUNTIME_DIR")
	if base != "" {
		base = filepath.Join(base, "mnemo")
	} else {
		base = filepath.Join(os.TempDir(), fmt.Sprintf("mnemo-%d", os.Geteuid()))
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(dir))
	return filepath.Join(base, fmt.Sprintf("%016x.sock", h.Sum64()))
}

// privateDir makes sure dir exists and only this user can enter it, when it
// is the runtime directory SocketPath chose (a store directory is the
// user's own, and the socket in it is 0600 either way).
func privateDir(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, bolt.DBFile)); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return contract.ConfigErr("cannot create the socket directory %s: %w", dir, err)
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return contract.ConfigErr("socket directory %s: %w", dir, err)
	}
	owner, ok := ownerOf(st)
	if !st.IsDir() || (ok && owner != os.Geteuid()) || st.Mode().Perm()&0o077 != 0 {
		return contract.ConfigErr("the socket directory %s must be a directory of this user's that no one else can enter (mode 0700)", dir)
	}
	return nil
}

// attached counts the connections open on the socket: other processes'
// calls in flight and their long polls (they connect once a call).
func (srv *socketServer) attached() int64 { return srv.conns.Load() }

// stop unlinks the socket, ends long polls and waits for the calls in flight.
func (srv *socketServer) stop() {
	_ = os.Remove(srv.path)
	srv.api.EndLongPolls()
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.http.Shutdown(ctx); err != nil {
		_ = srv.http.Close()
	}
	<-srv.done
}

// String names the store for logs.
func (s *Store) String() string { return fmt.Sprintf("local store %s (%s)", s.dir, s.Role()) }

// Held tells whether a process serves the store in dir, and which: commands
// that need a store to themselves (mnemo compact) refuse while one does.
func Held(dir string) (Holder, bool) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Holder{}, false
	}
	s := &Store{dir: abs, sock: SocketPath(abs), log: slog.New(slog.DiscardHandler)}
	if dialable(s.sock) != nil {
		return Holder{}, false
	}
	var st Status
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.admin(ctx, http.MethodGet, adminStatus, nil, &st); err != nil {
		return Holder{}, false
	}
	return Holder{PID: st.PID, Self: st.PID == os.Getpid()}, true
}
