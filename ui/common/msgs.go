package common

import (
	"slices"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"mnemo/contract"
)

// OpenRecordMsg asks the shell to open a record in the detail view.
type OpenRecordMsg struct {
	ID string
	// Record is what the caller already has (shown at once while the whole record loads).
	Record *contract.Record
}

// NarrowMsg asks the shell to narrow the scope by one crumb.
type NarrowMsg struct{ Crumb Crumb }

// WidenMsg asks the shell to pop the last crumb.
type WidenMsg struct{}

// ToastMsg shows a transient message in the footer.
type ToastMsg struct{ Text string }

// EditMsg asks the shell to edit a record in the user's editor (a local
// TUI only): the edited item supersedes it.
type EditMsg struct{ Record contract.Record }

// ErrorMsg reports a failed operation: one line in the footer, the whole text on `!`.
type ErrorMsg struct {
	Op  string
	Err error
}

// CopyMsg asks the shell to copy text to the clipboard (OSC52) and say what was copied.
type CopyMsg struct {
	Text string
	What string
}

// Toast is a command that shows text in the footer.
func Toast(text string) tea.Cmd { return func() tea.Msg { return ToastMsg{Text: text} } }

// Fail is a command that reports a failed operation.
func Fail(op string, err error) tea.Cmd { return func() tea.Msg { return ErrorMsg{Op: op, Err: err} } }

// BrowseCmd reads one page of q (from cursor, when not nil) in a tea.Cmd and
// answers with reply(page, err); the views that page through records (explore,
// browse) wrap the answer in a message of their own, tagged with their generation.
func BrowseCmd(c *Common, q contract.BrowseQuery, cursor *string, reply func(contract.BrowsePage, error) tea.Msg) tea.Cmd {
	engine, ctx := c.Engine, c.Context()
	if cursor != nil {
		q.Cursor = *cursor
	}
	return func() tea.Msg {
		page, err := engine.Browse(ctx, q)
		return reply(page, err)
	}
}

// ForgetTarget describes what a forget would remove, for the confirmation dialog.
type ForgetTarget struct {
	// IDs are the records to forget (one record or a selection), or nil for a scope.
	IDs []string
	// Title names the single record ("prefers tabs over spaces").
	Title string
	// Scope is the scope to forget when IDs is nil.
	Scope *Scope
	// Count is the exact number of records the forget removes.
	Count int
}

// ForgetRequestMsg asks the shell to confirm and run a forget.
type ForgetRequestMsg struct{ Target ForgetTarget }

// Causes of a DataChangedMsg.
const (
	ChangeForget  = "forget"
	ChangeUndo    = "undo"
	ChangeCurate  = "curate" // a cluster resolved
	ChangeReview  = "review"
	ChangeDemo    = "demo"
	ChangeRefresh = "refresh" // the user pressed r
	ChangeAccess  = "access"  // the session's principal changed
	ChangeLive    = "live"    // pushed from outside the session (another writer)
)

// DataChangedMsg says the store changed under the session. Anyone may send
// it: a view after a write of its own (browse after a review), the shell after
// a forget, undo or demo load, or the program from outside (tea.Program.Send,
// or a tea.Cmd that waits on a stream of changes). The shell refreshes its
// record count and hands the message to every view and the detail, then
// activates the view on screen. A view drops at once what it knows is gone,
// marks the rest of what it shows stale, and reloads it on its next Activate,
// so no view shows a record that is gone.
type DataChangedMsg struct {
	// Cause says what changed the data (one of the Change constants).
	Cause string
	// Gone, when not nil, is every id the change removed, and the change did
	// nothing else: a view may drop these instead of reloading. Nil means the
	// change is not known record by record.
	Gone []string
	// Removed, when Gone is nil and Removed is not (it may be empty), is
	// every id the change removed although it did more (a batch of live
	// changes that also stored): a view drops these at once and reloads the
	// rest; search results and answers may keep the rest as they are.
	Removed []string
}

// Goes tells whether the change removed id.
func (m DataChangedMsg) Goes(id string) bool {
	return slices.Contains(m.Gone, id) || slices.Contains(m.Removed, id)
}

// Live tells whether the change came from the change feed (another writer).
func (m DataChangedMsg) Live() bool { return m.Cause == ChangeLive }

// ChangesMsg hands the views the changes of the feed that the session shows
// now (oldest first), just before the DataChangedMsg they amount to: the
// activity view lists them.
type ChangesMsg struct {
	Changes []contract.Change
	// Reset says the feed started again (an expired since, a new principal):
	// what came before may be incomplete.
	Reset bool
}

// UndoMsg asks the shell to undo the last forget of the session.
type UndoMsg struct{}

// ForgetScopeMsg asks the shell to count the current scope and confirm forgetting it.
type ForgetScopeMsg struct{}

// StatusMsg reports a background task for the footer's spinner; empty Label ends it.
type StatusMsg struct {
	Task  string
	Label string
}

// SwitchViewMsg asks the shell to show another view.
type SwitchViewMsg struct{ View string }

// PauseLiveMsg asks the shell to pause or resume live updates (the Activity
// view's own key for what P does everywhere).
type PauseLiveMsg struct{}

// Pane is what every view implements for the shell. Views are pointers and
// change in place; they never call the engine outside a tea.Cmd.
type Pane interface {
	Init() tea.Cmd
	Update(msg tea.Msg) tea.Cmd
	// View draws exactly the size last given to SetSize.
	View() string
	SetSize(width, height int)
	// ShortHelp lists the keys that matter in the focused pane, most useful first.
	ShortHelp() []key.Binding
	// Capturing tells whether a text field has focus, so printable keys belong to it.
	Capturing() bool
	// Busy names the background task the view waits for, "" when idle.
	Busy() string
}

// View is a pane of the registry (a tab of the header).
type View interface {
	Pane
	// Activate runs when the view is shown, and again after a scope or data
	// change while it is on screen: it loads what is stale, nil when nothing is.
	Activate() tea.Cmd
	// Total is how many records of the current scope the view counts, for the
	// scope line's "N of M"; -1 when it counts none (or does not know yet).
	Total() int
}

// LoadDemoMsg asks the shell to load the built-in demo corpus.
type LoadDemoMsg struct{}

// RecordKey answers the keys every record list shares (copy id, copy text,
// forget one) for the record with this id and text; ok is false for other keys.
func RecordKey(c *Common, msg tea.KeyPressMsg, id, text string) (cmd tea.Cmd, ok bool) {
	k := &c.Keys
	switch {
	case key.Matches(msg, k.CopyID):
		return func() tea.Msg { return CopyMsg{Text: id, What: "id " + ShortID(id)} }, true
	case key.Matches(msg, k.CopyText):
		return func() tea.Msg { return CopyMsg{Text: text, What: "text"} }, true
	case key.Matches(msg, k.Forget):
		if c.ReadOnly {
			return nil, true
		}
		t := ForgetTarget{IDs: []string{id}, Title: OneLine(text), Count: 1}
		return func() tea.Msg { return ForgetRequestMsg{Target: t} }, true
	}
	return nil, false
}
