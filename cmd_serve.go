package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"mnemo/contract"
	"mnemo/engine/auth"
	"mnemo/engine/bolt"
	"mnemo/engine/httpapi"
	"mnemo/ui"
	uissh "mnemo/ui/ssh"
)

// Files `mnemo serve` keeps in the store directory beside bolt's serve.addr.
const (
	serveTokenFile = "serve.token"
	serveHostKey   = "ssh_host_ed25519"
	// serveShutdownGrace bounds how long a stopping server waits for requests
	// and SSH sessions in flight.
	serveShutdownGrace = 15 * time.Second
)

type serveFlags struct {
	http    string
	ssh     string
	keys    string
	hostKey string
	maxItem int
}

func newServeCommand(a *app) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the store over HTTP (and the TUI over SSH) to many clients",
		Long: `Own the store and serve it: the HTTP API (cli.md section 4) for agents and
scripts, and with --ssh the terminal UI over SSH.

On start the server writes its address to serve.addr and an owner token to
serve.token (mode 0600) in the store directory; the owner token is an admin with
no reach limit. Other mnemo commands started on the same store attach to the
server automatically when they can read that token; elsewhere use
"mnemo --remote URL" with MNEMO_TOKEN.

HTTP needs "Authorization: Bearer <token>" unless --http names a unix socket
(unix:/path), which is created with mode 0600 so only its owner can connect.
The keys file (TOML, design.md section 7) names the other principals with their
role, reach, SSH keys and token digests; SSH sessions need it. A principal's
reach written without inherit means inherit = false. At start (and on every
reload) the server prints one line per principal: what it can read and write.
SIGHUP reloads the file: tokens it dropped are refused at once, open SSH
sessions of keys it dropped end, and sessions whose principal changed go on
under the new reach and role.

Every mutation and every refused request is appended to the store's audit log
("mnemo audit"). SIGINT or SIGTERM stops the server after the requests in
flight have finished.`,
		Example: `  mnemo serve
  mnemo serve --http 127.0.0.1:7077 --ssh :2222 --keys ~/.config/mnemo/keys.toml
  mnemo serve --http unix:/run/mnemo/mnemo.sock`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.serve(cmd.Context(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.http, "http", "127.0.0.1:7077", "HTTP address (host:port, or unix:/path for a 0600 socket)")
	fl.StringVar(&f.ssh, "ssh", "", "SSH address for the TUI (e.g. :2222); needs --keys")
	fl.StringVar(&f.keys, "keys", "", "keys file naming the principals (TOML)")
	fl.StringVar(&f.hostKey, "host-key", "", "SSH host key (default: ssh_host_ed25519 in the store directory, created if missing)")
	fl.IntVar(&f.maxItem, "max-item-bytes", auth.DefaultMaxItemBytes, "largest item (its JSON, in bytes) a client may store; -1 lifts the bound")
	return cmd
}

