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
