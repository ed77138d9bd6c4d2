package bolt

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"mnemo/contract"
)

// matchedCache keeps the rows the last explore filter matched, for the
// store's state at one sequence number. A client drilling down (the TUI
// counting every facet under a narrowed scope) asks a burst of explores
// with the same filter: the first scans the table, the others read the
// matched rows. Any write moves the sequence and so retires the entry.
type matchedCache struct {
	mu   sync.Mutex
	key  string
	seq  uint64
	ords []uint32
}

// filterKey names a filter exactly: its JSON, plus the fields the JSON
// leaves out (a reach's floor, set by serve mode's confinement, and the
// observed_at bounds). A test keeps this list equal to the fields tagged
// json:"-".
func filterKey(f contract.MetaFilter) (string, error) {
	body, err := json.Marshal(f)
	if err != nil {
		return "", contract.EngineErr("explore filter: %w", err)
	}
	var b strings.Builder
	b.Write(body)
	if f.Reach != nil {
		fmt.Fprintf(&b, "|floor=%d", f.Reach.Floor)
	}
	if f.ObservedAfter != nil {
		fmt.Fprintf(&b, "|after=%d", f.ObservedAfter.UnixNano())
	}
	if f.ObservedBefore != nil {
		fmt.Fprintf(&b, "|before=%d", f.ObservedBefore.UnixNano())
	}
	return b.String(), nil
}

// forgetMatched drops the cached rows (a repair changed the table without
// a write).
func (e *Engine) forgetMatched() {
	e.matched.mu.Lock()
	e.matched.ords = nil
	e.matched.mu.Unlock()
}

// matchedRows returns the ordinals of the live rows filter matches. The
// caller holds mu (read) with the table loaded; the result is shared and
// must not be changed.
func (e *Engine) matchedRows(ctx context.Context, filter contract.MetaFilter) ([]uint32, error) {
	key, err := filterKey(filter)
	if err != nil {
		return nil, err
	}
	c := &e.matched
	c.mu.Lock()
	if c.ords != nil && c.key == key && c.seq == e.seq {
		ords := c.ords
		c.mu.Unlock()
		return ords, nil
	}
	c.mu.Unlock()

	t := e.t
	p := t.compileFilter(filter, false)
	ords := []uint32{}
	for ord := range t.alive {
		// A count over millions of rows must not outlive its caller.
		if ord%4096 == 4095 {
			if err := contract.ContextErr(ctx); err != nil {
				return nil, err
			}
		}
		if t.matchOrd(&p, uint32(ord)) {
			ords = append(ords, uint32(ord))
		}
	}
	c.mu.Lock()
	c.key, c.seq, c.ords = key, e.seq, ords
	c.mu.Unlock()
	return ords, nil
}
