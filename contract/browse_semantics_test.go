package contract

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
)

func TestFoldCase(t *testing.T) {
	cases := [][2]string{
		{"Élan", "éLAN"}, {"ЖУК", "жук"}, {"Straße", "STRAẞE"},
		{"k", "\u212a"}, {"ΣΑΣ", "σας"}, {"mixed ASCII", "MIXED ascii"},
	}
	for _, c := range cases {
		if FoldCase(c[0]) != FoldCase(c[1]) {
			t.Errorf("FoldCase(%q) = %q, FoldCase(%q) = %q; want equal", c[0], FoldCase(c[0]), c[1], FoldCase(c[1]))
		}
	}
	if FoldCase("a") == FoldCase("b") || FoldCase("é") == FoldCase("e") {
		t.Error("folding must not merge different letters")
	}
	if FoldCase("日本") != "日本" {
		t.Error("caseless runes are kept")
	}
	// Every rune folds like the members of its SimpleFold orbit, and the
	// ASCII and table fast paths agree with the orbit walk.
	for r := rune(0); r < 0x20000; r++ {
		if r >= 0xD800 && r < 0xE000 {
			continue
		}
		f := FoldCase(string(r))
		if f != string(foldRune(r)) || f != FoldCase(string(unicode.SimpleFold(r))) || !strings.EqualFold(f, string(r)) {
			t.Fatalf("FoldCase(%U) = %q, orbit minimum %q", r, f, string(foldRune(r)))
		}
		if mixed := FoldCase("é" + string(r)); mixed != FoldCase("é")+f {
			t.Fatalf("FoldCase(é%U) = %q in a non-ASCII string", r, mixed)
		}
	}
}

func TestBrowseContentOps(t *testing.T) {
	records := []Record{
		rec("a", withText("Prefers TABS over spaces")),
		rec("b", withText("Élan vital")),
		rec("c", withText("ЖУРНАЛ записей")),
		rec("d", withText("50% done_")),
		rec("e", withText("tabs")),
	}
	cases := []struct {
		op, value string
		want      []string
	}{
		{"contains", "tabs", []string{"a", "e"}},
		{"contains", "élan", []string{"b"}},
		{"contains", "журнал", []string{"c"}},
		{"contains", "50%", []string{"d"}},
		{"contains", "5_%", nil},
		{"contains", "%", []string{"d"}},
		{"contains", " over ", []string{"a"}},
		{"not_contains", "TABS", []string{"b", "c", "d"}},
		{"equals", "TABS", []string{"e"}},
		{"not_equals", "tabs", []string{"a", "b", "c", "d"}},
		{"starts_with", "prefers", []string{"a"}},
		{"starts_with", "ÉLAN", []string{"b"}},
		{"ends_with", "DONE_", []string{"d"}},
		{"ends_with", "ЗАПИСЕЙ", []string{"c"}},
	}
	for _, c := range cases {
		js := `{"filters":[{"field":"content","op":"` + c.op + `","value":` + quoteJSON(c.value) + `}],"order_by":[{"field":"updated_at","dir":"asc"}]}`
		got := browseIDs(t, js, records)
		if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("content %s %q = %v, want %v", c.op, c.value, got, c.want)
		}
	}
}

