package ingest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"mnemo/contract"
)

// checkSink fails the fuzz run on any record that would be half-stored:
// invalid, or without a location to trace it back.
type checkSink struct{ t *testing.T }

func (s checkSink) Store(item contract.StoreItem, location string, _ *time.Time, by string) error {
	if err := item.Validate(); err != nil {
		s.t.Fatalf("%s: invalid record reached the store: %v", location, err)
	}
	if location == "" || item.Meta.Source.ID == nil {
		s.t.Fatalf("record without a location: %+v", item)
	}
	if item.Type == contract.KindConversation && (len(item.Turns) != 1 || item.Meta.ObservedActor == nil || item.Meta.ObservedActor.ID == "") {
		s.t.Fatalf("%s: a conversation record is one turn with its speaker, got %d turns, actor %+v", location, len(item.Turns), item.Meta.ObservedActor)
	}
	if by == item.Fingerprint() {
		s.t.Fatalf("%s: superseded by itself", location)
	}
	return nil
}

func (s checkSink) Skip(k Skip) {
	if k.Location == "" || k.Reason == "" {
		s.t.Fatalf("skip without location or reason: %+v", k)
	}
}

func (checkSink) Omit(string) {}

// fuzzFile runs src on data written to name in a fresh folder.
func fuzzFile(f *testing.F, src Source, name string, seeds ...string) {
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		err := src.Read(context.Background(), path, &Placed{Source: src.Name(), Next: checkSink{t}})
		if err != nil && contract.KindOf(err) != contract.KindInvalidRequest {
			t.Fatalf("a bad file is an invalid request, not %v", err)
		}
	})
}

func FuzzChatGPT(f *testing.F) {
	fuzzFile(f, ChatGPT{}, "conversations.json", "testdata/chatgpt/conversations.json")
}

func FuzzClaudeCodeTranscript(f *testing.F) {
	fuzzFile(f, ClaudeCode{}, "projects/p/s.jsonl", "testdata/claude-code/projects/-home-ann-src-shop/5d1c7a2e-1111-4222-8333-444455556666.jsonl")
}

func FuzzClaudeCodeMemoryFile(f *testing.F) {
	fuzzFile(f, ClaudeCode{}, "CLAUDE.md", "testdata/claude-code/shop/CLAUDE.md")
}

func FuzzBasicMemoryNote(f *testing.F) {
	fuzzFile(f, BasicMemory{}, "note.md", "testdata/basic-memory/coffee/brewing/coffee-brewing-methods.md", "testdata/basic-memory/coffee/grinding.md")
}

func FuzzLetta(f *testing.F) {
	fuzzFile(f, Letta{}, "agent.af", "testdata/letta/support.af", "testdata/letta/support-twice.json")
}

func FuzzMem0Page(f *testing.F) {
	fuzzFile(f, Mem0{}, "page.json", "testdata/mem0/pages/page-1.json", "testdata/mem0/pages/page-2.json")
}
