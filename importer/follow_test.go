package importer

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/memory"
	"mnemo/ingest"
)

// Follow stores the first read, then each poll's new turns once, tells of
// the polls that stored something, and ends when its context does with the
// total of every poll.
func TestFollowStoresEachPollsNewRecords(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "projects", "-src-shop"), 0o755); err != nil {
		t.Fatal(err)
	}
	session := filepath.Join(dir, "projects", "-src-shop", "s1.jsonl")
	line := func(uuid, text string) string {
		return `{"type":"user","sessionId":"s1","cwd":"/src/shop","uuid":"` + uuid +
			`","parentUuid":null,"timestamp":"2025-07-01T09:00:00Z","message":{"role":"user","content":"` + text + `"}}` + "\n"
	}
	if err := os.WriteFile(session, []byte(line("u1", "first")), 0o644); err != nil {
		t.Fatal(err)
	}
	e := memory.New()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	polls := make(chan Poll, 8)
	done := make(chan Summary, 1)
	go func() {
		sum, err := Follow(ctx, &Importer{Engine: e, Batch: 100}, ingest.NewClaudeCodeTail(dir), contract.MustNamespace("team:acme"),
			20*time.Millisecond, func(p Poll) { polls <- p })
		if err != nil {
			t.Error(err)
		}
		done <- sum
	}()
	next := func() Poll {
		select {
		case p := <-polls:
			return p
		case <-time.After(10 * time.Second):
			t.Fatal("no poll within 10 s")
		}
		return Poll{}
	}
	if p := next(); !p.First || p.Summary.Stored != 1 {
		t.Fatalf("first poll %+v", p)
	}
	f, _ := os.OpenFile(session, os.O_APPEND|os.O_WRONLY, 0o644)
	_, _ = f.WriteString(line("u2", "second") + line("u3", "third"))
	_ = f.Close()
	if p := next(); p.First || p.Summary.Stored != 2 || p.Total.Stored != 3 {
		t.Fatalf("second poll %+v", p)
	}
	cancel()
	sum := <-done
	if sum.Stored != 3 || sum.Replayed != 0 {
		t.Fatalf("total %+v", sum)
	}
	page, err := e.List(context.Background(), contract.ListRequest{Limit: 10})
	if err != nil || len(page.Items) != 3 {
		t.Fatalf("stored %d records (%v), want 3", len(page.Items), err)
	}
	for _, it := range page.Items {
		if ns := it.Meta.Namespace.String(); ns != "team:acme/agent:claude-code/project:src-shop" {
			t.Errorf("record %s at %s", it.ID, ns)
		}
	}
}
