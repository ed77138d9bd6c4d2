package bolt

import (
	"encoding/binary"
	"encoding/json"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
)

// bucketExplore holds the root explore under the default reach, one entry
// per facet: what a new process (the TUI's facet tree) asks first, before
// its table has loaded. Each entry carries the sequence number of the store
// it describes and is used only while the store is still at that sequence:
// any write makes it stale, and explore then waits for the table as before.
// It is written when a table load ends and when a process that has the
// table closes, so the next process on an unchanged store answers at once.
var bucketExplore = []byte("explore_root")

// exploreEntryVersion tags an entry's layout; an entry of another version
// (or one that does not decode) is ignored, never misread.
const exploreEntryVersion = 1

// coldExplore answers explore from the stored entry when the request is the
// root under the default reach and the store has not changed since the
// entry was written.
func (e *Engine) coldExplore(req contract.ExploreRequest) (contract.ExplorePage, bool) {
	if !onlyReach(req.Filter) || req.Filter.Reach != nil {
		return contract.ExplorePage{}, false
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	var page contract.ExplorePage
	ok := false
	_ = e.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketExplore)
		if b == nil {
			return nil
		}
		body, current := entryBody(b.Get([]byte(req.Facet)), e.seq)
		if !current || json.Unmarshal(body, &page) != nil || page.Facet != req.Facet {
			return nil
		}
		ok = true
		return nil
	})
	if !ok {
		return contract.ExplorePage{}, false
	}
	// The entry holds the top MaxBuckets; a smaller limit is its prefix.
	if len(page.Buckets) > req.Limit {
		page.MoreBuckets += uint64(len(page.Buckets) - req.Limit)
		page.Buckets = page.Buckets[:req.Limit]
	}
	return page, true
}

// exploreEntriesStale tells whether the stored entries describe another
// state of the store than the current one. The caller holds mu.
func exploreEntriesStale(tx *bbolt.Tx, seq uint64) bool {
	return len(currentExploreEntries(tx, seq)) != len(contract.Facets())
}

// currentExploreEntries lists the facets whose stored entry claims the
// store's current sequence (those a new process would answer from).
func currentExploreEntries(tx *bbolt.Tx, seq uint64) []contract.Facet {
	b := tx.Bucket(bucketExplore)
	if b == nil {
		return nil
	}
	var out []contract.Facet
	for _, f := range contract.Facets() {
		if _, current := entryBody(b.Get([]byte(f)), seq); current {
			out = append(out, f)
		}
	}
	return out
}

// exploreEntryMatches tells whether the stored entry of f says what the
// loaded table says (mnemo check). The caller holds mu.
func (e *Engine) exploreEntryMatches(tx *bbolt.Tx, f contract.Facet) bool {
	want, err := json.Marshal(e.rootPage(f))
	body, current := entryBody(tx.Bucket(bucketExplore).Get([]byte(f)), e.seq)
	return err == nil && current && string(body) == string(want)
}

// entryBody returns an entry's page (JSON) when the entry is of this
// layout and describes the store at seq.
func entryBody(v []byte, seq uint64) ([]byte, bool) {
	if len(v) < 9 || v[0] != exploreEntryVersion || binary.BigEndian.Uint64(v[1:9]) != seq {
		return nil, false
	}
	return v[9:], true
}

// rootPage is the root explore of f under the default reach at the
// entries' limit, from the loaded table. The caller holds mu.
func (e *Engine) rootPage(f contract.Facet) contract.ExplorePage {
	counts, total, missing := e.t.rootCounts(e.t.facetIndex(f), nil)
	return e.t.explorePage(f, counts.each, contract.MaxBuckets, total, missing)
}

// writeExploreEntries stores the root explore of every facet under the
// default reach, from the loaded table. The caller holds mu.
func (e *Engine) writeExploreEntries(tx *bbolt.Tx) error {
	b, err := tx.CreateBucketIfNotExists(bucketExplore)
	if err != nil {
		return err
	}
	for _, f := range contract.Facets() {
		body, err := json.Marshal(e.rootPage(f))
		if err != nil {
			return err
		}
		v := make([]byte, 9, 9+len(body))
		v[0] = exploreEntryVersion
		binary.BigEndian.PutUint64(v[1:9], e.seq)
		if err := b.Put([]byte(f), append(v, body...)); err != nil {
			return err
		}
	}
	return nil
}

// saveExploreEntries refreshes the stored entries when the table is loaded
// and they are stale. The caller holds mu.
func (e *Engine) saveExploreEntries() error {
	if !e.tables.loaded.Load() || !e.largeStore {
		return nil
	}
	stale := true
	_ = e.db.View(func(tx *bbolt.Tx) error {
		stale = exploreEntriesStale(tx, e.seq)
		return nil
	})
	if !stale {
		return nil
	}
	return e.db.Update(e.writeExploreEntries)
}