func TestBrowseSetAndShorthandFilters(t *testing.T) {
	records := []Record{
		rec("a", withStatus(StatusActive)),
		rec("b", withStatus(StatusCandidate), learning(0.5)),
		rec("c", withStatus(StatusSuperseded), withKind(KindConversation)),
		rec("d", withStatus(StatusCandidate)),
	}
	cases := []struct {
		js   string
		want []string
	}{
		{`{}`, []string{"a", "b", "c", "d"}},
		{`{"status":"candidate"}`, []string{"b", "d"}},
		{`{"status":["candidate","superseded"]}`, []string{"b", "c", "d"}},
		{`{"status":[]}`, nil},
		{`{"kind":[]}`, nil},
		{`{"kind":"learning"}`, []string{"b"}},
		{`{"kind":["learning","conversation"]}`, []string{"b", "c"}},
		{`{"filters":[{"field":"status","op":"in","values":["active","superseded"]}]}`, []string{"a", "c"}},
		{`{"filters":[{"field":"status","op":"not_in","values":["candidate"]}]}`, []string{"a", "c"}},
		{`{"filters":[{"field":"kind","op":"not_in","values":["document"]}]}`, []string{"b", "c"}},
		{`{"kind":"document","filters":[{"field":"kind","op":"not_in","values":["document"]}]}`, nil},
		{`{"status":"candidate","filters":[{"field":"kind","op":"in","values":["document"]}]}`, []string{"d"}},
		{`{"filter":{"statuses":["candidate"]},"status":["candidate","active"]}`, []string{"b", "d"}},
		{`{"filter":{"kinds":["document"]}}`, []string{"a", "d"}},
	}
	for _, c := range cases {
		got := browseIDs(t, c.js, records)
		slices.Sort(got)
		if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("%s = %v, want %v", c.js, got, c.want)
		}
	}
	// The total counts the same clause the page selects with.
	page, _ := BrowseSlice(mustParse(t, `{"status":["candidate","superseded"],"limit":1}`), records)
	if page.Total != 3 || len(page.Records) != 1 {
		t.Errorf("set total = %d with %d records, want 3 with 1", page.Total, len(page.Records))
	}
}

func TestBrowseNamespaceFilter(t *testing.T) {
	records := []Record{
		rec("root"),
		rec("acme", withNS("team:acme")),
		rec("acme-x", withNS("team:acme/agent:x")),
		rec("acmex", withNS("team:acmex")),
		rec("sandbox", withNS("team:acme/service:flow")),
	}
	cases := []struct {
		js   string
		want []string
	}{
		{`{"filters":[{"field":"namespace","op":"within","value":"team:acme"}]}`, []string{"acme", "acme-x"}},
		{`{"filters":[{"field":"namespace","op":"equals","value":"team:acme"}]}`, []string{"acme"}},
		{`{"filters":[{"field":"namespace","op":"equals","value":"root"}]}`, []string{"root"}},
		{`{"filters":[{"field":"namespace","op":"within","value":"root"}]}`, []string{"acme", "acme-x", "acmex", "root"}},
		// The filter's reach decides what is visible at all; the browse filter narrows it.
		{`{"filter":{"reach":{"at":"team:acme","inherit":false,"descendants":true}}}`, []string{"acme", "acme-x"}},
		{`{"filter":{"reach":{"at":"team:acme/service:flow","inherit":false,"descendants":true}},"filters":[{"field":"namespace","op":"within","value":"team:acme"}]}`, []string{"sandbox"}},
	}
	for _, c := range cases {
		got := browseIDs(t, c.js, records)
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s = %v, want %v", c.js, got, c.want)
		}
	}
}

func TestBrowseConfidenceFilter(t *testing.T) {
	records := []Record{
		rec("doc"),
		rec("l1", learning(0.1)), rec("l5", learning(0.5)), rec("l8", learning(0.8)), rec("l9", learning(0.9)),
	}
	cases := []struct {
		js   string
		want []string
	}{
		{`{"field":"confidence","op":"eq","value":0.8}`, []string{"l8"}},
		{`{"field":"confidence","op":"neq","value":0.8}`, []string{"l1", "l5", "l9"}},
		{`{"field":"confidence","op":"gt","value":0.5}`, []string{"l8", "l9"}},
		{`{"field":"confidence","op":"gte","value":0.5}`, []string{"l5", "l8", "l9"}},
		{`{"field":"confidence","op":"lt","value":0.5}`, []string{"l1"}},
		{`{"field":"confidence","op":"lte","value":0.5}`, []string{"l1", "l5"}},
		{`{"field":"confidence","op":"between","min":0.5,"max":0.9}`, []string{"l5", "l8", "l9"}},
		{`{"field":"confidence","op":"between","min":0.8,"max":0.8}`, []string{"l8"}},
		{`{"field":"confidence","op":"gte","value":-1}`, []string{"l1", "l5", "l8", "l9"}},
	}
	for _, c := range cases {
		got := browseIDs(t, `{"filters":[`+c.js+`]}`, records)
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s = %v, want %v (a record without confidence never matches)", c.js, got, c.want)
		}
	}
}

