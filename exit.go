package main

import (
	"errors"
	"fmt"
	"strings"

	"mnemo/contract"
)

// Exit codes of cli.md section 3.
const (
	exitOK           = 0
	exitFailure      = 1 // engine error, unavailable, unexpected failure
	exitInvalid      = 2 // invalid request, bad usage, unsupported
	exitLocked       = 3 // the store is locked by another process
	exitNotFound     = 4 // review / supersede of an unknown record
	exitUnauthorized = 5
	exitConflict     = 6
)

// usageError is a malformed command line: a bad flag, a missing argument, a
// flag value that does not parse. It prints as an invalid request (exit 2).
func usageError(msg string) error { return contract.Invalid("%s", msg) }

// exitError carries an exit code for an outcome already reported on stdout
// (import's summary, health's state): nothing more is printed.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// lockedError is what a command reports when another process holds the store.
type lockedError struct{ message string }

func (e lockedError) Error() string { return e.message }

// report prints err as one line on stderr and returns the exit code.
func (a *app) report(err error) int {
	if err == nil {
		return exitOK
	}
	var ex exitError
	if errors.As(err, &ex) {
		return ex.code
	}
	line, code := describe(err)
	a.logger.Debug("mnemo failed", "code", code, "err", line)
	fmt.Fprintln(a.stderr, "mnemo: "+line)
	return code
}

// describe turns an error into its one-line text "<kind>: <message>" and exit code.
func describe(err error) (string, int) {
	var locked lockedError
	if errors.As(err, &locked) {
		return "locked: " + oneLine(locked.message), exitLocked
	}
	if errors.Is(err, errAborted) {
		return err.Error(), exitFailure
	}
	var cerr *contract.Error
	if !errors.As(err, &cerr) {
		cerr = contract.EngineErr("%s", err.Error())
	}
	text := string(cerr.Kind) + ": " + oneLine(cerr.Message)
	switch cerr.Kind {
	case contract.KindInvalidRequest, contract.KindUnsupported, contract.KindConfig:
		return text, exitInvalid
	case contract.KindNotFound:
		return text, exitNotFound
	case contract.KindUnauthorized:
		return text, exitUnauthorized
	case contract.KindConflict:
		return text, exitConflict
	}
	return text, exitFailure
}

// oneLine keeps an error on one line of stderr.
func oneLine(s string) string {
	return strings.TrimSpace(strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s))
}
