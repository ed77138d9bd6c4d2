// Package eval measures retrieval quality and latency of any contract.Engine
// on a labelled corpus: 312 short real-world notes (programming, operations,
// cooking, travel, science, health, home, hobbies, work) and 91 queries,
// 42 quoting a note's own wording and 49 paraphrasing what a user would ask,
// each labelled with the notes that answer it, plus 24 held-out paraphrases
// written after the hashed embedder was tuned. It reports MRR@10 and
// recall@10 per fetch mode and query kind, fetch latency, and how often
// recall answers cite a relevant note.
//
// Run it against engine/memory and engine/bolt, with the embedder tuning
// table and the int8 agreement at 100k vectors:
//
//	go test ./engine/retrieval/eval -run TestEval -eval -v
package eval

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"mnemo/contract"
	"mnemo/engine/retrieval"
)

//go:embed testdata/corpus.jsonl testdata/queries.jsonl testdata/queries_holdout.jsonl testdata/manpages.jsonl.gz
var testdata embed.FS

// Namespace is where the corpus is stored; every query is confined to it, so
// the evaluation can run against a store holding other data.
const Namespace = "project:mnemo-eval"

// Query kinds.
const (
	KindExact      = "exact"
	KindParaphrase = "paraphrase"
	KindAll        = "all"
)

// Note is one corpus item with its label key.
type Note struct {
	Key  string             `json:"key"`
	Item contract.StoreItem `json:"item"`
}

// Query is one labelled query.
type Query struct {
	Text     string   `json:"query"`
	Kind     string   `json:"kind"`
	Relevant []string `json:"relevant"`
}

// Corpus returns the evaluation notes.
func Corpus() ([]Note, error) {
	var notes []Note
	err := readJSONL("testdata/corpus.jsonl", func(line []byte) error {
		var n Note
		if err := json.Unmarshal(line, &n); err != nil {
			return err
		}
		notes = append(notes, n)
		return nil
	})
	return notes, err
}

// Queries returns the labelled queries.
func Queries() ([]Query, error) { return readQueries("testdata/queries.jsonl") }

// HoldoutQueries returns 24 paraphrased queries written after the hashed
// embedder was tuned on Queries: they check that the tuning generalises.
func HoldoutQueries() ([]Query, error) { return readQueries("testdata/queries_holdout.jsonl") }

func readQueries(name string) ([]Query, error) {
	var qs []Query
	err := readJSONL(name, func(line []byte) error {
		var q Query
		if err := json.Unmarshal(line, &q); err != nil {
			return err
		}
		qs = append(qs, q)
		return nil
	})
	return qs, err
}

func readJSONL(name string, each func([]byte) error) error {
	raw, err := testdata.ReadFile(name)
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if err := each(line); err != nil {
			return fmt.Errorf("%s line %d: %w", name, n, err)
		}
	}
	return sc.Err()
}

// Metrics are ranking quality figures over a set of queries.
type Metrics struct {
	Queries int
	// MRR is the mean reciprocal rank of the first relevant hit in the top K
	// (0 when none is there).
	MRR float64
	// Recall is the mean share of a query's relevant notes found in the top K.
	Recall float64
}

// Latency summarises fetch call durations.
type Latency struct {
	P50, P95, Max time.Duration
}

// ModeResult is the outcome of one fetch mode.
type ModeResult struct {
	Mode contract.FetchMode
	// Served is false when the engine does not declare the mode.
	Served  bool
	ByKind  map[string]Metrics // KindExact, KindParaphrase, KindAll
	Latency Latency
}

// QueryResult is one query's rank of its first relevant note per mode (0 =
// not in the top K), for finding what a change helped or hurt.
type QueryResult struct {
	Query Query
	Rank  map[contract.FetchMode]int
}

// Report is the outcome of Run.
type Report struct {
	Engine  string
	Notes   int
	K       int
	Modes   []ModeResult
	Queries []QueryResult
	// LoadTime is how long storing the corpus took.
	LoadTime time.Duration
	// Recall measures the engine's recall answers on the same queries.
	Recall RecallResult
}

// RecallLimit is how many citations each evaluated recall asks for.
const RecallLimit = 5

// RecallResult measures recall answers: whether a relevant note is among the
// citations, and whether the answer's own [n] markers point at one.
type RecallResult struct {
	Model string
	// CitationsHit is the share of questions with a relevant note among the
	// citations.
	CitationsHit float64
	// AnswerCitesHit is the share of answers whose [n] markers include a
	// relevant note; FirstMarkerHit counts only the first marker.
	AnswerCitesHit, FirstMarkerHit float64
	Latency                        Latency
}

