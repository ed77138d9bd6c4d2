package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"mnemo/cliout"
	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/server"
	"mnemo/server/auth"
)

const (
	carolToken = "carol-curator-token"
	danaToken  = "dana-admin-token"
)

// tenantKeys names carol, a curator confined to team:acme (subtree, inherit
// written out as false), and dana, an admin of team:gamma.
func tenantKeys() string {
	return fmt.Sprintf(`
[[principal]]
name = "carol"
role = "curator"
reach = { at = "team:acme", descendants = true, inherit = false }
token_sha256 = [%q]

[[principal]]
name = "dana"
role = "admin"
reach = { at = "team:gamma", descendants = true }
token_sha256 = [%q]
`, auth.HashToken(carolToken), auth.HashToken(danaToken))
}

// seedTenants stores, through the owner, five records tagged wipe-test in
// team:acme, team:acme/agent:bot, team:acme/agent:other and team:gamma.
func seedTenants(t *testing.T, c *testCLI, url string) {
	t.Helper()
	var lines []string
	for _, ns := range []string{"team:acme", "team:acme/agent:bot", "team:acme/agent:other", "team:gamma"} {
		for i := range 5 {
			lines = append(lines, fmt.Sprintf(`{"type":"document","body":{"text":"wipe %d at %s"},"meta":{"namespace":%q,"tags":["wipe-test"],"source":{"kind":"agent"}}}`, i, ns, ns))
		}
	}
	token, err := os.ReadFile(filepath.Join(c.db, bolt.TokenFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("MNEMO_TOKEN", strings.TrimSpace(string(token)))
	c.ok(jsonl(lines...), "--remote", url, "import", "-")
}

// TestRemoteForgetDryRunMatchesWhatForgetRemoves is defect 1 of issue 12
// through `mnemo --remote ... forget`: the dry run's count is what the forget
// then removes, both narrowed by carol's bound and never widened to it.
func TestRemoteForgetDryRunMatchesWhatForgetRemoves(t *testing.T) {
	c := newTestCLI(t)
	keys := c.writeFile("keys.toml", tenantKeys())
	s := startServe(t, c, "--http", "127.0.0.1:0", "--keys", keys)
	seedTenants(t, c, s.url)
	t.Setenv("MNEMO_TOKEN", carolToken)

	inherit := `{"reach":{"at":"team:acme/agent:bot"},"tags_any":["wipe-test"]}`
	var dry cliout.DryRun
	c.okJSON(&dry, "", "--remote", s.url, "forget", "--filter", inherit, "--dry-run")
	// team:acme/agent:bot and, inherited inside carol's bound, team:acme.
	if dry.WouldForget != 10 {
		t.Fatalf("dry run: %+v, want 10", dry)
	}
	var rep contract.ForgetReport
	c.okJSON(&rep, "", "--remote", s.url, "forget", "--filter", inherit, "--yes")
	if rep.Forgotten != dry.WouldForget {
		t.Fatalf("forget removed %d, the dry run said %d", rep.Forgotten, dry.WouldForget)
	}
	// Another tenant's reach is refused, naming it, by the dry run and the forget.
	gamma := `{"reach":{"at":"team:gamma","descendants":true,"inherit":false},"tags_any":["wipe-test"]}`
	for _, extra := range []string{"--dry-run", "--yes"} {
		r := c.run("", "--remote", s.url, "forget", "--filter", gamma, extra)
		if r.code == 0 || !strings.Contains(r.stderr, "`team:gamma` with everything below it") {
			t.Fatalf("forget %s in team:gamma: exit %d, %s", extra, r.code, r.stderr)
		}
	}
	// What is left: agent:other's five and team:gamma's five.
	token, _ := os.ReadFile(filepath.Join(c.db, bolt.TokenFile))
	t.Setenv("MNEMO_TOKEN", strings.TrimSpace(string(token)))
	var left contract.ExplorePage
	c.okJSON(&left, "", "--remote", s.url, "explore", "namespace", "--filter", `{"tags_any":["wipe-test"]}`)
	got := map[string]uint64{}
	for _, b := range left.Buckets {
		got[b.Value] = b.Count
	}
	if left.Total != 10 || got["team:acme/agent:other"] != 5 || got["team:gamma"] != 5 {
		t.Fatalf("left after the forget: %+v", left)
	}
	// mnemo audit over --remote is confined too (defect 2): dana, admin of
	// team:gamma, reads the two refused attempts on team:gamma and nothing
	// of carol's forget in team:acme nor the import that spans tenants.
	t.Setenv("MNEMO_TOKEN", danaToken)
	events := readAuditLines(t, c.ok("", "--remote", s.url, "audit"))
	if len(events) != 2 {
		t.Fatalf("dana reads %+v", events)
	}
	for _, ev := range events {
		if ev.Refused == "" || ev.Reach == nil || ev.Reach.At.String() != "team:gamma" {
			t.Fatalf("dana reads %+v", ev)
		}
	}
}

// TestServeSaysWhatEachPrincipalMayDoAndInheritDefaultsToFalse is defect 5 of
// issue 12: a keys-file reach written without inherit does not read the
// root, and `mnemo serve` prints one line per principal of what it can read
// and write (again on reload).
func TestServeSaysWhatEachPrincipalMayDoAndInheritDefaultsToFalse(t *testing.T) {
	c := newTestCLI(t)
	keys := c.writeFile("keys.toml", tenantKeys()+fmt.Sprintf(`
[[principal]]
name = "gina"
role = "reader"
reach = { at = "team:gamma", descendants = true }
token_sha256 = [%q]
`, auth.HashToken("gina-token")))
	s := startServe(t, c, "--http", "127.0.0.1:0", "--keys", keys)
	for _, want := range []string{
		"  principal carol (curator; 1 token, 0 ssh keys): reads, stores, forgets and reviews in `team:acme` with everything below it but service sandboxes\n",
		"  principal gina (reader; 1 token, 0 ssh keys): reads `team:gamma` with everything below it but service sandboxes; writes nothing\n",
	} {
		if !strings.Contains(s.stderr.String(), want) {
			t.Fatalf("serve did not print %q:\n%s", want, s.stderr.String())
		}
	}
	seedTenants(t, c, s.url)
	c.ok(`{"type":"document","body":{"text":"root plan"},"meta":{"source":{"kind":"agent"}}}`, "--remote", s.url, "store")
	t.Setenv("MNEMO_TOKEN", "gina-token")
	var page contract.ListPage
	c.okJSON(&page, "", "--remote", s.url, "list", "--limit", "100")
	if len(page.Items) != 5 {
		t.Fatalf("gina lists %d records, want team:gamma's 5 and not the root's", len(page.Items))
	}
	for _, h := range page.Items {
		if h.Meta.Namespace.String() != "team:gamma" {
			t.Fatalf("gina read a record at %s", h.Meta.Namespace)
		}
	}
}

// TestHangupEndsTheSSHSessionOfARemovedKey is defect 4 of issue 12 end to
// end: SIGHUP with a keys file that dropped an SSH principal ends its open
// session within a second, while HTTP refuses its token at once.
func TestHangupEndsTheSSHSessionOfARemovedKey(t *testing.T) {
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
	keysPath := c.writeFile("keys.toml", fmt.Sprintf("[[principal]]\nname = \"rita\"\nrole = \"reader\"\nssh_keys = [%q]\ntoken_sha256 = [%q]\n", line, auth.HashToken("rita-token")))
	s := startServe(t, c, "--http", "127.0.0.1:0", "--ssh", "127.0.0.1:0", "--keys", keysPath)
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
	sess.Stdout, sess.Stderr = out, out
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "rita@") {
		if time.Now().After(deadline) {
			t.Fatalf("no TUI: %q", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	ended := make(chan error, 1)
	go func() { ended <- sess.Wait() }()

	c.writeFile("keys.toml", "")
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(s.stderr.String(), "keys file reloaded") {
		if time.Now().After(deadline) {
			t.Fatalf("no reload: %s", s.stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case <-ended:
	case <-time.After(time.Second):
		t.Fatal("rita's SSH session outlived the removal of her key by a second")
	}
	if !strings.Contains(out.String(), "removed from the server's keys file") {
		t.Fatalf("the session ended without saying why: %q", tail(out.String()))
	}
	req, _ := http.NewRequest(http.MethodGet, s.url+"/v1/descriptor", nil)
	req.Header.Set("Authorization", "Bearer rita-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("rita's token after the reload: %d", resp.StatusCode)
	}
}

func tail(s string) string {
	if len(s) > 400 {
		return s[len(s)-400:]
	}
	return s
}

// TestUnixSocketIsNeverOpenToOthers is issue 12's socket hardening: the
// socket was chmod'ed to 0600 after Listen, so for a moment it had the
// umask's mode. With umask 0, an observer polling the path while the server
// listens, again and again, must never see the socket with any other mode
// than 0600, and nothing is left beside it.
func TestUnixSocketIsNeverOpenToOthers(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	dir := t.TempDir()
	sock := filepath.Join(dir, "mnemo.sock")
	for i := range 100 {
		stop := make(chan struct{})
		seen := make(chan os.FileMode, 1)
		go func() {
			defer close(seen)
			for {
				select {
				case <-stop:
					return
				default:
				}
				if st, err := os.Lstat(sock); err == nil && st.Mode().Perm() != 0o600 {
					seen <- st.Mode().Perm()
					return
				}
			}
		}()
		l, _, open, err := server.ListenHTTP("unix:" + sock)
		close(stop)
		if err != nil || !open {
			t.Fatal(err)
		}
		if mode, bad := <-seen; bad {
			t.Fatalf("round %d: the socket was at its path with mode %v", i, mode)
		}
		if st, err := os.Lstat(sock); err != nil || st.Mode().Perm() != 0o600 || st.Mode()&os.ModeSocket == 0 {
			t.Fatalf("round %d: socket %v, %v", i, st, err)
		}
		l.Close()
		server.CleanupSocket("unix:" + sock)
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Fatalf("round %d: left %s beside the socket", i, entries[0].Name())
		}
	}
}
