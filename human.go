package main

// The human form of every command's answer (output.go has the rule). Each
// draw function reads the same value the JSON form prints.

import (
	"encoding/json"
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"

	"mnemo/backup"
	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/importer"
	"mnemo/server/audit"
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

// records adds a table of records: short id, kind, namespace, text first,
// and the columns cols asks for.
func (s *screen) records(rows []recordRow, cols hitColumns) {
	st := s.st
	var header []column
	if cols.rank {
		header = append(header, column{title: "#", right: true, drop: 1})
	}
	if cols.score {
		header = append(header, column{title: "score", right: true, drop: 2})
	}
	header = append(header, column{title: "id"})
	if cols.status {
		header = append(header, column{title: "status"})
	}
	header = append(header, column{title: "kind"}, column{title: "namespace", shrink: true})
	if cols.tags {
		header = append(header, column{title: "tags", shrink: true, drop: 2})
	}
	header = append(header, column{title: "text", flex: true})
	if cols.conf {
		header = append(header, column{title: "conf", right: true, drop: 4})
	}
	if cols.updated {
		header = append(header, column{title: "updated", right: true, drop: 3})
	}
	cells := make([][]cell, len(rows))
	for i, r := range rows {
		textStyle := st.Row
		switch r.status {
		case contract.StatusCandidate:
			textStyle = st.Candidate
		case contract.StatusSuperseded:
			textStyle = st.Superseded
		}
		var row []cell
		if cols.rank {
			row = append(row, cell{fmt.Sprint(i + 1), st.Dim})
		}
		if cols.score {
			row = append(row, cell{fmt.Sprintf("%.3f", float32(r.score)), st.Number})
		}
		row = append(row, cell{common.ShortID(r.id), st.Dim})
		if cols.status {
			row = append(row, cell{statusWord(st.Glyphs, r.status), textStyle})
		}
		row = append(row, cell{string(r.kind), st.Kind}, cell{r.meta.Namespace.String(), st.Dim})
		if cols.tags {
			row = append(row, cell{strings.Join(r.meta.Tags, ","), st.Scope})
		}
		row = append(row, cell{common.OneLine(r.text), textStyle})
		if cols.conf {
			row = append(row, cell{conf(r.confidence), st.Number})
		}
		if cols.updated {
			row = append(row, cell{r.updated, st.Dim})
		}
		cells[i] = row
	}
	s.table(header, cells)
}

// statusWord shows a status as a glyph and a word, so it never rests on colour
// (as the TUI's browse view does).
func statusWord(g common.Glyphs, status contract.Status) string {
	switch status {
	case contract.StatusCandidate:
		return g.Candidate + " candidate"
	case contract.StatusSuperseded:
		return g.Superseded + " superseded"
	}
	return g.Active + " active"
}

// note adds dim lines of parts joined by " · " (totals, next-page hints),
// breaking between parts to fit the screen and never inside one, so a cursor
// stays whole and copies whole.
func (s *screen) note(parts ...string) {
	line := ""
	for _, p := range parts {
		p = printable(p, false)
		switch {
		case line == "":
			line = p
		case common.Width(line+" · "+p) > s.width:
			s.line(s.st.Dim.Render(line))
			line = p
		default:
			line += " · " + p
		}
	}
	if line != "" {
		s.line(s.st.Dim.Render(line))
	}
}

// none says a listing is empty.
func (s *screen) none(what string) { s.line(s.st.Missing.Render("no " + what)) }

func drawList(s *screen, page contract.ListPage) {
	if len(page.Items) == 0 && page.NextCursor == nil {
		s.none("items")
		return
	}
	rows := make([]recordRow, len(page.Items))
	for i, h := range page.Items {
		rows[i] = hitRow(h)
	}
	s.records(rows, hitColumns{tags: true, conf: true})
	parts := []string{counted(len(page.Items), "item", "items")}
	if page.NextCursor != nil {
		parts = append(parts, "more: --cursor "+*page.NextCursor)
	}
	s.note(parts...)
}

func drawFetch(s *screen, page contract.FetchPage, mode contract.FetchMode) {
	if len(page.Hits) == 0 && len(page.Beliefs) == 0 {
		s.none("hits")
		return
	}
	rows := make([]recordRow, len(page.Hits))
	for i, h := range page.Hits {
		rows[i] = hitRow(h)
	}
	s.records(rows, hitColumns{rank: true, score: true, conf: true})
	parts := []string{counted(len(page.Hits), "hit", "hits"), string(mode)}
	if page.NextCursor != nil {
		parts = append(parts, "more: --cursor "+*page.NextCursor)
	}
	s.note(parts...)
	if len(page.Beliefs) > 0 {
		s.blank()
		s.line(s.st.Heading.Render("Beliefs"))
		beliefs := make([]recordRow, len(page.Beliefs))
		for i, h := range page.Beliefs {
			beliefs[i] = hitRow(h)
		}
		s.records(beliefs, hitColumns{score: true, conf: true})
	}
}

func drawRecall(s *screen, answer contract.RecallAnswer) {
	text := strings.TrimSpace(answer.Answer)
	if text == "" {
		s.none("answer")
	} else {
		s.wrapped(text, "")
	}
	if len(answer.Citations) > 0 {
		s.blank()
		s.line(s.st.Heading.Render("Sources"))
		cells := make([][]cell, len(answer.Citations))
		for i, c := range answer.Citations {
			cells[i] = []cell{
				{fmt.Sprintf("[%d]", i+1), s.st.Dim},
				{common.ShortID(c.ID), s.st.Dim},
				{string(c.Kind), s.st.Kind},
				{c.Meta.Namespace.String(), s.st.Dim},
				{common.OneLine(c.Snippet), s.st.Row},
			}
		}
		s.table([]column{{title: "", right: true}, {title: "id"}, {title: "kind", drop: 1}, {title: "namespace", shrink: true, drop: 2}, {title: "snippet", flex: true}}, cells)
	}
	if answer.Model != nil {
		s.note("answered by " + *answer.Model)
	}
}

// drawGet prints each hit whole: a heading line with its id and metadata,
// then its text wrapped to the terminal.
func drawGet(s *screen, hits []contract.Hit) {
	if len(hits) == 0 {
		s.none("records with these ids")
		return
	}
	for i, h := range hits {
		if i > 0 {
			s.blank()
		}
		s.line(s.st.Count.Render(h.ID), "  ", s.st.Kind.Render(string(h.Kind)), "  ", s.st.Dim.Render(h.Meta.Namespace.String()))
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
			facts = append(facts, "confidence "+conf(h.Confidence))
		}
		if h.Meta.ObservedAt != nil {
			facts = append(facts, "observed "+s.ago(*h.Meta.ObservedAt))
		}
		s.note(facts...)
		s.wrapped(h.Text, "  ")
	}
}

