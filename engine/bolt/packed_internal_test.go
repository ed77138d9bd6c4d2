package bolt

import (
	"bytes"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"
)

// TestPackedBodyWritesTheSameRecord: a record whose body was compressed
// before its write (pack, outside the transaction) is stored byte for byte
// as encode stores it; a body packed against a dictionary that is no longer
// the current one (one dropped with its failed write, then another made in
// its place with the same id) is compressed again, never written against
// the wrong dictionary; and without a dictionary the record is the layout
// of a store that has none.
func TestPackedBodyWritesTheSameRecord(t *testing.T) {
	dictOf := func(text string) *s2.Dict {
		d := s2.MakeDict([]byte(strings.Repeat(text, 2000)), nil)
		if d == nil {
			t.Fatal("no dictionary")
		}
		return d
	}
	var c recordCodec
	for i, r := range sampleRecords() {
		if got, want := c.encodePacked(&r, c.pack(&r)), encodeRecord(&r); !bytes.Equal(got, want) {
			t.Errorf("record %d without a dictionary: packed %x, want %x", i, got, want)
		}
	}
	c.add(dictOf("prefers tabs over spaces, team:acme/agent:writer "))
	stale := make([]packedBody, len(sampleRecords()))
	for i, r := range sampleRecords() {
		stale[i] = c.pack(&r)
		if got, want := c.encodePacked(&r, stale[i]), c.encode(&r); !bytes.Equal(got, want) {
			t.Errorf("record %d: packed %x, want %x", i, got, want)
		}
		back, err := c.decode(c.encodePacked(&r, stale[i]), partFull, parseNS)
		if err != nil || !sameRecord(back, r) {
			t.Errorf("record %d does not read back: %v", i, err)
		}
	}
	c.drop()
	c.add(dictOf("an entirely different store's words, documents and notes "))
	for i, r := range sampleRecords() {
		got := c.encodePacked(&r, stale[i])
		if want := c.encode(&r); !bytes.Equal(got, want) {
			t.Errorf("record %d, packed against the dropped dictionary: %x, want %x", i, got, want)
		}
		back, err := c.decode(got, partFull, parseNS)
		if err != nil || !sameRecord(back, r) {
			t.Errorf("record %d, packed against the dropped dictionary, does not read back: %v", i, err)
		}
	}
}
