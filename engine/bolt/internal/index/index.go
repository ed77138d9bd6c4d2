package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	bolt "go.etcd.io/bbolt"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/idkey"
)

// Doc is what the index holds for one record. Confidence and the record
// times are carried for the engine's convenience but not indexed: no query of
// this package reads them (browse orders and filters them from bbolt), and
// Bleve's numeric fields cost 17 terms each, which measured as ~40% of the
// indexing CPU.
type Doc struct {
	ID         string
	Kind       contract.ItemKind
	Text       string // contract render_text
	Meta       contract.MemoryMeta
	Status     contract.Status // empty reads as active
	Confidence *float32
	CreatedAt  time.Time
	UpdatedAt  time.Time
	ExpiresAt  *time.Time
}

// Scored is one keyword hit.
type Scored struct {
	ID    string
	Score float64
}

// Index is a Bleve scorch index of the store's records. It is safe for
// concurrent use; Apply calls are expected from one writer at a time (the
// engine's write lock), reads may run alongside.
type Index struct {
	dir          string
	idx          bleve.Index
	build        *builder
	needsRebuild bool

	// stats are the BM25 statistics of the text field, a running sum kept
	// beside the documents (keyBM25Stats) and updated by every Apply.
	statsMu sync.RWMutex
	stats   bm25Stats

	closeOnce sync.Once
	closeErr  error
}

// lockTimeout bounds the wait for scorch's own root file lock, so a second
// process fails instead of hanging (the bbolt record is locked first anyway).
const lockTimeout = "1s"

// runtimeConfig keeps scorch's safe batches: Batch returns only once the
// segment and applied_seq are persisted, so AppliedSeq never runs ahead of
// what survives a crash. ("unsafe_batch" measured no faster here: the
// persister and merger, not the wait, dominate.)
func runtimeConfig() map[string]interface{} {
	return map[string]interface{}{"bolt_timeout": lockTimeout}
}

// withScorch is runtimeConfig with more of scorch's settings (tests: an
// index whose merger never merges, so its segments stay as written).
func withScorch(extra map[string]interface{}) map[string]interface{} {
	cfg := runtimeConfig()
	for k, v := range extra {
		cfg[k] = v
	}
	return cfg
}

// Open opens or creates the scorch index at dir. An index that is missing,
// unreadable or built with another mapping version is replaced by a fresh
// empty one, and NeedsRebuild reports true so the engine refills it from the
// record.
func Open(dir string) (*Index, error) { return openWith(dir, nil) }

// openWith is Open with more of scorch's settings.
func openWith(dir string, scorchConfig map[string]interface{}) (*Index, error) {
	im, err := newMapping()
	if err != nil {
		return nil, fmt.Errorf("index mapping: %w", err)
	}
	b, err := newBuilder()
	if err != nil {
		return nil, err
	}
	idx, err := bleve.OpenUsing(dir, withScorch(scorchConfig))
	if err == nil {
		version, verr := idx.GetInternal([]byte(keyMappingVersion))
		if verr == nil && string(version) == MappingVersion {
			if stats, ok := loadStats(idx); ok {
				return &Index{dir: dir, idx: idx, build: b, stats: stats}, nil
			}
		}
		if cerr := idx.Close(); cerr != nil {
			return nil, fmt.Errorf("close outdated index %s: %w", dir, cerr)
		}
	} else if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("index %s is in use by another process: %w", dir, err)
	}
	// Missing, corrupt or outdated: the record can rebuild it, so start over.
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("remove unusable index %s: %w", dir, err)
	}
	idx, err = bleve.NewUsing(dir, im, scorch.Name, scorch.Name, withScorch(scorchConfig))
	if err != nil {
		return nil, fmt.Errorf("create index %s: %w", dir, err)
	}
	if err := idx.SetInternal([]byte(keyMappingVersion), []byte(MappingVersion)); err != nil {
		_ = idx.Close()
		return nil, fmt.Errorf("mark index %s: %w", dir, err)
	}
	return &Index{dir: dir, idx: idx, build: b, needsRebuild: true}, nil
}

// NeedsRebuild tells whether Open started a fresh index that the engine must
// refill from the record.
func (ix *Index) NeedsRebuild() bool { return ix.needsRebuild }

// AppliedSeq is the store sequence number of the last batch applied, 0 when none.
func (ix *Index) AppliedSeq() (uint64, error) {
	v, err := ix.idx.GetInternal([]byte(keyAppliedSeq))
	if err != nil {
		return 0, fmt.Errorf("read applied_seq: %w", err)
	}
	if len(v) == 0 {
		return 0, nil
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("applied_seq holds %d bytes, want 8", len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// Apply writes one Bleve batch: the deletes, then the upserts (so an id in
// both lists ends up indexed), and applied_seq = appliedSeq, all or nothing.
// It returns once the batch is persisted.
// The BM25 statistics move with the batch: a delete or a replacement takes
// out the length the index holds for that id, an upsert adds its own.
func (ix *Index) Apply(docs []Doc, deletes []string, appliedSeq uint64) error {
	batch := ix.idx.NewBatch()
	// final is every touched id's text length after the batch, -1 = gone.
	// final is keyed by the documents' names.
	final := make(map[string]int, len(docs)+len(deletes))
	for _, id := range deletes {
		name := idkey.Name(id)
		batch.Delete(name)
		final[name] = -1
	}
	built, err := ix.build.documents(docs)
	if err != nil {
		return err
	}
	for i, b := range built {
		if err := batch.IndexAdvanced(b.doc); err != nil {
			return fmt.Errorf("index record %s: %w", docs[i].ID, err)
		}
		final[idkey.Name(docs[i].ID)] = b.length
	}
	ix.statsMu.Lock()
	defer ix.statsMu.Unlock()
	stats, err := ix.statsAfter(final)
	if err != nil {
		return err
	}
	var seq [8]byte
	binary.BigEndian.PutUint64(seq[:], appliedSeq)
	batch.SetInternal([]byte(keyAppliedSeq), seq[:])
	batch.SetInternal([]byte(keyBM25Stats), stats.encode())
	if err := ix.idx.Batch(batch); err != nil {
		return fmt.Errorf("apply index batch: %w", err)
	}
	ix.stats = stats
	return nil
}

// DocCount is the number of documents in the index.
func (ix *Index) DocCount() (uint64, error) {
	n, err := ix.idx.DocCount()
	if err != nil {
		return 0, fmt.Errorf("count index documents: %w", err)
	}
	return n, nil
}

// Close closes the index; later calls return the first result.
func (ix *Index) Close() error {
	ix.closeOnce.Do(func() { ix.closeErr = ix.idx.Close() })
	return ix.closeErr
}

// OpenReadOnly opens the index at dir for reading only (a store its user
// cannot write): it must exist and be of this mapping version, since it
// cannot be rebuilt.
func OpenReadOnly(dir string) (*Index, error) {
	b, err := newBuilder()
	if err != nil {
		return nil, err
	}
	cfg := runtimeConfig()
	cfg["read_only"] = true
	idx, err := bleve.OpenUsing(dir, cfg)
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", dir, err)
	}
	version, err := idx.GetInternal([]byte(keyMappingVersion))
	if err != nil || string(version) != MappingVersion {
		_ = idx.Close()
		return nil, fmt.Errorf("index %s was built by another version of mnemo", dir)
	}
	stats, ok := loadStats(idx)
	if !ok {
		_ = idx.Close()
		return nil, fmt.Errorf("index %s lacks its statistics", dir)
	}
	return &Index{dir: dir, idx: idx, build: b, stats: stats}, nil
}
