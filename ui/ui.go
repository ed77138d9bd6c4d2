// Package ui is the shell of the mnemo terminal UI: the root Bubble Tea model
// (header, scope line, views, footer, overlays), its options and Run. The views
// live in mnemo/views/...; what they share lives in mnemo/ui/common. The UI talks
// only to a contract.Engine, so it runs the same on a local store, a remote
// server or the in-memory engine of tests.
package ui

import (
	"context"
	"io"
	"log/slog"
	"time"

	tea "charm.land/bubbletea/v2"

	"mnemo/contract"
	"mnemo/engine/curate"
	"mnemo/ui/common"
)

// KeyMap is every key binding of the TUI; build it with NewKeyMap.
type KeyMap = common.KeyMap

// NewKeyMap builds the key map of the registry's views from action names to
// keys, refusing unknown actions and keys bound to two actions in one view.
func NewKeyMap(bindings map[string][]string) (KeyMap, error) {
	return common.NewKeyMap(viewInfos(), bindings)
}

// DefaultBindings is every action's default keys, by action name: the one
// table the binary applies its config overrides to and the tests use.
func DefaultBindings() map[string][]string {
	b, err := common.DefaultBindings(viewInfos())
	if err != nil {
		panic(err) // the registry is wrong: a build mistake, caught by every test
	}
	return b
}

// DefaultKeyMap is the key map without overrides.
func DefaultKeyMap() KeyMap {
	km, err := NewKeyMap(DefaultBindings())
	if err != nil {
		panic(err) // the defaults conflict: a build mistake, caught by every test
	}
	return km
}

// Options configure one TUI session.
type Options struct {
	Engine     contract.Engine
	StoreLabel string // store path or server address, shown in the header
	Keys       KeyMap // from keymap.go
	ReadOnly   bool   // no forget, no review
	Plain      bool   // ASCII borders and spinners
	Mouse      bool
	Logger     *slog.Logger                    // --debug logging, never to the terminal
	LoadDemo   func(ctx context.Context) error // the welcome screen's `L`
	Now        func() time.Time                // clock, for tests
	// Reach confines every read of the session (serve mode); nil sees everything.
	Reach *contract.Reach
	// Editor is the command the detail view's `e` edits a record with
	// (default $VISUAL, $EDITOR, vi).
	Editor string
	// RemoteUser is set when the user sits at another machine (an SSH
	// session): nothing the session does touches this process's filesystem,
	// so the detail view's `e` copies the record's JSON to the user's
	// clipboard (OSC52, as `Y` copies its text) instead of writing a file.
	RemoteUser bool
	// Input and Output replace the terminal (SSH sessions, tests).
	Input  io.Reader
	Output io.Writer
	// ProgramOptions are passed to tea.NewProgram (SSH sessions add theirs).
	ProgramOptions []tea.ProgramOption
	// Timer replaces tea.Tick; tests use it to run timers without waiting.
	Timer func(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd
	// Context is what the session's reads run in (Run makes its own); an
	// SSH session passes the program's life, so a waiting poll of the change
	// feed ends when its TUI quits.
	Context context.Context
	// Curate holds the clustering thresholds (the config's [curate]); the
	// zero value means curate.DefaultConfig.
	Curate curate.Config
	// Dismissed holds the clusters the user dismissed; nil keeps them for
	// the session only (SSH sessions: nothing is written on the server).
	Dismissed *curate.Dismissed
	// MaxClustered is the most records of the session's reach it clusters
	// in the background (0: DefaultMaxClustered).
	MaxClustered int
	// Live follows the store's change feed: the session updates itself as
	// other writers change the store (the binary and SSH sessions set it).
	Live bool
	// Follow, when set, is handed each waiting poll of the change feed and
	// returns the command to run instead (tests run the polls on demand).
	Follow func(poll tea.Cmd) tea.Cmd
	// Applied, when set, is called from Update each time the session shows
	// live changes (the Activity view lists them and the views reload), with
	// those changes; the load test times the TUI's redraw with it. It must
	// not block.
	Applied func(changes []contract.Change)
}

// AccessMsg tells a running session that its principal changed (serve mode
// reloaded its keys file): from now on reads run under Reach and ReadOnly says
// whether it may still change anything. The session drops its drill-down,
// dialogs and what it had loaded, starts again from the new reach, and shows
// Note.
type AccessMsg struct {
	Reach    *contract.Reach
	ReadOnly bool
	Note     string
}

// New returns the root model of a session.
func New(opts Options) tea.Model { return newModel(opts) }

// Run runs the TUI on the terminal (or the given input and output) until the
// user quits or ctx ends.
func Run(ctx context.Context, opts Options) error {
	// The session's context ends with Run, so a poll of the change feed
	// still waiting when the user quits ends with it.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := newModel(opts)
	m.c.Ctx = ctx
	popts := []tea.ProgramOption{tea.WithContext(ctx)}
	if opts.Input != nil {
		popts = append(popts, tea.WithInput(opts.Input))
	}
	if opts.Output != nil {
		popts = append(popts, tea.WithOutput(opts.Output))
	}
	popts = append(popts, opts.ProgramOptions...)
	_, err := tea.NewProgram(m, popts...).Run()
	if err == tea.ErrProgramKilled && ctx.Err() != nil {
		return nil
	}
	return err
}