func TestBrowseDayFilters(t *testing.T) {
	records := []Record{
		rec("late", updated("2026-08-08T23:59:59.999Z"), created("2026-01-01T00:00:00Z"), observed("2026-08-09T00:00:00Z")),
		rec("early", updated("2026-08-09T00:00:00.000Z"), created("2026-01-02T00:00:00Z")),
		rec("mid", updated("2026-08-09T12:00:00.000Z"), created("2026-01-03T00:00:00Z"), observed("2026-08-09T23:59:59.999Z")),
		rec("next", updated("2026-08-10T00:00:00.000Z"), created("2026-01-04T00:00:00Z"), observed("2026-08-10T00:00:00Z")),
	}
	cases := []struct {
		js   string
		want []string
	}{
		{`{"field":"updated_at","op":"on_day","day":"2026-08-09"}`, []string{"early", "mid"}},
		{`{"field":"updated_at","op":"before_day","day":"2026-08-09"}`, []string{"late"}},
		{`{"field":"updated_at","op":"after_day","day":"2026-08-09"}`, []string{"next"}},
		{`{"field":"updated_at","op":"between_days","from_day":"2026-08-08","until_day":"2026-08-09"}`, []string{"early", "late", "mid"}},
		{`{"field":"created_at","op":"between_days","from_day":"2026-01-02","until_day":"2026-01-03"}`, []string{"early", "mid"}},
		{`{"field":"created_at","op":"on_day","day":"2026-01-04"}`, []string{"next"}},
		{`{"field":"observed_at","op":"on_day","day":"2026-08-09"}`, []string{"late", "mid"}},
		{`{"field":"observed_at","op":"before_day","day":"2030-01-01"}`, []string{"late", "mid", "next"}},
		{`{"field":"observed_at","op":"after_day","day":"2000-01-01"}`, []string{"late", "mid", "next"}},
	}
	for _, c := range cases {
		got := browseIDs(t, `{"filters":[`+c.js+`]}`, records)
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s = %v, want %v", c.js, got, c.want)
		}
	}
}

func TestBrowseExpiryAgainstNow(t *testing.T) {
	records := []Record{
		rec("never"),
		rec("past", expires("2026-05-01T00:00:00Z")),
		rec("exact", expires("2026-06-01T00:00:00Z")),
		rec("future", expires("2026-06-01T00:00:00.001Z")),
	}
	got := browseIDs(t, `{"now":"2026-06-01T00:00:00.000Z"}`, records)
	slices.Sort(got)
	if !slices.Equal(got, []string{"future", "never"}) {
		t.Errorf("with now: %v, want [future never] (expires_at == now is expired)", got)
	}
	if got := browseIDs(t, `{}`, records); len(got) != 4 {
		t.Errorf("without now every record is listed, got %v", got)
	}
}

func TestBrowseMetaFilterAnded(t *testing.T) {
	records := []Record{
		rec("a", withTags("x"), func(r *Record) { r.Meta.Folder = Ptr("/src/app") }),
		rec("b", withTags("y"), func(r *Record) { r.Meta.Folder = Ptr("/src/app") }),
		rec("c", withTags("x"), func(r *Record) { r.Meta.Folder = Ptr("/srcx") }),
	}
	got := browseIDs(t, `{"filter":{"folder":"/src","tags_any":["x","z"]}}`, records)
	if !slices.Equal(got, []string{"a"}) {
		t.Errorf("filter AND = %v, want [a]", got)
	}
}

