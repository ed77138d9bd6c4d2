// Package corpus generates the benchmark corpus: any number of memories shaped
// like a real multi-team agent memory (about half learnings, 30% documents, 20%
// conversations; teams, dozens of agents, sub-agents, users and a service
// sandbox; Zipf-distributed tags and words; folders as real trees; about 10%
// candidates and 2% superseded records; a year of observation times), plus rare
// needles at fixed positions so that selective content filters and keyword
// queries have a known answer.
//
// The corpus is a pure function of (n, seed): the same arguments give the same
// entries, and the entries of a shorter corpus are a prefix of a longer one's
// (entry i depends only on the seed and i).
package corpus

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"mnemo/contract"
)

// Needles and anchors with a known frequency.
const (
	// RareNeedle is a token in exactly the entries with IsNeedle(i): one in
	// every RareNeedleEvery. No other text contains it, even as a substring.
	RareNeedle = "zqxkestrel"
	// RareNeedleEvery is the needle's period.
	RareNeedleEvery = 10_000
	// RareNeedleOffset is the first needle's index.
	RareNeedleOffset = 1_000
	// CommonWord is a frequent word that is not a stop word (in roughly a
	// quarter of the entries).
	CommonWord = "service"
	// VocabularySize is the number of distinct words text is drawn from.
	VocabularySize = 30_000
)

// Entry is one generated memory and how it is stored.
type Entry struct {
	Item contract.StoreItem
	// Status is active, candidate or superseded. Candidates are stored with
	// that status; superseded entries are stored active and then superseded by
	// the entry right after them (SupersededBy).
	Status contract.Status
	// SupersededBy is the index of the superseding entry when Status is
	// superseded (always the next index), else -1.
	SupersededBy int
	// ExpiresAt is set on about 3% of entries, from a dozen distinct instants
	// (some already past in 2026, most in 2027).
	ExpiresAt *time.Time
}

// IsNeedle tells whether entry i carries RareNeedle.
func IsNeedle(i int) bool { return i%RareNeedleEvery == RareNeedleOffset }

// NeedleCount is how many of the first n entries carry RareNeedle.
func NeedleCount(n int) int {
	if n <= RareNeedleOffset {
		return 0
	}
	return (n-RareNeedleOffset-1)/RareNeedleEvery + 1
}

// Generate returns the first n entries of the corpus for seed.
func Generate(n int, seed int64) []Entry {
	out := make([]Entry, 0, max(n, 0))
	Each(n, seed, func(_ int, e Entry) bool {
		out = append(out, e)
		return true
	})
	return out
}

// Each calls fn with entries 0..n-1 in order, without holding them; it stops
// early when fn returns false.
func Each(n int, seed int64, fn func(i int, e Entry) bool) {
	w := newWorld(seed)
	for i := 0; i < n; i++ {
		if !fn(i, w.entry(i, n)) {
			return
		}
	}
}

// Vocabulary returns the words text is drawn from, most frequent first.
func Vocabulary() []string { return buildVocabulary(VocabularySize) }

// Queries returns k keyword queries of one or two words drawn from the
// vocabulary's middle ranks (frequent enough to match, rare enough to rank),
// deterministically for seed.
func Queries(k int, seed int64) []string {
	vocab := Vocabulary()
	r := rand.New(rand.NewPCG(uint64(seed), 0x71756572))
	out := make([]string, k)
	word := func() string { return vocab[len(headWords)/2+r.IntN(2000)] }
	for i := range out {
		if r.IntN(3) == 0 {
			out[i] = word() + " " + word()
		} else {
			out[i] = word()
		}
	}
	return out
}

// world holds the vocabularies and namespaces one corpus draws from.
type world struct {
	seed       uint64
	vocab      []string
	tags       []string
	agents     []agentNS
	subAgents  []agentNS
	teams      []contract.Namespace
	users      []contract.Namespace
	sandbox    contract.Namespace
	repos      []string
	topDirs    []string
	expiries   []time.Time
	workspaces []string
	tools      []string

	// Zipf samplers over the lists above.
	zWords, zTags, zAgents, zUsers, zDirs, zTools *zipfTable
}

