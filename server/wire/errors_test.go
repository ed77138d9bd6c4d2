package wire_test

import (
	"encoding/json"
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
		body, err := json.Marshal(contract.ErrorBody{Error: contract.DetailOf(sent)})
		if err != nil {
			t.Fatal(err)
		}
		got := wire.ErrorOf(wire.StatusOf(sent), body)
		if got.Kind != sent.Kind || got.Code != sent.Code || got.Message != sent.Message {
			t.Errorf("%v: came back as %#v", sent, got)
		}
	}
}
