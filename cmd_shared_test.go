package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/server/local"
)

// The shared local store (issue 24), driven as users drive it: real mnemo
// processes (this test binary standing in for mnemo, see TestMain) on one
// store directory at once.

// sharedLoad is a set of mnemo processes using one store: a TUI in a pty,
// two `mnemo mcp` servers storing through JSON-RPC, a loop of `mnemo store`
// commands and `mnemo watch`.
type sharedLoad struct {
	t   *testing.T
	c   *testCLI
	exe string
	env []string

	mu sync.Mutex
	// acked are the ids whose store was acknowledged, by whom.
	acked map[string]string
	// exits counts the exit codes of the CLI loop's commands.
	exits map[int]int
	// failures are the errors the long-lived writers saw.
	failures []string
	// slowest is the longest acknowledged store a long-lived writer waited
	// for, and when it ended.
	slowest time.Duration
	// watched are the store changes watch printed, and the last seq.
	watched map[string]int
	lastSeq uint64
	// diag holds what the processes wrote to stderr (a stalled call's
	// goroutine dumps among it); cliErrors what failed commands said.
	diag      string
	cliErrors []string
	diagN     int

	tui   *exec.Cmd
	ptyF  *os.File
	watch *exec.Cmd
	mcps  [2]*mcpWriter
	stop  chan struct{}
	wg    sync.WaitGroup
}

type mcpWriter struct {
	cmd *exec.Cmd
	cs  *sdk.ClientSession
}

func newSharedLoad(t *testing.T) *sharedLoad {
	if testing.Short() {
		t.Skip("runs mnemo processes for seconds")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := newTestCLI(t)
	c.ok(styleLearning, "store")
	env := append(os.Environ(), "MNEMO_TEST_AS_CLI=1", "MNEMO_DB="+c.db, "HOME="+c.home, "TERM=xterm-256color")
	diag := filepath.Join(c.home, "diag")
	if err := os.Mkdir(diag, 0o700); err != nil {
		t.Fatal(err)
	}
	l := &sharedLoad{t: t, c: c, exe: exe, env: env, acked: map[string]string{}, exits: map[int]int{},
		watched: map[string]int{}, stop: make(chan struct{}), diag: diag}
	t.Cleanup(func() {
		if t.Failed() {
			l.printDiag()
		}
	})
	return l
}

// command runs mnemo with --debug: every process logs to the one log file,
// which a failure prints.
func (l *sharedLoad) command(args ...string) *exec.Cmd {
	cmd := exec.Command(l.exe, append([]string{"--debug"}, args...)...)
	cmd.Env = l.env
	return cmd
}

// diagFile is a new file for a process's stderr (or its terminal).
func (l *sharedLoad) diagFile(name string) *os.File {
	l.mu.Lock()
	l.diagN++
	n := l.diagN
	l.mu.Unlock()
	f, err := os.Create(filepath.Join(l.diag, fmt.Sprintf("%03d-%s", n, name)))
	if err != nil {
		l.t.Fatal(err)
	}
	return f
}

// stalled dumps the goroutines of the process serving a call that has not
// returned for long (SIGQUIT: its stderr gets them, and it exits), and of
// the caller, so that a failure says where they waited.
func (l *sharedLoad) stalled(caller int, what string) {
	holder := l.holderPID()
	l.fail("%s has waited %v for its answer (the holder is pid %d); goroutine dumps follow", what, stallAfter, holder)
	if holder > 0 && holder != caller {
		_ = syscall.Kill(holder, syscall.SIGQUIT)
	}
	_ = syscall.Kill(caller, syscall.SIGQUIT)
}

// stallAfter is how long a call may wait before the load dumps the
// goroutines of its process and of the holder.
const stallAfter = 20 * time.Second

// printDiag prints, after a failure, the log's last lines and what the
// processes wrote to stderr.
func (l *sharedLoad) printDiag() {
	t := l.t
	if b, err := os.ReadFile(filepath.Join(l.c.home, "state_home", "mnemo", "mnemo.log")); err == nil {
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		t.Logf("the last lines of the log:\n%s", strings.Join(lines[max(0, len(lines)-150):], "\n"))
	}
	entries, _ := os.ReadDir(l.diag)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(l.diag, e.Name()))
		if strings.Contains(e.Name(), "tui") {
			// A dump follows what the TUI drew: keep the goroutines only.
			i := strings.Index(string(b), "SIGQUIT")
			if i < 0 {
				continue
			}
			b = b[i:]
		}
		if len(bytes.TrimSpace(b)) > 0 {
			t.Logf("%s wrote:\n%s", e.Name(), b[:min(len(b), 200<<10)])
		}
	}
	for _, e := range l.cliErrors {
		t.Logf("a mnemo store failed: %s", e)
	}
}

