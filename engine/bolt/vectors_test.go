package bolt_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"mnemo/bench/corpus"
	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/retrieval"
)

// vectorQueries are a few texts to rank by: words of the bench corpus.
var vectorQueries = []string{"rollback the release", "customer invoice cache", "nginx config on the desktop",
	"oncall incident summary", "golang worker merge"}

// TestVectorSearchIsExactOverBlocks: vector fetch over the stored blocks
// ranks exactly as a brute-force int8 scan of the same vectors (the
// in-memory index the engine used before), while the vectors are partly
// written and partly pending, after a reopen (all read from the blocks),
// and after forgets (the forgotten ones gone, nothing else moved).
func TestVectorSearchIsExactOverBlocks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	emb := retrieval.NewHashEmbedder()
	e := openStore(t, dir, bolt.Options{Embedder: emb})
	entries := corpus.Generate(5000, 11)
	ref := retrieval.NewVectorIndex(emb.Dim(), retrieval.WithInt8())
	// The corpus's texts in the default namespace (some of its records are
	// in service sandboxes, which reads leave out).
	var items []contract.StoreItem
	for _, en := range entries {
		items = append(items, contract.Document(en.Item.RenderText(), contract.MemoryMeta{}))
	}
	seen := map[string]bool{}
	for start := 0; start < len(items); start += contract.MaxStoreMany {
		batch := items[start:min(start+contract.MaxStoreMany, len(items))]
		if _, err := contract.StoreMany(ctx, e, batch); err != nil {
			t.Fatal(err)
		}
	}
	for _, it := range items {
		if id := it.Fingerprint(); !seen[id] {
			seen[id] = true
			v, err := emb.Embed(ctx, []string{it.RenderText()})
			if err != nil {
				t.Fatal(err)
			}
			ref.Upsert(id, v[0])
		}
	}
	if err := e.WaitEmbedder(ctx); err != nil {
		t.Fatal(err)
	}
	agree := func(stage string) {
		t.Helper()
		for _, q := range vectorQueries {
			got, err := e.Fetch(ctx, contract.FetchRequest{Query: q, Mode: contract.ModeVector, Limit: 10})
			if err != nil {
				t.Fatalf("%s: %v", stage, err)
			}
			qv, _ := emb.Embed(ctx, []string{q})
			want := ref.Search(ctx, qv[0], 10, nil)
			var g, w []string
			for _, h := range got.Hits {
				g = append(g, h.ID)
			}
			for _, s := range want {
				w = append(w, s.ID)
			}
			if !slices.Equal(g, w) {
				t.Fatalf("%s: %q ranks\n%v\nwhere a scan of every vector ranks\n%v", stage, q, g, w)
			}
		}
	}
	agree("written and pending")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openStore(t, dir, bolt.Options{Embedder: emb})
	agree("reopened")
	// Forget the best hit of each query, and a run of records beside it.
	var gone []string
	for _, q := range vectorQueries {
		qv, _ := emb.Embed(ctx, []string{q})
		gone = append(gone, ref.Search(ctx, qv[0], 1, nil)[0].ID)
	}
	for id := range seen {
		if len(gone) < 200 && !slices.Contains(gone, id) {
			gone = append(gone, id)
		}
	}
	slices.Sort(gone)
	gone = slices.Compact(gone)
	if _, err := e.Forget(ctx, contract.ForgetTarget{IDs: gone}); err != nil {
		t.Fatal(err)
	}
	for _, id := range gone {
		ref.Remove(id)
	}
	agree("after forgets")
	rep, err := e.Check(ctx, false, nil)
	if err != nil || !rep.Consistent {
		t.Fatalf("check: %v %+v", err, rep.Checks)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// On disk: a vector for every record left, none for the forgotten.
	rows := storedVectorRows(t, dir)
	if len(rows) != len(seen)-len(gone) {
		t.Fatalf("%d vector rows stored for %d records", len(rows), len(seen)-len(gone))
	}
}

