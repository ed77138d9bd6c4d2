package bolt_test

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"mnemo/bench/corpus"
	"mnemo/contract"
	"mnemo/contract/conformance"
	"mnemo/engine/bolt"
)

// storeCorpus stores the first n corpus entries with their statuses and
// expiry, in batches like an import.
func storeCorpus(t *testing.T, e *bolt.Engine, n int) []corpus.Entry {
	t.Helper()
	ctx := context.Background()
	entries := corpus.Generate(n, 3)
	type key struct {
		status  contract.Status
		expires string
	}
	batches := map[key][]contract.StoreItem{}
	opts := map[key]contract.WriteOptions{}
	flush := func(k key) {
		if len(batches[k]) == 0 {
			return
		}
		if _, err := e.StoreManyWith(ctx, batches[k], opts[k]); err != nil {
			t.Fatal(err)
		}
		batches[k] = nil
	}
	for _, en := range entries {
		st := en.Status
		if st == contract.StatusSuperseded {
			st = contract.StatusActive
		}
		k := key{status: st}
		o := contract.WriteOptions{Status: st}
		if en.ExpiresAt != nil {
			k.expires = en.ExpiresAt.String()
			o.ExpiresAt = en.ExpiresAt
		}
		opts[k] = o
		batches[k] = append(batches[k], en.Item)
		if len(batches[k]) == contract.MaxStoreMany {
			flush(k)
		}
	}
	for k := range batches {
		flush(k)
	}
	return entries
}

// answers is what a user sees from the read paths that must agree whether or
// not the table has loaded.
type answers struct {
	Len     int
	Pages   []string
	Totals  []int
	List    []string
	Explore map[contract.Facet]string
	Shapes  []string
}

func idsOfRecords(rs []contract.Record) string {
	out := ""
	for _, r := range rs {
		out += r.ID[:8] + string(r.Status[0]) + " "
	}
	return out
}

