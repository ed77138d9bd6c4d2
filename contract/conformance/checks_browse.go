package conformance

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"time"

	"mnemo/contract"
)

// mnemo's browse checks (docs/spec/contract.md section 4).

func (r *run) browsePage(q contract.BrowseQuery) (contract.BrowsePage, error) {
	p, err := r.e.Browse(r.ctx, q)
	if err != nil {
		return p, engineErr(err)
	}
	return p, nil
}

func checkBrowseValidation(r *run) error {
	good := contract.BrowseFilter{Field: "content", Op: "contains", Text: "x"}
	cases := []struct {
		what string
		q    contract.BrowseQuery
	}{
		{"a limit above 1000", contract.BrowseQuery{Limit: 1001}},
		{"a negative limit", contract.BrowseQuery{Limit: -1}},
		{"a negative offset", contract.BrowseQuery{Offset: -1}},
		{"a cursor with a non-zero offset", contract.BrowseQuery{Cursor: "abc", Offset: 2}},
		{"an unknown sort field", contract.BrowseQuery{OrderBy: []contract.SortKey{{Field: "content", Dir: "asc"}}}},
		{"a bad sort direction", contract.BrowseQuery{OrderBy: []contract.SortKey{{Field: "kind", Dir: "up"}}}},
		{"a sort field named twice", contract.BrowseQuery{OrderBy: []contract.SortKey{{Field: "kind", Dir: "asc"}, {Field: "kind", Dir: "desc"}}}},
		{"four sort keys", contract.BrowseQuery{OrderBy: []contract.SortKey{{Field: "kind", Dir: "asc"}, {Field: "status", Dir: "asc"}, {Field: "namespace", Dir: "asc"}, {Field: "confidence", Dir: "asc"}}}},
		{"an unknown filter field", contract.BrowseQuery{Filters: []contract.BrowseFilter{{Field: "tags", Op: "in", Values: []string{"x"}}}}},
		{"an unknown op", contract.BrowseQuery{Filters: []contract.BrowseFilter{{Field: "content", Op: "like", Text: "x"}}}},
		{"a filter field named twice", contract.BrowseQuery{Filters: []contract.BrowseFilter{good, {Field: "content", Op: "equals", Text: "y"}}}},
		{"nine filters", contract.BrowseQuery{Filters: slices.Repeat([]contract.BrowseFilter{good}, 9)}},
		{"an empty content value", contract.BrowseQuery{Filters: []contract.BrowseFilter{{Field: "content", Op: "contains"}}}},
		{"a content value over 1024 bytes", contract.BrowseQuery{Filters: []contract.BrowseFilter{{Field: "content", Op: "contains", Text: strings.Repeat("é", 513)}}}},
		{"an empty status set", contract.BrowseQuery{Filters: []contract.BrowseFilter{{Field: "status", Op: "in"}}}},
		{"an unknown status", contract.BrowseQuery{Filters: []contract.BrowseFilter{{Field: "status", Op: "in", Values: []string{"archived"}}}}},
		{"confidence between with min > max", contract.BrowseQuery{Filters: []contract.BrowseFilter{{Field: "confidence", Op: "between", Min: 0.75, Max: 0.25}}}},
		{"an unreal day", contract.BrowseQuery{Filters: []contract.BrowseFilter{{Field: "updated_at", Op: "on_day", Day: "2024-02-30"}}}},
		{"a day in the wrong shape", contract.BrowseQuery{Filters: []contract.BrowseFilter{{Field: "created_at", Op: "before_day", Day: "2024-3-5"}}}},
		{"between_days running backwards", contract.BrowseQuery{Filters: []contract.BrowseFilter{{Field: "observed_at", Op: "between_days", FromDay: "2024-03-06", UntilDay: "2024-03-05"}}}},
		{"a namespace that does not parse", contract.BrowseQuery{Filters: []contract.BrowseFilter{{Field: "namespace", Op: "within", Text: "robot:x"}}}},
	}
	for _, c := range cases {
		c.q.Filter = r.filter()
		_, err := r.e.Browse(r.ctx, c.q)
		if e := wantCode(err, contract.CodeInvalidQuery, "browse with "+c.what); e != nil {
			return e
		}
	}
	return nil
}

type filterCase struct {
	what string
	f    contract.BrowseFilter
	want []string
}

