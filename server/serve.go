// Package server is serve mode's room: it owns a store for many clients,
// serving the HTTP API (server/httpapi, its wire in server/wire) to agents
// and scripts and, when asked, the TUI over SSH, each caller confined to its
// principal (server/auth) and every mutation or refusal in the audit log
// (server/audit). Serve is `mnemo serve`'s set-up and lifetime; package main
// only turns flags into Options and says how to open the store.
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"mnemo/contract"
	"mnemo/server/audit"
	"mnemo/server/auth"
	"mnemo/server/httpapi"
)

// ShutdownGrace bounds how long a stopping server waits for requests and SSH
// sessions in flight.
const ShutdownGrace = 15 * time.Second

// AuditStore keeps and reads back the audit log.
type AuditStore interface {
	audit.Log
	audit.Reader
}

// Store is what serving needs of the store it serves.
type Store struct {
	Engine contract.Engine
	Audit  AuditStore
	// Label names the store for people (a directory, or a URL with the
	// password masked).
	Label string
	// Token returns the owner token, made on first use.
	Token func() (string, error)
	// TokenPath is where the person starting the server finds the owner token.
	TokenPath string
	// AddrPath, when set, is where the server publishes its address while it
	// runs, so other commands on the same store attach to it.
	AddrPath string
	// HostKeyPath is the default SSH host key (created when missing).
	HostKeyPath string
}

// SSHServer serves the TUI over SSH (ui/ssh); the serving room only starts,
// reloads and stops it, so it does not depend on the UI.
type SSHServer interface {
	Serve(l net.Listener) error
	// Reload applies a reloaded keys file to open sessions.
	Reload() (ended, changed int)
	Shutdown(ctx context.Context) error
}

// SSHSetup is what an SSH server is built from.
type SSHSetup struct {
	// Addr is the SSH address as given; Listening is the address it listens
	// on (the port resolved).
	Addr, Listening string
	Engine          contract.Engine
	Keys            *auth.Keys
	Audit           audit.Log
	HostKeyPath     string
}

// Options configure Serve.
type Options struct {
	// HTTP is host:port, or unix:/path for a 0600 socket served without tokens.
	HTTP string
	// SSH is the SSH address for the TUI; empty serves no SSH.
	SSH string
	// KeysPath is the keys file naming the principals; SIGHUP reloads it.
	KeysPath string
	// HostKeyPath overrides Store.HostKeyPath.
	HostKeyPath string
	// MaxItemBytes bounds a stored item's JSON (-1: no bound).
	MaxItemBytes int
	// Open opens the store, after the options are checked and the keys file
	// is read, so a wrong flag costs no store open.
	Open func(ctx context.Context) (*Store, error)
	// NewSSH builds the SSH server once its address listens.
	NewSSH func(SSHSetup) (SSHServer, error)
	// Stderr is where the person starting the server reads what it serves.
	Stderr io.Writer
	Logger *slog.Logger
}

