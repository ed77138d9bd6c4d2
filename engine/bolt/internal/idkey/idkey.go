// Package idkey names a record in engine/bolt's keys by its id's 20 bytes
// rather than its 40 digits: the ordered keys, the change feed's entries,
// the search index's document names and the table's dictionary of ids. A
// record's id is its fingerprint
// (contract.IsFingerprint), and its bytes sort as its digits do, so keys
// built on them keep the order keys built on the digits had.
//
// An id of another form (no store writes one; tests do) is named by its own
// bytes behind a tag, so that no name of one form is a name of the other:
// 'r' then the id, or, for an id of 19 bytes (which would make 20), 'R', the
// id, then '.'. Such names do not sort as their ids.
package idkey

import (
	"encoding/hex"

	"mnemo/contract"
)

// Len is the length of a fingerprint's name.
const Len = contract.FingerprintBytes

// Append appends id's name to dst.
func Append(dst []byte, id string) []byte {
	if contract.IsFingerprint(id) {
		dst, _ = hex.AppendDecode(dst, []byte(id))
		return dst
	}
	if len(id) == Len-1 {
		return append(append(append(dst, 'R'), id...), '.')
	}
	return append(append(dst, 'r'), id...)
}

// Name is id's name.
func Name(id string) string { return string(Append(make([]byte, 0, Len), id)) }

// Names are the names of ids.
func Names(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = Name(id)
	}
	return out
}

// ID is the id a name names.
func ID[T string | []byte](name T) string {
	switch {
	case len(name) == Len:
		return hex.EncodeToString([]byte(name))
	case len(name) == Len+1 && name[0] == 'R':
		return string(name[1:Len])
	case len(name) > 0 && name[0] == 'r':
		return string(name[1:])
	}
	return string(name)
}