type agentNS struct {
	ns   contract.Namespace
	name string
}

var (
	teamNames  = []string{"acme", "globex", "initech", "umbrella"}
	agentNames = []string{"support", "researcher", "writer", "coder", "reviewer", "planner", "triage", "analyst", "translator", "scheduler"}
	headTags   = strings.Fields(`billing infra style oncall security release customer latency search docs
		i18n onboarding incident postgres frontend backend api testing design preference
		runbook finance legal hiring pricing migration performance observability privacy mobile`)
	toolNames = strings.Fields(`web_search read_url read_file grep_repo lookup_invoice lookup_customer create_ticket
		search_logs query_metrics draft_section list_merged_prs browse_memory post_message retry_payment
		run_tests open_pr ask_scout summarize translate schedule_meeting`)
	observedStart = time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC)
	observedSpan  = int64(365 * 24 * 3600)
)

func newWorld(seed int64) *world {
	w := &world{seed: uint64(seed), vocab: buildVocabulary(VocabularySize)}
	w.tags = append(w.tags, headTags...)
	for _, word := range w.vocab[len(headWords) : len(headWords)+270] {
		w.tags = append(w.tags, "topic-"+word)
	}
	for _, t := range teamNames {
		team := contract.MustNamespace("team:" + t)
		w.teams = append(w.teams, team)
		for _, a := range agentNames {
			w.agents = append(w.agents, agentNS{contract.MustNamespace("team:" + t + "/agent:" + a), a})
		}
		w.subAgents = append(w.subAgents,
			agentNS{contract.MustNamespace("team:" + t + "/agent:researcher/agent:scout"), "scout"},
			agentNS{contract.MustNamespace("team:" + t + "/agent:coder/agent:tester"), "tester"})
	}
	for u := 0; u < 60; u++ {
		w.users = append(w.users, contract.MustNamespace("user:u"+strconv.Itoa(100+u)))
	}
	w.sandbox = contract.MustNamespace("team:acme/service:nightly-digest")
	for r := 0; r < 30; r++ {
		w.repos = append(w.repos, teamNames[r%len(teamNames)]+"/"+w.vocab[len(headWords)+300+r])
	}
	w.topDirs = strings.Fields("src internal cmd pkg docs scripts test web migrations deploy")
	for m := 1; m <= 6; m++ {
		w.expiries = append(w.expiries, time.Date(2026, time.Month(m), 1, 0, 0, 0, 0, time.UTC))
	}
	for m := 1; m <= 8; m++ {
		w.expiries = append(w.expiries, time.Date(2027, time.Month(m), 1, 0, 0, 0, 0, time.UTC))
	}
	w.workspaces = strings.Fields("platform support docs research personal data")
	w.tools = toolNames
	w.zWords = newZipfTable(len(w.vocab), 1.07, 2)
	w.zTags = newZipfTable(len(w.tags), 1.2, 1)
	w.zAgents = newZipfTable(len(w.agents), 1.1, 1)
	w.zUsers = newZipfTable(len(w.users), 1.1, 1)
	w.zDirs = newZipfTable(2000, 1.1, 4)
	w.zTools = newZipfTable(len(w.tools), 1.1, 1)
	return w
}

// gen is the random state of one entry: seeded by (seed, i) so that every entry
// is independent of the others.
type gen struct {
	r *rand.Rand
}

func (w *world) gen(i int) *gen {
	// Hash (seed, i) into the generator's state: PCG states that differ only
	// in i would give first outputs that march in lockstep.
	hi := mix64(w.seed ^ mix64(uint64(i)+0x632be59bd9b4e019))
	lo := mix64(uint64(i) ^ mix64(w.seed+0x8cb92ba72f3d8dd7))
	return &gen{r: rand.New(rand.NewPCG(hi, lo))}
}

