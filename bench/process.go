package bench

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// ProcessRow is a measurement of new mnemo processes: the time a command
// takes beyond the binary's own start, or the peak resident memory.
type ProcessRow struct {
	Name     string
	Samples  int
	P50, P95 time.Duration
	Budget   Budget
	// PeakRSS is the largest resident set of the runs, in bytes, and
	// RSSBudget its limit (0: the row is timed, not measured in memory).
	PeakRSS, RSSBudget int64
	// PerRecord is the store's bytes on disk a record (a size row), and
	// PerRecordBudget its limit (0: reported, not held to one).
	PerRecord, PerRecordBudget float64
	size                       bool
	Pass                       bool
	Note                       string
}

func (r ProcessRow) p50() string {
	if r.RSSBudget > 0 || r.size {
		return ""
	}
	return msNum(r.P50)
}

func (r ProcessRow) p95() string {
	if r.RSSBudget > 0 || r.size {
		return ""
	}
	return msNum(r.P95)
}

func (r ProcessRow) budget() string {
	switch {
	case r.size && r.PerRecordBudget > 0:
		return fmt.Sprintf("<= %.0f bytes a record", r.PerRecordBudget)
	case r.size:
		return "report"
	}
	if r.RSSBudget > 0 {
		return fmt.Sprintf("<= %d MB", r.RSSBudget>>20)
	}
	return r.Budget.String()
}

// The process budgets of docs/spec/design.md §8.
var (
	budgetColdOpen = budgets{Budget{P95: msd(50)}, Budget{P95: msd(100)}}
	budgetColdPage = budgets{Budget{P95: msd(100)}, Budget{P95: msd(200)}}
)

// sizeBudget1M is docs/spec/design.md §8's size on disk at 1M, bytes a
// record (at 100k the size is reported).
const sizeBudget1M = 1500

// MeasureSize is the size row: the bytes on disk of the closed store in dir
// (every file, as its length: bbolt's file with its growth room, as a user
// listing it sees it), a record, as the load left it: rewritten with full
// pages when it filled the store from empty (bolt.RewriteFilledAt), and no
// `mnemo compact` run.
func MeasureSize(dir string, records int) (ProcessRow, error) {
	parts := map[string]int64{}
	var total int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		part := strings.SplitN(filepath.ToSlash(rel), "/", 2)[0]
		parts[part] += info.Size()
		total += info.Size()
		return nil
	})
	if err != nil {
		return ProcessRow{}, err
	}
	r := ProcessRow{Name: "size on disk, as the load left it (no `mnemo compact`)", Samples: 1, size: true}
	r.PerRecord = float64(total) / float64(max(records, 1))
	r.Pass = true
	if scaleOf(records) == Scale1M {
		r.PerRecordBudget = sizeBudget1M
		r.Pass = r.PerRecord <= sizeBudget1M
	}
	names := make([]string, 0, len(parts))
	for n := range parts {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(parts[b], parts[a]) })
	var b strings.Builder
	fmt.Fprintf(&b, "%.0f bytes a record: %.1f MB", r.PerRecord, float64(total)/1e6)
	for i, n := range names {
		sep := ", "
		if i == 0 {
			sep = " ("
		}
		fmt.Fprintf(&b, "%s%s %.1f MB", sep, n, float64(parts[n])/1e6)
	}
	if len(names) > 0 {
		b.WriteString(")")
	}
	r.Note = b.String()
	return r, nil
}

// The memory budgets of a browsing process, and how many times each new
// process is run.
const (
	rssBrowse100k   = int64(150) << 20
	rssBrowse1M     = int64(600) << 20
	processAttempts = 10
)

// runChild is one child process: its wall time and peak resident set.
func runChild(exe string, args ...string) (time.Duration, int64, error) {
	d, rss, _, _, err := runChildOutput(exe, args...)
	return d, rss, err
}

// pollFirst and pollMost bound the interval of runChildOutput's reads of a
// child's peak RSS. Read every 2 ms throughout, `mnemo import` of the 1M
// corpus took 53.0 and 55.2 s where it took 48.5 and 49.4 s read every 10 s:
// 25,000 wake-ups of this process beside it.
const (
	pollFirst = 2 * time.Millisecond
	pollMost  = 64 * time.Millisecond
)

// runChildOutput is runChild that also answers what the child printed on
// stdout and on stderr.
func runChildOutput(exe string, args ...string) (time.Duration, int64, []byte, []byte, error) {
	cmd := exec.Command(exe, args...)
	var stdout, stderr, out bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.MultiWriter(&stdout, &out), io.MultiWriter(&stderr, &out)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, nil, nil, err
	}
	// The child's own high-water mark, read from /proc while it runs: its
	// rusage maxrss would also count this (large) process, which Linux
	// carries into a child across fork and exec. The reads back off from
	// pollFirst to pollMost: the mark only rises, so a read misses only
	// what the child's last interval adds, and a short command is still
	// read every few milliseconds.
	var rss atomic.Int64
	stop := make(chan struct{})
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		path := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
		for wait := pollFirst; ; wait = min(2*wait, pollMost) {
			if hwm := readHWM(path); hwm > rss.Load() {
				rss.Store(hwm)
			}
			select {
			case <-stop:
				return
			case <-time.After(wait):
			}
		}
	}()
	err := cmd.Wait()
	d := time.Since(start)
	close(stop)
	<-polled
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 && slices.Contains(args, "--reuse") {
		// A bench child exits 1 when one of its rows misses its budget:
		// its memory is measured all the same.
		err = nil
	}
	if err != nil {
		return d, 0, nil, nil, fmt.Errorf("%s %v: %w\n%s", exe, args, err, out.Bytes())
	}
	return d, rss.Load(), stdout.Bytes(), stderr.Bytes(), nil
}

