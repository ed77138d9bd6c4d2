package ingest

import (
	"slices"
	"testing"

	"mnemo/contract"
	"mnemo/ingest/ingesttest"
)

func TestMem0HistoryKeepsTheLatestAndSupersedesTheRest(t *testing.T) {
	path := ingesttest.SQLite(t, "testdata/mem0/history.sql", "history.db")
	c := read(t, Mem0{}, path, "")
	var texts []string
	byText := map[string]stored{}
	for _, s := range c.stored {
		texts = append(texts, s.item.Text)
		byText[s.item.Text] = s
	}
	want := []string{"Is vegan and allergic to nuts", "Is vegan", "Is vegetarian", "Drinks green tea in the afternoon"}
	if !slices.Equal(texts, want) {
		t.Fatalf("records %q, want %q", texts, want)
	}
	latest := byText["Is vegan and allergic to nuts"]
	if latest.by != "" || latest.location != "history.db#history/h3" || contract.Deref(latest.item.Meta.ThreadID) != "m-diet" {
		t.Errorf("latest %+v", latest)
	}
	for _, old := range []string{"Is vegan", "Is vegetarian"} {
		if byText[old].by != latest.item.Fingerprint() {
			t.Errorf("%q is superseded by %q, want the latest %q", old, byText[old].by, latest.item.Fingerprint())
		}
	}
	if a := byText["Is vegetarian"].item.Meta.ObservedActor; a == nil || a.ID != "alice" {
		t.Errorf("actor %+v", a)
	}
	if at := byText["Is vegetarian"].item.Meta.ObservedAt; at == nil || contract.FormatTime(*at) != "2025-01-03T18:00:00.123456Z" {
		t.Errorf("observed_at %v", at)
	}
	if c.omitted["deleted memory (history rows)"] != 1 {
		t.Errorf("omitted %v", c.omitted)
	}
	if len(c.skipped) != 1 || c.skipped[0].Location != "history.db#history/h7" {
		t.Errorf("skipped %+v", c.skipped)
	}
	if src, err := Detect(path); err != nil || src.Name() != "mem0" {
		t.Errorf("detect: %v %v", src, err)
	}
}

func TestMem0APIPages(t *testing.T) {
	c := read(t, Mem0{}, "testdata/mem0/pages", "")
	got := map[string]stored{}
	for _, s := range c.stored {
		got[s.location] = s
	}
	seat := got["page-1.json#6c9a-01"]
	if seat.item.Text != "Prefers window seats on flights" || seat.item.Meta.Namespace.String() != "user:alex" ||
		!slices.Equal(seat.item.Meta.Tags, []string{"mem0", "travel", "preferences"}) ||
		seat.item.Meta.ObservedAt == nil || contract.FormatTime(*seat.item.Meta.ObservedAt) != "2025-05-02T15:00:00Z" {
		t.Errorf("seat %+v", seat.item)
	}
	kyoto := got["page-1.json#6c9a-02"]
	if kyoto.item.Meta.Namespace.String() != "ws:trips/user:alex/agent:travel-agent" || contract.Deref(kyoto.item.Meta.ThreadID) != "run-42" ||
		kyoto.expires == nil || contract.FormatTime(*kyoto.expires) != "2999-10-31T00:00:00Z" {
		t.Errorf("kyoto %+v expires %v", kyoto.item.Meta, kyoto.expires)
	}
	if _, ok := got["page-2.json#6c9a-05"]; !ok || len(c.stored) != 3 {
		t.Errorf("records %v", keys(got))
	}
	if c.omitted["expired memory"] != 1 {
		t.Errorf("omitted %v", c.omitted)
	}
	if len(c.skipped) != 2 || c.skipped[0].Location != "page-2.json#6c9a-04" || c.skipped[1].Location != "page-2.json$.results[2]" {
		t.Errorf("skipped %+v", c.skipped)
	}
}

func TestMem0HistoryOfTheFirstSchema(t *testing.T) {
	path := ingesttest.SQLite(t, "testdata/mem0/history-v0.sql", "history.db")
	c := read(t, Mem0{}, path, "")
	if len(c.stored) != 2 || c.stored[0].item.Text != "Codes in Python and Go" || c.stored[1].by != c.stored[0].item.Fingerprint() {
		t.Fatalf("records %+v", c.stored)
	}
	if at := c.stored[1].item.Meta.ObservedAt; at == nil || contract.FormatTime(*at) != "2024-08-01T10:00:00Z" {
		t.Errorf("observed_at %v", at)
	}
}
