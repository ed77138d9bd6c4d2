package remote_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Watchers in a process of their own (the load test's "apart" runs): the
// same 20 engine/remote watchers as the watched runs, each its own client
// and principal decoding every record, but run by this test binary started
// again as a child, as agents' and `mnemo watch` processes follow a served
// store. The watched runs put them in this process, beside the server, the
// agents and the browsers; the apart runs tell what that choice adds to the
// writers' loss (on this project's 2-core VM, little: see
// docs/performance.md, Live memory).
//
// The child speaks lines on its stdout: "ready" once every watcher has read
// the head; "since N0 N1 ..." as the watchers move on (at most every 50
// ms); after its stdin ends (the parent is done), "seen I SEQ ID AT SEEN"
// for every change each watcher had (times in Unix nanoseconds, wall clock:
// parent and child share the machine's clock) and "end".

const (
	apartURLEnv   = "MNEMO_LOADTEST_APART_URL"
	apartCountEnv = "MNEMO_LOADTEST_APART_WATCHERS"
	// apartProfileEnv names a file for the watchers' process's CPU profile.
	apartProfileEnv = "MNEMO_LOADTEST_APART_PROFILE"
)

// TestLoadWatcherProcess is the child's body; it runs only when the load
// test starts it.
func TestLoadWatcherProcess(t *testing.T) {
	url := os.Getenv(apartURLEnv)
	if url == "" {
		t.Skip("the watchers' process runs only when the load test starts it")
	}
	n, err := strconv.Atoi(os.Getenv(apartCountEnv))
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q is not a number of watchers", apartCountEnv, os.Getenv(apartCountEnv))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := bufio.NewWriter(os.Stdout)
	var outMu sync.Mutex
	say := func(format string, args ...any) {
		outMu.Lock()
		fmt.Fprintf(out, format+"\n", args...)
		out.Flush()
		outMu.Unlock()
	}
	var failures failureLog
	watchers := make([]*watchFollower, n)
	var ready, wg sync.WaitGroup
	for i := range n {
		w := &watchFollower{}
		watchers[i] = w
		c := loadClient(t, url, watcherToken(i))
		ready.Add(1)
		wg.Go(func() { w.follow(ctx, c, i, ready.Done, &failures) })
	}
	ready.Wait()
	say("ready")
	// Progress, so the parent knows when every watcher has caught up.
	stop := make(chan struct{})
	progressDone := make(chan struct{})
	go func() {
		defer close(progressDone)
		var told, line []byte
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			line = append(line[:0], "since"...)
			for _, w := range watchers {
				line = append(line, ' ')
				line = strconv.AppendUint(line, w.since.Load(), 10)
			}
			if !bytes.Equal(line, told) {
				told = append(told[:0], line...)
				say("%s", line)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	_, _ = io.Copy(io.Discard, os.Stdin)
	close(stop)
	<-progressDone
	cancel()
	wg.Wait()
	outMu.Lock()
	defer outMu.Unlock()
	for i, w := range watchers {
		seen, odd := w.seen()
		for _, s := range seen {
			fmt.Fprintf(out, "seen %d %d %s %d %d\n", i, s.seq, s.id, s.at.UnixNano(), s.seen.UnixNano())
		}
		for _, id := range odd {
			failures.add("watcher %d saw %q, which is not a record's id", i, id)
		}
	}
	for _, f := range failures.all() {
		fmt.Fprintf(out, "failure %s\n", strings.ReplaceAll(f, "\n", " "))
	}
	fmt.Fprintln(out, "end")
	out.Flush()
}

// apartWatchers is the parent's side of the watchers' process.
type apartWatchers struct {
	pid int
}

// startApartWatchers starts the watchers' process against url and waits
// until every watcher has read the head. fol.watchers gets one entry per
// watcher: its since follows the child's progress, and its seen is filled
// in when the child ends (after fol.cancel).
func startApartWatchers(t *testing.T, ctx context.Context, fol *followers, url string, n int, failures *failureLog) *apartWatchers {
	t.Helper()
	args := []string{"-test.run", "^TestLoadWatcherProcess$", "-test.count=1"}
	if p := os.Getenv(apartProfileEnv); p != "" {
		args = append(args, "-test.cpuprofile", p)
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), apartURLEnv+"="+url, apartCountEnv+"="+strconv.Itoa(n), "MNEMO_LOADTEST=")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for range n {
		fol.watchers = append(fol.watchers, &watchFollower{})
	}
	a := &apartWatchers{pid: cmd.Process.Pid}
	ready := make(chan struct{})
	fol.wg.Go(func() {
		defer func() { _ = cmd.Wait() }()
		// The parent is done (fol.cancel): the child's stdin ends.
		go func() {
			<-ctx.Done()
			stdin.Close()
		}()
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		readySeen, ended := false, false
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			switch {
			case len(f) == 1 && f[0] == "ready":
				readySeen = true
				close(ready)
			case len(f) == n+1 && f[0] == "since":
				for i, v := range f[1:] {
					s, _ := strconv.ParseUint(v, 10, 64)
					fol.watchers[i].since.Store(s)
				}
			case len(f) == 6 && f[0] == "seen":
				i, _ := strconv.Atoi(f[1])
				seq, _ := strconv.ParseUint(f[2], 10, 64)
				at, _ := strconv.ParseInt(f[4], 10, 64)
				seen, _ := strconv.ParseInt(f[5], 10, 64)
				if i >= 0 && i < n {
					w := fol.watchers[i]
					w.mu.Lock()
					w.keep(f[3], seq, at, seen)
					w.mu.Unlock()
				}
			case len(f) > 0 && f[0] == "failure":
				failures.add("the watchers' process: %s", strings.TrimPrefix(sc.Text(), "failure "))
			case len(f) == 1 && f[0] == "end":
				ended = true
			default:
				// The test framework's own lines (PASS, ok).
			}
		}
		if !readySeen {
			failures.add("the watchers' process ended before its watchers had read the head")
			close(ready)
		} else if !ended {
			failures.add("the watchers' process ended without its results")
		}
	})
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatal("the watchers' process was not ready in 30 s")
	}
	return a
}