func checkBrowseFilters(r *run) error {
	fx, err := r.fixture()
	if err != nil {
		return err
	}
	all, err := r.browsePage(fx.query(r))
	if err != nil {
		return err
	}
	if !sameSet(recordIDs(all.Records), fx.idsOf(fixtureLabels[:]...)) || all.Total != len(fixtureLabels[:]) {
		return fail("browsing the fixture answered %s (total %d); want all six records", fx.labelled(recordIDs(all.Records)), all.Total)
	}
	for _, got := range all.Records {
		want := fx.records[got.ID]
		if got.Kind != want.Kind || got.Text != want.Text || got.Status != want.Status ||
			!got.CreatedAt.Equal(want.CreatedAt) || !got.UpdatedAt.Equal(want.UpdatedAt) ||
			wireJSON(got.Meta) != wireJSON(want.Meta) || !confEqual(got.Confidence, f32ptr(want.Confidence)) {
			return fail("browse answered the fixture record %s as %s; get_records reads %s", fx.labels[got.ID], wireJSON(got), wireJSON(want))
		}
	}
	m := strings.ToUpper(r.marker)
	bx := fx.bx.String()
	cases := []filterCase{
		{"status in [candidate]", contract.BrowseFilter{Field: "status", Op: "in", Values: []string{"candidate"}}, []string{"L2", "C5"}},
		{"status not_in [candidate]", contract.BrowseFilter{Field: "status", Op: "not_in", Values: []string{"candidate"}}, []string{"L1", "L3", "D4", "D6"}},
		{"kind in [learning]", contract.BrowseFilter{Field: "kind", Op: "in", Values: []string{"learning"}}, []string{"L1", "L2", "L3"}},
		{"kind not_in [learning document]", contract.BrowseFilter{Field: "kind", Op: "not_in", Values: []string{"learning", "document"}}, []string{"C5"}},
		{"content contains TABS", contract.BrowseFilter{Field: "content", Op: "contains", Text: "TABS"}, []string{"L1"}},
		{"content contains émile (folding É)", contract.BrowseFilter{Field: "content", Op: "contains", Text: "émile"}, []string{"L2"}},
		{"content contains 50% (literal)", contract.BrowseFilter{Field: "content", Op: "contains", Text: "50%"}, []string{"L3"}},
		{"content contains _under (literal)", contract.BrowseFilter{Field: "content", Op: "contains", Text: "l_under"}, []string{"L3"}},
		{"content not_contains delta", contract.BrowseFilter{Field: "content", Op: "not_contains", Text: "DELTA"}, []string{"L1", "L2", "L3", "C5", "D6"}},
		{"content equals the upper-cased text", contract.BrowseFilter{Field: "content", Op: "equals", Text: strings.ToUpper(fx.texts["L1"])}, []string{"L1"}},
		{"content not_equals a text", contract.BrowseFilter{Field: "content", Op: "not_equals", Text: fx.texts["D6"]}, []string{"L1", "L2", "L3", "D4", "C5"}},
		{"content starts_with", contract.BrowseFilter{Field: "content", Op: "starts_with", Text: m + " ALPHA"}, []string{"L1"}},
		{"content ends_with жук (folding Ж)", contract.BrowseFilter{Field: "content", Op: "ends_with", Text: "жук"}, []string{"L2"}},
		{"content ends_with on a conversation", contract.BrowseFilter{Field: "content", Op: "ends_with", Text: "EPSILON ANSWER"}, []string{"C5"}},
		{"namespace equals root", contract.BrowseFilter{Field: "namespace", Op: "equals", Text: "root"}, []string{"L2", "C5", "D6"}},
		{"namespace equals a node", contract.BrowseFilter{Field: "namespace", Op: "equals", Text: bx}, []string{"L1"}},
		{"namespace within a node (segment-bounded)", contract.BrowseFilter{Field: "namespace", Op: "within", Text: bx}, []string{"L1", "L3"}},
		{"namespace within root", contract.BrowseFilter{Field: "namespace", Op: "within", Text: "root"}, fixtureLabels[:]},
		{"confidence eq 0.5", contract.BrowseFilter{Field: "confidence", Op: "eq", Num: 0.5}, []string{"L3"}},
		{"confidence neq 0.5", contract.BrowseFilter{Field: "confidence", Op: "neq", Num: 0.5}, []string{"L1", "L2"}},
		{"confidence gt 0.25", contract.BrowseFilter{Field: "confidence", Op: "gt", Num: 0.25}, []string{"L1", "L3"}},
		{"confidence gte 0.25", contract.BrowseFilter{Field: "confidence", Op: "gte", Num: 0.25}, []string{"L1", "L2", "L3"}},
		{"confidence lt 0.75", contract.BrowseFilter{Field: "confidence", Op: "lt", Num: 0.75}, []string{"L2", "L3"}},
		{"confidence lte 0.5", contract.BrowseFilter{Field: "confidence", Op: "lte", Num: 0.5}, []string{"L2", "L3"}},
		{"confidence between 0.25 and 0.5", contract.BrowseFilter{Field: "confidence", Op: "between", Min: 0.25, Max: 0.5}, []string{"L2", "L3"}},
		{"observed_at on_day 2024-03-05", contract.BrowseFilter{Field: "observed_at", Op: "on_day", Day: "2024-03-05"}, []string{"L1"}},
		{"observed_at on_day 2024-03-04 (last millisecond)", contract.BrowseFilter{Field: "observed_at", Op: "on_day", Day: "2024-03-04"}, []string{"D4"}},
		{"observed_at before_day 2024-03-05", contract.BrowseFilter{Field: "observed_at", Op: "before_day", Day: "2024-03-05"}, []string{"D4"}},
		{"observed_at after_day 2024-03-05", contract.BrowseFilter{Field: "observed_at", Op: "after_day", Day: "2024-03-05"}, []string{"L3"}},
		{"observed_at between_days", contract.BrowseFilter{Field: "observed_at", Op: "between_days", FromDay: "2024-03-04", UntilDay: "2024-03-05"}, []string{"L1", "D4"}},
	}
	// Record times come from the engine's clock, so their day cases are worked
	// out from the times read back.
	for _, field := range []string{"created_at", "updated_at"} {
		at := func(rec contract.Record) string {
			if field == "created_at" {
				return rec.CreatedAt.UTC().Format(time.DateOnly)
			}
			return rec.UpdatedAt.UTC().Format(time.DateOnly)
		}
		day := at(fx.records[fx.ids["L1"]])
		t, _ := time.Parse(time.DateOnly, day)
		prev := t.AddDate(0, 0, -1).Format(time.DateOnly)
		cases = append(cases,
			filterCase{field + " on_day", contract.BrowseFilter{Field: field, Op: "on_day", Day: day},
				fx.where(func(rec contract.Record) bool { return at(rec) == day })},
			filterCase{field + " before_day", contract.BrowseFilter{Field: field, Op: "before_day", Day: day},
				fx.where(func(rec contract.Record) bool { return at(rec) < day })},
			filterCase{field + " after_day", contract.BrowseFilter{Field: field, Op: "after_day", Day: prev},
				fx.where(func(rec contract.Record) bool { return at(rec) > prev })},
			filterCase{field + " between_days", contract.BrowseFilter{Field: field, Op: "between_days", FromDay: prev, UntilDay: day},
				fx.where(func(rec contract.Record) bool { return at(rec) >= prev && at(rec) <= day })},
		)
	}
	for _, c := range cases {
		q := fx.query(r)
		q.Filters = []contract.BrowseFilter{c.f}
		if err := r.expectBrowse(fx, c.what, q, fx.idsOf(c.want...)); err != nil {
			return err
		}
	}

	shorthand := []struct {
		what string
		set  func(*contract.BrowseQuery)
		want []string
	}{
		{"status [] (matches nothing)", func(q *contract.BrowseQuery) { q.Status = []contract.Status{} }, nil},
		{"kind [] (matches nothing)", func(q *contract.BrowseQuery) { q.Kind = []contract.ItemKind{} }, nil},
		{"status [candidate]", func(q *contract.BrowseQuery) { q.Status = []contract.Status{contract.StatusCandidate} }, []string{"L2", "C5"}},
		{"kind [document]", func(q *contract.BrowseQuery) { q.Kind = []contract.ItemKind{contract.KindDocument} }, []string{"D4", "D6"}},
		{"a filter reach of exact(root)", func(q *contract.BrowseQuery) {
			reach := contract.ReachExact(contract.Root())
			q.Filter.Reach = &reach
		}, []string{"L2", "C5", "D6"}},
		{"kind [learning] and status in [active]", func(q *contract.BrowseQuery) {
			q.Kind = []contract.ItemKind{contract.KindLearning}
			q.Filters = []contract.BrowseFilter{{Field: "status", Op: "in", Values: []string{"active"}}}
		}, []string{"L1", "L3"}},
		{"status [active] and status not_in [active]", func(q *contract.BrowseQuery) {
			q.Status = []contract.Status{contract.StatusActive}
			q.Filters = []contract.BrowseFilter{{Field: "status", Op: "not_in", Values: []string{"active"}}}
		}, nil},
	}
	for _, c := range shorthand {
		q := fx.query(r)
		c.set(&q)
		if err := r.expectBrowse(fx, c.what, q, fx.idsOf(c.want...)); err != nil {
			return err
		}
	}
	return nil
}

