package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/postgres/pgtest"
	"mnemo/engine/remote"
	"mnemo/server/audit"
)

// startServeAt runs `mnemo --db LOC serve --http 127.0.0.1:0` in-process (its
// own app, so its own pool, as another process would have) and returns its
// address from the banner.
func startServeAt(t *testing.T, loc string, extra ...string) (string, func() int) {
	addr, _, stop := startServeAtWithBanner(t, loc, extra...)
	return addr, stop
}

// startServeAtWithBanner is startServeAt that also returns the banner's stderr.
func startServeAtWithBanner(t *testing.T, loc string, extra ...string) (string, *lockedBuffer, func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &lockedBuffer{}
	a := newApp(strings.NewReader(""), &bytes.Buffer{}, stderr)
	root := newRootCommand(a)
	root.SetArgs(append([]string{"--db", loc, "serve", "--http", "127.0.0.1:0"}, extra...))
	done := make(chan int, 1)
	go func() {
		err := root.ExecuteContext(ctx)
		code := a.report(err)
		a.close()
		done <- code
	}()
	var once sync.Once
	code := -1
	stop := func() int {
		once.Do(func() {
			cancel()
			select {
			case code = <-done:
			case <-time.After(20 * time.Second):
				t.Error("serve did not stop")
			}
		})
		return code
	}
	t.Cleanup(func() { stop() })
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case code := <-done:
			t.Fatalf("serve exited with %d: %s", code, stderr.String())
		default:
		}
		for _, line := range strings.Split(stderr.String(), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "http" {
				if len(extra) > 0 && !strings.Contains(stderr.String(), "  ssh ") {
					continue
				}
				return f[1], stderr, stop
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("serve never printed its address: %s", stderr.String())
	return "", nil, nil
}

// TestTwoServersOverOneDatabase serves one PostgreSQL store from two servers:
// a record stored through one is read through the other at once (list, get,
// browse, explore, fetch); a forget through the other leaves no ghost in the
// first; both share the owner token and the audit log.
func TestTwoServersOverOneDatabase(t *testing.T) {
	url := pgtest.URL(t)
	newTestCLI(t) // isolates the XDG directories
	addrA, stopA := startServeAt(t, url)
	addrB, stopB := startServeAt(t, url)
	if addrA == addrB {
		t.Fatalf("both servers at %s", addrA)
	}
	var token string
	_ = filepath.WalkDir(os.Getenv("XDG_STATE_HOME"), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == bolt.TokenFile {
			b, _ := os.ReadFile(p)
			token = strings.TrimSpace(string(b))
		}
		return nil
	})
	if token == "" {
		t.Fatal("no owner token file in the state directory")
	}
	ctx := context.Background()
	client := func(addr string) *remote.Client {
		cl, err := remote.New(addr, token)
		if err != nil {
			t.Fatal(err)
		}
		if err := cl.Connect(ctx); err != nil {
			t.Fatalf("connect %s with the shared token: %v", addr, err)
		}
		return cl
	}
	a, b := client(addrA), client(addrB)
	it := contract.Document("the failover server reads what the first one stored", contract.MemoryMeta{Tags: []string{"failover"}})
	rc, err := contract.Store(ctx, a, it)
	if err != nil || rc.Replayed {
		t.Fatalf("store through A: %+v %v", rc, err)
	}
	if rc2, err := contract.Store(ctx, b, it); err != nil || !rc2.Replayed || rc2.ID != rc.ID {
		t.Fatalf("the same store through B: %+v %v", rc2, err)
	}
	seen := func(e *remote.Client, want int) {
		t.Helper()
		hits, err := e.Get(ctx, contract.GetRequest{IDs: []string{rc.ID}})
		if err != nil || len(hits) != want {
			t.Fatalf("get: %v %v, want %d", hits, err, want)
		}
		list, err := e.List(ctx, contract.ListRequest{Limit: 10})
		if err != nil || len(list.Items) != want {
			t.Fatalf("list: %+v %v", list, err)
		}
		page, err := e.Browse(ctx, contract.BrowseQuery{})
		if err != nil || page.Total != want || len(page.Records) != want {
			t.Fatalf("browse: %+v %v", page, err)
		}
		ex, err := e.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetTag, Limit: 10})
		if err != nil || ex.Total != uint64(want) {
			t.Fatalf("explore: %+v %v", ex, err)
		}
		fp, err := e.Fetch(ctx, contract.FetchRequest{Query: "failover", Mode: contract.ModeKeyword, Limit: 10})
		if err != nil || len(fp.Hits) != want {
			t.Fatalf("fetch: %+v %v", fp, err)
		}
	}
	seen(b, 1)
	if _, err := b.Forget(ctx, contract.ForgetIDs(rc.ID)); err != nil {
		t.Fatal(err)
	}
	seen(a, 0)
	events, err := a.ReadAudit(ctx, audit.Query{})
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, ev := range events {
		ops = append(ops, ev.Op)
	}
	if strings.Join(ops, ",") != "store,store,forget" {
		t.Fatalf("the shared audit log: %v", ops)
	}
	if code := stopA(); code != 0 {
		t.Fatalf("server A exited %d", code)
	}
	// B serves on alone.
	if _, err := contract.Store(ctx, b, it); err != nil {
		t.Fatalf("store through B after A stopped: %v", err)
	}
	if code := stopB(); code != 0 {
		t.Fatalf("server B exited %d", code)
	}
}

