package main

import (
	"context"
	"errors"
	"fmt"
	neturl "net/url"
	"time"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/postgres"
	"mnemo/engine/remote"
	"mnemo/engine/retrieval"
	"mnemo/server/local"
)

// openStore is an opened engine and what the CLI reports about it.
type openStore struct {
	engine contract.Engine
	// label names the store for people: its directory or the server's address.
	label string
	// dir is the store directory of a local store, empty for a remote one.
	dir string
	// indexStatus reports the derived index's state, when the engine has one.
	indexStatus func() indexInfo
	// recordCount counts every record, service sandboxes included, when the
	// engine can (the contract's reads never enter sandboxes without a reach).
	recordCount func(ctx context.Context) (int, error)
	// heldBy is the pid of the process holding a local store (0: unknown).
	heldBy func(ctx context.Context) int
	close  func() error
}

// indexInfo is info's "index" object; done and total show a rebuild's progress.
type indexInfo struct {
	State      string `json:"state"`
	AppliedSeq uint64 `json:"applied_seq"`
	Done       int    `json:"done,omitempty"`
	Total      int    `json:"total,omitempty"`
}

// engine opens the engine on first use and keeps it for the invocation.
func (a *app) engine(ctx context.Context) (contract.Engine, error) {
	s, err := a.openedStore(ctx)
	if err != nil {
		return nil, err
	}
	return s.engine, nil
}

func (a *app) openedStore(ctx context.Context) (*openStore, error) {
	if a.store != nil {
		return a.store, nil
	}
	s, err := openEngine(ctx, a)
	if err != nil {
		return nil, err
	}
	a.store = s
	return s, nil
}

// openEngine opens what the settings name: a running server (--remote), a
// PostgreSQL database (a postgres:// URL as the store) or the local store
// directory.
func openEngine(ctx context.Context, a *app) (*openStore, error) {
	if url := a.remoteURL(); url != "" {
		return openRemote(ctx, a, url)
	}
	if loc := a.storeDir(); postgres.IsURL(loc) {
		return openPostgres(ctx, a, loc)
	}
	return openLocal(ctx, a, a.storeDir())
}

// openRemote attaches to a running `mnemo serve` with the token from MNEMO_TOKEN.
func openRemote(ctx context.Context, a *app, url string) (*openStore, error) {
	return connectRemote(ctx, a, url, a.getenv("MNEMO_TOKEN"))
}

// connectRemote opens a client and proves the server is there and takes the
// token, so a wrong address or token fails before any work.
func connectRemote(ctx context.Context, a *app, url, token string) (*openStore, error) {
	c, err := remote.New(url, token)
	if err != nil {
		return nil, err
	}
	if err := c.Connect(ctx); err != nil {
		return nil, tokenHint(err, redactURL(url), token)
	}
	label := redactURL(c.URL())
	a.logger.Debug("attached to a server", "url", label)
	return &openStore{engine: c, label: label, close: func() error { return nil }}, nil
}

// redactURL hides a password in a server address before it is shown or logged.
func redactURL(raw string) string {
	u, err := neturl.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}

// storeLockTimeout is how long bench and conformance wait for the lock of
// the scratch stores they open directly.
const storeLockTimeout = time.Second

// readCommands are the commands that only read: on a path that holds no
// store they say so and create nothing.
var readCommands = map[string]bool{
	"list": true, "get": true, "info": true, "browse": true, "explore": true, "narrow": true,
	"fetch": true, "recall": true, "export": true, "watch": true, "health": true, "audit": true,
	"check": true, "backup": true, "clusters": true, "beliefs": true,
}

// openLocal opens the store in dir, shared with this user's other mnemo
// processes (server/local): this process holds it, or reaches the one that
// does through the store's socket.
func openLocal(ctx context.Context, a *app, dir string) (*openStore, error) {
	return openLocalWith(ctx, a, dir, nil)
}

// openLocalWith is openLocal with a last say over the options this process
// opens the store with when it holds it (copy sets the clock so records keep
// their times).
func openLocalWith(ctx context.Context, a *app, dir string, adjust func(*bolt.Options)) (*openStore, error) {
	opts := local.Options{Logger: a.logger, MustExist: readCommands[a.command], TakeoverWait: a.lockTimeout,
		Token: a.getenv("MNEMO_TOKEN"), Bolt: bolt.Options{Logger: a.logger}}
	if ep := a.cfg.Embedder; ep.Endpoint != "" {
		emb, err := retrieval.NewOpenAIEmbedder(retrieval.OpenAIConfig{Endpoint: ep.Endpoint, Model: ep.Model, APIKeyEnv: ep.APIKeyEnv}, nil)
		if err != nil {
			return nil, err
		}
		opts.Bolt.Embedder = emb
	}
	if ep := a.cfg.Answer; ep.Endpoint != "" {
		ans, err := retrieval.NewOpenAIChat(retrieval.ChatConfig{Endpoint: ep.Endpoint, Model: ep.Model, APIKeyEnv: ep.APIKeyEnv}, nil)
		if err != nil {
			return nil, err
		}
		opts.Bolt.Answerer = ans
	}
	if adjust != nil {
		adjust(&opts.Bolt)
	}
	if a.isTerminal(a.stderr) {
		// A holder that stops with no other process attached finishes what
		// its writes started; a person at a terminal is told what it waits for.
		opts.Settled = func(what string) {
			if what == "" {
				fmt.Fprint(a.stderr, "\r\x1b[K")
				return
			}
			fmt.Fprintf(a.stderr, "\rmnemo: finishing before exit: %s…\x1b[K", what)
		}
	}
	s, err := local.Open(ctx, dir, opts)
	if err != nil {
		return nil, err
	}
	a.logger.Debug("opened the store", "dir", s.Dir(), "role", s.Role().String())
	return &openStore{
		engine: s,
		label:  s.Dir(),
		dir:    s.Dir(),
		indexStatus: func() indexInfo {
			st, err := s.Status(ctx)
			if err != nil {
				return indexInfo{State: "unknown"}
			}
			info := indexInfo{State: st.Index.State, AppliedSeq: st.Index.AppliedSeq}
			if st.Index.State != "ready" {
				info.Done, info.Total = st.Index.Done, st.Index.Total
			}
			return info
		},
		recordCount: func(ctx context.Context) (int, error) {
			st, err := s.Status(ctx)
			if errors.Is(err, contract.ErrUnsupported) {
				// A server of an earlier mnemo: what explore counts.
				page, err := s.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetStatus, Limit: len(contract.Statuses())})
				return int(page.Total), err
			}
			return st.Records, err
		},
		heldBy: func(ctx context.Context) int {
			h, err := s.Holder(ctx)
			if err != nil {
				return 0
			}
			return h.PID
		},
		close: s.Close,
	}, nil
}

// serverURL reads a serve.addr: a URL (http://, https://, unix:/path) or a bare
// host:port, which is HTTP.
func serverURL(addr string) string {
	if u, err := neturl.Parse(addr); err == nil {
		switch u.Scheme {
		case "http", "https", "unix":
			return addr
		}
	}
	return "http://" + addr
}
