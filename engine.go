package main

import (
	"context"
	"errors"
	"time"

	"mnemo/contract"
	"mnemo/engine/bolt"
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

// indexInfo is info's "index" object.
type indexInfo struct {
	State      string `json:"state"`
	AppliedSeq uint64 `json:"applied_seq"`
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

// openEngine opens what the settings name: a running server (--remote) or the
// local store directory.
func openEngine(ctx context.Context, a *app) (*openStore, error) {
	if url := a.remoteURL(); url != "" {
		return openRemote(ctx, a, url)
	}
	return openLocal(ctx, a, a.storeDir())
}

// openRemote attaches to a running `mnemo serve`.
func openRemote(_ context.Context, _ *app, url string) (*openStore, error) {
	return nil, contract.Unsupported("this build of mnemo cannot attach to a server (%s); run mnemo on the server's store instead", url)
}

// storeLockTimeout is how long an open waits for another process's lock.
const storeLockTimeout = time.Second

// openLocal opens the store in dir with the embedder and answerer the config
// file names.
func openLocal(_ context.Context, a *app, dir string) (*openStore, error) {
	opts := bolt.Options{LockTimeout: storeLockTimeout, Logger: a.logger}
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
	e, err := bolt.Open(dir, opts)
	if err != nil {
		var locked *bolt.LockedError
		if errors.As(err, &locked) {
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
			return indexInfo{State: st.State, AppliedSeq: st.AppliedSeq}
		},
		close: e.Close,
	}, nil
}
