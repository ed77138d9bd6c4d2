// Package storeopen opens the store a command names: a running server
// (--remote, an http(s):// or unix: URL), a PostgreSQL database (a postgres://
// URL) or a local store directory, which is shared with this user's other
// mnemo processes through server/local. It answers the engine and what the CLI
// reports about it (label, index state, record count, holder), and never shows
// a password: labels and errors carry redacted URLs.
package storeopen

import (
	"context"
	"errors"
	"log/slog"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/curate"
	"mnemo/engine/postgres"
	"mnemo/engine/remote"
	"mnemo/engine/retrieval"
	"mnemo/server/local"
	"mnemo/server/wire"
)

// Store is an opened engine and what the CLI reports about it.
type Store struct {
	Engine contract.Engine
	// Label names the store for people: its directory or the server's
	// address, with any password masked.
	Label string
	// Dir is the store directory of a local store, empty otherwise.
	Dir string
	// IndexStatus reports the derived index's state, when the engine has one.
	IndexStatus func() Index
	// RecordCount counts every record, service sandboxes included, when the
	// engine can (the contract's reads never enter sandboxes without a reach).
	RecordCount func(ctx context.Context) (int, error)
	// HeldBy is the pid of the process holding a local store (0: unknown).
	HeldBy func(ctx context.Context) int
	// Close releases the store.
	Close func() error
}

// Index is info's "index" object; done and total show a rebuild's progress,
// behind a catch-up's (the writes the index has yet to apply).
type Index struct {
	State      string `json:"state"`
	AppliedSeq uint64 `json:"applied_seq"`
	Done       int    `json:"done,omitempty"`
	Total      int    `json:"total,omitempty"`
	Behind     uint64 `json:"behind,omitempty"`
}

// Options are what a store is opened with.
type Options struct {
	// Logger receives what was opened (--debug); nil discards.
	Logger *slog.Logger
	// Token is the bearer token for a server (MNEMO_TOKEN); a local store
	// hands it to the holder it reaches.
	Token string
	// MustExist refuses a directory, or a PostgreSQL schema, that holds no
	// store instead of creating one (the commands that only read).
	MustExist bool
	// TakeoverWait bounds the wait for another process's lock (0: server/local's default).
	TakeoverWait time.Duration
	// Embedder and Answerer, when set, are the OpenAI-compatible endpoints a
	// local store embeds and answers with (PostgreSQL takes the answerer).
	Embedder *retrieval.OpenAIConfig
	Answerer *retrieval.ChatConfig
	// Settled, when set, is told what a stopping holder finishes before
	// exit ("" when it is done), for a person at a terminal.
	Settled func(what string)
	// Clusters are the thresholds a local store's holder keeps the whole
	// store's clusters with, in the background (nil: it keeps none).
	Clusters *curate.Config
	// ClustersNow has a holder begin keeping them at once (the TUI, which
	// shows them), not after its first second.
	ClustersNow bool
	// Adjust has a last say over a local store's options when this process
	// holds it (copy sets the clock so records keep their times).
	Adjust func(*bolt.Options)
}

