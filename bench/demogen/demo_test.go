package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"mnemo/contract"
)

const demoPath = "../../testdata/demo/demo.jsonl"

// TestDemoFileIsUpToDate fails when the committed corpus differs from what the
// generator writes now: regenerate with `go run ./bench/demogen > testdata/demo/demo.jsonl`.
func TestDemoFileIsUpToDate(t *testing.T) {
	want, err := os.ReadFile(demoPath)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := writeDemo(&got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("%s is stale or the generator is not deterministic; regenerate it", demoPath)
	}
}

type demoLine struct {
	Item      json.RawMessage `json:"item"`
	Status    *string         `json:"status"`
	ExpiresAt *string         `json:"expires_at"`
}

type parsedLine struct {
	item      contract.StoreItem
	status    contract.Status
	expiresAt *time.Time
}

func readDemo(t *testing.T) []parsedLine {
	t.Helper()
	f, err := os.Open(demoPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []parsedLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		var l demoLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		var p parsedLine
		if err := json.Unmarshal(l.Item, &p.item); err != nil {
			t.Fatalf("line %d: item does not parse: %v", n, err)
		}
		if err := p.item.Validate(); err != nil {
			t.Fatalf("line %d: item is invalid: %v", n, err)
		}
		p.status = contract.StatusActive
		if l.Status != nil {
			st, ok := contract.ParseStatus(*l.Status)
			if !ok || st == contract.StatusSuperseded {
				t.Fatalf("line %d: status %q cannot be imported", n, *l.Status)
			}
			p.status = st
		}
		if l.ExpiresAt != nil {
			at, err := contract.ParseTime(*l.ExpiresAt)
			if err != nil {
				t.Fatalf("line %d: expires_at: %v", n, err)
			}
			p.expiresAt = &at
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDemoLinesAreValidAndDistinct(t *testing.T) {
	lines := readDemo(t)
	if len(lines) < 1400 || len(lines) > 1600 {
		t.Fatalf("demo has %d records, want about 1,500", len(lines))
	}
	seen := map[string]int{}
	for i, l := range lines {
		id := l.item.Fingerprint()
		if prev, dup := seen[id]; dup {
			t.Fatalf("lines %d and %d have the same fingerprint %s", prev+1, i+1, id)
		}
		seen[id] = i
		if l.item.Meta.ObservedAt == nil {
			t.Errorf("line %d has no observed_at", i+1)
		}
	}
}

func TestDemoMix(t *testing.T) {
	lines := readDemo(t)
	kinds := map[contract.ItemKind]int{}
	learningKinds := map[contract.LearningKind]int{}
	namespaces := map[string]int{}
	sources := map[contract.SourceKind]int{}
	languages := map[string]int{}
	statuses := map[contract.Status]int{}
	var later, expired, markdownDocs, fenced, toolCalls, turnRanges, threads, agents, tagged, evidenced int
	var first, last time.Time
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	for _, l := range lines {
		it := l.item
		m := it.Meta
		kinds[it.Type]++
		namespaces[m.Namespace.String()]++
		sources[m.SourceKindOf()]++
		statuses[l.status]++
		if it.Type == contract.KindLearning {
			learningKinds[it.Kind]++
			if it.Evidence != nil {
				evidenced++
			}
		}
		if m.Language != nil {
			languages[*m.Language]++
		}
		if it.Mime != nil && *it.Mime == "text/markdown" {
			markdownDocs++
			if strings.Contains(it.Body.Text, "```") {
				fenced++
			}
		}
		for _, turn := range it.Turns {
			toolCalls += len(turn.ToolCalls)
		}
		if m.Turns != nil {
			turnRanges++
		}
		if m.ThreadID != nil {
			threads++
		}
		if m.AgentID != nil {
			agents++
		}
		if len(m.Tags) > 0 {
			tagged++
		}
		if l.expiresAt != nil {
			if l.expiresAt.Year() == 2027 {
				later++
			}
			if l.expiresAt.Before(now) {
				expired++
			}
		}
		at := *m.ObservedAt
		if first.IsZero() || at.Before(first) {
			first = at
		}
		if at.After(last) {
			last = at
		}
	}
	n := len(lines)
	share := func(c int) float64 { return float64(c) / float64(n) }

	if s := share(kinds[contract.KindLearning]); s < 0.35 || s > 0.5 {
		t.Errorf("learnings are %.0f%% of the demo, want 35..50%%", 100*s)
	}
	if s := share(kinds[contract.KindDocument]); s < 0.25 || s > 0.4 {
		t.Errorf("documents are %.0f%% of the demo, want 25..40%%", 100*s)
	}
	if s := share(kinds[contract.KindConversation]); s < 0.15 || s > 0.3 {
		t.Errorf("conversations are %.0f%% of the demo, want 15..30%%", 100*s)
	}
	for _, k := range contract.LearningKinds() {
		if learningKinds[k] < 30 {
			t.Errorf("only %d %s learnings", learningKinds[k], k)
		}
	}
	for _, ns := range []string{"root", "team:acme", "team:acme/agent:writer", "team:acme/agent:researcher",
		"team:acme/agent:support", "team:acme/agent:researcher/agent:scout", "user:priya", "team:acme/service:nightly-digest"} {
		if namespaces[ns] < 10 {
			t.Errorf("namespace %s has %d records, want at least 10", ns, namespaces[ns])
		}
	}
	for _, k := range contract.SourceKinds() {
		if sources[k] == 0 {
			t.Errorf("no record has source kind %s", k)
		}
	}
	for _, lang := range []string{"go", "python", "typescript", "rust", "sql", "shell", "en", "de", "fr", "es", "ja"} {
		if languages[lang] < 5 {
			t.Errorf("language %s has %d records, want at least 5", lang, languages[lang])
		}
	}
	if s := share(statuses[contract.StatusCandidate]); s < 0.04 || s > 0.06 {
		t.Errorf("candidates are %.1f%%, want about 5%%", 100*s)
	}
	if later < 20 || expired < 3 {
		t.Errorf("expiry: %d in 2027 and %d already past, want some of both", later, expired)
	}
	if markdownDocs < 100 || fenced < 10 {
		t.Errorf("%d markdown documents, %d with code fences", markdownDocs, fenced)
	}
	if toolCalls < 200 || turnRanges < 50 || threads < 300 || agents < 500 {
		t.Errorf("conversation shape: %d tool calls, %d turn ranges, %d threads, %d agent ids", toolCalls, turnRanges, threads, agents)
	}
	if share(tagged) < 0.9 || evidenced < kinds[contract.KindLearning]/2 {
		t.Errorf("%d tagged records, %d learnings with evidence", tagged, evidenced)
	}
	if first.Year() != 2026 || last.Year() != 2026 || last.Sub(first) < 150*24*time.Hour {
		t.Errorf("observed times run from %s to %s, want about six months of 2026", first, last)
	}
}
