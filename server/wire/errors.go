package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"mnemo/contract"
)

// CodeForbidden marks an unauthorized-kind error as a refusal of a known
// principal (outside its reach or role), which HTTP answers with 403, as
// opposed to a caller who is not known at all (401). It never leaves the
// process: the status carries it across the wire.
const CodeForbidden = "forbidden"

// IsForbidden tells whether err refuses a known principal (403, not 401).
func IsForbidden(err error) bool {
	var e *contract.Error
	return errors.As(err, &e) && e.Kind == contract.KindUnauthorized && e.Code == CodeForbidden
}

// StatusOf maps a contract error to its HTTP status (docs/spec/cli.md section 4).
func StatusOf(err error) int {
	switch contract.KindOf(err) {
	case contract.KindInvalidRequest, contract.KindUnsupported:
		return http.StatusBadRequest
	case contract.KindUnauthorized:
		if IsForbidden(err) {
			return http.StatusForbidden
		}
		return http.StatusUnauthorized
	case contract.KindNotFound:
		return http.StatusNotFound
	case contract.KindConflict:
		return http.StatusConflict
	case contract.KindUnavailable:
		return http.StatusServiceUnavailable
	case contract.KindExpired:
		return http.StatusGone
	}
	return http.StatusInternalServerError
}

// ErrorEnvelope is err as every error answer carries it, the HTTP API's,
// the change stream's error event and the local endpoints':
// {"error": {"kind", "code"?, "message"}} (the command line's --json errors
// print the same).
func ErrorEnvelope(err error) contract.ErrorBody {
	return contract.ErrorBody{Error: contract.DetailOf(err)}
}

// EncodeFailure is the envelope of an answer that could not be encoded.
const EncodeFailure = `{"error":{"kind":"engine","message":"the answer could not be encoded"}}`

// EncodeError is env's JSON on one line, with <, > and & as they are, as
// the HTTP API writes every answer.
func EncodeError(env contract.ErrorBody) []byte {
	b, err := contract.MarshalWire(env)
	if err != nil {
		return []byte(EncodeFailure)
	}
	return b
}

// DecodeError reads an error envelope back into the contract error it
// carries (kind, browse code and message), false when data is not an
// envelope or names a kind this side does not know.
func DecodeError(data []byte) (*contract.Error, bool) {
	var env struct {
		Error *contract.ErrorDetail `json:"error"`
	}
	if err := json.Unmarshal(data, &env); err != nil || env.Error == nil {
		return nil, false
	}
	kind, ok := contract.ErrorKindFromWire(env.Error.Kind)
	if !ok {
		return nil, false
	}
	return &contract.Error{Kind: kind, Code: env.Error.Code, Message: env.Error.Message}, true
}

// ErrorOf turns an error answer back into the contract error the server
// raised (a 403 is forbidden again). Answers without the JSON error envelope
// (a proxy's, say) keep their status.
func ErrorOf(status int, body []byte) *contract.Error {
	e, ok := DecodeError(body)
	if !ok {
		return statusError(status)
	}
	if status == http.StatusForbidden && e.Kind == contract.KindUnauthorized {
		e.Code = CodeForbidden
	}
	return e
}

// statusError is the contract error an answer's status alone tells.
func statusError(status int) *contract.Error {
	text := fmt.Sprintf("the server answered %d %s", status, http.StatusText(status))
	switch {
	case status == http.StatusUnauthorized:
		return contract.Unauthorized("%s", text)
	case status == http.StatusForbidden:
		e := contract.Unauthorized("%s", text)
		e.Code = CodeForbidden
		return e
	case status == http.StatusNotFound:
		return contract.NotFound("%s", text)
	case status == http.StatusRequestEntityTooLarge || status/100 == 4:
		return contract.Invalid("%s", text)
	case status == http.StatusServiceUnavailable || status == http.StatusBadGateway || status == http.StatusGatewayTimeout:
		return contract.Unavailable("%s", text)
	}
	return contract.EngineErr("%s", text)
}
