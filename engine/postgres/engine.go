package postgres

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"mnemo/contract"
	"mnemo/engine/curate"
	"mnemo/engine/retrieval"
)

// EngineID is the descriptor id of the PostgreSQL engine.
const EngineID = "postgres"

// Options configure an engine. The zero value is usable.
type Options struct {
	// Answerer writes recall answers (default: the extractive answerer).
	Answerer retrieval.Answerer
	// Logger receives connection trouble (default: discard).
	Logger *slog.Logger
	// Clock stamps created_at and updated_at (default time.Now).
	Clock func() time.Time
	// MaxConns bounds the pool (default: pgxpool's, at least 4).
	MaxConns int32
	// ConnectTimeout bounds one connection attempt (default 5 s).
	ConnectTimeout time.Duration
	// ChangeRetention is how long the change feed keeps its changes
	// (default: at least 7 days and at least 1,000,000 changes).
	ChangeRetention contract.ChangeRetention
	// MustExist refuses a schema that holds no store instead of creating
	// one (the commands that only read: a mistyped schema must not become
	// an empty store in the database).
	MustExist bool
}

// Engine is a store in a PostgreSQL schema. It is safe for concurrent use, and
// any number of engines (in any number of processes) may open one store.
type Engine struct {
	pool     *pgxpool.Pool
	label    string
	host     string
	schema   string
	desc     contract.Descriptor
	log      *slog.Logger
	clock    func() time.Time
	answerer retrieval.Answerer
	feed     feed
	fill     backfill
	bulk     bulk
	// piped orders the transactions of StartBulk: each waits for the one
	// started before it.
	piped struct {
		sync.Mutex
		last *pipedWrite
	}
}

var (
	_ contract.Engine        = (*Engine)(nil)
	_ contract.BulkStorer    = (*Engine)(nil)
	_ contract.BulkPipeliner = (*Engine)(nil)
)

// Open connects to the database the URL names, creates or upgrades the
// store's schema, and returns the engine. A database that cannot be reached is
// an unavailable error naming the host, never a credential.
func Open(ctx context.Context, url string, opts Options) (*Engine, error) {
	cfg, schema, err := parseConfig(url)
	if err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.Answerer == nil {
		opts.Answerer = retrieval.NewExtractive()
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = 5 * time.Second
	}
	cfg.ConnConfig.ConnectTimeout = opts.ConnectTimeout
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	} else if cfg.MaxConns < 4 {
		cfg.MaxConns = 4
	}
	// pgx never logs the password; our own messages name only the host.
	e := &Engine{
		label:    Redact(url),
		host:     hostLabel(cfg),
		schema:   schema,
		log:      opts.Logger,
		clock:    opts.Clock,
		answerer: opts.Answerer,
		desc: contract.Descriptor{
			ID:            EngineID,
			Label:         "mnemo (PostgreSQL)",
			Description:   "Keeps every record in a PostgreSQL database shared by any number of mnemo processes; keyword fetch on PostgreSQL full-text search.",
			FetchModes:    []contract.FetchMode{contract.ModeKeyword},
			Consolidation: contract.ConsolidationOnDemand,
		},
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, e.dbErr(ctx, err)
	}
	e.pool = pool
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, e.dbErr(ctx, err)
	}
	if opts.MustExist {
		var found bool
		if err := pool.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", pgx.Identifier{schema, "mnemo_meta"}.Sanitize()).Scan(&found); err != nil {
			pool.Close()
			return nil, e.dbErr(ctx, err)
		}
		if !found {
			pool.Close()
			return nil, contract.NotFound("no store at %s: the schema %s holds none (check --db, MNEMO_DB or the config file's store; mnemo store or mnemo import creates one)", e.label, schema)
		}
	}
	if err := migrate(ctx, pool, schema); err != nil {
		pool.Close()
		return nil, e.dbErr(ctx, err)
	}
	if err := e.initFeed(ctx, opts.ChangeRetention); err != nil {
		pool.Close()
		return nil, e.dbErr(ctx, err)
	}
	e.startBackfill()
	e.startBulkRecheck()
	return e, nil
}

// Close releases the pool's connections.
func (e *Engine) Close() error {
	e.stopBulk()
	e.stopBackfill()
	e.closeFeed()
	e.pool.Close()
	return nil
}

// Label is the store's URL with the password masked.
func (e *Engine) Label() string { return e.label }

// Host names the database server (host and port, or socket, and database).
func (e *Engine) Host() string { return e.host }

