package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"mnemo/contract"
	"mnemo/engine/memory"
	"mnemo/server/httpapi"
)

var fuzzOps = []string{"store", "store_many", "fetch", "recall", "list", "forget", "forget_within",
	"explore", "get", "get_records", "export", "browse", "review", "supersede", "erase", "consolidate", "beliefs"}

// FuzzRequestBodies sends arbitrary bodies to every operation: the answer is
// always JSON, a refusal is always a client error with a known kind, and no
// body makes the server fail (500) or panic.
func FuzzRequestBodies(f *testing.F) {
	seeds := []string{
		`{"type":"document","body":{"text":"x"},"meta":{"source":{"kind":"agent"}}}`,
		`{"item":{"type":"learning","text":"t","kind":"preference","confidence":0.5,"meta":{}},"options":{"status":"candidate"}}`,
		`[{"type":"document","body":{"text":"x"},"meta":{}}]`, `{"items":[],"options":{}}`,
		`{"query":"x","mode":"keyword","limit":3}`, `{"question":"why","limit":2}`, `{"limit":5,"cursor":"zz"}`,
		`{"ids":["a"]}`, `{"filter":{"tags_any":["a"]}}`, `{"ids":["a"],"reach":{"at":"team:x"}}`,
		`{"facet":"tag","limit":5}`, `{"order_by":[{"field":"confidence","dir":"up"}]}`, `{"status":[],"limit":1001}`,
		`{"id":"a","action":"approve"}`, `{"id":"a","by":"a"}`, `{"reach":{"at":"","descendants":true}}`,
		`{"reach":{},"limit":0}`, `null`, `[]`, `"x"`, `{`, ``,
	}
	for i, s := range seeds {
		f.Add(uint8(i), s)
	}
	h := httpapi.New(memory.New(), httpapi.Options{Open: true, ListingRate: httpapi.Rate{PerSecond: -1}})
	f.Fuzz(func(t *testing.T, opIndex uint8, body string) {
		op := fuzzOps[int(opIndex)%len(fuzzOps)]
		req := httptest.NewRequest(http.MethodPost, "/v1/"+op, strings.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %q: status %d %s", op, body, rec.Code, rec.Body.String())
		}
		var out any
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("%s %q: the answer is not JSON: %s", op, body, rec.Body.String())
		}
		if rec.Code != http.StatusOK {
			var e struct {
				Error struct{ Kind, Message string }
			}
			_ = json.Unmarshal(rec.Body.Bytes(), &e)
			if _, ok := contract.ErrorKindFromWire(e.Error.Kind); !ok || e.Error.Message == "" {
				t.Fatalf("%s %q: error body %s", op, body, rec.Body.String())
			}
		}
	})
}
