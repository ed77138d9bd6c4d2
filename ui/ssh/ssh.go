// Package ssh serves the mnemo TUI over SSH with wish: one Bubble Tea program
// and one root model per session, each session acting as the principal its
// public key belongs to (the keys file), through auth.Confine, and read-only
// for readers. Sessions without a PTY are refused with a message; idle and
// absolute timeouts bound every connection; a panic ends only its session;
// Shutdown stops the sessions, lets engine writes already started finish and
// only then returns, so the store can be closed safely.
package ssh

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	charmssh "charm.land/ssh"
	"charm.land/wish/v2"
	"charm.land/wish/v2/bubbletea"
	gossh "golang.org/x/crypto/ssh"

	"mnemo/contract"
	"mnemo/server/audit"
	"mnemo/server/auth"
	"mnemo/ui"
)

// Defaults of Options.
const (
	DefaultIdleTimeout = 30 * time.Minute
	DefaultMaxTimeout  = 12 * time.Hour
)

// fingerprintExt carries the accepted key's fingerprint from authentication
// to the session, where it is checked again: a client may offer several keys,
// and the session must run as the one that was verified.
const fingerprintExt = "mnemo-key-fp"

type principalKey struct{}

// Options configure the server.
type Options struct {
	// Engine is the store every session reads and writes (confined per principal).
	Engine contract.Engine
	// Keys names the principals and their SSH keys; no keys, no sessions.
	Keys *auth.Keys
	// Audit receives every mutation and refusal of the sessions.
	Audit audit.Log
	// HostKeyPath is the server's private host key (created when missing).
	HostKeyPath string
	// UI is the TUI's options every session starts from (store label, key map,
	// plain mode); Engine, ReadOnly, Reach, Input and Output are set per session.
	UI ui.Options
	// IdleTimeout and MaxTimeout bound each connection (defaults 30 min, 12 h).
	IdleTimeout time.Duration
	MaxTimeout  time.Duration
	// Logger receives session starts, ends, refusals and panics.
	Logger *slog.Logger
}

// Server serves the TUI over SSH.
type Server struct {
	srv  *charmssh.Server
	opts Options
	log  *slog.Logger
	gate *gate

	mu       sync.Mutex
	programs map[*tea.Program]*live
	stopping bool
	// sessions counts sessions past authentication, until their TUI has ended.
	sessions sync.WaitGroup
}

// live is one running session: the key it authenticated with, the principal
// it acts as and its engine, so a reload of the keys file can end or narrow it.
type live struct {
	sess    charmssh.Session
	key     charmssh.PublicKey
	p       *auth.Principal
	engine  *sessionEngine
	revoked bool
}

