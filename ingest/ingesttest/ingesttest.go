// Package ingesttest builds the databases the ingest fixtures describe: a
// mem0 history.db from its SQL, and a LangGraph store in a fresh schema of the
// test PostgreSQL. Tests of package ingest and of the import command share it.
package ingesttest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	_ "modernc.org/sqlite" // the driver mem0's history.db is written with here
)

// SQLite runs the SQL file sqlPath in a new SQLite database named name in a
// temporary folder and returns its path.
func SQLite(t testing.TB, sqlPath, name string) string {
	t.Helper()
	ddl, err := os.ReadFile(sqlPath)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(context.Background(), string(ddl)); err != nil {
		t.Fatal(err)
	}
	return path
}

// Postgres runs the SQL file sqlPath in a fresh schema of the database
// MNEMO_TEST_POSTGRES names (the test is skipped without it), drops the schema
// when the test ends, and returns a URL whose search_path is that schema.
func Postgres(t testing.TB, sqlPath string) string {
	t.Helper()
	base := os.Getenv("MNEMO_TEST_POSTGRES")
	if base == "" {
		t.Skip("MNEMO_TEST_POSTGRES is not set")
	}
	ddl, err := os.ReadFile(sqlPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	schema := fmt.Sprintf("ingest_test_%d", time.Now().UnixNano())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema+"; SET search_path TO "+schema+";\n"+string(ddl)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), base)
		if err == nil {
			_, _ = c.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
			_ = c.Close(context.Background())
		}
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + schema
}
