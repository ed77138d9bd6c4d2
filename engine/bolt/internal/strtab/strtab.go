// Package strtab interns strings for engine/bolt's table (ids, namespaces,
// facet values, tags) in flat arrays that its snapshot file (package
// sections) saves and maps back in place.
package strtab

import (
	"errors"
	"hash/crc32"
	"hash/maphash"
	"os"
	"sync"
	"unsafe"

	"mnemo/engine/bolt/internal/fileio"
	"mnemo/engine/bolt/internal/sections"
)

// Table interns strings without a pointer per value: the bytes of every
// value in one slice, their offsets in another, and an open-addressed hash
// of value ids. A million values cost their bytes and about 12 more each,
// and the collector scans none of it (a map[string]uint32 and a []string of
// the same held about three times as much, all of it pointers to scan). The
// hash is not saved (Write): it is derived, and made again from the values
// of a table Read gave back, on its first lookup or when Hash is called.
// Value 0 is "" and means "no value"; a field set to "" gets an id of its
// own, as it would in a map.
type Table struct {
	data  []byte
	offs  []uint32 // value i is data[offs[i]:offs[i+1]]
	slots []uint32 // 0 empty, else a value id
	// seed keys the hash, a new one per table, so values a user chose cannot
	// be made to collide on purpose.
	seed maphash.Seed
	// empty is the id of "" held as a value (a field set to ""), 0 until one is.
	empty uint32
	// read is data as Read found it in the file's mapping: values are
	// never written again once appended, so these bytes are only read.
	read []byte
	// hashed makes the slots of a table Read gave back (nil until then)
	// once, whichever lookup or Hash comes first; a reader that needs no
	// lookup (a browse by status) never waits for it.
	hashed sync.Once
}

// New is an empty table.
func New() *Table {
	return &Table{offs: []uint32{0, 0}, slots: make([]uint32, 8), seed: maphash.MakeSeed()}
}

func (d *Table) hash(s string) uint64 { return maphash.String(d.seed, s) }

// Len is the number of value ids, "" included.
func (d *Table) Len() int { return len(d.offs) - 1 }

// Val is value id's string. It shares the table's bytes, which are never
// written again once appended, so it stays valid after the table grows.
func (d *Table) Val(id uint32) string {
	a, b := d.offs[id], d.offs[id+1]
	if a == b {
		return ""
	}
	return unsafe.String(&d.data[a], int(b-a))
}

func (d *Table) slot(s string) (int, uint32) {
	d.Hash()
	mask := uint64(len(d.slots) - 1)
	i := d.hash(s) & mask
	for {
		id := d.slots[i]
		if id == 0 || d.Val(id) == s {
			return int(i), id
		}
		i = (i + 1) & mask
	}
}

// Lookup is s's value id, if s is a value.
func (d *Table) Lookup(s string) (uint32, bool) {
	if s == "" {
		return d.empty, d.empty != 0
	}
	_, id := d.slot(s)
	return id, id != 0
}

// Intern is s's value id, s added as a value when it is not one.
func (d *Table) Intern(s string) uint32 {
	if s == "" {
		if d.empty == 0 {
			d.offs = append(d.offs, uint32(len(d.data)))
			d.empty = uint32(d.Len() - 1)
		}
		return d.empty
	}
	i, id := d.slot(s)
	if id != 0 {
		return id
	}
	d.data = append(d.data, s...)
	d.offs = append(d.offs, uint32(len(d.data)))
	id = uint32(d.Len() - 1)
	d.slots[i] = id
	if 2*d.Len() > len(d.slots) {
		d.grow()
	}
	return id
}

func (d *Table) grow() { d.rehash(2 * len(d.slots)) }

// rehash makes the hash again with n slots, a power of two.
func (d *Table) rehash(n int) {
	d.slots = make([]uint32, n)
	mask := uint64(len(d.slots) - 1)
	for id := 1; id < d.Len(); id++ {
		s := d.Val(uint32(id))
		if s == "" {
			continue
		}
		i := d.hash(s) & mask
		for d.slots[i] != 0 {
			i = (i + 1) & mask
		}
		d.slots[i] = uint32(id)
	}
}

// Write saves the table as three sections: the bytes, the offsets and the
// id of "". The hash is left out (Read makes it again: at a million values
// it would take 8 MB of the file). The bytes of the values used does
// not mark are written as zeros (the offsets, and so every other value, stay
// as they are), so a saved table keeps nothing of a value no live row names;
// nil used writes every value.
func (d *Table) Write(w *sections.Writer, used []bool) {
	if used == nil {
		sections.Put(w, d.data)
	} else {
		w.Write(int64(len(d.data)), 1, func(f *os.File, at int64) (uint32, error) {
			crc := uint32(0)
			buf := make([]byte, 0, 1<<20)
			flush := func() error {
				crc = crc32.Update(crc, fileio.Castagnoli, buf)
				_, err := f.WriteAt(buf, at)
				at += int64(len(buf))
				buf = buf[:0]
				return err
			}
			for id := 1; id < d.Len(); id++ {
				v := d.data[d.offs[id]:d.offs[id+1]]
				for len(v) > 0 {
					k := min(len(v), cap(buf)-len(buf))
					if used[id] {
						buf = append(buf, v[:k]...)
					} else {
						buf = append(buf, make([]byte, k)...)
					}
					v = v[k:]
					if len(buf) == cap(buf) {
						if err := flush(); err != nil {
							return 0, err
						}
					}
				}
			}
			return crc, flush()
		})
	}
	sections.Put(w, d.offs)
	sections.Put(w, []uint32{d.empty})
}

// Hash makes the hash of a table Read gave back, if no lookup has yet. It
// is safe beside lookups (and Interns, under their caller's lock), so a
// caller can make it in the background.
func (d *Table) Hash() {
	d.hashed.Do(func() {
		if d.slots != nil {
			return // a new table's, made as it grew
		}
		// As Intern keeps it: a power of two, at least half empty, so a
		// probe always ends. Values the file holds as zeros (no live row
		// named them when it was written) are hashed as zeros: a lookup of
		// those bytes may find one, and its id is then as good as a new one.
		n := 8
		for 2*d.Len() > n {
			n *= 2
		}
		d.rehash(n)
	})
}

// Read reads back a table Write saved, its arrays in place in the mapping;
// its hash is made on first use (Hash). What does not fit (offsets outside the bytes or going
// backwards, the id of "" out of range) fails r; the bytes' checksums are
// r.Verify's.
func Read(r *sections.Reader) *Table {
	d := New()
	d.data = sections.Next[byte](r)
	d.offs = sections.Next[uint32](r)
	d.empty = sections.One[uint32](r)
	if r.Err() != nil {
		return d
	}
	if len(d.offs) < 2 || d.offs[0] != 0 || uint64(d.offs[len(d.offs)-1]) != uint64(len(d.data)) {
		r.Fail(errors.New("a dictionary's offsets do not fit its bytes"))
		return d
	}
	for i := 1; i < len(d.offs); i++ {
		if d.offs[i] < d.offs[i-1] {
			r.Fail(errors.New("a dictionary's offsets go backwards"))
			return d
		}
	}
	if int(d.empty) >= d.Len() {
		r.Fail(errors.New("a dictionary's empty value is out of range"))
		return d
	}
	d.slots, d.read = nil, d.data
	return d
}

// ReadBytes are the values' bytes as Read found them in the file's mapping
// (nil for a new table): never written, here or by a later Intern, so their
// pages may be given back and read again from the file.
func (d *Table) ReadBytes() []byte { return d.read }