// coldAnswers reads only what a store answers before its table has loaded.
func coldAnswers(t *testing.T, e *bolt.Engine) answers {
	t.Helper()
	ctx := context.Background()
	a := answers{Len: e.Len()}
	for _, reach := range []*contract.Reach{nil, {At: contract.MustNamespace("team:acme"), Descendants: true}} {
		q := contract.BrowseQuery{Filter: contract.MetaFilter{Reach: reach}, Limit: 50}
		for range 3 {
			p, err := e.Browse(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			a.Pages = append(a.Pages, idsOfRecords(p.Records))
			a.Totals = append(a.Totals, p.Total)
			if p.Continuation == nil {
				break
			}
			q.Cursor = *p.Continuation
		}
	}
	cursor := (*string)(nil)
	for {
		l, err := e.List(ctx, contract.ListRequest{Filter: contract.MetaFilter{TagsAny: []string{"billing"}}, Limit: 40, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range l.Items {
			a.List = append(a.List, h.ID)
		}
		if l.NextCursor == nil {
			break
		}
		cursor = l.NextCursor
	}
	return a
}

// warmAnswers adds what needs the table: explore on every facet and the
// browse shapes that filter or sort.
func warmAnswers(t *testing.T, e *bolt.Engine) answers {
	t.Helper()
	ctx := context.Background()
	a := coldAnswers(t, e)
	a.Explore = map[contract.Facet]string{}
	for _, f := range contract.Facets() {
		p, err := e.Explore(ctx, contract.ExploreRequest{Facet: f, Limit: 20})
		if err != nil {
			t.Fatal(err)
		}
		a.Explore[f] = fmt.Sprint(p.Buckets, p.Total, p.Missing, p.MoreBuckets)
	}
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, q := range []contract.BrowseQuery{
		{Limit: 100, Filters: []contract.BrowseFilter{{Field: "status", Op: "in", Values: []string{"active"}}}},
		{Limit: 100, OrderBy: []contract.SortKey{{Field: "confidence", Dir: "desc"}}},
		{Limit: 100, Now: &now},
		{Limit: 100, Filters: []contract.BrowseFilter{{Field: "content", Op: "contains", Text: corpus.RareNeedle}}},
	} {
		p, err := e.Browse(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		a.Shapes = append(a.Shapes, fmt.Sprint(p.Total, idsOfRecords(p.Records)))
	}
	return a
}

func TestLargeStoreAnswersBeforeItsTableLoads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	e := openStore(t, dir, bolt.Options{})
	entries := storeCorpus(t, e, 700)
	want := coldAnswers(t, e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	gate := make(chan struct{})
	e, err := bolt.Open(dir, bolt.WithLoadGate(bolt.Options{SyncRebuildBelow: -1}, gate))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = e.Close() }()
	if h := e.Health(ctx); h.State != contract.HealthOK {
		t.Fatalf("health before the table loads: %+v", h)
	}
	got := coldAnswers(t, e)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("before the table loads, the store answers\n%v\nwant\n%v", got, want)
	}
	hits, err := e.Get(ctx, contract.GetRequest{IDs: []string{entries[5].Item.Fingerprint()}})
	if err != nil || len(hits) != 1 {
		t.Fatalf("get before the table loads: %v %v", hits, err)
	}
	// What needs the table waits for it, and gives up with the caller.
	short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	_, err = e.Explore(short, contract.ExploreRequest{Facet: contract.FacetTag, Limit: 5})
	cancel()
	if !errors.Is(err, contract.ErrUnavailable) {
		t.Fatalf("explore while the table is held: %v, want unavailable", err)
	}

	// Writes while the table is loading: stores, forgets by id, a review.
	var fresh []contract.StoreItem
	for i := range 30 {
		fresh = append(fresh, contract.Document(fmt.Sprintf("written while loading %d", i), contract.MemoryMeta{
			Namespace: contract.MustNamespace("team:acme/agent:late"), Tags: []string{"billing"}}))
	}
	if _, err := contract.StoreMany(ctx, e, fresh); err != nil {
		t.Fatal(err)
	}
	var gone []string
	for _, en := range entries[100:] {
		if len(gone) < 10 && contract.AdmittedBy(nil, en.Item.Meta.Namespace) {
			gone = append(gone, en.Item.Fingerprint())
		}
	}
	if rep, err := e.Forget(ctx, contract.ForgetTarget{IDs: gone}); err != nil || rep.Forgotten != 10 {
		t.Fatalf("forget while loading: %+v %v", rep, err)
	}
	var candidate string
	for _, en := range entries {
		if en.Status == contract.StatusCandidate {
			candidate = en.Item.Fingerprint()
			break
		}
	}
	if _, err := e.Review(ctx, contract.ReviewRequest{ID: candidate, Action: contract.ReviewApprove}); err != nil {
		t.Fatal(err)
	}
	during := coldAnswers(t, e)
	if during.Len != want.Len+30-10 || during.Totals[0] != want.Totals[0]+30-10 {
		t.Fatalf("counts after writes while loading: len %d total %d, want %d", during.Len, during.Totals[0], want.Len+20)
	}
	close(gate)
	if err := e.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	loaded := warmAnswers(t, e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// The table built while writes went on equals one built from the records.
	e = openStore(t, dir, bolt.Options{})
	if again := warmAnswers(t, e); fmt.Sprint(again) != fmt.Sprint(loaded) {
		t.Fatalf("table loaded during writes answers\n%v\na fresh open answers\n%v", loaded, again)
	}
	if fmt.Sprint(loaded.Len, loaded.Totals, loaded.Pages) != fmt.Sprint(during.Len, during.Totals, during.Pages) {
		t.Fatalf("cold answers %v disagree with the loaded table's %v", during, loaded)
	}
}

func TestCloseDoesNotWaitForTheTable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := openStore(t, dir, bolt.Options{})
	storeCorpus(t, e, 300)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{}) // never opened: the load must not hold up Close
	e, err := bolt.Open(dir, bolt.WithLoadGate(bolt.Options{SyncRebuildBelow: -1}, gate))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- e.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close waited for the table load")
	}
	if _, err := e.Explore(context.Background(), contract.ExploreRequest{Facet: contract.FacetKind, Limit: 3}); !errors.Is(err, contract.ErrUnavailable) {
		t.Fatalf("explore after close: %v, want unavailable", err)
	}
}

