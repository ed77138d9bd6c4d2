package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"mnemo/bench"
	"mnemo/engine/bolt"
	"mnemo/server/local"
)

// importFile writes n distinct learnings as a JSONL file to import.
func importFile(t *testing.T, n int) string {
	t.Helper()
	var lines strings.Builder
	for i := range n {
		fmt.Fprintf(&lines, `{"type":"learning","text":"fact %d: the worker on host-%d restarts after %d failures","kind":"fact","confidence":0.5,"meta":{"namespace":"team:acme","tags":["t%d"]}}`+"\n", i, i%17, i%5, i%9)
	}
	file := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(file, []byte(lines.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// bucketKeys counts the keys of a bucket of the closed store in dir.
func bucketKeys(t *testing.T, dir, bucket string) int {
	t.Helper()
	db, err := bbolt.Open(filepath.Join(dir, bolt.DBFile), 0o600, &bbolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n := -1
	_ = db.View(func(tx *bbolt.Tx) error {
		if b := tx.Bucket([]byte(bucket)); b != nil {
			n = b.Stats().KeyN
		}
		return nil
	})
	return n
}

// threadNiceness reads, until process pid exits, the niceness of each of
// its threads, and answers the last complete reading (nil when there was
// none).
func threadNiceness(pid int) []int {
	var last []int
	for {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			return last
		}
		var now []int
		for _, task := range tasks {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, task.Name()))
			if err != nil {
				now = nil
				break
			}
			// After "(comm)": state is field 3, nice field 19.
			f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
			if len(f) < 17 || f[0] == "Z" {
				return last
			}
			n, _ := strconv.Atoi(f[16])
			now = append(now, n)
		}
		if len(now) > 0 {
			last = now
		}
		time.Sleep(2 * time.Millisecond)
	}
}

var finisherSaid = regexp.MustCompile(`^mnemo import: the records are stored; process (\d+) catches the search index up and embeds them in the background, then rewrites the store with full pages \(mnemo info shows how far; --wait waits\)\n$`)

var compactionSaid = regexp.MustCompile(`mnemo import: rewrote the new store with full pages \([\d.]+ [KMG]iB -> [\d.]+ [KMG]iB\) and merged its search index`)

// testFinisher runs an import's finisher as a real process: this test
// binary standing in for mnemo.
type testFinisher struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
}

// start is an app's startFinisher.
func (f *testFinisher) start(args, env []string) (int, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	f.cmd = exec.Command(exe, args...)
	f.cmd.Env = append(append(os.Environ(), env...), "MNEMO_TEST_AS_CLI=1")
	f.cmd.Stderr = &f.stderr
	if err := f.cmd.Start(); err != nil {
		return 0, err
	}
	return f.cmd.Process.Pid, nil
}

// wait waits for the finisher to exit, with 0, in at most 2 minutes.
func (f *testFinisher) wait(t *testing.T) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the finisher: %v, stderr %q", err, f.stderr.String())
		}
	case <-time.After(2 * time.Minute):
		_ = f.cmd.Process.Kill()
		t.Fatalf("the finisher did not end in 2 minutes; stderr %q", f.stderr.String())
	}
}

// checkSettled checks what the finisher left in the store in dir: the
// full-page rewrite said, the index caught up (its applied outbox pruned at
// close), every record embedded.
func (f *testFinisher) checkSettled(t *testing.T, dir string) {
	t.Helper()
	if !compactionSaid.MatchString(f.stderr.String()) {
		t.Errorf("the finisher said %q, want the full-page rewrite", f.stderr.String())
	}
	if n := bucketKeys(t, dir, "outbox"); n != 0 {
		t.Errorf("the finisher left %d outbox entries", n)
	}
	if n := bucketKeys(t, dir, "vector_blocks"); n <= 0 {
		t.Errorf("the finisher left %d vector blocks", n)
	}
}

