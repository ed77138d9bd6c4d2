package uitest

import (
	"context"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"mnemo/contract"
	"mnemo/engine/memory"
)

// Now is the fixed "now" of every TUI test: relative times never change between runs.
func Now() time.Time { return time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC) }

// Fixture builds the fixed store of the TUI tests: 36 records over three kinds,
// four namespaces, tags, folders, file paths, languages, repos, threads, agents,
// tool calls and all three statuses, stored at known times before Now.
func Fixture() (*memory.Engine, error) {
	clock := Now().Add(-40 * 24 * time.Hour)
	e := memory.New(memory.WithClock(func() time.Time { return clock }))
	ctx := context.Background()
	meta := func(ns string, tags ...string) contract.MemoryMeta {
		m := contract.MemoryMeta{Namespace: contract.MustNamespace(ns), Tags: tags}
		return m
	}
	str := contract.Ptr[string]
	type entry struct {
		item   contract.StoreItem
		status contract.Status
	}
	var items []entry
	add := func(it contract.StoreItem, st contract.Status) { items = append(items, entry{it, st}) }

	learnings := []struct {
		text string
		kind contract.LearningKind
		conf float32
		ns   string
		tags []string
		st   contract.Status
	}{
		{"prefers tabs over spaces", contract.LearningPreference, 0.8, "team:acme/agent:writer", []string{"style"}, contract.StatusActive},
		{"uses British spelling in docs", contract.LearningPreference, 0.75, "team:acme/agent:writer", []string{"style", "docs"}, contract.StatusActive},
		{"wants weekly summaries on Fridays", contract.LearningPreference, 0.6, "team:acme", []string{"schedule"}, contract.StatusCandidate},
		{"the deploy runs from the ops repo", contract.LearningFact, 0.9, "team:acme/agent:ops", []string{"deploy"}, contract.StatusActive},
		{"staging database is postgres 16", contract.LearningFact, 0.95, "team:acme/agent:ops", []string{"deploy", "db"}, contract.StatusActive},
		{"release notes go in CHANGELOG.md", contract.LearningProcedure, 0.7, "team:acme/agent:writer", []string{"docs"}, contract.StatusActive},
		{"never force-push to main", contract.LearningCorrection, 1.0, "team:acme", []string{"git"}, contract.StatusActive},
		{"likes short commit subjects", contract.LearningPreference, 0.5, "user:kim", []string{"git", "style"}, contract.StatusCandidate},
		{"timezone is Europe/Berlin", contract.LearningFact, 0.85, "user:kim", nil, contract.StatusActive},
		{"prefers spaces over tabs", contract.LearningPreference, 0.4, "team:acme/agent:writer", []string{"style"}, contract.StatusActive},
		{"runs tests before every push", contract.LearningProcedure, 0.65, "user:kim", []string{"git"}, contract.StatusActive},
		{"on-call rotation changes Mondays", contract.LearningFact, 0.55, "team:acme/agent:ops", []string{"schedule"}, contract.StatusCandidate},
	}
	for _, l := range learnings {
		it := contract.Learning(l.text, l.kind, l.conf, meta(l.ns, l.tags...))
		add(it, l.st)
	}
	for i, f := range []struct{ folder, file, lang, title, body string }{
		{"src/engine", "src/engine/bolt.go", "go", "bolt engine", "The bolt engine keeps records in bbolt."},
		{"src/engine", "src/engine/index.go", "go", "index", "Bleve indexes the rendered text."},
		{"src/ui", "src/ui/root.go", "go", "root model", "The root model routes keys."},
		{"src/ui/views", "src/ui/views/explore.go", "go", "explore view", "Facets on the left, records on the right."},
		{"docs", "docs/guide.md", "markdown", "Guide", "# Guide\n\nRun `mnemo import FILE.jsonl` first.\n\n- explore\n- browse"},
		{"docs", "docs/keys.md", "markdown", "Keys", "# Keys\n\nPress `?` for help."},
		{"scripts", "scripts/seed.py", "python", "seed script", "Seeds the demo corpus."},
		{"scripts", "scripts/bench.sh", "shell", "bench", "Runs the benchmarks."},
	} {
		m := meta("team:acme", "code")
		m.Folder, m.FilePath, m.Language = str(f.folder), str(f.file), str(f.lang)
		m.Repo = str("github.com/acme/mnemo")
		m.Source = contract.SourceRef{Kind: contract.SourceFolder, ID: str("acme-src")}
		m.Workspace = str("acme")
		it := contract.Document(f.body, m)
		it.Title = str(f.title)
		if f.lang == "markdown" {
			it.Mime = str("text/markdown")
		}
		st := contract.StatusActive
		if i == 7 {
			st = contract.StatusCandidate
		}
		add(it, st)
	}
	for i := 0; i < 8; i++ {
		m := meta("team:acme/agent:writer", "chat")
		thread := fmt.Sprintf("thread-%d", i%3+1)
		m.ThreadID = str(thread)
		m.AgentID = str("writer")
		m.Source = contract.SourceRef{Kind: contract.SourceConversation, ID: str(thread)}
		turns := []contract.Turn{
			{Role: contract.RoleUser, Text: fmt.Sprintf("question %d about the release plan", i+1)},
			{Role: contract.RoleAssistant, Text: fmt.Sprintf("answer %d: the plan is in the docs", i+1)},
		}
		if i%2 == 0 {
			turns[1].ToolCalls = []contract.ToolCallRef{{Name: "read_plan", ID: str(fmt.Sprintf("call-%d", i))}}
			m.ToolCall = &contract.ToolCallRef{Name: "read_plan"}
		}
		add(contract.Conversation(turns, m), contract.StatusActive)
	}
	for i := 0; i < 8; i++ {
		m := meta("user:kim", "note")
		m.URL = str(fmt.Sprintf("https://notes.example/%d", i))
		m.Source = contract.SourceRef{Kind: contract.SourceLink}
		add(contract.Document(fmt.Sprintf("note %d: remember to water the plants", i+1), m), contract.StatusActive)
	}
	var ids []string
	for i, en := range items {
		clock = Now().Add(-time.Duration(40-i) * 24 * time.Hour).Add(time.Duration(i) * time.Minute)
		rec, err := e.StoreWith(ctx, en.item, contract.WriteOptions{Status: en.status})
		if err != nil {
			return nil, fmt.Errorf("fixture item %d: %w", i, err)
		}
		ids = append(ids, rec.ID)
	}
	// "prefers spaces over tabs" was superseded by "prefers tabs over spaces".
	clock = Now().Add(-2 * 24 * time.Hour)
	if _, err := e.Supersede(ctx, contract.SupersedeRequest{ID: ids[9], By: ids[0]}); err != nil {
		return nil, err
	}
	return e, nil
}

