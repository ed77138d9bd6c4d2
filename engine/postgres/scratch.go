package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	neturl "net/url"

	"github.com/jackc/pgx/v5"

	"mnemo/contract"
)

// OpenScratch opens a store in a new schema of the database url names (never
// the store the URL selects), for benchmarks and checks; drop closes it and
// removes the schema with everything in it.
func OpenScratch(ctx context.Context, url string, opts Options) (e *Engine, drop func() error, err error) {
	u, err := neturl.Parse(url)
	if err != nil || !IsURL(url) {
		return nil, nil, contract.ConfigErr("%s is not a postgres:// URL", Redact(url))
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "mnemo_scratch_" + hex.EncodeToString(b[:])
	q := u.Query()
	for k := range q {
		if k == "schema" || k == "search_path" {
			q.Del(k)
		}
	}
	q.Set("schema", schema)
	u.RawQuery = q.Encode()
	e, err = Open(ctx, u.String(), opts)
	if err != nil {
		return nil, nil, err
	}
	drop = func() error {
		e.stopBackfill()
		_, err := e.pool.Exec(context.WithoutCancel(ctx), "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		e.pool.Close()
		if err != nil {
			return e.dbErr(ctx, err)
		}
		return nil
	}
	return e, drop, nil
}
