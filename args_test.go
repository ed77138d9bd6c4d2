package main

import (
	"encoding/json"
	"reflect"
	"testing"

	"mnemo/contract"
)

func TestSplitIDs(t *testing.T) {
	got := splitIDs([]string{"a,b", " c ", "", "d,,e"})
	want := []string{"a", "b", "c", "d", "e"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("splitIDs = %q, want %q", got, want)
	}
}

// FuzzParseFilterFlag: any --filter value is either refused as an invalid
// request or read into a filter that survives its own wire form unchanged.
func FuzzParseFilterFlag(f *testing.F) {
	for _, seed := range []string{
		`{"tags_any":["style"],"kinds":["learning"]}`,
		`{"reach":{"at":"team:acme","descendants":true},"statuses":["candidate"]}`,
		`{"observed_after":"2026-01-01T00:00:00Z","folder":"docs"}`,
		`{"reach":null}`, `{}`, `[]`, `null`, `{"tag_any":[]}`, `{"kinds":["poem"]}`, `{"a":1}{"b":2}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		got, err := parseFilterFlag("--filter", value)
		if err != nil {
			if contract.KindOf(err) != contract.KindInvalidRequest {
				t.Fatalf("error of kind %q: %v", contract.KindOf(err), err)
			}
			return
		}
		wire, err := json.Marshal(got)
		if err != nil {
			t.Fatalf("cannot encode an accepted filter: %v", err)
		}
		again, err := parseFilterFlag("--filter", string(wire))
		if err != nil {
			t.Fatalf("the filter's own wire form %s is refused: %v", wire, err)
		}
		wire2, _ := json.Marshal(again)
		if string(wire) != string(wire2) {
			t.Fatalf("round trip changed the filter: %s -> %s", wire, wire2)
		}
	})
}
