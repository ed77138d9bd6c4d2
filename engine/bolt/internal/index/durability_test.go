package index

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"mnemo/contract"
)

const crashDirEnv = "MNEMO_INDEX_CRASH_DIR"

// TestCrashKeepsAcknowledgedBatches runs a child process that applies
// batches and dies without closing the index; every batch Apply acknowledged
// must be there on reopen, with its applied_seq.
func TestCrashKeepsAcknowledgedBatches(t *testing.T) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		crashChild(dir)
		return
	}
	dir := t.TempDir() + "/index"
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashKeepsAcknowledgedBatches$")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 3 {
		t.Fatalf("child did not crash as planned: %v\n%s", err, out.String())
	}
	var acked uint64
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		if seq, ok := strings.CutPrefix(sc.Text(), "acked "); ok {
			acked, _ = strconv.ParseUint(seq, 10, 64)
		}
	}
	if acked == 0 {
		t.Fatalf("child acknowledged nothing:\n%s", out.String())
	}
	ix, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if ix.NeedsRebuild() {
		t.Fatal("a crashed but intact index must not ask for a rebuild")
	}
	seq, err := ix.AppliedSeq()
	if err != nil || seq < acked {
		t.Fatalf("AppliedSeq = %d, %v; acknowledged %d", seq, err, acked)
	}
	n, err := ix.Count(context.Background(), contract.MetaFilter{})
	if err != nil || n < acked*10 {
		t.Fatalf("Count = %d, %v; want at least %d acknowledged docs", n, err, acked*10)
	}
}

func crashChild(dir string) {
	ix, err := Open(dir)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	for seq := uint64(1); seq <= 20; seq++ {
		docs := make([]Doc, 10)
		for i := range docs {
			docs[i] = doc(fmt.Sprintf("%d-%d", seq, i), "crash test words")
		}
		if err := ix.Apply(docs, nil, seq); err != nil {
			fmt.Println("apply:", err)
			os.Exit(1)
		}
		fmt.Printf("acked %d\n", seq)
	}
	os.Exit(3) // no Close: the process dies with the index open
}

// TestConcurrentReadsDuringApply exercises the race detector: searches,
// counts and facets run while batches are applied.
func TestConcurrentReadsDuringApply(t *testing.T) {
	ix, _ := openTemp(t)
	ctx := context.Background()
	const batches, perBatch = 20, 25
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 8)
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := ix.Keyword(ctx, "shared", contract.MetaFilter{}, true, 0, 10, nil); err != nil {
					errs <- err
					return
				}
				if _, err := ix.Count(ctx, contract.MetaFilter{Kinds: []contract.ItemKind{contract.KindDocument}}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for b := range batches {
		docs := make([]Doc, perBatch)
		for i := range docs {
			docs[i] = doc(fmt.Sprintf("%03d-%03d", b, i), "shared text")
		}
		if err := ix.Apply(docs, nil, uint64(b+1)); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n, err := ix.Count(ctx, contract.MetaFilter{}); err != nil || n != batches*perBatch {
		t.Fatalf("Count = %d, %v; want %d", n, err, batches*perBatch)
	}
}
