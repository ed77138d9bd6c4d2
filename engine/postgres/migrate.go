package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"mnemo/contract"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one numbered schema step.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations lists the embedded steps in version order; a file is named
// NNNN_what.sql.
func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, ent := range entries {
		num, _, ok := strings.Cut(ent.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s is not named NNNN_what.sql", ent.Name())
		}
		body, err := migrationFiles.ReadFile("migrations/" + ent.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: ent.Name(), sql: string(body)})
	}
	slices.SortFunc(out, func(a, b migration) int { return a.version - b.version })
	return out, nil
}

// SchemaVersion is the newest schema this binary knows.
func SchemaVersion() int {
	ms, err := migrations()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

// migrate brings the store's schema to SchemaVersion under a session advisory
// lock (one for the whole database, since stores share the pg_trgm
// extension), so processes opening stores together apply each step once. A
// schema newer than the binary is refused.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	steps, err := migrations()
	if err != nil {
		return contract.EngineErr("embedded migrations: %w", err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if schema == "" {
		if err := conn.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
			return err
		}
	}
	const key = "mnemo.migrate"
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock(hashtext($1))", key); err != nil {
		return err
	}
	defer func() {
		// A fresh context: the unlock must happen even when ctx has ended.
		_, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(hashtext($1))", key)
	}()
	if _, err := conn.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{schema}.Sanitize()); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS mnemo_meta (key text PRIMARY KEY, value text NOT NULL)`); err != nil {
		return err
	}
	have := 0
	var v string
	switch err := conn.QueryRow(ctx, "SELECT value FROM mnemo_meta WHERE key = 'schema_version'").Scan(&v); err {
	case nil:
		if have, err = strconv.Atoi(v); err != nil {
			return contract.EngineErr("schema version %q is not a number", v)
		}
	case pgx.ErrNoRows:
	default:
		return err
	}
	known := steps[len(steps)-1].version
	if have > known {
		return contract.ConfigErr("store schema version %d is newer than this mnemo knows (%d); upgrade mnemo", have, known)
	}
	if have == known {
		return nil
	}
	trgm, err := trigramSchema(ctx, conn)
	if err != nil {
		return err
	}
	for _, m := range steps {
		if m.version <= have {
			continue
		}
		sql := strings.ReplaceAll(m.sql, "{{trgm}}", pgx.Identifier{trgm}.Sanitize())
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, sql); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
			_, err := tx.Exec(ctx, `INSERT INTO mnemo_meta (key, value) VALUES ('schema_version', $1)
				ON CONFLICT (key) DO UPDATE SET value = excluded.value`, strconv.Itoa(m.version))
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// trigramSchema makes sure pg_trgm is installed (in public when this store
// installs it, so dropping one store's schema never drops it) and returns the
// schema holding its operator classes.
func trigramSchema(ctx context.Context, conn *pgxpool.Conn) (string, error) {
	var schema string
	q := `SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'`
	err := conn.QueryRow(ctx, q).Scan(&schema)
	if err == nil {
		return schema, nil
	}
	if err != pgx.ErrNoRows {
		return "", err
	}
	if _, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public"); err != nil {
		return "", contract.ConfigErr("the pg_trgm extension is missing and this role cannot create it (%s); "+
			"ask a superuser to run CREATE EXTENSION pg_trgm in the database", pgMessage(err))
	}
	return "public", nil
}
