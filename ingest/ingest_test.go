package ingest

import (
	"context"
	"testing"
	"time"

	"mnemo/contract"
)

// stored is one record as a Placed sink hands it on.
type stored struct {
	item     contract.StoreItem
	location string
	expires  *time.Time
	by       string
}

type collect struct {
	stored  []stored
	skipped []Skip
	omitted map[string]int
}

func (c *collect) Omit(reason string) {
	if c.omitted == nil {
		c.omitted = map[string]int{}
	}
	c.omitted[reason]++
}

func (c *collect) Store(item contract.StoreItem, location string, expiresAt *time.Time, by string) error {
	c.stored = append(c.stored, stored{item, location, expiresAt, by})
	return nil
}

func (c *collect) Skip(s Skip) { c.skipped = append(c.skipped, s) }

// read runs src on path under place and returns what it stored and skipped.
func read(t *testing.T, src Source, path string, place string) *collect {
	t.Helper()
	c := &collect{}
	err := src.Read(context.Background(), path, &Placed{Source: src.Name(), Place: contract.MustNamespace(place), Next: c})
	if err != nil {
		t.Fatalf("%s %s: %v", src.Name(), path, err)
	}
	for _, s := range c.stored {
		if err := s.item.Validate(); err != nil {
			t.Errorf("%s: invalid item: %v", s.location, err)
		}
		if s.item.Meta.Source.Kind != contract.SourceImport || s.item.Meta.Source.ID == nil || *s.item.Meta.Source.ID == "" {
			t.Errorf("%s: source %+v does not trace back", s.location, s.item.Meta.Source)
		}
	}
	return c
}

func texts(it contract.StoreItem) string { return it.RenderText() }

// turnWant is one stored turn an importer should produce.
type turnWant struct {
	location, text string
	index          uint32 // its place in the conversation (meta.turns)
	actorID        string // observed_actor.id
	actorName      string // observed_actor.name, "" for none
}

// check finds the record at w.location among got and compares it.
func (w turnWant) check(t *testing.T, got map[string]stored) {
	t.Helper()
	s, ok := got[w.location]
	if !ok {
		t.Errorf("no record at %s", w.location)
		return
	}
	it := s.item
	if it.Type != contract.KindConversation || len(it.Turns) != 1 || it.RenderText() != w.text {
		t.Errorf("%s: got %s of %d turns %q, want one turn %q", w.location, it.Type, len(it.Turns), it.RenderText(), w.text)
	}
	if r := it.Meta.Turns; r == nil || r.First != w.index || r.Last != w.index {
		t.Errorf("%s: turns %+v, want %d..%d", w.location, r, w.index, w.index)
	}
	a := it.Meta.ObservedActor
	if a == nil {
		t.Errorf("%s: no observed actor, want %s %q", w.location, w.actorID, w.actorName)
		return
	}
	if a.ID != w.actorID || contract.Deref(a.Name) != w.actorName {
		t.Errorf("%s: observed actor %s %q, want %s %q", w.location, a.ID, contract.Deref(a.Name), w.actorID, w.actorName)
	}
	if at := it.Turns[0].At; at != nil && (it.Meta.ObservedAt == nil || !it.Meta.ObservedAt.Equal(*at)) {
		t.Errorf("%s: observed_at %v, want the turn's time %v", w.location, it.Meta.ObservedAt, at)
	}
}

// byLocation indexes records by location.
func byLocation(c *collect) map[string]stored {
	got := map[string]stored{}
	for _, s := range c.stored {
		got[s.location] = s
	}
	return got
}
