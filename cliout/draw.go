package cliout

// The human form of every command's answer (screen.go has the rule). Each
// Draw function reads the same value the JSON form prints.

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"charm.land/lipgloss/v2"

	"mnemo/backup"
	"mnemo/config"
	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/curate"
	"mnemo/importer"
	"mnemo/ingest"
	"mnemo/server/audit"
	"mnemo/server/wire"
	"mnemo/storecopy"
	"mnemo/storeopen"
	"mnemo/ui/common"
)

// hitColumns are the columns of a table of hits or records.
type hitColumns struct {
	rank, score, status, tags, conf, updated bool
}

// recordRow is what a row of a records table shows.
type recordRow struct {
	id, text   string
	kind       contract.ItemKind
	meta       contract.MemoryMeta
	confidence *contract.F32
	score      contract.F32
	status     contract.Status
	updated    string
}

func hitRow(h contract.Hit) recordRow {
	return recordRow{id: h.ID, text: h.Text, kind: h.Kind, meta: h.Meta, confidence: h.Confidence, score: h.Score}
}

// Records adds a table of records: short id, kind, namespace, text first,
// and the columns cols asks for.
func (s *Screen) Records(rows []recordRow, cols hitColumns) {
	st := s.St
	var header []Column
	if cols.rank {
		header = append(header, Column{Title: "#", Right: true, Drop: 1})
	}
	if cols.score {
		header = append(header, Column{Title: "score", Right: true, Drop: 2})
	}
	header = append(header, Column{Title: "id"})
	if cols.status {
		header = append(header, Column{Title: "status"})
	}
	header = append(header, Column{Title: "kind"}, Column{Title: "namespace", Shrink: true})
	if cols.tags {
		header = append(header, Column{Title: "tags", Shrink: true, Drop: 2})
	}
	header = append(header, Column{Title: "text", Flex: true})
	if cols.conf {
		header = append(header, Column{Title: "conf", Right: true, Drop: 4})
	}
	if cols.updated {
		header = append(header, Column{Title: "updated", Right: true, Drop: 3})
	}
	cells := make([][]Cell, len(rows))
	for i, r := range rows {
		textStyle := st.Row
		switch r.status {
		case contract.StatusCandidate:
			textStyle = st.Candidate
		case contract.StatusSuperseded:
			textStyle = st.Superseded
		}
		var row []Cell
		if cols.rank {
			row = append(row, Cell{fmt.Sprint(i + 1), st.Dim})
		}
		if cols.score {
			row = append(row, Cell{fmt.Sprintf("%.3f", float32(r.score)), st.Number})
		}
		row = append(row, Cell{common.ShortID(r.id), st.Dim})
		if cols.status {
			row = append(row, Cell{StatusWord(st.Glyphs, r.status), textStyle})
		}
		row = append(row, Cell{string(r.kind), st.Kind}, Cell{r.meta.Namespace.String(), st.Dim})
		if cols.tags {
			row = append(row, Cell{strings.Join(r.meta.Tags, ","), st.Scope})
		}
		row = append(row, Cell{common.OneLine(r.text), textStyle})
		if cols.conf {
			row = append(row, Cell{Conf(r.confidence), st.Number})
		}
		if cols.updated {
			row = append(row, Cell{r.updated, st.Dim})
		}
		cells[i] = row
	}
	s.Table(header, cells)
}

// StatusWord shows a status as a glyph and a word, so it never rests on colour
// (as the TUI's browse view does).
func StatusWord(g common.Glyphs, status contract.Status) string {
	switch status {
	case contract.StatusCandidate:
		return g.Candidate + " candidate"
	case contract.StatusSuperseded:
		return g.Superseded + " superseded"
	}
	return g.Active + " active"
}

