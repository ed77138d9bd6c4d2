package eval

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"hash/fnv"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	"mnemo/contract"
)

// A KnownItemSet is a corpus of real text that nobody here wrote, split so
// that each query has exactly one right answer: the document its text was
// taken from (the first sentence of a Go doc comment, the NAME line of a man
// page). Unlike the hand-written notes, such a set cannot be tuned towards by
// whoever wrote the queries.
type KnownItemSet struct {
	Name    string
	Docs    []KnownDoc
	Queries []KnownQuery
}

// KnownDoc is one document of a set.
type KnownDoc struct {
	Key   string `json:"key"`
	Title string `json:"title"`
	Body  string `json:"body"`
}

// KnownQuery is a query and the key of the one document that answers it.
type KnownQuery struct {
	Text   string `json:"query"`
	Target string `json:"target"`
}

// Text is what a document renders to, the same text mnemo indexes for it.
func (d KnownDoc) Text() string { return d.item().RenderText() }

func (d KnownDoc) item() contract.StoreItem {
	ns, _ := contract.ParseNamespace(Namespace)
	return contract.StoreItem{
		Type:  contract.KindDocument,
		Title: contract.Ptr(d.Title),
		Body:  contract.TextBody(d.Body),
		Meta:  contract.MemoryMeta{Namespace: ns, Source: contract.SourceRef{Kind: contract.SourceAgent}},
	}
}

// stableHash orders documents reproducibly, independent of file order.
func stableHash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// sample keeps up to n docs chosen by hash, so the same source gives the same set.
func sample[T any](xs []T, key func(T) string, n int) []T {
	xs = slices.Clone(xs)
	slices.SortFunc(xs, func(a, b T) int {
		ha, hb := stableHash(key(a)), stableHash(key(b))
		switch {
		case ha < hb:
			return -1
		case ha > hb:
			return 1
		}
		return strings.Compare(key(a), key(b))
	})
	return xs[:min(n, len(xs))]
}