// K is the cut-off of every metric.
const K = 10

// Load stores the corpus in e (a replay when it is already there) and returns
// the id of every note key.
func Load(ctx context.Context, e contract.Engine, notes []Note) (map[string]string, error) {
	ids := make(map[string]string, len(notes))
	for lo := 0; lo < len(notes); lo += contract.MaxStoreMany {
		batch := notes[lo:min(lo+contract.MaxStoreMany, len(notes))]
		items := make([]contract.StoreItem, len(batch))
		for i, n := range batch {
			items[i] = n.Item
		}
		receipts, err := contract.StoreMany(ctx, e, items)
		if err != nil {
			return nil, fmt.Errorf("storing the corpus: %w", err)
		}
		if len(receipts) != len(batch) {
			return nil, fmt.Errorf("storing the corpus: %d receipts for %d items", len(receipts), len(batch))
		}
		for i, r := range receipts {
			ids[batch[i].Key] = r.ID
		}
	}
	// An engine that derives its vectors from the stored text (engine/bolt's
	// learned embedder) is measured once it has settled.
	if w, ok := e.(interface{ WaitEmbedder(context.Context) error }); ok {
		if err := w.WaitEmbedder(ctx); err != nil {
			return nil, fmt.Errorf("waiting for the embedder: %w", err)
		}
	}
	return ids, nil
}

// Run stores the corpus in e, asks every query in every fetch mode the engine
// declares, and reports quality and latency. Each query is asked once
// untimed first, so the figures do not include one-off index warm-up.
func Run(ctx context.Context, e contract.Engine) (Report, error) {
	queries, err := Queries()
	if err != nil {
		return Report{}, err
	}
	return RunWith(ctx, e, queries)
}

// RunWith is Run with another query set (HoldoutQueries, or a caller's own
// queries over the same corpus).
func RunWith(ctx context.Context, e contract.Engine, queries []Query) (Report, error) {
	notes, err := Corpus()
	if err != nil {
		return Report{}, err
	}
	start := time.Now()
	ids, err := Load(ctx, e, notes)
	if err != nil {
		return Report{}, err
	}
	rep := Report{Engine: e.Descriptor().ID, Notes: len(notes), K: K, LoadTime: time.Since(start)}
	keyOf := make(map[string]string, len(ids))
	for k, id := range ids {
		keyOf[id] = k
	}
	ns, err := contract.ParseNamespace(Namespace)
	if err != nil {
		return Report{}, err
	}
	reach := contract.ReachSubtree(ns)
	rep.Queries = make([]QueryResult, len(queries))
	for i, q := range queries {
		rep.Queries[i] = QueryResult{Query: q, Rank: map[contract.FetchMode]int{}}
	}
	desc := e.Descriptor()
	for _, mode := range contract.FetchModes() {
		mr := ModeResult{Mode: mode, Served: desc.Supports(mode)}
		if !mr.Served {
			rep.Modes = append(rep.Modes, mr)
			continue
		}
		var durations []time.Duration
		ranked := make([][]string, len(queries))
		for i, q := range queries {
			req := contract.FetchRequest{Query: q.Text, Mode: mode, Filter: contract.MetaFilter{Reach: &reach}, Limit: K}
			if _, err := e.Fetch(ctx, req); err != nil {
				return Report{}, fmt.Errorf("%s fetch %q: %w", mode, q.Text, err)
			}
			t0 := time.Now()
			page, err := e.Fetch(ctx, req)
			durations = append(durations, time.Since(t0))
			if err != nil {
				return Report{}, fmt.Errorf("%s fetch %q: %w", mode, q.Text, err)
			}
			for _, h := range page.Hits {
				ranked[i] = append(ranked[i], keyOf[h.ID])
			}
			rep.Queries[i].Rank[mode] = firstRelevant(ranked[i], q.Relevant, K)
		}
		mr.ByKind = Score(queries, ranked, K)
		mr.Latency = summarise(durations)
		rep.Modes = append(rep.Modes, mr)
	}
	rep.Recall, err = runRecall(ctx, e, queries, keyOf, contract.MetaFilter{Reach: &reach})
	if err != nil {
		return Report{}, err
	}
	return rep, nil
}

var markerRe = regexp.MustCompile(`\[(\d+)\]`)

