package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/importer"
	"mnemo/ingest/ingesttest"
)

// importFromRun imports a source fixture and decodes the summary.
func importFromRun(t *testing.T, c *testCLI, wantCode int, args ...string) importer.Summary {
	t.Helper()
	r := c.run("", append([]string{"import"}, args...)...)
	if r.code != wantCode || r.stderr != "" {
		t.Fatalf("import %v: exit %d (want %d), stdout %s, stderr %q", args, r.code, wantCode, r.stdout, r.stderr)
	}
	var sum importer.Summary
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
		t.Fatalf("summary %q: %v", r.stdout, err)
	}
	return sum
}

func TestImportFromIsAReplayAndReportsSkips(t *testing.T) {
	c := newTestCLI(t)
	path := "ingest/testdata/chatgpt/conversations.json"
	sum := importFromRun(t, c, 2, path, "--from", "chatgpt", "--place", "team:acme")
	if sum.Stored != 5 || sum.Failed != 0 || len(sum.Skipped) != 2 || sum.Skipped[0].Location != "conversations.json#conv-broken" {
		t.Fatalf("first import: %+v", sum)
	}
	// Detected without --from, the same records replay and nothing is new.
	sum = importFromRun(t, c, 2, path, "--place", "team:acme")
	if sum.Stored != 0 || sum.Replayed != 5 {
		t.Fatalf("second import stored something new: %+v", sum)
	}
	var page contract.BrowsePage
	c.okJSON(&page, "", "browse", "--query", `{}`)
	if page.Total != 5 {
		t.Fatalf("want 5 records (one a turn), got %d", page.Total)
	}
	for _, r := range page.Records {
		if !strings.HasPrefix(contract.Deref(r.Meta.Source.ID), "chatgpt:conversations.json#conv-edit/") ||
			r.Meta.Namespace.String() != "team:acme/source:chatgpt" {
			t.Errorf("record %s: source %+v namespace %s", r.ID, r.Meta.Source, r.Meta.Namespace)
		}
	}
}

func TestImportFromDryRunStoresNothing(t *testing.T) {
	c := newTestCLI(t)
	r := c.run("", "import", "--from", "chatgpt", "--dry-run", "ingest/testdata/chatgpt")
	if r.code != 0 {
		t.Fatalf("exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{`"records":5`, `"counts":[{"kind":"conversation","namespace":"source:chatgpt","count":5}]`, `"location":"conversations.json#conv-broken"`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("dry run lacks %s:\n%s", want, r.stdout)
		}
	}
	// A dry run does not even create the store.
	if r := c.run("", "browse", "--query", `{}`); r.code != 4 || !strings.Contains(r.stderr, "no store") {
		t.Errorf("after a dry run: exit %d, %s", r.code, r.stderr)
	}
}

func TestImportHelpListsTheSources(t *testing.T) {
	c := newTestCLI(t)
	r := c.run("", "import", "--help")
	for _, name := range []string{"chatgpt"} {
		if !strings.Contains(r.stdout, "  "+name+" ") {
			t.Errorf("help lacks %s:\n%s", name, r.stdout)
		}
	}
}

func TestImportFromMem0HistorySupersedesEarlierVersions(t *testing.T) {
	c := newTestCLI(t)
	path := ingesttest.SQLite(t, "ingest/testdata/mem0/history.sql", "history.db")
	sum := importFromRun(t, c, 2, path) // detected; h7 has no text, so exit 2
	if sum.Stored != 4 || sum.Failed != 0 || len(sum.Skipped) != 1 || sum.Skipped[0].Location != "history.db#history/h7" {
		t.Fatalf("first import %+v", sum)
	}
	sum = importFromRun(t, c, 2, path, "--from", "mem0")
	if sum.Stored != 0 || sum.Replayed != 4 || sum.Failed != 0 {
		t.Fatalf("re-import %+v", sum)
	}
	var page contract.BrowsePage
	c.okJSON(&page, "", "browse", "--query", `{"status":"superseded"}`)
	if page.Total != 2 {
		t.Errorf("want the 2 earlier versions superseded, got %d", page.Total)
	}
	c.okJSON(&page, "", "browse", "--query", `{"status":"active"}`)
	if page.Total != 2 {
		t.Errorf("want 2 active memories, got %d", page.Total)
	}
}

