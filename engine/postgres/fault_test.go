package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	neturl "net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"mnemo/contract"
	"mnemo/engine/postgres"
	"mnemo/engine/postgres/pgtest"
)

// outageProxy forwards TCP connections to the test server and can cut them
// all and refuse new ones, as an unreachable or restarting server looks to
// a client, without disturbing the server other tests share.
type outageProxy struct {
	ln       net.Listener
	upstream func() (net.Conn, error)
	down     atomic.Bool
	mu       sync.Mutex
	conns    map[net.Conn]bool
}

func startProxy(t *testing.T, base string) (*outageProxy, string) {
	t.Helper()
	cfg, err := pgx.ParseConfig(base)
	if err != nil {
		t.Fatal(err)
	}
	network, addr := "tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	if strings.HasPrefix(cfg.Host, "/") {
		network, addr = "unix", fmt.Sprintf("%s/.s.PGSQL.%d", cfg.Host, cfg.Port)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &outageProxy{ln: ln, conns: map[net.Conn]bool{},
		upstream: func() (net.Conn, error) { return net.Dial(network, addr) }}
	go p.serve()
	t.Cleanup(func() { _ = ln.Close(); p.cut() })
	u := &neturl.URL{Scheme: "postgres", Host: ln.Addr().String(), Path: "/" + cfg.Database}
	if cfg.Password != "" {
		u.User = neturl.UserPassword(cfg.User, cfg.Password)
	} else {
		u.User = neturl.User(cfg.User)
	}
	u.RawQuery = "sslmode=disable"
	return p, u.String()
}

func (p *outageProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if p.down.Load() {
			_ = c.Close()
			continue
		}
		up, err := p.upstream()
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns[c], p.conns[up] = true, true
		p.mu.Unlock()
		go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
		go func() { _, _ = io.Copy(c, up); _ = c.Close() }()
	}
}

// cut closes every forwarded connection.
func (p *outageProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
	}
	p.conns = map[net.Conn]bool{}
}

// TestOutageDuringLoad stores from several writers while the database goes
// away and comes back: every error in between is unavailable and names the
// host but no credential, health says down, service resumes by itself, and
// every acknowledged id is present afterwards.
func TestOutageDuringLoad(t *testing.T) {
	ctx := context.Background()
	schema := pgtest.Schema(t)
	proxy, direct := startProxy(t, pgtest.BaseURL(t))
	url := pgtest.WithSchema(t, direct, schema)
	e := openStore(t, url, postgres.Options{ConnectTimeout: time.Second})
	host := e.Host()
	secret := passwordOf(t, url)

	var acked sync.Map
	var ackCount, errCount atomic.Int64
	var stop atomic.Bool
	var wrong atomic.Pointer[string]
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				items := []contract.StoreItem{
					contract.Document(fmt.Sprintf("writer %d note %d", w, i), contract.MemoryMeta{Tags: []string{"load"}}),
					contract.Document(fmt.Sprintf("writer %d note %d bis", w, i), contract.MemoryMeta{Tags: []string{"load"}}),
				}
				rs, err := contract.StoreMany(ctx, e, items)
				if err != nil {
					errCount.Add(1)
					var ce *contract.Error
					if !errors.As(err, &ce) || ce.Kind != contract.KindUnavailable || !strings.Contains(ce.Message, host) ||
						(secret != "" && strings.Contains(ce.Message, secret)) {
						msg := err.Error()
						wrong.Store(&msg)
					}
					time.Sleep(20 * time.Millisecond)
					continue
				}
				for _, r := range rs {
					acked.Store(r.ID, true)
					ackCount.Add(1)
				}
			}
		}()
	}
	time.Sleep(400 * time.Millisecond)
	before := ackCount.Load()
	proxy.down.Store(true)
	proxy.cut()
	time.Sleep(300 * time.Millisecond)
	if h := e.Health(ctx); h.State != contract.HealthDown || !strings.Contains(h.Reason, host) {
		t.Errorf("health during the outage: %+v", h)
	}
	_, err := e.Browse(ctx, contract.BrowseQuery{})
	if !errors.Is(err, contract.ErrUnavailable) {
		t.Errorf("browse during the outage: %v", err)
	}
	time.Sleep(700 * time.Millisecond)
	duringErrs := errCount.Load()
	proxy.down.Store(false)
	deadline := time.Now().Add(10 * time.Second)
	for e.Health(ctx).State != contract.HealthOK && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	resumed := ackCount.Load()
	time.Sleep(500 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	if msg := wrong.Load(); msg != nil {
		t.Fatalf("an error during the outage was not unavailable naming %s without the password: %s", host, *msg)
	}
	if before == 0 || duringErrs == 0 || ackCount.Load() <= resumed {
		t.Fatalf("acked before %d, errors %d, acked at recovery %d, at the end %d", before, duringErrs, resumed, ackCount.Load())
	}
	var ids []string
	acked.Range(func(k, _ any) bool { ids = append(ids, k.(string)); return true })
	for start := 0; start < len(ids); start += contract.MaxGetIDs {
		part := ids[start:min(start+contract.MaxGetIDs, len(ids))]
		hits, err := e.Get(ctx, contract.GetRequest{IDs: part})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != len(part) {
			t.Fatalf("%d of %d acknowledged ids are missing", len(part)-len(hits), len(part))
		}
	}
	t.Logf("%d ids acknowledged (%d before the outage), %d unavailable errors, all present", len(ids), before, errCount.Load())
}