// serve runs the servers until ctx ends, then shuts them down gracefully.
func (a *app) serve(ctx context.Context, f serveFlags) error {
	if a.remoteURL() != "" {
		return usageError("serve owns a store; it cannot serve a remote server (drop --remote / MNEMO_REMOTE)")
	}
	if strings.TrimSpace(f.http) == "" {
		return usageError("--http needs an address: the server always serves HTTP, which other mnemo commands attach to")
	}
	var keys *auth.Keys
	if f.keys != "" {
		k, err := auth.LoadKeys(expandHome(f.keys))
		if err != nil {
			return err
		}
		keys = k
	}
	if f.ssh != "" && keys == nil {
		return usageError("--ssh needs --keys: SSH sessions authenticate with the keys file's ssh_keys")
	}
	// Listen for SIGHUP before the address is published, so a reload sent as
	// soon as the server is up cannot end the process.
	hangups := make(chan os.Signal, 1)
	if keys != nil {
		signal.Notify(hangups, syscall.SIGHUP)
		defer signal.Stop(hangups)
	}
	s, err := a.openedStore(ctx)
	if err != nil {
		return err
	}
	store, err := a.servedStoreOf(ctx, s)
	if err != nil {
		return err
	}
	token, err := store.token()
	if err != nil {
		return err
	}
	httpListener, addrURL, open, err := listenHTTP(f.http)
	if err != nil {
		return err
	}
	defer cleanupSocket(f.http)
	logger := a.logger
	if f.maxItem == 0 {
		_ = httpListener.Close()
		return usageError("--max-item-bytes must be a positive number of bytes, or -1 for no bound")
	}
	api := httpapi.New(store.engine, httpapi.Options{OwnerToken: token, Keys: keys, Open: open,
		Audit: store.audit, AuditReader: store.audit, Logger: logger, MaxItemBytes: f.maxItem})
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
			errs <- contract.Unavailable("the HTTP server stopped: %v", err)
		}
	}()

	var sshServer *uissh.Server
	var sshAddr string
	if f.ssh != "" {
		keymap, err := loadKeymap(a.cfg.Keys)
		if err != nil {
			_ = httpServer.Close()
			return contract.ConfigErr("%s: %s", a.configPath, err.Error())
		}
		hostKey := f.hostKey
		if hostKey == "" {
			hostKey = filepath.Join(store.dir, serveHostKey)
		}
		l, err := net.Listen("tcp", f.ssh)
		if err != nil {
			_ = httpServer.Close()
			return contract.ConfigErr("cannot listen for SSH on %s: %v", f.ssh, err)
		}
		sshAddr = l.Addr().String()
		// Remote users see the server's name, never the store's path.
		sshServer, err = uissh.New(f.ssh, uissh.Options{Engine: store.engine, Keys: keys, Audit: store.audit,
			HostKeyPath: expandHome(hostKey), Logger: logger,
			UI: ui.Options{StoreLabel: serverLabel(sshAddr), Keys: keymap, Logger: logger}})
		if err != nil {
			_ = l.Close()
			_ = httpServer.Close()
			return err
		}
		go func() {
			if err := sshServer.Serve(l); err != nil {
				errs <- contract.Unavailable("the SSH server stopped: %v", err)
			}
		}()
	}

	// A directory store names its server beside it; a PostgreSQL store needs
	// none, since any process may open it.
	addrPath := ""
	if store.addrFile {
		addrPath = filepath.Join(store.dir, bolt.AddrFile)
		if err := os.WriteFile(addrPath, []byte(addrURL+"\n"), 0o600); err != nil {
			_ = httpServer.Close()
			return contract.EngineErr("cannot write %s: %v", bolt.AddrFile, err)
		}
		defer os.Remove(addrPath)
	}

	fmt.Fprintf(a.stderr, "mnemo: serving %s\n  http  %s (owner token in %s)\n",
		store.label, addrURL, filepath.Join(store.dir, serveTokenFile))
	if sshServer != nil {
		fmt.Fprintf(a.stderr, "  ssh   %s\n", sshAddr)
	}
	a.printPrincipals(keys)
	if !open && !isLoopback(httpListener.Addr()) {
		fmt.Fprintln(a.stderr, "  note: HTTP listens beyond loopback without TLS; put a TLS proxy in front of it")
	}
	logger.Info("serving", "store", store.label, "http", addrURL, "ssh", sshAddr)

	var runErr error
wait:
	for {
		select {
		case <-ctx.Done():
			break wait
		case runErr = <-errs:
			break wait
		case <-hangups:
			if a.reloadKeys(f.keys, keys) && sshServer != nil {
				ended, changed := sshServer.Reload()
				if ended+changed > 0 {
					fmt.Fprintf(a.stderr, "mnemo: SSH sessions: %d ended (key removed), %d now act as their changed principal\n", ended, changed)
				}
			}
		}
	}
	// New commands must not attach to a server on its way out.
	if addrPath != "" {
		_ = os.Remove(addrPath)
	}
	stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), serveShutdownGrace)
	defer cancel()
	api.EndLongPolls()
	if err := httpServer.Shutdown(stop); err != nil {
		_ = httpServer.Close()
	}
	if sshServer != nil {
		if err := sshServer.Shutdown(stop); err != nil {
			logger.Warn("ssh shutdown", "err", err)
		}
	}
	fmt.Fprintln(a.stderr, "mnemo: stopped serving")
	return runErr
}

// reloadKeys swaps in the keys file again (SIGHUP) and tells whether it did;
// a file that no longer parses leaves the running principals as they were.
func (a *app) reloadKeys(path string, keys *auth.Keys) bool {
	fresh, err := auth.LoadKeys(expandHome(path))
	if err != nil {
		fmt.Fprintf(a.stderr, "mnemo: keys file not reloaded: %s\n", contract.AsError(err).Message)
		return false
	}
	keys.Replace(fresh)
	fmt.Fprintf(a.stderr, "mnemo: keys file reloaded (%d principals)\n", len(fresh.Principals()))
	a.printPrincipals(fresh)
	return true
}

