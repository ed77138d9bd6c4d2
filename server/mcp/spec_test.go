package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"mnemo/contract"
	"mnemo/engine/memory"
)

var update = flag.Bool("update", false, "rewrite testdata/tool_contracts.json from the current tool specs")

const goldenSpecs = "testdata/tool_contracts.json"

// TestToolContractsGolden freezes what models are offered: names,
// descriptions and argument schemas. A change here changes every agent's
// prompt; regenerate deliberately with -update or BLESS_TOOL_CONTRACTS=1.
func TestToolContractsGolden(t *testing.T) {
	t.Parallel()
	specs := New(memory.New(), DefaultScope()).Specs()
	got := indentSpecs(t, specs)
	path := filepath.FromSlash(goldenSpecs)
	if *update || os.Getenv("BLESS_TOOL_CONTRACTS") == "1" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read the golden file (regenerate with -update): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("tool specs differ from %s; if the change is meant, rerun with -update or BLESS_TOOL_CONTRACTS=1\n%s", goldenSpecs, got)
	}
}

func indentSpecs(t *testing.T, specs []ToolSpec) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	// Re-decode the schemas so they are indented with the rest.
	type indented struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Parameters  any    `json:"parameters"`
	}
	out := make([]indented, len(specs))
	for i, s := range specs {
		var p any
		if err := json.Unmarshal(s.Parameters, &p); err != nil {
			t.Fatal(err)
		}
		out[i] = indented{s.Name, s.Description, p}
	}
	if err := enc.Encode(out); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestSchemasAreClosedAndHostFree walks every schema: every object closed,
// no namespace or reach property anywhere, required listed only when non-empty.
func TestSchemasAreClosedAndHostFree(t *testing.T) {
	t.Parallel()
	for _, s := range New(memory.New(), DefaultScope()).Specs() {
		var schema map[string]any
		if err := json.Unmarshal(s.Parameters, &schema); err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		var walk func(path string, node map[string]any)
		walk = func(path string, node map[string]any) {
			if node["type"] == "object" {
				if node["additionalProperties"] != false {
					t.Errorf("%s %s: object schema is not closed", s.Name, path)
				}
				if req, ok := node["required"]; ok && len(req.([]any)) == 0 {
					t.Errorf("%s %s: empty required list", s.Name, path)
				}
				for name, p := range node["properties"].(map[string]any) {
					if name == "namespace" || name == "reach" {
						t.Errorf("%s %s: offers %q", s.Name, path, name)
					}
					walk(path+"."+name, p.(map[string]any))
				}
			}
			if items, ok := node["items"].(map[string]any); ok {
				walk(path+"[]", items)
			}
		}
		walk(s.Name, schema)
	}
}

func TestSpecsFollowTheEngineAndTheScope(t *testing.T) {
	fetchMode := func(specs []ToolSpec) map[string]any {
		for _, s := range specs {
			if s.Name == ToolFetch {
				var schema struct {
					Properties map[string]map[string]any `json:"properties"`
				}
				if err := json.Unmarshal(s.Parameters, &schema); err != nil {
					t.Fatal(err)
				}
				return schema.Properties["mode"]
			}
		}
		return nil
	}
	names := func(specs []ToolSpec) []string {
		var out []string
		for _, s := range specs {
			out = append(out, s.Name)
		}
		return out
	}
	cases := []struct {
		modes       []contract.FetchMode
		wantEnum    string
		wantDefault any
	}{
		{[]contract.FetchMode{contract.ModeKeyword, contract.ModeVector, contract.ModeHybrid}, `["keyword","vector","hybrid"]`, "hybrid"},
		{[]contract.FetchMode{contract.ModeVector, contract.ModeKeyword}, `["vector","keyword"]`, "vector"},
		{[]contract.FetchMode{contract.ModeKeyword}, `["keyword"]`, "keyword"},
	}
	for _, tc := range cases {
		mode := fetchMode(New(memory.New(memory.WithFetchModes(tc.modes...)), DefaultScope()).Specs())
		if mustJSON(t, mode["enum"]) != tc.wantEnum || mode["default"] != tc.wantDefault {
			t.Errorf("modes %v: mode schema %v, want enum %s default %v", tc.modes, mode, tc.wantEnum, tc.wantDefault)
		}
	}
	all := names(New(memory.New(), DefaultScope()).Specs())
	if !slices.Equal(all, ToolNames()) {
		t.Errorf("specs = %v, want %v in that order", all, ToolNames())
	}
	noFetch := names(New(memory.New(memory.WithFetchModes()), DefaultScope()).Specs())
	if slices.Contains(noFetch, ToolFetch) || len(noFetch) != 6 {
		t.Errorf("specs without fetch modes = %v", noFetch)
	}
	ro := DefaultScope()
	ro.Writes = false
	if got := names(New(memory.New(), ro).Specs()); !slices.Equal(got, ToolNames()[:5]) {
		t.Errorf("read-only specs = %v, want the five reads", got)
	}
}

// TestServerListsTheSpecs checks tools/list hands clients exactly the specs'
// schemas and descriptions.
func TestServerListsTheSpecs(t *testing.T) {
	t.Parallel()
	tools := New(memory.New(), ScopeAt(placeNS))
	c := connect(t, tools)
	res, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]ToolSpec{}
	for _, s := range tools.Specs() {
		byName[s.Name] = s
	}
	if len(res.Tools) != len(byName) {
		t.Fatalf("tools/list has %d tools, want %d", len(res.Tools), len(byName))
	}
	for _, tool := range res.Tools {
		s, ok := byName[tool.Name]
		if !ok {
			t.Fatalf("tools/list offers %q", tool.Name)
		}
		var want any
		if err := json.Unmarshal(s.Parameters, &want); err != nil {
			t.Fatal(err)
		}
		if mustJSON(t, tool.InputSchema) != mustJSON(t, want) || tool.Description != s.Description {
			t.Errorf("%s: listed schema or description differs from the spec", tool.Name)
		}
		if tool.Annotations == nil || tool.Annotations.ReadOnlyHint == isWriteTool(tool.Name) {
			t.Errorf("%s: read-only hint %v", tool.Name, tool.Annotations)
		}
	}
}
