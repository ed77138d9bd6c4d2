package ingest

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// ccUserLine is a transcript line of the user saying text in session sid.
func ccUserLine(sid, uuid, text string) string {
	return `{"type":"user","sessionId":"` + sid + `","cwd":"/home/ann/src/shop","uuid":"` + uuid +
		`","parentUuid":null,"timestamp":"2025-07-01T09:00:00Z","message":{"role":"user","content":"` + text + `"}}` + "\n"
}

func ccAssistantLine(sid, uuid, text string) string {
	return `{"type":"assistant","sessionId":"` + sid + `","cwd":"/home/ann/src/shop","uuid":"` + uuid +
		`","parentUuid":"x","timestamp":"2025-07-01T09:00:01Z","message":{"role":"assistant","content":[{"type":"text","text":"` + text + `"}]}}` + "\n"
}

func appendTo(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// poll runs one Poll of tail and returns what it stored.
func poll(t *testing.T, tail *ClaudeCodeTail) *collect {
	t.Helper()
	return read(t, tail, "", "")
}

func fingerprints(c *collect) []string {
	var out []string
	for _, s := range c.stored {
		out = append(out, s.location+" "+s.item.Fingerprint())
	}
	slices.Sort(out)
	return out
}

// A followed transcript yields each appended turn once, a line still being
// written only once it is whole, and in the end exactly the records (ids,
// places in the session, locations) a plain import of the finished file
// gives, so following and importing again agree.
func TestClaudeCodeTailReadsOnlyWhatWasAppended(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "projects", "-home-ann-src-shop")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	session := filepath.Join(dir, "s1.jsonl")
	appendTo(t, session, `{"type":"summary","summary":"Flaky test","leafUuid":"u2"}`+"\n"+
		ccUserLine("s1", "u1", "Why does the checkout test fail?")+ccAssistantLine("s1", "a1", "It sleeps two seconds."))

	tail := NewClaudeCodeTail(root)
	var all collect
	first := poll(t, tail)
	if len(first.stored) != 2 {
		t.Fatalf("first poll stored %d records, want 2", len(first.stored))
	}
	all.stored = append(all.stored, first.stored...)
	if again := poll(t, tail); len(again.stored) != 0 || len(again.skipped) != 0 {
		t.Fatalf("a poll with nothing new stored %d, skipped %v", len(again.stored), again.skipped)
	}

	// A line cut in the middle of its writing waits for the rest.
	line := ccUserLine("s1", "u2", "Remove the sleep then.")
	appendTo(t, session, line[:40])
	if got := poll(t, tail); len(got.stored) != 0 || len(got.skipped) != 0 {
		t.Fatalf("a half-written line: stored %d, skipped %v; want it left for the next poll", len(got.stored), got.skipped)
	}
	appendTo(t, session, line[40:]+ccUserLine("s2", "v1", "Another session starts."))
	got := poll(t, tail)
	if len(got.stored) != 2 {
		t.Fatalf("after the line was finished: stored %d, want 2", len(got.stored))
	}
	m := byLocation(got)
	turn := m["projects/-home-ann-src-shop/s1.jsonl:4"]
	if turn.item.Meta.Turns == nil || turn.item.Meta.Turns.First != 2 || !strings.Contains(turn.item.RenderText(), "Remove the sleep") {
		t.Errorf("the appended turn: %+v, want turn 2 of session s1 at line 4", turn)
	}
	if s2 := m["projects/-home-ann-src-shop/s1.jsonl:5"]; s2.item.Meta.Turns == nil || s2.item.Meta.Turns.First != 0 {
		t.Errorf("a new session's first turn: %+v, want turn 0", s2)
	}
	all.stored = append(all.stored, got.stored...)

	// A new transcript appears.
	appendTo(t, filepath.Join(dir, "s3.jsonl"), ccUserLine("s3", "w1", "Deploy on Tuesday?"))
	got = poll(t, tail)
	if len(got.stored) != 1 {
		t.Fatalf("a new transcript: stored %d, want 1", len(got.stored))
	}
	all.stored = append(all.stored, got.stored...)

	whole := read(t, ClaudeCode{}, root, "")
	if f, w := fingerprints(&all), fingerprints(whole); !slices.Equal(f, w) {
		t.Errorf("followed records differ from a plain import:\nfollowed %v\nimported %v", f, w)
	}
}

