package bolt

import (
	"encoding/binary"
	"errors"
	"math"
	"time"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/s2"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/idkey"
	"mnemo/engine/internal/metacodec"
)

// The first byte of a stored record tags its layout, so one layout is never
// misread as another. Every layout shares the fixed header (ordinal, status,
// kind, times, supersession, confidence); after it, version 1 holds the
// rendered text, the metadata and the item's JSON as they are, version 2 the
// same bytes snappy-compressed, and version 3 the id of one of the store's
// record dictionaries and the same bytes compressed by S2 against it.
//
// The item's JSON repeats the text and most of the metadata, which any of the
// compressors finds within the record; what a dictionary adds is what records
// repeat among themselves (the JSON's keys, metadata names and values, the
// store's common words). On the 100k bench corpus a body of 1,477 bytes took
// 848 with snappy and 547 with S2 against a 64 KB dictionary made from other
// records of the store, encoded in about 8 us and decoded in 2 (snappy 4.5
// and 2.4). zstd with the same dictionary took it to 390-410 bytes but spent
// 50-70 us encoding one record (its encoder copies its whole match table per
// frame) and 5-8 us decoding it; flate with a preset dictionary took 20 us to
// decode, and every browse page, fetch and content-filter check decodes
// records. Writers write version 3 once the store has a dictionary (recorddict.go)
// and version 2 before; older records are read as they are and rewritten by
// mnemo compact.
//
// Versions 4 and 5 are 2 and 3 with the item in binary after the metadata
// instead of its JSON (itemcodec.go): writers write them for every item
// they can (binaryItem), and a record read in them and written again (a
// review) keeps its layout. A record of version 1 to 3 stays as it was
// when written again, since it holds the item as JSON only.
//
// Version 6 is 5 with a compact header (compactHeader): what every record
// holds in varints, what few hold behind a flag. Writers write it where
// they wrote 5; a record of 5 written again (a review) is written in 6.
const (
	recordV1 = 1
	recordV2 = 2
	recordV3 = 3
	recordV4 = 4
	recordV5 = 5
	recordV6 = 6
)

// itemInBinary says whether a record of layout version holds its item in
// binary rather than as JSON.
func itemInBinary(version byte) bool {
	return version == recordV4 || version == recordV5 || version == recordV6
}

// againstDict says whether a record of layout version is compressed against
// one of the store's dictionaries.
func againstDict(version byte) bool {
	return version == recordV3 || version == recordV5 || version == recordV6
}

// noTime marks an absent instant in int64 columns and in the codec.
const noTime = math.MinInt64

// storedRecord is one record as bbolt holds it. The rendered text and the
// metadata are kept in a compact binary form ahead of the item's wire JSON, so
// listings and browse pages decode without touching JSON.
type storedRecord struct {
	ord          uint32
	status       contract.Status
	kind         contract.ItemKind
	created      int64 // unix milliseconds
	updated      int64 // unix milliseconds
	expires      int64 // unix nanoseconds, noTime when unset
	supersededBy string
	text         string
	confidence   float32 // meaningful for learnings only
	meta         contract.MemoryMeta
	// The item: item when the record is (to be) kept in layout 4 or 5,
	// itemJSON when in an older one. A write sets item (or itemJSON, for an
	// item binaryItem refuses); a full decode sets the one its layout holds.
	item     *contract.StoreItem
	itemJSON []byte
}

var errCorruptRecord = errors.New("stored record is corrupt")

func statusCode(s contract.Status) uint8 {
	switch s {
	case contract.StatusCandidate:
		return 0
	case contract.StatusSuperseded:
		return 2
	}
	return 1
}

var statusByCode = [3]contract.Status{contract.StatusCandidate, contract.StatusActive, contract.StatusSuperseded}

func kindCode(k contract.ItemKind) uint8 {
	switch k {
	case contract.KindConversation:
		return 1
	case contract.KindLearning:
		return 2
	}
	return 0
}

var kindByCode = [3]contract.ItemKind{contract.KindDocument, contract.KindConversation, contract.KindLearning}

// sourceKinds are the source kinds by their code (metacodec.SourceCode), for
// the table's source column: never written.
var sourceKinds = contract.SourceKinds()

func encodeRecord(r *storedRecord) []byte {
	version := byte(recordV2)
	if r.item != nil {
		version = recordV4
	}
	w := encodeHeader(r, version)
	body := metacodec.Writer{Buf: make([]byte, 0, 128+len(r.text)+len(r.itemJSON))}
	encodeBody(&body, r)
	return appendSnappy(w.Buf, body.Buf)
}

