// Package curate finds the records of a scope that say the same thing, so a
// person can resolve them: repeats (the same fact again, reworded, reordered or
// with other metadata) and conflicts (the same subject with another value: a
// number, a version, a date, a name, a yes and a no).
//
// It is pure over records: Find takes the records of a scope and answers their
// clusters; Index keeps the clusters of a growing set up to date one record at
// a time and answers the same clusters as Find over the same records. Nothing
// is merged here: Plan and Apply (resolve.go) turn a person's choice into
// supersedes through the contract, and Undo puts them back. Beliefs
// (beliefs.go) derives the contract's beliefs from clusters.
//
// The method and its measured precision and recall are in docs/curation.md.
package curate
