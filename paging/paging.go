// Package paging walks a cursor chain to its end, as every command that
// reads a whole store (list --all, export, copy) does: it stops when the
// engine answers no next cursor, and calls a cursor that repeats, or a chain
// that never ends, an engine error instead of looping forever.
package paging

import "mnemo/contract"

// MaxPages stops a walk whose engine never ends its cursor chain.
const MaxPages = 1_000_000

// Walk calls page with each cursor, from start, until it returns none. what
// names the walk in its errors ("list", "export", "copy").
func Walk(start *string, what string, page func(*string) (*string, error)) error {
	return walk(start, what, MaxPages, page)
}

func walk(start *string, what string, most int, page func(*string) (*string, error)) error {
	cursor := start
	seen := map[string]bool{}
	for n := 0; n < most; n++ {
		next, err := page(cursor)
		if err != nil {
			return err
		}
		if next == nil {
			return nil
		}
		if seen[*next] {
			return contract.EngineErr("the %s cursor `%s` repeated; paging never ends", what, *next)
		}
		seen[*next] = true
		cursor = next
	}
	return contract.EngineErr("%s did not end within %d pages", what, most)
}
