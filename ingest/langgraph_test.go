package ingest

import (
	"strings"
	"testing"

	"mnemo/contract"
	"mnemo/ingest/ingesttest"
)

func TestLangGraphStoreRows(t *testing.T) {
	url := ingesttest.Postgres(t, "testdata/langgraph/store.sql")
	c := read(t, LangGraph{}, url, "")
	got := map[string]stored{}
	for _, s := range c.stored {
		got[s.location] = s
	}
	short := got["store#memories.user-123/a1f0"]
	if short.item.Type != contract.KindLearning || short.item.Text != "Prefers short answers" ||
		short.item.Meta.Namespace.String() != "source:langgraph/ws:memories/ws:user-123" || short.expires != nil ||
		short.item.Meta.ObservedAt == nil || contract.FormatTime(*short.item.Meta.ObservedAt) != "2025-06-02T10:00:00Z" {
		t.Errorf("LangMem memory %+v", short)
	}
	night := got["store#memories.user-123/b2e1"]
	if night.item.Text != "Works night shifts" || night.expires == nil || contract.FormatTime(*night.expires) != "2999-01-01T00:00:00Z" {
		t.Errorf("row with expiry %+v", night)
	}
	profile := got["store#profiles.user-123/profile"]
	if profile.item.Type != contract.KindDocument || contract.Deref(profile.item.Title) != "UserProfile profile" ||
		!strings.Contains(profile.item.Body.Text, `"timezone": "Europe/Lisbon"`) {
		t.Errorf("profile %+v", profile.item)
	}
	if len(c.stored) != 3 || c.omitted["expired row"] != 1 {
		t.Errorf("records %v, omitted %v", keys(got), c.omitted)
	}
	if len(c.skipped) != 1 || c.skipped[0].Location != "store#a.b.c.d.e.f.g.h/deep" {
		t.Errorf("skipped %+v", c.skipped)
	}
	if src, err := Detect(url); err != nil || src.Name() != "langgraph" {
		t.Errorf("detect: %v %v", src, err)
	}
}
