package bolt

import (
	"context"
	"slices"
	"strings"
	"time"

	"mnemo/contract"
	"mnemo/engine/retrieval"
	"mnemo/engine/retrieval/lexicon"
)

// convConfig is the conversation levers hybrid fetch uses (Options.Conversation,
// or retrieval.DefaultConvConfig).
func (e *Engine) convConfig() retrieval.ConvConfig {
	if e.opts.Conversation != nil {
		return *e.opts.Conversation
	}
	return retrieval.DefaultConvConfig()
}

// rerankTurns applies the conversation levers (retrieval.RerankTurns) to a
// hybrid ranking whose best hits are conversation turns: the vector
// ranking's pool beyond the fused window and turns of the dates
// the question names join the candidates, the speaker and the dates named
// lift a turn, a second keyword round seeded by the names of the best turns
// adds the turns those names lead to, and copies of a text already ranked
// fall back. Any other ranking is returned as it is.
func (e *Engine) rerankTurns(ctx context.Context, q string, f contract.MetaFilter, fused []retrieval.Fused, pool []rankedID) ([]retrieval.Fused, error) {
	cfg := e.convConfig()
	if cfg == (retrieval.ConvConfig{}) || len(fused) == 0 {
		return fused, nil
	}
	scores := make(map[string]float64, len(fused))
	ids := make([]rankedID, 0, len(fused))
	add := func(id string, s float64) {
		if old, ok := scores[id]; ok {
			scores[id] = max(old, s)
			return
		}
		scores[id] = s
		ids = append(ids, rankedID{id: id})
	}
	for _, x := range fused {
		add(x.ID, x.Score)
	}
	for _, x := range pool {
		add(x.id, 0)
	}
	dates, datesOK := retrieval.QueryDates(q, e.clock())
	anchored := false
	if !datesOK && cfg.AnchorDays > 0 {
		// "before adopting Biscuit": the dates are the anchor's turn's.
		if a, ok := retrieval.QueryAnchor(q); ok {
			at, err := e.anchorTime(ctx, q, a, f)
			if err != nil {
				return nil, err
			}
			if !at.IsZero() {
				dates, datesOK, anchored = a.Window(at, cfg.AnchorDays), true, true
			}
		}
	}
	if datesOK && cfg.TimeWindow > 0 {
		tf := f
		from, to := dates.From, dates.To
		if tf.ObservedAfter == nil || tf.ObservedAfter.Before(from) {
			tf.ObservedAfter = &from
		}
		if tf.ObservedBefore == nil || tf.ObservedBefore.After(to) {
			tf.ObservedBefore = &to
		}
		if !anchored {
			kw, err := e.rankKeyword(ctx, q, tf, cfg.TimeWindow)
			if err != nil {
				return nil, err
			}
			for _, x := range kw {
				add(x.id, 0)
			}
		}
		// Every turn of the dates may join, however little it shares with
		// the question: the dates are the evidence.
		for _, id := range e.idsMatching(tf, cfg.TimeWindow) {
			add(id, 0)
		}
	}
	// The turn after a fused hit joins: a reply is found through the
	// question it answers (the hit's score is its context when the hit asks
	// something, below).
	var asked, reply []string
	joined := map[string]bool{} // candidates only as a reply
	if cfg.Neighbour > 0 {
		for _, x := range fused {
			if x.Score > 0 {
				asked = append(asked, x.ID)
			}
		}
		reply = e.turnsAfter(asked, f)
		for _, n := range reply {
			if _, ok := scores[n]; n != "" && !ok {
				add(n, 0)
				joined[n] = true
			}
		}
	}
	turns, conv, err := e.turnsOf(ids, f)
	if err != nil || !conv {
		return fused, err
	}
	// Turns that name a thing of a kind the question names join: "cello
	// lessons" for "What instrument ...". A question dated by another event
	// ("shortly before adopting Biscuit") has the turns of its dates for
	// candidates already, and has paid a search for the event.
	inTurns := make(map[string]bool, len(turns))
	for _, t := range turns {
		inTurns[t.ID] = true
	}
	var km *retrieval.KindMatch
	if cfg.Kind > 0 {
		km = retrieval.QueryKinds(q)
		if le, ok := e.embedder.(*retrieval.LearnedEmbedder); ok && km != nil {
			km.Hold(e.kindHeld(le.Current()))
		}
	}
	var kinds []retrieval.Turn
	if !anchored {
		kinds, err = e.kindTurns(ctx, km, f, cfg, func(id string) bool { return inTurns[id] && !joined[id] })
	}
	if err != nil {
		return nil, err
	}
	for _, t := range kinds {
		// A reply found by its kind is a candidate in its own right.
		delete(joined, t.ID)
		if !inTurns[t.ID] {
			add(t.ID, 0)
			turns = append(turns, t)
		}
	}
	var before map[string]float64
	if len(asked) > 0 {
		text := make(map[string]string, len(turns))
		for _, t := range turns {
			text[t.ID] = t.Text
		}
		lend := make([]retrieval.Asked, len(asked))
		for i, id := range asked {
			lend[i] = retrieval.Asked{Text: text[id], Score: scores[id], Reply: reply[i]}
		}
		before = retrieval.ReplyContext(lend)
		// A turn that joined as the reply to a turn that asks nothing is
		// no candidate.
		turns = slices.DeleteFunc(turns, func(t retrieval.Turn) bool { return joined[t.ID] && before[t.ID] == 0 })
	}
	for i := range turns {
		turns[i].Score = scores[turns[i].ID]
		turns[i].Before = before[turns[i].ID]
		turns[i].Kind = km.Score(turns[i].Text)
	}
	ranked := retrieval.RerankTurns(q, turns, dates, datesOK, nil, cfg)
	if cfg.Second > 0 && cfg.SecondSeeds > 0 {
		byID := make(map[string]retrieval.Turn, len(turns))
		for _, t := range turns {
			byID[t.ID] = t
		}
		var seeds []retrieval.Turn
		for _, x := range ranked[:min(cfg.SecondSeeds, len(ranked))] {
			seeds = append(seeds, byID[x.ID])
		}
		if names := retrieval.SeedNames(q, seeds); len(names) > 0 {
			sec, err := e.rankKeyword(ctx, strings.Join(names, " "), f, retrieval.HybridVectorWindow)
			if err != nil {
				return nil, err
			}
			var more []rankedID
			for _, x := range sec {
				if _, ok := scores[x.id]; !ok {
					add(x.id, 0)
					more = append(more, x)
				}
			}
			extra, _, err := e.turnsOf(more, f)
			if err != nil {
				return nil, err
			}
			for i := range extra {
				extra[i].Before = before[extra[i].ID]
				extra[i].Kind = km.Score(extra[i].Text)
			}
			turns = append(turns, extra...)
			ranked = retrieval.RerankTurns(q, turns, dates, datesOK, scoredOf(sec), cfg)
		}
	}
	out := make([]retrieval.Fused, len(ranked))
	for i, x := range ranked {
		out[i] = retrieval.Fused{ID: x.ID, Score: x.Score}
	}
	return out, nil
}