// GoDocSet builds a set from the exported declarations of the Go standard
// library under goroot/src (always present where the tests run): the first
// sentence of a doc comment is the query, the declaration's qualified name
// and the rest of its comment the target. Declarations whose remaining
// comment is shorter than 20 words are left out, as are internal, vendored,
// command and test code. It keeps up to maxDocs documents and asks
// maxQueries of them.
func GoDocSet(goroot string, maxDocs, maxQueries int) (KnownItemSet, error) {
	src := filepath.Join(goroot, "src")
	var docs []KnownDoc
	firsts := map[string]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			base := d.Name()
			if rel != "." && (base == "internal" || base == "vendor" || base == "testdata" || base == "cmd" || strings.HasPrefix(base, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil || f.Name.Name == "main" || strings.HasSuffix(f.Name.Name, "_test") {
			return nil
		}
		pkg := filepath.ToSlash(filepath.Dir(rel))
		add := func(name string, doc *ast.CommentGroup) {
			if doc == nil || !ast.IsExported(name) {
				return
			}
			first, rest := splitFirstSentence(doc.Text())
			if len(strings.Fields(first)) < 4 || len(strings.Fields(rest)) < 20 {
				return
			}
			key := pkg + "." + name
			if _, seen := firsts[key]; seen {
				return
			}
			firsts[key] = first
			docs = append(docs, KnownDoc{Key: key, Title: key, Body: rest})
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				name := d.Name.Name
				if d.Recv != nil && len(d.Recv.List) == 1 {
					recv := recvName(d.Recv.List[0].Type)
					if recv == "" || !ast.IsExported(recv) {
						continue
					}
					name = recv + "." + name
				}
				add(name, d.Doc)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok {
						doc := ts.Doc
						if doc == nil && len(d.Specs) == 1 {
							doc = d.Doc
						}
						add(ts.Name.Name, doc)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return KnownItemSet{}, fmt.Errorf("go doc set from %s: %w", src, err)
	}
	return finishSet("go-doc", docs, firsts, maxDocs, maxQueries), nil
}

func recvName(t ast.Expr) string {
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// splitFirstSentence cuts text after its first sentence: a period, question
// or exclamation mark followed by white space (as go/doc.Synopsis does,
// without its special cases), the paragraph end, or the end.
func splitFirstSentence(text string) (string, string) {
	text = strings.TrimSpace(text)
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c == '\n' && i+1 < len(text) && text[i+1] == '\n' {
			return collapse(text[:i]), collapse(text[i:])
		}
		if (c == '.' || c == '?' || c == '!') && (i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n') {
			// "e.g. " and similar are not sentence ends
			if i > 0 && i >= 2 && text[i-2] == '.' {
				continue
			}
			return collapse(text[:i+1]), collapse(text[i+1:])
		}
	}
	return collapse(text), ""
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// finishSet samples the documents and the queries among them.
func finishSet(name string, docs []KnownDoc, queryOf map[string]string, maxDocs, maxQueries int) KnownItemSet {
	docs = sample(docs, func(d KnownDoc) string { return d.Key }, maxDocs)
	slices.SortFunc(docs, func(a, b KnownDoc) int { return strings.Compare(a.Key, b.Key) })
	var qs []KnownQuery
	for _, d := range sample(docs, func(d KnownDoc) string { return "q:" + d.Key }, maxQueries) {
		if q := queryOf[d.Key]; q != "" {
			qs = append(qs, KnownQuery{Text: q, Target: d.Key})
		}
	}
	return KnownItemSet{Name: name, Docs: docs, Queries: qs}
}

// manSetFile is the man page set, derived by TestBuildManSet from the Linux
// man-pages project's sections 2 to 7 (Debian's manpages and manpages-dev).
const manSetFile = "testdata/manpages.jsonl.gz"

// manRecord is one line of manSetFile: the document and its NAME line.
type manRecord struct {
	KnownDoc
	Query string `json:"query"`
}

// ManSet reads the checked-in man page set: the description on the NAME
// line is the query, the page's names and DESCRIPTION section the target.
func ManSet(maxDocs, maxQueries int) (KnownItemSet, error) {
	f, err := testdata.Open(manSetFile)
	if err != nil {
		return KnownItemSet{}, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return KnownItemSet{}, fmt.Errorf("%s: %w", manSetFile, err)
	}
	var docs []KnownDoc
	queries := map[string]string{}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		var r manRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return KnownItemSet{}, fmt.Errorf("%s: %w", manSetFile, err)
		}
		docs = append(docs, r.KnownDoc)
		queries[r.Key] = r.Query
	}
	if err := sc.Err(); err != nil {
		return KnownItemSet{}, fmt.Errorf("%s: %w", manSetFile, err)
	}
	return finishSet("man-pages", docs, queries, maxDocs, maxQueries), nil
}

// KnownItemResult is one set measured in every mode, beside the textbook BM25.
type KnownItemResult struct {
	Set     string
	Docs    int
	Queries int
	// BM25 is the plain baseline computed here (BM25Baseline).
	BM25  Metrics
	Modes []KnownModeResult
	// Ranks holds, per mode name ("bm25" and the fetch modes), every query's
	// rank of its target (0 = not in the top K).
	Ranks map[string][]int
}

// KnownModeResult is one fetch mode on one set.
type KnownModeResult struct {
	Mode    contract.FetchMode
	Served  bool
	Metrics Metrics
	Latency Latency
}

// Mode returns the figures of one mode (zero when not served).
func (r KnownItemResult) Mode(m contract.FetchMode) Metrics {
	for _, x := range r.Modes {
		if x.Mode == m {
			return x.Metrics
		}
	}
	return Metrics{}
}

// RunKnownItem stores the set in e and asks every query in every mode e
// serves, and computes the plain BM25 baseline over the same texts.
func RunKnownItem(ctx context.Context, e contract.Engine, set KnownItemSet) (KnownItemResult, error) {
	res := KnownItemResult{Set: set.Name, Docs: len(set.Docs), Queries: len(set.Queries), Ranks: map[string][]int{}}
	notes := make([]Note, len(set.Docs))
	for i, d := range set.Docs {
		notes[i] = Note{Key: d.Key, Item: d.item()}
	}
	ids, err := Load(ctx, e, notes)
	if err != nil {
		return res, err
	}
	keyOf := make(map[string]string, len(ids))
	for k, id := range ids {
		keyOf[id] = k
	}
	ns, err := contract.ParseNamespace(Namespace)
	if err != nil {
		return res, err
	}
	reach := contract.ReachSubtree(ns)
	res.BM25, res.Ranks["bm25"] = BM25Baseline(set)
	desc := e.Descriptor()
	for _, mode := range contract.FetchModes() {
		mr := KnownModeResult{Mode: mode, Served: desc.Supports(mode)}
		if !mr.Served {
			res.Modes = append(res.Modes, mr)
			continue
		}
		ranks := make([]int, len(set.Queries))
		var durations []time.Duration
		for i, q := range set.Queries {
			req := contract.FetchRequest{Query: q.Text, Mode: mode, Filter: contract.MetaFilter{Reach: &reach}, Limit: K}
			t0 := time.Now()
			page, err := e.Fetch(ctx, req)
			durations = append(durations, time.Since(t0))
			if err != nil {
				return res, fmt.Errorf("%s %s fetch %q: %w", set.Name, mode, q.Text, err)
			}
			for r, h := range page.Hits {
				if keyOf[h.ID] == q.Target {
					ranks[i] = r + 1
					break
				}
			}
		}
		mr.Metrics = metricsOfRanks(ranks)
		mr.Latency = summarise(durations)
		res.Ranks[string(mode)] = ranks
		res.Modes = append(res.Modes, mr)
	}
	return res, nil
}

// metricsOfRanks: with one relevant document per query, recall@K is the
// share of queries whose target is in the top K.
func metricsOfRanks(ranks []int) Metrics {
	m := Metrics{Queries: len(ranks)}
	for _, r := range ranks {
		if r > 0 && r <= K {
			m.MRR += 1 / float64(r)
			m.Recall++
		}
	}
	if len(ranks) > 0 {
		m.MRR /= float64(len(ranks))
		m.Recall /= float64(len(ranks))
	}
	return m
}

// Textbook BM25 parameters of the baseline.
const (
	baselineK1 = 1.2
	baselineB  = 0.75
)

// baselineTokens is the baseline's analysis: lowercase runs of letters and
// digits, nothing else.
func baselineTokens(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// BM25Baseline ranks the set's documents for each query by the textbook
// BM25 (k1 1.2, b 0.75, idf log(1 + (N - n + 0.5) / (n + 0.5))) over the
// rendered title and body, ties by key, and returns its figures and every
// query's rank of its target.
func BM25Baseline(set KnownItemSet) (Metrics, []int) {
	keys := make([]string, len(set.Docs))
	texts := make([]string, len(set.Docs))
	for i, d := range set.Docs {
		keys[i], texts[i] = d.Key, d.Text()
	}
	bm := newBM25(keys, texts)
	ranks := make([]int, len(set.Queries))
	for qi, q := range set.Queries {
		for r, key := range bm.rank(q.Text, K) {
			if key == q.Target {
				ranks[qi] = r + 1
				break
			}
		}
	}
	return metricsOfRanks(ranks), ranks
}

// BM25Notes is the same baseline on the notes corpus and the given queries
// (several relevant notes each), per query kind.
func BM25Notes(queries []Query) (map[string]Metrics, error) {
	notes, err := Corpus()
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(notes))
	texts := make([]string, len(notes))
	for i, n := range notes {
		keys[i], texts[i] = n.Key, n.Item.RenderText()
	}
	bm := newBM25(keys, texts)
	ranked := make([][]string, len(queries))
	for i, q := range queries {
		ranked[i] = bm.rank(q.Text, K)
	}
	return Score(queries, ranked, K), nil
}

// bm25 is the textbook BM25 over baselineTokens (or another analysis), in
// memory.
type bm25 struct {
	keys    []string
	index   map[string][]bm25Posting
	lengths []float64
	avg     float64
	tokens  func(string) []string
}

type bm25Posting struct {
	doc int
	tf  float64
}

func newBM25(keys, texts []string) *bm25 { return newBM25With(keys, texts, baselineTokens) }

// newBM25With is the same BM25 over the tokens of another analysis.
func newBM25With(keys, texts []string, tokens func(string) []string) *bm25 {
	bm := &bm25{keys: keys, index: map[string][]bm25Posting{}, lengths: make([]float64, len(texts)), tokens: tokens}
	var total float64
	for i, text := range texts {
		tf := map[string]float64{}
		toks := tokens(text)
		for _, t := range toks {
			tf[t]++
		}
		for t, n := range tf {
			bm.index[t] = append(bm.index[t], bm25Posting{i, n})
		}
		bm.lengths[i] = float64(len(toks))
		total += bm.lengths[i]
	}
	bm.avg = total / math.Max(1, float64(len(texts)))
	return bm
}

// scores is every document's BM25 for terms (already analysed), each
// term's contribution times its weight (1 when weights is nil).
func (bm *bm25) scores(terms []string, weights []float64) map[int]float64 {
	n := float64(len(bm.keys))
	scores := map[int]float64{}
	for i, t := range terms {
		w := 1.0
		if weights != nil {
			w = weights[i]
		}
		ps := bm.index[t]
		idf := math.Log(1 + (n-float64(len(ps))+0.5)/(float64(len(ps))+0.5))
		for _, p := range ps {
			scores[p.doc] += w * idf * p.tf * (baselineK1 + 1) / (p.tf + baselineK1*(1-baselineB+baselineB*bm.lengths[p.doc]/bm.avg))
		}
	}
	return scores
}

// rank returns the keys of the top k documents holding a query token, best
// first, ties by key. A token repeated in the query counts each time.
func (bm *bm25) rank(query string, k int) []string {
	scores := bm.scores(bm.tokens(query), nil)
	docs := make([]int, 0, len(scores))
	for d := range scores {
		docs = append(docs, d)
	}
	slices.SortFunc(docs, func(a, b int) int {
		if scores[a] != scores[b] {
			if scores[a] > scores[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(bm.keys[a], bm.keys[b])
	})
	out := make([]string, 0, min(k, len(docs)))
	for _, d := range docs[:min(k, len(docs))] {
		out = append(out, bm.keys[d])
	}
	return out
}

// KnownItemTable renders results as one markdown table: per set, the BM25
// baseline and each mode's MRR@10, recall@10 and fetch p50.
func KnownItemTable(results ...KnownItemResult) string {
	var b strings.Builder
	b.WriteString("| set | docs | queries | mode | MRR@10 | recall@10 | vs BM25 | p50 |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %d | %d | BM25 baseline | %.3f | %.3f | | |\n", r.Set, r.Docs, r.Queries, r.BM25.MRR, r.BM25.Recall)
		for _, m := range r.Modes {
			if !m.Served {
				fmt.Fprintf(&b, "| %s | | | %s | not served | | | |\n", r.Set, m.Mode)
				continue
			}
			fmt.Fprintf(&b, "| %s | | | %s | %.3f | %.3f | %+.3f | %s |\n", r.Set, m.Mode, m.Metrics.MRR, m.Metrics.Recall,
				m.Metrics.MRR-r.BM25.MRR, fmtDuration(m.Latency.P50))
		}
	}
	return b.String()
}

// Compare counts the queries where mode b ranks the target worse than mode
// a (lost) and better (won).
func (r KnownItemResult) Compare(a, b string) (lost, won int) {
	ra, rb := r.Ranks[a], r.Ranks[b]
	for i := range ra {
		x, y := ra[i], rb[i]
		switch {
		case x == y:
		case x == 0 || (y != 0 && y < x):
			won++
		default:
			lost++
		}
	}
	return lost, won
}
