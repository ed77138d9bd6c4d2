package ui

import (
	tea "charm.land/bubbletea/v2"

	"mnemo/contract"
	"mnemo/engine/curate"
	"mnemo/ui/common"
	"mnemo/views/forget"
)

// The forget flow: a view asks (ForgetRequestMsg, ForgetScopeMsg), the shell
// counts a scope exactly, the dialog confirms, the shell keeps what goes for
// undo (when not too many) and forgets, and every view hears of it.

// maxUndo is the most records a forget keeps in memory to undo it.
const maxUndo = 10000

// undoEntry is one undoable step: a forget (its records), a resolution
// (its supersedes) or a dismissal (its cluster).
type undoEntry struct {
	records    []contract.Record
	superseded []curate.Done
	dismissed  *curate.Cluster
}

type forgottenMsg struct {
	count    int
	snapshot []contract.Record
	// gone are the ids forgotten, when known (by id, or a scope kept for undo).
	gone []string
	err  error
}

type restoredMsg struct {
	count int
	err   error
}

type scopeCountMsg struct {
	scope common.Scope
	count int
	err   error
}

// forgetMsg handles the flow's messages; ok is false for any other message.
func (m *model) forgetMsg(msg tea.Msg) (cmd tea.Cmd, ok bool) {
	switch msg := msg.(type) {
	case common.ForgetRequestMsg:
		if !m.c.ReadOnly {
			m.dialog = forget.New(m.c, msg.Target, msg.Target.Count <= maxUndo)
		}
	case common.ForgetScopeMsg:
		return m.forgetScope(), true
	case scopeCountMsg:
		m.done("count")
		switch {
		case msg.err != nil:
			return m.fail("count scope", msg.err), true
		case msg.count == 0:
			return m.say("nothing to forget in this scope"), true
		}
		s := msg.scope
		m.dialog = forget.New(m.c, common.ForgetTarget{Scope: &s, Count: msg.count}, msg.count <= maxUndo)
	case forget.ConfirmedMsg:
		m.dialog = nil
		m.start("forget", "forgetting")
		return m.forgetCmd(msg.Target), true
	case forget.CancelledMsg:
		m.dialog = nil
		return m.say("forget cancelled"), true
	case forgottenMsg:
		m.done("forget")
		if msg.err != nil {
			return m.fail("forget", msg.err), true
		}
		if len(msg.snapshot) > 0 {
			m.undo = append(m.undo, undoEntry{records: msg.snapshot})
		}
		m.detailOpen = false
		text := "forgot " + common.Plural(msg.count, "record", "records")
		if len(msg.snapshot) > 0 {
			text += " (" + common.KeyLabel(m.c.Keys.Undo.Keys()) + " undoes)"
		}
		return tea.Batch(m.say(text), m.changed(common.DataChangedMsg{Cause: common.ChangeForget, Gone: msg.gone})), true
	case common.UndoMsg:
		return m.undoLast(), true
	case restoredMsg:
		m.done("undo")
		if msg.err != nil {
			return m.fail("undo", msg.err), true
		}
		return tea.Batch(m.say("restored "+common.Plural(msg.count, "record", "records")),
			m.changed(common.DataChangedMsg{Cause: common.ChangeUndo})), true
	default:
		return nil, false
	}
	return nil, true
}

// undoable tells whether `u` undoes here (it is a key of some views only).
func (m *model) undoable() bool {
	if m.c.ReadOnly {
		return false
	}
	a, ok := m.c.Keys.Action("undo")
	return ok && a.In(m.focusedName())
}

// forgetScope counts the scope exactly before asking; the whole store (an
// empty scope) can never be forgotten, as the contract refuses an empty filter.
func (m *model) forgetScope() tea.Cmd {
	if m.c.ReadOnly {
		return nil
	}
	if m.c.Scope.IsRoot() {
		return m.say("narrow the scope first: the whole store cannot be forgotten at once")
	}
	scope := m.c.Scope
	engine, ctx := m.c.Engine, m.c.Context()
	m.start("count", "counting")
	return func() tea.Msg {
		page, err := engine.Browse(ctx, contract.BrowseQuery{Filter: scope.MustFilter(), Limit: 1})
		return scopeCountMsg{scope: scope, count: page.Total, err: err}
	}
}

// forgetCmd keeps what it removes for undo (when not too many), then forgets.
func (m *model) forgetCmd(t common.ForgetTarget) tea.Cmd {
	engine, ctx := m.c.Engine, m.c.Context()
	keep := t.Count <= maxUndo
	return func() tea.Msg {
		var snapshot []contract.Record
		var err error
		var target contract.ForgetTarget
		if t.Scope != nil {
			filter := t.Scope.MustFilter()
			if keep {
				snapshot, err = snapshotScope(ctx, engine, filter)
			}
			target = contract.ForgetFilter(filter)
		} else {
			if keep {
				snapshot, err = snapshotIDs(ctx, engine, t.IDs)
			}
			target = contract.ForgetIDs(t.IDs...)
		}
		if err != nil {
			return forgottenMsg{err: err}
		}
		rep, err := engine.Forget(ctx, target)
		if err != nil {
			return forgottenMsg{err: err}
		}
		return forgottenMsg{count: rep.Forgotten, snapshot: snapshot, gone: goneIDs(t, keep, snapshot, rep.Forgotten)}
	}
}

// goneIDs are the ids a forget removed, when they are known: the ids it was
// given, or the scope's records it kept for undo (when they are all that
// went: a writer may have added to the scope since); nil otherwise.
func goneIDs(t common.ForgetTarget, kept bool, snapshot []contract.Record, forgotten int) []string {
	if t.Scope == nil {
		return append([]string{}, t.IDs...)
	}
	if !kept || len(snapshot) != forgotten {
		return nil
	}
	ids := make([]string, len(snapshot))
	for i, r := range snapshot {
		ids[i] = r.ID
	}
	return ids
}

func (m *model) undoLast() tea.Cmd {
	if m.c.ReadOnly {
		return nil
	}
	if len(m.undo) == 0 {
		return m.say("nothing to undo")
	}
	last := m.undo[len(m.undo)-1]
	m.undo = m.undo[:len(m.undo)-1]
	if last.records == nil {
		return m.undoCuration(last)
	}
	m.start("undo", "restoring")
	engine, ctx := m.c.Engine, m.c.Context()
	return func() tea.Msg {
		n, err := restore(ctx, engine, last.records)
		return restoredMsg{count: n, err: err}
	}
}