func (w *world) entry(i, n int) Entry {
	g := w.gen(i)
	e := Entry{SupersededBy: -1}
	roll := g.r.Float64()
	switch {
	case roll < 0.50:
		e.Item = w.learning(g, i)
	case roll < 0.80:
		e.Item = w.document(g, i)
	default:
		e.Item = w.conversation(g, i)
	}
	if IsNeedle(i) {
		w.plantNeedle(g, &e.Item)
	}
	st := g.r.Float64()
	switch {
	case st < 0.10:
		e.Status = contract.StatusCandidate
	case st < 0.12 && i+1 < n:
		e.Status = contract.StatusSuperseded
		e.SupersededBy = i + 1
	default:
		e.Status = contract.StatusActive
	}
	if g.r.Float64() < 0.03 {
		at := w.expiries[g.r.IntN(len(w.expiries))]
		e.ExpiresAt = &at
	}
	return e
}

// text draws between lo and hi words, capitalised and full-stopped in
// sentences of 6 to 14 words.
func (w *world) text(g *gen, lo, hi int) string {
	n := lo + g.r.IntN(hi-lo+1)
	var b strings.Builder
	b.Grow(n * 8)
	sentence := 0
	for k := 0; k < n; k++ {
		word := w.vocab[w.zWords.draw(g.r)]
		if sentence == 0 {
			if k > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strings.ToUpper(word[:1]))
			b.WriteString(word[1:])
		} else {
			b.WriteByte(' ')
			b.WriteString(word)
		}
		sentence++
		if sentence >= 6+g.r.IntN(9) || k == n-1 {
			b.WriteByte('.')
			sentence = 0
		}
	}
	return b.String()
}

func (w *world) observed(g *gen) time.Time {
	return observedStart.Add(time.Duration(g.r.Int64N(observedSpan)) * time.Second)
}

// namespace picks where an entry lives: mostly agents, then users, teams,
// sub-agents, the service sandbox and the root.
func (w *world) namespace(g *gen) (contract.Namespace, string) {
	switch roll := g.r.Float64(); {
	case roll < 0.55:
		a := w.agents[w.zAgents.draw(g.r)]
		return a.ns, a.name
	case roll < 0.65:
		a := w.subAgents[g.r.IntN(len(w.subAgents))]
		return a.ns, a.name
	case roll < 0.75:
		return w.teams[g.r.IntN(len(w.teams))], ""
	case roll < 0.90:
		return w.users[w.zUsers.draw(g.r)], ""
	case roll < 0.95:
		return w.sandbox, "nightly-digest"
	default:
		return contract.Root(), ""
	}
}

func (w *world) tagsFor(g *gen) []string {
	k := 0
	switch roll := g.r.Float64(); {
	case roll < 0.10:
		return nil
	case roll < 0.50:
		k = 1
	case roll < 0.80:
		k = 2
	default:
		k = 3
	}
	out := make([]string, 0, k)
	for len(out) < k {
		t := w.tags[w.zTags.draw(g.r)]
		dup := false
		for _, x := range out {
			dup = dup || x == t
		}
		if !dup {
			out = append(out, t)
		}
	}
	return out
}

func (w *world) baseMeta(g *gen) (contract.MemoryMeta, string) {
	ns, agent := w.namespace(g)
	at := w.observed(g)
	m := contract.MemoryMeta{Namespace: ns, Tags: w.tagsFor(g), ObservedAt: &at}
	if agent != "" {
		m.AgentID = &agent
	}
	if g.r.IntN(3) == 0 {
		ws := w.workspaces[g.r.IntN(len(w.workspaces))]
		m.Workspace = &ws
	}
	return m, agent
}

var learningKindsByWeight = []contract.LearningKind{
	contract.LearningFact, contract.LearningFact, contract.LearningFact, contract.LearningFact,
	contract.LearningPreference, contract.LearningPreference, contract.LearningPreference,
	contract.LearningProcedure, contract.LearningProcedure, contract.LearningCorrection, contract.LearningOther,
}