// Note adds dim lines of parts joined by " · " (totals, next-page hints),
// breaking between parts to fit the Screen and never inside one, so a cursor
// stays whole and copies whole.
func (s *Screen) Note(parts ...string) {
	line := ""
	for _, p := range parts {
		p = common.Printable(p, false)
		switch {
		case line == "":
			line = p
		case common.Width(line+" · "+p) > s.width:
			s.Line(s.St.Dim.Render(line))
			line = p
		default:
			line += " · " + p
		}
	}
	if line != "" {
		s.Line(s.St.Dim.Render(line))
	}
}

// None says a listing is empty.
func (s *Screen) None(what string) { s.Line(s.St.Missing.Render("no " + what)) }

// DrawList draws the human form of the list answer.
func DrawList(s *Screen, page contract.ListPage) {
	if len(page.Items) == 0 && page.NextCursor == nil {
		s.None("items")
		return
	}
	rows := make([]recordRow, len(page.Items))
	for i, h := range page.Items {
		rows[i] = hitRow(h)
	}
	s.Records(rows, hitColumns{tags: true, conf: true})
	parts := []string{Counted(len(page.Items), "item", "items")}
	if page.NextCursor != nil {
		parts = append(parts, "more: --cursor "+*page.NextCursor)
	}
	s.Note(parts...)
}

// DrawFetch draws the human form of the fetch answer.
func DrawFetch(s *Screen, page contract.FetchPage, mode contract.FetchMode) {
	if len(page.Hits) == 0 && len(page.Beliefs) == 0 {
		s.None("hits")
		return
	}
	rows := make([]recordRow, len(page.Hits))
	for i, h := range page.Hits {
		rows[i] = hitRow(h)
	}
	s.Records(rows, hitColumns{rank: true, score: true, conf: true})
	parts := []string{Counted(len(page.Hits), "hit", "hits"), string(mode)}
	if page.NextCursor != nil {
		parts = append(parts, "more: --cursor "+*page.NextCursor)
	}
	s.Note(parts...)
	if len(page.Beliefs) > 0 {
		s.Blank()
		s.Line(s.St.Heading.Render("Beliefs"))
		beliefs := make([]recordRow, len(page.Beliefs))
		for i, h := range page.Beliefs {
			beliefs[i] = hitRow(h)
		}
		s.Records(beliefs, hitColumns{score: true, conf: true})
	}
}

// DrawRecall draws the human form of the recall answer.
func DrawRecall(s *Screen, answer contract.RecallAnswer) {
	text := strings.TrimSpace(answer.Answer)
	if text == "" {
		s.None("answer")
	} else {
		s.Wrapped(text, "")
	}
	if len(answer.Citations) > 0 {
		s.Blank()
		s.Line(s.St.Heading.Render("Sources"))
		cells := make([][]Cell, len(answer.Citations))
		for i, c := range answer.Citations {
			cells[i] = []Cell{
				{fmt.Sprintf("[%d]", i+1), s.St.Dim},
				{common.ShortID(c.ID), s.St.Dim},
				{string(c.Kind), s.St.Kind},
				{c.Meta.Namespace.String(), s.St.Dim},
				{common.OneLine(c.Snippet), s.St.Row},
			}
		}
		s.Table([]Column{{Title: "", Right: true}, {Title: "id"}, {Title: "kind", Drop: 1}, {Title: "namespace", Shrink: true, Drop: 2}, {Title: "snippet", Flex: true}}, cells)
	}
	if answer.Model != nil {
		s.Note("answered by " + *answer.Model)
	}
}