// encodeHeader writes the header of a record of layout version: the fixed
// one of versions 1 to 5, or version 6's compact one.
func encodeHeader(r *storedRecord, version uint8) metacodec.Writer {
	w := metacodec.Writer{Buf: make([]byte, 0, 48+len(r.supersededBy))}
	w.U8(version)
	if version == recordV6 {
		compactHeader(&w, r)
		return w
	}
	w.U32(r.ord)
	w.U8(statusCode(r.status))
	w.U8(kindCode(r.kind))
	w.I64(r.created)
	w.I64(r.updated)
	w.I64(r.expires)
	w.Str(r.supersededBy)
	w.U32(math.Float32bits(r.confidence))
	return w
}

// encodeBody writes the text, the metadata and the item: in binary when r
// holds it so, else its JSON.
func encodeBody(w *metacodec.Writer, r *storedRecord) {
	w.Str(r.text)
	metacodec.AppendMeta(w, &r.meta, metacodec.Fixed)
	if r.item != nil {
		appendItem(w, r.item)
		return
	}
	w.Bytes(r.itemJSON)
}

// appendSnappy appends the snappy block of src to dst.
func appendSnappy(dst, src []byte) []byte {
	n := len(dst)
	out := append(dst, make([]byte, snappy.MaxEncodedLen(len(src)))...)
	return out[:n+len(snappy.Encode(out[n:], src))]
}

// The flags of a compact header (version 6), beside the status's and the
// kind's codes in its second byte.
const (
	hdrMoved      = 1 << 4 // updated_at is not created_at: their difference follows
	hdrExpires    = 1 << 5 // an expires_at follows
	hdrConfidence = 1 << 6 // a confidence other than 0 follows (a learning's)
	hdrCodes      = 1<<4 - 1
)

// compactHeader writes version 6's header after its version byte: the
// ordinal (uvarint), a byte of the status's code, the kind's (shifted by
// two) and the flags, created_at (varint ms), then, each only when its
// flag says so, updated_at minus created_at (varint ms), expires_at
// (varint ns) and the confidence's bits; then supersededBy as a string (its
// length alone when empty). On the bench corpus it takes 12 bytes where the
// fixed header takes 36.
func compactHeader(w *metacodec.Writer, r *storedRecord) {
	w.Uvarint(uint64(r.ord))
	b := statusCode(r.status) | kindCode(r.kind)<<2
	conf := math.Float32bits(r.confidence)
	if r.updated != r.created {
		b |= hdrMoved
	}
	if r.expires != noTime {
		b |= hdrExpires
	}
	if conf != 0 {
		b |= hdrConfidence
	}
	w.U8(b)
	w.Varint(r.created)
	if b&hdrMoved != 0 {
		w.Varint(r.updated - r.created)
	}
	if b&hdrExpires != 0 {
		w.Varint(r.expires)
	}
	if b&hdrConfidence != 0 {
		w.U32(conf)
	}
	w.Str(r.supersededBy)
}

// readHeader reads a record's header, fixed or compact by its version
// (the version byte already read), into out.
func readHeader(r *metacodec.Reader[[]byte], version byte, out *storedRecord) error {
	if version == recordV6 {
		ord := r.Uvarint()
		b := r.U8()
		sc, kc := b&3, b>>2&3
		if ord > math.MaxUint32 || sc > 2 || kc > 2 || b&^(hdrCodes|hdrMoved|hdrExpires|hdrConfidence) != 0 {
			return errCorruptRecord
		}
		out.ord, out.status, out.kind = uint32(ord), statusByCode[sc], kindByCode[kc]
		out.created = r.Varint()
		out.updated, out.expires = out.created, noTime
		if b&hdrMoved != 0 {
			out.updated = out.created + r.Varint()
		}
		if b&hdrExpires != 0 {
			out.expires = r.Varint()
		}
		if b&hdrConfidence != 0 {
			out.confidence = math.Float32frombits(r.U32())
		}
		out.supersededBy = r.Str()
		return r.Err()
	}
	out.ord = r.U32()
	sc := r.U8()
	kc := r.U8()
	if sc > 2 || kc > 2 {
		return errCorruptRecord
	}
	out.status = statusByCode[sc]
	out.kind = kindByCode[kc]
	out.created = r.I64()
	out.updated = r.I64()
	out.expires = r.I64()
	out.supersededBy = r.Str()
	out.confidence = math.Float32frombits(r.U32())
	return r.Err()
}

