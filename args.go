package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"mnemo/contract"
	"mnemo/jsonerr"
)

// filterKeys are the MetaFilter's wire keys. The contract ignores unknown keys on
// the wire; the command line refuses them, because a misspelt key would
// silently widen a list or, worse, a forget.
var filterKeys = [...]string{"reach", "workspace", "folder", "file_path", "language", "repo", "commit", "url",
	"thread_id", "turns", "agent_id", "tool_call", "source_id", "kinds", "sources", "tags_any",
	"observed_after", "observed_before", "statuses"}

var reachKeys = [...]string{"at", "inherit", "descendants"}

// parseFilterFlag reads a --filter value: a MetaFilter as JSON, unknown keys refused.
func parseFilterFlag(flag, value string) (contract.MetaFilter, error) {
	var f contract.MetaFilter
	if strings.TrimSpace(value) == "" {
		return f, nil
	}
	obj, err := jsonObject(flag, value)
	if err != nil {
		return f, err
	}
	if err := onlyKeys(flag, obj, filterKeys[:]); err != nil {
		return f, err
	}
	if raw, ok := obj["reach"]; ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		if err := checkReachKeys(flag+" reach", raw); err != nil {
			return f, err
		}
	}
	if err := json.Unmarshal([]byte(value), &f); err != nil {
		return f, contract.Invalid("%s is not a valid filter: %s", flag, jsonerr.Text(err))
	}
	return f, nil
}

// parseReachFlag reads a --reach value: a Reach as JSON, unknown keys refused.
func parseReachFlag(flag, value string) (*contract.Reach, error) {
	if strings.TrimSpace(value) == "" {
		return nil, nil
	}
	if err := checkReachKeys(flag, json.RawMessage(value)); err != nil {
		return nil, err
	}
	var r contract.Reach
	if err := json.Unmarshal([]byte(value), &r); err != nil {
		return nil, contract.Invalid("%s is not a valid reach: %s", flag, jsonerr.Text(err))
	}
	return &r, nil
}

func checkReachKeys(flag string, raw json.RawMessage) error {
	obj, err := jsonObject(flag, string(raw))
	if err != nil {
		return err
	}
	return onlyKeys(flag, obj, reachKeys[:])
}

// jsonObject parses value as one JSON object.
func jsonObject(flag, value string) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(value))
	if err := dec.Decode(&obj); err != nil {
		return nil, contract.Invalid("%s is not a JSON object: %s", flag, jsonerr.Text(err))
	}
	if dec.More() {
		return nil, contract.Invalid("%s holds more than one JSON value", flag)
	}
	if obj == nil {
		return nil, contract.Invalid("%s is not a JSON object: null", flag)
	}
	return obj, nil
}

func onlyKeys(flag string, obj map[string]json.RawMessage, known []string) error {
	var unknown []string
	for k := range obj {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return contract.Invalid("%s has an unknown key %q; known keys: %s", flag, unknown[0], strings.Join(known, ", "))
}

// splitIDs reads --ids values: each may be a comma-separated list.
func splitIDs(values []string) []string {
	var ids []string
	for _, v := range values {
		for _, id := range strings.Split(v, ",") {
			if id = strings.TrimSpace(id); id != "" {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// parseFacetArg reads a facet named on the command line.
func parseFacetArg(s string) (contract.Facet, error) {
	f, ok := contract.ParseFacet(s)
	if !ok {
		return "", contract.Invalid("`%s` is not a facet; facets: %s", s, facetList())
	}
	return f, nil
}
