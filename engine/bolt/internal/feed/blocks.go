package feed

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	bbolt "go.etcd.io/bbolt"
)

// The feed's entries are kept in blocks: a bbolt key and value hold a run
// of entries of consecutive seqs, keyed by the first. bbolt spends 16 bytes
// of element header and 8 of key on each value, as much as most of a
// 32-byte compact entry; a block pays them once for about forty entries.
// At 1M changes the bucket took 58.2 MB with an entry a key, 35.9 MB in
// blocks of whole entries, and 25.6 MB with their shared prefixes left out
// (23 bytes an entry).
//
// A block is prefixBlockMark, then each entry as the length of the prefix
// it shares with the entry before it (uvarint; 0 for the first), the
// length of the rest (uvarint) and the rest's bytes. An entry starts with
// its op, its status and its time (big-endian ms), so the entries of one
// write share their first 11 bytes and keep only their id and namespace.
// A block of blockMark (schema 12) holds each entry whole, as its length
// and its bytes; a value that starts with neither mark is one entry, as
// schema 11 and earlier wrote them: an entry starts with its op's code,
// and no op has a mark's. A writer appends to the last block while it is
// of prefixBlockMark, holds entries up to the head and stays within
// blockBytes, so four blocks fill a 4 KB page; otherwise it starts a new
// one.
const (
	blockMark       = 0xFE
	prefixBlockMark = 0xFD
	blockBytes      = 990
)

var errBadBlock = errors.New("the block's entries run past its end")

// blockEntries walks the entries of a block of either mark, v[0] being
// the mark: fn gets each entry's whole bytes (valid until fn returns; a
// block of prefixBlockMark makes them in a buffer it reuses) and the
// offset of the entry's encoding in v, until fn answers false.
func blockEntries(v []byte, fn func(i int, e []byte, at int) bool) error {
	prefixed := v[0] == prefixBlockMark
	var whole []byte
	for off, i := 1, 0; off < len(v); i++ {
		at := off
		shared := uint64(0)
		if prefixed {
			n, w := binary.Uvarint(v[off:])
			if w <= 0 || n > uint64(len(whole)) || (i == 0 && n != 0) {
				return errBadBlock
			}
			shared, off = n, off+w
		}
		n, w := binary.Uvarint(v[off:])
		if w <= 0 || n > uint64(len(v)-off-w) {
			return errBadBlock
		}
		rest := v[off+w : off+w+int(n)]
		off += w + int(n)
		e := rest
		if prefixed {
			whole = append(whole[:shared], rest...)
			e = whole
		}
		if !fn(i, e, at) {
			return nil
		}
	}
	return nil
}

// isBlock tells whether a value is a block (of either mark) rather than one
// entry.
func isBlock(v []byte) bool {
	return len(v) > 0 && (v[0] == blockMark || v[0] == prefixBlockMark)
}

// eachEntry calls fn with each entry of the bucket element k, v and its
// seq, until fn answers false. It answers an error when a block is cut. An
// entry's bytes are valid until fn returns.
func eachEntry(k, v []byte, fn func(seq uint64, e []byte) bool) error {
	seq := u64(k)
	if !isBlock(v) {
		fn(seq, v)
		return nil
	}
	return blockEntries(v, func(i int, e []byte, _ int) bool { return fn(seq+uint64(i), e) })
}