// Schema is the schema the URL named, empty for the server's default.
func (e *Engine) Schema() string { return e.schema }

// Descriptor describes the engine: keyword fetch only (vector and hybrid
// would need pgvector, which this engine does not use).
func (e *Engine) Descriptor() contract.Descriptor {
	d := e.desc
	d.FetchModes = slices.Clone(e.desc.FetchModes)
	return d
}

// Health pings the database: ok, or down with the host and the reason.
func (e *Engine) Health(ctx context.Context) contract.Health {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := e.pool.Ping(ctx); err != nil {
		return contract.Health{State: contract.HealthDown, Reason: e.dbErr(ctx, err).Message}
	}
	return contract.Health{State: contract.HealthOK}
}

// Len counts every record, sandboxes included.
func (e *Engine) Len(ctx context.Context) (int, error) {
	var n int
	if err := e.pool.QueryRow(ctx, "SELECT count(*) FROM records").Scan(&n); err != nil {
		return 0, e.dbErr(ctx, err)
	}
	return n, nil
}

// stamp is the current time in UTC milliseconds.
func (e *Engine) stamp() int64 { return e.clock().UTC().UnixMilli() }

// dbErr turns a driver error into a contract error: contract errors pass
// through; a database that cannot be reached (or went away, or is shutting
// down) and an ended context are unavailable; anything else is an engine
// error. Messages name the host and never a credential.
func (e *Engine) dbErr(ctx context.Context, err error) *contract.Error {
	var ce *contract.Error
	if errors.As(err, &ce) {
		return ce
	}
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ctx.Err())) {
		return contract.Unavailable("PostgreSQL at %s: %w", e.host, ctx.Err())
	}
	// The driver's error stays the cause; the message is pgMessage's, which
	// names no credential.
	var out *contract.Error
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && strings.HasPrefix(pe.Code, "28"):
		// invalid authorization: a wrong password, role or pg_hba rule.
		out = contract.Unauthorized("PostgreSQL at %s refused the login: %s", e.host, pgMessage(err))
	case isUnavailable(err):
		out = contract.Unavailable("PostgreSQL at %s is unavailable: %s", e.host, pgMessage(err))
	default:
		out = contract.EngineErr("PostgreSQL at %s: %s", e.host, pgMessage(err))
	}
	out.Err = err
	return out
}

// isUnavailable tells whether err means the server cannot be reached or is
// not serving right now (a retry later may work).
func isUnavailable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "08"), // connection exception
			pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03", // shutdown, crash, cannot connect now
			pe.Code == "53300": // too many connections
			return true
		}
		return false
	}
	var ne net.Error
	var ce *pgconn.ConnectError
	switch {
	case errors.As(err, &ce), errors.As(err, &ne), pgconn.SafeToRetry(err), pgconn.Timeout(err):
		return true
	}
	msg := err.Error()
	for _, s := range []string{"conn closed", "connection reset", "broken pipe", "EOF", "unexpected EOF", "closed pool", "connection refused"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// pgMessage is an error's text without the connection string pgx may print
// (user and database names, never the password, but still noise).
func pgMessage(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Message + " (SQLSTATE " + pe.Code + ")"
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		if inner := errors.Unwrap(ce); inner != nil {
			return lastClause(inner.Error())
		}
	}
	return lastClause(err.Error())
}

// lastClause keeps the innermost clause of a wrapped "a: b: c" error text.
func lastClause(s string) string {
	if i := strings.LastIndex(s, ": "); i >= 0 && i+2 < len(s) {
		return s[i+2:]
	}
	return s
}

// inTx runs f in one transaction at the given isolation.
func (e *Engine) inTx(ctx context.Context, iso pgx.TxIsoLevel, f func(pgx.Tx) error) error {
	err := pgx.BeginTxFunc(ctx, e.pool, pgx.TxOptions{IsoLevel: iso}, f)
	if err != nil {
		return e.dbErr(ctx, err)
	}
	return nil
}

// Consolidate is on demand: beliefs are derived from the clusters of a
// reach when read (engine/curate), so it counts them and completes.
func (e *Engine) Consolidate(ctx context.Context, req contract.ConsolidateRequest) (contract.ConsolidateReceipt, error) {
	return curate.Consolidate(ctx, e, req, curate.DefaultConfig())
}

// Beliefs are derived on read: one learning per cluster of the reach (engine/curate).
func (e *Engine) Beliefs(ctx context.Context, req contract.BeliefsRequest) ([]contract.Hit, error) {
	return curate.Beliefs(ctx, e, req, curate.DefaultConfig())
}
