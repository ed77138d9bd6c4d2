// Package strtab interns strings for engine/bolt's table (ids, namespaces,
// facet values, tags) in flat arrays that its snapshot file (package
// sections) saves and maps back in place.
package strtab

import (
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"unsafe"

	"mnemo/engine/bolt/internal/fileio"
	"mnemo/engine/bolt/internal/sections"
)

// Table interns strings without a pointer per value: the bytes of every
// value in one slice, their offsets in another, and an open-addressed hash
// of value ids. A million values cost their bytes and about 12 more each,
// and the collector scans none of it (a map[string]uint32 and a []string of
// the same held about three times as much, all of it pointers to scan).
// Value 0 is "" and means "no value"; a field set to "" gets an id of its
// own, as it would in a map.
type Table struct {
	data  []byte
	offs  []uint32 // value i is data[offs[i]:offs[i+1]]
	slots []uint32 // 0 empty, else a value id
	// key keys the hash (FNV-1a from a random basis): the slots are saved
	// with engine/bolt's table (Write) and stay valid in the next process, and
	// values a user chose still cannot be made to collide on purpose.
	key uint64
	// empty is the id of "" held as a value (a field set to ""), 0 until one is.
	empty uint32
}

// New is an empty table.
func New() *Table {
	return &Table{offs: []uint32{0, 0}, slots: make([]uint32, 8), key: rand.Uint64()}
}

func (d *Table) hash(s string) uint64 {
	h := d.key ^ 14695981039346656037
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h ^ h>>29
}

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

func (d *Table) grow() {
	d.slots = make([]uint32, 2*len(d.slots))
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

// Write saves the table as five sections. The bytes of the values used does
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
	sections.Put(w, []uint64{d.key})
	sections.Put(w, d.slots)
}

// Read reads back a table Write saved, its arrays in place in the mapping.
// What does not fit (offsets outside the bytes or going backwards, a hash
// too small for its values) fails r; the bytes' checksums are r.Verify's.
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
	d.key = sections.One[uint64](r)
	d.slots = sections.Next[uint32](r)
	if r.Err() != nil {
		return d
	}
	if int(d.empty) >= d.Len() {
		r.Fail(errors.New("a dictionary's empty value is out of range"))
		return d
	}
	// The slots must be a power of two with at least half of them empty (as
	// Intern keeps them), so a probe always ends. The section's checksum
	// says they are the ones written; walking four million of them to
	// recount took a fifth of the load.
	if n := len(d.slots); n == 0 || n&(n-1) != 0 || 2*d.Len() > n {
		r.Fail(errors.New("a dictionary's hash does not fit its values"))
		return d
	}
	d.slots = d.slots[:len(d.slots):len(d.slots)]
	return d
}