// A large import returns once its records are stored and hands what its
// writes started (the search index, the content index, the embeddings, the
// full-page rewrite of a store it filled) to a process of its own, the
// finisher, which it names; the finisher leaves the store as the import
// would have before exiting.
func TestLargeImportFinishesInAProcessOfItsOwn(t *testing.T) {
	c := newTestCLI(t)
	// A store of 2,000 records or more opens at once and catches up in
	// the background, as a large one does (a smaller one is ready when
	// Open returns).
	file := importFile(t, 2500)
	var finisher testFinisher
	var out, errOut bytes.Buffer
	a := newApp(strings.NewReader(""), &out, &errOut)
	a.compactMin, a.finishMin = 100, 100
	a.startFinisher = func(args, env []string) (int, error) {
		if finisher.cmd != nil {
			t.Fatal("a second finisher")
		}
		// The import has let the store go, its background work undone.
		if n := bucketKeys(t, c.db, "outbox"); n <= 0 {
			t.Errorf("the import left %d outbox entries to the finisher, want its writes'", n)
		}
		if n := bucketKeys(t, c.db, "vector_blocks"); n != 0 {
			t.Errorf("the import embedded its records itself (%d vector blocks)", n)
		}
		return finisher.start(args, env)
	}
	if code := a.execute([]string{"--db", c.db, "import", file}); code != 0 {
		t.Fatalf("import: exit %d, stderr %q", code, errOut.String())
	}
	if finisher.cmd == nil {
		t.Fatalf("no finisher was started; stderr %q", errOut.String())
	}
	pid := finisher.cmd.Process.Pid
	// The finisher runs at a lower priority, every thread of it, while a
	// person's next commands run at theirs.
	niceness := make(chan []int, 1)
	go func() { niceness <- threadNiceness(pid) }()
	finisher.wait(t)
	if runtime.GOOS == "linux" {
		nice := <-niceness
		if len(nice) == 0 {
			t.Error("the finisher's threads could not be read while it ran")
		}
		for _, n := range nice {
			if n != finisherNice {
				t.Errorf("a thread of the finisher runs at niceness %d, want %d (all: %v)", n, finisherNice, nice)
				break
			}
		}
	}
	m := finisherSaid.FindStringSubmatch(errOut.String())
	if m == nil {
		t.Fatalf("import's stderr %q, want the finisher named", errOut.String())
	}
	if named, _ := strconv.Atoi(m[1]); named != pid {
		t.Errorf("stderr names process %d, the finisher is %d", named, pid)
	}
	if read := bench.FinisherPID(errOut.Bytes()); read != pid {
		t.Errorf("mnemo bench reads process %d from the import's stderr, the finisher is %d", read, pid)
	}
	if !strings.Contains(out.String(), `"stored":2500`) {
		t.Errorf("import answered %q", out.String())
	}
	finisher.checkSettled(t, c.db)
	var info struct {
		Index struct {
			State string `json:"state"`
		} `json:"index"`
	}
	if err := json.Unmarshal([]byte(c.ok("", "info", "--json")), &info); err != nil || info.Index.State != "ready" {
		t.Errorf("info after the finisher: %v, index %+v", err, info.Index)
	}
	for _, mode := range []string{"keyword", "vector", "hybrid"} {
		if got := c.ok("", "fetch", "--mode", mode, "--limit", "3", "worker restarts after failures"); strings.Count(got, `"id":`) != 3 {
			t.Errorf("%s fetch after the finisher: %s", mode, got)
		}
	}
	var check struct {
		OK bool `json:"consistent"`
	}
	if err := json.Unmarshal([]byte(c.ok("", "check", "--json")), &check); err != nil || !check.OK {
		t.Fatalf("check after the finisher: %v %+v", err, check)
	}
}