// TestSSHOnEitherServer: the TUI over SSH runs the same on two servers of
// one PostgreSQL store, and no screen or banner shows the password.
func TestSSHOnEitherServer(t *testing.T) {
	url := pgtest.URL(t)
	c := newTestCLI(t)
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(string(gossh.MarshalAuthorizedKey(signer.PublicKey())))
	keys := c.writeFile("keys.toml", fmt.Sprintf("[[principal]]\nname = \"rita\"\nrole = \"reader\"\nssh_keys = [%q]\n", line))
	pw := passwordOfURL(url)
	// Both servers run at once over the one database.
	type server struct {
		banner *lockedBuffer
		stop   func() int
	}
	servers := map[string]server{}
	for _, name := range []string{"A", "B"} {
		_, banner, stop := startServeAtWithBanner(t, url, "--ssh", "127.0.0.1:0", "--keys", keys)
		servers[name] = server{banner, stop}
	}
	for _, name := range []string{"A", "B"} {
		banner, stop := servers[name].banner, servers[name].stop
		var sshAddr string
		for _, l := range strings.Split(banner.String(), "\n") {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "ssh"); ok {
				sshAddr = strings.TrimSpace(rest)
			}
		}
		if sshAddr == "" || strings.Contains(banner.String(), pw) {
			t.Fatalf("server %s banner: %s", name, banner.String())
		}
		client, err := gossh.Dial("tcp", sshAddr, &gossh.ClientConfig{User: "rita", Auth: []gossh.AuthMethod{gossh.PublicKeys(signer)},
			HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		sess, err := client.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		if err := sess.RequestPty("xterm-256color", 30, 100, gossh.TerminalModes{}); err != nil {
			t.Fatal(err)
		}
		out := &lockedBuffer{}
		sess.Stdout = out
		if err := sess.Shell(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(out.String(), "rita@") || !strings.Contains(out.String(), "read-only") {
			if time.Now().After(deadline) {
				t.Fatalf("server %s: the SSH session never showed rita's read-only TUI: %q", name, out.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		if strings.Contains(out.String(), pw) {
			t.Fatalf("server %s: the SSH screen shows the password", name)
		}
		_ = sess.Close()
		_ = client.Close()
		if code := stop(); code != 0 {
			t.Fatalf("server %s exited %d: %s", name, code, banner.String())
		}
	}
}