// A memory file is read again when it changes (its unchanged sections are
// the same records, so they replay), and a transcript rewritten shorter is
// read again from its start.
func TestClaudeCodeTailRereadsChangedFiles(t *testing.T) {
	root := t.TempDir()
	mem := filepath.Join(root, "CLAUDE.md")
	if err := os.WriteFile(mem, []byte("# Style\n\nTabs in Go.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	session := filepath.Join(root, "s1.jsonl")
	appendTo(t, session, ccUserLine("s1", "u1", "first")+ccUserLine("s1", "u2", "second"))
	tail := NewClaudeCodeTail(root)
	if got := poll(t, tail); len(got.stored) != 3 {
		t.Fatalf("first poll stored %d, want 3", len(got.stored))
	}
	if err := os.WriteFile(mem, []byte("# Style\n\nTabs in Go.\n\n# Tests\n\nA real database.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := poll(t, tail)
	if len(got.stored) != 2 || byLocation(got)["CLAUDE.md#tests"].item.RenderText() != "# Tests\n\nA real database." {
		t.Errorf("a changed memory file: %d records %v", len(got.stored), keys(byLocation(got)))
	}
	if err := os.WriteFile(session, []byte(ccUserLine("s1", "u1", "first")), 0o644); err != nil {
		t.Fatal(err)
	}
	got = poll(t, tail)
	if len(got.stored) != 1 || byLocation(got)["s1.jsonl:1"].item.Meta.Turns.First != 0 {
		t.Errorf("a transcript rewritten shorter: %d records %v, want its first turn again", len(got.stored), keys(byLocation(got)))
	}
}

// A line that is not JSON is skipped once with its location, not at every
// poll, and the lines after it are read.
func TestClaudeCodeTailSkipsABadLineOnce(t *testing.T) {
	root := t.TempDir()
	session := filepath.Join(root, "s1.jsonl")
	appendTo(t, session, ccUserLine("s1", "u1", "first")+"not json\n")
	tail := NewClaudeCodeTail(root)
	got := poll(t, tail)
	if len(got.stored) != 1 || len(got.skipped) != 1 || got.skipped[0].Location != "s1.jsonl:2" {
		t.Fatalf("stored %d, skipped %v; want 1 and s1.jsonl:2", len(got.stored), got.skipped)
	}
	appendTo(t, session, ccUserLine("s1", "u2", "third"))
	got = poll(t, tail)
	if len(got.stored) != 1 || len(got.skipped) != 0 || byLocation(got)["s1.jsonl:3"].item.Meta.Turns.First != 1 {
		t.Errorf("after the bad line: stored %v, skipped %v", keys(byLocation(got)), got.skipped)
	}
}

// Whatever pieces a session writes its transcript in (a line split anywhere,
// several lines at once, polls in between), following it yields exactly the
// records a plain import of the finished file gives: each once.
func TestClaudeCodeTailAnySplitGivesThePlainImport(t *testing.T) {
	whole, err := os.ReadFile("testdata/claude-code/projects/-home-ann-src-shop/5d1c7a2e-1111-4222-8333-444455556666.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 7))
		root := t.TempDir()
		dir := filepath.Join(root, "projects", "-home-ann-src-shop")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		session := filepath.Join(dir, "s.jsonl")
		tail := NewClaudeCodeTail(root)
		var all collect
		for rest := whole; len(rest) > 0; {
			n := 1 + rng.IntN(min(len(rest), 400))
			appendTo(t, session, string(rest[:n]))
			rest = rest[n:]
			if rng.IntN(2) == 0 || len(rest) == 0 {
				got := poll(t, tail)
				all.stored = append(all.stored, got.stored...)
			}
		}
		plain := read(t, ClaudeCode{}, root, "")
		if f, w := fingerprints(&all), fingerprints(plain); !slices.Equal(f, w) {
			t.Fatalf("seed %d: followed %v\nimported %v", seed, f, w)
		}
	}
}
