package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/adrg/xdg"
	"github.com/spf13/cobra"

	"mnemo/cliout"
	"mnemo/config"
	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/storeopen"
)

// globalFlags are the flags every command shares (docs/spec/cli.md section 1).
type globalFlags struct {
	db     string
	remote string
	config string
	debug  bool
	json   bool
	output string
}

// app is one invocation's state: its streams, resolved settings and the engine
// it opened. Nothing here is shared between invocations, so tests can run many.
type app struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer

	// getenv and isTerminal are the process environment, replaceable in tests.
	getenv     func(string) string
	isTerminal func(stream any) bool
	// now is the clock the human form's relative times read.
	now func() time.Time
	// lockTimeout, when set, bounds the wait for another process's lock on
	// the store instead of storeLockTimeout (completion sets it short).
	lockTimeout time.Duration

	flags globalFlags

	// settings are the resolved settings and where each came from (config);
	// cfg and configPath are its config file and that file's path.
	settings   *config.Settings
	cfg        config.File
	configPath string
	logger     *slog.Logger
	logFile    *os.File

	store  *storeopen.Store
	closed bool
	// command is the name of the command running (a read command never
	// creates a store).
	command string
	// benchAfterImport: mnemo bench also times the first process after an import.
	benchAfterImport bool
	// compactAfter is the store directory an import filled from empty: close
	// rewrites it with full pages once the store is let go; compactMin is
	// the fewest records such an import brings for it (bolt.RewriteFilledAt,
	// lower in tests).
	compactAfter string
	compactMin   int
	// finishAfter, when set, is the import finisher this process starts once
	// it has let the store go (afterImport); finishMin is the fewest records
	// an import stores for it (finishImportAbove, lower in tests), and
	// startFinisher starts the process with args and env added to this
	// one's environment (startDetached on this binary; tests start theirs).
	finishAfter   *finishAfter
	finishMin     int
	startFinisher func(args, env []string) (pid int, err error)
}

func newApp(stdin io.Reader, stdout, stderr io.Writer) *app {
	return &app{
		compactMin: bolt.RewriteFilledAt,
		finishMin:  finishImportAbove,
		startFinisher: func(args, env []string) (int, error) {
			exe, err := os.Executable()
			if err != nil {
				return 0, err
			}
			return startDetached(exe, args, env)
		},
		stdin:      stdin,
		stdout:     stdout,
		stderr:     stderr,
		getenv:     os.Getenv,
		isTerminal: cliout.IsTerminal,
		now:        time.Now,
		logger:     slog.New(slog.DiscardHandler),
	}
}

// setup resolves the settings (config) and logging before any command runs.
func (a *app) setup(cmd *cobra.Command) error {
	a.command = cmd.Name()
	if err := cliout.CheckFormat(a.flags.json, a.flags.output); err != nil {
		return err
	}
	settings, err := config.Resolve(config.Input{
		Flags:  config.Flags{DB: a.flags.db, Remote: a.flags.remote, Config: a.flags.config},
		Getenv: a.getenv, ConfigHome: xdg.ConfigHome, DataHome: xdg.DataHome, StateHome: xdg.StateHome,
	})
	if err != nil {
		return err
	}
	a.settings, a.cfg, a.configPath = settings, settings.File, settings.ConfigPath.Value
	if a.flags.debug {
		if err := a.openLog(); err != nil {
			return err
		}
		a.logger.Debug("mnemo start", "command", cmd.CommandPath(), "version", version())
	}
	return nil
}

func (a *app) openLog() error {
	if err := os.MkdirAll(filepath.Dir(a.settings.Log.Value), 0o700); err != nil {
		return contract.ConfigErr("cannot create the log directory: %w", err)
	}
	f, err := os.OpenFile(a.settings.Log.Value, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return contract.ConfigErr("cannot open the log file: %w", err)
	}
	a.logFile = f
	// Every process on a store may log to the one file: each line says whose.
	a.logger = slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug})).With("pid", os.Getpid())
	return nil
}

// storeDir is the store location, a directory or a postgres:// URL: --db, then
// MNEMO_DB, then the config file's db (or store), then $XDG_DATA_HOME/mnemo
// (config.Resolve).
func (a *app) storeDir() string { return a.settings.Store.Value }

// remoteURL is the server to talk to instead of a store: --remote, then
// MNEMO_REMOTE, then the config file's remote.
func (a *app) remoteURL() string { return a.settings.Remote.Value }

// close releases the engine and the log file; safe to call twice.
func (a *app) close() {
	if a.closed {
		return
	}
	a.closed = true
	if a.store != nil {
		if err := a.store.Close(); err != nil {
			a.logger.Error("closing the store", "err", err)
		}
		a.store = nil
	}
	switch {
	case a.finishAfter != nil:
		a.handOffImport(*a.finishAfter)
	case a.compactAfter != "":
		a.compactImported(a.compactAfter)
	}
	if a.logFile != nil {
		_ = a.logFile.Close()
		a.logFile = nil
	}
}

// out is where and how this invocation answers (cliout).
func (a *app) out() cliout.Out {
	return cliout.Out{Stdout: a.stdout, Getenv: a.getenv, IsTerminal: a.isTerminal, Now: a.now,
		JSON: a.flags.json, Format: a.flags.output}
}

// answer prints a command's result: the human form drawn by draw when a
// person reads stdout, else v as the contract JSON.
func (a *app) answer(v any, draw func(s *cliout.Screen)) error { return a.out().Answer(v, draw) }

// human tells whether stdout gets the human form.
func (a *app) human() bool { return a.out().Human() }

// writeJSON prints one JSON value on stdout (cliout.Out.WriteJSON).
func (a *app) writeJSON(v any) error { return a.out().WriteJSON(v) }

// readInput reads all of stdin, refusing to wait on an interactive terminal.
func (a *app) readInput(what string) ([]byte, error) {
	if a.isTerminal(a.stdin) {
		return nil, usageError(fmt.Sprintf("%s expects %s on stdin", "this command", what))
	}
	data, err := io.ReadAll(a.stdin)
	if err != nil {
		return nil, contract.EngineErr("cannot read stdin: %w", err)
	}
	return data, nil
}

// version is the module version, or the VCS revision for a development build.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return "devel-" + rev
}

// errAborted reports a confirmation the user declined.
var errAborted = errors.New("aborted: nothing was changed")
