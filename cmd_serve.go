package main

import (
	"context"

	"github.com/spf13/cobra"

	"mnemo/contract"
	"mnemo/server"
	"mnemo/server/auth"
	"mnemo/storeopen"
	"mnemo/ui"
	uissh "mnemo/ui/ssh"
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
		Long: `Own the store and serve it: the HTTP API (docs/spec/cli.md section 4) for agents and
scripts, and with --ssh the terminal UI over SSH.

On start the server writes its address to serve.addr and an owner token to
serve.token (mode 0600) in the store directory; the owner token is an admin with
no reach limit. Other mnemo commands started on the same store attach to the
server automatically when they can read that token; elsewhere use
"mnemo --remote URL" with MNEMO_TOKEN.

HTTP needs "Authorization: Bearer <token>" unless --http names a unix socket
(unix:/path), which is created with mode 0600 so only its owner can connect.
The keys file (TOML, docs/spec/design.md section 7) names the other principals with their
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

// serve turns the flags into the serving room's options (server.Serve): how
// to open the store, and how to build the SSH server with the TUI.
func (a *app) serve(ctx context.Context, f serveFlags) error {
	if a.remoteURL() != "" {
		return usageError("serve owns a store; it cannot serve a remote server (drop --remote / MNEMO_REMOTE)")
	}
	o := server.Options{HTTP: f.http, SSH: f.ssh, MaxItemBytes: f.maxItem, Stderr: a.stderr, Logger: a.logger,
		Open: func(ctx context.Context) (*server.Store, error) {
			s, err := a.openedStore(ctx)
			if err != nil {
				return nil, err
			}
			return a.servedStoreOf(ctx, s)
		},
		NewSSH: func(s server.SSHSetup) (server.SSHServer, error) {
			keymap, err := loadKeymap(a.cfg.Keys)
			if err != nil {
				return nil, contract.ConfigErr("%s: %w", a.configPath, err)
			}
			return uissh.New(s.Addr, uissh.Options{Engine: s.Engine, Keys: s.Keys, Audit: s.Audit,
				HostKeyPath: s.HostKeyPath, Logger: a.logger,
				UI: ui.Options{StoreLabel: server.Label(s.Listening), Keys: keymap, Logger: a.logger}})
		},
	}
	if f.keys != "" {
		o.KeysPath = storeopen.ExpandHome(f.keys)
	}
	if f.hostKey != "" {
		o.HostKeyPath = storeopen.ExpandHome(f.hostKey)
	}
	return server.Serve(ctx, o)
}
