package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/remote"
	"mnemo/server/audit"
	"mnemo/server/auth"
)

// lockedBuffer is a stderr the server goroutine writes while the test reads.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type runningServer struct {
	url    string
	stderr *lockedBuffer
	stop   func() int
}

// startServe runs `mnemo --db DIR serve args...` in-process until stop, and
// waits for it to publish its address.
// sshAddr reads the banner's SSH address (serve writes the address file
// that startServe waits for after the banner).
func (s *runningServer) sshAddr(t *testing.T) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, l := range strings.Split(s.stderr.String(), "\n") {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "ssh "); ok && strings.TrimSpace(rest) != "" {
				return strings.TrimSpace(rest)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not print its SSH address: %s", s.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func startServe(t *testing.T, c *testCLI, args ...string) *runningServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &lockedBuffer{}
	a := newApp(strings.NewReader(""), &bytes.Buffer{}, stderr)
	root := newRootCommand(a)
	root.SetArgs(append([]string{"--db", c.db, "serve"}, args...))
	done := make(chan int, 1)
	go func() {
		err := root.ExecuteContext(ctx)
		code := a.report(err)
		a.close()
		done <- code
	}()
	s := &runningServer{stderr: stderr}
	var once sync.Once
	code := -1
	s.stop = func() int {
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
	t.Cleanup(func() { s.stop() })
	addrPath := filepath.Join(c.db, bolt.AddrFile)
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case code := <-done:
			t.Fatalf("serve exited with %d: %s", code, stderr.String())
		default:
		}
		if data, err := os.ReadFile(addrPath); err == nil && len(data) > 0 {
			s.url = strings.TrimSpace(string(data))
			return s
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("serve never wrote %s: %s", bolt.AddrFile, stderr.String())
	return nil
}

func readAuditLines(t *testing.T, out string) []audit.Event {
	t.Helper()
	var events []audit.Event
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var ev audit.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		events = append(events, ev)
	}
	return events
}

