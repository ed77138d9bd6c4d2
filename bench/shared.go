package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"mnemo/contract"
	"mnemo/server/local"
)

// The shared local store's rows (docs/spec/design.md §5 and §8): what a
// process pays to reach the store through the process holding it, against
// opening it directly.

// sharedStores is how many stores each of the two writers makes per run.
const sharedStores = 200

// sharedRounds is how many times the socket row takes each of its sides,
// alternated: with two, one minute's drift of the disk's syncs still
// decided the row.
const sharedRounds = 4

// clusteringUnderWay returns once s's clustering, when s holds the store and
// keeps its clusters, is reading records (warming its words or in its first
// pass) or done, waiting at most clusteringWait. The `mnemo serve` the
// socket side of the row reaches has been up for seconds by then, and at 1M
// its clustering takes about half a core for minutes; the side holding the
// store itself used to time its stores within its first second, before its
// own clustering began, so the row compared a busy holder with an idle one.
func clusteringUnderWay(ctx context.Context, s *local.Store) error {
	deadline := time.Now().Add(clusteringWait)
	for {
		st, ok := s.Clustering()
		if !ok || !st.Kept || st.Ready || st.Warmed > 0 || st.Done > 0 || st.Err != "" || time.Now().After(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// clusteringWait bounds clusteringUnderWay's wait.
const clusteringWait = 30 * time.Second

// startHolder starts `mnemo serve` on the closed store in dir, so that every
// process started after it reaches the store through its socket; it returns
// once the socket answers.
func startHolder(exe, dir string) (*exec.Cmd, error) {
	cmd := exec.Command(exe, "--db", dir, "serve", "--http", "127.0.0.1:0")
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, ok := local.Held(dir); ok {
			return cmd, nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	return nil, fmt.Errorf("mnemo serve did not come up on %s", dir)
}

// stopHolder stops the holder and waits for it to let go of the store.
func stopHolder(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(os.Interrupt)
	_ = cmd.Wait()
}

// sharedWarmup is how many stores each writer makes before the timed ones
// (the first stores of a process wait for its table and index to open).
const sharedWarmup = 20

// StoreLatencies times sharedStores stores by each of two writers storing at
// once through s, after a warm-up, and forgets them afterwards. `mnemo bench
// --store-latency` runs it in a new process (MeasureShared), so the holding
// process and the one reaching it through the socket start alike. When s
// holds the store, the stores wait for its clustering to be under way
// (clusteringUnderWay).
func StoreLatencies(ctx context.Context, s *local.Store, label string) ([]time.Duration, error) {
	if err := clusteringUnderWay(ctx, s); err != nil {
		return nil, err
	}
	var mu sync.Mutex
	var all []time.Duration
	var firstErr error
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range sharedWarmup + sharedStores {
				var it contract.StoreItem
				js := fmt.Sprintf(`{"type":"learning","kind":"fact","confidence":0.5,"text":"shared-store bench %s writer %d note %d at %d","meta":{"namespace":"team:bench","tags":["shared-store-bench"]}}`,
					label, w, i, time.Now().UnixNano())
				if err := it.UnmarshalJSON([]byte(js)); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
				start := time.Now()
				_, err := contract.Store(ctx, s, it)
				d := time.Since(start)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if i >= sharedWarmup {
					all = append(all, d)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if _, err := s.Forget(ctx, contract.ForgetTarget{Filter: &contract.MetaFilter{TagsAny: []string{"shared-store-bench"}}}); err != nil {
		return nil, err
	}
	slices.Sort(all)
	return all, nil
}

// MeasureShared times, on the closed bench store in dir, a new process's
// health and first page while another process holds the store, and a store
// through the holder against one in the holding process, two writers at once.
func MeasureShared(exe, dir string, opts Options) ([]ProcessRow, error) {
	opts = opts.withDefaults()
	scale := scaleOf(opts.Records)
	// exe must be mnemo: a binary that cannot open the store (a test binary
	// standing in for it) is not run with the commands below.
	if _, _, err := runChild(exe, "--db", dir, "health"); err != nil {
		return nil, err
	}
	var help []time.Duration
	for range processAttempts {
		d, _, err := runChild(exe, "--help")
		if err != nil {
			return nil, err
		}
		help = append(help, d)
	}
	slices.Sort(help)
	base := percentile(help, 50)

	// A new process holding the store (keeping its clusters, as the holder
	// the socket side reaches does) is the baseline of the socket row.
	// The two are measured sharedRounds times each, alternated (direct,
	// through the socket, direct, ...): each store waits for its commit's
	// fsync, whose time drifts with the disk from one minute to the next by
	// about the row's margin (+0.82 to +1.44 ms over four 1M runs measured
	// one after the other; round by round from -0.61 to +1.45 ms in six
	// rounds on one 1M store).
	direct, err := childLatencies(exe, dir, "direct")
	if err != nil {
		return nil, err
	}

	holder, err := startHolder(exe, dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if holder != nil {
			stopHolder(holder)
		}
	}()
	var rows []ProcessRow
	times := func(args ...string) ([]time.Duration, error) {
		var ds []time.Duration
		for range processAttempts {
			d, _, err := runChild(exe, args...)
			if err != nil {
				return nil, err
			}
			ds = append(ds, d)
		}
		slices.Sort(ds)
		return ds, nil
	}
	health, err := times("--db", dir, "health")
	if err != nil {
		return nil, err
	}
	for i := range health {
		health[i] = max(0, health[i]-base)
	}
	r := ProcessRow{Name: "cold open through the holder: `mnemo health` while another process holds the store, minus `mnemo --help`",
		Samples: len(health), P50: percentile(health, 50), P95: percentile(health, 95), Budget: budgetColdOpen.at(scale)}
	r.Pass = r.Budget.admits(r.P50, r.P95)
	r.Note = "held by `mnemo serve`"
	rows = append(rows, r)

	page, err := times("--db", dir, "browse", "--query", `{"limit": 50}`)
	if err != nil {
		return nil, err
	}
	r = ProcessRow{Name: "cold first page through the holder: `mnemo browse` of 50", Samples: len(page),
		P50: percentile(page, 50), P95: percentile(page, 95), Budget: budgetColdPage.at(scale)}
	r.Pass = r.Budget.admits(r.P50, r.P95)
	r.Note = "whole process, start included"
	rows = append(rows, r)

	// The rounds after the first: the holder stopped, a direct run, the
	// holder started again, a socket run.
	through, err := childLatencies(exe, dir, "socket")
	if err != nil {
		return nil, err
	}
	gaps := []time.Duration{percentile(through, 50) - percentile(direct, 50)}
	for range sharedRounds - 1 {
		stopHolder(holder)
		holder = nil
		d, err := childLatencies(exe, dir, "direct")
		if err != nil {
			return nil, err
		}
		if holder, err = startHolder(exe, dir); err != nil {
			return nil, err
		}
		s, err := childLatencies(exe, dir, "socket")
		if err != nil {
			return nil, err
		}
		gaps = append(gaps, percentile(s, 50)-percentile(d, 50))
		direct, through = append(direct, d...), append(through, s...)
	}
	slices.Sort(direct)
	slices.Sort(through)
	dp50 := percentile(direct, 50)
	r = ProcessRow{Name: "store through the holder's socket, two writers at once", Samples: len(through),
		P50: percentile(through, 50), P95: percentile(through, 95), Budget: Budget{P50: dp50 + time.Millisecond}}
	r.Pass = r.Budget.admits(r.P50, r.P95)
	each := make([]string, len(gaps))
	for i, g := range gaps {
		each[i] = msSigned(g)
	}
	r.Note = fmt.Sprintf("a new process holding the store: p50 %s, p95 %s; through the socket %s ms at p50 (each store waits for its bbolt commit and its index batch; round by round %s ms)",
		ms(dp50), ms(percentile(direct, 95)), msSigned(r.P50-dp50), strings.Join(each, ", "))
	rows = append(rows, r)
	return rows, nil
}

// childLatencies runs `mnemo bench --store-latency` on dir in a new process
// and reads the latencies it prints (nanoseconds, one per line).
func childLatencies(exe, dir, label string) ([]time.Duration, error) {
	cmd := exec.Command(exe, "bench", "--dir", dir, "--store-latency", label)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("mnemo bench --store-latency: %w: %s", err, stderr.String())
	}
	var ds []time.Duration
	for _, f := range strings.Fields(string(out)) {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("mnemo bench --store-latency printed %q", f)
		}
		ds = append(ds, time.Duration(n))
	}
	slices.Sort(ds)
	return ds, nil
}

// MeasureAfterImport imports the bench corpus file into a new store with
// `mnemo import` and times the first new process's browse of 50 and, once
// the import's finisher has settled the store, a vector fetch, against the
// cold first page budget.
func MeasureAfterImport(exe, corpusPath string, opts Options) ([]ProcessRow, error) {
	opts = opts.withDefaults()
	scale := scaleOf(opts.Records)
	dir, err := os.MkdirTemp(filepath.Dir(corpusPath), "after-import-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	store := filepath.Join(dir, "store")
	started := time.Now()
	d, rss, _, said, err := runChildOutput(exe, "--db", store, "import", corpusPath)
	if err != nil {
		return nil, err
	}
	rate := float64(opts.Records) / d.Seconds()
	first, _, err := runChild(exe, "--db", store, "browse", "--query", `{"limit": 50}`)
	if err != nil {
		return nil, err
	}
	// A large import hands its background work to a process of its own,
	// which it names on stderr: the store has settled when it has exited.
	finished := "its background work finished before it exited"
	if pid := FinisherPID(said); pid > 0 {
		hwm := waitGone(pid)
		finished = fmt.Sprintf("its finisher settled the store %s after the import began, peak RSS %d MB",
			time.Since(started).Round(time.Millisecond), hwm>>20)
	}
	// The store as the import and its finisher left it: the records
	// rewritten with full pages when the import filled it from empty.
	size, err := MeasureSize(store, opts.Records)
	if err != nil {
		return nil, err
	}
	size.Name = "size on disk once `mnemo import` has settled (no compact)"
	var rows []ProcessRow
	r := ProcessRow{Name: "the first new process's `mnemo browse` of 50 right after `mnemo import`", Samples: 1,
		P50: first, P95: first, Budget: budgetColdPage.at(scale)}
	r.Pass = r.Budget.admits(r.P50, r.P95)
	r.Note = fmt.Sprintf("the import returned after %s (%.0f records/s, peak RSS %d MB); %s",
		d.Round(time.Millisecond), rate, rss>>20, finished)
	rows = append(rows, r)
	fetch, _, err := runChild(exe, "--db", store, "fetch", "--mode", "vector", "postgres connection limit")
	if err != nil {
		return nil, err
	}
	r = ProcessRow{Name: "the first new process's vector `mnemo fetch` after `mnemo import` has settled", Samples: 1,
		P50: fetch, P95: fetch, Budget: Budget{}}
	r.Pass = true
	r.Note = "whole process: the embedder was learned by the import's process or its finisher"
	rows = append(rows, r, size)
	return rows, nil
}

// FinisherPID is the pid of the process `mnemo import` handed its
// background work to, from what it said on stderr; 0 when it named none.
func FinisherPID(stderr []byte) int {
	m := finisherNamed.FindSubmatch(stderr)
	if m == nil {
		return 0
	}
	pid, _ := strconv.Atoi(string(m[1]))
	return pid
}

var finisherNamed = regexp.MustCompile(`mnemo import: the records are stored; process (\d+) `)
