package explore

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"mnemo/contract"
	"mnemo/ui/common"
	"mnemo/ui/uitest"
)

func newExplore(t *testing.T) (*Model, *common.Common) {
	t.Helper()
	e, err := uitest.Fixture()
	if err != nil {
		t.Fatal(err)
	}
	c := &common.Common{Engine: e, Keys: uitest.Keys(), Now: uitest.Now, Styles: common.NewStyles(true, false), Total: 36, Timer: uitest.Timer}
	m := New(c)
	m.SetSize(80, 21)
	uitest.Drain(m.Update, m.Init(), 10*time.Second)
	return m, c
}

func TestStaleRepliesAreDropped(t *testing.T) {
	t.Parallel()
	m, c := newExplore(t)
	if m.Total() != 36 {
		t.Fatalf("total = %d", m.Total())
	}
	oldGen := m.gen
	c.Scope, _ = c.Scope.Narrow(common.Crumb{Facet: contract.FacetKind, Value: "learning"})
	c.ScopeGen++
	cmd := m.Activate()
	// an answer to the old scope arrives late: it must not replace the new one
	m.Update(recordsMsg{gen: oldGen, page: contract.BrowsePage{Total: 999}})
	m.Update(facetCountMsg{gen: oldGen, facet: contract.FacetKind, distinct: 42})
	uitest.Drain(m.Update, cmd, 10*time.Second)
	if m.Total() != 12 {
		t.Fatalf("total after narrowing = %d, want 12", m.Total())
	}
	if m.roots[0].distinct != 1 {
		t.Fatalf("kind distinct = %d, want 1", m.roots[0].distinct)
	}
	m.Update(recordsMsg{gen: oldGen, page: contract.BrowsePage{Total: 999}})
	if m.Total() != 12 {
		t.Fatalf("a stale page changed the total to %d", m.Total())
	}
}

func TestRecordsPageAsTheCursorMoves(t *testing.T) {
	t.Parallel()
	m, _ := newExplore(t)
	if len(m.Records()) != 36 {
		t.Fatalf("loaded %d", len(m.Records()))
	}
	// the page size is 100, so the fixture fits one page and no continuation is left
	if m.cont != nil {
		t.Fatal("continuation after the last page")
	}
}

func TestContentFilter(t *testing.T) {
	t.Parallel()
	m, _ := newExplore(t)
	press := func(s string) tea.KeyPressMsg { return tea.KeyPressMsg{Code: rune(s[0]), Text: s} }
	uitest.Drain(m.Update, m.Update(press("/")), 10*time.Second)
	for _, k := range []string{"t", "a", "b", "s"} {
		uitest.Drain(m.Update, m.Update(press(k)), 10*time.Second)
	}
	if m.Total() != 2 {
		t.Fatalf("content contains tabs: %d records, want 2", m.Total())
	}
}

func TestSplitPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		facet    contract.Facet
		value    string
		labels   []string
		prefixes []string
	}{
		{contract.FacetFolder, "src/ui/views", []string{"src", "ui", "views"}, []string{"src", "src/ui", "src/ui/views"}},
		{contract.FacetFolder, "/home/kim", []string{"/home", "kim"}, []string{"/home", "/home/kim"}},
		{contract.FacetNamespace, "team:acme/agent:ops", []string{"team:acme", "agent:ops"}, []string{"team:acme", "team:acme/agent:ops"}},
		{contract.FacetNamespace, "root", []string{"root"}, []string{"root"}},
	}
	for _, tt := range tests {
		labels, prefixes := splitPath(tt.facet, tt.value)
		if len(labels) != len(tt.labels) || len(prefixes) != len(tt.prefixes) {
			t.Fatalf("%s: got %v %v", tt.value, labels, prefixes)
		}
		for i := range labels {
			if labels[i] != tt.labels[i] || prefixes[i] != tt.prefixes[i] {
				t.Fatalf("%s: got %v %v, want %v %v", tt.value, labels, prefixes, tt.labels, tt.prefixes)
			}
		}
	}
}