func (o *Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

// Open opens what the settings name: the server at remoteURL when it is set,
// else the PostgreSQL database or local directory at loc.
func Open(ctx context.Context, remoteURL, loc string, opts Options) (*Store, error) {
	if remoteURL != "" {
		return Remote(ctx, remoteURL, opts)
	}
	if postgres.IsURL(loc) {
		return Postgres(ctx, loc, opts)
	}
	return Local(ctx, loc, opts)
}

// Location opens a store by the shape of its location, as copy's SRC and
// DST are given: a server URL, a postgres:// URL or a directory (~ is the
// home directory).
func Location(ctx context.Context, loc string, opts Options) (*Store, error) {
	if postgres.IsURL(loc) {
		return Postgres(ctx, loc, opts)
	}
	if u, err := neturl.Parse(loc); err == nil && (u.Scheme == "http" || u.Scheme == "https" || u.Scheme == "unix") {
		return Remote(ctx, loc, opts)
	}
	return Local(ctx, ExpandHome(loc), opts)
}

// Remote opens a client of a running `mnemo serve` and proves the server is
// there and takes the token, so a wrong address or token fails before any work.
func Remote(ctx context.Context, url string, opts Options) (*Store, error) {
	c, err := remote.New(url, opts.Token)
	if err != nil {
		return nil, err
	}
	if err := c.Connect(ctx); err != nil {
		return nil, TokenHint(err, RedactURL(url), opts.Token)
	}
	label := RedactURL(c.URL())
	opts.logger().Debug("attached to a server", "url", label)
	return &Store{Engine: c, Label: label, Close: func() error { return nil }}, nil
}

// Postgres opens the PostgreSQL store a postgres:// URL names. Its label is
// the URL with the password masked, so info, logs and errors never show it.
func Postgres(ctx context.Context, url string, opts Options) (*Store, error) {
	po := postgres.Options{Logger: opts.logger(), MustExist: opts.MustExist}
	if opts.Answerer != nil {
		ans, err := retrieval.NewOpenAIChat(*opts.Answerer, nil)
		if err != nil {
			return nil, err
		}
		po.Answerer = ans
	}
	e, err := postgres.Open(ctx, url, po)
	if err != nil {
		return nil, err
	}
	opts.logger().Debug("opened the store", "url", e.Label())
	return &Store{Engine: e, Label: e.Label(), RecordCount: e.Len, Close: e.Close}, nil
}

// Local opens the store in dir, shared with this user's other mnemo
// processes (server/local): this process holds it, or reaches the one that
// does through the store's socket.
func Local(ctx context.Context, dir string, opts Options) (*Store, error) {
	lo := local.Options{Logger: opts.logger(), MustExist: opts.MustExist, TakeoverWait: opts.TakeoverWait,
		Token: opts.Token, Bolt: bolt.Options{Logger: opts.logger()}, Settled: opts.Settled, Clusters: opts.Clusters, ClustersNow: opts.ClustersNow}
	if opts.Embedder != nil {
		emb, err := retrieval.NewOpenAIEmbedder(*opts.Embedder, nil)
		if err != nil {
			return nil, err
		}
		lo.Bolt.Embedder = emb
	}
	if opts.Answerer != nil {
		ans, err := retrieval.NewOpenAIChat(*opts.Answerer, nil)
		if err != nil {
			return nil, err
		}
		lo.Bolt.Answerer = ans
	}
	if opts.Adjust != nil {
		opts.Adjust(&lo.Bolt)
	}
	s, err := local.Open(ctx, dir, lo)
	if err != nil {
		return nil, err
	}
	opts.logger().Debug("opened the store", "dir", s.Dir(), "role", s.Role().String())
	return &Store{
		Engine: s,
		Label:  s.Dir(),
		Dir:    s.Dir(),
		IndexStatus: func() Index {
			st, err := s.Status(ctx)
			if err != nil {
				return Index{State: "unknown"}
			}
			info := Index{State: st.Index.State, AppliedSeq: st.Index.AppliedSeq}
			if st.Index.State != "ready" {
				info.Done, info.Total, info.Behind = st.Index.Done, st.Index.Total, st.Index.Behind
			}
			return info
		},
		RecordCount: func(ctx context.Context) (int, error) {
			st, err := s.Status(ctx)
			if errors.Is(err, contract.ErrUnsupported) {
				// A server of an earlier mnemo: what explore counts.
				page, err := s.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetStatus, Limit: len(contract.Statuses())})
				return int(page.Total), err
			}
			return st.Records, err
		},
		HeldBy: func(ctx context.Context) int {
			h, err := s.Holder(ctx)
			if err != nil {
				return 0
			}
			return h.PID
		},
		Close: s.Close,
	}, nil
}

// recordCounter is an engine that counts every record it holds, service
// sandboxes included (engine/memory and engine/bolt).
type recordCounter interface{ Len() int }

// CanCount tells whether Records counts sandboxes too (the store or its
// engine counts every record) rather than explore's total.
func (s *Store) CanCount() bool {
	_, ok := s.Engine.(recordCounter)
	return s.RecordCount != nil || ok
}

// Records counts every record. The contract's reads never enter service
// sandboxes without a reach naming them, so an engine that cannot count them
// reports explore's exact total of everything else.
func (s *Store) Records(ctx context.Context) (int, error) {
	if s.RecordCount != nil {
		return s.RecordCount(ctx)
	}
	if c, ok := s.Engine.(recordCounter); ok {
		return c.Len(), nil
	}
	page, err := s.Engine.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetStatus, Limit: len(contract.Statuses())})
	if err != nil {
		return 0, err
	}
	return int(page.Total), nil
}

// TokenHint says what a person at the command line does about a refused
// token, where the server's own words speak of HTTP headers.
func TokenHint(err error, url, token string) error {
	if !errors.Is(err, contract.ErrUnauthorized) || wire.IsForbidden(err) {
		return err
	}
	var ce *contract.Error
	if token == "" {
		ce = contract.Unauthorized("the server at %s needs a token: set MNEMO_TOKEN to yours (mnemo serve prints the owner's; the keys file names the others'), or point --remote at another server", url)
	} else {
		ce = contract.Unauthorized("the server at %s does not know the token in MNEMO_TOKEN: check it, or point --remote at the server that issued it", url)
	}
	ce.Err = err
	return ce
}

// RedactURL hides a password in a server address before it is shown or logged.
func RedactURL(raw string) string {
	u, err := neturl.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}

// ExpandHome reads a leading ~ as the home directory.
func ExpandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, strings.TrimPrefix(p, "~"))
		}
	}
	return p
}