// DrawGet prints each hit whole: a heading line with its id and metadata,
// then its text wrapped to the terminal.
func DrawGet(s *Screen, hits []contract.Hit) {
	if len(hits) == 0 {
		s.None("records with these ids")
		return
	}
	for i, h := range hits {
		if i > 0 {
			s.Blank()
		}
		s.Line(s.St.Count.Render(h.ID), "  ", s.St.Kind.Render(string(h.Kind)), "  ", s.St.Dim.Render(h.Meta.Namespace.String()))
		var facts []string
		if len(h.Meta.Tags) > 0 {
			facts = append(facts, "tags "+strings.Join(h.Meta.Tags, ", "))
		}
		src := string(h.Meta.SourceKindOf())
		if h.Meta.Source.ID != nil && *h.Meta.Source.ID != "" {
			src += " " + *h.Meta.Source.ID
		}
		facts = append(facts, "source "+src)
		if h.Confidence != nil {
			facts = append(facts, "confidence "+Conf(h.Confidence))
		}
		if h.Meta.ObservedAt != nil {
			facts = append(facts, "observed "+s.Ago(*h.Meta.ObservedAt))
		}
		s.Note(facts...)
		s.Wrapped(h.Text, "  ")
	}
}

// DrawBrowse draws the human form of the browse answer.
func DrawBrowse(s *Screen, page contract.BrowsePage, query []byte, counts string) {
	if len(page.Records) == 0 {
		s.None("records")
		if page.Total > 0 {
			s.Note(fmt.Sprintf("%s in all (%s); this page is past the end", Counted(page.Total, "record", "records"), counts))
		}
		return
	}
	rows := make([]recordRow, len(page.Records))
	for i, r := range page.Records {
		rows[i] = recordRow{id: r.ID, text: r.Text, kind: r.Kind, meta: r.Meta, confidence: r.Confidence,
			status: r.Status, updated: s.Ago(r.UpdatedAt)}
	}
	s.Records(rows, hitColumns{status: true, conf: true, updated: true})
	s.Note(fmt.Sprintf("%s of %s", Count(len(page.Records)), Counted(page.Total, "record", "records")), counts)
	if page.Continuation != nil {
		// One line however long, so it pastes back as one command.
		s.Line(s.St.Dim.Render("next page: mnemo browse --query " + ShellQuote(withCursor(query, *page.Continuation))))
	}
}

// withCursor is the browse query with "cursor" set, for the next page.
func withCursor(query []byte, cursor string) string {
	obj := map[string]json.RawMessage{}
	_ = json.Unmarshal(query, &obj)
	delete(obj, "offset")
	c, _ := json.Marshal(cursor)
	obj["cursor"] = c
	b, _ := json.Marshal(obj)
	return string(b)
}

// ShellQuote quotes s for a POSIX shell.
func ShellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// DrawExplore prints the buckets with their counts, share of the total and a
// bar, then the total, the records without a value and what --limit left out.
func DrawExplore(s *Screen, page contract.ExplorePage) {
	if len(page.Buckets) == 0 {
		s.None(string(page.Facet) + " values")
	} else {
		var top uint64
		for _, b := range page.Buckets {
			top = max(top, b.Count)
		}
		const barWidth = 20
		cells := make([][]Cell, len(page.Buckets))
		for i, b := range page.Buckets {
			share := ""
			if page.Total > 0 {
				share = fmt.Sprintf("%.0f%%", 100*float64(b.Count)/float64(page.Total))
			}
			n := 0
			if top > 0 {
				n = max(1, int(float64(barWidth)*float64(b.Count)/float64(top)+0.5))
			}
			value := b.Value
			if value == "" {
				value = s.St.Glyphs.None
			}
			cells[i] = []Cell{
				{value, s.St.Row},
				{Count(b.Count), s.St.Count},
				{share, s.St.Dim},
				{strings.Repeat(s.St.Glyphs.Bar, n), s.St.Bar},
			}
		}
		s.Table([]Column{{Title: string(page.Facet), Flex: true}, {Title: "count", Right: true}, {Title: "share", Right: true, Drop: 1}, {Title: "", Drop: 2}}, cells)
	}
	parts := []string{Counted(page.Total, "record", "records")}
	if page.Missing > 0 {
		parts = append(parts, fmt.Sprintf("%s without a %s", Count(page.Missing), page.Facet))
	}
	if page.MoreBuckets > 0 {
		parts = append(parts, fmt.Sprintf("%s more %s (raise --limit)", Count(page.MoreBuckets), Plural(int(page.MoreBuckets), "value", "values")))
	}
	if page.Truncated {
		parts = append(parts, "counts cut short by the engine")
	}
	s.Note(parts...)
}

