package bolt

import "mnemo/contract"

// WithLoadGate holds a large store's background table load until gate is
// closed, so tests can observe a store before its table has loaded.
func WithLoadGate(o Options, gate <-chan struct{}) Options {
	o.loadGate = gate
	return o
}

// ContentFileCandidates reads the content index file in dir alone (not the
// process's overlay) and returns how many ordinals it offers for a folded
// needle (folded here), and the change-feed position the file describes.
func ContentFileCandidates(dir, needle string) (n uint64, feedSeq uint64, err error) {
	f, err := openContentFile(contentPath(dir))
	if err != nil || f == nil {
		return 0, 0, err
	}
	defer f.close()
	var acc []uint32
	first := true
	for _, g := range trigramsOf(contract.FoldCase(needle)) {
		b, err := f.posting(g)
		if err != nil {
			return 0, 0, err
		}
		if b == nil {
			return 0, f.feedSeq, nil
		}
		if first {
			acc, first = b.ToArray(), false
			continue
		}
		keep := acc[:0]
		for _, o := range acc {
			if b.Contains(o) {
				keep = append(keep, o)
			}
		}
		acc = keep
	}
	return uint64(len(acc)), f.feedSeq, nil
}

// ContentFileName is the content index file's name in a store directory.
const ContentFileName = contentFileName

// RewriteContentFile writes the content index file now, as the background
// rewrite does when one is due.
func (e *Engine) RewriteContentFile() error { return e.rewriteContent() }

// TableFromFile tells whether the engine's table was read from its saved
// file (waiting for the table first).
func (e *Engine) TableFromFile() bool {
	<-e.tableReady
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.tableFromFile
}

// TableFileName is the saved table's name in a store directory.
const TableFileName = tableFileName

// SaveTable saves the table now, as a load from the records does.
func (e *Engine) SaveTable() error {
	<-e.tableReady
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.saveTable(e.feed.seq)
}