func (l *sharedLoad) ack(id, by string, took time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.acked[id] = by
	if took > l.slowest {
		l.slowest = took
	}
}

func (l *sharedLoad) fail(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failures = append(l.failures, fmt.Sprintf(format, args...))
}

// startTUI runs the TUI in an 80x24 pty and drains what it draws.
func (l *sharedLoad) startTUI() {
	cmd := l.command()
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 80})
	if err != nil {
		l.t.Fatalf("start the TUI: %v", err)
	}
	l.tui, l.ptyF = cmd, f
	screen := l.diagFile("tui")
	go func() {
		_, _ = io.Copy(screen, f)
		_ = screen.Close()
	}()
}

// startWatch runs `mnemo watch --since N` and records what it prints.
func (l *sharedLoad) startWatch() {
	l.mu.Lock()
	since := l.lastSeq
	l.mu.Unlock()
	cmd := l.command("watch", "--since", strconv.FormatUint(since, 10))
	out, err := cmd.StdoutPipe()
	if err != nil {
		l.t.Fatal(err)
	}
	cmd.Stderr = l.diagFile("watch")
	if err := cmd.Start(); err != nil {
		l.t.Fatalf("start watch: %v", err)
	}
	l.watch = cmd
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var ch struct {
				Seq uint64 `json:"seq"`
				Op  string `json:"op"`
				ID  string `json:"id"`
			}
			if err := json.Unmarshal(sc.Bytes(), &ch); err != nil {
				l.fail("watch printed %q: %v", sc.Text(), err)
				continue
			}
			l.mu.Lock()
			if ch.Op == "store" {
				l.watched[ch.ID]++
			}
			l.lastSeq = max(l.lastSeq, ch.Seq)
			l.mu.Unlock()
		}
	}()
}

// startMCP starts `mnemo mcp` as an agent host does and stores through it
// until the load stops.
func (l *sharedLoad) startMCP(i int) {
	cmd := l.command("mcp", "--place", fmt.Sprintf("team:acme/agent:w%d", i))
	cmd.Stderr = l.diagFile(fmt.Sprintf("mcp%d", i))
	client := sdk.NewClient(&sdk.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		l.t.Fatalf("connect mcp %d: %v", i, err)
	}
	w := &mcpWriter{cmd: cmd, cs: cs}
	l.mu.Lock()
	l.mcps[i] = w
	l.mu.Unlock()
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for n := 0; ; n++ {
			select {
			case <-l.stop:
				return
			default:
			}
			start := time.Now()
			watchdog := time.AfterFunc(stallAfter, func() { l.stalled(cmd.Process.Pid, fmt.Sprintf("mcp %d's memory_store", i)) })
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "memory_store",
				Arguments: json.RawMessage(fmt.Sprintf(`{"learning":{"text":"mcp %d pid %d note %d","learning_kind":"fact"}}`, i, cmd.Process.Pid, n))})
			watchdog.Stop()
			if err != nil {
				// The process was killed (the kill loop restarts it).
				return
			}
			text := res.Content[0].(*sdk.TextContent).Text
			if res.IsError {
				l.fail("mcp %d: %s", i, text)
				continue
			}
			var receipt struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal([]byte(text), &receipt); err != nil || receipt.ID == "" {
				l.fail("mcp %d answered %q", i, text)
				continue
			}
			l.ack(receipt.ID, fmt.Sprintf("mcp %d", i), time.Since(start))
			time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond)
		}
	}()
}

// cliLoop runs `mnemo store` commands one after another.
func (l *sharedLoad) cliLoop() {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for n := 0; ; n++ {
			select {
			case <-l.stop:
				return
			default:
			}
			cmd := l.command("store")
			cmd.Stdin = strings.NewReader(fmt.Sprintf(`{"type":"learning","text":"cli note %d at %d","kind":"fact","confidence":0.8,"meta":{"namespace":"team:acme/agent:cli"}}`, n, time.Now().UnixNano()))
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			code := 0
			if err != nil {
				code = -1
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				}
			}
			l.mu.Lock()
			l.exits[code]++
			if code > 0 {
				l.cliErrors = append(l.cliErrors, fmt.Sprintf("exit %d: %s", code, stderr.String()))
			}
			l.mu.Unlock()
			if code == exitLocked {
				l.fail("mnemo store exited locked: %s", stderr.String())
			}
			if code != 0 {
				continue
			}
			var receipt contract.StoreReceipt
			if err := json.Unmarshal(out, &receipt); err != nil {
				l.fail("mnemo store printed %q", out)
				continue
			}
			l.ack(receipt.ID, "cli", 0)
		}
	}()
}