func f32ptr(c *contract.F32) *float32 {
	if c == nil {
		return nil
	}
	v := float32(*c)
	return &v
}

// expectBrowse runs q (whose limit holds the whole answer) and compares the set
// of records and the total with want.
func (r *run) expectBrowse(fx *browseFixture, what string, q contract.BrowseQuery, want []string) error {
	p, err := r.browsePage(q)
	if err != nil {
		return err
	}
	got := recordIDs(p.Records)
	if !sameSet(got, want) {
		return fail("browse with %s answered %s; want %s", what, fx.labelled(got), fx.labelled(want))
	}
	if p.Total != len(want) {
		return fail("browse with %s counted a total of %d; want %d", what, p.Total, len(want))
	}
	if p.Continuation != nil {
		return fail("browse with %s answered a continuation on a page that was not full", what)
	}
	return nil
}

func sortCombos() [][]contract.SortKey {
	var out [][]contract.SortKey
	for _, f := range contract.BrowseSortFields() {
		for _, d := range []string{"asc", "desc"} {
			out = append(out, []contract.SortKey{{Field: f, Dir: d}})
		}
	}
	return append(out,
		[]contract.SortKey{{Field: "kind", Dir: "asc"}, {Field: "confidence", Dir: "desc"}},
		[]contract.SortKey{{Field: "status", Dir: "desc"}, {Field: "namespace", Dir: "asc"}, {Field: "observed_at", Dir: "desc"}},
	)
}