func (w *world) learning(g *gen, i int) contract.StoreItem {
	meta, agent := w.baseMeta(g)
	if agent != "" && g.r.IntN(3) == 0 {
		thread := "t" + strconv.FormatInt(int64(g.r.IntN(200_000)), 36)
		meta.ThreadID = &thread
		meta.Source = contract.SourceRef{Kind: contract.SourceConversation, ID: &thread}
	} else if agent != "" {
		meta.Source = contract.SourceRef{Kind: contract.SourceAgent, ID: &agent}
	} else {
		meta.Source = contract.SourceRef{Kind: contract.SourceAgent}
	}
	kind := learningKindsByWeight[g.r.IntN(len(learningKindsByWeight))]
	conf := float32(5+g.r.IntN(96)) / 100
	it := contract.Learning(w.text(g, 8, 30), kind, conf, meta)
	// The evidence names the session that produced the learning; it also keeps
	// every learning distinct from every other.
	ev := "session s" + strconv.FormatInt(int64(i), 36)
	it.Evidence = &ev
	return it
}

var extByLanguage = map[string]string{"go": ".go", "python": ".py", "typescript": ".ts", "rust": ".rs", "sql": ".sql", "shell": ".sh", "en": ".md", "de": ".md"}

var docLanguages = []string{"go", "go", "python", "typescript", "rust", "sql", "shell", "en", "en", "en", "de"}

func (w *world) document(g *gen, i int) contract.StoreItem {
	meta, agent := w.baseMeta(g)
	lang := docLanguages[g.r.IntN(len(docLanguages))]
	meta.Language = &lang
	// A folder tree: a top directory, then one to three levels of named dirs.
	var folder strings.Builder
	folder.WriteString(w.topDirs[g.r.IntN(len(w.topDirs))])
	for d := 0; d < 1+g.r.IntN(3); d++ {
		folder.WriteByte('/')
		folder.WriteString(w.vocab[len(headWords)+w.zDirs.draw(g.r)])
	}
	fd := folder.String()
	fp := fd + "/" + w.vocab[len(headWords)+g.r.IntN(5000)] + extByLanguage[lang]
	meta.Folder, meta.FilePath = &fd, &fp
	commit := commitHash(w.seed, i)
	switch roll := g.r.Float64(); {
	case roll < 0.45:
		repo := w.repos[g.r.IntN(len(w.repos))]
		url := "https://github.com/" + repo + "/blob/" + commit + "/" + fp
		meta.Repo, meta.Commit, meta.URL = &repo, &commit, &url
		meta.Source = contract.SourceRef{Kind: contract.SourceGithub, ID: &repo}
	case roll < 0.70:
		repo := w.repos[g.r.IntN(len(w.repos))]
		root := "/srv/checkouts/" + repo
		meta.Repo, meta.Commit = &repo, &commit
		meta.Source = contract.SourceRef{Kind: contract.SourceFolder, ID: &root}
	case roll < 0.80:
		meta.Commit = &commit
		meta.Source = contract.SourceRef{Kind: contract.SourceFile, ID: &fp}
	case roll < 0.88:
		url := "https://docs.example.org/" + strings.ReplaceAll(fd, "/", "-") + "/" + commit[:12]
		meta.URL = &url
		meta.Source = contract.SourceRef{Kind: contract.SourceLink, ID: &url}
	case roll < 0.93:
		feed := "https://blog.example.org/feed-" + strconv.Itoa(g.r.IntN(12)) + ".xml"
		url := "https://blog.example.org/posts/" + commit[:16]
		meta.URL = &url
		meta.Source = contract.SourceRef{Kind: contract.SourceRSS, ID: &feed}
	case roll < 0.97:
		id := []string{"slack:#general", "slack:#eng", "jira:OPS", "linear:WEB", "gmail:inbox"}[g.r.IntN(5)]
		meta.Commit = &commit
		meta.Source = contract.SourceRef{Kind: contract.SourceComposio, ID: &id}
	default:
		id := "wiki-export-2025"
		meta.Commit = &commit
		meta.Source = contract.SourceRef{Kind: contract.SourceImport, ID: &id}
	}
	if agent != "" && g.r.IntN(4) == 0 {
		call := "call-" + commit[:10]
		meta.ToolCall = &contract.ToolCallRef{Name: w.tools[w.zTools.draw(g.r)], ID: &call}
	}
	title := w.text(g, 3, 8)
	title = title[:len(title)-1]
	it := contract.StoreItem{Type: contract.KindDocument, Title: &title, Body: contract.TextBody(w.text(g, 40, 220)), Meta: meta}
	if lang == "en" || lang == "de" {
		mime := "text/markdown"
		it.Mime = &mime
	}
	return it
}

