package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"mnemo/bench/corpus"
	"mnemo/contract"
)

// The fixture and query generator of the engines' oracle tests: each engine
// fills a store with FillCorpus, reads it back with Snapshot, and compares
// its browse and explore answers with contract's oracles over the snapshot
// for queries from RandomBrowseQuery.

// SteppingClock advances by step per call from a fixed instant, so records
// of one batch share created_at and later writes sort after them.
func SteppingClock(start time.Time, step time.Duration) func() time.Time {
	var mu = make(chan struct{}, 1)
	var n int64
	return func() time.Time {
		mu <- struct{}{}
		defer func() { <-mu }()
		n++
		return start.Add(time.Duration(n) * step)
	}
}

// FillCorpus loads n entries of the bench corpus in batches of varying
// size, with their statuses, expiry and supersessions, plus a few Unicode
// records: the fixture every engine's browse and explore oracles compare on.
func FillCorpus(t testing.TB, e contract.Engine, n int, seed int64) {
	t.Helper()
	ctx := context.Background()
	entries := corpus.Generate(n, seed)
	r := rand.New(rand.NewPCG(uint64(seed), 7))
	ids := make([]string, len(entries))
	for i := 0; i < len(entries); {
		size := 1 + r.IntN(40)
		end := min(i+size, len(entries))
		for j := i; j < end; {
			k := j + 1
			for k < end && entries[k].Status == entries[j].Status && entries[k].ExpiresAt == nil && entries[j].ExpiresAt == nil {
				k++
			}
			items := make([]contract.StoreItem, 0, k-j)
			for x := j; x < k; x++ {
				items = append(items, entries[x].Item)
			}
			status := entries[j].Status
			if status == contract.StatusSuperseded {
				status = contract.StatusActive
			}
			rs, err := e.StoreManyWith(ctx, items, contract.WriteOptions{Status: status, ExpiresAt: entries[j].ExpiresAt})
			if err != nil {
				t.Fatal(err)
			}
			for x := range rs {
				ids[j+x] = rs[x].ID
			}
			j = k
		}
		i = end
	}
	for i, en := range entries {
		if en.Status == contract.StatusSuperseded && en.SupersededBy >= 0 && en.SupersededBy < len(ids) {
			if _, err := e.Supersede(ctx, contract.SupersedeRequest{ID: ids[i], By: ids[en.SupersededBy]}); err != nil {
				t.Fatal(err)
			}
		}
	}
	unicode := []string{"Élan vital in ÉTÉ notes", "Жук и жаба: заметка", "straße and STRASSE", "ﬁle ligature Kelvin sign K"}
	for _, s := range unicode {
		if _, err := contract.Store(ctx, e, contract.Document(s, contract.MemoryMeta{Tags: []string{"unicode"}})); err != nil {
			t.Fatal(err)
		}
	}
}