func drawBrowse(s *screen, page contract.BrowsePage, query []byte, counts string) {
	if len(page.Records) == 0 {
		s.none("records")
		if page.Total > 0 {
			s.note(fmt.Sprintf("%s in all (%s); this page is past the end", counted(page.Total, "record", "records"), counts))
		}
		return
	}
	rows := make([]recordRow, len(page.Records))
	for i, r := range page.Records {
		rows[i] = recordRow{id: r.ID, text: r.Text, kind: r.Kind, meta: r.Meta, confidence: r.Confidence,
			status: r.Status, updated: s.ago(r.UpdatedAt)}
	}
	s.records(rows, hitColumns{status: true, conf: true, updated: true})
	s.note(fmt.Sprintf("%s of %s", count(len(page.Records)), counted(page.Total, "record", "records")), counts)
	if page.Continuation != nil {
		// One line however long, so it pastes back as one command.
		s.line(s.st.Dim.Render("next page: mnemo browse --query " + shellQuote(withCursor(query, *page.Continuation))))
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

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// drawExplore prints the buckets with their counts, share of the total and a
// bar, then the total, the records without a value and what --limit left out.
func drawExplore(s *screen, page contract.ExplorePage) {
	if len(page.Buckets) == 0 {
		s.none(string(page.Facet) + " values")
	} else {
		var top uint64
		for _, b := range page.Buckets {
			top = max(top, b.Count)
		}
		const barWidth = 20
		cells := make([][]cell, len(page.Buckets))
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
				value = s.st.Glyphs.None
			}
			cells[i] = []cell{
				{value, s.st.Row},
				{count(b.Count), s.st.Count},
				{share, s.st.Dim},
				{strings.Repeat(s.st.Glyphs.Bar, n), s.st.Bar},
			}
		}
		s.table([]column{{title: string(page.Facet), flex: true}, {title: "count", right: true}, {title: "share", right: true, drop: 1}, {title: "", drop: 2}}, cells)
	}
	parts := []string{counted(page.Total, "record", "records")}
	if page.Missing > 0 {
		parts = append(parts, fmt.Sprintf("%s without a %s", count(page.Missing), page.Facet))
	}
	if page.MoreBuckets > 0 {
		parts = append(parts, fmt.Sprintf("%s more %s (raise --limit)", count(page.MoreBuckets), plural(int(page.MoreBuckets), "value", "values")))
	}
	if page.Truncated {
		parts = append(parts, "counts cut short by the engine")
	}
	s.note(parts...)
}

