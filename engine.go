package main

import (
	"cmp"
	"context"
	"errors"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/postgres"
	"mnemo/engine/remote"
	"mnemo/engine/retrieval"
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
	close       func() error
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
		return nil, err
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

// attachToServer is the automatic attach of docs/spec/design.md section 4: when a running
// `mnemo serve` holds the store and left its address and owner token beside
// it, talk to it instead of failing on the lock.
func attachToServer(ctx context.Context, a *app, locked *bolt.LockedError) (*openStore, bool) {
	if locked.Addr == "" {
		return nil, false
	}
	token := a.getenv("MNEMO_TOKEN")
	if token == "" {
		data, err := os.ReadFile(filepath.Join(locked.Path, bolt.TokenFile))
		if err != nil {
			return nil, false
		}
		token = strings.TrimSpace(string(data))
	}
	addr := serverURL(locked.Addr)
	s, err := connectRemote(ctx, a, addr, token)
	if err != nil {
		a.logger.Debug("could not attach to the server holding the store", "addr", redactURL(addr), "err", err)
		return nil, false
	}
	return s, true
}

// storeLockTimeout is how long an open waits for another process's lock.
const storeLockTimeout = time.Second

// openLocal opens the store in dir with the embedder and answerer the config
// file names.
func openLocal(ctx context.Context, a *app, dir string) (*openStore, error) {
	return openLocalWith(ctx, a, dir, nil)
}

// openLocalWith is openLocal with a last say over the options (copy sets the
// clock so records keep their times).
func openLocalWith(ctx context.Context, a *app, dir string, adjust func(*bolt.Options)) (*openStore, error) {
	opts := bolt.Options{LockTimeout: cmp.Or(a.lockTimeout, storeLockTimeout), Logger: a.logger}
	if ep := a.cfg.Embedder; ep.Endpoint != "" {
		emb, err := retrieval.NewOpenAIEmbedder(retrieval.OpenAIConfig{Endpoint: ep.Endpoint, Model: ep.Model, APIKeyEnv: ep.APIKeyEnv}, nil)
		if err != nil {
			return nil, err
		}
		opts.Embedder = emb
	}
	if ep := a.cfg.Answer; ep.Endpoint != "" {
		ans, err := retrieval.NewOpenAIChat(retrieval.ChatConfig{Endpoint: ep.Endpoint, Model: ep.Model, APIKeyEnv: ep.APIKeyEnv}, nil)
		if err != nil {
			return nil, err
		}
		opts.Answerer = ans
	}
	if adjust != nil {
		adjust(&opts)
	}
	e, err := bolt.Open(dir, opts)
	if err != nil {
		var locked *bolt.LockedError
		if errors.As(err, &locked) {
			if s, ok := attachToServer(ctx, a, locked); ok {
				return s, nil
			}
			return nil, lockedError{message: locked.Error()}
		}
		return nil, err
	}
	a.logger.Debug("opened the store", "dir", e.Dir())
	return &openStore{
		engine: e,
		label:  e.Dir(),
		dir:    e.Dir(),
		indexStatus: func() indexInfo {
			st := e.IndexStatus()
			info := indexInfo{State: st.State, AppliedSeq: st.AppliedSeq}
			if st.State != "ready" {
				info.Done, info.Total = st.Done, st.Total
			}
			return info
		},
		close: e.Close,
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
