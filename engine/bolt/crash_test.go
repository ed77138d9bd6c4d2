package bolt_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/bolt"
)

const marker = "kumquatmarker"

func markerItems(n int, tag string) []contract.StoreItem {
	items := make([]contract.StoreItem, n)
	for i := range items {
		items[i] = contract.Document(fmt.Sprintf("%s note %d about %s", marker, i, tag), contract.MemoryMeta{Tags: []string{tag}})
	}
	return items
}

func idsOfItems(items []contract.StoreItem) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Fingerprint()
	}
	slices.Sort(out)
	return out
}

// readPaths collects the ids every read path returns for the marker: list,
// browse, explore's total, and fetch in each mode.
type readPaths struct {
	list, browse []string
	explore      int
	fetch        map[contract.FetchMode][]string
}

func readAll(t *testing.T, e *bolt.Engine) readPaths {
	t.Helper()
	ctx := context.Background()
	rp := readPaths{fetch: map[contract.FetchMode][]string{}}
	list, err := e.List(ctx, contract.ListRequest{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range list.Items {
		rp.list = append(rp.list, h.ID)
	}
	page, err := e.Browse(ctx, contract.BrowseQuery{Limit: 1000, Filters: []contract.BrowseFilter{{Field: "content", Op: "contains", Text: marker}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range page.Records {
		rp.browse = append(rp.browse, r.ID)
	}
	ex, err := e.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetKind, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	rp.explore = int(ex.Total)
	for _, m := range e.Descriptor().FetchModes {
		req := contract.FetchRequest{Query: marker + " note", Mode: m, Limit: 1000}
		fp, err := e.Fetch(ctx, req)
		if m == contract.ModeVector && errors.Is(err, contract.ErrUnavailable) {
			// Vector search waits while the records are embedded at open.
			if err = e.WaitEmbedder(ctx); err == nil {
				fp, err = e.Fetch(ctx, req)
			}
		}
		if err != nil {
			t.Fatalf("fetch %s: %v", m, err)
		}
		for _, h := range fp.Hits {
			rp.fetch[m] = append(rp.fetch[m], h.ID)
		}
	}
	slices.Sort(rp.list)
	slices.Sort(rp.browse)
	for m := range rp.fetch {
		slices.Sort(rp.fetch[m])
	}
	return rp
}

func assertAgree(t *testing.T, e *bolt.Engine, want []string) {
	t.Helper()
	rp := readAll(t, e)
	if !slices.Equal(rp.list, want) {
		t.Fatalf("list holds %d ids, want %d", len(rp.list), len(want))
	}
	if !slices.Equal(rp.browse, want) {
		t.Fatalf("browse holds %d ids, want %d", len(rp.browse), len(want))
	}
	if rp.explore != len(want) {
		t.Fatalf("explore total %d, want %d", rp.explore, len(want))
	}
	if !slices.Equal(rp.fetch[contract.ModeKeyword], want) {
		t.Fatalf("keyword fetch holds %d ids, want %d", len(rp.fetch[contract.ModeKeyword]), len(want))
	}
	// Hybrid fuses windows of 64 from each side; vector ranks what it finds.
	if got := len(rp.fetch[contract.ModeHybrid]); got < min(64, len(want)) {
		t.Fatalf("hybrid fetch holds %d ids, want at least %d", got, min(64, len(want)))
	}
	for _, m := range []contract.FetchMode{contract.ModeVector, contract.ModeHybrid} {
		for _, id := range rp.fetch[m] {
			if _, ok := slices.BinarySearch(want, id); !ok {
				t.Fatalf("%s fetch returned %s, which is not stored", m, id)
			}
		}
	}
}

func TestCloseBeforeTheIndexCatchesUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	e, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	items := markerItems(80, "batch")
	if _, err := contract.StoreMany(ctx, e, items); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openStore(t, dir, bolt.Options{})
	if st := e.IndexStatus(); st.State != "ready" {
		t.Fatalf("index status after reopen: %+v", st)
	}
	assertAgree(t, e, idsOfItems(items))
}

// TestCrashLosesNothing runs a child process that writes and exits without
// closing (as a crash would), then checks every read path in a fresh open.
func TestCrashLosesNothing(t *testing.T) {
	if dir := os.Getenv("MNEMO_CRASH_CHILD_DIR"); dir != "" {
		crashChild(dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashLosesNothing$")
	cmd.Env = append(os.Environ(), "MNEMO_CRASH_CHILD_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	kept := markerItems(50, "kept")
	e := openStore(t, dir, bolt.Options{})
	if err := e.WaitIndex(context.Background()); err != nil {
		t.Fatal(err)
	}
	assertAgree(t, e, idsOfItems(kept))
}

func crashChild(dir string) {
	ctx := context.Background()
	e, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	kept, gone := markerItems(50, "kept"), markerItems(30, "gone")
	if _, err := contract.StoreMany(ctx, e, kept); err == nil {
		_, err = contract.StoreMany(ctx, e, gone)
	}
	if err == nil {
		_, err = contract.Store(ctx, e, contract.Document(marker+" stored alone", contract.MemoryMeta{Tags: []string{"gone"}}))
	}
	if err == nil {
		_, err = e.Forget(ctx, contract.ForgetFilter(contract.MetaFilter{TagsAny: []string{"gone"}}))
	}
	if err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	// No Close: the process ends as a crash would, with index work pending.
	os.Exit(0)
}

func TestMissingIndexIsRebuiltInTheBackground(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	e, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	items := markerItems(300, "rebuild")
	for i := 0; i < len(items); i += 100 {
		if _, err := contract.StoreMany(ctx, e, items[i:i+100]); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, bolt.IndexDir)); err != nil {
		t.Fatal(err)
	}
	e = openStore(t, dir, bolt.Options{SyncRebuildBelow: 1})
	// bbolt paths work at once, whatever the index is doing.
	list, err := e.List(ctx, contract.ListRequest{Limit: 1000})
	if err != nil || len(list.Items) != len(items) {
		t.Fatalf("list during rebuild: %d items, %v", len(list.Items), err)
	}
	if _, err := e.Fetch(ctx, contract.FetchRequest{Query: marker, Mode: contract.ModeKeyword, Limit: 5}); err != nil &&
		!errors.Is(err, contract.ErrUnavailable) {
		t.Fatalf("fetch during rebuild: %v", err)
	}
	// A write during the rebuild must reach the index too.
	extra := contract.Document(marker+" note written during the rebuild", contract.MemoryMeta{})
	if _, err := contract.Store(ctx, e, extra); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := e.WaitIndex(wctx); err != nil {
		t.Fatal(err)
	}
	if st := e.IndexStatus(); st.State != "ready" {
		t.Fatalf("index status: %+v", st)
	}
	assertAgree(t, e, idsOfItems(append(items, extra)))
}

func TestCorruptIndexIsRebuilt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	e, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	items := markerItems(40, "corrupt")
	if _, err := contract.StoreMany(ctx, e, items); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// Overwrite every file of the index with garbage.
	err = filepath.WalkDir(filepath.Join(dir, bolt.IndexDir), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		return os.WriteFile(p, []byte("not an index"), 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	e = openStore(t, dir, bolt.Options{})
	if err := e.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	assertAgree(t, e, idsOfItems(items))
}

func TestForgetLeavesNoGhostAfterReopen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	e, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	items := markerItems(20, "ghost")
	if _, err := contract.StoreMany(ctx, e, items); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	gone := items[:5]
	rep, err := e.Forget(ctx, contract.ForgetIDs(idsOfItems(gone)...))
	if err != nil || rep.Forgotten != 5 {
		t.Fatalf("forget: %+v %v", rep, err)
	}
	// Close at once: the index may still hold the forgotten ids.
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openStore(t, dir, bolt.Options{})
	assertAgree(t, e, idsOfItems(items[5:]))
	hits, err := e.Get(ctx, contract.GetRequest{IDs: idsOfItems(gone)})
	if err != nil || len(hits) != 0 {
		t.Fatalf("get after forget: %v %v", hits, err)
	}
	exp, err := e.Export(ctx, contract.ListRequest{Limit: 100})
	if err != nil || len(exp.Items) != 15 {
		t.Fatalf("export after forget: %d items, %v", len(exp.Items), err)
	}
}
