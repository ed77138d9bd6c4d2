// Package mcp offers agents mnemo's memory as seven tools, and serves them over
// the Model Context Protocol. It is a boundary over any contract.Engine, like
// server/httpapi: the local bbolt store, a remote server or the reference
// engine behave the same behind it.
//
// The tools (tinymemory's agent tool set, reference section 14) are, reads
// first: memory_recall, memory_fetch, memory_list, memory_get and
// memory_explore; then the writes memory_store and memory_forget. Tools.Specs
// describes them (name, description, closed JSON Schema) and Tools.Call runs
// one by name with the model's raw JSON arguments, returning compact JSON.
//
// # Scope is the host's
//
// Where a model writes and how far it reads are fixed by the host in a
// ToolScope, never chosen by the model:
//
//   - every stored item lands at the scope's Place, with source agent, the
//     model's tags and observed_at = now;
//   - every read's reach is overwritten with the scope's Reach, and memory_get
//     passes it to the engine's get;
//   - memory_forget by ids first reads the ids back under the reach and removes
//     only those found (through forget_within when the scope has a reach),
//     reporting the rest as skipped; by filter, the filter must set a field of
//     its own before the reach is added, and is then confined to the reach;
//   - a read-only scope neither lists nor runs the write tools.
//
// # Strict argument reading
//
// Arguments are read by hand, not by a schema validator, so every refusal
// carries the reference's exact message naming the tool and the field
// (`memory_list: `filter.kinds` must be an array of strings`). Every schema
// object is closed (additionalProperties: false) and the reader refuses any
// key a schema does not list. A `namespace` or `reach` key is refused as fixed
// by the host at any depth: before a tool reads its arguments, the whole
// argument tree is scanned (breadth first, keys in byte order), so a
// `namespace` nested under an unknown key (`{"foo": {"namespace": ...}}`) is
// reported as host-fixed too, not merely as an unknown argument. An explicit
// null reads as an absent field.
//
// # Over MCP
//
// NewServer registers each offered tool with the go-sdk's raw handler, which
// hands the arguments over unvalidated, so the SDK's schema validation never
// pre-empts these messages. A receiving middleware routes calls to tools that
// are not registered (an unknown name, a write tool on a read-only scope,
// memory_fetch on an engine without fetch modes) to the same dispatch, so the
// model reads the reference's message instead of the SDK's "unknown tool".
// Refusals and engine failures come back as tool results with isError set and
// the error as text ("invalid request: memory_get: ..."); engine and
// configuration failures are replaced by a fixed sentence and logged, since
// their text can name files or internals.
package mcp
