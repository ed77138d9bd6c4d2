// Package curate is the curation view of the mnemo TUI: the repeats and
// conflicts of the current scope (engine/curate's clusters, found by the
// shell in the background), largest and most recent first, and one cluster's
// members side by side with the words that differ marked, for a person to
// resolve in one key: keep the newest, keep the most confident, keep the one
// under the cursor, forget a member, or dismiss the cluster; u undoes.
package curate

import (
	"fmt"
	"strings"
	"unicode"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"mnemo/contract"
	"mnemo/engine/curate"
	"mnemo/ui/common"
	"mnemo/ui/components"
)

// minColumn is the narrowest a member's column gets; fewer columns show
// when the screen is narrower, and h/l scroll through the rest.
const minColumn = 26

// Model is the curation view.
type Model struct {
	c      *common.Common
	width  int
	height int

	// seen and scopeGen are the clustering and scope the view was built from.
	seen     *common.Clusters
	scopeGen int
	// clusters are the clusters of the current scope: each with only its
	// members in scope, two at least.
	clusters []curate.Cluster
	records  int
	list     components.List

	// open is set while one cluster's members show; member is the one under
	// the cursor and first the leftmost column shown.
	open   bool
	openAt string // the open cluster's key, kept across a rebuild
	member int
	first  int
}

// New returns the curation view.
func New(c *common.Common) *Model { return &Model{c: c, scopeGen: -1} }

// Init does nothing: the shell clusters in the background.
func (m *Model) Init() tea.Cmd { return nil }

// Activate rebuilds the list when the clustering or the scope changed.
func (m *Model) Activate() tea.Cmd {
	m.sync()
	return nil
}

// Total is how many records the scope's clusters hold.
func (m *Model) Total() int {
	if m.c.Clusters == nil {
		return -1
	}
	n := 0
	for _, c := range m.clusters {
		n += len(c.Members)
	}
	return n
}

// Clusters are the clusters listed (tests).
func (m *Model) Clusters() []curate.Cluster { return m.clusters }

// Capturing is always false: the view has no text field.
func (m *Model) Capturing() bool { return false }

// Busy is empty: the shell's clustering shows its own task.
func (m *Model) Busy() string { return "" }

// SetSize sets the pane size.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = w, h
	m.list.SetHeight(h - 2)
	m.rebuild()
}

// sync rebuilds from the shell's latest clustering under the current scope.
func (m *Model) sync() {
	if m.seen == m.c.Clusters && m.scopeGen == m.c.ScopeGen {
		return
	}
	m.seen, m.scopeGen = m.c.Clusters, m.c.ScopeGen
	m.clusters, m.records = nil, 0
	if cl := m.c.Clusters; cl != nil {
		q := contract.BrowseQuery{Filter: m.c.Filter()}
		for _, c := range cl.List {
			in := c
			in.Members = nil
			for _, r := range c.Members {
				if q.Matches(&r) {
					in.Members = append(in.Members, r)
				}
			}
			if len(in.Members) >= 2 {
				m.clusters = append(m.clusters, in)
				m.records += len(in.Members)
			}
		}
	}
	if m.open {
		if i := m.indexOf(m.openAt); i >= 0 {
			m.list.Cursor = i
		} else {
			// resolved or gone: the next cluster takes its place
			m.openCluster()
		}
	}
	m.rebuild()
}

func (m *Model) indexOf(k string) int {
	for i, c := range m.clusters {
		if c.Key == k {
			return i
		}
	}
	return -1
}

// current is the cluster under the cursor (false when there is none).
func (m *Model) current() (curate.Cluster, bool) {
	if m.list.Cursor < 0 || m.list.Cursor >= len(m.clusters) {
		return curate.Cluster{}, false
	}
	return m.clusters[m.list.Cursor], true
}

func (m *Model) openCluster() {
	c, ok := m.current()
	if !ok {
		m.open = false
		return
	}
	m.open, m.openAt, m.member, m.first = true, c.Key, 0, 0
}

