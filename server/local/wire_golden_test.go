package local

import (
	"net/http/httptest"
	"strconv"
	"testing"

	"mnemo/contract"
)

// TestAdminErrorBytes: the local endpoints' error answers are byte for byte
// those of b344131 (an attached process of another version reads them).
func TestAdminErrorBytes(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{contract.Invalid("a <b> & c"), "400 {\"error\":{\"kind\":\"invalid_request\",\"message\":\"a \\u003cb\\u003e \\u0026 c\"}}\n"},
		{contract.CursorErr("cursor is not decodable"), "400 {\"error\":{\"kind\":\"invalid_request\",\"code\":\"continuation-invalid\",\"message\":\"cursor is not decodable\"}}\n"},
		{contract.Unavailable("the store is closing"), "503 {\"error\":{\"kind\":\"unavailable\",\"message\":\"the store is closing\"}}\n"},
		{contract.NotFound("no such record"), "404 {\"error\":{\"kind\":\"not_found\",\"message\":\"no such record\"}}\n"},
	} {
		w := httptest.NewRecorder()
		writeJSON(w, nil, c.err)
		if got := strconv.Itoa(w.Code) + " " + w.Body.String(); got != c.want {
			t.Errorf("%v: answered %q, want %q", c.err, got, c.want)
		}
	}
}
