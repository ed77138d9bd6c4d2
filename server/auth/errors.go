package auth

import (
	"mnemo/contract"
	"mnemo/server/wire"
)

// Forbidden returns the refusal of a known principal's request: HTTP answers
// it with 403 (wire.IsForbidden), not the 401 of a caller nobody knows.
func Forbidden(format string, args ...any) *contract.Error {
	e := contract.Unauthorized(format, args...)
	e.Code = wire.CodeForbidden
	return e
}