// Update handles keys and the shell's news.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case common.ClustersMsg:
		m.sync()
	case common.DataChangedMsg:
		// the shell clusters again; what is shown stays until it answers
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return nil
}

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := &m.c.Keys
	c, ok := m.current()
	if m.open {
		switch {
		case key.Matches(msg, k.Back):
			m.open = false
			return nil
		case key.Matches(msg, k.Up), key.Matches(msg, k.PrevColumn):
			m.moveMember(-1)
			return nil
		case key.Matches(msg, k.Down), key.Matches(msg, k.NextColumn):
			m.moveMember(1)
			return nil
		case key.Matches(msg, k.Open):
			if ok && m.member < len(c.Members) {
				r := c.Members[m.member]
				return func() tea.Msg { return common.OpenRecordMsg{ID: r.ID, Record: &r} }
			}
			return nil
		case key.Matches(msg, k.KeepThis):
			if !ok || m.c.ReadOnly || m.member >= len(c.Members) {
				return nil
			}
			keep := c.Members[m.member]
			return m.resolve(curate.StepKeeping(c, keep.ID), fmt.Sprintf("kept the one chosen of %d", len(c.Members)))
		}
		if ok && m.member < len(c.Members) {
			r := c.Members[m.member]
			if cmd, handled := common.RecordKey(m.c, msg, r.ID, r.Text); handled {
				return cmd
			}
		}
	} else {
		if m.list.MoveByKey(k, msg) {
			return nil
		}
		switch {
		case key.Matches(msg, k.Open):
			m.openCluster()
			return nil
		}
	}
	if !ok || m.c.ReadOnly {
		return nil
	}
	switch {
	case key.Matches(msg, k.KeepNewest):
		return m.resolve(curate.StepKeeping(c, curate.Keeper(c, curate.KeepNewest).ID), fmt.Sprintf("kept the newest of %d", len(c.Members)))
	case key.Matches(msg, k.KeepConfident):
		return m.resolve(curate.StepKeeping(c, curate.Keeper(c, curate.KeepConfident).ID), fmt.Sprintf("kept the most confident of %d", len(c.Members)))
	case key.Matches(msg, k.Dismiss):
		return func() tea.Msg { return common.DismissMsg{Cluster: c} }
	}
	return nil
}

func (m *Model) resolve(step curate.Step, what string) tea.Cmd {
	return func() tea.Msg { return common.ResolveMsg{Steps: []curate.Step{step}, What: what} }
}

func (m *Model) moveMember(d int) {
	c, ok := m.current()
	if !ok {
		return
	}
	m.member = max(0, min(len(c.Members)-1, m.member+d))
	per := m.columns(len(c.Members))
	if m.member < m.first {
		m.first = m.member
	}
	if m.member >= m.first+per {
		m.first = m.member - per + 1
	}
}

// columns is how many members show side by side.
func (m *Model) columns(n int) int { return max(1, min(n, m.width/minColumn)) }

// rebuild renders the cluster rows (on data, scope or size change).
func (m *Model) rebuild() {
	st := &m.c.Styles
	inner := m.width - 2
	if inner < 10 {
		return
	}
	now := m.c.Now()
	rows := make([]components.Row, len(m.clusters))
	for i, c := range m.clusters {
		rel := "repeat"
		if c.Conflict {
			rel = "conflict"
		}
		head := fmt.Sprintf("%3d  %-8s ", len(c.Members), rel)
		diff := ""
		if c.Conflict && len(c.Differences) > 0 {
			diff = c.Differences[0]
			if len(c.Differences) > 1 {
				diff += " …"
			}
			diff += " · "
		}
		age := " " + common.PadLeft(common.Ago(now, c.Latest), 7)
		room := inner - common.Width(head) - common.Width(age)
		text := common.Fit(diff+common.OneLine(c.Members[0].Text), max(0, room))
		relStyle := st.Dim
		if c.Conflict {
			relStyle = st.Warning
		}
		rows[i] = components.Row{
			Plain:  head + text + age,
			Styled: st.Number.Render(fmt.Sprintf("%3d", len(c.Members))) + "  " + relStyle.Render(fmt.Sprintf("%-8s", rel)) + " " + st.Row.Render(text) + st.Dim.Render(age),
		}
	}
	m.list.SetRows(rows)
}