func orderString(order []contract.SortKey) string {
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = k.Field + " " + k.Dir
	}
	return strings.Join(parts, ", ")
}

func checkBrowseOrder(r *run) error {
	fx, err := r.fixture()
	if err != nil {
		return err
	}
	recs := make([]contract.Record, 0, len(fx.records))
	for _, l := range fixtureLabels[:] {
		recs = append(recs, fx.records[fx.ids[l]])
	}
	for _, order := range append(sortCombos(), nil) {
		q := fx.query(r)
		q.OrderBy = order
		p, err := r.browsePage(q)
		if err != nil {
			return err
		}
		resolved := order
		if resolved == nil {
			resolved = []contract.SortKey{{Field: "updated_at", Dir: "desc"}}
		}
		want := expectedOrder(resolved, recs)
		if got := recordIDs(p.Records); !slices.Equal(got, want) {
			return fail("browse ordered by %s answered %s; want %s", orderString(resolved), fx.labelled(got), fx.labelled(want))
		}
	}
	return nil
}

// walk follows continuations from q and checks each page: total constant and
// equal to the first page's, a continuation exactly when the page is full.
func (r *run) walk(q contract.BrowseQuery) (ids []string, total int, pages int, err error) {
	total = -1
	for range maxPages {
		p, err := r.browsePage(q)
		if err != nil {
			return nil, 0, 0, err
		}
		pages++
		if total == -1 {
			total = p.Total
		} else if p.Total != total {
			return nil, 0, 0, fail("the total changed from %d to %d on page %d of a walk ordered by %s", total, p.Total, pages, orderString(q.Order()))
		}
		limit := q.EffectiveLimit()
		full := len(p.Records) == limit
		if len(p.Records) > limit {
			return nil, 0, 0, fail("a browse page with limit %d held %d records", limit, len(p.Records))
		}
		ids = append(ids, recordIDs(p.Records)...)
		if full != (p.Continuation != nil) {
			return nil, 0, 0, fail("page %d of a walk held %d of %d records but its continuation is %v; a continuation comes exactly with a full page", pages, len(p.Records), limit, p.Continuation != nil)
		}
		if p.Continuation == nil {
			return ids, total, pages, nil
		}
		q.Cursor = *p.Continuation
		q.Offset = 0
	}
	return nil, 0, 0, fail("a browse walk did not end within 10000 pages")
}

