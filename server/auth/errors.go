package auth

import (
	"errors"

	"mnemo/contract"
)

// CodeForbidden marks an unauthorized-kind error as a refusal of a known
// principal (outside its reach or role), which HTTP answers with 403, as
// opposed to a caller who is not known at all (401).
const CodeForbidden = "forbidden"

// Forbidden returns the refusal of a known principal's request.
func Forbidden(format string, args ...any) *contract.Error {
	e := contract.Unauthorized(format, args...)
	e.Code = CodeForbidden
	return e
}

// IsForbidden tells whether err refuses a known principal (403, not 401).
func IsForbidden(err error) bool {
	var e *contract.Error
	return errors.As(err, &e) && e.Kind == contract.KindUnauthorized && e.Code == CodeForbidden
}
