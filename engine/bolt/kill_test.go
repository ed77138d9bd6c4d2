package bolt_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"mnemo/contract"
	"mnemo/engine/bolt"
)

// killChild writes until it is killed: batches tagged b<N> (every third one
// as candidates), a forget by filter of the batch before every third batch,
// and an approval of a candidate; it prints each acknowledged operation.
func killChild(dir string, round int) {
	ctx := context.Background()
	e, err := bolt.Open(dir, killOpts(round))
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(2)
	}
	e.SetBulk(round%2 == 0) // half the rounds as a bulk import
	w := bufio.NewWriter(os.Stdout)
	say := func(format string, args ...any) {
		fmt.Fprintf(w, format+"\n", args...)
		_ = w.Flush()
	}
	var candidates []string
	for b := 0; ; b++ {
		tag := fmt.Sprintf("r%db%d", round, b)
		// Bulk rounds write as `mnemo import` does: StoreBulk, more than a
		// store_many a transaction.
		n := 20
		if round%2 == 0 {
			n = 150
		}
		items := make([]contract.StoreItem, n)
		for j := range items {
			items[j] = contract.Document(fmt.Sprintf("%s crash round %d batch %d item %d", marker, round, b, j),
				contract.MemoryMeta{Tags: []string{tag}, Namespace: contract.MustNamespace("team:kill")})
		}
		opts := contract.WriteOptions{}
		if b%3 == 1 {
			opts.Status = contract.StatusCandidate
		}
		store := e.StoreManyWith
		if round%2 == 0 {
			store = e.StoreBulk
		}
		rs, err := store(ctx, items, opts)
		if err != nil {
			fmt.Println("ERR", err)
			os.Exit(2)
		}
		for _, r := range rs {
			say("S %s %s %s", tag, r.ID, opts.Status)
			if opts.Status == contract.StatusCandidate {
				candidates = append(candidates, r.ID)
			}
		}
		if b%3 == 2 {
			prev := fmt.Sprintf("r%db%d", round, b-2)
			say("f %s", prev) // about to forget: a kill now may or may not have
			if _, err := e.Forget(ctx, contract.ForgetFilter(contract.MetaFilter{TagsAny: []string{prev}})); err != nil {
				fmt.Println("ERR", err)
				os.Exit(2)
			}
			say("F %s", prev)
		}
		if len(candidates) > 0 && b%2 == 0 {
			id := candidates[0]
			candidates = candidates[1:]
			if _, err := e.Review(ctx, contract.ReviewRequest{ID: id, Action: contract.ReviewApprove}); err != nil {
				fmt.Println("ERR", err)
				os.Exit(2)
			}
			say("A %s", id)
		}
	}
}

// killOpts opens the store as a large one in half the rounds: its table
// and content index are then read back from their files (saved by an
// earlier round's reopen, behind the kill by however much the feed replays)
// and written again, so the kill lands around those files too.
func killOpts(round int) bolt.Options {
	if round%4 >= 2 {
		return bolt.Options{SyncRebuildBelow: -1}
	}
	return bolt.Options{}
}

// TestKilledWritersLoseNothing kills (SIGKILL, no Close) a writer at random
// points of imports, forgets by filter and reviews, then checks every read
// path and `check` after reopening, round after round on the same store.
// MNEMO_KILL_ROUNDS sets the number of rounds (default 4).
func TestKilledWritersLoseNothing(t *testing.T) {
	if dir := os.Getenv("MNEMO_KILL_CHILD_DIR"); dir != "" {
		round, _ := strconv.Atoi(os.Getenv("MNEMO_KILL_ROUND"))
		killChild(dir, round)
		return
	}
	rounds := 4
	if n, err := strconv.Atoi(os.Getenv("MNEMO_KILL_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	ctx := context.Background()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 11))
	stored := map[string]string{} // id -> tag, acknowledged
	status := map[string]contract.Status{}
	forgotten := map[string]bool{} // tags forgotten, acknowledged
	maybe := map[string]bool{}     // tags whose forget was under way
	for round := range rounds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWritersLoseNothing$")
		cmd.Env = append(os.Environ(), "MNEMO_KILL_CHILD_DIR="+dir, "MNEMO_KILL_ROUND="+strconv.Itoa(round))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		killAfter := 30 + rng.IntN(400)
		sc := bufio.NewScanner(out)
		lines := 0
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			switch f[0] {
			case "S":
				stored[f[2]] = f[1]
				status[f[2]] = contract.StatusActive
				if len(f) > 3 {
					status[f[2]] = contract.Status(f[3])
				}
			case "f":
				maybe[f[1]] = true
			case "F":
				forgotten[f[1]] = true
			case "A":
				status[f[1]] = contract.StatusActive
			case "ERR":
				t.Fatalf("child: %s", sc.Text())
			}
			// After the kill, the lines already written are still read: each
			// was acknowledged before the process died.
			if lines++; lines == killAfter {
				_ = cmd.Process.Signal(syscall.SIGKILL)
			}
		}
		_ = cmd.Wait()

		e, err := bolt.Open(dir, killOpts(round+1))
		if err != nil {
			t.Fatal(err)
		}
		var live, gone []string
		for id, tag := range stored {
			switch {
			case forgotten[tag]:
				gone = append(gone, id)
			case !maybe[tag]:
				live = append(live, id)
			}
		}
		var recs []contract.Record
		for ids := range slices.Chunk(live, contract.MaxGetIDs) {
			got, err := e.GetRecords(ctx, contract.GetRequest{IDs: ids})
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, got...)
		}
		if len(recs) != len(live) {
			t.Fatalf("round %d: %d of %d acknowledged records readable", round, len(recs), len(live))
		}
		for ids := range slices.Chunk(gone, contract.MaxGetIDs) {
			if ghosts, _ := e.Get(ctx, contract.GetRequest{IDs: ids}); len(ghosts) > 0 {
				t.Fatalf("round %d: %d forgotten records came back through get", round, len(ghosts))
			}
		}
		for _, r := range recs {
			if want := status[r.ID]; r.Status != want && !(want == contract.StatusCandidate && r.Status == contract.StatusActive) {
				t.Fatalf("round %d: record %s is %s, want %s", round, r.ID, r.Status, want)
			}
		}
		if err := e.WaitIndex(ctx); err != nil {
			t.Fatal(err)
		}
		everything := contract.MetaFilter{Statuses: []contract.Status{contract.StatusActive, contract.StatusCandidate, contract.StatusSuperseded}}
		for tag := range forgotten {
			ex, err := e.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetTag, Filter: contract.MetaFilter{TagsAny: []string{tag}}, Limit: 5})
			if err != nil || ex.Total != 0 {
				t.Fatalf("round %d: explore counts %d records of forgotten tag %s (%v)", round, ex.Total, tag, err)
			}
			fp, err := e.Fetch(ctx, contract.FetchRequest{Query: marker, Mode: contract.ModeKeyword, Limit: 100,
				Filter: contract.MetaFilter{TagsAny: []string{tag}, Statuses: everything.Statuses}})
			if err != nil || len(fp.Hits) != 0 {
				t.Fatalf("round %d: fetch returns %d records of forgotten tag %s (%v)", round, len(fp.Hits), tag, err)
			}
		}
		rep, err := e.Check(ctx, false, nil)
		if err != nil || !rep.Consistent {
			t.Fatalf("round %d: check after the kill: %v %v %+v", round, disagreements(rep), err, rep.Checks)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d rounds, %d records acknowledged, %d batches forgotten", rounds, len(stored), len(forgotten))
}
