package main

import (
	"context"

	"mnemo/contract"
	"mnemo/engine/memory"
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

// openLocal opens the store in dir.
func openLocal(_ context.Context, a *app, dir string) (*openStore, error) {
	e := memory.New()
	a.logger.Debug("opened the in-memory engine", "dir", dir)
	return &openStore{engine: e, label: dir, dir: dir, close: func() error { return nil }}, nil
}
