package contract

import (
	"errors"
	"fmt"
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
}

func (e *Error) Error() string { return string(e.Kind) + ": " + e.Message }

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

func newErr(kind ErrorKind, format string, args ...any) *Error {
	if len(args) == 0 {
		return &Error{Kind: kind, Message: format}
	}
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
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

// AsError returns err as a contract error; foreign errors become engine errors
// carrying their text.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Kind: KindEngine, Message: err.Error()}
}
