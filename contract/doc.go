// Package contract is mnemo's pure memory contract: the item model and its wire
// format, fingerprints, namespaces and reach, filters, facets, every request and
// response, validation with the reference's exact messages, the browse query with
// its cursor codec, and the Engine interface that every engine implements.
//
// It does no I/O and imports no storage or UI code, so the CLI, the HTTP API, the
// TUI and every engine share one definition of what a correct answer is.
package contract