// waitGone waits until process pid has exited, and answers its peak
// resident set as last read from /proc while it ran (a process this one
// did not start, so it cannot wait for it).
func waitGone(pid int) int64 {
	path := fmt.Sprintf("/proc/%d/status", pid)
	var hwm int64
	for {
		b, err := os.ReadFile(path)
		if err != nil || strings.Contains(string(b), "\nState:\tZ") {
			return hwm
		}
		hwm = max(hwm, readHWM(path))
		time.Sleep(20 * time.Millisecond)
	}
}

// readHWM reads VmHWM (the peak resident set, in kB) from a status file.
func readHWM(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// MeasureProcesses times new processes of the mnemo binary exe on the
// closed bench store in dir: cold open (`health` minus `--help`), the cold
// first page (`browse` of 50), and the peak memory of a process that browses
// (the browse and explore rows, run by `bench --reuse --browse-only`).
func MeasureProcesses(exe, dir string, opts Options) ([]ProcessRow, error) {
	opts = opts.withDefaults()
	scale := scaleOf(opts.Records)
	times := func(args ...string) ([]time.Duration, int64, error) {
		var ds []time.Duration
		var peak int64
		for range processAttempts {
			d, rss, err := runChild(exe, args...)
			if err != nil {
				return nil, 0, err
			}
			ds = append(ds, d)
			peak = max(peak, rss)
		}
		slices.Sort(ds)
		return ds, peak, nil
	}
	help, _, err := times("--help")
	if err != nil {
		return nil, err
	}
	base := percentile(help, 50)
	minus := func(ds []time.Duration) []time.Duration {
		out := make([]time.Duration, len(ds))
		for i, d := range ds {
			out[i] = max(0, d-base)
		}
		return out
	}
	var rows []ProcessRow
	health, hrss, err := times("--db", dir, "health")
	if err != nil {
		return nil, err
	}
	r := ProcessRow{Name: "cold open: a new process's `mnemo health` minus `mnemo --help`", Samples: len(health),
		P50: percentile(minus(health), 50), P95: percentile(minus(health), 95), Budget: budgetColdOpen.at(scale)}
	r.Pass = r.Budget.admits(r.P50, r.P95)
	r.Note = fmt.Sprintf("`--help` alone p50 %s; peak RSS %d MB", ms(base), hrss>>20)
	rows = append(rows, r)

	page, prss, err := times("--db", dir, "browse", "--query", `{"limit": 50}`)
	if err != nil {
		return nil, err
	}
	r = ProcessRow{Name: "cold first page: a new process's `mnemo browse` of 50", Samples: len(page),
		P50: percentile(page, 50), P95: percentile(page, 95), Budget: budgetColdPage.at(scale)}
	r.Pass = r.Budget.admits(r.P50, r.P95)
	r.Note = fmt.Sprintf("whole process, start included; peak RSS %d MB", prss>>20)
	rows = append(rows, r)

	d, rss, err := runChild(exe, "bench", "--dir", dir, "--reuse", "--browse-only",
		"--records", fmt.Sprint(opts.Records), "--seed", fmt.Sprint(opts.Seed), "--iterations", fmt.Sprint(opts.Iterations))
	if err != nil {
		return nil, err
	}
	r = ProcessRow{Name: "peak RSS of a browsing process (every browse and explore row, from a new process)", Samples: 1,
		PeakRSS: rss, RSSBudget: rssBrowse100k}
	if scale == Scale1M {
		r.RSSBudget = rssBrowse1M
	}
	r.Pass = rss <= r.RSSBudget
	r.Note = fmt.Sprintf("%d MB, the run took %s", rss>>20, d.Round(time.Millisecond))
	rows = append(rows, r)

	r, err = measureWholeStoreClusters(exe, dir)
	if err != nil {
		return rows, err
	}
	rows = append(rows, r)
	return rows, nil
}

// measureWholeStoreClusters times a new process's `mnemo clusters` of every
// record in the store, from scratch: the whole-store pass, with its peak
// memory. design.md §8 gives it no budget (the 10k scope's is 2 s).
func measureWholeStoreClusters(exe, dir string) (ProcessRow, error) {
	d, rss, out, _, err := runChildOutput(exe, "--db", dir, "clusters", "--json", "--limit", "1")
	if err != nil {
		return ProcessRow{}, err
	}
	var rep struct{ Records, Clustered, Count int }
	if err := json.Unmarshal(out, &rep); err != nil {
		return ProcessRow{}, fmt.Errorf("mnemo clusters printed no report: %w", err)
	}
	return ProcessRow{Name: "whole-store clustering: a new process's `mnemo clusters` of every record, from scratch", Samples: 1,
		P50: d, P95: d, PeakRSS: rss, Pass: true,
		Note: fmt.Sprintf("records read and clustered: %d; clusters: %d, holding %d records; peak RSS %d MB", rep.Records, rep.Count, rep.Clustered, rss>>20)}, nil
}
