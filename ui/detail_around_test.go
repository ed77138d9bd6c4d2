package ui

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/memory"
	"mnemo/ui/common"
)

// A turn stored as a record of its own (as imports store transcripts) opens
// with the turns around it in its thread: three before and three after,
// numbered, its own marked, and nothing of another thread or namespace.
func TestDetailShowsTheTurnsAroundATurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := memory.New()
	at := time.Date(2025, 7, 1, 9, 0, 0, 0, time.UTC)
	store := func(ns, thread string, i uint32, text string) string {
		meta := contract.MemoryMeta{Namespace: contract.MustNamespace(ns), ThreadID: contract.Ptr(thread),
			Turns: &contract.TurnRange{First: i, Last: i}, ObservedAt: contract.Ptr(at.Add(time.Duration(i%1000) * time.Minute)),
			Source: contract.SourceRef{Kind: contract.SourceConversation}}
		role := contract.RoleUser
		if i%2 == 1 {
			role = contract.RoleAssistant
		}
		r, err := contract.Store(ctx, e, contract.Conversation([]contract.Turn{{Role: role, Text: text}}, meta))
		if err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	var ids []string
	for i := range uint32(9) {
		ids = append(ids, store("agent:claude-code/project:shop", "s1", i, fmt.Sprintf("turn number %d of the checkout session", i)))
	}
	store("agent:claude-code/project:shop", "s2", 3, "another session's turn three")
	store("agent:claude-code/project:other", "s1", 4, "another project's turn four")

	h := harnessOn(t, e, "mem", 100, 40)
	h.send(common.OpenRecordMsg{ID: ids[4]})
	h.contains("Around it in the thread")
	for i := 1; i <= 7; i++ {
		h.contains(fmt.Sprintf("turn number %d of", i))
	}
	h.contains("▸ 4")
	h.lacks("turn number 0 of")
	h.lacks("turn number 8 of")
	h.lacks("another session's")
	h.lacks("another project's")

	// A turn numbered near the top of uint32 opens (its window does not wrap).
	high := store("agent:claude-code/project:shop", "s3", math.MaxUint32-3, "the last turns a thread can number")
	store("agent:claude-code/project:shop", "s3", math.MaxUint32, "the very last turn")
	h.send(common.OpenRecordMsg{ID: high})
	h.contains("the very last turn")

	// The first turn has none before it.
	h.send(common.OpenRecordMsg{ID: ids[0]})
	h.contains("▸ 0")
	h.contains("turn number 3 of")
	h.lacks("turn number 4 of")
}
