package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"mnemo/contract"
)

// watchInProcess runs `mnemo watch args...` in-process with stdout a real
// pipe, returning the pipe's reading end and the exit code's channel.
func watchInProcess(t *testing.T, c *testCLI, args ...string) (*bufio.Reader, *os.File, <-chan int, *strings.Builder) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var errOut strings.Builder
	code := make(chan int, 1)
	go func() {
		a := newApp(strings.NewReader(""), w, &syncWriter{b: &errOut})
		code <- a.execute(append([]string{"--db", c.db}, args...))
		_ = w.Close()
	}()
	t.Cleanup(func() { _ = r.Close() })
	return bufio.NewReader(r), r, code, &errOut
}

// syncWriter guards a builder the watch writes from its own goroutine.
type syncWriter struct{ b *strings.Builder }

func (s *syncWriter) Write(p []byte) (int, error) { return s.b.Write(p) }

func readChange(t *testing.T, rd *bufio.Reader) contract.Change {
	t.Helper()
	line := make(chan string, 1)
	go func() {
		s, _ := rd.ReadString('\n')
		line <- s
	}()
	select {
	case s := <-line:
		var c contract.Change
		if err := json.Unmarshal([]byte(s), &c); err != nil {
			t.Fatalf("watch printed %q: %v", s, err)
		}
		if strings.Count(s, "\n") != 1 || !strings.HasSuffix(s, "}\n") {
			t.Fatalf("watch printed %q; want one JSON object per line", s)
		}
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("watch printed nothing within 10s")
	}
	return contract.Change{}
}

func waitExit(t *testing.T, code <-chan int, within time.Duration) int {
	t.Helper()
	select {
	case n := <-code:
		return n
	case <-time.After(within):
		t.Fatalf("watch did not end within %s", within)
	}
	return -1
}

// TestWatchFollowsAServer: `mnemo watch` against a running server prints a
// change another client stores, ends when its output is closed, and
// --since resumes after a reconnect with nothing missed.
func TestWatchFollowsAServer(t *testing.T) {
	c := newTestCLI(t)
	url := serveStore(t, filepath.Join(c.home, "served"))
	t.Setenv("MNEMO_TOKEN", testOwnerToken)

	rd, pipe, code, _ := watchInProcess(t, c, "--remote", url, "watch", "--from-now")
	time.Sleep(200 * time.Millisecond)
	var receipt contract.StoreReceipt
	c.okJSON(&receipt, styleLearning, "--remote", url, "store")
	first := readChange(t, rd)
	if first.Op != contract.OpStore || first.ID != receipt.ID || first.Record == nil || first.Namespace.String() != "team:acme/agent:writer" {
		t.Fatalf("watch printed %+v; want the store of %s with its record", first, receipt.ID)
	}
	c.ok("", "--remote", url, "forget", "--ids", receipt.ID, "--yes")
	gone := readChange(t, rd)
	if gone.Op != contract.OpForget || gone.ID != receipt.ID || gone.Record != nil || gone.Seq != first.Seq+1 {
		t.Fatalf("watch printed %+v; want the forget, without its record, at seq %d", gone, first.Seq+1)
	}
	// The reader goes away while the feed is quiet: the watch ends at once.
	_ = pipe.Close()
	if n := waitExit(t, code, 5*time.Second); n != 0 {
		t.Fatalf("watch exit %d after its output closed", n)
	}

	// Changes made while no watch runs are all there on --since.
	c.ok(jsonl(runbookDoc, supportChat), "--remote", url, "import", "-")
	rd, pipe, code, _ = watchInProcess(t, c, "--remote", url, "watch", "--since", fmt.Sprint(gone.Seq))
	a, b := readChange(t, rd), readChange(t, rd)
	if a.Seq != gone.Seq+1 || b.Seq != gone.Seq+2 || a.ID != fingerprintOf(t, runbookDoc) || b.ID != fingerprintOf(t, supportChat) {
		t.Fatalf("--since %d printed %+v then %+v", gone.Seq, a, b)
	}
	_ = pipe.Close()
	waitExit(t, code, 5*time.Second)

	// From the start of the feed, filtered: only the conversation.
	rd, pipe, code, _ = watchInProcess(t, c, "--remote", url, "watch", "--filter", `{"kinds":["conversation"]}`)
	if got := readChange(t, rd); got.ID != fingerprintOf(t, supportChat) {
		t.Fatalf("the filtered watch printed %+v first", got)
	}
	_ = pipe.Close()
	waitExit(t, code, 5*time.Second)
}

func TestWatchErrors(t *testing.T) {
	c := newTestCLI(t)
	c.ok(styleLearning, "store")
	r := c.run("", "watch", "--since", "99")
	if r.code != 7 || r.stderr != "mnemo: expired: since 99 is past this feed's head 1: the store was replaced or restored; reload the state and resume from its head\n" {
		t.Fatalf("a since past the head: exit %d, %q", r.code, r.stderr)
	}
	r = c.run("", "watch", "--since", "1", "--from-now")
	if r.code != 2 || !strings.Contains(r.stderr, "--since and --from-now exclude each other") {
		t.Fatalf("both: exit %d, %q", r.code, r.stderr)
	}
	r = c.run("", "watch", "--filter", `{"tag_any":["x"]}`)
	if r.code != 2 || !strings.Contains(r.stderr, "tag_any") {
		t.Fatalf("a misspelt filter: exit %d, %q", r.code, r.stderr)
	}
}

// TestWatchAsAProcess runs the binary (this test binary standing in for
// mnemo) against a server: `mnemo watch | head -3` ends after three lines,
// and SIGINT ends a watch cleanly.
func TestWatchAsAProcess(t *testing.T) {
	c := newTestCLI(t)
	url := serveStore(t, filepath.Join(c.home, "served"))
	t.Setenv("MNEMO_TOKEN", testOwnerToken)
	env := append(shellEnv(t, c), "MNEMO_TOKEN="+testOwnerToken, "MNEMO_REMOTE="+url)
	for i := range 5 {
		c.ok(fmt.Sprintf(`{"type":"document","body":{"text":"note %d"},"meta":{"source":{"kind":"agent"}}}`, i), "--remote", url, "store")
	}
	sh := exec.Command("sh", "-c", "mnemo watch | head -3")
	sh.Env = env
	start := time.Now()
	out, err := sh.Output()
	if err != nil {
		t.Fatalf("mnemo watch | head -3: %v", err)
	}
	if n := strings.Count(string(out), "\n"); n != 3 || time.Since(start) > 10*time.Second {
		t.Fatalf("mnemo watch | head -3 printed %d lines in %s", n, time.Since(start))
	}
	// head -1 on a feed that is quiet after its first line: the watch ends
	// when head does, not at the next change.
	sh = exec.Command("sh", "-c", "mnemo watch --since 4 | head -1; echo done")
	sh.Env = env
	start = time.Now()
	if out, err = sh.Output(); err != nil || !strings.HasSuffix(string(out), "done\n") || time.Since(start) > 10*time.Second {
		t.Fatalf("a quiet watch after head ended: %q %v after %s", out, err, time.Since(start))
	}

	exe, _ := os.Executable()
	cmd := exec.Command(exe, "watch", "--from-now")
	cmd.Env = env
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	_ = cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() {
		_, _ = io.ReadAll(stdout)
		done <- cmd.Wait()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("watch after SIGINT: %v", err)
		}
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("watch did not end within 5s of SIGINT")
	}
}