// holderPID is the process that holds the store now.
func (l *sharedLoad) holderPID() int { return bolt.PIDOf(l.c.db) }

// finish stops the writers, waits for watch to print every acknowledged
// store, ends the long-lived processes and checks the store.
func (l *sharedLoad) finish(killed bool) {
	t := l.t
	close(l.stop)
	l.wg.Wait()
	deadline := time.Now().Add(20 * time.Second)
	for {
		l.mu.Lock()
		missing := 0
		for id := range l.acked {
			if l.watched[id] == 0 {
				missing++
			}
		}
		l.mu.Unlock()
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("watch never printed %d acknowledged stores", missing)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, w := range l.mcps {
		if w != nil {
			_ = w.cs.Close()
		}
	}
	_ = l.watch.Process.Signal(syscall.SIGTERM)
	_ = l.watch.Wait()
	_, _ = l.ptyF.Write([]byte("q"))
	done := make(chan error, 1)
	go func() { done <- l.tui.Wait() }()
	select {
	case err := <-done:
		if err != nil && !killed {
			t.Errorf("the TUI exited with %v", err)
		}
	case <-time.After(10 * time.Second):
		_ = l.tui.Process.Kill()
		t.Errorf("the TUI did not quit")
	}
	_ = l.ptyF.Close()

	for _, f := range l.failures {
		t.Error(f)
	}
	// Every acknowledged store is in the store, once.
	exported := l.c.ok("", "export")
	seen := map[string]int{}
	records := 0
	for _, line := range strings.Split(strings.TrimSpace(exported), "\n") {
		var rec struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("export printed %q: %v", line, err)
		}
		seen[rec.ID]++
		records++
	}
	for id, by := range l.acked {
		if seen[id] != 1 {
			t.Errorf("%s's acknowledged store %s is in the store %d times", by, id, seen[id])
		}
	}
	for id, n := range seen {
		if n > 1 {
			t.Errorf("%s is listed %d times", id, n)
		}
	}
	if !killed && records != len(l.acked)+1 {
		t.Errorf("the store holds %d records, want the %d acknowledged and the seed", records, len(l.acked))
	}
	for id, n := range l.watched {
		if n > 1 && !killed {
			t.Errorf("watch printed the store of %s %d times", id, n)
		}
	}
	if l.exits[exitLocked] > 0 {
		t.Errorf("%d commands exited locked", l.exits[exitLocked])
	}
	t.Logf("%d stores acknowledged (%d by the CLI loop, exit codes %v); slowest acknowledged MCP store %v",
		len(l.acked), l.exits[0], l.exits, l.slowest)
}

// loadSeconds is how long the load runs (MNEMO_TEST_SHARED_SECONDS, default 20).
func loadSeconds() time.Duration {
	if s, err := strconv.Atoi(os.Getenv("MNEMO_TEST_SHARED_SECONDS")); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return 20 * time.Second
}

// TestSharedStoreUnderLoad: the TUI first, then two agents' mnemo mcp, a CLI
// loop and watch, for 20 s on one store. Every acknowledged store is there
// once, watch printed each, and nothing exited locked.
func TestSharedStoreUnderLoad(t *testing.T) {
	l := newSharedLoad(t)
	l.startTUI()
	time.Sleep(500 * time.Millisecond)
	l.startWatch()
	l.startMCP(0)
	l.startMCP(1)
	l.cliLoop()
	time.Sleep(loadSeconds())
	l.finish(false)
}

// TestSharedStoreHolderKilled: the same load, with the process holding the
// store killed with SIGKILL at random points. No acknowledged store is lost,
// and the processes that live on go on: their next call is answered.
func TestSharedStoreHolderKilled(t *testing.T) {
	l := newSharedLoad(t)
	l.startMCP(0)
	time.Sleep(300 * time.Millisecond)
	l.startTUI()
	l.startWatch()
	l.startMCP(1)
	l.cliLoop()
	end := time.Now().Add(loadSeconds())
	kills := 0
	for time.Now().Before(end) {
		time.Sleep(time.Duration(1000+rand.IntN(2000)) * time.Millisecond)
		pid := l.holderPID()
		if pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			continue
		}
		kills++
		switch {
		case l.tui.Process.Pid == pid:
			_ = l.tui.Wait()
			_ = l.ptyF.Close()
			l.startTUI()
		case l.watch.Process.Pid == pid:
			_ = l.watch.Wait()
			l.startWatch()
		default:
			for i, w := range l.mcps {
				if w != nil && w.cmd.Process.Pid == pid {
					_ = w.cs.Close()
					l.startMCP(i)
				}
			}
		}
	}
	if kills < 3 {
		t.Errorf("only %d holders were killed", kills)
	}
	l.finish(true)
	t.Logf("%d holders killed", kills)
	if l.slowest > 5*time.Second {
		t.Errorf("a store waited %v for a new holder", l.slowest)
	}
}

