package contract

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrorKind is one of the reference's error variants.
type ErrorKind string

// The error kinds of the contract, with their display prefixes.
const (
	KindUnsupported    ErrorKind = "unsupported"
	KindInvalidRequest ErrorKind = "invalid request"
	KindUnauthorized   ErrorKind = "unauthorized"
	KindNotFound       ErrorKind = "not found"
	KindConflict       ErrorKind = "conflict"
	KindUnavailable    ErrorKind = "unavailable"
	KindEngine         ErrorKind = "engine error"
	KindConfig         ErrorKind = "configuration error"
	// KindExpired is mnemo's: a change feed asked for a since it no longer
	// holds (or never held); the client reloads its state and resumes.
	KindExpired ErrorKind = "expired"
)

// Wire returns the snake_case form used in JSON error bodies.
func (k ErrorKind) Wire() string {
	switch k {
	case KindInvalidRequest:
		return "invalid_request"
	case KindNotFound:
		return "not_found"
	case KindEngine:
		return "engine"
	case KindConfig:
		return "configuration"
	}
	return string(k)
}

// ErrorKindFromWire parses the snake_case kind of a JSON error body.
func ErrorKindFromWire(s string) (ErrorKind, bool) {
	for _, k := range []ErrorKind{KindUnsupported, KindInvalidRequest, KindUnauthorized, KindNotFound, KindConflict, KindUnavailable, KindEngine, KindConfig, KindExpired} {
		if k.Wire() == s {
			return k, true
		}
	}
	return "", false
}

// Browse error codes carried by InvalidRequest errors of the browse query.
const (
	CodeInvalidQuery        = "invalid-query"
	CodeContinuationInvalid = "continuation-invalid"
)

// Error is the one error type of the contract: a kind, a message and, for browse
// errors, a stable code. Error() prints "<kind>: <message>" like the reference.
type Error struct {
	Kind    ErrorKind
	Code    string
	Message string
	// Err is the cause the error was made from (a %w argument of its
	// constructor, or the foreign error AsError converted), kept so callers can
	// ask errors.Is(err, context.Canceled) or errors.As for a driver's error.
	// It never reaches the wire: the kind, code and message do.
	Err error
}

func (e *Error) Error() string { return string(e.Kind) + ": " + e.Message }

// Unwrap returns the cause, nil when the error was made from text alone.
func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, &Error{Kind: k}) match any error of kind k (and code, when set).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	if t.Kind != e.Kind {
		return false
	}
	if t.Code != "" && t.Code != e.Code {
		return false
	}
	return t.Message == "" || t.Message == e.Message
}

// Sentinels for errors.Is checks by kind.
var (
	ErrUnsupported    = &Error{Kind: KindUnsupported}
	ErrInvalidRequest = &Error{Kind: KindInvalidRequest}
	ErrUnauthorized   = &Error{Kind: KindUnauthorized}
	ErrNotFound       = &Error{Kind: KindNotFound}
	ErrConflict       = &Error{Kind: KindConflict}
	ErrUnavailable    = &Error{Kind: KindUnavailable}
	ErrEngine         = &Error{Kind: KindEngine}
	ErrConfig         = &Error{Kind: KindConfig}
	ErrExpired        = &Error{Kind: KindExpired}
)

// newErr formats the message like fmt.Errorf: a %w verb prints its error as
// %v would (so messages read the same) and keeps it as the cause.
func newErr(kind ErrorKind, format string, args ...any) *Error {
	if len(args) == 0 {
		return &Error{Kind: kind, Message: format}
	}
	if !strings.Contains(format, "%w") {
		return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
	}
	wrapped := fmt.Errorf(format, args...)
	e := &Error{Kind: kind, Message: wrapped.Error()}
	switch w := wrapped.(type) {
	case interface{ Unwrap() error }:
		e.Err = w.Unwrap()
	case interface{ Unwrap() []error }:
		e.Err = errors.Join(w.Unwrap()...)
	}
	return e
}

// Invalid returns an InvalidRequest error.
func Invalid(format string, args ...any) *Error { return newErr(KindInvalidRequest, format, args...) }

// Unsupported returns an Unsupported error.
func Unsupported(format string, args ...any) *Error { return newErr(KindUnsupported, format, args...) }

// NotFound returns a NotFound error.
func NotFound(format string, args ...any) *Error { return newErr(KindNotFound, format, args...) }

// Conflict returns a Conflict error.
func Conflict(format string, args ...any) *Error { return newErr(KindConflict, format, args...) }

// Unavailable returns an Unavailable error.
func Unavailable(format string, args ...any) *Error { return newErr(KindUnavailable, format, args...) }

// Unauthorized returns an Unauthorized error.
func Unauthorized(format string, args ...any) *Error {
	return newErr(KindUnauthorized, format, args...)
}

// EngineErr returns an engine error.
func EngineErr(format string, args ...any) *Error { return newErr(KindEngine, format, args...) }

// Expired returns an Expired error (a change feed's since it no longer holds).
func Expired(format string, args ...any) *Error { return newErr(KindExpired, format, args...) }

// ConfigErr returns a configuration error.
func ConfigErr(format string, args ...any) *Error { return newErr(KindConfig, format, args...) }

// QueryErr returns a browse InvalidRequest error with the invalid-query code.
func QueryErr(format string, args ...any) *Error {
	e := newErr(KindInvalidRequest, format, args...)
	e.Code = CodeInvalidQuery
	return e
}

// CursorErr returns a browse InvalidRequest error with the continuation-invalid code.
func CursorErr(msg string) *Error {
	return &Error{Kind: KindInvalidRequest, Code: CodeContinuationInvalid, Message: msg}
}

// ErrorBody is the JSON of an error: the HTTP API's error answers and the
// command line's --json errors, {"error": {"kind", "code"?, "message"}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is an error on the wire: its snake_case kind, its stable code
// (browse errors) and its message.
type ErrorDetail struct {
	Kind    string `json:"kind"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message"`
}

// DetailOf is err on the wire. Only an invalid request carries its code
// (invalid-query, continuation-invalid); other codes are internal.
func DetailOf(err error) ErrorDetail {
	e := AsError(err)
	d := ErrorDetail{Kind: e.Kind.Wire(), Message: e.Message}
	if e.Kind == KindInvalidRequest {
		d.Code = e.Code
	}
	return d
}

// KindOf returns the contract kind of err, or KindEngine for foreign errors.
func KindOf(err error) ErrorKind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindEngine
}

// AsError is the one converter to contract errors: a contract error (anywhere
// in err's chain) is returned as it is; an ended context is unavailable; any
// other foreign error becomes an engine error. The message is the foreign
// error's text and the error is kept as the cause. It returns nil for nil.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &Error{Kind: KindUnavailable, Message: err.Error(), Err: err}
	}
	return &Error{Kind: KindEngine, Message: err.Error(), Err: err}
}

// ContextErr is nil while ctx is live and, once it has ended, the error every
// engine answers with: unavailable, its message ctx's error ("context
// canceled", "context deadline exceeded"), and that error its cause, so
// errors.Is(err, context.Canceled) holds.
func ContextErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return &Error{Kind: KindUnavailable, Message: err.Error(), Err: err}
	}
	return nil
}
