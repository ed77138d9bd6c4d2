package bolt

import (
	"bytes"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"

	"mnemo/bench/corpus"
	"mnemo/contract"
	"mnemo/engine/internal/metacodec"
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

// TestRecordBodiesAreWrittenSmall: a record's body is compressed with S2's
// better mode against the store's dictionary: on the bench corpus's records
// that is a sixth fewer bytes than the fast mode (553 against 462 bytes a
// body at 1M), and each reads back as written.
func TestRecordBodiesAreWrittenSmall(t *testing.T) {
	var recs []*storedRecord
	for i, en := range corpus.Generate(3000, 11) {
		js, _ := en.Item.MarshalJSON()
		r := storedRecord{ord: uint32(i), status: contract.StatusActive, kind: en.Item.ItemKind(), text: en.Item.RenderText(),
			meta: en.Item.Meta, itemJSON: js, expires: noTime}
		recs = append(recs, &r)
	}
	var c recordCodec
	d := buildDict(nil, recs[:2000])
	if d == nil {
		t.Fatal("no dictionary from the sample")
	}
	c.add(d)
	var written, fast int
	for _, r := range recs[2000:] {
		b := c.encode(r)
		back, err := c.decode(b, partFull, parseNS)
		if err != nil || !sameRecord(back, *r) {
			t.Fatalf("record %d does not read back: %v", r.ord, err)
		}
		body := metacodec.Writer{}
		encodeBody(&body, r)
		written += len(c.pack(r).body)
		fast += len(d.Encode(nil, body.Buf))
	}
	if written > fast*9/10 {
		t.Fatalf("bodies take %d bytes, S2's fast mode %d: want at least a tenth fewer", written, fast)
	}
}