// View draws the cluster list, or the open cluster's members side by side.
func (m *Model) View() string {
	st := &m.c.Styles
	if m.width < 10 || m.height < 4 {
		return ""
	}
	if m.open {
		if c, ok := m.current(); ok {
			return m.viewCluster(st, c)
		}
	}
	title := "Curate"
	var lines []string
	switch cl := m.c.Clusters; {
	case cl == nil:
		lines = []string{st.Dim.Render(common.Fit(" looking for repeats and conflicts…", m.width-2))}
	case cl.Err != nil:
		lines = []string{st.Warning.Render(common.Fit(" clustering failed: "+cl.Err.Error(), m.width-2))}
	case cl.TooMany > 0 && cl.Pending != "":
		what := "reading its records"
		if cl.Pending == "clustering" {
			what = "clustering its records"
		}
		lines = wrapped(st, fmt.Sprintf("The store is being clustered in the background: %s, %s of %s. Its clusters show here when it is done. Meanwhile drill into a narrower scope (at most %s records) to cluster that.", what, common.Thousands(int(cl.PendingDone)), common.Thousands(int(cl.PendingTotal)), common.Thousands(curate.MaxLiveScope)), m.width-2)
	case cl.TooMany > 0:
		lines = wrapped(st, fmt.Sprintf("This scope holds %s records, more than the TUI clusters at once. Drill into a narrower scope (a namespace, an agent, a thread) and its clusters show here; or run `mnemo clusters --filter JSON`.", common.Thousands(cl.TooMany)), m.width-2)
	case len(m.clusters) == 0:
		msg := "No repeats or conflicts in this scope."
		if cl.Scoped || m.c.Scope.IsRoot() {
			msg = fmt.Sprintf("No repeats or conflicts in this scope (%s).", common.Plural(cl.Records, "record", "records"))
		}
		if cl.Dismissed > 0 {
			msg += fmt.Sprintf(" %s dismissed.", common.Plural(cl.Dismissed, "cluster is", "clusters are"))
		}
		lines = wrapped(st, msg, m.width-2)
	default:
		conflicts := 0
		for _, c := range m.clusters {
			if c.Conflict {
				conflicts++
			}
		}
		title = fmt.Sprintf("Curate  %s · %s · %s", common.Plural(len(m.clusters), "cluster", "clusters"),
			common.Plural(conflicts, "conflict", "conflicts"), common.Plural(m.records, "record", "records"))
		lines = m.list.Lines(st, true, m.width-2)
	}
	return components.Box(st, title, lines, m.width, m.height, true)
}

func wrapped(st *common.Styles, text string, width int) []string {
	var out []string
	for _, l := range strings.Split(common.Wrap(text, max(1, width-2)), "\n") {
		out = append(out, st.Row.Render(common.Fit(" "+l, width)))
	}
	return out
}

// viewCluster draws the members side by side, the one under the cursor
// framed as focused, the words that differ from another member marked.
func (m *Model) viewCluster(st *common.Styles, c curate.Cluster) string {
	rel := "repeat"
	if c.Conflict {
		rel = "conflict"
		if len(c.Differences) > 0 {
			rel += ": " + strings.Join(c.Differences[:min(2, len(c.Differences))], ", ")
			if len(c.Differences) > 2 {
				rel += ", …"
			}
		}
	}
	head := fmt.Sprintf(" Cluster %d of %d · %s · %s · %s", m.list.Cursor+1, len(m.clusters), rel, c.Kind, common.Plural(len(c.Members), "member", "members"))
	per := m.columns(len(c.Members))
	more := ""
	if len(c.Members) > per {
		more = fmt.Sprintf("  (%d–%d of %d, h/l)", m.first+1, min(len(c.Members), m.first+per), len(c.Members))
	}
	lines := []string{st.Scope.Render(common.Fit(head+more, m.width))}
	colW := m.width / per
	h := m.height - 1
	words := make([]map[string]bool, len(c.Members))
	for i, r := range c.Members {
		words[i] = wordSet(r.Text)
	}
	boxes := make([][]string, 0, per)
	for i := m.first; i < min(len(c.Members), m.first+per); i++ {
		w := colW
		if i == m.first+per-1 || i == len(c.Members)-1 {
			w = m.width - colW*(i-m.first)
		}
		boxes = append(boxes, strings.Split(m.memberBox(st, c, i, words, w, h), "\n"))
	}
	for row := 0; row < h; row++ {
		var b strings.Builder
		for _, box := range boxes {
			if row < len(box) {
				b.WriteString(box[row])
			}
		}
		lines = append(lines, b.String())
	}
	return strings.Join(lines, "\n")
}

