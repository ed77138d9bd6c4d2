package mcp

import (
	"encoding/json"
	"slices"

	"mnemo/contract"
)

// The seven tool names, reads first (the reference's TOOL_NAMES order).
const (
	ToolRecall  = "memory_recall"
	ToolFetch   = "memory_fetch"
	ToolList    = "memory_list"
	ToolGet     = "memory_get"
	ToolExplore = "memory_explore"
	ToolStore   = "memory_store"
	ToolForget  = "memory_forget"
)

var toolNames = [...]string{ToolRecall, ToolFetch, ToolList, ToolGet, ToolExplore, ToolStore, ToolForget}

// ToolNames lists every tool in spec order, a fresh slice the caller may change.
func ToolNames() []string { return slices.Clone(toolNames[:]) }

var writeToolNames = [...]string{ToolStore, ToolForget}

// WriteToolNames are the tools a read-only scope neither lists nor runs.
func WriteToolNames() []string { return slices.Clone(writeToolNames[:]) }

// Limits and defaults the schemas advertise and the reader enforces.
const (
	DefaultLimit        = 10
	MaxLimit            = 50
	DefaultConfidence   = float32(0.8)
	DefaultLearningKind = contract.LearningFact
)

// filterFields are the twelve fields of the model-facing filter, a subset of
// MetaFilter: no reach (the host's), and none of the fields a model has no way
// to know (language, commit, turns, tool_call, source_id) or that belong to
// curation (statuses).
var filterFields = [...]string{"kinds", "sources", "tags_any", "workspace", "folder", "file_path", "repo", "url",
	"thread_id", "agent_id", "observed_after", "observed_before"}

// exploreFacets are the facets memory_explore offers: every facet but the
// namespace, which is the host's.
func exploreFacets() []string {
	out := make([]string, 0, len(contract.Facets()))
	for _, f := range contract.Facets() {
		if f != contract.FacetNamespace {
			out = append(out, string(f))
		}
	}
	return out
}

func learningKinds() []string { return stringsOf(contract.LearningKinds()) }
func roles() []string         { return stringsOf(contract.Roles()) }

func stringsOf[S ~string](xs []S) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}

// defaultMode is hybrid when the engine serves it, else its first mode; ok is
// false for an engine that serves none.
func defaultMode(modes []contract.FetchMode) (contract.FetchMode, bool) {
	if len(modes) == 0 {
		return "", false
	}
	for _, m := range modes {
		if m == contract.ModeHybrid {
			return m, true
		}
	}
	return modes[0], true
}

// ToolSpec describes one tool for a model: its name, what it does and the JSON
// Schema of its arguments.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// IsWrite tells whether the tool changes memory.
func (s ToolSpec) IsWrite() bool { return isWriteTool(s.Name) }

func isWriteTool(name string) bool { return name == ToolStore || name == ToolForget }

// specs lists the tools offered for an engine with these fetch modes, reads
// first: memory_fetch only when the engine serves a mode, the write tools only
// with writes.
func specs(modes []contract.FetchMode, writes bool) []ToolSpec {
	out := []ToolSpec{
		spec(ToolRecall, "Answer a question from the agent's long-term memory: returns a synthesised answer and the "+
			"memories it cites. Reach for this first when you need to know what is remembered about something.", recallSchema()),
	}
	if len(modes) > 0 {
		out = append(out, spec(ToolFetch, "Search long-term memory and return the matching memories themselves, best "+
			"first, when you need the stored text rather than an answer. Pass `cursor` from a previous result for the next page.",
			fetchSchema(modes)))
	}
	out = append(out,
		spec(ToolList, "Page through stored memories without a query, newest first, optionally narrowed by a "+
			"filter. Pass `cursor` from a previous result for the next page.", listSchema()),
		spec(ToolGet, "Read memories whole by id (ids come from recall citations and fetch or list results). "+
			"Ids that name nothing you can see come back as `missing`.", getSchema()),
		spec(ToolExplore, "Count stored memories per value of one facet (kind, source, folder, thread, tag, ...), "+
			"largest first, to see what memory holds before narrowing a filter.", exploreSchema()),
	)
	if writes {
		out = append(out,
			spec(ToolStore, "Store one memory: exactly one of `learning` (a distilled statement worth keeping: a "+
				"preference, fact, procedure or correction), `document` (a text to keep whole) or `conversation` "+
				"(turns in order). Storing the same memory again is harmless: it is reported as replayed.", storeSchema()),
			spec(ToolForget, "Remove memories, either by `ids` or by a `filter` that sets at least one field (never "+
				"both). Ids you cannot see are not removed; they come back as `skipped`.", forgetSchema()),
		)
	}
	return out
}

func spec(name, description string, schema map[string]any) ToolSpec {
	raw, err := json.Marshal(schema)
	if err != nil {
		// The schemas are built from strings, numbers and maps only.
		panic("mcp: tool schema does not encode: " + err.Error())
	}
	return ToolSpec{Name: name, Description: description, Parameters: raw}
}

// schemaProperty is one named property of an object schema.
type schemaProperty struct {
	name   string
	schema map[string]any
}