// Serve runs the servers until ctx ends, then shuts them down gracefully.
func Serve(ctx context.Context, o Options) error {
	if strings.TrimSpace(o.HTTP) == "" {
		return contract.Invalid("--http needs an address: the server always serves HTTP, which other mnemo commands attach to")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	var keys *auth.Keys
	if o.KeysPath != "" {
		k, err := auth.LoadKeys(o.KeysPath)
		if err != nil {
			return err
		}
		keys = k
	}
	if o.SSH != "" && keys == nil {
		return contract.Invalid("--ssh needs --keys: SSH sessions authenticate with the keys file's ssh_keys")
	}
	// Listen for SIGHUP before the address is published, so a reload sent as
	// soon as the server is up cannot end the process.
	hangups := make(chan os.Signal, 1)
	if keys != nil {
		signal.Notify(hangups, syscall.SIGHUP)
		defer signal.Stop(hangups)
	}
	store, err := o.Open(ctx)
	if err != nil {
		return err
	}
	token, err := store.Token()
	if err != nil {
		return err
	}
	if store.TokenPath != "" {
		// The owner token is good while this server runs, and no longer.
		defer os.Remove(store.TokenPath)
	}
	httpListener, addrURL, open, err := ListenHTTP(o.HTTP)
	if err != nil {
		return err
	}
	defer CleanupSocket(o.HTTP)
	logger := o.Logger
	if o.MaxItemBytes == 0 {
		_ = httpListener.Close()
		return contract.Invalid("--max-item-bytes must be a positive number of bytes, or -1 for no bound")
	}
	api := httpapi.New(store.Engine, httpapi.Options{OwnerToken: token, Keys: keys, Open: open,
		Audit: store.Audit, AuditReader: store.Audit, Logger: logger, MaxItemBytes: o.MaxItemBytes})
	httpServer := &http.Server{
		Handler:           api,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute,
		WriteTimeout:      5 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	errs := make(chan error, 2)
	go func() {
		if err := httpServer.Serve(httpListener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs <- contract.Unavailable("the HTTP server stopped: %w", err)
		}
	}()

	var sshServer SSHServer
	var sshAddr string
	if o.SSH != "" {
		hostKey := o.HostKeyPath
		if hostKey == "" {
			hostKey = store.HostKeyPath
		}
		l, err := net.Listen("tcp", o.SSH)
		if err != nil {
			_ = httpServer.Close()
			return contract.ConfigErr("cannot listen for SSH on %s: %w", o.SSH, err)
		}
		sshAddr = l.Addr().String()
		sshServer, err = o.NewSSH(SSHSetup{Addr: o.SSH, Listening: sshAddr, Engine: store.Engine, Keys: keys,
			Audit: store.Audit, HostKeyPath: hostKey})
		if err != nil {
			_ = l.Close()
			_ = httpServer.Close()
			return err
		}
		go func() {
			if err := sshServer.Serve(l); err != nil {
				errs <- contract.Unavailable("the SSH server stopped: %w", err)
			}
		}()
	}

	fmt.Fprintf(o.Stderr, "mnemo: serving %s\n  http  %s (owner token in %s)\n", store.Label, addrURL, store.TokenPath)
	if sshServer != nil {
		fmt.Fprintf(o.Stderr, "  ssh   %s\n", sshAddr)
	}
	printPrincipals(o.Stderr, keys)
	if !open && !isLoopback(httpListener.Addr()) {
		fmt.Fprintln(o.Stderr, "  note: HTTP listens beyond loopback without TLS; put a TLS proxy in front of it")
	}
	// The address file comes last: whoever waits for it (a script, a
	// client finding the server) finds the banner already complete.
	if store.AddrPath != "" {
		if err := os.WriteFile(store.AddrPath, []byte(addrURL+"\n"), 0o600); err != nil {
			_ = httpServer.Close()
			return contract.EngineErr("cannot write %s: %w", filepath.Base(store.AddrPath), err)
		}
		defer os.Remove(store.AddrPath)
	}

	logger.Info("serving", "store", store.Label, "http", addrURL, "ssh", sshAddr)

	var runErr error
wait:
	for {
		select {
		case <-ctx.Done():
			break wait
		case runErr = <-errs:
			break wait
		case <-hangups:
			if reloadKeys(o.Stderr, o.KeysPath, keys) && sshServer != nil {
				ended, changed := sshServer.Reload()
				if ended+changed > 0 {
					fmt.Fprintf(o.Stderr, "mnemo: SSH sessions: %d ended (key removed), %d now act as their changed principal\n", ended, changed)
				}
			}
		}
	}
	// New commands must not attach to a server on its way out.
	if store.AddrPath != "" {
		_ = os.Remove(store.AddrPath)
	}
	stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownGrace)
	defer cancel()
	// Open long polls (GET /v1/changes) answer at once rather than hold
	// the shutdown for their whole wait.
	api.EndLongPolls()
	if err := httpServer.Shutdown(stop); err != nil {
		_ = httpServer.Close()
	}
	if sshServer != nil {
		if err := sshServer.Shutdown(stop); err != nil {
			logger.Warn("ssh shutdown", "err", err)
		}
	}
	fmt.Fprintln(o.Stderr, "mnemo: stopped serving")
	return runErr
}

// reloadKeys swaps in the keys file again (SIGHUP) and tells whether it did;
// a file that no longer parses leaves the running principals as they were.
func reloadKeys(stderr io.Writer, path string, keys *auth.Keys) bool {
	fresh, err := auth.LoadKeys(path)
	if err != nil {
		fmt.Fprintf(stderr, "mnemo: keys file not reloaded: %s\n", contract.AsError(err).Message)
		return false
	}
	keys.Replace(fresh)
	fmt.Fprintf(stderr, "mnemo: keys file reloaded (%d principals)\n", len(fresh.Principals()))
	printPrincipals(stderr, fresh)
	return true
}

// printPrincipals says, one line each, what every principal of the keys file
// can read and write.
func printPrincipals(stderr io.Writer, keys *auth.Keys) {
	for _, p := range keys.Principals() {
		fmt.Fprintf(stderr, "  principal %s\n", p.Account())
	}
}

// OwnerTokenFile reads the owner token kept at path, creating it (mode 0600)
// on the first start; a token file others can read is refused rather than used.
func OwnerTokenFile(path string) (string, error) {
	if data, err := os.ReadFile(path); err == nil {
		st, err := os.Stat(path)
		if err == nil && st.Mode().Perm()&0o077 != 0 {
			return "", contract.ConfigErr("%s is readable by others (mode %o); run chmod 600 on it or delete it for a new token", path, st.Mode().Perm())
		}
		if tok := strings.TrimSpace(string(data)); tok != "" {
			return tok, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", contract.ConfigErr("cannot read %s: %w", path, err)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", contract.EngineErr("cannot make an owner token: %w", err)
	}
	tok := hex.EncodeToString(raw[:])
	if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
		return "", contract.ConfigErr("cannot write %s: %w", path, err)
	}
	return tok, nil
}

// ListenHTTP listens on host:port, or on a unix socket (unix:/path) made 0600,
// where every connection is the owner's and needs no token (open is true).
func ListenHTTP(addr string) (l net.Listener, url string, open bool, err error) {
	if path, ok := socketPath(addr); ok {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, "", false, contract.ConfigErr("socket path %s: %w", path, err)
		}
		if st, err := os.Lstat(abs); err == nil && st.Mode()&os.ModeSocket != 0 {
			// A socket left by a server that died; a live one answers.
			if c, err := net.DialTimeout("unix", abs, time.Second); err == nil {
				c.Close()
				return nil, "", false, contract.ConfigErr("another server listens on %s", abs)
			}
			_ = os.Remove(abs)
		}
		l, err := ListenPrivateSocket(abs)
		if err != nil {
			return nil, "", false, err
		}
		return l, "unix://" + abs, true, nil
	}
	l, err = net.Listen("tcp", addr)
	if err != nil {
		return nil, "", false, contract.ConfigErr("cannot listen for HTTP on %s: %w", addr, err)
	}
	return l, "http://" + l.Addr().String(), false, nil
}