func TestBrowseSortFieldsWithNulls(t *testing.T) {
	records := []Record{
		rec("B10", learning(0.5), updated("2026-01-02T00:00:00Z"), withNS("team:b"), withStatus(StatusCandidate)),
		rec("a9", learning(0.5), updated("2026-01-02T00:00:00Z"), observed("2025-01-01T00:00:00Z"), withStatus(StatusSuperseded)),
		rec("b2", updated("2026-01-01T00:00:00Z"), observed("2025-06-01T00:00:00Z"), withNS("agent:z"), withKind(KindConversation)),
		rec("c", learning(0.9), updated("2026-01-03T00:00:00Z"), created("2026-01-01T00:00:00Z")),
		rec("d", updated("2026-01-03T00:00:00Z"), created("2025-12-01T00:00:00Z")),
	}
	cases := []struct {
		order string
		want  []string
	}{
		{``, []string{"c", "d", "B10", "a9", "b2"}},
		{`{"field":"updated_at","dir":"asc"}`, []string{"b2", "B10", "a9", "c", "d"}},
		{`{"field":"confidence","dir":"desc"}`, []string{"c", "B10", "a9", "b2", "d"}},
		{`{"field":"confidence","dir":"asc"}`, []string{"B10", "a9", "c", "b2", "d"}},
		{`{"field":"observed_at","dir":"asc"}`, []string{"a9", "b2", "B10", "c", "d"}},
		{`{"field":"observed_at","dir":"desc"}`, []string{"b2", "a9", "B10", "c", "d"}},
		{`{"field":"created_at","dir":"asc"}`, []string{"d", "c", "B10", "a9", "b2"}},
		{`{"field":"namespace","dir":"asc"}`, []string{"b2", "a9", "c", "d", "B10"}},
		{`{"field":"namespace","dir":"desc"}`, []string{"B10", "a9", "c", "d", "b2"}},
		{`{"field":"kind","dir":"asc"}`, []string{"b2", "d", "B10", "a9", "c"}},
		{`{"field":"status","dir":"asc"}`, []string{"b2", "c", "d", "B10", "a9"}},
		{`{"field":"status","dir":"desc"},{"field":"confidence","dir":"desc"}`, []string{"a9", "B10", "c", "b2", "d"}},
		{`{"field":"namespace","dir":"asc"},{"field":"confidence","dir":"desc"}`, []string{"b2", "c", "a9", "d", "B10"}},
	}
	for _, c := range cases {
		js := `{}`
		if c.order != "" {
			js = `{"order_by":[` + c.order + `]}`
		}
		got := browseIDs(t, js, records)
		if !slices.Equal(got, c.want) {
			t.Errorf("order %s = %v, want %v", c.order, got, c.want)
		}
		// Walking one record at a time must give the same sequence.
		wq := mustParse(t, js)
		wq.Limit = 1
		seen, _, _ := walk(t, wq, records)
		if !slices.Equal(seen, c.want) {
			t.Errorf("order %s walked %v, want %v", c.order, seen, c.want)
		}
	}
}

func TestBrowseMillisecondPrecision(t *testing.T) {
	// Two records differing below a millisecond tie on the time and fall to the id,
	// so a cursor (which carries milliseconds) never skips or repeats one.
	base := mustTime("2026-01-01T00:00:00.123Z")
	records := []Record{
		rec("z", func(r *Record) { r.UpdatedAt = base.Add(900 * time.Microsecond) }),
		rec("y", func(r *Record) { r.UpdatedAt = base.Add(100 * time.Microsecond) }),
		rec("x", func(r *Record) { r.UpdatedAt = base }),
	}
	seen, _, _ := walk(t, BrowseQuery{Limit: 1}, records)
	if !slices.Equal(seen, []string{"x", "y", "z"}) {
		t.Errorf("walk %v, want [x y z]", seen)
	}
}