// keyValues adds aligned "key  value" lines.
func (s *screen) keyValues(pairs [][2]string) {
	w := 0
	for _, p := range pairs {
		w = max(w, common.Width(p[0]))
	}
	for _, p := range pairs {
		s.line(s.st.Label.Render(common.Fit(p[0], w)), "  ", p[1])
	}
}

func drawInfo(s *screen, r infoReport) {
	d := r.Descriptor
	modes := make([]string, len(d.FetchModes))
	for i, m := range d.FetchModes {
		modes[i] = string(m)
	}
	index := s.st.Dim.Render("none")
	if r.Index != nil {
		index = healthStyle(s, r.Index.State).Render(r.Index.State) + s.st.Dim.Render(" · applied seq "+count(int(r.Index.AppliedSeq)))
		if r.Index.Total > 0 {
			index += s.st.Dim.Render(fmt.Sprintf(" · rebuilding %s of %s", count(r.Index.Done), count(r.Index.Total)))
		}
	}
	store := r.Store
	if r.HeldBy > 0 {
		store += s.st.Dim.Render(fmt.Sprintf(" · held by pid %d", r.HeldBy))
	}
	s.keyValues([][2]string{
		{"version", r.Version},
		{"store", store},
		{"records", s.st.Count.Render(count(r.Records)) + s.st.Dim.Render(": "+r.Counts.Words(count[int]))},
		{"index", index},
		{"engine", d.Label},
		{"fetch modes", strings.Join(modes, ", ")},
		{"consolidation", string(d.Consolidation)},
		{"config", r.Config},
		{"log", r.Log},
	})
}

// healthStyle colours a state word: ready and ok green, the rest amber or red.
func healthStyle(s *screen, state string) lipgloss.Style {
	switch state {
	case "ok", "ready":
		return s.st.Toast
	case "down":
		return s.st.Error
	}
	return s.st.Warning
}

func drawHealth(s *screen, h contract.Health) {
	line := healthStyle(s, string(h.State)).Render(string(h.State))
	if h.Reason != "" {
		line += ": " + printable(h.Reason, false)
	}
	s.line(line)
}