// KeyValues adds aligned "key  value" lines.
func (s *Screen) KeyValues(pairs [][2]string) {
	w := 0
	for _, p := range pairs {
		w = max(w, common.Width(p[0]))
	}
	for _, p := range pairs {
		s.Line(s.St.Label.Render(common.Fit(p[0], w)), "  ", p[1])
	}
}

// DrawInfo draws the human form of the info answer.
func DrawInfo(s *Screen, r Info) {
	d := r.Descriptor
	modes := make([]string, len(d.FetchModes))
	for i, m := range d.FetchModes {
		modes[i] = string(m)
	}
	index := s.St.Dim.Render("none")
	if r.Index != nil {
		index = healthStyle(s, r.Index.State).Render(r.Index.State) + s.St.Dim.Render(" · applied seq "+Count(int(r.Index.AppliedSeq)))
		if r.Index.Total > 0 {
			index += s.St.Dim.Render(fmt.Sprintf(" · rebuilding %s of %s", Count(r.Index.Done), Count(r.Index.Total)))
		}
		if r.Index.Behind > 0 {
			index += s.St.Dim.Render(fmt.Sprintf(" · %s writes behind", Count(int(r.Index.Behind))))
		}
	}
	store := r.Store
	if r.HeldBy > 0 {
		store += s.St.Dim.Render(fmt.Sprintf(" · held by pid %d", r.HeldBy))
	}
	s.KeyValues([][2]string{
		{"version", r.Version},
		{"store", store},
		{"records", s.St.Count.Render(Count(r.Records)) + s.St.Dim.Render(": "+r.Counts.Words(Count[int]))},
		{"index", index},
		{"engine", d.Label},
		{"fetch modes", strings.Join(modes, ", ")},
		{"consolidation", string(d.Consolidation)},
		{"config", r.Config},
		{"log", r.Log},
	})
	drawSettings(s, r.Settings)
}

// drawSettings lists the settings somebody set, each with where it came from;
// one at its default goes unsaid.
func drawSettings(s *Screen, settings map[string]config.Setting) {
	keys := config.NonDefault(settings)
	if len(keys) == 0 {
		return
	}
	s.Blank()
	cells := make([][]Cell, len(keys))
	for i, k := range keys {
		cells[i] = []Cell{{k, s.St.Label}, {settings[k].Value, s.St.Row}, {settings[k].Source, s.St.Dim}}
	}
	s.Table([]Column{{Title: "config"}, {Title: "value"}, {Title: "from", Flex: true}}, cells)
}

// healthStyle colours a state word: ready and ok green, the rest amber or red.
func healthStyle(s *Screen, state string) lipgloss.Style {
	switch state {
	case "ok", "ready":
		return s.St.Toast
	case "down":
		return s.St.Error
	}
	return s.St.Warning
}

// DrawHealth draws the human form of the health answer.
func DrawHealth(s *Screen, h contract.Health) {
	line := healthStyle(s, string(h.State)).Render(string(h.State))
	if h.Reason != "" {
		line += ": " + common.Printable(h.Reason, false)
	}
	s.Line(line)
}