// kindHeld is the lexicon's nouns the store holds (retrieval.KindHeld),
// made once per learned model and kept.
func (e *Engine) kindHeld(model *retrieval.LearnedModel) *lexicon.Held {
	if model == nil {
		return nil
	}
	e.kinds.mu.Lock()
	defer e.kinds.mu.Unlock()
	if e.kinds.model != model {
		e.kinds.model, e.kinds.held = model, retrieval.KindHeld(model, kindTermShare)
	}
	return e.kinds.held
}

// kindTermShare is the most of the store a thing of a kind may be said in
// and still be searched for: "weekend" is a time, and small talk says it
// everywhere; a search for it costs its postings and finds nothing a
// question of a kind wants.
const kindTermShare = 0.01

// kindTurns is the keyword ranking's best cfg.KindPool turns for the things
// of the kinds the question names that the store holds
// (retrieval.KindMatch.Terms: the learned model's vocabulary says what it holds;
// those said in more than kindTermShare of it are left out),
// but those it already has (have); none before km.Hold (without a learned
// model).
func (e *Engine) kindTurns(ctx context.Context, km *retrieval.KindMatch, f contract.MetaFilter, cfg retrieval.ConvConfig, have func(id string) bool) ([]retrieval.Turn, error) {
	terms := km.Terms()
	if len(terms) == 0 || cfg.KindPool <= 0 {
		return nil, nil
	}
	kw, err := e.rankKeywordAmong(ctx, strings.Join(terms, " "), f, cfg.KindPool)
	if err != nil {
		return nil, err
	}
	kw = slices.DeleteFunc(kw, func(x rankedID) bool { return have(x.id) })
	turns, _, err := e.turnsOf(kw, f)
	return turns, err
}

// anchorPool is how many of the keyword ranking's best for an anchor's
// event are looked at for one said by a speaker the question names.
const anchorPool = 10

// anchorTime is when the anchor's event was said: the observed_at of the
// keyword ranking's best turn for it, a turn of a speaker the question names
// first ("before Maya adopted Biscuit": Maya's turn); zero when none.
func (e *Engine) anchorTime(ctx context.Context, q string, a retrieval.Anchor, f contract.MetaFilter) (time.Time, error) {
	kw, err := e.rankKeyword(ctx, a.Event, f, anchorPool)
	if err != nil || len(kw) == 0 {
		return time.Time{}, err
	}
	hits, err := e.hitsFor(kw, f)
	if err != nil {
		return time.Time{}, err
	}
	turns := make([]retrieval.Turn, 0, len(hits))
	for _, h := range hits {
		if h != nil && h.Meta.ObservedAt != nil {
			turns = append(turns, retrieval.Turn{ID: h.ID, Speaker: speakerOf(h.Meta), At: *h.Meta.ObservedAt})
		}
	}
	if t, ok := retrieval.AnchorTurn(q, turns); ok {
		return t.At, nil
	}
	return time.Time{}, nil
}