func runRecall(ctx context.Context, e contract.Engine, queries []Query, keyOf map[string]string, filter contract.MetaFilter) (RecallResult, error) {
	var res RecallResult
	var durations []time.Duration
	var cites, answers, first int
	for _, q := range queries {
		t0 := time.Now()
		ans, err := e.Recall(ctx, contract.RecallRequest{Question: q.Text, Filter: filter, Limit: RecallLimit})
		durations = append(durations, time.Since(t0))
		if err != nil {
			return RecallResult{}, fmt.Errorf("recall %q: %w", q.Text, err)
		}
		if ans.Model != nil {
			res.Model = *ans.Model
		}
		relevant := func(i int) bool {
			return i >= 0 && i < len(ans.Citations) && slices.Contains(q.Relevant, keyOf[ans.Citations[i].ID])
		}
		for i := range ans.Citations {
			if relevant(i) {
				cites++
				break
			}
		}
		for j, m := range markerRe.FindAllStringSubmatch(ans.Answer, -1) {
			n, _ := strconv.Atoi(m[1])
			if relevant(n - 1) {
				answers++
				if j == 0 {
					first++
				}
				break
			}
		}
	}
	n := float64(len(queries))
	res.CitationsHit, res.AnswerCitesHit, res.FirstMarkerHit = float64(cites)/n, float64(answers)/n, float64(first)/n
	res.Latency = summarise(durations)
	return res, nil
}

// Score computes MRR@k and recall@k of ranked (note keys, best first, one
// list per query) per query kind and overall.
func Score(queries []Query, ranked [][]string, k int) map[string]Metrics {
	sums := map[string]*Metrics{}
	add := func(kind string, rr, recall float64) {
		m := sums[kind]
		if m == nil {
			m = &Metrics{}
			sums[kind] = m
		}
		m.Queries++
		m.MRR += rr
		m.Recall += recall
	}
	for i, q := range queries {
		top := ranked[i][:min(k, len(ranked[i]))]
		rr := 0.0
		if r := firstRelevant(top, q.Relevant, k); r > 0 {
			rr = 1 / float64(r)
		}
		found := 0
		for _, key := range q.Relevant {
			if slices.Contains(top, key) {
				found++
			}
		}
		recall := 0.0
		if len(q.Relevant) > 0 {
			recall = float64(found) / float64(len(q.Relevant))
		}
		add(q.Kind, rr, recall)
		add(KindAll, rr, recall)
	}
	out := make(map[string]Metrics, len(sums))
	for kind, m := range sums {
		out[kind] = Metrics{Queries: m.Queries, MRR: m.MRR / float64(m.Queries), Recall: m.Recall / float64(m.Queries)}
	}
	return out
}

// firstRelevant is the 1-based rank of the first relevant key within the top
// k, or 0.
func firstRelevant(ranked, relevant []string, k int) int {
	for i, key := range ranked[:min(k, len(ranked))] {
		if slices.Contains(relevant, key) {
			return i + 1
		}
	}
	return 0
}

func summarise(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(p float64) time.Duration {
		i := int(p*float64(len(s))+0.5) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	return Latency{P50: at(0.50), P95: at(0.95), Max: s[len(s)-1]}
}

// Table renders the report as a markdown table: one row per mode, MRR@10 and
// recall@10 for exact, paraphrased and all queries, and latency.
func (r Report) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "engine `%s`, %d notes, %d queries, K = %d\n\n", r.Engine, r.Notes, len(r.Queries), r.K)
	b.WriteString("| mode | exact MRR | exact recall | paraphrase MRR | paraphrase recall | all MRR | all recall | p50 | p95 |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, m := range r.Modes {
		if !m.Served {
			fmt.Fprintf(&b, "| %s | not served | | | | | | | |\n", m.Mode)
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", m.Mode,
			cells(m.ByKind[KindExact]), cells(m.ByKind[KindParaphrase]), cells(m.ByKind[KindAll]),
			fmtDuration(m.Latency.P50)+" | "+fmtDuration(m.Latency.P95))
	}
	rc := r.Recall
	fmt.Fprintf(&b, "\nrecall (limit %d), answer model `%s`\n\n", RecallLimit, rc.Model)
	b.WriteString("| relevant note cited | answer's markers reach it | first marker is relevant | p50 | p95 |\n| --- | --- | --- | --- | --- |\n")
	fmt.Fprintf(&b, "| %.3f | %.3f | %.3f | %s | %s |\n", rc.CitationsHit, rc.AnswerCitesHit, rc.FirstMarkerHit, fmtDuration(rc.Latency.P50), fmtDuration(rc.Latency.P95))
	return b.String()
}