func drawAudit(s *screen, events []audit.Event) {
	if len(events) == 0 {
		s.none("audit events")
		return
	}
	refused := 0
	var reasons []string
	cells := make([][]cell, len(events))
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
		outcome := count(ev.Count)
		if ev.Skipped > 0 {
			outcome += fmt.Sprintf(" (%s skipped)", count(ev.Skipped))
		}
		outStyle := s.st.Number
		if ev.Refused != "" {
			refused++
			outcome, outStyle = "refused", s.st.Error
			// The reason in full below the table: a column would cut it.
			reasons = append(reasons, fmt.Sprintf("%s %s %s refused: %s", s.ago(ev.At), ev.Principal, ev.Op, printable(ev.Refused, false)))
		}
		detail := target
		if ev.Detail != "" {
			detail = strings.TrimSpace(detail + " " + ev.Detail)
		}
		cells[i] = []cell{
			{s.ago(ev.At), s.st.Dim},
			{ev.Principal, s.st.Row},
			{ev.Role, s.st.Dim},
			{ev.Via, s.st.Dim},
			{ev.Op, s.st.Kind},
			{outcome, outStyle},
			{detail, s.st.Dim},
		}
	}
	s.table([]column{{title: "when", right: true}, {title: "principal", shrink: true}, {title: "role", drop: 2}, {title: "via", drop: 1}, {title: "op"}, {title: "changed", shrink: true}, {title: "target", flex: true}}, cells)
	for _, r := range reasons {
		s.wrapped(r, "  ")
	}
	parts := []string{counted(len(events), "event", "events")}
	if refused > 0 {
		parts = append(parts, counted(refused, "refusal", "refusals"))
	}
	parts = append(parts, "from "+contract.FormatMillis(events[0].At))
	s.note(parts...)
}

// drawImport is import's and demo's summary; holds, when known, is what the
// store holds afterwards, in the words info and the TUI use.
func drawImport(s *screen, sum importer.Summary, holds *contract.RecordCounts) {
	parts := []string{
		s.st.Toast.Render("stored " + counted(sum.Stored, "new record", "new records")),
		"replayed " + count(sum.Replayed) + " already held",
	}
	failed := "failed " + count(sum.Failed)
	if sum.Failed > 0 {
		failed = s.st.Error.Render(failed)
	}
	s.line(strings.Join(append(parts, failed), ", "))
	if holds != nil {
		s.line(s.st.Dim.Render("the store now holds " + holds.Words(count[int])))
	}
	if len(sum.Errors) > 0 {
		cells := make([][]cell, len(sum.Errors))
		for i, e := range sum.Errors {
			cells[i] = []cell{{count(e.Line), s.st.Number}, {e.Error, s.st.Row}}
		}
		s.table([]column{{title: "line", right: true}, {title: "error", flex: true}}, cells)
		if len(sum.Errors) < sum.Failed {
			s.note(fmt.Sprintf("%s more failed lines not listed", count(sum.Failed-len(sum.Errors))))
		}
	}
}

func drawForget(s *screen, r forgetAnswer, skipWhy string) {
	if r.Forgotten == 0 {
		s.line("nothing was forgotten")
	} else {
		s.line(s.st.Warning.Render("forgot " + counted(r.Forgotten, "record", "records")))
	}
	if r.Skipped > 0 {
		s.note("skipped " + counted(r.Skipped, "id", "ids") + ": " + skipWhy)
	}
}

func drawDryRun(s *screen, r dryRunReport) {
	s.line("would forget " + s.st.Count.Render(counted(r.WouldForget, "record", "records")) + s.st.Dim.Render(" (dry run: nothing was removed)"))
	for _, id := range r.IDs {
		s.line("  " + id)
	}
	drawDryRunList(s, r)
}

// drawDryRunList lists the first records a forget by filter would remove
// (text, namespace, date) and how many more.
func drawDryRunList(s *screen, r dryRunReport) {
	if len(r.First) == 0 {
		return
	}
	cells := make([][]cell, len(r.First))
	for i, x := range r.First {
		text, _, _ := strings.Cut(strings.TrimSpace(x.Text), "\n")
		cells[i] = []cell{{printable(text, false), s.st.Row}, {x.Namespace.String(), s.st.Dim}, {strings.TrimSuffix(x.CreatedAt[:min(len(x.CreatedAt), 10)], "T"), s.st.Dim}}
	}
	s.table([]column{{title: "text", flex: true}, {title: "namespace", shrink: true}, {title: "created"}}, cells)
	if r.More > 0 {
		s.note("and " + counted(r.More, "more record", "more records"))
	}
}