// recordHeaderLen is the length of a stored record's header (its version
// byte included), or -1 when the bytes are too short to hold one.
func recordHeaderLen(b []byte) int {
	if len(b) > 0 && b[0] == recordV6 {
		var out storedRecord
		r := metacodec.NewReader(b[1:])
		if readHeader(r, recordV6, &out) != nil {
			return -1
		}
		return len(b) - len(r.Rest())
	}
	const fixed = 1 + 4 + 1 + 1 + 8 + 8 + 8 // version to expires
	if len(b) < fixed {
		return -1
	}
	n, k := binary.Uvarint(b[fixed:])
	if k <= 0 || uint64(len(b)-fixed-k) < n+4 {
		return -1
	}
	return fixed + k + int(n) + 4
}

// text reads only the rendered text of an encoded record.
func (c *recordCodec) text(v []byte) (string, bool) {
	h := recordHeaderLen(v)
	if h < 0 {
		return "", false
	}
	body, err := c.body(v[0], v[h:])
	if err != nil {
		return "", false
	}
	r := metacodec.NewReader(body)
	t := r.Raw()
	return string(t), r.Err() == nil
}

// maxRecordBody bounds the length a compressed body may declare: a damaged
// length must be refused, not allocated (no record comes near it).
const maxRecordBody = 256 << 20

// body answers the text, metadata and item JSON of a record of layout
// version whose bytes after the header are b: b itself for version 1, a
// new slice for the compressed layouts.
func (c *recordCodec) body(version byte, b []byte) ([]byte, error) {
	switch version {
	case recordV1:
		return b, nil
	case recordV2, recordV4:
		n, err := snappy.DecodedLen(b)
		if err != nil || n > maxRecordBody {
			return nil, errCorruptRecord
		}
		out, err := snappy.Decode(nil, b)
		if err != nil {
			return nil, errCorruptRecord
		}
		return out, nil
	case recordV3, recordV5, recordV6:
		id, k := binary.Uvarint(b)
		if k <= 0 {
			return nil, errCorruptRecord
		}
		d := c.dict(id)
		if d == nil {
			return nil, errMissingDict
		}
		b = b[k:]
		n, err := s2.DecodedLen(b)
		if err != nil || n > maxRecordBody {
			return nil, errCorruptRecord
		}
		out, err := d.Decode(make([]byte, n), b)
		if err != nil || len(out) != n {
			return nil, errCorruptRecord
		}
		return out, nil
	}
	return nil, errCorruptRecord
}

// upgrade returns a record's bytes in the layout the codec writes: the same
// header, the same body bytes compressed, and for an item in binary against
// a dictionary the header made compact (layout 6). It works on the bytes
// and the header's fields, which the compact header holds exactly, so the
// upgrade cannot change what a record says. A record already in that
// layout (or against another dictionary) is returned as it is.
func (c *recordCodec) upgrade(b []byte) ([]byte, error) {
	if len(b) == 0 {
		return nil, errCorruptRecord
	}
	h := recordHeaderLen(b)
	if h < 0 {
		return nil, errCorruptRecord
	}
	id, d := c.current()
	switch {
	case b[0] == recordV3 || b[0] == recordV6:
		return b, nil
	case b[0] == recordV5:
		w, err := compactHeaderOf(b[:h])
		return append(w.Buf, b[h:]...), err
	case (b[0] == recordV2 || b[0] == recordV4) && d == nil:
		return b, nil
	case b[0] != recordV1 && b[0] != recordV2 && b[0] != recordV4:
		return nil, errCorruptRecord
	}
	body, err := c.body(b[0], b[h:])
	if err != nil {
		return nil, err
	}
	if d != nil && itemInBinary(b[0]) {
		w, err := compactHeaderOf(b[:h])
		w.Uvarint(id)
		return appendDict(w.Buf, d, body), err
	}
	out := make([]byte, h, h+binary.MaxVarintLen64+s2.MaxEncodedLen(len(body)))
	copy(out, b[:h])
	if d == nil {
		out[0] = recordV2
		return appendSnappy(out, body), nil
	}
	out[0] = recordV3
	out = binary.AppendUvarint(out, id)
	return appendDict(out, d, body), nil
}

// compactHeaderOf is a fixed header (layouts 1 to 5, its version byte
// first) written again as layout 6's.
func compactHeaderOf(hdr []byte) (metacodec.Writer, error) {
	var r storedRecord
	if err := readHeader(metacodec.NewReader(hdr[1:]), hdr[0], &r); err != nil {
		return metacodec.Writer{}, errCorruptRecord
	}
	return encodeHeader(&r, recordV6), nil
}

// recordPart says how much of a record to decode: listings never need the
// item's JSON, and the loader at open needs neither the text nor the JSON.
type recordPart int

const (
	partHeader recordPart = iota // system fields and metadata
	partHit                      // plus the rendered text
	partFull                     // plus the item's JSON
)

