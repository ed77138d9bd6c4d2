// Package conformance is the suite every mnemo engine must pass: a Go port of
// every check of tinymemory's conformance suite (health, round trip, export,
// erase, replay, explore, get, bulk and optioned stores, the fifteen filter
// probes, unsupported modes, namespaces with the service sandbox, forgets, recall,
// consolidation) followed by mnemo's own checks (browse validation, filters,
// order, walk, cursors and expiry, exact explore, review, supersede, hidden
// statuses, and forget leaving no ghost).
//
// Run drives any contract.Engine. Every check confines itself to the run's own
// workspace (a fresh nonce per run), so the suite passes against an engine that
// holds foreign data and leaves that data exactly as it was; cleanup always runs
// and removes everything the run stored, sandboxed namespaces included.
package conformance