func TestBrowseOffset(t *testing.T) {
	records := []Record{rec("a"), rec("b"), rec("c"), rec("d"), rec("e")}
	page, _ := BrowseSlice(BrowseQuery{Offset: 2, Limit: 2}, records)
	if !slices.Equal(ids(page.Records), []string{"c", "d"}) || page.Total != 5 || page.Continuation == nil {
		t.Fatalf("offset page %v total %d", ids(page.Records), page.Total)
	}
	// An offset page's continuation carries on from its last row.
	next, _ := BrowseSlice(BrowseQuery{Limit: 2, Cursor: *page.Continuation}, records)
	if !slices.Equal(ids(next.Records), []string{"e"}) || next.Continuation != nil {
		t.Fatalf("after offset page %v", ids(next.Records))
	}
	past, _ := BrowseSlice(BrowseQuery{Offset: 99}, records)
	if len(past.Records) != 0 || past.Total != 5 || past.Continuation != nil {
		t.Fatalf("offset past the end: %v total %d", ids(past.Records), past.Total)
	}
}

func TestBrowseIdentityInvariance(t *testing.T) {
	same := [][]string{
		{
			`{"status":["active","candidate"],"filters":[{"field":"kind","op":"in","values":["learning","document"]},{"field":"content","op":"contains","value":"x"}]}`,
			`{"filters":[{"value":"x","op":"contains","field":"content"},{"field":"kind","values":["document","learning"],"op":"in"}],"status":["candidate","active"],"limit":7,"offset":3}`,
		},
		{`{}`, `{"order_by":[{"field":"updated_at","dir":"desc"}]}`, `{"order_by":[]}`, `{"limit":3,"cursor":"x"}`, `{"filter":{}}`, `{"filter":{"kinds":[]}}`},
		{`{"status":"active"}`, `{"status":["active"]}`},
		{`{"filter":{"tags_any":["b","a"],"kinds":["learning","document"]}}`, `{"filter":{"kinds":["document","learning"],"tags_any":["a","b"]}}`},
		{`{"filters":[{"field":"namespace","op":"within","value":" team:acme "}]}`, `{"filters":[{"field":"namespace","op":"within","value":"team:acme"}]}`},
	}
	for _, group := range same {
		want := mustParse(t, group[0]).Identity()
		for _, js := range group[1:] {
			if got := mustParse(t, js).Identity(); got != want {
				t.Errorf("identity of %s\n= %s\nwant %s", js, got, want)
			}
		}
	}
	differ := []string{
		`{}`, `{"status":[]}`, `{"status":"active"}`, `{"kind":"learning"}`,
		`{"now":"2026-01-01T00:00:00.000Z"}`, `{"now":"2026-01-01T00:00:00.001Z"}`,
		`{"order_by":[{"field":"updated_at","dir":"asc"}]}`,
		`{"order_by":[{"field":"kind","dir":"asc"},{"field":"status","dir":"asc"}]}`,
		`{"order_by":[{"field":"status","dir":"asc"},{"field":"kind","dir":"asc"}]}`,
		`{"filters":[{"field":"content","op":"contains","value":"x"}]}`,
		`{"filters":[{"field":"content","op":"contains","value":"X"}]}`,
		`{"filters":[{"field":"confidence","op":"gt","value":0.5}]}`,
		`{"filter":{"workspace":"w"}}`,
		`{"filter":{"reach":{"at":"team:acme"}}}`,
	}
	seen := map[string]string{}
	for _, js := range differ {
		id := mustParse(t, js).Identity()
		if prev, ok := seen[id]; ok {
			t.Errorf("%s and %s share identity %s", prev, js, id)
		}
		seen[id] = js
	}
}

