// Package metacodectest holds the metadata every codec test encodes: each
// field set and unset, the tri-states, empty against absent lists, and
// strings that are empty, long or not ASCII. The goldens of engine/bolt and
// engine/postgres were written from these by the codecs of commit b344131,
// so a codec that changes a byte fails them.
package metacodectest

import (
	"strings"
	"time"

	"mnemo/contract"
)

// Meta is one named metadata value.
type Meta struct {
	Name string
	Text string
	Meta contract.MemoryMeta
}

// Metas are the fixtures, in a fixed order.
func Metas() []Meta {
	p := contract.Ptr[string]
	at := time.Date(2026, 3, 14, 15, 9, 26, 535897932, time.UTC)
	before := time.Date(1969, 7, 20, 20, 17, 40, 1, time.UTC)
	return []Meta{
		{Name: "empty", Text: "", Meta: contract.MemoryMeta{}},
		{Name: "namespace only", Text: "a note", Meta: contract.MemoryMeta{Namespace: contract.MustNamespace("team:acme/agent:ci")}},
		{Name: "every field", Text: "every field set, ünïcode and a tab\t", Meta: contract.MemoryMeta{
			Namespace: contract.MustNamespace("team:acme/user:ana/agent:x"),
			Workspace: p("ws"), Folder: p("src/app"), FilePath: p("src/app/main.go"), Language: p("go"),
			Repo: p("github.com/acme/app"), Commit: p("b344131"), URL: p("https://example.com/a?b=c&d=<e>"),
			ThreadID: p("thread-7"), Turns: &contract.TurnRange{First: 3, Last: 1 << 31},
			AgentID: p("agent:x"), ToolCall: &contract.ToolCallRef{Name: "grep", ID: p("call-1")},
			Source: contract.SourceRef{Kind: contract.SourceConversation, ID: p("conv-9")},
			Tags:   []string{"billing", "ünï", ""}, ObservedAt: &at, Derive: contract.Ptr(true),
			ObservedActor: &contract.ObservedActor{ID: "u1", Name: p("Ana")},
		}},
		{Name: "empty strings and zeros", Text: "x", Meta: contract.MemoryMeta{
			Workspace: p(""), Turns: &contract.TurnRange{}, ToolCall: &contract.ToolCallRef{},
			Source: contract.SourceRef{Kind: contract.SourceAgent, ID: p("")}, Tags: []string{},
			Derive: contract.Ptr(false), ObservedActor: &contract.ObservedActor{},
		}},
		{Name: "observed before 1970", Text: "old", Meta: contract.MemoryMeta{ObservedAt: &before, Source: contract.SourceRef{Kind: contract.SourceImport}}},
		{Name: "long text and many tags", Text: strings.Repeat("long text ", 300), Meta: contract.MemoryMeta{
			Tags: strings.Split(strings.Repeat("t,", 200)+"last", ","), URL: p(strings.Repeat("u", 200)),
		}},
	}
}
