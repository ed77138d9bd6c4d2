package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/postgres"
	"mnemo/server"
	"mnemo/server/local"
	"mnemo/storeopen"
)

// servedStoreOf says how to serve an opened store: a directory store owns its
// directory; a PostgreSQL store may be served by any number of processes,
// which share the owner token kept in the database.
func (a *app) servedStoreOf(ctx context.Context, s *storeopen.Store) (*server.Store, error) {
	switch e := s.Engine.(type) {
	case *local.Store:
		// The other processes of this user reach the store through its
		// socket whichever process holds it; the server is one more of them
		// (or the holder), and serves its listeners through the same Store.
		tokenPath := filepath.Join(e.Dir(), bolt.TokenFile)
		return &server.Store{Engine: e, Audit: e, Label: e.Dir(), TokenPath: tokenPath,
			AddrPath:    filepath.Join(e.Dir(), bolt.AddrFile),
			HostKeyPath: filepath.Join(e.Dir(), bolt.HostKeyFile),
			Token:       func() (string, error) { return server.OwnerTokenFile(tokenPath) }}, nil
	case *postgres.Engine:
		dir := filepath.Join(a.settings.StateDir,
			fmt.Sprintf("postgres-%08x", contract.FNV1a32([]byte(e.Label()))))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, contract.ConfigErr("cannot create %s: %w", dir, err)
		}
		// A PostgreSQL store publishes no address, since any process may open
		// it; its owner token and SSH host key are kept in a state directory.
		tokenPath := filepath.Join(dir, bolt.TokenFile)
		return &server.Store{Engine: e, Audit: e, Label: e.Label(), TokenPath: tokenPath,
			HostKeyPath: filepath.Join(dir, bolt.HostKeyFile), Token: func() (string, error) {
				tok, err := e.OwnerToken(ctx)
				if err != nil {
					return "", err
				}
				// A copy for the person starting the server; the database holds the truth.
				if old, err := os.ReadFile(tokenPath); err != nil || strings.TrimSpace(string(old)) != tok {
					if err := os.WriteFile(tokenPath, []byte(tok+"\n"), 0o600); err != nil {
						return "", contract.ConfigErr("cannot write %s: %w", tokenPath, err)
					}
				}
				return tok, nil
			}}, nil
	}
	return nil, lockedError{message: fmt.Sprintf("the store is already served by another mnemo process at %s", s.Label)}
}