// prunablePrefix answers the seq of the last entry of the element k, v
// that prunable lets go, every one before it let go too (0: none), and,
// when some entries after it stay, a block of those (nil when none stay),
// its first entry written whole.
func prunablePrefix(k, v []byte, prunable func(seq uint64, e []byte) bool) (upto uint64, rest []byte, err error) {
	if !isBlock(v) {
		if prunable(u64(k), v) {
			return u64(k), nil, nil
		}
		return 0, nil, nil
	}
	var keep []byte // the first entry kept, whole
	at := len(v)    // where its encoding starts
	err = blockEntries(v, func(i int, e []byte, off int) bool {
		if seq := u64(k) + uint64(i); prunable(seq, e) {
			upto = seq
			return true
		}
		keep, at = bytes.Clone(e), off
		return false
	})
	if err != nil {
		return 0, nil, err
	}
	if upto == 0 || keep == nil {
		return upto, nil, nil
	}
	if v[0] == blockMark {
		return upto, append([]byte{blockMark}, v[at:]...), nil
	}
	// The kept entry's own encoding shares a prefix with the entry pruned
	// before it: write it whole, then the others as they are.
	_, w := binary.Uvarint(v[at:])
	n, w2 := binary.Uvarint(v[at+w:])
	out := append([]byte{prefixBlockMark, 0}, binary.AppendUvarint(nil, uint64(len(keep)))...)
	out = append(out, keep...)
	return upto, append(out, v[at+w+w2+int(n):]...), nil
}

// scanFrom calls fn with every entry after seq since, in order, until fn
// answers false or the feed ends. A block that is cut ends the scan at
// the entry before the cut, with an error naming the block.
func scanFrom(cur *bbolt.Cursor, since uint64, fn func(seq uint64, e []byte) bool) error {
	// since+1 may be inside the block before the first key after it.
	k, v := cur.Seek(key(since + 1))
	switch {
	case k == nil:
		k, v = cur.Last()
	case u64(k) > since+1:
		if pk, pv := cur.Prev(); pk != nil {
			k, v = pk, pv
		} else {
			k, v = cur.Seek(key(since + 1))
		}
	}
	for ; k != nil; k, v = cur.Next() {
		more := true
		if err := eachEntry(k, v, func(seq uint64, e []byte) bool {
			if seq <= since {
				return true
			}
			more = fn(seq, e)
			return more
		}); err != nil {
			return fmt.Errorf("the block of changes at seq %d: %w", u64(k), err)
		}
		if !more {
			return nil
		}
	}
	return nil
}

// tail is the block a transaction appends to.
type tail struct {
	key   []byte // nil: no block open
	block []byte
	last  []byte // the block's last entry, whole
}

// openTail takes the feed's last block for appending when it is a block of
// shared prefixes that ends at head and has room; otherwise the first
// entry added starts a new block.
func openTail(cur *bbolt.Cursor, head uint64) tail {
	k, v := cur.Last()
	if k == nil || len(v) == 0 || v[0] != prefixBlockMark || len(v) >= blockBytes {
		return tail{}
	}
	var last []byte
	n := 0
	if err := blockEntries(v, func(_ int, e []byte, _ int) bool { last = append(last[:0], e...); n++; return true }); err != nil || u64(k)+uint64(n)-1 != head {
		return tail{}
	}
	return tail{key: append([]byte(nil), k...), block: append(make([]byte, 0, blockBytes+64), v...), last: last}
}

// add appends the entry e of seq, putting the open block and starting a
// new one when e would take it past blockBytes.
func (t *tail) add(b *bbolt.Bucket, seq uint64, e []byte) error {
	if t.key != nil && len(t.block)+2*binary.MaxVarintLen16+len(e) > blockBytes {
		if err := t.flush(b); err != nil {
			return err
		}
	}
	if t.key == nil {
		t.key = key(seq)
		t.block = append(make([]byte, 0, blockBytes+64), prefixBlockMark)
		t.last = t.last[:0]
	}
	shared := 0
	for shared < len(e) && shared < len(t.last) && e[shared] == t.last[shared] {
		shared++
	}
	t.block = binary.AppendUvarint(t.block, uint64(shared))
	t.block = binary.AppendUvarint(t.block, uint64(len(e)-shared))
	t.block = append(t.block, e[shared:]...)
	t.last = append(t.last[:0], e...)
	return nil
}

// flush puts the open block, if any.
func (t *tail) flush(b *bbolt.Bucket) error {
	if t.key == nil {
		return nil
	}
	err := b.Put(t.key, t.block)
	t.key, t.block = nil, nil
	return err
}