// Snapshot reads every record through list and get_records (items left
// out), for an oracle to compare with.
func Snapshot(t testing.TB, e contract.Engine) []contract.Record {
	t.Helper()
	ctx := context.Background()
	var ids []string
	var cursor *string
	for {
		page, err := e.List(ctx, contract.ListRequest{Filter: contract.MetaFilter{Reach: &contract.Reach{Descendants: true, Inherit: false}}, Limit: 500, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range page.Items {
			ids = append(ids, h.ID)
		}
		if page.NextCursor == nil {
			break
		}
		cursor = page.NextCursor
	}
	var out []contract.Record
	for start := 0; start < len(ids); start += contract.MaxGetIDs {
		recs, err := e.GetRecords(ctx, contract.GetRequest{IDs: ids[start:min(start+contract.MaxGetIDs, len(ids))],
			Reach: &contract.Reach{Descendants: true}})
		if err != nil {
			t.Fatal(err)
		}
		for i := range recs {
			recs[i].Item = nil
			out = append(out, recs[i])
		}
	}
	return out
}

// RandomBrowseQuery makes a browse query of the kind users ask (statuses,
// kinds, tags, a reach, field filters drawn from the records, orders, a
// page) for an oracle test.
func RandomBrowseQuery(r *rand.Rand, recs []contract.Record) contract.BrowseQuery {
	var q contract.BrowseQuery
	pick := func(p float64) bool { return r.Float64() < p }
	if pick(0.2) {
		q.Status = []contract.Status{}
		for _, s := range contract.Statuses() {
			if pick(0.5) {
				q.Status = append(q.Status, s)
			}
		}
	}
	if pick(0.2) {
		q.Kind = []contract.ItemKind{}
		for _, k := range contract.ItemKinds() {
			if pick(0.5) {
				q.Kind = append(q.Kind, k)
			}
		}
	}
	if pick(0.2) && len(recs) > 0 {
		rec := recs[r.IntN(len(recs))]
		if len(rec.Meta.Tags) > 0 {
			q.Filter.TagsAny = []string{rec.Meta.Tags[0]}
		}
	}
	if pick(0.15) && len(recs) > 0 {
		ns := recs[r.IntN(len(recs))].Meta.Namespace
		reach := contract.ReachSubtree(ns)
		q.Filter.Reach = &reach
	}
	fields := []string{"status", "kind", "content", "namespace", "confidence", "updated_at", "created_at", "observed_at"}
	r.Shuffle(len(fields), func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
	nf := r.IntN(3)
	if pick(0.3) {
		nf = 0
	}
	for _, field := range fields[:nf] {
		f := contract.BrowseFilter{Field: field}
		ops := contract.BrowseFilterOps(field)
		f.Op = ops[r.IntN(len(ops))]
		rec := recs[r.IntN(len(recs))]
		day := func(tm time.Time) string {
			return tm.Add(time.Duration(r.IntN(5)-2) * 24 * time.Hour).Format(time.DateOnly)
		}
		switch field {
		case "status":
			f.Values = []string{string(contract.Statuses()[r.IntN(3)])}
		case "kind":
			f.Values = []string{string(contract.ItemKinds()[r.IntN(3)]), string(contract.ItemKinds()[r.IntN(3)])}
			slices.Sort(f.Values)
			f.Values = slices.Compact(f.Values)
		case "content":
			text := []rune(rec.Text)
			switch f.Op {
			case "equals", "not_equals":
				f.Text = rec.Text
			default:
				a := r.IntN(len(text))
				b := min(len(text), a+1+r.IntN(8))
				f.Text = string(text[a:b])
				if f.Op == "starts_with" {
					f.Text = string(text[:b-a])
				}
				if f.Op == "ends_with" {
					f.Text = string(text[len(text)-(b-a):])
				}
			}
			if pick(0.5) {
				f.Text = strings.ToUpper(f.Text)
			}
			if strings.TrimSpace(f.Text) == "" || len(f.Text) > 1024 {
				f.Text = "the"
			}
		case "namespace":
			f.Text = rec.Meta.Namespace.String()
			if segs := rec.Meta.Namespace.Segments(); f.Op == "within" && len(segs) > 1 {
				parent, _ := rec.Meta.Namespace.Parent()
				f.Text = parent.String()
			}
		case "confidence":
			f.Num = float64(r.IntN(11)) / 10
			f.Min, f.Max = float64(r.IntN(5))/10, 0.5+float64(r.IntN(6))/10
			if rec.Confidence != nil && pick(0.5) {
				f.Num = float64(*rec.Confidence)
			}
		default:
			tm := rec.UpdatedAt
			if field == "created_at" {
				tm = rec.CreatedAt
			}
			if field == "observed_at" && rec.Meta.ObservedAt != nil {
				tm = *rec.Meta.ObservedAt
			}
			f.Day = day(tm)
			a, b := day(tm), day(tm)
			if a > b {
				a, b = b, a
			}
			f.FromDay, f.UntilDay = a, b
		}
		q.Filters = append(q.Filters, f)
	}
	sorts := []string{"updated_at", "created_at", "observed_at", "confidence", "namespace", "kind", "status"}
	r.Shuffle(len(sorts), func(i, j int) { sorts[i], sorts[j] = sorts[j], sorts[i] })
	if pick(0.6) {
		for _, s := range sorts[:1+r.IntN(3)] {
			dir := contract.SortAsc
			if pick(0.5) {
				dir = contract.SortDesc
			}
			q.OrderBy = append(q.OrderBy, contract.SortKey{Field: s, Dir: dir})
		}
	}
	q.Limit = 1 + r.IntN(60)
	if pick(0.2) {
		q.Offset = r.IntN(40)
	}
	if pick(0.4) {
		now := time.Date(2026, time.Month(6+r.IntN(12)), 1, 0, 0, 0, 0, time.UTC)
		q.Now = &now
	}
	return q
}

// PageIDs answers a browse page's record ids in order.
func PageIDs(p contract.BrowsePage) []string {
	out := make([]string, len(p.Records))
	for i, r := range p.Records {
		out[i] = r.ID
	}
	return out
}

// CheckBrowsePage browses q on e and fails t, naming the query by desc,
// when the page's total or ids differ from contract.BrowseSlice over recs
// (Snapshot of e); it answers the page.
func CheckBrowsePage(t testing.TB, e contract.Engine, recs []contract.Record, q contract.BrowseQuery, desc string) contract.BrowsePage {
	t.Helper()
	got, err := e.Browse(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", desc, err)
	}
	want, err := contract.BrowseSlice(q, recs)
	if err != nil {
		t.Fatalf("%s: the oracle: %v", desc, err)
	}
	if got.Total != want.Total || !slices.Equal(PageIDs(got), PageIDs(want)) {
		t.Fatalf("%s:\n got %v (%d)\nwant %v (%d)", desc, PageIDs(got), got.Total, PageIDs(want), want.Total)
	}
	return got
}

// CheckBrowseOracle asks e the given number of random browse queries over
// recs (Snapshot of e), each for up to four pages through its cursor, and
// fails t at the first page whose total, ids, records or continuation
// differ from contract.BrowseSlice over recs.
func CheckBrowseOracle(t testing.TB, e contract.Engine, recs []contract.Record, r *rand.Rand, queries int) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < queries; i++ {
		q := RandomBrowseQuery(r, recs)
		if err := q.Validate(); err != nil {
			continue
		}
		for pageNo := 0; pageNo < 4; pageNo++ {
			got, err := e.Browse(ctx, q)
			want, werr := contract.BrowseSlice(q, recs)
			if (err == nil) != (werr == nil) {
				t.Fatalf("query %d page %d: err %v, oracle %v", i, pageNo, err, werr)
			}
			if err != nil {
				break
			}
			desc := fmt.Sprintf("query %d page %d %+v", i, pageNo, q)
			if got.Total != want.Total {
				t.Fatalf("%s: total %d, oracle %d", desc, got.Total, want.Total)
			}
			if !slices.Equal(PageIDs(got), PageIDs(want)) {
				t.Fatalf("%s:\n got %v\nwant %v", desc, PageIDs(got), PageIDs(want))
			}
			for k := range got.Records {
				gj, _ := json.Marshal(got.Records[k])
				wj, _ := json.Marshal(want.Records[k])
				if string(gj) != string(wj) {
					t.Fatalf("%s: record %d\n got %s\nwant %s", desc, k, gj, wj)
				}
			}
			if (got.Continuation == nil) != (want.Continuation == nil) ||
				got.Continuation != nil && *got.Continuation != *want.Continuation {
				t.Fatalf("%s: continuation %v, oracle %v", desc, got.Continuation, want.Continuation)
			}
			if got.Continuation == nil {
				break
			}
			q.Cursor, q.Offset = *got.Continuation, 0
		}
	}
}