// untar unpacks a fixture store into dir.
func untar(t *testing.T, archive, dir string) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.OpenFile(filepath.Join(dir, filepath.Base(h.Name)), os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, tr); err != nil {
			t.Fatal(err)
		}
		_ = out.Close()
	}
}

// TestStoreFromVersion1Opens opens a store written by the previous release
// (schema 1: no namespace totals, unsynced freelist; 400 demo records, 7 of
// them forgotten, its index removed) in both open paths.
func TestStoreFromVersion1Opens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, opts := range []bolt.Options{{}, {SyncRebuildBelow: -1}} {
		dir := t.TempDir()
		untar(t, filepath.Join("testdata", "store-v1.tar.gz"), dir)
		e, err := bolt.Open(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		if n := e.Len(); n != 393 {
			t.Fatalf("len %d, want 393", n)
		}
		st, err := e.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetStatus, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(st.Buckets, st.Total); got != "[{active 356} {candidate 20}] 376" {
			t.Fatalf("status counts %s", got)
		}
		if err := e.WaitIndex(ctx); err != nil {
			t.Fatal(err)
		}
		fp, err := e.Fetch(ctx, contract.FetchRequest{Query: "dunning retries", Mode: contract.ModeKeyword, Limit: 3})
		if err != nil || len(fp.Hits) == 0 {
			t.Fatalf("keyword fetch on the migrated store: %v %v", fp.Hits, err)
		}
		first := warmAnswers(t, e)
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		// Reopened with its totals written: the cold answers agree.
		gate := make(chan struct{})
		e, err = bolt.Open(dir, bolt.WithLoadGate(bolt.Options{SyncRebuildBelow: -1}, gate))
		if err != nil {
			t.Fatal(err)
		}
		if cold := coldAnswers(t, e); fmt.Sprint(cold.Len, cold.Totals, cold.Pages, cold.List) !=
			fmt.Sprint(first.Len, first.Totals, first.Pages, first.List) {
			t.Fatalf("after migration, cold answers %v, want %v", cold, first)
		}
		close(gate)
		if again := warmAnswers(t, e); !slices.Equal(again.Shapes, first.Shapes) {
			t.Fatalf("after reopening: %v, want %v", again.Shapes, first.Shapes)
		}
		_ = e.Close()
	}
}

// TestConformanceWhileTheTableLoads runs the suite on a store with foreign
// records whose table is still loading when the suite starts.
func TestConformanceWhileTheTableLoads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := openStore(t, dir, bolt.Options{})
	storeCorpus(t, e, 500)
	// The vectors are embedded and written before the reopen: a store whose
	// records are still being embedded answers vector fetch `unavailable`
	// (as it may), which the suite would take for a failure; the table's
	// load is what this test is about.
	if err := e.WaitEmbedder(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	e = openStore(t, dir, bolt.WithLoadGate(bolt.Options{SyncRebuildBelow: -1}, gate))
	time.AfterFunc(100*time.Millisecond, func() { close(gate) })
	if err := conformance.Run(context.Background(), e).Err(); err != nil {
		t.Fatal(err)
	}
	if n := e.Len(); n != 500 {
		t.Fatalf("after the suite the store holds %d records, want the 500 it had", n)
	}
}

