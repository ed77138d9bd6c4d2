// Package postgres is mnemo's shared store: every record lives in one
// PostgreSQL table, so any number of mnemo processes on any number of hosts
// serve one store at once. Nothing is held in process memory that another
// process could not see: the insertion sequence, the explore counts, review
// and supersede state are all rows of the database.
//
// Keyword fetch ranks on a tsvector column with a GIN index (the filter is in
// the same SQL statement); browse's content filters prefilter on a case-folded
// copy of the text with a pg_trgm GIN index and are then decided exactly by the
// contract's own rules. The schema is created and upgraded at open by
// versioned migrations embedded in the binary, applied under an advisory lock.
//
// A store is named by a libpq URL (postgres:// or postgresql://), with the
// password from the URL, PGPASSWORD or ~/.pgpass; Redact prints a URL with
// the password masked, and no error or health reason of this package carries
// a credential.
package postgres