// DrawAudit draws the human form of the audit answer.
func DrawAudit(s *Screen, events []audit.Event) {
	if len(events) == 0 {
		s.None("audit events")
		return
	}
	refused := 0
	var reasons []string
	cells := make([][]Cell, len(events))
	for i, ev := range events {
		target := ""
		switch {
		case len(ev.IDs) > 0:
			short := make([]string, len(ev.IDs))
			for j, id := range ev.IDs {
				short[j] = common.ShortID(id)
			}
			target = strings.Join(short, ",")
		case ev.Filter != nil:
			b, _ := json.Marshal(ev.Filter)
			target = "filter " + string(b)
		case ev.Reach != nil:
			b, _ := json.Marshal(ev.Reach)
			target = "reach " + string(b)
		}
		outcome := Count(ev.Count)
		if ev.Skipped > 0 {
			outcome += fmt.Sprintf(" (%s skipped)", Count(ev.Skipped))
		}
		outStyle := s.St.Number
		if ev.Refused != "" {
			refused++
			outcome, outStyle = "refused", s.St.Error
			// The reason in full below the table: a Column would cut it.
			reasons = append(reasons, fmt.Sprintf("%s %s %s refused: %s", s.Ago(ev.At), ev.Principal, ev.Op, common.Printable(ev.Refused, false)))
		}
		detail := target
		if ev.Detail != "" {
			detail = strings.TrimSpace(detail + " " + ev.Detail)
		}
		cells[i] = []Cell{
			{s.Ago(ev.At), s.St.Dim},
			{ev.Principal, s.St.Row},
			{ev.Role, s.St.Dim},
			{ev.Via, s.St.Dim},
			{ev.Op, s.St.Kind},
			{outcome, outStyle},
			{detail, s.St.Dim},
		}
	}
	s.Table([]Column{{Title: "when", Right: true}, {Title: "principal", Shrink: true}, {Title: "role", Drop: 2}, {Title: "via", Drop: 1}, {Title: "op"}, {Title: "changed", Shrink: true}, {Title: "target", Flex: true}}, cells)
	for _, r := range reasons {
		s.Wrapped(r, "  ")
	}
	parts := []string{Counted(len(events), "event", "events")}
	if refused > 0 {
		parts = append(parts, Counted(refused, "refusal", "refusals"))
	}
	parts = append(parts, "from "+contract.FormatMillis(events[0].At))
	s.Note(parts...)
}

// DrawImport is import's and demo's summary; holds, when known, is what the
// store holds afterwards, in the words info and the TUI use.
func DrawImport(s *Screen, sum importer.Summary, holds *contract.RecordCounts) {
	parts := []string{
		s.St.Toast.Render("stored " + Counted(sum.Stored, "new record", "new records")),
		"replayed " + Count(sum.Replayed) + " already held",
	}
	failed := "failed " + Count(sum.Failed)
	if sum.Failed > 0 {
		failed = s.St.Error.Render(failed)
	}
	s.Line(strings.Join(append(parts, failed), ", "))
	if holds != nil {
		s.Line(s.St.Dim.Render("the store now holds " + holds.Words(Count[int])))
	}
	if len(sum.Errors) > 0 {
		cells := make([][]Cell, len(sum.Errors))
		for i, e := range sum.Errors {
			cells[i] = []Cell{{Count(e.Line), s.St.Number}, {e.Error, s.St.Row}}
		}
		s.Table([]Column{{Title: "line", Right: true}, {Title: "error", Flex: true}}, cells)
		if len(sum.Errors) < sum.Failed {
			s.Note(fmt.Sprintf("%s more failed lines not listed", Count(sum.Failed-len(sum.Errors))))
		}
	}
}

// DrawForget draws the human form of the forget answer.
func DrawForget(s *Screen, r wire.ForgetAnswer, skipWhy string) {
	if r.Forgotten == 0 {
		s.Line("nothing was forgotten")
	} else {
		s.Line(s.St.Warning.Render("forgot " + Counted(r.Forgotten, "record", "records")))
	}
	if r.Skipped > 0 {
		s.Note("skipped " + Counted(r.Skipped, "id", "ids") + ": " + skipWhy)
	}
}

