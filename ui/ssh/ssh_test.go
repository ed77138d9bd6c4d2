package ssh_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"mnemo/server/auth"
	"mnemo/ui"
	mssh "mnemo/ui/ssh"
	"mnemo/ui/uitest"
)

type identity struct {
	signer gossh.Signer
	line   string
}

func newIdentity(t *testing.T) identity {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return identity{signer: signer, line: strings.TrimSpace(string(gossh.MarshalAuthorizedKey(signer.PublicKey())))}
}

type server struct {
	addr string
	srv  *mssh.Server
	done chan error
}

func start(t *testing.T, alice, rita identity) *server {
	t.Helper()
	engine, err := uitest.Fixture()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := auth.ParseKeys([]byte(fmt.Sprintf(`
[[principal]]
name = "alice"
role = "curator"
ssh_keys = [%q]

[[principal]]
name = "rita"
role = "reader"
ssh_keys = [%q]
`, alice.line, rita.line)))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mssh.New("127.0.0.1:0", mssh.Options{
		Engine:      engine,
		Keys:        keys,
		HostKeyPath: filepath.Join(t.TempDir(), "host_ed25519"),
		UI:          ui.Options{StoreLabel: "test-store", Keys: ui.DefaultKeyMap(), Plain: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{addr: l.Addr().String(), srv: srv, done: make(chan error, 1)}
	go func() { s.done <- srv.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return s
}

func dial(t *testing.T, addr string, id identity) (*gossh.Client, error) {
	t.Helper()
	return gossh.Dial("tcp", addr, &gossh.ClientConfig{
		User:            "anyone",
		Auth:            []gossh.AuthMethod{gossh.PublicKeys(id.signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(),
		Timeout:         5 * time.Second,
	})
}

// syncBuffer collects a session's output for polling.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func waitFor(t *testing.T, out *syncBuffer, wants ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		s := out.String()
		all := true
		for _, w := range wants {
			if !strings.Contains(s, w) {
				all = false
			}
		}
		if all {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the session never showed %q; it wrote %d bytes:\n%q", wants, len(out.String()), tail(out.String()))
}

func tail(s string) string {
	if len(s) > 2000 {
		return s[len(s)-2000:]
	}
	return s
}

// shell opens a PTY session and returns its output.
func shell(t *testing.T, c *gossh.Client) (*gossh.Session, *syncBuffer, io.WriteCloser) {
	t.Helper()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.RequestPty("xterm-256color", 30, 100, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	out := &syncBuffer{}
	sess.Stdout, sess.Stderr = out, out
	in, err := sess.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	return sess, out, in
}

func TestPTYSessionSeesTheFirstFrame(t *testing.T) {
	alice, rita := newIdentity(t), newIdentity(t)
	s := start(t, alice, rita)
	c, err := dial(t, s.addr, alice)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	sess, out, in := shell(t, c)
	defer sess.Close()
	waitFor(t, out, "alice@test-store", "Explore")
	t.Logf("first frame %v after the shell request, %d bytes", time.Since(start), len(out.String()))
	if strings.Contains(out.String(), "read-only") {
		t.Fatal("a curator's session is read-only")
	}
	// q quits the session cleanly.
	_, _ = in.Write([]byte("q"))
	done := make(chan error, 1)
	go func() { done <- sess.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end after q")
	}
}

func TestReaderSessionIsReadOnly(t *testing.T) {
	alice, rita := newIdentity(t), newIdentity(t)
	s := start(t, alice, rita)
	c, err := dial(t, s.addr, rita)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, out, _ := shell(t, c)
	defer sess.Close()
	waitFor(t, out, "rita@test-store", "read-only")
}

func TestSessionWithoutPTYIsRefused(t *testing.T) {
	alice, rita := newIdentity(t), newIdentity(t)
	s := start(t, alice, rita)
	c, err := dial(t, s.addr, alice)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	var stderr bytes.Buffer
	sess.Stderr = &stderr
	err = sess.Run("list")
	var exit *gossh.ExitError
	if !errors.As(err, &exit) || exit.ExitStatus() != 1 {
		t.Fatalf("a no-PTY session ended with %v, want exit status 1", err)
	}
	if !strings.Contains(stderr.String(), "needs a terminal") {
		t.Fatalf("the refusal said %q", stderr.String())
	}
}

func TestUnknownKeyIsRefused(t *testing.T) {
	alice, rita := newIdentity(t), newIdentity(t)
	s := start(t, alice, rita)
	if c, err := dial(t, s.addr, newIdentity(t)); err == nil {
		c.Close()
		t.Fatal("a key outside the keys file was accepted")
	}
}

func TestShutdownEndsOpenSessions(t *testing.T) {
	alice, rita := newIdentity(t), newIdentity(t)
	s := start(t, alice, rita)
	c, err := dial(t, s.addr, alice)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, out, _ := shell(t, c)
	defer sess.Close()
	waitFor(t, out, "alice@test-store")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("serve ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("serve did not return after shutdown")
	}
}

func TestIdleSessionsAreClosed(t *testing.T) {
	alice, rita := newIdentity(t), newIdentity(t)
	engine, err := uitest.Fixture()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := auth.ParseKeys([]byte(fmt.Sprintf("[[principal]]\nname = \"alice\"\nrole = \"curator\"\nssh_keys = [%q, %q]\n", alice.line, rita.line)))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mssh.New("127.0.0.1:0", mssh.Options{Engine: engine, Keys: keys, IdleTimeout: 300 * time.Millisecond,
		HostKeyPath: filepath.Join(t.TempDir(), "host"), UI: ui.Options{Keys: ui.DefaultKeyMap()}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}()
	c, err := dial(t, l.Addr().String(), alice)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, out, _ := shell(t, c)
	waitFor(t, out, "alice@mnemo")
	done := make(chan error, 1)
	go func() { done <- sess.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("an idle session was not closed")
	}
}
