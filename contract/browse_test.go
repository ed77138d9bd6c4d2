package contract

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// rec builds a record for browse tests; opts tweak it.
func rec(id string, opts ...func(*Record)) Record {
	base := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	r := Record{ID: id, Kind: KindDocument, Text: "text of " + id, Status: StatusActive,
		CreatedAt: base, UpdatedAt: base, Meta: MemoryMeta{Source: SourceRef{Kind: SourceAgent}}}
	for _, o := range opts {
		o(&r)
	}
	return r
}

func learning(conf float32) func(*Record) {
	return func(r *Record) { r.Kind = KindLearning; r.Confidence = Ptr(F32(conf)) }
}
func withText(s string) func(*Record)   { return func(r *Record) { r.Text = s } }
func withStatus(s Status) func(*Record) { return func(r *Record) { r.Status = s } }
func withKind(k ItemKind) func(*Record) { return func(r *Record) { r.Kind = k } }
func withNS(ns string) func(*Record)    { return func(r *Record) { r.Meta.Namespace = MustNamespace(ns) } }
func updated(ts string) func(*Record)   { return func(r *Record) { r.UpdatedAt = mustTime(ts) } }
func created(ts string) func(*Record)   { return func(r *Record) { r.CreatedAt = mustTime(ts) } }
func observed(ts string) func(*Record) {
	return func(r *Record) { r.Meta.ObservedAt = Ptr(mustTime(ts)) }
}
func expires(ts string) func(*Record)       { return func(r *Record) { r.ExpiresAt = Ptr(mustTime(ts)) } }
func withTags(tags ...string) func(*Record) { return func(r *Record) { r.Meta.Tags = tags } }

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func ids(rs []Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

func mustParse(t *testing.T, js string) BrowseQuery {
	t.Helper()
	q, err := ParseBrowseQuery([]byte(js))
	if err != nil {
		t.Fatalf("ParseBrowseQuery(%s): %v", js, err)
	}
	return q
}

func browseIDs(t *testing.T, js string, records []Record) []string {
	t.Helper()
	page, err := BrowseSlice(mustParse(t, js), records)
	if err != nil {
		t.Fatalf("BrowseSlice(%s): %v", js, err)
	}
	return ids(page.Records)
}

func wantCode(t *testing.T, err error, code, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s %q", code, msg)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not a contract error", err)
	}
	if e.Kind != KindInvalidRequest || e.Code != code || e.Message != msg {
		t.Fatalf("error\n got %s/%s %q\nwant %s/%s %q", e.Kind, e.Code, e.Message, KindInvalidRequest, code, msg)
	}
}

