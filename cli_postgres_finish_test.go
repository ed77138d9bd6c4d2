package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"mnemo/engine/postgres/pgtest"
)

// pgIndexState reports whether the schema's store has a load left to finish
// (its bulk row) and how many of the two indexes a load drops it holds.
func pgIndexState(t *testing.T, base, schema string) (row bool, indexes int) {
	t.Helper()
	pgScan(t, base, `SELECT count(*) FROM pg_indexes WHERE schemaname = $1
		AND indexname IN ('records_folded', 'records_tsv')`, []any{schema}, &indexes)
	pgScan(t, base, "SELECT EXISTS (SELECT 1 FROM "+pgx.Identifier{schema, "mnemo_meta"}.Sanitize()+" WHERE key = 'bulk_load')", nil, &row)
	return row, indexes
}

// pgScan runs one query on its own connection to base and scans its row.
func pgScan(t *testing.T, base, sql string, args []any, dest ...any) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	if err := conn.QueryRow(ctx, sql, args...).Scan(dest...); err != nil {
		t.Fatal(err)
	}
}

// An import into PostgreSQL returns once its records are stored and leaves
// building the indexes its load dropped to a process of its own, which it
// hands the URL through the environment, never the arguments; meanwhile
// reads are exact, and once the finisher ends the indexes are back. With
// --wait the import builds them itself.
func TestPostgresImportLeavesItsIndexesToAFinisher(t *testing.T) {
	base := pgtest.BaseURL(t)
	schema := pgtest.Schema(t)
	url := pgtest.WithSchema(t, base, schema)
	c := newTestCLI(t)
	file := importFile(t, 1500)
	var finisher testFinisher
	var out, errOut bytes.Buffer
	a := newApp(strings.NewReader(""), &out, &errOut)
	a.startFinisher = func(args, env []string) (int, error) {
		if finisher.cmd != nil {
			t.Fatal("a second finisher")
		}
		for _, arg := range args {
			if strings.Contains(arg, "postgres") || strings.Contains(arg, passwordOfURL(url)) {
				t.Errorf("the finisher's arguments name the store: %q", args)
			}
		}
		if len(env) != 1 || env[0] != "MNEMO_DB="+url {
			t.Errorf("the finisher's environment adds %q, want the store's URL", env)
		}
		// The import has stored its records and left the indexes.
		if row, n := pgIndexState(t, base, schema); !row || n != 0 {
			t.Errorf("when the finisher starts: bulk row %v, %d indexes; want the row and none", row, n)
		}
		return finisher.start(args, env)
	}
	if code := a.execute([]string{"--db", url, "import", file}); code != 0 {
		t.Fatalf("import: exit %d, stderr %q", code, errOut.String())
	}
	said := regexp.MustCompile(`^mnemo import: the records are stored; process \d+ builds the search indexes and the facet counts in the background \(reads are exact meanwhile, contains and keyword fetch slower; --wait waits\)\n$`)
	if !said.MatchString(errOut.String()) {
		t.Fatalf("stderr %q", errOut.String())
	}
	c.db = url
	if n := strings.Count(c.ok("", "export"), "\n"); n != 1500 {
		t.Fatalf("export while the finisher works: %d lines", n)
	}
	finisher.wait(t)
	if row, n := pgIndexState(t, base, schema); row || n != 2 {
		t.Fatalf("after the finisher: bulk row %v, %d indexes; want no row and both", row, n)
	}
	if !strings.Contains(c.ok("", "fetch", "--mode", "keyword", "--json", "worker"), `"hits":[{`) {
		t.Fatal("keyword fetch after the finisher found nothing")
	}

	// --wait: the import builds them before it exits, and starts no finisher.
	schema2 := pgtest.Schema(t)
	url2 := pgtest.WithSchema(t, base, schema2)
	a = newApp(strings.NewReader(""), &out, &errOut)
	errOut.Reset()
	a.startFinisher = func(args, _ []string) (int, error) {
		t.Fatalf("a finisher was started with --wait: %v", args)
		return 0, nil
	}
	if code := a.execute([]string{"--db", url2, "import", "--wait", file}); code != 0 {
		t.Fatalf("import --wait: exit %d, stderr %q", code, errOut.String())
	}
	if row, n := pgIndexState(t, base, schema2); row || n != 2 {
		t.Fatalf("after import --wait: bulk row %v, %d indexes; want no row and both", row, n)
	}
}

// A command that only reads, pointed at a PostgreSQL schema that holds no
// store (a typo), is refused with the URL's password masked, and leaves no
// schema behind; a write there creates the store.
func TestPostgresReadOfAMissingSchemaCreatesNothing(t *testing.T) {
	base := pgtest.BaseURL(t)
	schema := pgtest.Schema(t)
	url := pgtest.WithSchema(t, base, schema)
	c := newTestCLI(t)
	c.db = url
	exists := func() bool {
		t.Helper()
		var n int
		pgScan(t, base, "SELECT count(*) FROM pg_namespace WHERE nspname = $1", []any{schema}, &n)
		return n > 0
	}
	for _, args := range [][]string{{"info"}, {"browse"}, {"export"}} {
		r := c.run("", args...)
		if r.code != exitNotFound || !strings.Contains(r.stderr, "no store at postgres://") ||
			!strings.Contains(r.stderr, "the schema "+schema+" holds none") || strings.Contains(r.stderr, passwordOfURL(url)) && passwordOfURL(url) != "\x00" {
			t.Fatalf("%v on a schema without a store: exit %d, stderr %q", args, r.code, r.stderr)
		}
		if exists() {
			t.Fatalf("%v created the schema %s", args, schema)
		}
	}
	c.ok(`{"type":"document","body":{"text":"the first record of a new store"}}`, "store")
	if !exists() {
		t.Fatal("a store did not create the schema")
	}
	if n := strings.Count(c.ok("", "export"), "\n"); n != 1 {
		t.Fatalf("export after the store: %d lines", n)
	}
}
