package wire_test

import (
	"testing"

	"mnemo/contract"
	"mnemo/server/wire"
)

// Every contract error the handler writes comes back from ErrorOf as the
// same kind, code and message: the two directions of the mapping agree.
func TestErrorsRoundTripThroughTheirStatus(t *testing.T) {
	forbidden := contract.Unauthorized("principal `rita` is a reader and cannot forget")
	forbidden.Code = wire.CodeForbidden
	for _, sent := range []*contract.Error{
		contract.QueryErr("limit must be between 1 and 1000"),
		contract.CursorErr("the cursor is not valid"),
		contract.Unsupported("engine `mnemo` does not erase"),
		contract.Unauthorized("the bearer token is not known to this server"),
		forbidden,
		contract.NotFound("record x does not exist"),
		contract.Conflict("record x is 'active', not a candidate"),
		contract.Unavailable("index rebuilding"),
		contract.EngineErr("the server's engine failed"),
	} {
		got := wire.ErrorOf(wire.StatusOf(sent), wire.EncodeError(wire.ErrorEnvelope(sent)))
		if got.Kind != sent.Kind || got.Code != sent.Code || got.Message != sent.Message {
			t.Errorf("%v: came back as %#v", sent, got)
		}
	}
}

// TestErrorEnvelopeBytes: the envelope is one line of JSON with <, > and &
// as they are, the code only on an invalid request; what is not an envelope
// is not read as one.
func TestErrorEnvelopeBytes(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{contract.Invalid("a <b> & c"), `{"error":{"kind":"invalid_request","message":"a <b> & c"}}`},
		{contract.CursorErr("cursor is not decodable"), `{"error":{"kind":"invalid_request","code":"continuation-invalid","message":"cursor is not decodable"}}`},
		{&contract.Error{Kind: contract.KindNotFound, Code: "internal", Message: "gone"}, `{"error":{"kind":"not_found","message":"gone"}}`},
		{contract.Expired("since 3 is before the feed's floor 9"), `{"error":{"kind":"expired","message":"since 3 is before the feed's floor 9"}}`},
	} {
		if got := string(wire.EncodeError(wire.ErrorEnvelope(c.err))); got != c.want {
			t.Errorf("%v: encoded %s, want %s", c.err, got, c.want)
		}
	}
	for _, body := range []string{``, `[]`, `{"error":null}`, `{"error":{"kind":"no such kind","message":"x"}}`, `<html>502</html>`} {
		if e, ok := wire.DecodeError([]byte(body)); ok {
			t.Errorf("%q read as an envelope: %v", body, e)
		}
	}
}