// DrawDryRun is forget --dry-run's answer.
func DrawDryRun(s *Screen, r DryRun) {
	s.Line("would forget " + s.St.Count.Render(Counted(r.WouldForget, "record", "records")) + s.St.Dim.Render(" (dry run: nothing was removed)"))
	for _, id := range r.IDs {
		s.Line("  " + id)
	}
	DrawDryRunList(s, r)
}

// DrawDryRunList lists the first records a forget by filter would remove
// (text, namespace, date) and how many more.
func DrawDryRunList(s *Screen, r DryRun) {
	if len(r.First) == 0 {
		return
	}
	cells := make([][]Cell, len(r.First))
	for i, x := range r.First {
		text, _, _ := strings.Cut(strings.TrimSpace(x.Text), "\n")
		cells[i] = []Cell{{common.Printable(text, false), s.St.Row}, {x.Namespace.String(), s.St.Dim}, {strings.TrimSuffix(x.CreatedAt[:min(len(x.CreatedAt), 10)], "T"), s.St.Dim}}
	}
	s.Table([]Column{{Title: "text", Flex: true}, {Title: "namespace", Shrink: true}, {Title: "created"}}, cells)
	if r.More > 0 {
		s.Note("and " + Counted(r.More, "more record", "more records"))
	}
}

// DrawCheck prints one row per checked structure and the verdict; the
// detail Column (notes, example disagreements) appears when there is one.
func DrawCheck(s *Screen, r bolt.CheckReport) {
	cols := []Column{{Title: "structure", Shrink: true}, {Title: "checked", Right: true}, {Title: "verdict"}}
	cells := make([][]Cell, len(r.Checks))
	withDetail := false
	for _, c := range r.Checks {
		withDetail = withDetail || c.Note != "" || len(c.Examples) > 0
	}
	if withDetail {
		cols = append(cols, Column{Title: "detail", Flex: true})
	}
	for i, c := range r.Checks {
		verdict, style := "ok", s.St.Toast
		if c.Disagreements > 0 {
			verdict, style = Counted(c.Disagreements, "disagreement", "disagreements"), s.St.Error
		}
		detail := c.Note
		if len(c.Examples) > 0 {
			detail = strings.TrimSpace(detail + " e.g. " + strings.Join(c.Examples, "; "))
		}
		cells[i] = []Cell{{c.Name, s.St.Row}, {Count(c.Checked), s.St.Number}, {verdict, style}}
		if withDetail {
			cells[i] = append(cells[i], Cell{detail, s.St.Dim})
		}
	}
	s.Table(cols, cells)
	verdict := s.St.Toast.Render("consistent")
	if !r.Consistent {
		verdict = s.St.Error.Render("not consistent")
	}
	parts := []string{Counted(r.Records, "record", "records")}
	if r.Repaired {
		parts = append(parts, "repaired")
	}
	s.Line(verdict + s.St.Dim.Render(" · "+strings.Join(parts, " · ")))
}

// DrawCopy prints what a copy moved, the records per status on both sides and
// how it was verified.
func DrawCopy(s *Screen, r storecopy.Report) {
	s.Line(s.St.Toast.Render("copied "+Counted(r.Copied, "record", "records")) + " from " + r.Source + " to " + r.Destination)
	s.Note("read "+Count(r.Read), "new "+Count(r.Copied), "already there "+Count(r.Replayed))
	cells := make([][]Cell, 0, len(contract.Statuses()))
	for _, st := range contract.Statuses() {
		src, dst := r.SourceCounts[st], r.DestinationCounts[st]
		style := s.St.Number
		if dst < src {
			style = s.St.Error
		}
		cells = append(cells, []Cell{{StatusWord(s.St.Glyphs, st), s.St.Row}, {Count(src), s.St.Number}, {Count(dst), style}})
	}
	s.Table([]Column{{Title: "status"}, {Title: "source", Right: true}, {Title: "destination", Right: true}}, cells)
	verdict := s.St.Toast.Render("verified")
	if !r.Verified {
		verdict = s.St.Error.Render("not verified")
	}
	parts := []string{Counted(r.Sampled, "record", "records") + " read back from both and compared"}
	if r.TimesKept {
		parts = append(parts, "times kept")
	} else {
		parts = append(parts, "times stamped by the destination")
	}
	s.Line(verdict + s.St.Dim.Render(": "+strings.Join(parts, " · ")))
	if r.SourceRecords > r.Read {
		s.Note(fmt.Sprintf("%s in service sandboxes not copied (--reach names one to copy it)", Counted(r.SourceRecords-r.Read, "record", "records")))
	}
	if len(r.Unlinked) > 0 {
		s.Line(s.St.Warning.Render(fmt.Sprintf("%s not superseded in the destination (their successor is not there):",
			Counted(len(r.Unlinked), "record", "records"))))
		for _, id := range r.Unlinked {
			s.Line("  " + id)
		}
	}
}