func TestBrowseQueryJSONRoundTrip(t *testing.T) {
	for _, js := range []string{
		`{}`,
		`{"filter":{"reach":{"at":"team:acme","inherit":false,"descendants":true},"workspace":"w","kinds":["learning"],"observed_after":"2026-01-01T00:00:00Z","statuses":["candidate"]},"status":[],"kind":["learning","document"],"filters":[{"field":"status","op":"not_in","values":["superseded"]},{"field":"content","op":"contains","value":"<tabs> & \"quotes\""},{"field":"namespace","op":"within","value":"root"},{"field":"confidence","op":"between","min":0.25,"max":1}],"order_by":[{"field":"confidence","dir":"desc"}],"limit":10,"offset":3,"now":"2026-11-29T18:00:00.000Z"}`,
		`{"filters":[{"field":"confidence","op":"gt","value":1e-7},{"field":"updated_at","op":"between_days","from_day":"2026-01-01","until_day":"2026-02-01"},{"field":"observed_at","op":"on_day","day":"2026-01-01"}],"cursor":"abc"}`,
	} {
		q := mustParse(t, js)
		b, err := json.Marshal(q)
		if err != nil {
			t.Fatal(err)
		}
		var back BrowseQuery
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("re-parse of %s: %v", b, err)
		}
		b2, _ := json.Marshal(back)
		if string(b) != string(b2) || q.Identity() != back.Identity() || q.Limit != back.Limit || q.Offset != back.Offset || q.Cursor != back.Cursor {
			t.Errorf("round trip\n%s\n%s", b, b2)
		}
	}
	// The typed wire form, key by key.
	q := BrowseQuery{Status: []Status{}, Filters: []BrowseFilter{{Field: "confidence", Op: "lt", Num: 0.5, Text: "ignored"}}, Limit: 5}
	b, _ := json.Marshal(q)
	if want := `{"status":[],"filters":[{"field":"confidence","op":"lt","value":0.5}],"limit":5}`; string(b) != want {
		t.Errorf("marshal = %s\nwant %s", b, want)
	}
	var f BrowseFilter
	if err := json.Unmarshal([]byte(`{"field":"kind","op":"in","values":["memo"]}`), &f); err == nil || AsError(err).Code != CodeInvalidQuery {
		t.Errorf("BrowseFilter.UnmarshalJSON accepted a bad kind: %v", err)
	}
	if err := json.Unmarshal([]byte(`{"field":"kind","op":"in","values":["learning"]}`), &f); err != nil || f.Values[0] != "learning" {
		t.Errorf("BrowseFilter.UnmarshalJSON: %v %+v", err, f)
	}
}

func TestBrowseMatchesAgreesWithSlice(t *testing.T) {
	records := []Record{rec("a", learning(0.7)), rec("b", withStatus(StatusCandidate)), rec("c", expires("2020-01-01T00:00:00Z"))}
	q := mustParse(t, `{"now":"2026-01-01T00:00:00.000Z","filters":[{"field":"status","op":"in","values":["active"]}]}`)
	page, _ := BrowseSlice(q, records)
	var viaMatches []string
	for i := range records {
		if q.Matches(&records[i]) {
			viaMatches = append(viaMatches, records[i].ID)
		}
	}
	if !slices.Equal(ids(page.Records), viaMatches) || !slices.Equal(viaMatches, []string{"a"}) {
		t.Errorf("slice %v, matches %v, want [a]", ids(page.Records), viaMatches)
	}
}

func TestCursorRoundTripsKeys(t *testing.T) {
	r := rec("id-✓", learning(0.3), withNS("team:acme/agent:x"), observed("2026-01-01T00:00:00.5Z"))
	q := BrowseQuery{OrderBy: []SortKey{{"confidence", "desc"}, {"namespace", "asc"}, {"observed_at", "asc"}}}
	q.Cursor = EncodeCursor(q, &r)
	if strings.ContainsAny(q.Cursor, "+/=") {
		t.Errorf("cursor %q is not base64url without padding", q.Cursor)
	}
	pos, err := q.DecodeCursor()
	if err != nil {
		t.Fatal(err)
	}
	if pos.ID != "id-✓" || len(pos.Key) != 3 || pos.Key[1] != "team:acme/agent:x" || pos.Key[2] != "2026-01-01T00:00:00.500Z" {
		t.Fatalf("decoded %+v", pos)
	}
	if float32(pos.Key[0].(float64)) != 0.3 {
		t.Errorf("confidence key %v does not round-trip the f32", pos.Key[0])
	}
	if pos.After(q.Order(), &r) {
		t.Error("a record is not after its own position")
	}
	docs := rec("zz")
	if !pos.After(q.Order(), &docs) {
		t.Error("a record without confidence sorts after one with it")
	}
	nullKey := rec("n")
	q2 := BrowseQuery{OrderBy: []SortKey{{"observed_at", "desc"}}}
	q2.Cursor = EncodeCursor(q2, &nullKey)
	pos2, err := q2.DecodeCursor()
	if err != nil || pos2.Key[0] != nil {
		t.Fatalf("null key: %+v %v", pos2, err)
	}
	if none, _ := (BrowseQuery{}).DecodeCursor(); none != nil {
		t.Error("no cursor decodes to nil")
	}
}