// Misses lists, per query, the ranks that differ between two modes, worst
// first for the second mode: what b gains or loses against a.
func (r Report) Misses(a, b contract.FetchMode) string {
	type row struct {
		q      Query
		ra, rb int
	}
	var rows []row
	for _, qr := range r.Queries {
		ra, rb := qr.Rank[a], qr.Rank[b]
		if ra != rb {
			rows = append(rows, row{qr.Query, ra, rb})
		}
	}
	slices.SortFunc(rows, func(x, y row) int { return cmp.Compare(gain(x.ra, x.rb), gain(y.ra, y.rb)) })
	var s strings.Builder
	for _, x := range rows {
		fmt.Fprintf(&s, "%-10s %s %2d -> %s %2d  %s\n", x.q.Kind, a, x.ra, b, x.rb, x.q.Text)
	}
	return s.String()
}

// cells renders MRR and recall, or dashes for a kind without queries.
func cells(m Metrics) string {
	if m.Queries == 0 {
		return "- | -"
	}
	return fmt.Sprintf("%.3f | %.3f", m.MRR, m.Recall)
}

func gain(ra, rb int) float64 {
	rr := func(r int) float64 {
		if r == 0 {
			return 0
		}
		return 1 / float64(r)
	}
	return rr(rb) - rr(ra)
}

func fmtDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	default:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	}
}

// EmbedderResult is the vector-only quality of an embedder on the corpus,
// searched exactly in float32 and in int8, and how far the two agree.
type EmbedderResult struct {
	Model   string
	Float32 map[string]Metrics
	Int8    map[string]Metrics
	// Int8Agreement is the mean share of the float32 top K that the int8
	// search also returns.
	Int8Agreement float64
}

// RunEmbedder embeds the corpus's rendered texts and the queries with emb and
// scores exact vector search, without an engine: the quick loop for tuning
// an embedder.
func RunEmbedder(ctx context.Context, emb retrieval.Embedder) (EmbedderResult, error) {
	queries, err := Queries()
	if err != nil {
		return EmbedderResult{}, err
	}
	return RunEmbedderWith(ctx, emb, queries)
}

// RunEmbedderWith is RunEmbedder with another query set.
func RunEmbedderWith(ctx context.Context, emb retrieval.Embedder, queries []Query) (EmbedderResult, error) {
	notes, err := Corpus()
	if err != nil {
		return EmbedderResult{}, err
	}
	texts := make([]string, len(notes))
	for i, n := range notes {
		texts[i] = n.Item.RenderText()
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return EmbedderResult{}, err
	}
	qtexts := make([]string, len(queries))
	for i, q := range queries {
		qtexts[i] = q.Text
	}
	qvecs, err := EmbedQueries(ctx, emb, qtexts)
	if err != nil {
		return EmbedderResult{}, err
	}
	f32 := retrieval.NewVectorIndex(len(vecs[0]))
	i8 := retrieval.NewVectorIndex(len(vecs[0]), retrieval.WithInt8())
	for i, n := range notes {
		f32.Upsert(n.Key, vecs[i])
		i8.Upsert(n.Key, vecs[i])
	}
	rf, ri := make([][]string, len(queries)), make([][]string, len(queries))
	agree := 0.0
	for i := range queries {
		a := f32.Search(ctx, qvecs[i], K, nil)
		b := i8.Search(ctx, qvecs[i], K, nil)
		for _, s := range a {
			rf[i] = append(rf[i], s.ID)
		}
		for _, s := range b {
			ri[i] = append(ri[i], s.ID)
		}
		shared := 0
		for _, id := range rf[i] {
			if slices.Contains(ri[i], id) {
				shared++
			}
		}
		agree += float64(shared) / float64(max(1, len(rf[i])))
	}
	return EmbedderResult{
		Model:         emb.Model(),
		Float32:       Score(queries, rf, K),
		Int8:          Score(queries, ri, K),
		Int8Agreement: agree / float64(len(queries)),
	}, nil
}

// EmbedQueries embeds search queries the way an engine does: with
// EmbedQuery where the embedder has one.
func EmbedQueries(ctx context.Context, emb retrieval.Embedder, qs []string) ([][]float32, error) {
	qe, ok := emb.(retrieval.QueryEmbedder)
	if !ok {
		return emb.Embed(ctx, qs)
	}
	out := make([][]float32, len(qs))
	for i, q := range qs {
		v, err := qe.EmbedQuery(ctx, q)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}
