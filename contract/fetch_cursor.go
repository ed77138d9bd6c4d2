package contract

import (
	"encoding/base64"
	"encoding/json"
	"hash/fnv"
	"strconv"
	"strings"
)

// HintWindow is how many of the best results a refers_to hint reorders in a
// ranked fetch; it is fixed so every page of one fetch sees the same order.
const HintWindow = 256

const fetchCursorPrefix = "f1."

// FetchBinding identifies a fetch's ranking (mode, query, filter, hint), so
// a fetch cursor from another ranking is refused rather than paging a
// different list. Engines that page a ranking by offset share it.
func FetchBinding(req FetchRequest) string {
	h := fnv.New64a()
	fj, _ := json.Marshal(req.Filter)
	hj, _ := json.Marshal(req.RefersTo)
	for _, part := range [][]byte{[]byte(req.Mode), []byte(req.Query), fj, hj} {
		h.Write(part)
		h.Write([]byte{0})
	}
	return strconv.FormatUint(h.Sum64(), 36)
}

// EncodeFetchCursor is the cursor of the ranking position offset.
func EncodeFetchCursor(offset int, binding string) *string {
	raw := strconv.Itoa(offset) + "." + binding
	return Ptr(fetchCursorPrefix + base64.RawURLEncoding.EncodeToString([]byte(raw)))
}

// DecodeFetchCursor reads a cursor made by EncodeFetchCursor for the same
// binding (0 for none), or answers the contract's unknown-cursor error.
func DecodeFetchCursor(c *string, binding string) (int, error) {
	if c == nil {
		return 0, nil
	}
	if raw, ok := strings.CutPrefix(*c, fetchCursorPrefix); ok {
		if b, err := base64.RawURLEncoding.DecodeString(raw); err == nil {
			off, bind, _ := strings.Cut(string(b), ".")
			if n, err := strconv.Atoi(off); err == nil && n >= 0 && bind == binding {
				return n, nil
			}
		}
	}
	return 0, Invalid("unknown cursor `%s`", *c)
}