// TimerMsg is what a Timer command answers in tests: the duration asked for
// and the message it would send when it fired.
type TimerMsg struct {
	D    time.Duration
	Fire func(time.Time) tea.Msg
}

// Timer is a Common.Timer for tests: it answers at once with a TimerMsg, and
// Drain fires the short ones (debounces, spinner frames) and drops the long
// ones (toast expiry), so tests neither sleep nor race the clock.
func Timer(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
	return func() tea.Msg { return TimerMsg{D: d, Fire: fn} }
}

// ShortTimer is the longest timer Drain fires.
const ShortTimer = 200 * time.Millisecond

// Drain runs cmd and feeds its messages back through update until nothing is
// left, the way the Bubble Tea runtime would but synchronously. Timers made by
// Timer fire at once when short and are dropped when long; any other command
// that does not answer within wait is dropped.
func Drain(update func(tea.Msg) tea.Cmd, cmd tea.Cmd, wait time.Duration) {
	queue := []tea.Cmd{cmd}
	for steps := 0; len(queue) > 0 && steps < 10000; steps++ {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		msg := run(c, wait)
		if msg == nil {
			continue
		}
		if batch, ok := msg.(tea.BatchMsg); ok {
			queue = append(queue, batch...)
			continue
		}
		if t, ok := msg.(TimerMsg); ok {
			if t.D <= ShortTimer {
				fired := t.Fire(time.Time{})
				queue = append(queue, func() tea.Msg { return fired })
			}
			continue
		}
		queue = append(queue, update(msg))
	}
}

func run(c tea.Cmd, wait time.Duration) tea.Msg {
	ch := make(chan tea.Msg, 1)
	go func() { ch <- c() }()
	select {
	case msg := <-ch:
		return msg
	case <-time.After(wait):
		return nil
	}
}