// A command run right after a large import can take the store before the
// import's finisher does: the finisher waits, attached, until that process
// lets go, then takes the store over and finishes the work.
func TestImportFinisherTakesOverFromAHolderThatCameFirst(t *testing.T) {
	c := newTestCLI(t)
	file := importFile(t, 2500)
	var finisher testFinisher
	var first *local.Store
	var out, errOut bytes.Buffer
	a := newApp(strings.NewReader(""), &out, &errOut)
	a.compactMin, a.finishMin = 100, 100
	a.startFinisher = func(args, env []string) (int, error) {
		// The first command after the import holds the store.
		var err error
		if first, err = local.Open(context.Background(), c.db, local.Options{}); err != nil {
			t.Fatal(err)
		}
		if first.Role() != local.Holding {
			t.Fatalf("the command after the import is %v, want holding", first.Role())
		}
		return finisher.start(args, env)
	}
	if code := a.execute([]string{"--db", c.db, "--debug", "import", file}); code != 0 || finisher.cmd == nil {
		t.Fatalf("import: exit %d, stderr %q", code, errOut.String())
	}
	log := filepath.Join(os.Getenv("XDG_STATE_HOME"), "mnemo", "mnemo.log")
	waiting := fmt.Sprintf("pid=%d ", finisher.cmd.Process.Pid)
	deadline := time.Now().Add(time.Minute)
	for {
		b, _ := os.ReadFile(log)
		if bytes.Contains(b, []byte(waiting)) && bytes.Contains(b, []byte("another process holds the store; taking it over when it lets go")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the finisher never said it waits for the holder; log:\n%s", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	finisher.wait(t)
	finisher.checkSettled(t, c.db)
}

// With --wait, or when the finisher cannot start, the import finishes its
// background work itself before it exits, as a smaller import does.
func TestLargeImportFinishesHereWhenAskedOrAlone(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		start func(args, env []string) (int, error)
	}{
		{"--wait", []string{"--wait"}, nil},
		{"the finisher does not start", nil, func(_, _ []string) (int, error) { return 0, exec.ErrNotFound }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCLI(t)
			file := importFile(t, 400)
			var out, errOut bytes.Buffer
			a := newApp(strings.NewReader(""), &out, &errOut)
			a.compactMin, a.finishMin = 100, 100
			started := false
			a.startFinisher = func(args, env []string) (int, error) {
				started = true
				if tc.start == nil {
					t.Errorf("a finisher was started with --wait: %v", args)
					return 0, exec.ErrNotFound
				}
				return tc.start(args, env)
			}
			if code := a.execute(append([]string{"--db", c.db, "import", file}, tc.args...)); code != 0 {
				t.Fatalf("import: exit %d, stderr %q", code, errOut.String())
			}
			if tc.start != nil && !started {
				t.Error("no finisher was tried")
			}
			if finisherSaid.MatchString(errOut.String()) || !compactionSaid.MatchString(errOut.String()) {
				t.Errorf("stderr %q, want the import's own rewrite", errOut.String())
			}
			if n := bucketKeys(t, c.db, "outbox"); n != 0 {
				t.Errorf("the import left %d outbox entries", n)
			}
			if n := bucketKeys(t, c.db, "vector_blocks"); n <= 0 {
				t.Errorf("the import left %d vector blocks", n)
			}
		})
	}
}

// The finisher writes its own profiles: an import profiled with
// MNEMO_CPUPROFILE had two processes write one file.
func TestFinisherEnvRenamesProfileFiles(t *testing.T) {
	got := finisherEnv([]string{"HOME=/h", "MNEMO_CPUPROFILE=/tmp/imp.prof", "MNEMO_MEMPROFILE=mem.prof", "MNEMO_CPUPROFILE_X=a", "MNEMO_DB=/s", "MNEMO_CPUPROFILE="})
	want := []string{"HOME=/h", "MNEMO_CPUPROFILE=/tmp/imp.prof.finish-import", "MNEMO_MEMPROFILE=mem.prof.finish-import", "MNEMO_CPUPROFILE_X=a", "MNEMO_DB=/s", "MNEMO_CPUPROFILE="}
	if !slices.Equal(got, want) {
		t.Fatalf("finisherEnv:\n got %q\nwant %q", got, want)
	}
}
