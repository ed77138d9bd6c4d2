package ingest

import (
	"slices"
	"testing"

	"mnemo/contract"
)

func TestBasicMemoryNotesAndObservations(t *testing.T) {
	c := read(t, BasicMemory{}, "testdata/basic-memory/coffee", "")
	got := map[string][]stored{}
	for _, s := range c.stored {
		got[s.location] = append(got[s.location], s)
	}
	const note = "brewing/coffee-brewing-methods.md#brewing/coffee-brewing-methods"
	doc := got[note]
	if len(doc) != 1 || doc[0].item.Type != contract.KindDocument || contract.Deref(doc[0].item.Title) != "Coffee Brewing Methods" {
		t.Fatalf("note document %+v", doc)
	}
	if m := doc[0].item.Meta; m.Namespace.String() != "project:coffee" || contract.Deref(m.Folder) != "brewing" ||
		!slices.Equal(m.Tags, []string{"basic-memory", "type:note", "coffee", "brewing"}) {
		t.Errorf("note meta %+v", m)
	}
	method := got[note+"#[method]"]
	if len(method) != 1 {
		t.Fatalf("method observation %+v", method)
	}
	l := method[0].item
	if l.Type != contract.KindLearning || l.Text != "Pour over provides more clarity" || l.Kind != contract.LearningOther ||
		contract.Deref(l.Evidence) != "compared to French press" ||
		!slices.Equal(l.Meta.Tags, []string{"basic-memory", "category:method", "coffee", "brewing", "clarity"}) {
		t.Errorf("method observation %+v", l)
	}
	pref := got[note+"#[preference]"]
	if len(pref) != 1 || pref[0].item.Kind != contract.LearningPreference || pref[0].item.Evidence != nil {
		t.Errorf("preference observation %+v", pref)
	}
	tip := got[note+"#[tip]"]
	if len(tip) != 1 || tip[0].item.Text != "Water at 96°C, not boiling" || !slices.Contains(tip[0].item.Meta.Tags, "water") {
		t.Errorf("tip observation %+v", tip)
	}
	grind := got["grinding.md#proper-grinding-technique#[fact]"]
	if len(grind) != 1 || grind[0].item.Kind != contract.LearningFact || !slices.Contains(grind[0].item.Meta.Tags, "grinding") {
		t.Errorf("fact observation %+v", grind)
	}
	if len(c.stored) != 6 {
		t.Errorf("want 6 records (2 notes, 4 observations), got %d", len(c.stored))
	}
	if len(c.skipped) != 1 || c.skipped[0].Location != "empty.md" {
		t.Errorf("skipped %+v", c.skipped)
	}
	if c.omitted["relation (kept in its note's text, not a record of its own)"] != 2 {
		t.Errorf("omitted %v", c.omitted)
	}
	if src, err := Detect("testdata/basic-memory/coffee"); err != nil || src.Name() != "basic-memory" {
		t.Errorf("detect: %v %v", src, err)
	}
}

func TestParseFrontmatter(t *testing.T) {
	fm := parseFrontmatter([]string{`title: "A: b"`, "tags: a, b", "type: note", "list:", "  - x", "  - 'y'"})
	if fm.str("title") != "A: b" || !slices.Equal(fm.list("tags"), []string{"a", "b"}) || !slices.Equal(fm.list("list"), []string{"x", "y"}) {
		t.Errorf("%v", fm)
	}
}
