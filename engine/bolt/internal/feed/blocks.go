package feed

import (
	"encoding/binary"
	"errors"
	"fmt"

	bbolt "go.etcd.io/bbolt"
)

// The feed's entries are kept in blocks: a bbolt key and value hold a run
// of entries of consecutive seqs, keyed by the first. bbolt spends 16 bytes
// of element header and 8 of key on each value, as much as most of a
// 32-byte compact entry; a block pays them once for about thirty entries.
// At 1M changes the bucket took 58.2 MB with an entry a key.
//
// A block is blockMark, then each entry as its length (uvarint) and its
// bytes. A value that does not start with blockMark is one entry, as
// schema 11 and earlier wrote them: an entry starts with its op's code, and
// no op has blockMark's. A writer appends to the last block while it
// holds entries up to the head and stays within blockBytes, so four blocks
// fill a 4 KB page; otherwise it starts a new one.
const (
	blockMark  = 0xFE
	blockBytes = 990
)

var errBadBlock = errors.New("the block's entries run past its end")

// eachEntry calls fn with each entry of the bucket element k, v and its
// seq, until fn answers false. It answers an error when a block is cut.
func eachEntry(k, v []byte, fn func(seq uint64, e []byte) bool) error {
	seq := u64(k)
	if len(v) == 0 || v[0] != blockMark {
		fn(seq, v)
		return nil
	}
	for rest := v[1:]; len(rest) > 0; seq++ {
		n, w := binary.Uvarint(rest)
		if w <= 0 || n > uint64(len(rest)-w) {
			return errBadBlock
		}
		if !fn(seq, rest[w:w+int(n)]) {
			return nil
		}
		rest = rest[w+int(n):]
	}
	return nil
}

// prunablePrefix answers the seq of the last entry of the element k, v
// that prunable lets go, every one before it let go too (0: none), and,
// when some entries after it stay, a block of those (nil when none stay).
func prunablePrefix(k, v []byte, prunable func(seq uint64, e []byte) bool) (upto uint64, rest []byte, err error) {
	if len(v) == 0 || v[0] != blockMark {
		if prunable(u64(k), v) {
			return u64(k), nil, nil
		}
		return 0, nil, nil
	}
	seq, off := u64(k), 1 // off: where the first entry not let go starts
	for off < len(v) {
		n, w := binary.Uvarint(v[off:])
		if w <= 0 || n > uint64(len(v)-off-w) {
			return 0, nil, errBadBlock
		}
		if !prunable(seq, v[off+w:off+w+int(n)]) {
			break
		}
		upto, off, seq = seq, off+w+int(n), seq+1
	}
	if upto == 0 || off >= len(v) {
		return upto, nil, nil
	}
	return upto, append([]byte{blockMark}, v[off:]...), nil
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
}

// openTail takes the feed's last block for appending when it ends at head
// and has room; otherwise the first entry added starts a new block.
func openTail(cur *bbolt.Cursor, head uint64) tail {
	k, v := cur.Last()
	if k == nil || len(v) == 0 || v[0] != blockMark || len(v) >= blockBytes {
		return tail{}
	}
	last := uint64(0)
	if err := eachEntry(k, v, func(seq uint64, _ []byte) bool { last = seq; return true }); err != nil || last != head {
		return tail{}
	}
	return tail{key: append([]byte(nil), k...), block: append(make([]byte, 0, blockBytes+64), v...)}
}

// add appends the entry e of seq, putting the open block and starting a
// new one when e would take it past blockBytes.
func (t *tail) add(b *bbolt.Bucket, seq uint64, e []byte) error {
	if t.key != nil && len(t.block)+binary.MaxVarintLen16+len(e) > blockBytes {
		if err := t.flush(b); err != nil {
			return err
		}
	}
	if t.key == nil {
		t.key = key(seq)
		t.block = append(make([]byte, 0, blockBytes+64), blockMark)
	}
	t.block = binary.AppendUvarint(t.block, uint64(len(e)))
	t.block = append(t.block, e...)
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