func (m *Model) memberBox(st *common.Styles, c curate.Cluster, i int, words []map[string]bool, w, h int) string {
	r := c.Members[i]
	inner := w - 2
	title := fmt.Sprintf("%d", i+1)
	if i == m.member {
		title = st.Glyphs.Cursor + " " + title
	}
	if i == 0 {
		title += " newest"
	}
	if keep := curate.Keeper(c, curate.KeepConfident); keep.ID == r.ID && r.Confidence != nil {
		title += " most confident"
	}
	if c.Side != nil {
		// which value the member holds: members with one letter agree
		title += " · " + sideName(c.SideOf(r.ID))
	}
	var meta []string
	meta = append(meta, curate.When(r).UTC().Format("2006-01-02 15:04")+" · "+string(r.Status))
	src := "source " + string(r.Meta.SourceKindOf())
	if r.Meta.AgentID != nil {
		src += " · agent " + *r.Meta.AgentID
	}
	meta = append(meta, src)
	conf := "confidence —"
	if r.Confidence != nil {
		conf = fmt.Sprintf("confidence %.2f", float32(*r.Confidence))
	}
	meta = append(meta, conf+" · "+r.Meta.Namespace.String())
	var lines []string
	for _, l := range meta {
		lines = append(lines, st.Dim.Render(common.Fit(" "+l, inner)))
	}
	lines = append(lines, common.Fit("", inner))
	for _, l := range strings.Split(common.Wrap(r.Text, max(1, inner-2)), "\n") {
		lines = append(lines, " "+markDiffs(st, l, words, i)+strings.Repeat(" ", max(0, inner-1-common.Width(l))))
	}
	return components.Box(st, title, lines, w, h, i == m.member)
}

// sideName names a side of a conflict: A is the newest member's value, B,
// C, … the others.
func sideName(side int) string {
	if side < 26 {
		return string(rune('A' + side))
	}
	return fmt.Sprintf("#%d", side+1)
}

// markDiffs draws a line of member i's text with each word that some other
// member lacks marked (the match style, never colour alone: reverse video).
func markDiffs(st *common.Styles, line string, words []map[string]bool, i int) string {
	var b strings.Builder
	for j, w := range strings.Split(line, " ") {
		if j > 0 {
			b.WriteByte(' ')
		}
		n := normWord(w)
		differs := false
		if n != "" {
			for o, set := range words {
				if o != i && !set[n] {
					differs = true
					break
				}
			}
		}
		if differs {
			b.WriteString(st.Match.Render(w))
		} else {
			b.WriteString(st.Row.Render(w))
		}
	}
	return b.String()
}

func wordSet(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.Fields(text) {
		if n := normWord(w); n != "" {
			out[n] = true
		}
	}
	return out
}

// normWord is a word as compared: lower case, without the punctuation
// around it.
func normWord(w string) string {
	return strings.ToLower(strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }))
}

// ShortHelp lists the curation keys.
func (m *Model) ShortHelp() []key.Binding {
	k := &m.c.Keys
	switch {
	case m.open && m.c.ReadOnly:
		return []key.Binding{k.NextColumn, k.PrevColumn, k.Open, k.CopyText, k.Back, k.Help}
	case m.open:
		return []key.Binding{k.KeepNewest, k.KeepThis, k.Forget, k.Dismiss, k.Undo, k.KeepConfident, k.NextColumn, k.Open, k.Back}
	case m.c.ReadOnly:
		return []key.Binding{k.Open, k.Help, k.Quit}
	}
	return []key.Binding{k.Open, k.KeepNewest, k.Dismiss, k.Undo, k.KeepConfident, k.Help}
}
