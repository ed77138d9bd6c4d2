package postgres

import (
	"mnemo/contract"
)

// prepareRun is the fewest records a goroutine prepares (parallel.Each). A
// batch's client-side work (its fingerprints, JSON, folded text, tsvector
// and hit: about 90 µs a record) runs while the database waits for the
// statement, so spreading it over the cores shortens every write by as much.
const prepareRun = 8

// derived is what a row's insert computes from its item: the folded text,
// the tsvector literal and the hit column.
type derived struct {
	folded, tsv string
	hit         []byte
}

func derive(r *row) derived {
	text := r.item.RenderText()
	return derived{folded: contract.FoldCase(text), tsv: tsvectorLiteral(r.id, text), hit: encodeHit(text, &r.item.Meta)}
}