// RestartEnv names a shell command that restarts the test server. When set,
// TestRealRestartDuringLoad restarts the real server during a load (.ci/run
// runs it alone, after every other test, since the restart cuts every
// client of the server).
const RestartEnv = "MNEMO_TEST_POSTGRES_RESTART"

// TestRealRestartDuringLoad stores from several writers while the real
// server restarts: every error is unavailable and names the host, service
// resumes by itself, and every acknowledged id is present afterwards.
func TestRealRestartDuringLoad(t *testing.T) {
	restart := os.Getenv(RestartEnv)
	if restart == "" {
		t.Skipf("%s is not set (a command restarting the test server, e.g. \"pg_ctlcluster 15 main restart\")", RestartEnv)
	}
	ctx := context.Background()
	e := openStore(t, pgtest.URL(t), postgres.Options{ConnectTimeout: time.Second})
	host := e.Host()
	var mu sync.Mutex
	acked := map[string]bool{}
	var errs int
	var wrong []string
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				r, err := contract.Store(ctx, e, contract.Document(fmt.Sprintf("writer %d note %d", w, i), contract.MemoryMeta{}))
				mu.Lock()
				if err != nil {
					errs++
					var ce *contract.Error
					if !errors.As(err, &ce) || ce.Kind != contract.KindUnavailable || !strings.Contains(ce.Message, host) {
						wrong = append(wrong, err.Error())
					}
				} else {
					acked[r.ID] = true
				}
				mu.Unlock()
				if err != nil {
					time.Sleep(50 * time.Millisecond)
				}
			}
		}()
	}
	time.Sleep(time.Second)
	out, err := exec.Command("sh", "-c", restart).CombinedOutput()
	if err != nil {
		stop.Store(true)
		wg.Wait()
		t.Fatalf("%s: %v\n%s", restart, err, out)
	}
	deadline := time.Now().Add(30 * time.Second)
	for e.Health(ctx).State != contract.HealthOK && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	mu.Lock()
	atRecovery := len(acked)
	mu.Unlock()
	time.Sleep(time.Second)
	stop.Store(true)
	wg.Wait()
	if len(wrong) > 0 {
		t.Fatalf("%d errors were not unavailable naming %s, first: %s", len(wrong), host, wrong[0])
	}
	if len(acked) <= atRecovery {
		t.Fatalf("no write succeeded after the restart (%d acknowledged)", len(acked))
	}
	ids := make([]string, 0, len(acked))
	for id := range acked {
		ids = append(ids, id)
	}
	for start := 0; start < len(ids); start += contract.MaxGetIDs {
		part := ids[start:min(start+contract.MaxGetIDs, len(ids))]
		hits, err := e.Get(ctx, contract.GetRequest{IDs: part})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != len(part) {
			t.Fatalf("%d of %d acknowledged ids are missing after the restart", len(part)-len(hits), len(part))
		}
	}
	t.Logf("%d ids acknowledged, %d unavailable errors during the restart, every id present", len(ids), errs)
}