// TestFirstProcessAfterImport: the first process after `mnemo import` gets
// the answers a long-lived process gets on the same store: the import's
// process finished the index and learned the embedder before it exited.
func TestFirstProcessAfterImport(t *testing.T) {
	c := newTestCLI(t)
	corpus := filepath.Join(c.home, "demo.jsonl")
	if err := os.WriteFile(corpus, demoCorpus, 0o600); err != nil {
		t.Fatal(err)
	}
	c.ok("", "import", corpus)
	const question = "how do customers cancel their subscription"
	first := map[string]string{}
	for _, mode := range []string{"vector", "hybrid", "keyword"} {
		first[mode] = c.ok("", "fetch", "--mode", mode, "--limit", "10", question)
	}
	firstPage := c.ok("", "browse", "--query", `{"limit":50}`)

	long, err := local.Open(context.Background(), c.db, local.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer long.Close()
	if err := long.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"vector", "hybrid", "keyword"} {
		if got := c.ok("", "fetch", "--mode", mode, "--limit", "10", question); got != first[mode] {
			t.Errorf("%s fetch: the first process after the import answered\n%s\na long-lived process answers\n%s", mode, first[mode], got)
		}
	}
	if got := c.ok("", "browse", "--query", `{"limit":50}`); got != firstPage {
		t.Errorf("browse differs between the first process and a long-lived one")
	}
}

// TestSharedStoreHolderStopped: the process holding the store is stopped
// (Ctrl-Z on a `mnemo watch` in a terminal). An agent's mnemo mcp, attached
// before, gets an answer that says so instead of waiting for as long as the
// holder is stopped; a command started meanwhile says so too; once the
// holder resumes, the agent's next store works.
func TestSharedStoreHolderStopped(t *testing.T) {
	l := newSharedLoad(t)
	l.startWatch()
	watchPID := l.watch.Process.Pid
	deadline := time.Now().Add(10 * time.Second)
	for l.holderPID() != watchPID {
		if time.Now().After(deadline) {
			t.Fatalf("watch (pid %d) never held the store (pid file: %d)", watchPID, l.holderPID())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd := l.command("mcp", "--place", "team:acme/agent:stopped")
	cmd.Stderr = l.diagFile("mcp")
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "host", Version: "1"}, nil).Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	store := func(text string) (string, bool) {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "memory_store",
			Arguments: json.RawMessage(fmt.Sprintf(`{"learning":{"text":%q,"learning_kind":"fact"}}`, text))})
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(*sdk.TextContent).Text, res.IsError
	}
	if text, isErr := store("stored while the holder runs"); isErr {
		t.Fatalf("a store before the holder stopped: %s", text)
	}

	if err := syscall.Kill(watchPID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	defer func() {
		if !resumed {
			_ = syscall.Kill(watchPID, syscall.SIGCONT)
		}
		_ = l.watch.Process.Signal(syscall.SIGTERM)
		_ = l.watch.Wait()
	}()
	start := time.Now()
	text, isErr := store("stored while the holder is stopped")
	if !isErr || !strings.Contains(text, fmt.Sprintf("(pid %d) has not answered for", watchPID)) ||
		!strings.Contains(text, "stopped (Ctrl-Z in its terminal: `fg` resumes it) or stuck") {
		t.Fatalf("a store while the holder is stopped answered (error %v) %s", isErr, text)
	}
	t.Logf("the agent's store was given up after %v: %s", time.Since(start).Round(time.Millisecond), text)
	r := l.c.run(`{"type":"learning","text":"a new command while the holder is stopped","kind":"fact","confidence":0.8}`, "store")
	if r.code != exitFailure || !strings.Contains(r.stderr, fmt.Sprintf("(pid %d) does not answer on its socket: it is stopped (Ctrl-Z", watchPID)) {
		t.Errorf("mnemo store while the holder is stopped: exit %d, %s", r.code, r.stderr)
	}

	if err := syscall.Kill(watchPID, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	resumed = true
	if text, isErr := store("stored once the holder resumed"); isErr {
		t.Fatalf("a store once the holder resumed: %s", text)
	}
}
