package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"mnemo/contract"
	"mnemo/server/local"
)

// Exit codes of docs/spec/cli.md section 3.
const (
	exitOK           = 0
	exitFailure      = 1 // engine error, unavailable, unexpected failure
	exitInvalid      = 2 // invalid request, bad usage, unsupported
	exitLocked       = 3 // the store is locked by another process
	exitNotFound     = 4 // review / supersede of an unknown record
	exitUnauthorized = 5
	exitConflict     = 6
	exitExpired      = 7 // watch: the feed no longer keeps the since asked for
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

// report prints err on stderr and returns the exit code: one line
// "mnemo: <kind>: [<code>: ]<message>", or with --json / -o json the error body
// of the HTTP API. A usage error is followed by what the command takes.
func (a *app) report(err error) int {
	if err == nil {
		return exitOK
	}
	var ex exitError
	if errors.As(err, &ex) {
		return ex.code
	}
	d, code := describe(err)
	a.logger.Debug("mnemo failed", "code", code, "err", d.Message)
	if a.out().WantsJSON() {
		enc := json.NewEncoder(a.stderr)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(contract.ErrorBody{Error: d})
		return code
	}
	fmt.Fprintln(a.stderr, "mnemo: "+errorLine(d))
	var usage usageHint
	if errors.As(err, &usage) && a.isTerminal(a.stderr) {
		fmt.Fprint(a.stderr, usage.hint)
	}
	return code
}

// errorLine is an error's one-line text: its kind, the stable code of a browse
// error, its message ("invalid request: invalid-query: limit must be ...").
func errorLine(d contract.ErrorDetail) string {
	kind := d.Kind
	if k, ok := contract.ErrorKindFromWire(d.Kind); ok {
		kind = string(k)
	}
	if d.Code != "" {
		return kind + ": " + d.Code + ": " + d.Message
	}
	return kind + ": " + d.Message
}

// describe turns an error into its wire detail and exit code. A locked store
// and a declined confirmation are not contract errors; their kinds are
// "locked" and "aborted".
func describe(err error) (contract.ErrorDetail, int) {
	var locked lockedError
	if errors.As(err, &locked) {
		return contract.ErrorDetail{Kind: "locked", Message: oneLine(locked.message)}, exitLocked
	}
	var held *local.LockedError
	if errors.As(err, &held) {
		return contract.ErrorDetail{Kind: "locked", Message: oneLine(held.Error())}, exitLocked
	}
	if errors.Is(err, errAborted) {
		return contract.ErrorDetail{Kind: "aborted", Message: strings.TrimPrefix(err.Error(), "aborted: ")}, exitFailure
	}
	d := contract.DetailOf(err)
	d.Message = oneLine(d.Message)
	switch contract.KindOf(err) {
	case contract.KindInvalidRequest, contract.KindUnsupported, contract.KindConfig:
		return d, exitInvalid
	case contract.KindNotFound:
		return d, exitNotFound
	case contract.KindUnauthorized:
		return d, exitUnauthorized
	case contract.KindConflict:
		return d, exitConflict
	case contract.KindExpired:
		return d, exitExpired
	}
	return d, exitFailure
}

// oneLine keeps an error on one line of stderr.
func oneLine(s string) string {
	return strings.TrimSpace(strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s))
}
