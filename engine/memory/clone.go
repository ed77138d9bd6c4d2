package memory

import (
	"slices"

	"mnemo/contract"
)

// The engine hands out deep copies so a caller mutating a returned item or meta
// can never change what the engine holds (and the race detector stays quiet).

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func cloneMeta(m contract.MemoryMeta) contract.MemoryMeta {
	out := m
	out.Workspace = clonePtr(m.Workspace)
	out.Folder = clonePtr(m.Folder)
	out.FilePath = clonePtr(m.FilePath)
	out.Language = clonePtr(m.Language)
	out.Repo = clonePtr(m.Repo)
	out.Commit = clonePtr(m.Commit)
	out.URL = clonePtr(m.URL)
	out.ThreadID = clonePtr(m.ThreadID)
	out.Turns = clonePtr(m.Turns)
	out.AgentID = clonePtr(m.AgentID)
	if m.ToolCall != nil {
		out.ToolCall = &contract.ToolCallRef{Name: m.ToolCall.Name, ID: clonePtr(m.ToolCall.ID)}
	}
	out.Source = contract.SourceRef{Kind: m.Source.Kind, ID: clonePtr(m.Source.ID)}
	out.Tags = slices.Clone(m.Tags)
	out.ObservedAt = clonePtr(m.ObservedAt)
	out.Derive = clonePtr(m.Derive)
	if m.ObservedActor != nil {
		out.ObservedActor = &contract.ObservedActor{ID: m.ObservedActor.ID, Name: clonePtr(m.ObservedActor.Name)}
	}
	return out
}

func cloneItem(it contract.StoreItem) contract.StoreItem {
	out := it
	out.Title = clonePtr(it.Title)
	out.Mime = clonePtr(it.Mime)
	out.Evidence = clonePtr(it.Evidence)
	if it.Turns != nil {
		out.Turns = make([]contract.Turn, len(it.Turns))
		for i, t := range it.Turns {
			nt := t
			nt.At = clonePtr(t.At)
			if t.ToolCalls != nil {
				nt.ToolCalls = make([]contract.ToolCallRef, len(t.ToolCalls))
				for j, c := range t.ToolCalls {
					nt.ToolCalls[j] = contract.ToolCallRef{Name: c.Name, ID: clonePtr(c.ID)}
				}
			}
			out.Turns[i] = nt
		}
	}
	out.Meta = cloneMeta(it.Meta)
	return out
}