func TestServeAttachesCommandsAndAuditsThem(t *testing.T) {
	c := newTestCLI(t)
	s := startServe(t, c, "--http", "127.0.0.1:0")
	if !strings.HasPrefix(s.url, "http://127.0.0.1:") {
		t.Fatalf("serve.addr holds %q", s.url)
	}
	st, err := os.Stat(filepath.Join(c.db, bolt.TokenFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the owner token file: %v, mode %v", err, st.Mode().Perm())
	}

	// A command on the held store attaches to the server instead of failing.
	var receipt contract.StoreReceipt
	c.okJSON(&receipt, styleLearning, "store")
	if receipt.ID != fingerprintOf(t, styleLearning) {
		t.Fatalf("store through the server: %+v", receipt)
	}
	c.ok("", "forget", "--ids", receipt.ID, "--yes")

	// Without the token the API gives nothing.
	resp, err := http.Post(s.url+"/v1/list", "application/json", strings.NewReader(`{"limit":10}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("list without a token: %d", resp.StatusCode)
	}

	// Over HTTP with the owner token, a store is audited.
	req, _ := http.NewRequest(http.MethodPost, s.url+"/v1/store", strings.NewReader(styleLearning))
	req.Header.Set("Authorization", "Bearer "+ownerToken(t, c))
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("store over HTTP: %d", resp.StatusCode)
	}
	c.ok("", "forget", "--ids", receipt.ID, "--yes")

	// The commands of the store's own user reach it through its socket,
	// as any local open: the audit log holds what came over the server's
	// listeners.
	events := readAuditLines(t, c.ok("", "audit"))
	ops := []string{}
	for _, ev := range events {
		ops = append(ops, ev.Principal+" "+ev.Op)
	}
	if strings.Join(ops, ",") != "anonymous authenticate,owner store" {
		t.Fatalf("audit through the server: %v", ops)
	}
	if len(events[1].IDs) != 1 || events[1].IDs[0] != receipt.ID {
		t.Fatalf("the store's audit line: %+v", events[1])
	}

	if code := s.stop(); code != 0 {
		t.Fatalf("serve exited %d: %s", code, s.stderr.String())
	}
	if _, err := os.Stat(filepath.Join(c.db, bolt.AddrFile)); !os.IsNotExist(err) {
		t.Fatalf("serve.addr outlived the server: %v", err)
	}
	if _, err := os.Stat(filepath.Join(c.db, bolt.TokenFile)); !os.IsNotExist(err) {
		t.Fatalf("serve.token outlived the server: %v", err)
	}
	// The log stays in the store.
	local := readAuditLines(t, c.ok("", "audit", "--since", "1h", "--limit", "2"))
	if len(local) != 2 || local[1].Op != "store" {
		t.Fatalf("local audit after the server stopped: %+v", local)
	}
	if r := c.run("", "audit", "--since", "yesterday"); r.code != exitInvalid {
		t.Fatalf("audit --since yesterday: exit %d", r.code)
	}
}

func TestServeOnAPrivateUnixSocketNeedsNoToken(t *testing.T) {
	c := newTestCLI(t)
	sock := filepath.Join(t.TempDir(), "mnemo.sock")
	s := startServe(t, c, "--http", "unix:"+sock)
	st, err := os.Stat(sock)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("socket: %v mode %v", err, st.Mode().Perm())
	}
	cl, err := remote.New(s.url, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	meta := contract.MetaFromSource(contract.SourceAgent, nil)
	if _, err := contract.Store(ctx, cl, contract.Document("over a socket", meta)); err != nil {
		t.Fatal(err)
	}
	page, err := cl.List(ctx, contract.ListRequest{Limit: 5})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("list over the socket: %v %+v", err, page)
	}
	if code := s.stop(); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Fatal("the socket outlived the server")
	}
}

func TestServeRefusesSSHWithoutKeys(t *testing.T) {
	c := newTestCLI(t)
	r := c.run("", "serve", "--http", "127.0.0.1:0", "--ssh", "127.0.0.1:0")
	if r.code != exitInvalid || !strings.Contains(r.stderr, "--ssh needs --keys") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	keys := c.writeFile("keys.toml", "[[principal]]\nname = \"a\"\nrole = \"wizard\"\n")
	r = c.run("", "serve", "--keys", keys)
	if r.code != exitInvalid || !strings.Contains(r.stderr, "role must be reader, curator or admin") {
		t.Fatalf("bad keys file: exit %d: %s", r.code, r.stderr)
	}
}

func TestServeSSHSessionRunsTheTUIAsItsPrincipal(t *testing.T) {
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
	s := startServe(t, c, "--http", "127.0.0.1:0", "--ssh", "127.0.0.1:0", "--keys", keys)
	sshAddr := s.sshAddr(t)
	client, err := gossh.Dial("tcp", sshAddr, &gossh.ClientConfig{User: "rita", Auth: []gossh.AuthMethod{gossh.PublicKeys(signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
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
			t.Fatalf("the SSH session never showed rita's read-only TUI: %q", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(c.db, bolt.HostKeyFile)); err != nil {
		t.Fatalf("no host key in the store: %v", err)
	}
	// The header names the server, never the store's path (issue 12).
	if host, err := os.Hostname(); err == nil && host != "" && !strings.Contains(out.String(), "rita@"+host) {
		t.Fatalf("the header does not name the server %s: %q", host, out.String())
	}
	if strings.Contains(out.String(), c.db) {
		t.Fatalf("the SSH session showed the store's path %s", c.db)
	}
	// Stopping the server ends the session.
	if code := s.stop(); code != 0 {
		t.Fatalf("serve exited %d: %s", code, s.stderr.String())
	}
}

func TestServeReloadsTheKeysFileOnHangup(t *testing.T) {
	c := newTestCLI(t)
	keysPath := c.writeFile("keys.toml", fmt.Sprintf("[[principal]]\nname = \"a\"\nrole = \"reader\"\ntoken_sha256 = [%q]\n", auth.HashToken("first-token")))
	s := startServe(t, c, "--http", "127.0.0.1:0", "--keys", keysPath)
	status := func(token string) int {
		req, _ := http.NewRequest(http.MethodGet, s.url+"/v1/descriptor", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if status("first-token") != 200 || status("second-token") != 401 {
		t.Fatal("the first keys file is not in force")
	}
	c.writeFile("keys.toml", fmt.Sprintf("[[principal]]\nname = \"b\"\nrole = \"reader\"\ntoken_sha256 = [%q]\n", auth.HashToken("second-token")))
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(s.stderr.String(), "keys file reloaded") {
		if time.Now().After(deadline) {
			t.Fatalf("no reload: %s", s.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if status("first-token") != 401 || status("second-token") != 200 {
		t.Fatal("the reloaded keys file is not in force")
	}
}

// ownerToken is the owner token a running server left in the store.
func ownerToken(t *testing.T, c *testCLI) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(c.db, bolt.TokenFile))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}
