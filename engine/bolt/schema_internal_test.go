package bolt

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
)

// rewriteStore runs f in a write transaction of the closed store in dir's
// bbolt file: what a test writes as an older schema wrote it, or damages.
func rewriteStore(t *testing.T, dir string, f func(tx *bbolt.Tx) error) {
	t.Helper()
	db, err := bbolt.Open(filepath.Join(dir, DBFile), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(f); err != nil {
		t.Fatal(err)
	}
}

// setSchema writes version v as the schema of the closed store in dir.
func setSchema(t *testing.T, dir, v string) {
	t.Helper()
	rewriteStore(t, dir, func(tx *bbolt.Tx) error { return tx.Bucket(bucketMeta).Put(keySchema, []byte(v)) })
}

// Schema versions compare as numbers: a backup of a store of version 9
// restores (it is older than 13, though "9" sorts after "13"), one of a
// version newer than this build's is refused with both versions named; a
// store of version 9 opens as this build's version with its records as
// they were.
func TestSchemaNineIsOlderThanThirteen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := contract.StoreMany(ctx, e, []contract.StoreItem{contract.Document("the canary waits for the second region", contract.MemoryMeta{})})
	if err != nil {
		t.Fatal(err)
	}
	id := stored[0].ID
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, DBFile)
	setSchema(t, dir, "9")
	if err := checkBackupFile(path); err != nil {
		t.Errorf("a backup of a store of schema 9: %v", err)
	}
	setSchema(t, dir, "14")
	err = checkBackupFile(path)
	if want := "the backup's store has schema version 14; this mnemo reads up to " + schemaVer; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a backup of a store of schema 14: %v, want %q", err, want)
	}
	if _, err := Open(dir, Options{}); err == nil || !strings.Contains(err.Error(), "has schema version 14; this mnemo reads version "+schemaVer) {
		t.Errorf("opening a store of schema 14: %v", err)
	}
	setSchema(t, dir, "9")
	e, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	recs, err := e.GetRecords(ctx, contract.GetRequest{IDs: []string{id}})
	if err != nil || len(recs) != 1 || recs[0].Text != "the canary waits for the second region" {
		t.Fatalf("the record after the upgrade: %v %+v", err, recs)
	}
	var v string
	_ = e.db.View(func(tx *bbolt.Tx) error { v = string(tx.Bucket(bucketMeta).Get(keySchema)); return nil })
	if v != schemaVer {
		t.Errorf("a store of schema 9 opened as %q, want %s", v, schemaVer)
	}
}
