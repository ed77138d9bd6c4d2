package bolt

import (
	"math/rand/v2"
	"unsafe"
)

// strtab interns strings without a pointer per value: the bytes of every
// value in one slice, their offsets in another, and an open-addressed hash
// of value ids. A million values cost their bytes and about 12 more each,
// and the collector scans none of it (a map[string]uint32 and a []string of
// the same held about three times as much, all of it pointers to scan).
// Value 0 is "" and means "no value"; a field set to "" gets an id of its
// own, as it would in a map.
type strtab struct {
	data  []byte
	offs  []uint32 // value i is data[offs[i]:offs[i+1]]
	slots []uint32 // 0 empty, else a value id
	// key keys the hash (FNV-1a from a random basis): the slots are saved
	// with the table (tablefile.go) and stay valid in the next process, and
	// values a user chose still cannot be made to collide on purpose.
	key uint64
	// empty is the id of "" held as a value (a field set to ""), 0 until one is.
	empty uint32
}

func newStrtab() *strtab {
	return &strtab{offs: []uint32{0, 0}, slots: make([]uint32, 8), key: rand.Uint64()}
}

func (d *strtab) hash(s string) uint64 {
	h := d.key ^ 14695981039346656037
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h ^ h>>29
}

// len is the number of value ids, "" included.
func (d *strtab) len() int { return len(d.offs) - 1 }

// val is value id's string. It shares the table's bytes, which are never
// written again once appended, so it stays valid after the table grows.
func (d *strtab) val(id uint32) string {
	a, b := d.offs[id], d.offs[id+1]
	if a == b {
		return ""
	}
	return unsafe.String(&d.data[a], int(b-a))
}

func (d *strtab) slot(s string) (int, uint32) {
	mask := uint64(len(d.slots) - 1)
	i := d.hash(s) & mask
	for {
		id := d.slots[i]
		if id == 0 || d.val(id) == s {
			return int(i), id
		}
		i = (i + 1) & mask
	}
}

func (d *strtab) lookup(s string) (uint32, bool) {
	if s == "" {
		return d.empty, d.empty != 0
	}
	_, id := d.slot(s)
	return id, id != 0
}

func (d *strtab) intern(s string) uint32 {
	if s == "" {
		if d.empty == 0 {
			d.offs = append(d.offs, uint32(len(d.data)))
			d.empty = uint32(d.len() - 1)
		}
		return d.empty
	}
	i, id := d.slot(s)
	if id != 0 {
		return id
	}
	d.data = append(d.data, s...)
	d.offs = append(d.offs, uint32(len(d.data)))
	id = uint32(d.len() - 1)
	d.slots[i] = id
	if 2*d.len() > len(d.slots) {
		d.grow()
	}
	return id
}

func (d *strtab) grow() {
	d.slots = make([]uint32, 2*len(d.slots))
	mask := uint64(len(d.slots) - 1)
	for id := 1; id < d.len(); id++ {
		s := d.val(uint32(id))
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
