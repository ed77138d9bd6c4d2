// Package pgtest gives tests a real PostgreSQL store of their own: a fresh
// schema in the database MNEMO_TEST_POSTGRES names, dropped when the test
// ends. Without that variable (or with the server down) a test skips with
// how to start one, except under CI, where a missing server fails the test.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	neturl "net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvVar names the database the tests use, as a postgres:// URL.
const EnvVar = "MNEMO_TEST_POSTGRES"

// HowTo says how to give the tests a server.
const HowTo = `start PostgreSQL and point ` + EnvVar + ` at a database the tests may create schemas in, e.g.
  pg_ctlcluster 15 main start
  runuser -u postgres -- psql -c "CREATE ROLE mnemo LOGIN PASSWORD 'mnemo' CREATEDB" -c "CREATE DATABASE mnemo_test OWNER mnemo"
  export ` + EnvVar + `=postgres://mnemo:mnemo@localhost:5432/mnemo_test`

// BaseURL is the configured database URL; it skips (or, under CI, fails) the
// test when there is none or the server does not answer.
func BaseURL(t testing.TB) string {
	t.Helper()
	raw := os.Getenv(EnvVar)
	if raw == "" {
		missing(t, EnvVar+" is not set")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, raw)
	if err != nil {
		missing(t, "the PostgreSQL server of "+EnvVar+" does not answer")
	}
	_ = conn.Close(ctx)
	return raw
}

func missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (CI needs a PostgreSQL server; .ci/run starts one): %s", why, HowTo)
	}
	t.Skipf("%s; to run the PostgreSQL tests, %s", why, HowTo)
}

// Schema returns a fresh schema name, dropped (with everything in it) when
// the test ends.
func Schema(t testing.TB) string {
	t.Helper()
	base := BaseURL(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "mnemo_t_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Logf("drop schema %s: %v", name, err)
			return
		}
		defer func() { _ = conn.Close(ctx) }()
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
			t.Logf("drop schema %s: %v", name, err)
		}
	})
	return name
}

// URL returns the base URL selecting a fresh schema of the test's own.
func URL(t testing.TB) string {
	t.Helper()
	base := BaseURL(t)
	return WithSchema(t, base, Schema(t))
}

// WithSchema returns raw with its schema parameter set.
func WithSchema(t testing.TB, raw, schema string) string {
	t.Helper()
	u, err := neturl.Parse(raw)
	if err != nil {
		t.Fatalf("%s is not a URL: %v", EnvVar, err)
	}
	q := u.Query()
	q.Set("schema", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
