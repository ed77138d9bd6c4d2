package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"mnemo/server/local"
)

// The shared store belongs to one OS user. These tests run mnemo (this test
// binary standing in for it) as the user nobody, which needs root.

const nobody = 65534

// usersFixture is a directory tree the user nobody can enter, a copy of
// the test binary it can run, and state directories it can write.
type usersFixture struct {
	t    *testing.T
	root string
	bin  string
}

func newUsersFixture(t *testing.T) *usersFixture {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("running a process as another user needs root")
	}
	root, err := os.MkdirTemp("", "mnemo-users-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "mnemo")
	src, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(root, "nobody")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(home, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	return &usersFixture{t: t, root: root, bin: bin}
}

// asNobody runs mnemo args as the user nobody.
func (f *usersFixture) asNobody(stdin string, args ...string) cliResult {
	f.t.Helper()
	cmd := exec.Command(f.bin, args...)
	home := filepath.Join(f.root, "nobody")
	cmd.Env = []string{"MNEMO_TEST_AS_CLI=1", "HOME=" + home, "XDG_STATE_HOME=" + home + "/state",
		"XDG_CONFIG_HOME=" + home + "/config", "XDG_DATA_HOME=" + home + "/data", "XDG_RUNTIME_DIR=" + home + "/run", "PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		f.t.Fatalf("run as nobody: %v", err)
	}
	return cliResult{stdout: out.String(), stderr: errOut.String(), code: code}
}

// Another user cannot read or write a store, and is told so with the
// store's name; while its owner's process holds it, its socket refuses them.
func TestAnotherUserCannotUseTheStore(t *testing.T) {
	f := newUsersFixture(t)
	c := newTestCLI(t)
	c.db = filepath.Join(f.root, "store")
	c.ok(styleLearning, "store")

	r := f.asNobody(styleLearning, "--db", c.db, "store")
	if r.code == 0 || !strings.Contains(r.stderr, c.db) {
		t.Errorf("nobody stored into root's store: exit %d, stderr %q", r.code, r.stderr)
	}
	r = f.asNobody("", "--db", c.db, "list")
	if r.code == 0 || !strings.Contains(r.stderr, c.db) || r.stdout != "" {
		t.Errorf("nobody listed root's store: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}

	// The directory made readable by all, and its owner holding it: the
	// socket (0600, and the peer's credentials) keeps nobody out.
	if err := filepath.Walk(c.db, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.IsDir() {
			return os.Chmod(p, 0o755)
		}
		return os.Chmod(p, 0o644)
	}); err != nil {
		t.Fatal(err)
	}
	s, err := local.Open(context.Background(), c.db, local.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r = f.asNobody(styleLearning, "--db", c.db, "store")
	if r.code == 0 || !strings.Contains(r.stderr, "another user") || !strings.Contains(r.stderr, c.db) {
		t.Errorf("nobody stored through root's socket: exit %d, stderr %q", r.code, r.stderr)
	}
	var n int
	if st, err := s.Status(context.Background()); err != nil {
		t.Fatal(err)
	} else {
		n = st.Records
	}
	if n != 1 {
		t.Errorf("root's store holds %d records, want 1", n)
	}
}

// A store its user can read but not write opens for reading: every read
// command works, and a write says why it cannot be done.
func TestReadOnlyStoreIsReadable(t *testing.T) {
	f := newUsersFixture(t)
	store := filepath.Join(f.root, "nobody", "store")
	if r := f.asNobody(styleLearning, "--db", store, "store"); r.code != 0 {
		t.Fatalf("nobody's store: exit %d, %s", r.code, r.stderr)
	}
	// Everything made read-only (root's chmod of nobody's files).
	if err := filepath.Walk(store, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.IsDir() {
			return os.Chmod(p, 0o555)
		}
		return os.Chmod(p, 0o444)
	}); err != nil {
		t.Fatal(err)
	}
	before := snapshotTree(t, store)
	r := f.asNobody("", "--db", store, "list")
	if r.code != 0 || !strings.Contains(r.stdout, fingerprintOf(t, styleLearning)) {
		t.Fatalf("list of a read-only store: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = f.asNobody("", "--db", store, "fetch", "tabs")
	if r.code != 0 {
		t.Errorf("fetch of a read-only store: exit %d, stderr %q", r.code, r.stderr)
	}
	r = f.asNobody(`{"type":"learning","text":"another","kind":"fact","confidence":0.5,"meta":{"namespace":"team:acme"}}`, "--db", store, "store")
	if r.code != exitUnauthorized || !strings.Contains(r.stderr, "read-only") || !strings.Contains(r.stderr, store) {
		t.Errorf("store into a read-only store: exit %d, stderr %q", r.code, r.stderr)
	}
	if after := snapshotTree(t, store); after != before {
		t.Errorf("reading a read-only store changed it:\nbefore %s\nafter  %s", before, after)
	}
}

// snapshotTree lists a tree's files with their sizes and times.
func snapshotTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil {
			b.WriteString(strings.TrimPrefix(p, dir) + " " + info.ModTime().String() + " " + info.Mode().String() + "\n")
		}
		return nil
	})
	return b.String()
}