// drawCheck prints one row per checked structure and the verdict; the
// detail column (notes, example disagreements) appears when there is one.
func drawCheck(s *screen, r bolt.CheckReport) {
	cols := []column{{title: "structure", shrink: true}, {title: "checked", right: true}, {title: "verdict"}}
	cells := make([][]cell, len(r.Checks))
	withDetail := false
	for _, c := range r.Checks {
		withDetail = withDetail || c.Note != "" || len(c.Examples) > 0
	}
	if withDetail {
		cols = append(cols, column{title: "detail", flex: true})
	}
	for i, c := range r.Checks {
		verdict, style := "ok", s.st.Toast
		if c.Disagreements > 0 {
			verdict, style = counted(c.Disagreements, "disagreement", "disagreements"), s.st.Error
		}
		detail := c.Note
		if len(c.Examples) > 0 {
			detail = strings.TrimSpace(detail + " e.g. " + strings.Join(c.Examples, "; "))
		}
		cells[i] = []cell{{c.Name, s.st.Row}, {count(c.Checked), s.st.Number}, {verdict, style}}
		if withDetail {
			cells[i] = append(cells[i], cell{detail, s.st.Dim})
		}
	}
	s.table(cols, cells)
	verdict := s.st.Toast.Render("consistent")
	if !r.Consistent {
		verdict = s.st.Error.Render("not consistent")
	}
	parts := []string{counted(r.Records, "record", "records")}
	if r.Repaired {
		parts = append(parts, "repaired")
	}
	s.line(verdict + s.st.Dim.Render(" · "+strings.Join(parts, " · ")))
}

// drawCopy prints what a copy moved, the records per status on both sides and
// how it was verified.
func drawCopy(s *screen, r copyReport) {
	s.line(s.st.Toast.Render("copied "+counted(r.Copied, "record", "records")) + " from " + r.Source + " to " + r.Destination)
	s.note("read "+count(r.Read), "new "+count(r.Copied), "already there "+count(r.Replayed))
	cells := make([][]cell, 0, len(contract.Statuses()))
	for _, st := range contract.Statuses() {
		src, dst := r.SourceCounts[st], r.DestinationCounts[st]
		style := s.st.Number
		if dst < src {
			style = s.st.Error
		}
		cells = append(cells, []cell{{statusWord(s.st.Glyphs, st), s.st.Row}, {count(src), s.st.Number}, {count(dst), style}})
	}
	s.table([]column{{title: "status"}, {title: "source", right: true}, {title: "destination", right: true}}, cells)
	verdict := s.st.Toast.Render("verified")
	if !r.Verified {
		verdict = s.st.Error.Render("not verified")
	}
	parts := []string{counted(r.Sampled, "record", "records") + " read back from both and compared"}
	if r.TimesKept {
		parts = append(parts, "times kept")
	} else {
		parts = append(parts, "times stamped by the destination")
	}
	s.line(verdict + s.st.Dim.Render(": "+strings.Join(parts, " · ")))
	if r.SourceRecords > r.Read {
		s.note(fmt.Sprintf("%s in service sandboxes not copied (--reach names one to copy it)", counted(r.SourceRecords-r.Read, "record", "records")))
	}
	if len(r.Unlinked) > 0 {
		s.line(s.st.Warning.Render(fmt.Sprintf("%s not superseded in the destination (their successor is not there):",
			counted(len(r.Unlinked), "record", "records"))))
		for _, id := range r.Unlinked {
			s.line("  " + id)
		}
	}
}

// drawBackup is mnemo backup's report.
func drawBackup(s *screen, path string, info backup.Info) {
	s.keyValues([][2]string{
		{"backup", path},
		{"format", info.Format + " (from " + info.Engine + ")"},
		{"records", count(info.Records) + " (service sandboxes included)"},
		{"audit events", count(info.Audit)},
		{"size", count(int(info.Bytes)) + " bytes"},
		{"snapshot at", contract.FormatMillis(info.At)},
	})
}

// drawRestored is mnemo restore's report.
func drawRestored(s *screen, where string, info backup.Info, check *bolt.CheckReport) {
	s.keyValues([][2]string{
		{"restored into", where},
		{"from", info.Format + " backup of a " + info.Engine + " store"},
		{"records", count(info.Records) + " (service sandboxes included)"},
		{"audit events", count(info.Audit)},
	})
	if check != nil {
		s.blank()
		drawCheck(s, *check)
	}
}
