package contract_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"mnemo/contract"
)

// browsePageOf is a browse page holding the records of a page of changes,
// as a server writes it.
func browsePageOf(t testing.TB, changes contract.ChangesPage, continuation *string) []byte {
	t.Helper()
	page := contract.BrowsePage{Total: 95044, Continuation: continuation}
	for _, c := range changes.Changes {
		if c.Record != nil {
			page.Records = append(page.Records, *c.Record)
		}
	}
	body, err := page.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// TestBrowsePageDecode: a browse page read in one pass holds the records
// encoding/json reads record by record (Record.UnmarshalJSON), and a page
// they refuse is refused with the same words.
func TestBrowsePageDecode(t *testing.T) {
	// slow is BrowsePage without its UnmarshalJSON: the way it was read.
	type slow struct {
		Records      []contract.Record `json:"records"`
		Total        int               `json:"total"`
		Continuation *string           `json:"continuation"`
	}
	next := "c2Vlaw"
	bodies := map[string]string{
		"mixed":   string(browsePageOf(t, changesPageFixture(40), &next)),
		"load":    string(browsePageOf(t, loadPageFixture(200), nil)),
		"empty":   `{"records":[],"total":0,"continuation":null}`,
		"null":    `{"records":null,"total":3}`,
		"spaced":  ` { "total" : 7 , "records" : [ ] } `,
		"unknown": `{"records":[],"total":1,"continuation":null,"took_ms":{"a":[1,"}"]}}`,
		// Left to encoding/json: a key in another case, a key twice, a
		// negative total, escapes, text after the page.
		"case":     `{"Records":[],"total":1}`,
		"twice":    `{"records":[],"total":1,"total":2}`,
		"negative": `{"records":[],"total":-1}`,
		"escaped":  strings.Replace(string(browsePageOf(t, loadPageFixture(3), nil)), `"text":"agent`, `"text":"\u0061gent`, 1),
		// Refused by both, in the same words.
		"status": strings.Replace(string(browsePageOf(t, loadPageFixture(3), nil)), `"status":"active"`, `"status":"asleep"`, 1),
		"kind":   strings.Replace(string(browsePageOf(t, loadPageFixture(3), nil)), `"kind":"document"`, `"kind":"poem"`, 1),
		"time":   strings.Replace(string(browsePageOf(t, loadPageFixture(3), nil)), `"created_at":"2026`, `"created_at":"20x6`, 1),
		"after":  `{"records":[],"total":1} {}`,
		"cut":    `{"records":[{"id":"x"`,
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			var got contract.BrowsePage
			gotErr := json.Unmarshal([]byte(body), &got)
			var want slow
			wantErr := json.Unmarshal([]byte(body), &want)
			if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
				t.Fatalf("error %v, want %v", gotErr, wantErr)
			}
			if gotErr == nil && !reflect.DeepEqual(got, contract.BrowsePage(want)) {
				t.Fatalf("read\n%+v\nwant\n%+v", got, want)
			}
		})
	}
	// The server's pages are those worth reading fast, and they hold
	// something: a check on the fixtures themselves.
	var p contract.BrowsePage
	if err := p.UnmarshalJSON([]byte(bodies["mixed"])); err != nil || len(p.Records) != 30 || *p.Continuation != next || p.Total != 95044 {
		t.Fatalf("mixed page: %d records, continuation %v, total %d, err %v", len(p.Records), p.Continuation, p.Total, err)
	}
}

func BenchmarkBrowsePageDecode(b *testing.B) {
	body := browsePageOf(b, loadPageFixture(200), nil)
	b.Run("page", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			var p contract.BrowsePage
			if err := p.UnmarshalJSON(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("record-by-record", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			var p struct {
				Records      []contract.Record `json:"records"`
				Total        int               `json:"total"`
				Continuation *string           `json:"continuation"`
			}
			if err := json.Unmarshal(body, &p); err != nil {
				b.Fatal(err)
			}
		}
	})
}