func (w *world) conversation(g *gen, i int) contract.StoreItem {
	meta, agent := w.baseMeta(g)
	// Threads are remembered in chunks: four consecutive indexes share a thread
	// and cover successive turn ranges.
	thread := "th" + strconv.FormatInt(int64(i/4), 36)
	meta.ThreadID = &thread
	meta.Source = contract.SourceRef{Kind: contract.SourceConversation, ID: &thread}
	nTurns := 2 + g.r.IntN(5)
	first := uint32(i%4) * 8
	meta.Turns = &contract.TurnRange{First: first, Last: first + uint32(nTurns) - 1}
	at := *meta.ObservedAt
	turns := make([]contract.Turn, 0, nTurns)
	for k := 0; k < nTurns; k++ {
		role := contract.RoleUser
		if k%2 == 1 {
			role = contract.RoleAssistant
		}
		at = at.Add(time.Duration(5+g.r.IntN(300)) * time.Second)
		t := at
		turn := contract.Turn{Role: role, Text: w.text(g, 5, 25), At: &t}
		if role == contract.RoleAssistant && g.r.IntN(3) == 0 {
			id := "call_" + strconv.FormatUint(g.r.Uint64()>>20, 36)
			ref := contract.ToolCallRef{Name: w.tools[w.zTools.draw(g.r)], ID: &id}
			turn.ToolCalls = []contract.ToolCallRef{ref}
			if meta.ToolCall == nil {
				c := ref
				meta.ToolCall = &c
			}
		}
		turns = append(turns, turn)
	}
	if agent == "" {
		a := agentNames[g.r.IntN(len(agentNames))]
		meta.AgentID = &a
	}
	return contract.Conversation(turns, meta)
}

// plantNeedle puts RareNeedle into the entry's text at a random word boundary.
func (w *world) plantNeedle(g *gen, it *contract.StoreItem) {
	insert := func(s string) string {
		words := strings.Split(s, " ")
		k := g.r.IntN(len(words) + 1)
		words = append(words[:k], append([]string{RareNeedle}, words[k:]...)...)
		return strings.Join(words, " ")
	}
	switch it.Type {
	case contract.KindLearning:
		it.Text = insert(it.Text)
	case contract.KindDocument:
		it.Body = contract.TextBody(insert(it.Body.Text))
	case contract.KindConversation:
		k := g.r.IntN(len(it.Turns))
		it.Turns[k].Text = insert(it.Turns[k].Text)
	}
}

// commitHash is a 40-hex commit id unique to (seed, i).
func commitHash(seed uint64, i int) string {
	const hexd = "0123456789abcdef"
	var b [40]byte
	a := mix64(uint64(i) ^ 0x5bd1e9955bd1e995)
	c := mix64(seed + 0x243f6a8885a308d3)
	d := mix64(a ^ c)
	for k, v := range [3]uint64{a, c, d} {
		for j := 0; j < 16 && k*16+j < 40; j++ {
			b[k*16+j] = hexd[(v>>(4*j))&15]
		}
	}
	return string(b[:])
}
