package main

import (
	"context"
	"fmt"
	"time"

	"mnemo/contract"
	"mnemo/engine/retrieval"
	"mnemo/storeopen"
)

// engine opens the engine on first use and keeps it for the invocation.
func (a *app) engine(ctx context.Context) (contract.Engine, error) {
	s, err := a.openedStore(ctx)
	if err != nil {
		return nil, err
	}
	return s.Engine, nil
}

func (a *app) openedStore(ctx context.Context) (*storeopen.Store, error) {
	if a.store != nil {
		return a.store, nil
	}
	s, err := a.openEngine(ctx)
	if err != nil {
		return nil, err
	}
	a.store = s
	return s, nil
}

// openEngine opens what the settings name: a running server (--remote), a
// PostgreSQL database (a postgres:// URL as the store) or the local store
// directory.
func (a *app) openEngine(ctx context.Context) (*storeopen.Store, error) {
	return storeopen.Open(ctx, a.remoteURL(), a.storeDir(), a.openOptions())
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

// openOptions are the settings every store this invocation opens shares.
func (a *app) openOptions() storeopen.Options {
	cfg := a.cfg.CurateConfig()
	opts := storeopen.Options{Logger: a.logger, Token: a.settings.Token(), MustExist: readCommands[a.command],
		TakeoverWait: a.lockTimeout, Clusters: &cfg, ClustersNow: a.command == "tui" || a.command == "demo"}
	if a.command == "import" {
		// An import keeps no clusters: a pass reading the store while the
		// records come in took 0.7 s of a 100k import's CPU, against its
		// writes, and the next holder that keeps them begins where a pass
		// stopped.
		opts.Clusters = nil
	}
	if ep := a.cfg.Embedder; ep.Endpoint != "" {
		opts.Embedder = &retrieval.OpenAIConfig{Endpoint: ep.Endpoint, Model: ep.Model, APIKeyEnv: ep.APIKeyEnv}
	}
	if ep := a.cfg.Answer; ep.Endpoint != "" {
		opts.Answerer = &retrieval.ChatConfig{Endpoint: ep.Endpoint, Model: ep.Model, APIKeyEnv: ep.APIKeyEnv}
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
	return opts
}
