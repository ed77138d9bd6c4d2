package postgres

import (
	"errors"

	"mnemo/contract"
	"mnemo/engine/internal/metacodec"
)

// The hit column holds what a hit carries besides the columns the row has
// anyway (id, kind, confidence): the rendered text and the metadata, in a
// compact binary form, so a browse page, a listing or a ranking decodes its
// rows without reading the item out of line or parsing JSON (about 50 µs a
// row before). The first byte is the layout's version; a row written before
// the column existed holds NULL and is decoded from its item.
const hitVersion = 1

var errCorruptHit = errors.New("stored hit is corrupt")

// encodeHit is the hit column of an item whose rendered text is text.
func encodeHit(text string, m *contract.MemoryMeta) []byte {
	w := metacodec.Writer{Buf: make([]byte, 0, len(text)+128)}
	w.U8(hitVersion)
	w.Str(text)
	metacodec.AppendMeta(&w, m, metacodec.Varint)
	return w.Buf
}

// nsCache parses each printed namespace once per page.
type nsCache map[string]contract.Namespace

func (c nsCache) get(s string) (contract.Namespace, error) {
	if ns, ok := c[s]; ok {
		return ns, nil
	}
	ns, err := contract.ParseNamespace(s)
	if err != nil {
		return contract.Namespace{}, err
	}
	c[s] = ns
	return ns, nil
}

// decodeHit reads a hit column into the hit's text and metadata. The
// column is copied into one string that every decoded string shares, and the
// optional fields point into one array: a row costs a handful of allocations
// rather than one per field (a 1000-row page decodes in about 1 ms).
func decodeHit(b []byte, nss nsCache) (string, contract.MemoryMeta, error) {
	r := metacodec.NewReader(string(b))
	var m contract.MemoryMeta
	if r.U8() != hitVersion {
		return "", m, errCorruptHit
	}
	text := r.Str()
	printed := metacodec.ReadMeta(r, &m, metacodec.Varint)
	if r.Err() != nil || len(r.Rest()) != 0 {
		return "", m, errCorruptHit
	}
	ns, err := nss.get(printed)
	if err != nil {
		return "", m, errCorruptHit
	}
	m.Namespace = ns
	return text, m, nil
}