// object is a closed object schema; required is listed only when non-empty.
func object(required []string, props ...schemaProperty) map[string]any {
	properties := make(map[string]any, len(props))
	for _, p := range props {
		properties[p.name] = p.schema
	}
	s := map[string]any{"type": "object", "properties": properties, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func prop(name string, schema map[string]any) schemaProperty { return schemaProperty{name, schema} }

func described(schema map[string]any, description string) map[string]any {
	schema["description"] = description
	return schema
}

func text(description string) map[string]any {
	return map[string]any{"type": "string", "description": description}
}

func timestampSchema(description string) map[string]any {
	return map[string]any{"type": "string", "format": "date-time", "description": description}
}

func dateSchema(description string) map[string]any {
	return map[string]any{"type": "string", "format": "date", "description": description}
}

func stringList(description string) map[string]any {
	return map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": description}
}

func enumList(values []string, description string) map[string]any {
	return map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": values}, "description": description}
}

func idsSchema(description string) map[string]any {
	return map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "minItems": 1,
		"maxItems": contract.MaxGetIDs, "description": description}
}

func limitSchema(description string) map[string]any {
	return map[string]any{"type": "integer", "minimum": 1, "maximum": MaxLimit, "default": DefaultLimit,
		"description": description}
}

func cursorSchema() map[string]any {
	return text("The `next_cursor` of a previous result, to continue after it.")
}

// filterSchema is the model-facing filter: the twelve filterFields, never a
// namespace or a reach.
func filterSchema(description string) map[string]any {
	return described(object(nil,
		prop("kinds", enumList(stringsOf(contract.ItemKinds()), "Only these kinds of memory; empty means every kind.")),
		prop("sources", enumList(stringsOf(contract.SourceKinds()), "Only memories from these kinds of source; empty means every source.")),
		prop("tags_any", stringList("Only memories carrying at least one of these tags.")),
		prop("workspace", text("Exactly this workspace.")),
		prop("folder", text("This folder or any folder below it.")),
		prop("file_path", text("This file path, or any path below it.")),
		prop("repo", text("Exactly this repository (`owner/name` or a URL).")),
		prop("url", text("Exactly this URL the memory was read from.")),
		prop("thread_id", text("Exactly this conversation thread id.")),
		prop("agent_id", text("Exactly this id of the agent that produced the memory.")),
		prop("observed_after", timestampSchema("Only memories observed at or after this RFC 3339 instant.")),
		prop("observed_before", timestampSchema("Only memories observed before this RFC 3339 instant.")),
	), description)
}

const filterDescription = "Narrows which memories count; every field that is set must match."

// refersToSchema is the days a question is about, read in the host's zone.
func refersToSchema() map[string]any {
	return described(object([]string{"from"},
		prop("from", dateSchema("First day, as YYYY-MM-DD.")),
		prop("to", dateSchema("Last day, as YYYY-MM-DD; the same as `from` when left out.")),
	), "The calendar days the question is about (\"yesterday\", \"on 3 March\"); memories observed on them rank first.")
}

func recallSchema() map[string]any {
	return object([]string{"question"},
		prop("question", text("The question to answer, in natural language.")),
		prop("filter", filterSchema(filterDescription)),
		prop("limit", limitSchema("Most memories the answer may cite.")),
		prop("instructions", text("Optional guidance for the answer (length, format, focus).")),
		prop("refers_to", refersToSchema()),
	)
}

func fetchSchema(modes []contract.FetchMode) map[string]any {
	mode := map[string]any{"type": "string", "enum": stringsOf(modes),
		"description": "How to rank: `keyword` (words in common), `vector` (meaning) or `hybrid` (both), as this memory offers them."}
	if m, ok := defaultMode(modes); ok {
		mode["default"] = string(m)
	}
	return object([]string{"query"},
		prop("query", text("What to search for.")),
		prop("mode", mode),
		prop("filter", filterSchema(filterDescription)),
		prop("limit", limitSchema("Most memories to return.")),
		prop("cursor", cursorSchema()),
		prop("refers_to", refersToSchema()),
	)
}

func listSchema() map[string]any {
	return object(nil,
		prop("filter", filterSchema(filterDescription)),
		prop("limit", limitSchema("Most memories to return.")),
		prop("cursor", cursorSchema()),
	)
}

func getSchema() map[string]any {
	return object([]string{"ids"}, prop("ids", idsSchema("The ids of the memories to read.")))
}

func exploreSchema() map[string]any {
	return object([]string{"facet"},
		prop("facet", map[string]any{"type": "string", "enum": exploreFacets(),
			"description": "The dimension to group memories by."}),
		prop("filter", filterSchema(filterDescription)),
		prop("limit", limitSchema("Most values to return.")),
	)
}

func storeSchema() map[string]any {
	learning := described(object([]string{"text"},
		prop("text", text("The statement, self-contained and specific.")),
		prop("learning_kind", map[string]any{"type": "string", "enum": learningKinds(),
			"default": string(DefaultLearningKind), "description": "What kind of statement it is."}),
		prop("confidence", map[string]any{"type": "number", "minimum": 0, "maximum": 1, "default": 0.8,
			"description": "How sure you are of it, from 0 to 1."}),
		prop("evidence", text("What supports the statement.")),
	), "A distilled statement worth remembering.")
	document := described(object([]string{"text"},
		prop("title", text("The document's title.")),
		prop("text", text("The document's body, usually markdown.")),
	), "A text to remember whole.")
	turn := object([]string{"role", "text"},
		prop("role", map[string]any{"type": "string", "enum": roles(), "description": "Who spoke."}),
		prop("text", text("What was said.")),
	)
	conversation := described(object([]string{"turns"},
		prop("turns", map[string]any{"type": "array", "items": turn, "minItems": 1, "description": "The turns, in order."}),
	), "An exchange to remember.")
	return object(nil,
		prop("learning", learning),
		prop("document", document),
		prop("conversation", conversation),
		prop("tags", stringList("Free-form tags to file the memory under.")),
	)
}

func forgetSchema() map[string]any {
	return object(nil,
		prop("ids", idsSchema("The ids of the memories to remove.")),
		prop("filter", filterSchema("Remove every memory matching this filter; it must set at least one field.")),
	)
}
