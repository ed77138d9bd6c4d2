package contract

import (
	"encoding/json"
	"fmt"
	"time"
	"unsafe"
)

// Reading a page of changes in one pass. Decoded through the nested
// UnmarshalJSON methods (Change, Record, MemoryMeta, SourceRef, and the
// status, kind and namespace strings), encoding/json scans each record's
// bytes once per level, validating them again each time; a watcher of a busy
// feed reads thousands of records a second. ChangesPage.UnmarshalJSON decodes
// the whole page into plain structs in one pass and then applies the same
// checks and conversions the nested methods do, parsing each namespace once
// per page.

type changeIn struct {
	Seq       uint64    `json:"seq"`
	At        string    `json:"at"`
	Op        ChangeOp  `json:"op"`
	ID        string    `json:"id"`
	Namespace *string   `json:"namespace"`
	Status    *string   `json:"status"`
	Record    *recordIn `json:"record"`
}

type recordIn struct {
	ID           string     `json:"id"`
	Kind         *string    `json:"kind"`
	Text         string     `json:"text"`
	Meta         metaIn     `json:"meta"`
	Confidence   *float32   `json:"confidence"`
	Status       *string    `json:"status"`
	CreatedAt    string     `json:"created_at"`
	UpdatedAt    string     `json:"updated_at"`
	ExpiresAt    *string    `json:"expires_at"`
	SupersededBy *string    `json:"superseded_by"`
	Item         *StoreItem `json:"item"`
}

// metaIn is rawMeta with a source read as plain strings (the outer field
// hides rawMeta's for encoding/json).
type metaIn struct {
	rawMeta
	Source *sourceIn `json:"source"`
}

// sourceIn is a source as read, before its checks.
type sourceIn struct {
	Kind *string `json:"kind"`
	ID   *string `json:"id"`
}

// meta is the metadata m reads, as MemoryMeta.UnmarshalJSON reads it: the
// source is checked first, then the rest (rawMeta.meta), and the source set
// on the result, so that no SourceRef is allocated to be copied.
func (m *metaIn) meta(parseNS func(string) (Namespace, error)) (MemoryMeta, error) {
	var src SourceRef
	if s := m.Source; s != nil {
		if s.Kind == nil {
			return MemoryMeta{}, fmt.Errorf("missing field `kind`")
		}
		sk, ok := ParseSourceKind(*s.Kind)
		if !ok {
			return MemoryMeta{}, fmt.Errorf("`%s` is not a source kind", *s.Kind)
		}
		src = SourceRef{Kind: sk, ID: s.ID}
	}
	raw := m.rawMeta
	raw.Source = nil
	out, err := raw.meta(parseNS)
	if err != nil {
		return MemoryMeta{}, err
	}
	if m.Source != nil {
		out.Source = src
	}
	return out, nil
}

// UnmarshalJSON reads a page of changes (see above): the same changes as
// decoding each with Change.UnmarshalJSON, at a fraction of the cost. A page
// as servers write it is scanned by hand (changes_scan.go); anything else
// (escapes aside: odd spellings, repeated keys, invalid input) goes through
// encoding/json, which also words the errors.
func (p *ChangesPage) UnmarshalJSON(data []byte) error {
	if w, ok := scanChangesPage(data); ok {
		return w.page(p)
	}
	w, err := decodeChangesPage(data)
	if err != nil {
		return err
	}
	return w.page(p)
}

// ChangesDecoder reads the pages of one feed one after another (a stream's
// events): what UnmarshalJSON does, keeping its scratch space (the page read
// into plain structs before the checks) from page to page, and taking the
// bytes it is given as the page's memory rather than copying them. A
// follower of a busy feed reads thousands of changes a second; each decoded
// page then allocates little more than the changes it answers.
type ChangesDecoder struct {
	s scanner
}

// Decode reads a page of changes. The page's strings share data's memory:
// data must not change afterwards (a buffer of its own, as an
// io.ReadAll's or a stream event's).
func (d *ChangesDecoder) Decode(data []byte) (ChangesPage, error) {
	var p ChangesPage
	d.s.b, d.s.s = data, unsafe.String(unsafe.SliceData(data), len(data))
	w, ok := d.s.page()
	var err error
	if !ok {
		w, err = decodeChangesPage(data)
	}
	if err == nil {
		err = w.page(&p)
	}
	d.s.reset()
	return p, err
}

// pageIn is a page read into plain structs.
type pageIn struct {
	Changes []changeIn `json:"changes"`
	Next    uint64     `json:"next"`
	Head    uint64     `json:"head"`
	Floor   uint64     `json:"floor"`
}