// printPrincipals says, one line each, what every principal of the keys file
// can read and write.
func (a *app) printPrincipals(keys *auth.Keys) {
	for _, p := range keys.Principals() {
		fmt.Fprintf(a.stderr, "  principal %s\n", p.Account())
	}
}

// ownerToken reads the store's owner token, creating it (mode 0600) on the
// first start; a token file others can read is refused rather than used.
func ownerToken(dir string) (string, error) {
	path := filepath.Join(dir, serveTokenFile)
	if data, err := os.ReadFile(path); err == nil {
		st, err := os.Stat(path)
		if err == nil && st.Mode().Perm()&0o077 != 0 {
			return "", contract.ConfigErr("%s is readable by others (mode %o); run chmod 600 on it or delete it for a new token", path, st.Mode().Perm())
		}
		if tok := strings.TrimSpace(string(data)); tok != "" {
			return tok, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", contract.ConfigErr("cannot read %s: %v", path, err)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", contract.EngineErr("cannot make an owner token: %v", err)
	}
	tok := hex.EncodeToString(raw[:])
	if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
		return "", contract.ConfigErr("cannot write %s: %v", path, err)
	}
	return tok, nil
}

// listenHTTP listens on host:port, or on a unix socket (unix:/path) made 0600,
// where every connection is the owner's and needs no token.
func listenHTTP(addr string) (l net.Listener, url string, open bool, err error) {
	if path, ok := socketPath(addr); ok {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, "", false, contract.ConfigErr("socket path %s: %v", path, err)
		}
		if st, err := os.Lstat(abs); err == nil && st.Mode()&os.ModeSocket != 0 {
			// A socket left by a server that died; a live one answers.
			if c, err := net.DialTimeout("unix", abs, time.Second); err == nil {
				c.Close()
				return nil, "", false, contract.ConfigErr("another server listens on %s", abs)
			}
			_ = os.Remove(abs)
		}
		l, err := listenPrivateSocket(abs)
		if err != nil {
			return nil, "", false, err
		}
		return l, "unix://" + abs, true, nil
	}
	l, err = net.Listen("tcp", addr)
	if err != nil {
		return nil, "", false, contract.ConfigErr("cannot listen for HTTP on %s: %v", addr, err)
	}
	return l, "http://" + l.Addr().String(), false, nil
}

// serverLabel names the server in an SSH session's header: its host name
// and port (the listen address when the host has no name).
func serverLabel(listen string) string {
	_, port, err := net.SplitHostPort(listen)
	host, herr := os.Hostname()
	if err != nil || herr != nil || host == "" {
		return listen
	}
	return net.JoinHostPort(host, port)
}

// listenPrivateSocket listens on a unix socket at path that has mode 0600
// from the moment it exists there: it is made in a fresh 0700 directory
// beside path (no one else can reach it there, whatever the umask), made
// 0600, and only then renamed into place.
func listenPrivateSocket(path string) (net.Listener, error) {
	dir, err := os.MkdirTemp(filepath.Dir(path), ".mnemo-socket-")
	if err != nil {
		return nil, contract.ConfigErr("cannot listen on %s: %v", path, err)
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "s")
	l, err := net.Listen("unix", tmp)
	if err != nil {
		return nil, contract.ConfigErr("cannot listen on %s: %v", path, err)
	}
	// The socket is renamed away from tmp: closing must not unlink there.
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := os.Chmod(tmp, 0o600); err != nil {
		l.Close()
		return nil, contract.ConfigErr("cannot make %s private: %v", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		l.Close()
		return nil, contract.ConfigErr("cannot listen on %s: %v", path, err)
	}
	return l, nil
}

func socketPath(addr string) (string, bool) {
	if p, ok := strings.CutPrefix(addr, "unix://"); ok {
		return p, true
	}
	return strings.CutPrefix(addr, "unix:")
}

func cleanupSocket(addr string) {
	if path, ok := socketPath(addr); ok {
		_ = os.Remove(path)
	}
}

func isLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return !ok || tcp.IP.IsLoopback()
}