// Every source replays: a second import of the same data stores nothing new,
// and every record names where it came from.
func TestImportFromEverySourceIsAReplay(t *testing.T) {
	cases := []struct{ from, path string }{
		{"chatgpt", "ingest/testdata/chatgpt"},
		{"claude-code", "ingest/testdata/claude-code"},
		{"basic-memory", "ingest/testdata/basic-memory/coffee"},
		{"letta", "ingest/testdata/letta/support.af"},
		{"letta", "ingest/testdata/letta/support-twice.json"},
		{"mem0", "ingest/testdata/mem0/pages"},
	}
	for _, tc := range cases {
		t.Run(tc.from+" "+filepath.Base(tc.path), func(t *testing.T) {
			c := newTestCLI(t)
			first := importFromRun(t, c, 2, "--from", tc.from, tc.path)
			if first.Stored == 0 || first.Failed != 0 || len(first.Skipped) == 0 {
				t.Fatalf("first import %+v (each fixture has a bad entry)", first)
			}
			again := importFromRun(t, c, 2, "--from", tc.from, tc.path)
			if again.Stored != 0 || again.Replayed != first.Stored || len(again.Skipped) != len(first.Skipped) {
				t.Fatalf("second import %+v after %+v", again, first)
			}
			var page contract.BrowsePage
			c.okJSON(&page, "", "browse", "--query", `{"limit":100}`)
			if page.Total != first.Stored {
				t.Errorf("store holds %d records, the import stored %d", page.Total, first.Stored)
			}
			for _, r := range page.Records {
				if r.Meta.Source.Kind != contract.SourceImport || !strings.HasPrefix(contract.Deref(r.Meta.Source.ID), tc.from+":") {
					t.Errorf("record %s does not trace back: %+v", r.ID, r.Meta.Source)
				}
			}
		})
	}
}

func TestImportFromLangGraphIsAReplay(t *testing.T) {
	url := ingesttest.Postgres(t, "ingest/testdata/langgraph/store.sql")
	c := newTestCLI(t)
	first := importFromRun(t, c, 2, url, "--place", "team:acme")
	if first.Stored != 3 || len(first.Skipped) != 1 {
		t.Fatalf("first import %+v", first)
	}
	again := importFromRun(t, c, 2, url, "--place", "team:acme")
	if again.Stored != 0 || again.Replayed != 3 {
		t.Fatalf("second import %+v", again)
	}
	var page contract.BrowsePage
	c.okJSON(&page, "", "browse", "--query", `{"limit":100}`)
	expiring := 0
	for _, r := range page.Records {
		if r.ExpiresAt != nil {
			expiring++
		}
	}
	if page.Total != 3 || expiring != 1 {
		t.Errorf("records %d, with expiry %d", page.Total, expiring)
	}
}

