// Command demogen writes mnemo's demo corpus: about 1,500 memories of a small
// software company's agents (a writer, a researcher with a scout sub-agent, a
// support agent, a nightly digest service, one user's own notes), as JSON lines
// in the import format {"item": StoreItem, "status"?, "expires_at"?}.
//
// The output is deterministic, so the committed file can be checked against a
// fresh run:
//
//	go run ./bench/demogen > testdata/demo/demo.jsonl
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"mnemo/contract"
)

// demoSeed fixes the corpus; change it only together with the committed file.
const demoSeed = 20260105

// Line is one line of the import format.
type Line struct {
	Item      contract.StoreItem `json:"item"`
	Status    contract.Status    `json:"status,omitempty"`
	ExpiresAt string             `json:"expires_at,omitempty"`
}

// The demo's mix of kinds. Documents and conversations come from fixed
// material; learnings fill the corpus up to demoSize.
const (
	demoSize          = 1500
	supportThreads    = 170
	researchThreads   = 70
	scoutThreads      = 40
	writerThreads     = 45
	digestThreads     = 30
	candidateShare    = 0.05
	expiringLater     = 64 // expires_at in 2027
	alreadyExpired    = 12 // expires_at already past in 2026
	preferenceWeight  = 24
	factWeight        = 32
	procedureWeight   = 17
	correctionWeight  = 15
	otherLearningWght = 12
)

func main() {
	w := bufio.NewWriter(os.Stdout)
	if err := writeDemo(w); err != nil {
		fmt.Fprintln(os.Stderr, "demogen:", err)
		os.Exit(1)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "demogen:", err)
		os.Exit(1)
	}
}

// writeDemo writes the whole corpus as JSON lines.
func writeDemo(w io.Writer) error {
	lines, err := demoLines()
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := range lines {
		if err := enc.Encode(&lines[i]); err != nil {
			return err
		}
	}
	return nil
}

// corpusBuilder collects items and refuses a second copy of a fingerprint.
// A learning's text may be learned twice (agents do), but not more often.
type corpusBuilder struct {
	items        []contract.StoreItem
	seen         map[string]bool
	learnedTexts map[string]int
}

const maxSameLearning = 2

func (b *corpusBuilder) add(it contract.StoreItem) bool {
	if err := it.Validate(); err != nil {
		panic(fmt.Sprintf("demogen built an invalid item: %v", err))
	}
	id := it.Fingerprint()
	if b.seen[id] {
		return false
	}
	if it.Type == contract.KindLearning {
		if b.learnedTexts[it.Text] >= maxSameLearning {
			return false
		}
		b.learnedTexts[it.Text]++
	}
	b.seen[id] = true
	b.items = append(b.items, it)
	return true
}

// demoLines builds every line, ordered by observation time so that a fresh
// import shows the latest memories first.
func demoLines() ([]Line, error) {
	g := newGen(demoSeed)
	b := &corpusBuilder{seen: map[string]bool{}, learnedTexts: map[string]int{}}

	// Source files: every template with every entity once.
	combos := make([][2]int, 0, len(codeTemplates)*len(entities))
	for t := range codeTemplates {
		for e := range entities {
			combos = append(combos, [2]int{t, e})
		}
	}
	g.r.Shuffle(len(combos), func(i, j int) { combos[i], combos[j] = combos[j], combos[i] })
	for _, c := range combos {
		b.add(g.codeDocument(codeTemplates[c[0]], entities[c[1]]))
	}
	for _, it := range g.documents() {
		b.add(it)
	}

	threads := []struct {
		scenarios []scenario
		records   int
	}{
		{supportScenarios, supportThreads}, {researchScenarios, researchThreads}, {scoutScenarios, scoutThreads},
		{writerScenarios, writerThreads}, {digestScenarios, digestThreads},
	}
	for _, t := range threads {
		made := 0
		for attempts := 0; made < t.records; attempts++ {
			if attempts > 20*t.records {
				return nil, fmt.Errorf("could not make %d distinct conversations", t.records)
			}
			for _, it := range g.conversations(pick(g, t.scenarios)) {
				if made < t.records && b.add(it) {
					made++
				}
			}
		}
	}

	weights := []struct {
		kind   contract.LearningKind
		weight int
	}{
		{contract.LearningPreference, preferenceWeight}, {contract.LearningFact, factWeight},
		{contract.LearningProcedure, procedureWeight}, {contract.LearningCorrection, correctionWeight},
		{contract.LearningOther, otherLearningWght},
	}
	total := 0
	for _, w := range weights {
		total += w.weight
	}
	learnings := demoSize - len(b.items)
	for wi, w := range weights {
		want := learnings * w.weight / total
		if wi == len(weights)-1 {
			want = demoSize - len(b.items)
		}
		made := 0
		for attempts := 0; made < want; attempts++ {
			if attempts > 50*want {
				return nil, fmt.Errorf("could not make %d distinct %s learnings", want, w.kind)
			}
			if b.add(g.learning(w.kind)) {
				made++
			}
		}
	}

	slices.SortStableFunc(b.items, func(x, y contract.StoreItem) int {
		if c := x.Meta.ObservedAt.Compare(*y.Meta.ObservedAt); c != 0 {
			return c
		}
		return strings.Compare(x.Fingerprint(), y.Fingerprint())
	})

	lines := make([]Line, len(b.items))
	for i, it := range b.items {
		lines[i] = Line{Item: it}
	}
	g.assignStatuses(lines)
	g.assignExpiry(lines)
	return lines, nil
}

// assignStatuses marks about 5% as candidates awaiting review: memories an agent
// extracted on its own (learnings and chat chunks), never curated documents.
func (g *gen) assignStatuses(lines []Line) {
	want := int(float64(len(lines))*candidateShare + 0.5)
	var pool []int
	for i, l := range lines {
		it := l.Item
		agentMade := it.Type == contract.KindLearning || it.Type == contract.KindConversation
		if agentMade && !it.Meta.Namespace.Equal(nsRoot) {
			pool = append(pool, i)
		}
	}
	g.r.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	for _, i := range pool[:want] {
		lines[i].Status = contract.StatusCandidate
	}
}

// assignExpiry gives short-lived memories an expiry: chat messages, reminders,
// feed news and customer-specific situations. A few have already expired.
func (g *gen) assignExpiry(lines []Line) {
	var pool []int
	for i, l := range lines {
		it := l.Item
		src := it.Meta.SourceKindOf()
		shortLived := src == contract.SourceComposio || src == contract.SourceRSS ||
			(it.Type == contract.KindLearning && it.Kind == contract.LearningOther)
		if shortLived {
			pool = append(pool, i)
		}
	}
	g.r.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	for n, i := range pool[:min(len(pool), expiringLater+alreadyExpired)] {
		var at time.Time
		if n < alreadyExpired {
			// Past: a few months after it was observed, still in 2026.
			at = lines[i].Item.Meta.ObservedAt.AddDate(0, g.between(1, 3), 0).Truncate(24 * time.Hour)
		} else {
			at = time.Date(2027, time.Month(g.between(1, 12)), 1, 0, 0, 0, 0, time.UTC)
		}
		lines[i].ExpiresAt = contract.FormatTime(at)
	}
}
