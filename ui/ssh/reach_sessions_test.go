package ssh_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/server/auth"
	"mnemo/ui"
	mssh "mnemo/ui/ssh"
)

// The terminal both sessions ask for: wide enough that every seeded text
// fits its column whole.
const (
	termCols = 120
	termRows = 40
)

// scopedRecord is one seeded record and the word that appears in no other
// record and nowhere in the TUI's own chrome, so seeing it on a screen means
// the record leaked onto it.
type scopedRecord struct {
	ns, text, marker string
}

var (
	// aliceRecords are inside team:acme's subtree, alice's reach.
	aliceRecords = []scopedRecord{
		{"team:acme", "acme release checklist is in the wiki", "checklist"},
		{"team:acme", "acme release train leaves on thursdays", "thursdays"},
		{"team:acme/agent:writer", "writer keeps release notes in markdown", "markdown"},
		{"team:acme/agent:ops", "ops tags the release after smoke tests", "smoke"},
	}
	// bobRecords are exactly at user:bob, bob's reach.
	bobRecords = []scopedRecord{
		{"user:bob", "bob plans his release holiday in june", "holiday"},
		{"user:bob", "bob keeps a private release diary", "diary"},
	}
	// strayRecords are in neither reach: below user:bob (bob's reach is
	// exact), another team, and the root.
	strayRecords = []scopedRecord{
		{"user:bob/agent:mailer", "mailer agent sends bob release emails", "emails"},
		{"team:other", "other team guards its release secrets", "secrets"},
		{"", "root level release policy for everyone", "policy"},
	}
)

// prefixLen is how much of a text the narrowest list (Explore's, beside the
// facets and the preview) shows at termCols columns.
const prefixLen = 20

// foreign lists what would show a record of sets on a screen: its marker (in
// full texts) and its text's prefix (in truncated lists).
func foreign(sets ...[]scopedRecord) []string {
	var out []string
	for _, set := range sets {
		for _, r := range set {
			out = append(out, r.marker, r.text[:prefixLen])
		}
	}
	return out
}

// startScoped serves a real bolt store holding records in both scopes (and in
// neither) to alice (curator, subtree of team:acme) and bob (reader, exactly
// user:bob).
func startScoped(t *testing.T, alice, bob identity) string {
	t.Helper()
	return startScopedWith(t, scopedKeys(alice, bob)).addr
}

// scopedKeys names alice (curator, team:acme's subtree) and bob (reader,
// exactly user:bob).
func scopedKeys(alice, bob identity) string {
	return fmt.Sprintf(`
[[principal]]
name = "alice"
role = "curator"
reach = { at = "team:acme", descendants = true, inherit = false }
ssh_keys = [%q]

[[principal]]
name = "bob"
role = "reader"
reach = { at = "user:bob", descendants = false, inherit = false }
ssh_keys = [%q]
`, alice.line, bob.line)
}

// scopedServer is an SSH server over a bbolt store seeded with the scoped
// records, and the keys it serves.
type scopedServer struct {
	addr  string
	srv   *mssh.Server
	keys  *auth.Keys
	store *bolt.Engine
}