// speakerOf is who said a turn: the observed actor's name, else their id
// ("alice" from mem0); "" when unknown.
func speakerOf(m contract.MemoryMeta) string {
	a := m.ObservedActor
	if a == nil {
		return ""
	}
	if a.Name != nil && *a.Name != "" {
		return *a.Name
	}
	return a.ID
}

// idsMatching lists up to limit ids of live records that pass f, in the
// order they were written: a scan of the table, about as dear as one pass of
// the vector scan without the vectors.
func (e *Engine) idsMatching(f contract.MetaFilter, limit int) []string {
	e.mu.RLock()
	defer e.mu.RUnlock()
	p := e.t.compileFilter(f, true)
	var ids []string
	for ord := range e.t.rows {
		if len(ids) == limit {
			break
		}
		if e.t.matchOrd(&p, uint32(ord)) {
			ids = append(ids, e.t.idOf(uint32(ord)))
		}
	}
	return ids
}

// neighbourGap is how far apart in observed_at two turns written one after
// the other may be and still be neighbours: a reply minutes later is, the
// next session's first turn days later is not.
const neighbourGap = 6 * time.Hour

// neighbourSkip is how many forgotten records between two turns are looked
// past for a neighbour.
const neighbourSkip = 8

// turnsAfter are the turns right after each of ids in its conversation, ""
// when none: the next live record in the order written, when it is a
// conversation item of the same namespace and thread observed within
// neighbourGap of it that passes f. A read of the table, no record is read.
func (e *Engine) turnsAfter(ids []string, f contract.MetaFilter) []string {
	next := make([]string, len(ids))
	e.mu.RLock()
	defer e.mu.RUnlock()
	p := e.t.compileFilter(f, true)
	conv := kindCode(contract.KindConversation)
	near := func(a, b *row) bool {
		if b.kind != conv || b.ns != a.ns || b.str[colThread] != a.str[colThread] {
			return false
		}
		if a.observed == noTime || b.observed == noTime {
			return a.observed == b.observed
		}
		d := a.observed - b.observed
		if max(d, -d) > neighbourGap.Milliseconds() {
			return false
		}
		d = d*1e6 + int64(a.subSource&subMsMask) - int64(b.subSource&subMsMask)
		return max(d, -d) <= int64(neighbourGap)
	}
	for i, id := range ids {
		ord, ok := e.t.ordOfID(id)
		if !ok || e.t.rows[ord].kind != conv {
			continue
		}
		a := &e.t.rows[ord]
		for o, skip := int(ord)+1, 0; skip < neighbourSkip && o < len(e.t.rows); o, skip = o+1, skip+1 {
			if !e.t.alive[o] {
				continue
			}
			if b := &e.t.rows[o]; near(a, b) && p.match(b) {
				next[i] = e.t.idOf(uint32(o))
			}
			break
		}
	}
	return next
}

// turnsOf reads the ranked records as turns (text without its role, speaker,
// observed_at, specificity); conv reports whether at least half of the best
// ten are conversation items: a ranking of mostly documents is not
// reordered because a turn or two made it in. Records gone or filtered out
// are left out.
func (e *Engine) turnsOf(ranked []rankedID, f contract.MetaFilter) (turns []retrieval.Turn, conv bool, err error) {
	hits, err := e.hitsFor(ranked, f)
	if err != nil {
		return nil, false, err
	}
	var model *retrieval.LearnedModel
	if le, ok := e.embedder.(*retrieval.LearnedEmbedder); ok {
		model = le.Current()
	}
	seen, convs := 0, 0
	for _, h := range hits {
		if h == nil {
			continue
		}
		t := retrieval.Turn{ID: h.ID, Text: h.Text}
		if h.Kind == contract.KindConversation && (h.Meta.Turns == nil || h.Meta.Turns.First == h.Meta.Turns.Last) {
			// A turn of its own: its text without the "role: " it renders with.
			if role, text, ok := strings.Cut(h.Text, ": "); ok {
				if _, isRole := contract.ParseRole(role); isRole {
					t.Text = text
				}
			}
		}
		if seen < 10 {
			seen++
			if h.Kind == contract.KindConversation {
				convs++
			}
		}
		t.Speaker = speakerOf(h.Meta)
		if h.Meta.ObservedAt != nil {
			t.At = *h.Meta.ObservedAt
		}
		if model != nil && h.Kind == contract.KindConversation {
			t.Specificity = model.Specificity(t.Text)
		}
		turns = append(turns, t)
	}
	return turns, seen > 0 && 2*convs >= seen, nil
}