func TestImportFromTextNamesSkipsByLocation(t *testing.T) {
	c := newTestCLI(t)
	r := c.run("", "import", "-o", "text", "--from", "letta", "ingest/testdata/letta/support.af")
	if r.code != 2 {
		t.Fatalf("exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"stored 8", "skipped 1", "support.af#agents/agent-7f1e/block_ids/block-missing", "names a block"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("text summary lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestImportDetection(t *testing.T) {
	c := newTestCLI(t)
	dir := t.TempDir()
	// A folder holding a CLAUDE.md and basic-memory notes fits two sources.
	for name, text := range map[string]string{"CLAUDE.md": "# Rules\n\nBe brief.\n",
		"note.md": "---\ntitle: Note\npermalink: note\n---\n\n- [fact] water boils at 100C\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := c.run("", "import", dir)
	if r.code != 2 || !strings.Contains(r.stderr, "fits more than one source; name it with --from claude-code or --from basic-memory") {
		t.Errorf("ambiguous folder: exit %d, %s", r.code, r.stderr)
	}
	empty := t.TempDir()
	r = c.run("", "import", empty)
	if r.code != 2 || !strings.Contains(r.stderr, "cannot tell which system") {
		t.Errorf("folder of nothing: exit %d, %s", r.code, r.stderr)
	}
	r = c.run("", "import", "--dry-run", "some.jsonl")
	if r.code != 2 || !strings.Contains(r.stderr, "--dry-run goes with --from SOURCE: some.jsonl is read as the contract's JSONL") {
		t.Errorf("dry run of JSONL: exit %d, %s", r.code, r.stderr)
	}
}

// ccLine is one Claude Code transcript line of the session below.
func ccLine(n int, role, text string) string {
	b, _ := json.Marshal(map[string]any{
		"type": role, "sessionId": "9a0e5c11-2222-4333-8444-555566667777", "cwd": "/home/ann/src/shop",
		"uuid": "u" + string(rune('a'+n)), "timestamp": "2025-07-0" + string(rune('1'+n/4)) + "T09:00:0" + string(rune('0'+n%4)) + ".000Z",
		"message": map[string]any{"role": role, "content": text},
	})
	return string(b) + "\n"
}

// An imported transcript keeps who said each turn, so a question that names
// the speaker finds that speaker's turn first in hybrid fetch, ahead of the
// turn that says the question's words more often.
func TestImportedTranscriptAnswersWhoSaidIt(t *testing.T) {
	c := newTestCLI(t)
	dir := filepath.Join(t.TempDir(), "projects", "-home-ann-src-shop")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	turns := []struct{ role, text string }{
		{"user", "The retry budget keeps running out: with a retry budget of three, the retry loop spends the whole retry budget on every deploy."},
		{"assistant", "Raise the retry budget to five and add jitter between attempts."},
		{"user", "And the cache warmup after a deploy?"},
		{"assistant", "Warm the cache from the last snapshot before traffic arrives."},
		{"user", "Which port does the admin panel listen on?"},
		{"assistant", "The admin panel listens on 8443 behind the VPN."},
		{"user", "Should the nightly export run before or after the backup?"},
		{"assistant", "After the backup, so the export never reads a half-written table."},
	}
	var transcript strings.Builder
	for i, tr := range turns {
		transcript.WriteString(ccLine(i, tr.role, tr.text))
	}
	path := filepath.Join(dir, "9a0e5c11-2222-4333-8444-555566667777.jsonl")
	if err := os.WriteFile(path, []byte(transcript.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	sum := importFromRun(t, c, 0, "--from", "claude-code", path)
	if sum.Stored != len(turns) {
		t.Fatalf("want one record per turn (%d), got %+v", len(turns), sum)
	}
	const q = "What did Claude say about the retry budget?"
	var kw, hy contract.FetchPage
	c.okJSON(&kw, "", "fetch", "--mode", "keyword", q)
	c.okJSON(&hy, "", "fetch", "--mode", "hybrid", q)
	if len(kw.Hits) == 0 || len(hy.Hits) == 0 {
		t.Fatalf("no hits: keyword %+v hybrid %+v", kw, hy)
	}
	// The words alone favour the user's turn, which says them three times.
	if got := kw.Hits[0].Text; !strings.HasPrefix(got, "user: The retry budget") {
		t.Errorf("keyword's best hit is %q, want the user's turn (the test no longer shows the speaker lever)", got)
	}
	best := hy.Hits[0]
	if best.Text != "assistant: Raise the retry budget to five and add jitter between attempts." {
		t.Errorf("hybrid's best hit for %q is %q, want Claude's answer", q, best.Text)
	}
	if a := best.Meta.ObservedActor; a == nil || a.ID != "assistant" || contract.Deref(a.Name) != "Claude" {
		t.Errorf("best hit's speaker %+v, want assistant Claude", best.Meta.ObservedActor)
	}
	if r := best.Meta.Turns; r == nil || r.First != 1 || r.Last != 1 {
		t.Errorf("best hit's place in the session %+v, want turn 1", r)
	}
	// The user has no name in a transcript; a turn's text starts with its
	// role, so "the user" and "the assistant" find theirs (each question
	// shares a word with both turns).
	for _, tc := range []struct{ q, want string }{
		{"What did the user say about the VPN port?", "user: Which port does the admin panel listen on?"},
		{"What did the assistant say about the VPN port?", "assistant: The admin panel listens on 8443 behind the VPN."},
	} {
		var p contract.FetchPage
		c.okJSON(&p, "", "fetch", "--mode", "hybrid", tc.q)
		if len(p.Hits) == 0 || p.Hits[0].Text != tc.want {
			t.Errorf("%q: best hit %+v, want %q", tc.q, p.Hits, tc.want)
		}
	}
}

// TestImportFollowAsAProcess runs `mnemo import --from claude-code --follow`
// (this test binary standing in for mnemo) while a session writes its
// transcript: each new line is stored once, and only when whole; another
// command reads the records meanwhile (the follow holds the store and shares
// it); SIGINT ends the follow with the summary of everything it stored.
func TestImportFollowAsAProcess(t *testing.T) {
	c := newTestCLI(t)
	dir := filepath.Join(c.home, "claude", "projects", "-home-ann-src-shop")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	session := filepath.Join(dir, "s1.jsonl")
	line := func(uuid, text string) string {
		return `{"type":"user","sessionId":"s1","cwd":"/home/ann/src/shop","uuid":"` + uuid +
			`","parentUuid":null,"timestamp":"2025-07-01T09:00:00Z","message":{"role":"user","content":"` + text + `"}}` + "\n"
	}
	write := func(text string) {
		f, err := os.OpenFile(session, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(text); err != nil {
			t.Fatal(err)
		}
		_ = f.Close()
	}
	write(line("u1", "Why does the checkout test fail?") + line("u2", "It sleeps two seconds."))

	exe, _ := os.Executable()
	cmd := exec.Command(exe, "import", "--from", "claude-code", "--follow", filepath.Join(c.home, "claude"))
	cmd.Env = shellEnv(t, c)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	expect := func(want string) {
		t.Helper()
		deadline := time.After(15 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the follow ended before saying %q", want)
				}
				if strings.Contains(l, want) {
					return
				}
			case <-deadline:
				t.Fatalf("the follow did not say %q within 15 s", want)
			}
		}
	}
	expect("stored 2 new records (0 already held); following")

	third := line("u3", "Remove the sleep then.")
	write(third[:30]) // a session in the middle of writing a line
	time.Sleep(1500 * time.Millisecond)
	write(third[30:])
	expect("stored 1 new record (3 in all)")

	var page contract.ListPage
	c.okJSON(&page, "", "list")
	if len(page.Items) != 3 {
		t.Fatalf("list while the follow holds the store: %d records, want 3", len(page.Items))
	}
	for _, it := range page.Items {
		if it.Kind != contract.KindConversation {
			t.Errorf("record %s is a %s", it.ID, it.Kind)
		}
	}

	_ = cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() {
		for range lines {
		}
		done <- cmd.Wait()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the follow after SIGINT: %v (stdout %s)", err, stdout.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the follow did not end within 10 s of SIGINT")
	}
	var sum importer.Summary
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil || sum.Stored != 3 || sum.Failed != 0 || len(sum.Skipped) != 0 {
		t.Fatalf("summary %q: %+v %v", stdout.String(), sum, err)
	}
}

func TestImportFollowNeedsClaudeCode(t *testing.T) {
	c := newTestCLI(t)
	for _, args := range [][]string{
		{"import", "--follow", "ingest/testdata/chatgpt/conversations.json", "--from", "chatgpt"},
		{"import", "--follow", "--dry-run", "--from", "claude-code", "ingest/testdata/claude-code"},
	} {
		r := c.run("", args...)
		if r.code != 2 || !strings.Contains(r.stderr, "--follow goes with --from claude-code") {
			t.Errorf("%v: exit %d, %q", args, r.code, r.stderr)
		}
	}
	if r := c.run("", "import", "--follow", "-"); r.code != 2 || !strings.Contains(r.stderr, "--follow goes with --from SOURCE") {
		t.Errorf("import --follow of JSONL: exit %d, %q", r.code, r.stderr)
	}
}