func startScopedWith(t *testing.T, keysTOML string) *scopedServer {
	t.Helper()
	store, err := bolt.Open(t.TempDir(), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	ctx := context.Background()
	for _, set := range [][]scopedRecord{aliceRecords, bobRecords, strayRecords} {
		for _, r := range set {
			meta := contract.MetaFromSource(contract.SourceAgent, nil)
			meta.Namespace = contract.MustNamespace(r.ns)
			if _, err := contract.Store(ctx, store, contract.Document(r.text, meta)); err != nil {
				t.Fatal(err)
			}
		}
	}
	keys, err := auth.ParseKeys([]byte(keysTOML))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mssh.New("127.0.0.1:0", mssh.Options{
		Engine:      store,
		Keys:        keys,
		Audit:       store,
		HostKeyPath: filepath.Join(t.TempDir(), "host_ed25519"),
		UI:          ui.Options{StoreLabel: "shared", Keys: ui.DefaultKeyMap(), Plain: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	// Registered after the store's cleanup, so it runs first: sessions end
	// before the store closes.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return &scopedServer{addr: l.Addr().String(), srv: srv, keys: keys, store: store}
}

// tuiSession is one open SSH terminal session and what it drew.
type tuiSession struct {
	name string
	sess *gossh.Session
	out  *syncBuffer
	in   io.WriteCloser
	// foreign are the markers of records this session must never show.
	foreign []string
}

func openTUI(t *testing.T, addr string, id identity, name string, foreign []string) *tuiSession {
	t.Helper()
	c, err := dial(t, addr, id)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() { c.Close() })
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	if err := sess.RequestPty("xterm-256color", termRows, termCols, gossh.TerminalModes{}); err != nil {
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
	return &tuiSession{name: name, sess: sess, out: out, in: in, foreign: foreign}
}

func (s *tuiSession) screen() string { return replay(termCols, termRows, []byte(s.out.String())) }

func (s *tuiSession) press(t *testing.T, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, err := s.in.Write([]byte(k)); err != nil {
			t.Fatalf("%s: typing %q: %v", s.name, k, err)
		}
	}
}

// leak reports a foreign record's marker or prefix on screen or anywhere in the byte stream
// (which also holds every frame drawn so far).
func (s *tuiSession) leak(screen string) string {
	stream := s.out.String()
	for _, m := range s.foreign {
		if strings.Contains(screen, m) || strings.Contains(stream, m) {
			return m
		}
	}
	return ""
}

// check fails the test when screen misses a want or shows a record from
// outside the session's reach.
func (s *tuiSession) check(t *testing.T, screen string, wants ...string) {
	t.Helper()
	if m := s.leak(screen); m != "" {
		t.Fatalf("%s's session showed %q, a record outside its reach:\n%s", s.name, m, screen)
	}
	for _, w := range wants {
		if !strings.Contains(screen, w) {
			t.Fatalf("%s's screen never showed %q; it shows:\n%s", s.name, w, screen)
		}
	}
}

// prefixes are the records' texts as far as the Explore list's column shows them.
func prefixes(set []scopedRecord) []string {
	out := make([]string, len(set))
	for i, r := range set {
		out[i] = r.text[:prefixLen]
	}
	return out
}

func texts(set []scopedRecord) []string {
	out := make([]string, len(set))
	for i, r := range set {
		out[i] = r.text
	}
	return out
}

// TestConcurrentSessionsSeeOnlyTheirReach opens alice's and bob's sessions at
// the same time over one store and walks both through Explore, Browse and
// Fetch: each screen counts and lists its own principal's records and never
// shows one from the other's reach or from outside both.
func TestConcurrentSessionsSeeOnlyTheirReach(t *testing.T) {
	aliceID, bobID := newIdentity(t), newIdentity(t)
	addr := startScoped(t, aliceID, bobID)
	alice := openTUI(t, addr, aliceID, "alice", foreign(bobRecords, strayRecords))
	bob := openTUI(t, addr, bobID, "bob", foreign(aliceRecords, strayRecords))
	nAlice, nBob := len(aliceRecords), len(bobRecords)
	total := nAlice + nBob + len(strayRecords)

	// Both sessions are open before either is looked at.
	steps := []struct {
		name  string
		keys  []string
		wants func(n int, own []scopedRecord) []string
	}{
		{"explore", nil, func(n int, own []scopedRecord) []string {
			return append([]string{fmt.Sprintf("%d records", n), fmt.Sprintf("Records %d of %d loaded", n, n)}, prefixes(own)...)
		}},
		{"browse", []string{"2"}, func(n int, own []scopedRecord) []string {
			return append([]string{fmt.Sprintf("Browse  %d loaded of %d matching", n, n)}, texts(own)...)
		}},
		{"fetch", []string{"3", "r", "e", "l", "e", "a", "s", "e"}, func(n int, own []scopedRecord) []string {
			// Every seeded text says "release": the query matches in every scope.
			return append([]string{fmt.Sprintf("Fetch  %d results for \"release\"", n)}, texts(own)...)
		}},
	}
	for _, st := range steps {
		// Keys go to both sessions before either screen is looked at, so the
		// two sessions' requests overlap on the server.
		alice.press(t, st.keys...)
		bob.press(t, st.keys...)
		wants := map[*tuiSession][]string{
			alice: append([]string{"alice@shared"}, st.wants(nAlice, aliceRecords)...),
			bob:   append([]string{"bob@shared", "read-only"}, st.wants(nBob, bobRecords)...),
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		screens := map[*tuiSession]string{}
		for s, w := range wants {
			wg.Go(func() {
				screen := waitScreen(s, w)
				mu.Lock()
				screens[s] = screen
				mu.Unlock()
			})
		}
		wg.Wait()
		// On the test goroutine: a screen still missing something, or showing
		// a foreign record, fails here.
		for _, s := range []*tuiSession{alice, bob} {
			screen := screens[s]
			s.check(t, screen, wants[s]...)
			if strings.Contains(screen, fmt.Sprintf("%d records", total)) {
				t.Fatalf("%s's %s screen counts the whole store:\n%s", s.name, st.name, screen)
			}
		}
	}
	if strings.Contains(alice.screen(), "read-only") {
		t.Fatal("alice, a curator, got a read-only session")
	}
	for _, s := range []*tuiSession{alice, bob} {
		s.press(t, "\x03") // ctrl+c quits even from the query input
	}
	for _, s := range []*tuiSession{alice, bob} {
		done := make(chan error, 1)
		go func() { done <- s.sess.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s's session did not end after ctrl+c", s.name)
		}
	}
}

// waitScreen polls a session's screen until it shows every want, a foreign
// record appears, or 20 seconds pass, and returns the last screen; the
// caller's check turns a miss or a leak into a failure.
func waitScreen(s *tuiSession, wants []string) string {
	deadline := time.Now().Add(20 * time.Second)
	for {
		screen := s.screen()
		if s.leak(screen) != "" || time.Now().After(deadline) {
			return screen
		}
		all := true
		for _, w := range wants {
			if !strings.Contains(screen, w) {
				all = false
				break
			}
		}
		if all {
			return screen
		}
		time.Sleep(25 * time.Millisecond)
	}
}