// DrawBackup is mnemo backup's report.
func DrawBackup(s *Screen, path string, info backup.Info) {
	s.KeyValues([][2]string{
		{"backup", path},
		{"format", info.Format + " (from " + info.Engine + ")"},
		{"records", Count(info.Records) + " (service sandboxes included)"},
		{"audit events", Count(info.Audit)},
		{"size", Count(int(info.Bytes)) + " bytes"},
		{"snapshot at", contract.FormatMillis(info.At)},
	})
}

// DrawRestored is mnemo restore's report.
func DrawRestored(s *Screen, where string, info backup.Info, check *bolt.CheckReport) {
	s.KeyValues([][2]string{
		{"restored into", where},
		{"from", info.Format + " backup of a " + info.Engine + " store"},
		{"records", Count(info.Records) + " (service sandboxes included)"},
		{"audit events", Count(info.Audit)},
	})
	if check != nil {
		s.Blank()
		DrawCheck(s, *check)
	}
}

// Info is `mnemo info`'s answer.
type Info struct {
	Version string `json:"version"`
	Store   string `json:"store"`
	Records int    `json:"records"`
	// Counts says what the records are (contract.RecordCounts): active, to
	// review, superseded, expired, in service sandboxes.
	Counts contract.RecordCounts `json:"counts"`
	Index  *storeopen.Index      `json:"index"`
	// HeldBy is the process holding a local store (docs/sharing.md).
	HeldBy     int                 `json:"held_by,omitempty"`
	Descriptor contract.Descriptor `json:"descriptor"`
	Config     string              `json:"config"`
	Log        string              `json:"log"`
	// Settings is every setting with where its value came from (a flag, an
	// environment variable, the config file or the default); secrets are
	// never in it (config.Settings.Report).
	Settings map[string]config.Setting `json:"settings"`
}

// DryRun is forget --dry-run's answer: what a forget would remove.
// A forget by filter lists its first records (newest first) and how many
// more there are.
type DryRun struct {
	DryRun      bool           `json:"dry_run"`
	WouldForget int            `json:"would_forget"`
	IDs         []string       `json:"ids,omitempty"`
	First       []DryRunRecord `json:"first,omitempty"`
	More        int            `json:"more,omitempty"`
}

// DryRunRecord is one record a forget by filter would remove.
type DryRunRecord struct {
	ID        string             `json:"id"`
	Text      string             `json:"text"`
	Namespace contract.Namespace `json:"namespace"`
	CreatedAt string             `json:"created_at"`
}

// DrawImportAnswer is import's whole summary: by line, or by location in
// the source for import --from, then what the source skipped.
func DrawImportAnswer(s *Screen, sum importer.Summary, holds *contract.RecordCounts) {
	if hasLocations(sum.Errors) {
		DrawImportFrom(s, sum, holds)
	} else {
		DrawImport(s, sum, holds)
	}
	DrawSkipped(s, sum.Skipped)
}