// Label names a server in an SSH session's header: its host name and port
// (the listen address when the host has no name), never the store's path.
func Label(listen string) string {
	_, port, err := net.SplitHostPort(listen)
	host, herr := os.Hostname()
	if err != nil || herr != nil || host == "" {
		return listen
	}
	return net.JoinHostPort(host, port)
}

// ListenPrivateSocket listens on a unix socket at path that has mode 0600
// from the moment it exists there: it is made in a fresh 0700 directory
// beside path (no one else can reach it there, whatever the umask), made
// 0600, and only then renamed into place.
func ListenPrivateSocket(path string) (net.Listener, error) {
	dir, err := os.MkdirTemp(filepath.Dir(path), ".mnemo-socket-")
	if err != nil {
		return nil, contract.ConfigErr("cannot listen on %s: %w", path, err)
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "s")
	l, err := net.Listen("unix", tmp)
	if err != nil {
		return nil, contract.ConfigErr("cannot listen on %s: %w", path, err)
	}
	// The socket is renamed away from tmp: closing must not unlink there.
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := os.Chmod(tmp, 0o600); err != nil {
		l.Close()
		return nil, contract.ConfigErr("cannot make %s private: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		l.Close()
		return nil, contract.ConfigErr("cannot listen on %s: %w", path, err)
	}
	return l, nil
}

func socketPath(addr string) (string, bool) {
	if p, ok := strings.CutPrefix(addr, "unix://"); ok {
		return p, true
	}
	return strings.CutPrefix(addr, "unix:")
}

// CleanupSocket removes the unix socket a server listened on, if any.
func CleanupSocket(addr string) {
	if path, ok := socketPath(addr); ok {
		_ = os.Remove(path)
	}
}

func isLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return !ok || tcp.IP.IsLoopback()
}