func TestBulkLoadDefersTheIndexAndLosesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	e, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.SetBulk(true)
	entries := storeCorpus(t, e, 1200)
	needles := 0
	for i := range entries {
		if corpus.IsNeedle(i) && contract.AdmittedBy(nil, entries[i].Item.Meta.Namespace) {
			needles++
		}
	}
	contains := contract.BrowseQuery{Limit: 100, Filters: []contract.BrowseFilter{{Field: "content", Op: "contains", Text: corpus.RareNeedle}}}
	check := func(when string) {
		t.Helper()
		p, err := e.Browse(ctx, contains)
		if err != nil || p.Total != needles {
			t.Fatalf("%s: contains finds %d (%v), want %d", when, p.Total, err, needles)
		}
	}
	check("during the bulk load")
	if st := e.IndexStatus(); st.AppliedSeq != 0 {
		t.Fatalf("the index was updated during the bulk load (applied seq %d)", st.AppliedSeq)
	}
	// Fetch applies what it needs itself, bulk or not.
	fp, err := e.Fetch(ctx, contract.FetchRequest{Query: corpus.RareNeedle, Mode: contract.ModeKeyword, Limit: 50})
	if err != nil || len(fp.Hits) == 0 {
		t.Fatalf("keyword fetch during the bulk load: %d hits, %v", len(fp.Hits), err)
	}
	e.SetBulk(false)
	if err := e.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	check("after the bulk load")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// A bulk load closed before its index caught up replays at the next open.
	e, err = bolt.Open(dir, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = e.Close() }()
	e.SetBulk(true)
	extra := storeCorpus(t, e, 1300)[1200:]
	_ = e.Close()
	e, err = bolt.Open(dir, bolt.Options{SyncRebuildBelow: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	for _, en := range extra[:5] {
		hits, err := e.Fetch(ctx, contract.FetchRequest{Query: en.Item.RenderText(), Mode: contract.ModeKeyword, Limit: 100,
			Filter: contract.MetaFilter{Statuses: []contract.Status{contract.StatusActive, contract.StatusCandidate}, Reach: &contract.Reach{At: contract.Root(), Descendants: true}}})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, h := range hits.Hits {
			found = found || h.ID == en.Item.Fingerprint()
		}
		if !found {
			t.Fatalf("a record stored in a bulk load closed before the index caught up is not ranked after reopening")
		}
	}
}

// A list before the table has loaded decodes records only until its budget:
// a filter that admits few records then waits for the table and goes on
// where the scan stopped, so its pages (cursors included) are the ones a
// loaded store answers; a filter that admits many answers from the records
// at once, without waiting.
func TestSelectiveListBeforeTheTableLoadsWaitsForIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	e := openStore(t, dir, bolt.Options{})
	storeCorpus(t, e, 600)
	// A few records of one agent, spread among the others by time.
	sel := contract.MetaFilter{AgentID: contract.Ptr("needle-agent")}
	for i := range 7 {
		it := contract.Document(fmt.Sprintf("needle %d", i), contract.MemoryMeta{AgentID: contract.Ptr("needle-agent")})
		if _, err := contract.Store(ctx, e, it); err != nil {
			t.Fatal(err)
		}
		var filler []contract.StoreItem
		for j := range 80 {
			filler = append(filler, contract.Document(fmt.Sprintf("filler %d after needle %d", j, i), contract.MemoryMeta{}))
		}
		if _, err := contract.StoreMany(ctx, e, filler); err != nil {
			t.Fatal(err)
		}
	}
	pages := func(e *bolt.Engine, f contract.MetaFilter, limit int) []string {
		var out []string
		req := contract.ListRequest{Filter: f, Limit: limit}
		for {
			p, err := e.List(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, h := range p.Items {
				ids = append(ids, h.ID)
			}
			out = append(out, strings.Join(ids, ","))
			if p.NextCursor == nil {
				return out
			}
			req.Cursor = p.NextCursor
		}
	}
	want := pages(e, sel, 3)
	wantAll := pages(e, contract.MetaFilter{}, 50)[0]
	if len(want) != 3 {
		t.Fatalf("the selective filter's pages: %v", want)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	gate := make(chan struct{})
	e, err := bolt.Open(dir, bolt.WithColdScanBudget(bolt.WithLoadGate(bolt.Options{SyncRebuildBelow: -1}, gate), 64))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = e.Close() }()
	// Many records admitted: the first page comes from the records alone.
	if got := pages(e, contract.MetaFilter{}, 50)[0]; got != wantAll {
		t.Fatalf("an unfiltered first page before the table loads differs")
	}
	// Few admitted: the list waits for the table, and gives up with the caller.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err = e.List(short, contract.ListRequest{Filter: sel, Limit: 3})
	cancel()
	if !errors.Is(err, contract.ErrUnavailable) {
		t.Fatalf("a selective list while the table is held: %v, want unavailable", err)
	}
	done := make(chan []string, 1)
	go func() { done <- pages(e, sel, 3) }()
	time.Sleep(20 * time.Millisecond)
	close(gate)
	select {
	case got := <-done:
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("pages across the table's load\n%v\nwant\n%v", got, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the selective list did not end once the table loaded")
	}
}