func TestParseBrowseQueryMessages(t *testing.T) {
	long := strings.Repeat("a", 4097)
	cases := []struct{ name, js, msg string }{
		{"not json", `{`, "a browse query must be valid JSON"},
		{"not object", `[1]`, "a browse query must be a JSON object"},
		{"null", `null`, "a browse query must be a JSON object"},
		{"unknown key", `{"limit":0,"bogus":1,"zeta":2}`, `unknown browse query key "bogus" (expected one of: filter, status, kind, filters, order_by, limit, offset, cursor, now)`},
		{"limit 0", `{"limit":0}`, "limit must be an integer >= 1"},
		{"limit fraction", `{"limit":1.5}`, "limit must be an integer >= 1"},
		{"limit string", `{"limit":"5"}`, "limit must be an integer >= 1"},
		{"limit null", `{"limit":null}`, "limit must be an integer >= 1"},
		{"limit over", `{"limit":1001}`, "limit must be at most 1000"},
		{"limit huge", `{"limit":1e400}`, "limit must be an integer >= 1"},
		{"limit before offset", `{"limit":0,"offset":-1}`, "limit must be an integer >= 1"},
		{"offset negative", `{"offset":-1}`, "offset must be an integer >= 0"},
		{"offset fraction", `{"offset":0.5}`, "offset must be an integer >= 0"},
		{"offset before cursor", `{"offset":-1,"cursor":""}`, "offset must be an integer >= 0"},
		{"cursor empty", `{"cursor":""}`, "cursor must be a non-empty string"},
		{"cursor number", `{"cursor":5}`, "cursor must be a non-empty string"},
		{"cursor long", `{"cursor":"` + long + `"}`, "cursor must be at most 4096 characters"},
		{"cursor offset", `{"cursor":"abc","offset":10}`, "cursor and a non-zero offset cannot be combined — a keyset continuation already carries the position"},
		{"cursor before filter", `{"cursor":"","filter":3}`, "cursor must be a non-empty string"},
		{"filter not object", `{"filter":3}`, "filter: a filter must be a JSON object"},
		{"filter bad kind", `{"filter":{"kinds":["nope"]}}`, "filter: `nope` is not an item kind"},
		{"filter bad type", `{"filter":{"workspace":3}}`, "filter: workspace must be a string"},
		{"filter bad namespace", `{"filter":{"reach":{"at":"team"}}}`, "filter: namespace segment `team` must be written kind:id"},
		{"filter before now", `{"filter":3,"now":"x"}`, "filter: a filter must be a JSON object"},
		{"now shape", `{"now":"2026-02-01T00:00:00Z"}`, `now must be a full ISO-8601 UTC instant ("YYYY-MM-DDTHH:MM:SS.sssZ")`},
		{"now date only", `{"now":"2026-02-01"}`, `now must be a full ISO-8601 UTC instant ("YYYY-MM-DDTHH:MM:SS.sssZ")`},
		{"now number", `{"now":5}`, `now must be a full ISO-8601 UTC instant ("YYYY-MM-DDTHH:MM:SS.sssZ")`},
		{"now feb 31", `{"now":"2026-02-31T00:00:00.000Z"}`, `now "2026-02-31T00:00:00.000Z" is not a real UTC instant`},
		{"now 24h", `{"now":"2026-02-01T24:00:00.000Z"}`, `now "2026-02-01T24:00:00.000Z" is not a real UTC instant`},
		{"now month 99", `{"now":"2026-99-01T00:00:00.000Z"}`, `now "2026-99-01T00:00:00.000Z" is not a real UTC instant`},
		{"now before status", `{"now":"x","status":"nope"}`, `now must be a full ISO-8601 UTC instant ("YYYY-MM-DDTHH:MM:SS.sssZ")`},
		{"status object", `{"status":{}}`, "status must be a value or an array of values"},
		{"status null", `{"status":null}`, "status must be a value or an array of values"},
		{"status bad", `{"status":"nope"}`, `invalid status "nope" (expected one of: candidate, active, superseded)`},
		{"status bad member", `{"status":["active",3]}`, `invalid status 3 (expected one of: candidate, active, superseded)`},
		{"status before kind", `{"status":"nope","kind":"nope"}`, `invalid status "nope" (expected one of: candidate, active, superseded)`},
		{"kind bad", `{"kind":["learning","memo"]}`, `invalid kind "memo" (expected one of: document, conversation, learning)`},
		{"kind number", `{"kind":7}`, "kind must be a value or an array of values"},
		{"filters object", `{"filters":{}}`, "filters must be an array"},
		{"filters null", `{"filters":null}`, "filters must be an array"},
		{"filters nine", `{"filters":[1,1,1,1,1,1,1,1,1]}`, "at most 8 filters"},
		{"filter element", `{"filters":[1]}`, "each filter must be an object"},
		{"filter field unknown", `{"filters":[{"field":"tags","op":"in"}]}`, `unknown filter field "tags" (expected one of: status, kind, content, namespace, confidence, updated_at, created_at, observed_at)`},
		{"filter field missing", `{"filters":[{"op":"in"}]}`, `unknown filter field null (expected one of: status, kind, content, namespace, confidence, updated_at, created_at, observed_at)`},
		{"filter twice", `{"filters":[{"field":"kind","op":"in","values":["learning"]},{"field":"kind","op":"bogus"}]}`, `at most one filter per field; "kind" appears twice`},
		{"op unknown", `{"filters":[{"field":"content","op":"x"}]}`, `unknown op "x" for filter field "content" (expected one of: contains, not_contains, equals, not_equals, starts_with, ends_with)`},
		{"op camel", `{"filters":[{"field":"status","op":"notIn","values":["active"]}]}`, `unknown op "notIn" for filter field "status" (expected one of: in, not_in)`},
		{"op missing", `{"filters":[{"field":"confidence"}]}`, `unknown op null for filter field "confidence" (expected one of: eq, neq, gt, gte, lt, lte, between)`},
		{"op namespace", `{"filters":[{"field":"namespace","op":"starts_with","value":"x"}]}`, `unknown op "starts_with" for filter field "namespace" (expected one of: equals, within)`},
		{"op day", `{"filters":[{"field":"observed_at","op":"on","day":"2026-01-01"}]}`, `unknown op "on" for filter field "observed_at" (expected one of: on_day, before_day, after_day, between_days)`},
		{"values missing", `{"filters":[{"field":"status","op":"in"}]}`, "status values must be an array"},
		{"values empty", `{"filters":[{"field":"status","op":"in","values":[]}]}`, "status values must not be empty"},
		{"values bad", `{"filters":[{"field":"kind","op":"not_in","values":["nope"]}]}`, `invalid kind "nope" (expected one of: document, conversation, learning)`},
		{"values number", `{"filters":[{"field":"status","op":"in","values":[1]}]}`, `invalid status 1 (expected one of: candidate, active, superseded)`},
		{"content missing", `{"filters":[{"field":"content","op":"contains"}]}`, "content value must be a string"},
		{"content empty", `{"filters":[{"field":"content","op":"contains","value":""}]}`, "content value must not be empty"},
		{"content long", `{"filters":[{"field":"content","op":"contains","value":"` + strings.Repeat("é", 513) + `"}]}`, "content value must be at most 1024 bytes"},
		{"namespace empty", `{"filters":[{"field":"namespace","op":"equals","value":""}]}`, "namespace value must not be empty"},
		{"namespace bad", `{"filters":[{"field":"namespace","op":"within","value":"team:acme/x"}]}`, "namespace value: namespace segment `x` must be written kind:id"},
		{"namespace kind", `{"filters":[{"field":"namespace","op":"within","value":"org:acme"}]}`, "namespace value: `org` is not a namespace segment kind"},
		{"confidence string", `{"filters":[{"field":"confidence","op":"gt","value":"0.5"}]}`, "confidence value must be a finite number"},
		{"confidence huge", `{"filters":[{"field":"confidence","op":"gt","value":1e999}]}`, "confidence value must be a finite number"},
		{"confidence min", `{"filters":[{"field":"confidence","op":"between","max":1}]}`, "confidence min must be a finite number"},
		{"confidence max", `{"filters":[{"field":"confidence","op":"between","min":0,"max":null}]}`, "confidence max must be a finite number"},
		{"confidence order", `{"filters":[{"field":"confidence","op":"between","min":0.9,"max":0.1}]}`, "confidence between requires min <= max"},
		{"day shape", `{"filters":[{"field":"updated_at","op":"on_day","day":"2026-8-9"}]}`, `updated_at day must be a "YYYY-MM-DD" UTC day`},
		{"day missing", `{"filters":[{"field":"created_at","op":"before_day"}]}`, `created_at day must be a "YYYY-MM-DD" UTC day`},
		{"day unreal", `{"filters":[{"field":"updated_at","op":"after_day","day":"2026-02-30"}]}`, `updated_at day "2026-02-30" is not a real calendar day`},
		{"from shape", `{"filters":[{"field":"observed_at","op":"between_days","from_day":1,"until_day":"x"}]}`, `observed_at from_day must be a "YYYY-MM-DD" UTC day`},
		{"from before until", `{"filters":[{"field":"observed_at","op":"between_days","from_day":"2026-02-30","until_day":5}]}`, `observed_at from_day "2026-02-30" is not a real calendar day`},
		{"until unreal", `{"filters":[{"field":"observed_at","op":"between_days","from_day":"2026-02-01","until_day":"2026-13-01"}]}`, `observed_at until_day "2026-13-01" is not a real calendar day`},
		{"days reversed", `{"filters":[{"field":"updated_at","op":"between_days","from_day":"2026-02-02","until_day":"2026-02-01"}]}`, "updated_at between_days requires from_day <= until_day"},
		{"extra operand", `{"filters":[{"field":"content","op":"contains","value":"x","values":["y"]}]}`, `filter "content" with op "contains" does not take "values" (it takes: value)`},
		{"filters before order", `{"filters":3,"order_by":3}`, "filters must be an array"},
		{"order object", `{"order_by":{}}`, "order_by must be an array"},
		{"order four", `{"order_by":[1,2,3,4]}`, "at most 3 order_by entries"},
		{"order element", `{"order_by":[1]}`, "each order_by entry must be an object"},
		{"sort field", `{"order_by":[{"field":"x","dir":"asc"}]}`, `unknown sort field "x" (expected one of: updated_at, created_at, observed_at, confidence, namespace, kind, status)`},
		{"sort content", `{"order_by":[{"field":"content","dir":"asc"}]}`, `unknown sort field "content" (expected one of: updated_at, created_at, observed_at, confidence, namespace, kind, status)`},
		{"sort dir", `{"order_by":[{"field":"kind","dir":"sideways"}]}`, `sort direction must be "asc" or "desc", got "sideways"`},
		{"sort dir missing", `{"order_by":[{"field":"kind"}]}`, `sort direction must be "asc" or "desc", got null`},
		{"sort repeat", `{"order_by":[{"field":"kind","dir":"asc"},{"field":"kind","dir":"desc"}]}`, `order_by repeats the field "kind"`},
		{"sort extra", `{"order_by":[{"field":"kind","dir":"asc","nulls":"last"}]}`, `an order_by entry takes only field and dir, not "nulls"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseBrowseQuery([]byte(c.js))
			wantCode(t, err, CodeInvalidQuery, c.msg)
		})
	}
}

func TestParseBrowseQueryAccepts(t *testing.T) {
	for _, js := range []string{
		`{}`,
		`{"limit":1000}`, `{"limit":1e3}`, `{"limit":5.0}`, `{"offset":0,"cursor":"abc"}`,
		`{"cursor":"` + strings.Repeat("a", 4096) + `"}`,
		`{"filter":null}`, `{"status":[]}`, `{"kind":"learning"}`,
		`{"filters":[]}`, `{"order_by":[]}`,
		`{"filters":[{"field":"content","op":"contains","value":"` + strings.Repeat("é", 512) + `"}]}`,
		`{"filters":[{"field":"namespace","op":"within","value":"root"}]}`,
		`{"filters":[
			{"field":"status","op":"in","values":["active"]},
			{"field":"kind","op":"not_in","values":["document"]},
			{"field":"content","op":"ends_with","value":"x"},
			{"field":"namespace","op":"equals","value":"team:acme"},
			{"field":"confidence","op":"between","min":0,"max":1},
			{"field":"updated_at","op":"between_days","from_day":"2026-01-01","until_day":"2026-01-01"},
			{"field":"created_at","op":"before_day","day":"2028-02-29"},
			{"field":"observed_at","op":"after_day","day":"2026-12-31"}]}`,
		`{"order_by":[{"field":"confidence","dir":"desc"},{"field":"namespace","dir":"asc"},{"field":"observed_at","dir":"asc"}]}`,
	} {
		if _, err := ParseBrowseQuery([]byte(js)); err != nil {
			t.Errorf("ParseBrowseQuery(%s): %v", js, err)
		}
	}
}

func TestValidateTypedMessages(t *testing.T) {
	cases := []struct {
		q   BrowseQuery
		msg string
	}{
		{BrowseQuery{Limit: -1}, "limit must be an integer >= 1"},
		{BrowseQuery{Limit: 1001}, "limit must be at most 1000"},
		{BrowseQuery{Offset: -3}, "offset must be an integer >= 0"},
		{BrowseQuery{Cursor: "c", Offset: 1}, "cursor and a non-zero offset cannot be combined — a keyset continuation already carries the position"},
		{BrowseQuery{Cursor: strings.Repeat("c", 4097)}, "cursor must be at most 4096 characters"},
		{BrowseQuery{Filter: MetaFilter{Sources: []SourceKind{"mail"}}}, "filter: `mail` is not a source kind"},
		{BrowseQuery{Now: Ptr(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))}, `now must be a full ISO-8601 UTC instant ("YYYY-MM-DDTHH:MM:SS.sssZ")`},
		{BrowseQuery{Status: []Status{"gone"}}, `invalid status "gone" (expected one of: candidate, active, superseded)`},
		{BrowseQuery{Kind: []ItemKind{"memo"}}, `invalid kind "memo" (expected one of: document, conversation, learning)`},
		{BrowseQuery{Filters: make([]BrowseFilter, 9)}, "at most 8 filters"},
		{BrowseQuery{Filters: []BrowseFilter{{Field: "tags"}}}, `unknown filter field "tags" (expected one of: status, kind, content, namespace, confidence, updated_at, created_at, observed_at)`},
		{BrowseQuery{Filters: []BrowseFilter{{Field: "content", Op: "contains", Text: "a"}, {Field: "content"}}}, `at most one filter per field; "content" appears twice`},
		{BrowseQuery{Filters: []BrowseFilter{{Field: "status", Op: "in"}}}, "status values must not be empty"},
		{BrowseQuery{Filters: []BrowseFilter{{Field: "confidence", Op: "lt", Num: 0.5}}}, ""},
		{BrowseQuery{Limit: 1001, Offset: -1}, "limit must be at most 1000"},
		{BrowseQuery{Offset: -1, Cursor: strings.Repeat("c", 5000)}, "offset must be an integer >= 0"},
		{BrowseQuery{Status: []Status{"x"}, Filters: make([]BrowseFilter, 9)}, `invalid status "x" (expected one of: candidate, active, superseded)`},
		{BrowseQuery{Filters: []BrowseFilter{{Field: "namespace", Op: "equals", Text: "robot:x"}}}, "namespace value: `robot` is not a namespace segment kind"},
		{BrowseQuery{Filters: []BrowseFilter{{Field: "confidence", Op: "between", Min: 1, Max: 0}}}, "confidence between requires min <= max"},
		{BrowseQuery{Filters: []BrowseFilter{{Field: "updated_at", Op: "on_day", Day: "2026-02-29"}}}, `updated_at day "2026-02-29" is not a real calendar day`},
		{BrowseQuery{OrderBy: []SortKey{{"a", "asc"}, {"b", "asc"}, {"c", "asc"}, {"d", "asc"}}}, "at most 3 order_by entries"},
		{BrowseQuery{OrderBy: []SortKey{{"status", "up"}}}, `sort direction must be "asc" or "desc", got "up"`},
		{BrowseQuery{OrderBy: []SortKey{{"status", "asc"}, {"status", "asc"}}}, `order_by repeats the field "status"`},
	}
	for i, c := range cases {
		err := c.q.Validate()
		// The wire form of the same query fails on the same first check.
		wire, merr := json.Marshal(c.q)
		if merr != nil {
			t.Fatalf("case %d: marshal: %v", i, merr)
		}
		_, perr := ParseBrowseQuery(wire)
		if c.msg == "" {
			if err != nil || perr != nil {
				t.Errorf("case %d: unexpected %v / %v", i, err, perr)
			}
			continue
		}
		wantCode(t, err, CodeInvalidQuery, c.msg)
		wantCode(t, perr, CodeInvalidQuery, c.msg)
	}
}

// walk follows continuations from q's first page and returns every id seen and
// each page's total.
func walk(t *testing.T, q BrowseQuery, records []Record) (seen []string, totals []int, pages int) {
	t.Helper()
	for {
		page, err := BrowseSlice(q, records)
		if err != nil {
			t.Fatalf("page %d: %v", pages, err)
		}
		if page.Records == nil {
			t.Fatalf("page %d: records is nil", pages)
		}
		pages++
		seen = append(seen, ids(page.Records)...)
		totals = append(totals, page.Total)
		if page.Continuation == nil {
			return
		}
		q.Cursor = *page.Continuation
		if pages > 1000 {
			t.Fatal("walk does not end")
		}
	}
}

func TestBrowseWalkVisitsEveryRecordOnce(t *testing.T) {
	var records []Record
	for i := range 23 {
		opts := []func(*Record){updated(fmt.Sprintf("2026-03-%02dT10:00:00.000Z", 1+i%5))}
		if i%3 == 0 {
			opts = append(opts, learning(float32(i%4)/4))
		}
		if i%4 == 0 {
			opts = append(opts, observed(fmt.Sprintf("2026-01-%02dT00:00:00Z", 1+i%3)))
		}
		records = append(records, rec(fmt.Sprintf("r%02d", (i*7)%23), opts...))
	}
	orders := [][]SortKey{
		nil,
		{{"confidence", "desc"}},
		{{"confidence", "asc"}, {"updated_at", "desc"}},
		{{"observed_at", "asc"}},
		{{"observed_at", "desc"}, {"confidence", "asc"}},
		{{"namespace", "asc"}, {"kind", "desc"}, {"status", "asc"}},
		{{"created_at", "asc"}},
	}
	now := mustTime("2026-04-01T00:00:00Z")
	for _, order := range orders {
		for _, limit := range []int{1, 4, 23, 50} {
			q := BrowseQuery{OrderBy: order, Limit: limit, Now: &now}
			seen, totals, pages := walk(t, q, records)
			full, _ := BrowseSlice(BrowseQuery{OrderBy: order, Limit: 1000, Now: &now}, records)
			if !slices.Equal(seen, ids(full.Records)) {
				t.Errorf("order %v limit %d: walk %v\nwant %v", order, limit, seen, ids(full.Records))
			}
			for _, tot := range totals {
				if tot != 23 {
					t.Errorf("order %v limit %d: total %d on some page, want 23", order, limit, tot)
				}
			}
			wantPages := 23/limit + 1
			if pages != wantPages {
				t.Errorf("order %v limit %d: %d pages, want %d", order, limit, pages, wantPages)
			}
		}
	}
}

func TestBrowseExactMultipleEndsWithEmptyPage(t *testing.T) {
	records := []Record{rec("a"), rec("b"), rec("c"), rec("d")}
	q := BrowseQuery{Limit: 2}
	p1, _ := BrowseSlice(q, records)
	q.Cursor = *p1.Continuation
	p2, _ := BrowseSlice(q, records)
	if p2.Continuation == nil {
		t.Fatal("a full second page must carry a continuation")
	}
	q.Cursor = *p2.Continuation
	p3, err := BrowseSlice(q, records)
	if err != nil {
		t.Fatal(err)
	}
	if len(p3.Records) != 0 || p3.Total != 4 || p3.Continuation != nil {
		t.Fatalf("last page = %d records, total %d, continuation %v", len(p3.Records), p3.Total, p3.Continuation)
	}
	b, _ := json.Marshal(p3)
	if string(b) != `{"records":[],"total":4,"continuation":null}` {
		t.Fatalf("empty page JSON %s", b)
	}
	empty, _ := BrowseSlice(BrowseQuery{}, nil)
	if b, _ := json.Marshal(empty); string(b) != `{"records":[],"total":0,"continuation":null}` {
		t.Fatalf("empty store JSON %s", b)
	}
}

func TestBrowseCursorRejections(t *testing.T) {
	records := []Record{rec("a"), rec("b"), rec("c")}
	q := BrowseQuery{Limit: 1, Status: []Status{StatusActive}}
	p1, _ := BrowseSlice(q, records)
	good := *p1.Continuation
	payload, _ := base64.RawURLEncoding.DecodeString(good)
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	fp := q.Fingerprint()
	cases := []struct {
		name   string
		q      BrowseQuery
		cursor string
		msg    string
	}{
		{"garbage", q, "!!!", "cursor is not decodable"},
		{"padded", q, good + "=", "cursor is not decodable"},
		{"not json", q, enc("hello"), "cursor is not decodable"},
		{"json array", q, enc("[1]"), "cursor is not decodable"},
		{"version", q, enc(strings.Replace(string(payload), `"v":1`, `"v":2`, 1)), "cursor version is not supported"},
		{"no version", q, enc(`{"fp":"` + fp + `","key":[],"id":"a"}`), "cursor version is not supported"},
		{"foreign status", BrowseQuery{Limit: 1, Status: []Status{StatusCandidate}}, good, "cursor belongs to a different query"},
		{"foreign order", BrowseQuery{Limit: 1, Status: []Status{StatusActive}, OrderBy: []SortKey{{"kind", "asc"}}}, good, "cursor belongs to a different query"},
		{"foreign now", BrowseQuery{Limit: 1, Status: []Status{StatusActive}, Now: Ptr(mustTime("2026-01-01T00:00:00Z"))}, good, "cursor belongs to a different query"},
		{"tampered fp", q, enc(strings.Replace(string(payload), fp, "00000000", 1)), "cursor belongs to a different query"},
		{"key length", q, enc(`{"v":1,"fp":"` + fp + `","key":[],"id":"a"}`), "cursor key does not match the requested sort order"},
		{"key missing", q, enc(`{"v":1,"fp":"` + fp + `","id":"a"}`), "cursor key does not match the requested sort order"},
		{"key type", q, enc(`{"v":1,"fp":"` + fp + `","key":[5],"id":"a"}`), `cursor key does not match the requested sort order: the key for "updated_at" must be a full ISO-8601 UTC instant`},
		{"key null", q, enc(`{"v":1,"fp":"` + fp + `","key":[null],"id":"a"}`), `cursor key does not match the requested sort order: the key for "updated_at" must be a full ISO-8601 UTC instant`},
		{"id missing", q, enc(`{"v":1,"fp":"` + fp + `","key":["2026-03-10T12:00:00.000Z"]}`), "cursor id is missing"},
		{"id empty", q, enc(`{"v":1,"fp":"` + fp + `","key":["2026-03-10T12:00:00.000Z"],"id":""}`), "cursor id is missing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.q.Cursor = c.cursor
			_, err := BrowseSlice(c.q, records)
			wantCode(t, err, CodeContinuationInvalid, c.msg)
		})
	}
	// The same cursor with a different limit or offset 0 is the same walk.
	for _, q2 := range []BrowseQuery{{Limit: 5, Status: []Status{StatusActive}, Cursor: good}, {Limit: 1, Status: []Status{StatusActive}, Cursor: good}} {
		page, err := BrowseSlice(q2, records)
		if err != nil || !slices.Equal(ids(page.Records), []string{"b", "c"}[:min(2, q2.Limit)]) {
			t.Errorf("limit %d: %v %v", q2.Limit, ids(page.Records), err)
		}
	}
}

func TestBrowseConfidenceCursorWithNulls(t *testing.T) {
	records := []Record{rec("doc1"), rec("l1", learning(0.1)), rec("l2", learning(0.2)), rec("doc2"), rec("l3", learning(0.3))}
	for _, dir := range []string{"asc", "desc"} {
		q := BrowseQuery{Limit: 1, OrderBy: []SortKey{{"confidence", dir}}}
		seen, _, _ := walk(t, q, records)
		want := []string{"l1", "l2", "l3", "doc1", "doc2"}
		if dir == "desc" {
			want = []string{"l3", "l2", "l1", "doc1", "doc2"}
		}
		if !slices.Equal(seen, want) {
			t.Errorf("confidence %s walk %v, want %v", dir, seen, want)
		}
	}
}
