package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/adrg/xdg"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/postgres"
	"mnemo/server/audit"
)

// auditStore keeps and reads back serve mode's audit log.
type auditStore interface {
	audit.Log
	audit.Reader
}

// servedStore is what `mnemo serve` needs of the store it serves.
type servedStore struct {
	engine contract.Engine
	audit  auditStore
	// label names the store for people (a directory, or a URL with the
	// password masked).
	label string
	// dir holds serve.token and the default SSH host key, and for a
	// directory store serve.addr, which other commands attach through.
	dir      string
	addrFile bool
	token    func() (string, error)
}

// servedStoreOf says how to serve an opened store: a directory store owns its
// directory; a PostgreSQL store may be served by any number of processes,
// which share the owner token kept in the database.
func (a *app) servedStoreOf(ctx context.Context, s *openStore) (*servedStore, error) {
	switch e := s.engine.(type) {
	case *bolt.Engine:
		return &servedStore{engine: e, audit: e, label: e.Dir(), dir: e.Dir(), addrFile: true,
			token: func() (string, error) { return ownerToken(e.Dir()) }}, nil
	case *postgres.Engine:
		dir := filepath.Join(a.xdgDir("XDG_STATE_HOME", xdg.StateHome), "mnemo",
			fmt.Sprintf("postgres-%08x", contract.FNV1a32([]byte(e.Label()))))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, contract.ConfigErr("cannot create %s: %v", dir, err)
		}
		return &servedStore{engine: e, audit: e, label: e.Label(), dir: dir, token: func() (string, error) {
			tok, err := e.OwnerToken(ctx)
			if err != nil {
				return "", err
			}
			// A copy for the person starting the server; the database holds the truth.
			path := filepath.Join(dir, serveTokenFile)
			if old, err := os.ReadFile(path); err != nil || strings.TrimSpace(string(old)) != tok {
				if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
					return "", contract.ConfigErr("cannot write %s: %v", path, err)
				}
			}
			return tok, nil
		}}, nil
	}
	return nil, lockedError{message: fmt.Sprintf("the store is already served by another mnemo process at %s", s.label)}
}