// New builds the server; Serve or ListenAndServe runs it.
func New(addr string, opts Options) (*Server, error) {
	if opts.Engine == nil {
		return nil, contract.ConfigErr("the SSH server needs an engine")
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.MaxTimeout <= 0 {
		opts.MaxTimeout = DefaultMaxTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: opts, log: opts.Logger, gate: &gate{}, programs: map[*tea.Program]*live{}}
	sopts := []charmssh.Option{
		wish.WithAddress(addr),
		wish.WithPublicKeyAuth(s.authenticate),
		wish.WithIdleTimeout(opts.IdleTimeout),
		wish.WithMaxTimeout(opts.MaxTimeout),
		// Composed first to last, run last to first: panics are caught
		// outermost, then the principal is checked, then the PTY, then the TUI.
		wish.WithMiddleware(
			s.runProgram,
			s.requirePTY,
			s.checkPrincipal,
			s.recoverPanics,
		),
	}
	if opts.HostKeyPath != "" {
		sopts = append(sopts, wish.WithHostKeyPath(opts.HostKeyPath))
	}
	srv, err := wish.NewServer(sopts...)
	if err != nil {
		return nil, contract.ConfigErr("ssh server: %v", err)
	}
	s.srv = srv
	return s, nil
}

// Serve accepts sessions on l until Shutdown.
func (s *Server) Serve(l net.Listener) error {
	err := s.srv.Serve(l)
	if errors.Is(err, charmssh.ErrServerClosed) {
		return nil
	}
	return err
}

// ListenAndServe listens on the configured address and serves.
func (s *Server) ListenAndServe() error {
	err := s.srv.ListenAndServe()
	if errors.Is(err, charmssh.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting connections, asks every session's program to quit,
// waits for engine calls in flight to finish and for the sessions to end, then
// closes what is left. When ctx ends first, connections are cut.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.stopping = true
	for p := range s.programs {
		p.Quit()
	}
	s.mu.Unlock()
	ended := make(chan struct{})
	go func() {
		s.sessions.Wait()
		close(ended)
	}()
	gateErr := s.gate.close(ctx)
	select {
	case <-ended:
	case <-ctx.Done():
	}
	if err := s.srv.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	if gateErr != nil {
		return contract.Unavailable("ssh sessions were still writing when the shutdown timed out")
	}
	return nil
}

// Reload checks every open session against the keys file as it is now (call
// it after Keys.Replace): a session whose key the file no longer names is
// refused any further call at once and ended with a message; a session whose
// principal changed (reach, role, name) goes on as the new principal, its
// screens reloaded from the new reach. Open sessions never outlive a
// revocation by more than the time their TUI takes to quit.
func (s *Server) Reload() (ended, changed int) {
	var quit []*tea.Program
	type note struct {
		prog *tea.Program
		msg  ui.AccessMsg
	}
	var notes []note
	s.mu.Lock()
	for prog, l := range s.programs {
		p, ok := s.opts.Keys.ByKey(l.key)
		switch {
		case !ok:
			l.engine.revoke()
			l.revoked = true
			quit = append(quit, prog)
			s.log.Info("ssh session revoked", "principal", l.p.Name)
		case !l.p.Same(p):
			l.engine.use(s.confine(p))
			l.p = p
			notes = append(notes, note{prog, ui.AccessMsg{Reach: p.Reach, ReadOnly: s.opts.UI.ReadOnly || p.ReadOnly(),
				Note: "the keys file changed: you now act as " + p.Name + " (" + string(p.Role) + ")"}})
			s.log.Info("ssh session principal changed", "principal", p.Name, "role", string(p.Role))
		}
	}
	s.mu.Unlock()
	// Outside the lock: a program that is ending does not hold up the others.
	for _, prog := range quit {
		prog.Quit()
	}
	for _, n := range notes {
		n.prog.Send(n.msg)
	}
	return len(quit), len(notes)
}

// confine is the engine a session of p reads and writes through.
func (s *Server) confine(p *auth.Principal) contract.Engine {
	opts := []auth.Option{auth.WithVia("ssh"), auth.WithLogger(s.log)}
	if s.opts.Audit != nil {
		opts = append(opts, auth.WithAudit(s.opts.Audit))
	}
	return auth.Confine(s.opts.Engine, p, opts...)
}

// authenticate admits a key the keys file names and remembers its fingerprint.
func (s *Server) authenticate(ctx charmssh.Context, key charmssh.PublicKey) bool {
	p, ok := s.opts.Keys.ByKey(key)
	if !ok {
		s.log.Info("ssh key refused", "user", ctx.User(), "fingerprint", gossh.FingerprintSHA256(key), "remote", ctx.RemoteAddr().String())
		return false
	}
	perms := ctx.Permissions()
	if perms.Extensions == nil {
		perms.Extensions = map[string]string{}
	}
	perms.Extensions[fingerprintExt] = gossh.FingerprintSHA256(key)
	s.log.Debug("ssh key accepted", "principal", p.Name, "fingerprint", gossh.FingerprintSHA256(key))
	return true
}

// checkPrincipal verifies the session's key again against the fingerprint
// recorded at authentication and the keys file, and binds the principal.
func (s *Server) checkPrincipal(next charmssh.Handler) charmssh.Handler {
	return func(sess charmssh.Session) {
		key := sess.PublicKey()
		if key == nil {
			refuse(sess, "mnemo accepts public-key authentication only")
			return
		}
		fp := gossh.FingerprintSHA256(key)
		want := sess.Context().Permissions().Extensions[fingerprintExt]
		p, ok := s.opts.Keys.ByKey(key)
		if want == "" || want != fp || !ok {
			s.log.Warn("ssh session key does not match its authentication", "fingerprint", fp)
			refuse(sess, "this key is not authorized for mnemo")
			return
		}
		s.mu.Lock()
		if s.stopping {
			s.mu.Unlock()
			refuse(sess, "the server is shutting down")
			return
		}
		s.sessions.Add(1)
		s.mu.Unlock()
		defer s.sessions.Done()
		sess.Context().SetValue(principalKey{}, p)
		next(sess)
	}
}

// requirePTY refuses sessions without a terminal: the TUI needs one, and a
// command (ssh host mnemo list) is not offered over SSH.
func (s *Server) requirePTY(next charmssh.Handler) charmssh.Handler {
	return func(sess charmssh.Session) {
		if _, _, ok := sess.Pty(); !ok {
			refuse(sess, "mnemo serves its terminal UI over SSH and needs a terminal: connect with `ssh -t`")
			return
		}
		next(sess)
	}
}

// recoverPanics ends a panicking session with a message and keeps the server up.
func (s *Server) recoverPanics(next charmssh.Handler) charmssh.Handler {
	return func(sess charmssh.Session) {
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("ssh session panicked", "panic", fmt.Sprint(r))
				refuse(sess, "mnemo failed in this session; the failure is in the server's log")
			}
		}()
		next(sess)
	}
}