// storedVectorRows counts the stored vector rows of a closed store.
func storedVectorRows(t *testing.T, dir string) []uint32 {
	t.Helper()
	db, err := bbolt.Open(filepath.Join(dir, bolt.DBFile), 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rows []uint32
	_ = db.View(func(tx *bbolt.Tx) error {
		rows = bolt.StoredVectorRows(tx)
		return nil
	})
	return rows
}

// TestForgetClearsTheStoredVector: a forgotten record's vector row is
// cleared on disk by the forget itself, with no close or batch between.
func TestForgetClearsTheStoredVector(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	e := openStore(t, dir, bolt.Options{Embedder: retrieval.NewHashEmbedder()})
	items := markerItems(40, "forgotten-vector")
	if _, err := contract.StoreMany(ctx, e, items); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitEmbedder(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(storedVectorRows(t, dir)); n != 40 {
		t.Fatalf("%d vector rows stored, want 40", n)
	}
	e = openStore(t, dir, bolt.Options{Embedder: retrieval.NewHashEmbedder()})
	defer e.Close()
	if _, err := e.Forget(ctx, contract.ForgetTarget{IDs: idsOfItems(items[:3])}); err != nil {
		t.Fatal(err)
	}
	// Read beside the open engine (bbolt allows readers of an open file
	// only within the process, so through the engine's own database).
	if n := len(bolt.StoredVectorRowsOf(e)); n != 37 {
		t.Fatalf("%d vector rows stored after forgetting 3 of 40, want 37", n)
	}
	got, err := e.Fetch(ctx, contract.FetchRequest{Query: items[0].RenderText(), Mode: contract.ModeVector, Limit: 40})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range got.Hits {
		if slices.Contains(idsOfItems(items[:3]), h.ID) {
			t.Fatalf("vector fetch returned the forgotten %s", h.ID)
		}
	}
}

// TestVectorsMigrateFromPerRecordLayout: a store whose vectors are in the
// layout before blocks (one per record, keyed by id; schema 4) has them
// moved into blocks when they first load, without embedding any record
// again, ranks as before, and drops the old bucket.
func TestVectorsMigrateFromPerRecordLayout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	e := openStore(t, dir, bolt.Options{Embedder: retrieval.NewHashEmbedder()})
	items := markerItems(1500, "migrated")
	for start := 0; start < len(items); start += contract.MaxStoreMany {
		if _, err := contract.StoreMany(ctx, e, items[start:min(start+contract.MaxStoreMany, len(items))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.WaitEmbedder(ctx); err != nil {
		t.Fatal(err)
	}
	queries := []string{marker + " note 7", marker + " note 1234 about migrated", "note 99"}
	var before [][]contract.Hit
	for _, q := range queries {
		h, err := e.Fetch(ctx, contract.FetchRequest{Query: q, Mode: contract.ModeVector, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		before = append(before, h.Hits)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	damage(t, dir, bolt.DowngradeVectorsToSchema4(retrieval.NewHashEmbedder().Model()))
	emb := &countingEmbedder{Embedder: retrieval.NewHashEmbedder()}
	e = openStore(t, dir, bolt.Options{Embedder: emb})
	defer e.Close()
	for i, q := range queries {
		h, err := e.Fetch(ctx, contract.FetchRequest{Query: q, Mode: contract.ModeVector, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		// The old layout's vectors are read back as the engine before
		// blocks read them (dequantised, then quantised as unit vectors), so
		// each row's scale moves by its quantisation error: near ties may
		// swap, the best match may not, scores move by that error only.
		b := before[i]
		if len(h.Hits) != len(b) || h.Hits[0].ID != b[0].ID {
			t.Fatalf("%q ranks %v after the migration, %v before", q, hitIDs(h.Hits), hitIDs(b))
		}
		for r := range b {
			if d := float64(h.Hits[r].Score - b[r].Score); d > 0.02 || d < -0.02 {
				t.Fatalf("%q: score %d moved from %v to %v", q, r, b[r].Score, h.Hits[r].Score)
			}
		}
	}
	if got := emb.texts.Load(); got != int64(len(queries)) {
		t.Fatalf("the migration embedded %d texts, want only the %d queries", got, len(queries))
	}
	if n := len(bolt.StoredVectorRowsOf(e)); n != len(items) {
		t.Fatalf("%d vector rows in blocks after the migration, want %d", n, len(items))
	}
	if bolt.HasPerRecordVectors(e) {
		t.Fatal("the old vectors bucket is still there")
	}
	if rep, err := e.Check(ctx, false, nil); err != nil || !rep.Consistent {
		t.Fatalf("check after the migration: %v %+v", err, rep.Checks)
	}
}

func hitIDs(hits []contract.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

// TestStoreFromVersion4MovesItsVectors opens a store written by the release
// before vector blocks (schema 4: 80 bench records, each with its vector of
// the built-in embedder, one value per record keyed by id). When vectors
// first load, every one is moved into a block as that release would have
// read it back (decoded, then quantised as a unit vector) rather than
// embedded again; the old bucket is dropped, each record is its own text's
// best vector hit, and check passes.
func TestStoreFromVersion4MovesItsVectors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	untar(t, filepath.Join("testdata", "store-v4.tar.gz"), dir)
	old := map[string][]byte{}
	db, err := bbolt.Open(filepath.Join(dir, bolt.DBFile), 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	_ = db.View(func(tx *bbolt.Tx) error {
		if v := string(tx.Bucket([]byte("meta")).Get([]byte("schema"))); v != "4" {
			t.Fatalf("the fixture is of schema %q, want 4", v)
		}
		return tx.Bucket([]byte("vectors")).ForEach(func(k, v []byte) error {
			old[string(k)] = append([]byte(nil), v...)
			return nil
		})
	})
	_ = db.Close()
	if len(old) != 80 {
		t.Fatalf("the fixture holds %d vectors, want 80", len(old))
	}
	e := openStore(t, dir, bolt.Options{})
	defer e.Close()
	if err := e.WaitEmbedder(ctx); err != nil {
		t.Fatal(err)
	}
	if bolt.HasPerRecordVectors(e) {
		t.Fatal("the old vectors bucket is still there")
	}
	model := e.EmbedderModel()
	for id, raw := range old {
		vec, ok := bolt.DecodeVectorV4(raw, model, 0)
		if !ok {
			t.Fatalf("the fixture's vector of %s is not of the model in use, %s", id, model)
		}
		want := make([]int8, len(vec))
		wantScale := retrieval.QuantizeUnit(vec, want)
		q, scale, ok := bolt.VectorRowOf(e, id)
		if !ok || scale != wantScale || !slices.Equal(q, want) {
			t.Fatalf("record %s: its block row is not the moved vector (found %v, scale %v against %v)", id, ok, scale, wantScale)
		}
	}
	var items []contract.Exported
	if err := json.Unmarshal([]byte(exportAll(t, e)), &items); err != nil {
		t.Fatal(err)
	}
	// Each record fetch finds (active, outside sandboxes: keyword ranks it
	// first for its own text) is vector's best hit for its text too.
	checked := 0
	for _, it := range items {
		q := it.Item.RenderText()
		kw, err := e.Fetch(ctx, contract.FetchRequest{Query: q, Mode: contract.ModeKeyword, Limit: 1})
		if err != nil || len(kw.Hits) == 0 || kw.Hits[0].ID != it.ID {
			continue
		}
		got, err := e.Fetch(ctx, contract.FetchRequest{Query: q, Mode: contract.ModeVector, Limit: 3})
		if err != nil || len(got.Hits) == 0 || got.Hits[0].ID != it.ID {
			t.Fatalf("vector fetch of %s's own text: %v %v", it.ID, hitIDs(got.Hits), err)
		}
		checked++
	}
	if checked < 20 {
		t.Fatalf("only %d records were checked by their own text", checked)
	}
	if rep, err := e.Check(ctx, false, nil); err != nil || !rep.Consistent {
		t.Fatalf("check after the move: %v %+v", err, rep.Checks)
	}
}