func hasLocations(errs []importer.LineError) bool {
	for _, e := range errs {
		if e.Location != "" {
			return true
		}
	}
	return false
}

// DrawImportFrom is DrawImport for import --from: a failed record is named by
// its location in the source, not by a line of the stream mnemo made of it.
func DrawImportFrom(s *Screen, sum importer.Summary, holds *contract.RecordCounts) {
	errs := sum.Errors
	sum.Errors = nil
	DrawImport(s, sum, holds)
	cells := make([][]Cell, len(errs))
	for i, e := range errs {
		cells[i] = []Cell{{e.Location, s.St.Row}, {e.Error, s.St.Row}}
	}
	s.Table([]Column{{Title: "location"}, {Title: "error", Flex: true}}, cells)
}

// DrawSkipped lists the entries of another system's data that were not imported, and why.
func DrawSkipped(s *Screen, skipped []ingest.Skip) {
	if len(skipped) == 0 {
		return
	}
	s.Line(s.St.Error.Render("skipped " + Count(len(skipped))))
	cells := make([][]Cell, len(skipped))
	for i, k := range skipped {
		cells[i] = []Cell{{k.Location, s.St.Row}, {k.Reason, s.St.Row}}
	}
	s.Table([]Column{{Title: "location"}, {Title: "reason", Flex: true}}, cells)
}

// DrawPreview is import --from --dry-run's answer: counts, the first records, what is left out.
func DrawPreview(s *Screen, p *ingest.Preview) {
	s.Line(fmt.Sprintf("dry run of %s: would store %s records, skip %s", p.Source, Count(p.Records), Count(len(p.Skipped))))
	if len(p.Counts) > 0 {
		cells := make([][]Cell, len(p.Counts))
		for i, c := range p.Counts {
			cells[i] = []Cell{{c.Namespace, s.St.Row}, {string(c.Kind), s.St.Row}, {Count(c.Count), s.St.Number}}
		}
		s.Table([]Column{{Title: "namespace"}, {Title: "kind"}, {Title: "records", Right: true}}, cells)
	}
	for _, f := range p.First {
		s.Blank()
		s.Line(f.Location + "  " + string(f.Item.Type) + "  " + f.Item.Meta.Namespace.String())
		s.Wrapped(f.Item.RenderText(), "  ")
	}
	for _, reason := range slices.Sorted(maps.Keys(p.Omitted)) {
		s.Note(fmt.Sprintf("left out by design: %s × %s", reason, Count(p.Omitted[reason])))
	}
	DrawSkipped(s, p.Skipped)
}

// DrawClusters draws the human form of the clusters answer.
func DrawClusters(s *Screen, r curate.Report) {
	if r.Count == 0 {
		s.None("clusters")
	}
	for i, c := range r.Clusters {
		kind := "repeats"
		if c.Conflict {
			kind = "conflict"
		}
		head := fmt.Sprintf("%d. %s · %d %s · %s", i+1, kind, c.Size, common.ShortKind(c.Kind), c.Key)
		if len(c.Differences) > 0 {
			head += " · " + strings.Join(c.Differences, ", ")
		}
		s.Line(s.St.Kind.Render(common.Printable(head, false)))
		for j, m := range c.Members {
			mark := "  "
			if j == 0 {
				mark = "✓ "
			}
			prefix := fmt.Sprintf("  %s%s  %s  ", mark, common.ShortID(m.ID), m.When[:10])
			s.Line(prefix + common.Cut(common.Printable(common.OneLine(m.Text), false), max(10, s.width-common.Width(prefix))))
		}
	}
	s.Note(fmt.Sprintf("%d %s", r.Count, common.Plural(r.Count, "cluster", "clusters")),
		fmt.Sprintf("%d conflicting", r.Conflicts),
		fmt.Sprintf("%d of %d records", r.Clustered, r.Records),
		fmt.Sprintf("%d dismissed", r.Dismissed))
}