func refuse(sess charmssh.Session, msg string) {
	_, _ = fmt.Fprintln(sess.Stderr(), "mnemo: "+msg)
	_ = sess.Exit(1)
}

// runProgram runs the session's program: window changes become size
// messages, and the program is killed (restoring the terminal) when it ends or
// the session goes away.
func (s *Server) runProgram(next charmssh.Handler) charmssh.Handler {
	return func(sess charmssh.Session) {
		prog, endReads := s.program(sess)
		if prog == nil {
			next(sess)
			return
		}
		_, windows, _ := sess.Pty()
		ctx, cancel := context.WithCancel(sess.Context())
		defer cancel()
		go func() {
			for {
				select {
				case <-ctx.Done():
					prog.Quit()
					return
				case w, ok := <-windows:
					if !ok {
						return
					}
					prog.Send(tea.WindowSizeMsg{Width: w.Width, Height: w.Height})
				}
			}
		}()
		if _, err := prog.Run(); err != nil && !errors.Is(err, tea.ErrProgramKilled) {
			s.log.Warn("ssh session program ended with an error", "err", err)
		}
		prog.Kill()
		endReads() // ends the session's poll of the change feed
		s.mu.Lock()
		revoked := s.programs[prog] != nil && s.programs[prog].revoked
		s.mu.Unlock()
		if revoked {
			refuse(sess, "this key was removed from the server's keys file; the session has ended")
			return
		}
		next(sess)
	}
}

// program builds the session's TUI: its own model over the principal's
// confined engine, and the cancel of the context its reads run in (the
// program's life: a poll of the change feed ends when the TUI quits, even
// while the connection stays open).
func (s *Server) program(sess charmssh.Session) (*tea.Program, context.CancelFunc) {
	p, _ := sess.Context().Value(principalKey{}).(*auth.Principal)
	if p == nil {
		return nil, func() {}
	}
	ctx, cancel := context.WithCancel(sess.Context())
	engine := &sessionEngine{e: s.confine(p), g: s.gate, sess: sess.Context()}
	opts := s.opts.UI
	opts.Engine = engine
	opts.ReadOnly = opts.ReadOnly || p.ReadOnly()
	opts.Reach = p.Reach
	opts.LoadDemo = nil
	// Each session follows the change feed with its own subscription, under
	// its principal's reach (the confined engine answers only that).
	opts.Live = true
	opts.Context = ctx
	// The user is not at the server: nothing the session does may touch
	// its filesystem (export copies over OSC52 instead).
	opts.RemoteUser = true
	opts.Input, opts.Output = nil, nil
	if opts.StoreLabel == "" {
		opts.StoreLabel = "mnemo"
	}
	// The principal goes first: a long store path is cut from the right.
	opts.StoreLabel = p.Name + "@" + opts.StoreLabel
	popts := append([]tea.ProgramOption{tea.WithContext(sess.Context())}, bubbletea.MakeOptions(sess)...)
	popts = append(popts, opts.ProgramOptions...)
	prog := tea.NewProgram(ui.New(opts), popts...)
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		refuse(sess, "the server is shutting down")
		cancel()
		return nil, func() {}
	}
	s.programs[prog] = &live{sess: sess, key: sess.PublicKey(), p: p, engine: engine}
	s.mu.Unlock()
	s.log.Info("ssh session", "principal", p.Name, "role", string(p.Role), "remote", sess.RemoteAddr().String())
	go func() {
		<-sess.Context().Done()
		s.mu.Lock()
		delete(s.programs, prog)
		s.mu.Unlock()
	}()
	return prog, cancel
}
