package httpapi_test

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"mnemo/server/httpapi"
)

// TestAnswerBytesAreTheGoldens: empty lists and error envelopes leave the
// server byte for byte as the goldens say (written by the server of b344131):
// clients and scripts read these bytes.
func TestAnswerBytesAreTheGoldens(t *testing.T) {
	f := newFixture(t, httpapi.Options{})
	cases := []struct{ method, op, token, body string }{
		{"POST", "get", ownerToken, `{"ids":["0000000000000000000000000000000000000000000000000000000000000000"]}`},
		{"POST", "get_records", ownerToken, `{"ids":["0000000000000000000000000000000000000000000000000000000000000000"]}`},
		{"POST", "beliefs", ownerToken, `{"reach":{"at":"team:none"},"limit":5}`},
		{"POST", "list", ownerToken, `{"filter":{"namespace":{"at":"team:none"}},"limit":5}`},
		{"POST", "explore", ownerToken, `{"facet":"tag","filter":{"namespace":{"at":"team:none"}},"limit":5}`},
		{"POST", "fetch", ownerToken, `{"query":"nothing matches zzzz","mode":"keyword","limit":5}`},
		{"POST", "forget_within", ownerToken, `{"ids":["0000000000000000000000000000000000000000000000000000000000000000"],"reach":{"at":"team:none"}}`},
		{"POST", "get", ownerToken, `{"ids":[]}`},
		{"POST", "get", ownerToken, `{"ids":`},
		{"POST", "store", ownerToken, `{"type":"document","body":{"text":""}}`},
		{"POST", "store_many", ownerToken, `[]`},
		{"POST", "browse", ownerToken, `{"limit":5,"cursor":"<not a cursor> & more"}`},
		{"POST", "browse", ownerToken, `{"limit":5,"query":"status = = active"}`},
		{"POST", "get", "", `{"ids":["x"]}`},
		{"POST", "get", "wrong-token", `{"ids":["x"]}`},
		{"POST", "store", readerToken, `{"type":"document","body":{"text":"outside"},"meta":{"namespace":"team:other"}}`},
		{"POST", "no_such_op", ownerToken, `{}`},
		{"GET", "get", ownerToken, ``},
	}
	var b strings.Builder
	for _, c := range cases {
		req, err := http.NewRequest(c.method, f.srv.URL+"/v1/"+c.op, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		b.WriteString(c.method + " " + c.op + " " + c.body + "\n" + strconv.Itoa(resp.StatusCode) + " " + string(data) + "\n")
	}
	golden.RequireEqual(t, b.String())
}