func decodeChangesPage(data []byte) (pageIn, error) {
	var w pageIn
	err := json.Unmarshal(data, &w)
	return w, err
}

// page converts w with the checks of the nested methods.
func (w *pageIn) page(p *ChangesPage) error {
	var cache pageCache
	out := ChangesPage{Next: w.Next, Head: w.Head, Floor: w.Floor}
	if w.Changes != nil {
		out.Changes = make([]Change, len(w.Changes))
	}
	// The records, in one block rather than an allocation each.
	n := 0
	for i := range w.Changes {
		if w.Changes[i].Record != nil {
			n++
		}
	}
	records := make([]Record, n)
	for i := range w.Changes {
		c, err := w.Changes[i].change(&cache, &records)
		if err != nil {
			return err
		}
		out.Changes[i] = c
	}
	*p = out
	return nil
}

// pageCache parses what the records of one page mostly share: a few
// namespaces, each parsed once, and the time of a write, which a store's
// change, its record's creation and its update often all read as one
// string (the last time parsed is kept; ParseTime was a tenth of a
// follower's decoding).
type pageCache struct {
	names    map[string]Namespace
	lastTime string
	last     time.Time
}

// namespace is ParseNamespace, each namespace of the page parsed once.
func (c *pageCache) namespace(s string) (Namespace, error) {
	if ns, ok := c.names[s]; ok {
		return ns, nil
	}
	ns, err := ParseNamespace(s)
	if err == nil {
		if c.names == nil {
			c.names = map[string]Namespace{}
		}
		c.names[s] = ns
	}
	return ns, err
}

// time is ParseTime, a time equal to the last one read not parsed again.
func (c *pageCache) time(s string) (time.Time, error) {
	if s == c.lastTime && s != "" {
		return c.last, nil
	}
	t, err := ParseTime(s)
	if err == nil {
		c.lastTime, c.last = s, t
	}
	return t, err
}

// change converts w; its record goes in the next of records.
func (w *changeIn) change(cache *pageCache, records *[]Record) (Change, error) {
	c := Change{Seq: w.Seq, Op: w.Op, ID: w.ID}
	var err error
	if c.At, err = cache.time(w.At); err != nil {
		return Change{}, fmt.Errorf("change at: %w", err)
	}
	if w.Namespace != nil {
		if c.Namespace, err = cache.namespace(*w.Namespace); err != nil {
			return Change{}, fmt.Errorf("%s", AsError(err).Message)
		}
	}
	if c.Status, err = statusIn(w.Status); err != nil {
		return Change{}, err
	}
	if w.Record != nil {
		r, err := w.Record.record(cache)
		if err != nil {
			return Change{}, err
		}
		(*records)[0] = r
		c.Record = &(*records)[0]
		*records = (*records)[1:]
	}
	return c, nil
}

func (w *recordIn) record(cache *pageCache) (Record, error) {
	var kind ItemKind
	if w.Kind != nil {
		k, ok := ParseItemKind(*w.Kind)
		if !ok {
			return Record{}, fmt.Errorf("`%s` is not an item kind", *w.Kind)
		}
		kind = k
	}
	st, err := statusIn(w.Status)
	if err != nil {
		return Record{}, err
	}
	meta, err := w.Meta.meta(cache.namespace)
	if err != nil {
		return Record{}, err
	}
	out := Record{ID: w.ID, Kind: kind, Text: w.Text, Meta: meta, Status: st, SupersededBy: w.SupersededBy, Item: w.Item}
	if w.Confidence != nil {
		c := F32(*w.Confidence)
		out.Confidence = &c
	}
	if out.CreatedAt, err = cache.time(w.CreatedAt); err != nil {
		return Record{}, fmt.Errorf("created_at: %w", err)
	}
	if out.UpdatedAt, err = cache.time(w.UpdatedAt); err != nil {
		return Record{}, fmt.Errorf("updated_at: %w", err)
	}
	if w.ExpiresAt != nil {
		t, err := cache.time(*w.ExpiresAt)
		if err != nil {
			return Record{}, fmt.Errorf("expires_at: %w", err)
		}
		out.ExpiresAt = &t
	}
	return out, nil
}

// statusIn is a status read as Status.UnmarshalJSON does (absent: none).
func statusIn(s *string) (Status, error) {
	if s == nil {
		return "", nil
	}
	st, ok := ParseStatus(*s)
	if !ok {
		return "", fmt.Errorf("`%s` is not a status", *s)
	}
	return st, nil
}
