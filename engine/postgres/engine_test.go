package postgres_test

import (
	"context"
	"testing"

	"mnemo/contract"
	"mnemo/contract/conformance"
	"mnemo/engine/postgres"
	"mnemo/engine/postgres/pgtest"
)

func openStore(t testing.TB, url string, opts postgres.Options) *postgres.Engine {
	t.Helper()
	e, err := postgres.Open(context.Background(), url, opts)
	if err != nil {
		t.Fatalf("open %s: %v", postgres.Redact(url), err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

func TestConformance(t *testing.T) {
	conformance.Test(t, func(t *testing.T) contract.Engine { return openStore(t, pgtest.URL(t), postgres.Options{}) })
}

func TestConformanceWithForeignData(t *testing.T) {
	ctx := context.Background()
	e := openStore(t, pgtest.URL(t), postgres.Options{})
	foreign := contract.Document("foreign note that the suite must leave alone", contract.MemoryMeta{Tags: []string{"foreign"}})
	if _, err := contract.Store(ctx, e, foreign); err != nil {
		t.Fatal(err)
	}
	if err := conformance.Run(ctx, e).Err(); err != nil {
		t.Fatal(err)
	}
	hits, err := e.Get(ctx, contract.GetRequest{IDs: []string{foreign.Fingerprint()}})
	if err != nil || len(hits) != 1 {
		t.Fatalf("foreign record after the suite: %v %v", hits, err)
	}
}
