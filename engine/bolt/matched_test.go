package bolt

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"mnemo/contract"
)

// filterKey must name every field of a filter: the JSON covers those it
// serialises, filterKey adds the rest by hand. A field added to the
// contract with json:"-" must be added there too, or two filters that
// differ only in it would share the cached rows.
func TestFilterKeyCoversEveryFieldTheJSONLeavesOut(t *testing.T) {
	hidden := func(v any) []string {
		var out []string
		ty := reflect.TypeOf(v)
		for i := range ty.NumField() {
			if ty.Field(i).Tag.Get("json") == "-" {
				out = append(out, ty.Field(i).Name)
			}
		}
		return out
	}
	if got := hidden(contract.MetaFilter{}); !slices.Equal(got, []string{"ObservedAfter", "ObservedBefore"}) {
		t.Fatalf("MetaFilter's fields without JSON are %v: add them to filterKey", got)
	}
	if got := hidden(contract.Reach{}); !slices.Equal(got, []string{"Floor"}) {
		t.Fatalf("Reach's fields without JSON are %v: add them to filterKey", got)
	}
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	base := contract.MetaFilter{Reach: &contract.Reach{At: contract.Root(), Inherit: true}}
	variants := []contract.MetaFilter{base}
	floor := base
	floor.Reach = &contract.Reach{At: contract.Root(), Inherit: true, Floor: 1}
	after, before := base, base
	after.ObservedAfter = &at
	before.ObservedBefore = &at
	variants = append(variants, floor, after, before)
	seen := map[string]int{}
	for i, f := range variants {
		k, err := filterKey(f)
		if err != nil {
			t.Fatal(err)
		}
		if j, dup := seen[k]; dup {
			t.Fatalf("filters %d and %d share the key %s", j, i, k)
		}
		seen[k] = i
	}
}