// decode reads a stored record. nsOf turns a printed namespace into its
// value (callers cache them; the namespace strings are few).
func (c *recordCodec) decode(b []byte, part recordPart, nsOf func(string) contract.Namespace) (storedRecord, error) {
	r := metacodec.NewReader(b)
	version := r.U8()
	if version < recordV1 || version > recordV6 {
		return storedRecord{}, errCorruptRecord
	}
	var out storedRecord
	if err := readHeader(r, version, &out); err != nil {
		return storedRecord{}, errCorruptRecord
	}
	owned := false // whether the rest is this call's own copy, which the record may keep
	if version != recordV1 && r.Err() == nil {
		body, err := c.body(version, r.Rest())
		if err != nil {
			return storedRecord{}, err
		}
		r.SetRest(body)
		owned = true
	}
	text := r.Raw()
	if part >= partHit {
		out.text = string(text)
	}
	out.meta.Namespace = nsOf(string(metacodec.ReadMeta(r, &out.meta, metacodec.Fixed)))
	switch {
	case part < partFull:
	case itemInBinary(version):
		it := readItem(r, out.kind, out.meta)
		out.item = &it
	default:
		js := r.Raw()
		if owned {
			out.itemJSON = js
		} else {
			out.itemJSON = append([]byte(nil), js...)
		}
	}
	if r.Err() != nil {
		return storedRecord{}, errCorruptRecord
	}
	return out, nil
}

// record turns a stored record into the contract's record.
func (s *storedRecord) record(id string, withItem bool) (contract.Record, error) {
	rec := contract.Record{
		ID: id, Kind: s.kind, Text: s.text, Meta: s.meta, Status: s.status,
		CreatedAt: time.UnixMilli(s.created).UTC(), UpdatedAt: time.UnixMilli(s.updated).UTC(),
	}
	if s.kind == contract.KindLearning {
		c := contract.F32(s.confidence)
		rec.Confidence = &c
	}
	if s.expires != noTime {
		t := time.Unix(0, s.expires).UTC()
		rec.ExpiresAt = &t
	}
	if s.supersededBy != "" {
		rec.SupersededBy = contract.Ptr(s.supersededBy)
	}
	if withItem {
		it, err := s.storedItem()
		if err != nil {
			return contract.Record{}, err
		}
		rec.Item = &it
	}
	return rec, nil
}

func (s *storedRecord) hit(id string) contract.Hit {
	h := contract.Hit{ID: id, Kind: s.kind, Text: s.text, Meta: s.meta}
	if s.kind == contract.KindLearning {
		c := contract.F32(s.confidence)
		h.Confidence = &c
	}
	return h
}

func (s *storedRecord) storedItem() (contract.StoreItem, error) {
	if s.item != nil {
		return *s.item, nil
	}
	var it contract.StoreItem
	if err := it.UnmarshalJSON(s.itemJSON); err != nil {
		return contract.StoreItem{}, errCorruptRecord
	}
	return it, nil
}

// Ordered keys: a big-endian prefix that sorts the wanted way, then the id
// as its 20 bytes (package idkey; its 40 digits until schema 9, 20 bytes a
// key more). Descending timestamps are stored complemented so that a
// forward cursor walk yields newest first with ids ascending among equal
// instants.

func descMillisKey(ms int64, id string) []byte {
	k := make([]byte, 8, 8+idkey.Len)
	binary.BigEndian.PutUint64(k, ^uint64(ms)^(1<<63))
	return idkey.Append(k, id)
}

func splitDescMillisKey(k []byte) (int64, string, bool) {
	if len(k) <= 8 {
		return 0, "", false
	}
	return int64(^binary.BigEndian.Uint64(k[:8]) ^ (1 << 63)), idkey.ID(k[8:]), true
}

func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

func ordValue(ord uint32) []byte { return binary.BigEndian.AppendUint32(nil, ord) }

// parseNS reads a stored printed namespace without the table's cache (for
// background work that does not hold the engine's lock).
func parseNS(s string) contract.Namespace {
	ns, err := contract.ParseNamespace(s)
	if err != nil {
		return contract.Root()
	}
	return ns
}

// confKey orders learnings by confidence descending, then id ascending: the
// f32 bits of a non-negative float sort like the float, complemented for desc.
func confKey(conf float32, id string) []byte {
	k := make([]byte, 4, 4+idkey.Len)
	binary.BigEndian.PutUint32(k, ^math.Float32bits(conf))
	return idkey.Append(k, id)
}

func splitConfKey(k []byte) (string, bool) {
	if len(k) <= 4 {
		return "", false
	}
	return idkey.ID(k[4:]), true
}
