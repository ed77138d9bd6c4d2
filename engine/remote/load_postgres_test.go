package remote_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/postgres"
	"mnemo/engine/postgres/pgtest"
	"mnemo/server/httpapi"
)

// servePostgres serves one PostgreSQL store (its own pool, as its own
// process would have) over HTTP on loopback.
func servePostgres(t *testing.T, url string, cfg loadConfig) string {
	t.Helper()
	store, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	api := httpapi.New(store, httpapi.Options{OwnerToken: loadOwnerToken, Keys: loadKeys(t, cfg),
		Audit: store, AuditReader: store, ListingRate: httpapi.Rate{PerSecond: -1}})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return "http://" + l.Addr().String()
}

// TestLoadAcrossTwoServers: agents store through two servers of one
// PostgreSQL database while browsers read through the other server than
// half the agents write to; every answer is checked against what had been
// acknowledged (through either server) before it was asked, and at the end
// every acknowledged id is read back through the second server.
// MNEMO_LOADTEST=1 makes it the measured run (MNEMO_LOADTEST_SECONDS, default 20).
func TestLoadAcrossTwoServers(t *testing.T) {
	cfg := loadConfig{agents: 8, browsers: 4, rounds: 4, batch: 10, duration: 3 * time.Second}
	if os.Getenv("MNEMO_LOADTEST") == "1" && !testing.Short() {
		seconds := 20
		if n, err := strconv.Atoi(os.Getenv("MNEMO_LOADTEST_SECONDS")); err == nil && n > 0 {
			seconds = n
		}
		cfg = loadConfig{agents: 8, browsers: 4, rounds: 100_000, batch: 25, duration: time.Duration(seconds) * time.Second}
	}
	db := pgtest.URL(t)
	urls := []string{servePostgres(t, db, cfg), servePostgres(t, db, cfg)}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.duration+2*time.Minute)
	defer cancel()
	owner := loadClient(t, urls[0], loadOwnerToken)
	strayMeta := contract.MetaFromSource(contract.SourceAgent, nil)
	strayMeta.Namespace = contract.MustNamespace("team:other")
	stray, err := contract.Store(ctx, owner, contract.Document("stray note outside the load namespace", strayMeta))
	if err != nil {
		t.Fatal(err)
	}
	f := loadFigures{cfg: cfg, over: "two servers of one engine/postgres database", store: &latencies{}, storeMany: &latencies{},
		browse: &latencies{}, fetch: &latencies{}, getRecords: &latencies{}}
	log := &ackLog{}
	var storeCalls, manyCalls atomic.Int64
	var failures failureLog
	writersDone := make(chan struct{})
	var writers, readers sync.WaitGroup
	deadline := time.Now().Add(cfg.duration)
	start := time.Now()
	for a := range cfg.agents {
		c := loadClient(t, urls[a%2], agentToken(a))
		writers.Go(func() {
			seq := 0
			for r := 0; r < cfg.rounds && time.Now().Before(deadline) && ctx.Err() == nil && failures.count() == 0; r++ {
				item, word := loadItem(a, seq)
				seq++
				t0 := time.Now()
				rec, err := contract.Store(ctx, c, item)
				if err != nil {
					failures.add("agent %d store: %v", a, err)
					return
				}
				f.store.add(time.Since(t0))
				storeCalls.Add(1)
				log.add(ack{id: rec.ID, word: word, agent: a})
				items := make([]contract.StoreItem, cfg.batch)
				words := make([]string, cfg.batch)
				for i := range items {
					items[i], words[i] = loadItem(a, seq)
					seq++
				}
				t0 = time.Now()
				recs, err := contract.StoreMany(ctx, c, items)
				if err != nil {
					failures.add("agent %d store_many: %v", a, err)
					return
				}
				f.storeMany.add(time.Since(t0))
				manyCalls.Add(1)
				batch := make([]ack, len(recs))
				for i, rec := range recs {
					if rec.Replayed {
						failures.add("agent %d: a new item %q was taken for a replay", a, words[i])
					}
					batch[i] = ack{id: rec.ID, word: words[i], agent: a}
				}
				log.add(batch...)
			}
		})
	}
	for b := range cfg.browsers {
		c := loadClient(t, urls[(b+1)%2], viewerToken(b))
		readers.Go(func() { browseWhileWriting(ctx, c, b, log, writersDone, stray.ID, &f, &failures) })
	}
	writers.Wait()
	f.writing = time.Since(start)
	close(writersDone)
	readers.Wait()
	failures.report(t)
	acks := log.snapshot()
	f.storeCalls, f.manyCalls, f.records = storeCalls.Load(), manyCalls.Load(), len(acks)
	if f.records == 0 {
		t.Fatal("no store was acknowledged")
	}
	checkEveryAck(t, ctx, urls[1], cfg, acks, stray.ID)
	t.Log(f)
}