func checkBrowseWalk(r *run) error {
	fx, err := r.fixture()
	if err != nil {
		return err
	}
	n := len(fixtureLabels[:])
	now := r.walkNow
	for _, c := range []struct {
		limit, pages int
	}{{3, 3}, {2, 4}, {4, 2}, {6, 2}, {7, 1}} {
		q := fx.query(r)
		q.Limit = c.limit
		q.Now = &now
		ids, total, pages, err := r.walk(q)
		if err != nil {
			return err
		}
		if total != n {
			return fail("a walk of the %d fixture records with limit %d counted a total of %d", n, c.limit, total)
		}
		if !sameSet(ids, fx.idsOf(fixtureLabels[:]...)) {
			return fail("a walk of the fixture with limit %d visited %s; want each of the six records once", c.limit, fx.labelled(ids))
		}
		if pages != c.pages {
			return fail("a walk of %d records with limit %d took %d pages; want %d (an exact multiple ends with one empty page)", n, c.limit, pages, c.pages)
		}
	}
	q := fx.query(r)
	q.Now = &now
	whole, err := r.browsePage(q)
	if err != nil {
		return err
	}
	q.Limit, q.Offset = 2, 3
	off, err := r.browsePage(q)
	if err != nil {
		return err
	}
	if len(whole.Records) != n {
		return fail("browsing the six fixture records answered %d", len(whole.Records))
	}
	if got, want := recordIDs(off.Records), recordIDs(whole.Records)[3:5]; !slices.Equal(got, want) || off.Total != n {
		return fail("browse with offset 3 and limit 2 answered %s (total %d); want %s (total %d)", fx.labelled(got), off.Total, fx.labelled(want), n)
	}

	listed, err := r.listAll(r.filter())
	if err != nil {
		return err
	}
	for _, order := range [][]contract.SortKey{nil, {{Field: "confidence", Dir: "desc"}}, {{Field: "observed_at", Dir: "asc"}, {Field: "kind", Dir: "desc"}}, {{Field: "namespace", Dir: "desc"}, {Field: "created_at", Dir: "asc"}}} {
		q := contract.BrowseQuery{Filter: r.filter(), OrderBy: order, Limit: 5, Now: &now}
		ids, total, _, err := r.walk(q)
		if err != nil {
			return err
		}
		if total != len(listed) {
			return fail("a walk of the run ordered by %s counted %d records; the listing holds %d", orderString(q.Order()), total, len(listed))
		}
		if !sameSet(ids, hitIDs(listed)) {
			return fail("a walk of the run ordered by %s did not visit each of its %d records exactly once (visited %d)", orderString(q.Order()), len(listed), len(ids))
		}
	}
	return nil
}

