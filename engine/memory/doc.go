// Package memory is mnemo's in-memory reference engine: a complete, exact
// implementation of contract.Engine that keeps every record in a map behind one
// RWMutex. It calibrates the conformance suite (its answers define "correct" for
// the suite's broken-wrapper tests) and backs the TUI in tests, so it favours
// obviously-right code over speed: every read scans every record.
//
// Ranking follows tinymemory's reference engine: words are split on
// non-alphanumeric runes and lowercased; the keyword score is the fraction of the
// query's distinct words present; the vector score is the cosine of 64-dimension
// unit vectors of FNV-1a hashed character trigrams of " word "; hybrid is their
// mean. Ties rank in insertion order.
package memory
