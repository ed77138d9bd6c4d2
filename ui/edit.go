package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"

	tea "charm.land/bubbletea/v2"

	"mnemo/contract"
	"mnemo/ui/common"
)

// Editing a record (the detail view's `e`, on a local TUI): its item is
// written to a private temporary file, the user's editor opens it, and an
// edited item is stored and supersedes the record, so the old one stays in
// history (browse shows it superseded, undo of a forget does not apply).
// An unchanged or emptied file changes nothing. Over SSH nothing is ever
// written on the server: `e` copies the record's JSON instead (detail view).

// editDoneMsg is the editor's end.
type editDoneMsg struct {
	rec  contract.Record
	path string
	err  error
}

// editor is the command that edits a file: $VISUAL, then $EDITOR, then vi;
// it may carry arguments ("code -w").
func (m *model) editor() string {
	if m.opts.Editor != "" {
		return m.opts.Editor
	}
	for _, v := range []string{"VISUAL", "EDITOR"} {
		if e := os.Getenv(v); e != "" {
			return e
		}
	}
	return "vi"
}

// startEdit writes the record's item to a temporary file and hands the
// terminal to the editor.
func (m *model) startEdit(rec contract.Record) tea.Cmd {
	if m.c.ReadOnly || rec.Item == nil {
		return nil
	}
	data, err := json.MarshalIndent(rec.Item, "", "  ")
	if err != nil {
		return m.fail("edit", err)
	}
	f, err := os.CreateTemp("", "mnemo-edit-*.json")
	if err != nil {
		return m.fail("edit", err)
	}
	_, werr := f.Write(append(data, '\n'))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = os.Remove(f.Name())
		return m.fail("edit", werr)
	}
	path := f.Name()
	cmd := exec.Command("sh", "-c", m.editor()+` "$1"`, "sh", path)
	return tea.ExecProcess(cmd, func(err error) tea.Msg { return editDoneMsg{rec: rec, path: path, err: err} })
}

// finishEdit stores what the editor left and supersedes the record by it.
func (m *model) finishEdit(msg editDoneMsg) tea.Cmd {
	engine := m.c.Engine
	return func() tea.Msg {
		defer os.Remove(msg.path)
		if msg.err != nil {
			return common.ErrorMsg{Op: "edit", Err: fmt.Errorf("the editor failed: %w", msg.err)}
		}
		edited, err := os.ReadFile(msg.path)
		if err != nil {
			return common.ErrorMsg{Op: "edit", Err: err}
		}
		id, err := applyEdit(context.Background(), engine, msg.rec, edited)
		switch {
		case err != nil:
			return common.ErrorMsg{Op: "edit", Err: err}
		case id == "":
			return common.ToastMsg{Text: "unchanged: nothing stored"}
		}
		return common.ToastMsg{Text: "stored " + common.ShortID(id) + ", which supersedes " + common.ShortID(msg.rec.ID)}
	}
}

// applyEdit stores the edited item and supersedes rec by it; an empty,
// unchanged or identical item stores nothing and answers "".
func applyEdit(ctx context.Context, e contract.Engine, rec contract.Record, edited []byte) (string, error) {
	if len(bytes.TrimSpace(edited)) == 0 {
		return "", nil
	}
	var item contract.StoreItem
	if err := item.UnmarshalJSON(edited); err != nil {
		return "", contract.Invalid("the edited record is not a memory item, nothing was stored: %s", contract.AsError(err).Message)
	}
	if err := item.Validate(); err != nil {
		return "", err
	}
	if item.Fingerprint() == rec.ID {
		return "", nil
	}
	receipt, err := contract.Store(ctx, e, item)
	if err != nil {
		return "", err
	}
	if _, err := e.Supersede(ctx, contract.SupersedeRequest{ID: rec.ID, By: receipt.ID}); err != nil {
		return "", fmt.Errorf("stored %s, but it does not supersede %s: %w", common.ShortID(receipt.ID), common.ShortID(rec.ID), err)
	}
	return receipt.ID, nil
}