func checkBrowseCursor(r *run) error {
	fx, err := r.fixture()
	if err != nil {
		return err
	}
	now := r.walkNow
	base := fx.query(r)
	base.Limit = 2
	base.Now = &now
	first, err := r.browsePage(base)
	if err != nil {
		return err
	}
	if first.Continuation == nil {
		return fail("a full first page of the fixture came without a continuation")
	}
	cursor := *first.Continuation

	forged := []struct{ what, cursor string }{
		{"a cursor that is not base64", "not a cursor!"},
		{"a cursor that is not JSON", base64.RawURLEncoding.EncodeToString([]byte("hello"))},
		{"a cursor of another version", base64.RawURLEncoding.EncodeToString([]byte(`{"v":99,"fp":"00000000","key":["2026-01-01T00:00:00.000Z"],"id":"x"}`))},
		{"a cursor with a made-up fingerprint", base64.RawURLEncoding.EncodeToString([]byte(`{"v":1,"fp":"00000000","key":["2026-01-01T00:00:00.000Z"],"id":"x"}`))},
	}
	for _, f := range forged {
		q := base
		q.Cursor = f.cursor
		_, err := r.e.Browse(r.ctx, q)
		if e := wantCode(err, contract.CodeContinuationInvalid, "browse with "+f.what); e != nil {
			return e
		}
	}
	later := now.Add(time.Millisecond)
	others := []struct {
		what string
		set  func(*contract.BrowseQuery)
	}{
		{"another status set", func(q *contract.BrowseQuery) { q.Status = []contract.Status{contract.StatusActive} }},
		{"another order", func(q *contract.BrowseQuery) { q.OrderBy = []contract.SortKey{{Field: "kind", Dir: "asc"}} }},
		{"another filter", func(q *contract.BrowseQuery) {
			q.Filters = []contract.BrowseFilter{{Field: "content", Op: "contains", Text: r.marker}}
		}},
		{"another now", func(q *contract.BrowseQuery) { q.Now = &later }},
		{"no now", func(q *contract.BrowseQuery) { q.Now = nil }},
	}
	for _, o := range others {
		q := base
		q.Cursor = cursor
		o.set(&q)
		_, err := r.e.Browse(r.ctx, q)
		if e := wantCode(err, contract.CodeContinuationInvalid, "a cursor used with "+o.what); e != nil {
			return e
		}
	}
	q := base
	q.Cursor, q.Offset = cursor, 1
	_, err = r.e.Browse(r.ctx, q)
	if e := wantCode(err, contract.CodeInvalidQuery, "a cursor with a non-zero offset"); e != nil {
		return e
	}

	whole := base
	whole.Limit = contract.BrowseMaxLimit
	all, err := r.browsePage(whole)
	if err != nil {
		return err
	}
	q = base
	q.Cursor, q.Limit = cursor, 3
	next, err := r.browsePage(q)
	if err != nil {
		return err
	}
	if len(all.Records) != len(fixtureLabels[:]) {
		return fail("browsing the six fixture records answered %d", len(all.Records))
	}
	if got, want := recordIDs(next.Records), recordIDs(all.Records)[2:5]; !slices.Equal(got, want) {
		return fail("a cursor followed with another limit answered %s; want %s", fx.labelled(got), fx.labelled(want))
	}
	return nil
}

func checkBrowseExpiry(r *run) error {
	tag := r.marker + "-expiry"
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	expiries := []*time.Time{contract.Ptr(now.Add(-time.Hour)), contract.Ptr(now), contract.Ptr(now.Add(time.Hour)), nil}
	ids := make([]string, len(expiries))
	for i, exp := range expiries {
		rec, err := r.storeWith(r.document(fmt.Sprintf("expiry %d", i), r.taggedMeta(tag)), contract.WriteOptions{ExpiresAt: exp})
		if err != nil {
			return err
		}
		ids[i] = rec.ID
	}
	q := contract.BrowseQuery{Filter: r.tagFilter(tag), Limit: 10}
	all, err := r.browsePage(q)
	if err != nil {
		return err
	}
	if !sameSet(recordIDs(all.Records), ids) || all.Total != 4 {
		return fail("browse without now answered %d records (total %d); want all 4, expired ones included", len(all.Records), all.Total)
	}
	for _, rec := range all.Records {
		i := slices.Index(ids, rec.ID)
		want := expiries[i]
		if (rec.ExpiresAt == nil) != (want == nil) || (want != nil && !rec.ExpiresAt.Equal(*want)) {
			return fail("record %d reads back with expires_at %v; it was stored with %v", i, rec.ExpiresAt, want)
		}
	}
	q.Now = &now
	p, err := r.browsePage(q)
	if err != nil {
		return err
	}
	if got := recordIDs(p.Records); !sameSet(got, ids[2:]) || p.Total != 2 {
		return fail("browse with now %s kept %d records (total %d); want only the two that expire after now or never (expires_at == now is expired)",
			contract.FormatMillis(now), len(got), p.Total)
	}
	before := now.Add(-2 * time.Hour)
	q.Now = &before
	p, err = r.browsePage(q)
	if err != nil {
		return err
	}
	if !sameSet(recordIDs(p.Records), ids) || p.Total != 4 {
		return fail("browse with a now before every expiry kept %d records (total %d); want all 4", len(p.Records), p.Total)
	}
	return nil
}
