package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"mnemo/contract"
)

// Result is the outcome of one check.
type Result struct {
	Name string
	// Passed is true when the check ran and every assertion held.
	Passed bool
	// Skipped is true when the check did not assert anything because the engine
	// does not offer what it tests (an Unsupported answer the contract allows).
	Skipped bool
	// Detail is the failure text (``conformance check `x` failed: ...``) or why
	// the check was skipped; empty when it passed.
	Detail   string
	Duration time.Duration
}

// Report lists every check in the order it ran.
type Report struct {
	Results []Result
}

// Err returns the first failure, or nil when every check passed or was skipped.
func (r Report) Err() error {
	for _, res := range r.Results {
		if !res.Passed && !res.Skipped {
			return errors.New(res.Detail)
		}
	}
	return nil
}

// Failed lists the names of the checks that failed, in order.
func (r Report) Failed() []string {
	var out []string
	for _, res := range r.Results {
		if !res.Passed && !res.Skipped {
			out = append(out, res.Name)
		}
	}
	return out
}

// check is one named assertion over the engine.
type check struct {
	name string
	run  func(*run) error
}

// checks is the suite in run order: tinymemory's checks, then mnemo's, then
// cleanup (which Run always executes).
func checks() []check {
	return []check{
		{"health", checkHealth},
		{"round_trip", checkRoundTrip},
		{"export", checkExport},
		{"erase", checkErase},
		{"replay", checkReplay},
		{"explore", checkExplore},
		{"get", checkGet},
		{"store_many", checkStoreMany},
		{"store_with", checkStoreWith},
		{"fetch_filters", checkFetchFilters},
		{"unsupported_modes", checkUnsupportedModes},
		{"namespaces", checkNamespaces},
		{"empty_forget", checkEmptyForget},
		{"forget_by_id", checkForgetByID},
		{"forget_by_filter", checkForgetByFilter},
		{"recall", checkRecall},
		{"consolidate", checkConsolidate},
		{"browse_validation", checkBrowseValidation},
		{"browse_filters", checkBrowseFilters},
		{"browse_order", checkBrowseOrder},
		{"browse_walk", checkBrowseWalk},
		{"browse_cursor", checkBrowseCursor},
		{"browse_expiry", checkBrowseExpiry},
		{"explore_exact", checkExploreExact},
		{"review", checkReview},
		{"supersede", checkSupersede},
		{"supersede_undo", checkSupersedeUndo},
		{"beliefs_evidence", checkBeliefsEvidence},
		{"statuses_hidden", checkStatusesHidden},
		{"forget_no_ghost", checkForgetNoGhost},
		{"restore_exact", checkRestoreExact},
		{"changes_validation", checkChangesValidation},
		{"changes_order", checkChangesOrder},
		{"changes_reach", checkChangesReach},
		{"changes_wait", checkChangesWait},
		{"cleanup", checkCleanup},
	}
}

// Checks returns the names of every check in run order.
func Checks() []string {
	cs := checks()
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.name
	}
	return out
}

// Run runs every check against engine and reports each one. Unlike the
// reference, which stops at the first failure, every check runs (each sets up
// its own fixture), so one report shows everything an engine gets wrong; Err
// gives the first failure. Cleanup always runs last.
func Run(ctx context.Context, engine contract.Engine) Report {
	r := newRun(ctx, engine)
	var rep Report
	for _, c := range checks() {
		rep.Results = append(rep.Results, runOne(c, r))
	}
	return rep
}

// runOne runs one check and says how it went.
func runOne(c check, r *run) Result {
	start := time.Now()
	err := runCheck(c, r)
	res := Result{Name: c.name, Duration: time.Since(start)}
	var skip *skipped
	switch {
	case err == nil:
		res.Passed = true
	case errors.As(err, &skip):
		res.Skipped = true
		res.Detail = skip.why
	default:
		res.Detail = describe(c.name, err)
	}
	return res
}

// runCheck runs one check, turning a panic (an engine answering something the
// check could not even index, say) into that check's failure rather than
// ending the whole run.
func runCheck(c check, r *run) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fail("the check panicked on the engine's answer: %v", p)
		}
	}()
	return c.run(r)
}

// failure is a wrong answer.
type failure struct{ detail string }

func (f *failure) Error() string { return f.detail }

// engineFailure is an error the engine returned where the contract wants an answer.
type engineFailure struct{ err error }

func (f *engineFailure) Error() string { return f.err.Error() }

// skipped marks a check the engine is allowed not to support.
type skipped struct{ why string }

func (s *skipped) Error() string { return s.why }

func fail(format string, args ...any) error {
	return &failure{detail: fmt.Sprintf(format, args...)}
}

func engineErr(err error) error { return &engineFailure{err: err} }

func skip(format string, args ...any) error { return &skipped{why: fmt.Sprintf(format, args...)} }

func describe(name string, err error) string {
	var ef *engineFailure
	if errors.As(err, &ef) {
		return fmt.Sprintf("conformance check `%s` failed: the engine returned an error: %s", name, ef.err)
	}
	return fmt.Sprintf("conformance check `%s` failed: %s", name, err)
}

// run is the state of one suite run: its nonce-derived names and every id it
// stored, so cleanup can remove them wherever they live.
type run struct {
	ctx    context.Context
	e      contract.Engine
	desc   contract.Descriptor
	nonce  string
	marker string
	// workspace confines every item the run stores outside the probes.
	workspace      string
	probeWorkspace string
	// walkNow is the run's fixed browse `now` for walks: every record the run
	// stores expires, if at all, long after it.
	walkNow time.Time

	stored []string
	browse *browseFixture
}

func newRun(ctx context.Context, e contract.Engine) *run {
	var b [4]byte
	_, _ = rand.Read(b[:])
	nonce := strconv.FormatInt(time.Now().UnixNano(), 16) + hex.EncodeToString(b[:])
	ws := "mnemo-conformance/" + nonce
	now := time.Now().UTC().Truncate(time.Millisecond)
	return &run{ctx: ctx, e: e, desc: e.Descriptor(), nonce: nonce, marker: "tmconf" + nonce,
		workspace: ws, probeWorkspace: ws + "/probes", walkNow: now}
}

// String is one report line: "ok", "skip" or "FAIL", the check's name, and its
// duration or detail.
func (res Result) String() string {
	switch {
	case res.Passed:
		return fmt.Sprintf("ok   %-18s %s", res.Name, res.Duration.Round(time.Microsecond))
	case res.Skipped:
		return fmt.Sprintf("skip %-18s %s", res.Name, res.Detail)
	default:
		return fmt.Sprintf("FAIL %-18s %s", res.Name, res.Detail)
	}
}