func TestContentASCIIPathAgreesWithFolding(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	alphabet := "aAbBkK sS-\u212a\u017f"
	draw := func(n int) string {
		runes := []rune(alphabet)
		var b strings.Builder
		for range n {
			b.WriteRune(runes[rng.IntN(len(runes))])
		}
		return b.String()
	}
	for range 20000 {
		text, needle := draw(rng.IntN(8)), draw(1+rng.IntN(3))
		if !isASCII(text) {
			continue
		}
		for _, op := range BrowseFilterOps(BrowseFieldContent) {
			c := compileFilter(BrowseFilter{Field: BrowseFieldContent, Op: op, Text: needle})
			r := rec("x", withText(text))
			got := c.admits(&r, func() string { return FoldCase(r.Text) })
			slow := c
			slow.asciiNeedle = false
			want := slow.admits(&r, func() string { return FoldCase(r.Text) })
			if got != want {
				t.Fatalf("%s %q on %q: fast %v, folded %v", op, needle, text, got, want)
			}
		}
	}
}

func TestBrowseFilterWireShapes(t *testing.T) {
	cases := []struct {
		f    BrowseFilter
		want string
	}{
		{BrowseFilter{Field: "status", Op: "in", Values: []string{"active"}}, `{"field":"status","op":"in","values":["active"]}`},
		{BrowseFilter{Field: "kind", Op: "not_in", Values: []string{"document", "learning"}}, `{"field":"kind","op":"not_in","values":["document","learning"]}`},
		{BrowseFilter{Field: "content", Op: "starts_with", Text: "<a&b>"}, `{"field":"content","op":"starts_with","value":"<a&b>"}`},
		{BrowseFilter{Field: "namespace", Op: "within", Text: "team:acme"}, `{"field":"namespace","op":"within","value":"team:acme"}`},
		{BrowseFilter{Field: "confidence", Op: "gte", Num: 0.75}, `{"field":"confidence","op":"gte","value":0.75}`},
		{BrowseFilter{Field: "confidence", Op: "between", Min: 0, Max: 1}, `{"field":"confidence","op":"between","min":0,"max":1}`},
		{BrowseFilter{Field: "created_at", Op: "after_day", Day: "2026-01-01"}, `{"field":"created_at","op":"after_day","day":"2026-01-01"}`},
		{BrowseFilter{Field: "observed_at", Op: "between_days", FromDay: "2026-01-01", UntilDay: "2026-01-31"}, `{"field":"observed_at","op":"between_days","from_day":"2026-01-01","until_day":"2026-01-31"}`},
	}
	for _, c := range cases {
		// MarshalJSON itself, as json.Marshal HTML-escapes a marshaler's output
		// (`<` becomes \u003c: the same JSON value).
		b, err := c.f.MarshalJSON()
		if err != nil || string(b) != c.want {
			t.Errorf("marshal %+v = %s (%v), want %s", c.f, b, err, c.want)
		}
		var back BrowseFilter
		if err := json.Unmarshal(b, &back); err != nil {
			t.Errorf("%s does not parse back: %v", b, err)
		}
		if canonicalFilter(back) != canonicalFilter(c.f) {
			t.Errorf("%s parsed to %+v", b, back)
		}
	}
}
