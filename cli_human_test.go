package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"

	"mnemo/contract"
)

// fixtureNow is the clock of the human form in these tests: three days after
// the fixture's first record.
var fixtureNow = fixtureStart.Add(72 * time.Hour)

// ptyRun is what one invocation on a pseudo-terminal printed.
type ptyRun struct {
	screen string // stdout as the terminal received it, CRLF turned to LF
	stderr string
	code   int
}

// onPTY runs mnemo in-process with stdout on a real pseudo-terminal of cols
// columns, so the terminal is detected as it is for a person (isatty, its
// size), with env over the process environment. stderr is a pipe unless
// stderrOnPTY.
func (c *testCLI) onPTY(cols int, env map[string]string, stderrOnPTY bool, stdin string, args ...string) ptyRun {
	c.t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		c.t.Skipf("no pseudo-terminal on this machine: %v", err)
	}
	defer ptmx.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Cols: uint16(cols), Rows: 40}); err != nil {
		c.t.Fatal(err)
	}
	read := make(chan []byte, 1)
	go func() {
		data, _ := io.ReadAll(ptmx) // ends with EIO once the tty side is closed
		read <- data
	}()
	var errOut bytes.Buffer
	var stderr io.Writer = &errOut
	if stderrOnPTY {
		stderr = tty
	}
	a := newApp(strings.NewReader(stdin), tty, stderr)
	a.now = func() time.Time { return fixtureNow }
	a.getenv = func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
	code := a.execute(append([]string{"--db", c.db}, args...))
	_ = tty.Close()
	data := <-read
	return ptyRun{screen: strings.ReplaceAll(string(data), "\r\n", "\n"), stderr: errOut.String(), code: code}
}

// colourTerm is the environment of a colour terminal with nothing disabling colour.
func colourTerm() map[string]string {
	return map[string]string{"TERM": "xterm-256color", "NO_COLOR": "", "COLORTERM": "", "CLICOLOR_FORCE": ""}
}

func withEnv(base map[string]string, kv ...string) map[string]string {
	env := map[string]string{}
	for k, v := range base {
		env[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		env[kv[i]] = kv[i+1]
	}
	return env
}

// sgrSeq finds SGR sequences; hasColour tells those that set a colour
// (30-38, 40-48, 90-97, 100-107).
var sgrSeq = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

func hasColour(s string) bool {
	for _, m := range sgrSeq.FindAllStringSubmatch(s, -1) {
		for _, p := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ';' || r == ':' }) {
			n, _ := strconv.Atoi(p)
			if (n >= 30 && n <= 38) || (n >= 40 && n <= 48) || (n >= 90 && n <= 97) || (n >= 100 && n <= 107) {
				return true
			}
		}
	}
	return false
}

// visible is the screen without escape sequences.
func visible(s string) string { return ansi.Strip(s) }

// checkFits fails when a line of the screen is wider than cols, unless it
// ends in one word that is itself too long to fit (a path, a cursor, a query
// to paste back), which the human form never cuts.
func checkFits(t *testing.T, screen string, cols int) {
	t.Helper()
	for _, l := range strings.Split(visible(screen), "\n") {
		words := strings.Fields(l)
		if len(words) > 0 && ansi.StringWidth(words[len(words)-1]) > cols/2 {
			continue
		}
		if w := ansi.StringWidth(l); w > cols {
			t.Errorf("line is %d cells on a %d-column terminal: %q", w, cols, l)
		}
	}
}

// TestEveryCommandOnATerminalAndPiped: on a terminal each command prints its
// human form; piped, or with --json / -o json, the recorded JSON byte for byte
// (indented on a terminal, as it always was).
func TestEveryCommandOnATerminalAndPiped(t *testing.T) {
	for _, gc := range goldenCases() {
		t.Run(gc.name, func(t *testing.T) {
			c := newFixtureCLI(t)
			human := c.onPTY(100, colourTerm(), false, gc.stdin, gc.args(t, c)...)
			if human.code != gc.code {
				t.Fatalf("on a terminal: exit %d (want %d), stderr %q", human.code, gc.code, human.stderr)
			}
			text := visible(human.screen)
			first, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
			if first == "" || json.Valid([]byte(first)) || strings.HasPrefix(first, "{") {
				t.Errorf("on a terminal the answer is not the human form:\n%s", text)
			}
			checkFits(t, human.screen, 100)

			for _, flag := range [][]string{{"--json"}, {"-o", "json"}} {
				c := newFixtureCLI(t)
				r := c.run(gc.stdin, append(flag, gc.args(t, c)...)...)
				if got := normalizeGolden(c, r.stdout); r.code != gc.code || got != readGolden(t, gc.name+".json") {
					t.Errorf("piped with %v: exit %d, output differs from the golden:\n%s", flag, r.code, got)
				}
				c = newFixtureCLI(t)
				p := c.onPTY(100, colourTerm(), false, gc.stdin, append(flag, gc.args(t, c)...)...)
				if got := normalizeGolden(c, p.screen); p.code != gc.code || got != readGolden(t, gc.name+".tty.json") {
					t.Errorf("on a terminal with %v: exit %d, output differs from the golden:\n%s", flag, p.code, got)
				}
			}
		})
	}
}

func TestHumanFormReadsLikeATable(t *testing.T) {
	c := newFixtureCLI(t)
	id0, id5 := fixtureID(t, 0), fixtureID(t, 5)

	list := visible(c.onPTY(120, colourTerm(), false, "", "list").screen)
	lines := strings.Split(strings.TrimSpace(list), "\n")
	if !regexp.MustCompile(`^ID\s+KIND\s+NAMESPACE\s+TAGS\s+TEXT\s+CONF$`).MatchString(lines[0]) {
		t.Errorf("list header: %q", lines[0])
	}
	// Columns align: every row's text starts under the TEXT header.
	textCol := ansi.StringWidth(lines[0][:strings.Index(lines[0], "TEXT")])
	for _, l := range lines[1 : len(lines)-1] {
		cells := []rune(l)
		if len(cells) <= textCol || cells[textCol-1] != ' ' || cells[textCol] == ' ' {
			t.Errorf("row not aligned under TEXT (column %d): %q", textCol, l)
		}
		if !regexp.MustCompile(`^[0-9a-f]{8}  `).MatchString(l) {
			t.Errorf("row does not start with the short id: %q", l)
		}
	}
	if !regexp.MustCompile(`(?m)^` + id0[:8] + `\s+learning\s+team:acme/agent:writer\s+style\s+prefers tabs over spaces in Go code\s+0\.90$`).MatchString(list) {
		t.Errorf("list row of the style learning:\n%s", list)
	}
	if !strings.Contains(list, "  Café menus are printed in Ünïcode; the  ") || strings.Contains(list, "second line") {
		t.Errorf("a multi-line text shows its first line, as in the TUI:\n%s", list)
	}
	if !strings.HasSuffix(strings.TrimSpace(list), "7 items") {
		t.Errorf("list footer:\n%s", list)
	}

	browse := visible(c.onPTY(100, colourTerm(), false, "", "browse", "--query", `{"status":["active","superseded"],"limit":2,"order_by":[{"field":"created_at","dir":"asc"}]}`).screen)
	for _, want := range []string{"STATUS", "UPDATED", "● active", "3d ago", "2 of 6 records", `next page: mnemo browse --query '{"cursor":"`} {
		if !strings.Contains(browse, want) {
			t.Errorf("browse lacks %q:\n%s", want, browse)
		}
	}
	superseded := visible(c.onPTY(100, colourTerm(), false, "", "browse", "--query", `{"status":"superseded"}`).screen)
	if !strings.Contains(superseded, id5[:8]+"  × superseded") || !strings.Contains(superseded, "1 of 1 record") {
		t.Errorf("browse of the superseded record:\n%s", superseded)
	}

	explore := visible(c.onPTY(100, colourTerm(), false, "", "explore", "tag").screen)
	if !regexp.MustCompile(`(?m)^ops\s+3\s+43%\s+█{20}$`).MatchString(explore) ||
		!strings.Contains(explore, "7 records · 1 without a tag") {
		t.Errorf("explore tag:\n%s", explore)
	}

	fetch := visible(c.onPTY(100, colourTerm(), false, "", "fetch", "deploys", "approvals").screen)
	if !regexp.MustCompile(`(?m)^1\s+[01]\.\d{3}\s+[0-9a-f]{8}\s+learning\s+team:acme\s+Deploys need two approvals before the c\S*\s+0\.70$`).MatchString(fetch) ||
		!strings.Contains(fetch, "hits · hybrid") {
		t.Errorf("fetch:\n%s", fetch)
	}

	recall := visible(c.onPTY(60, colourTerm(), false, "", "recall", "how", "do", "deploys", "go", "out").screen)
	if !strings.HasPrefix(recall, "Deploys go out on Tuesdays after the canary is green [1].") ||
		!strings.Contains(recall, "Sources") || !strings.Contains(recall, "[1]") || !strings.Contains(recall, "answered by mnemo-extractive") {
		t.Errorf("recall:\n%s", recall)
	}

	get := visible(c.onPTY(100, colourTerm(), false, "", "get", fixtureID(t, 1)).screen)
	if !strings.HasPrefix(get, fixtureID(t, 1)+"  document  team:acme\n") || !strings.Contains(get, "tags ops · source file docs/deploy.md") ||
		!strings.Contains(get, "  Deploys go out on Tuesdays after the canary is green.") {
		t.Errorf("get prints the whole record:\n%s", get)
	}

	info := visible(c.onPTY(100, colourTerm(), false, "", "info").screen)
	if !regexp.MustCompile(`(?m)^records\s+7: 5 active · 1 to review · 1 superseded$`).MatchString(info) || !regexp.MustCompile(`(?m)^index\s+ready · applied seq 8$`).MatchString(info) {
		t.Errorf("info:\n%s", info)
	}
	if h := visible(c.onPTY(100, colourTerm(), false, "", "health").screen); h != "ok\n" {
		t.Errorf("health: %q", h)
	}
	check := visible(c.onPTY(100, colourTerm(), false, "", "check").screen)
	if !regexp.MustCompile(`(?m)^STRUCTURE\s+CHECKED\s+VERDICT(\s+DETAIL)?$`).MatchString(check) || !regexp.MustCompile(`(?m)^records\s+7\s+ok$`).MatchString(check) ||
		!strings.HasSuffix(check, "consistent · 7 records\n") {
		t.Errorf("check:\n%s", check)
	}

	audit := visible(c.onPTY(120, colourTerm(), false, "", "audit").screen)
	if !regexp.MustCompile(`(?m)^\s*3d ago\s+owner\s+admin\s+http\s+store\s+1\s+[0-9a-f]{8}$`).MatchString(audit) ||
		!strings.Contains(audit, "refused: the token is not known") || !strings.Contains(audit, "3 events · 1 refusal") {
		t.Errorf("audit:\n%s", audit)
	}
}

func TestHumanFormSummaries(t *testing.T) {
	c := newFixtureCLI(t)
	file := c.writeFile("some.jsonl", jsonl(tabsLearning, styleLearning, `{"type":"learning"`))
	imp := c.onPTY(100, colourTerm(), false, "", "import", file)
	if text := visible(imp.screen); imp.code != exitInvalid || !strings.HasPrefix(text, "stored 1 new record, replayed 1 already held, failed 1\nthe store now holds 6 active · 1 to review · 1 superseded\n") ||
		!regexp.MustCompile(`(?m)^LINE\s+ERROR\n\s+3\s+invalid request: invalid JSON`).MatchString(text) {
		t.Errorf("import summary: exit %d\n%s", imp.code, text)
	}
	dry := visible(c.onPTY(100, colourTerm(), false, "", "forget", "--filter", `{"tags_any":["ops"]}`, "--dry-run").screen)
	if !strings.HasPrefix(dry, "would forget 3 records (dry run: nothing was removed)\n") ||
		!regexp.MustCompile(`(?m)^TEXT\s+NAMESPACE\s+CREATED$`).MatchString(dry) || !regexp.MustCompile(`(?m)^# Deploy runbook\s+team:acme\s+\d{4}-\d\d-\d\d$`).MatchString(dry) {
		t.Errorf("dry run: %q", dry)
	}
	gone := visible(c.onPTY(100, colourTerm(), false, "", "forget", "--filter", `{"tags_any":["ops"]}`, "--yes").screen)
	if gone != "forgot 3 records\n" {
		t.Errorf("forget: %q", gone)
	}
	none := visible(c.onPTY(100, colourTerm(), false, "", "forget", "--ids", "0000000000000000000000000000000000000000", "--yes").screen)
	if none != "nothing was forgotten\nskipped 1 id: not in the store\n" {
		t.Errorf("forget of nothing: %q", none)
	}
	dst := filepath.Join(c.home, "copy")
	copied := visible(c.onPTY(100, colourTerm(), false, "", "copy", c.db, dst).screen)
	if !strings.HasPrefix(copied, "copied 5 records from "+c.db+" to "+dst+"\n") ||
		!regexp.MustCompile(`(?m)^● active\s+4\s+4$`).MatchString(copied) ||
		!strings.Contains(copied, "verified: 5 records read back from both and compared · times kept") {
		t.Errorf("copy:\n%s", copied)
	}
	again := visible(c.onPTY(100, colourTerm(), false, "", "copy", c.db, dst).screen)
	if !strings.HasPrefix(again, "copied 0 records from ") || !strings.Contains(again, "read 5 · new 0 · already there 5") {
		t.Errorf("a resumed copy:\n%s", again)
	}
	demo := newTestCLI(t)
	if out := visible(demo.onPTY(100, colourTerm(), false, "", "demo", "--no-tui").screen); !regexp.MustCompile(`^stored 1,\d{3} new records, replayed 0 already held, failed 0\nthe store now holds 1,\d{3} active · \d+ to review · \d+ expired · \d+ in service sandboxes\n$`).MatchString(out) {
		t.Errorf("demo --no-tui: %q", out)
	}
}

func TestHumanFormFitsTheTerminal(t *testing.T) {
	c := newFixtureCLI(t)
	for _, cols := range []int{50, 80, 160} {
		for _, args := range [][]string{{"list"}, {"browse"}, {"fetch", "deploys"}, {"recall", "deploys"}, {"audit"}, {"explore", "namespace"}} {
			r := c.onPTY(cols, colourTerm(), false, "", args...)
			checkFits(t, r.screen, cols)
		}
	}
	wide := visible(c.onPTY(160, colourTerm(), false, "", "list").screen)
	if !strings.Contains(wide, "Deploys need two approvals before the canary") {
		t.Errorf("a wide terminal shows the whole text:\n%s", wide)
	}
	// A narrow terminal leaves out confidence and times before the text gets
	// too short to read; id, status, kind, namespace and text stay.
	browse := visible(c.onPTY(64, colourTerm(), false, "", "browse").screen)
	header, _, _ := strings.Cut(browse, "\n")
	if !regexp.MustCompile(`^ID\s+STATUS\s+KIND\s+NAMESPA\S*\s+TEXT$`).MatchString(header) {
		t.Errorf("browse at 64 columns: header %q\n%s", header, browse)
	}
	narrow := visible(c.onPTY(60, colourTerm(), false, "", "list").screen)
	if !strings.Contains(narrow, "…") {
		t.Errorf("a narrow terminal cuts long cells with an ellipsis:\n%s", narrow)
	}
}

func TestColourFollowsTheTerminal(t *testing.T) {
	c := newFixtureCLI(t)
	if r := c.onPTY(100, colourTerm(), false, "", "browse"); !hasColour(r.screen) {
		t.Errorf("a colour terminal gets colour:\n%q", r.screen)
	}
	noColour := c.onPTY(100, withEnv(colourTerm(), "NO_COLOR", "1"), false, "", "browse")
	if hasColour(noColour.screen) {
		t.Errorf("NO_COLOR still coloured:\n%q", noColour.screen)
	}
	if !strings.Contains(visible(noColour.screen), "● active") {
		t.Errorf("NO_COLOR keeps the human form:\n%s", noColour.screen)
	}
	if dumb := c.onPTY(100, withEnv(colourTerm(), "TERM", "dumb"), false, "", "browse"); strings.Contains(dumb.screen, "\x1b[") {
		t.Errorf("a dumb terminal gets no escape sequences:\n%q", dumb.screen)
	}
	// -o text asks for the human form on a pipe: no escapes there either.
	c.t.Setenv("COLUMNS", "90")
	piped := c.ok("", "-o", "text", "list")
	if strings.Contains(piped, "\x1b[") || !strings.HasPrefix(piped, "ID ") || !strings.HasSuffix(piped, "7 items\n") {
		t.Errorf("-o text on a pipe:\n%q", piped)
	}
	checkFits(t, piped, 90)
}

func TestStoredTextCannotDriveTheTerminal(t *testing.T) {
	c := newTestCLI(t)
	evil := `{"type":"learning","text":"title\u001b]0;pwned\u0007 and \u001b[2J cleared\nline two \u009b31m","kind":"fact","confidence":0.5,"meta":{"source":{"kind":"agent","id":"x\u001b[5m"},"tags":["t\u001b[1m"]}}`
	c.ok(evil, "store")
	id := fingerprintOf(t, evil)
	for _, args := range [][]string{{"list"}, {"browse"}, {"get", id}, {"fetch", "cleared"}, {"recall", "cleared"}, {"explore", "tag"}} {
		r := c.onPTY(100, colourTerm(), false, "", args...)
		if rest := sgrSeq.ReplaceAllString(r.screen, ""); strings.ContainsAny(rest, "\x1b\x07\u009b") {
			t.Errorf("%v let a control sequence of the stored text through:\n%q", args, r.screen)
		}
		if args[0] == "get" && !strings.Contains(visible(r.screen), "line two") {
			t.Errorf("get keeps the text's lines:\n%s", visible(r.screen))
		}
	}
}

// browseCursor is a real continuation of the fixture's first browse page.
func browseCursor(t *testing.T, c *testCLI, query string) string {
	t.Helper()
	var page contract.BrowsePage
	c.okJSON(&page, "", "browse", "--query", query)
	if page.Continuation == nil {
		t.Fatalf("no continuation for %s", query)
	}
	return *page.Continuation
}

// recode decodes a cursor's payload, lets edit change it, and encodes it again.
func recode(t *testing.T, cursor string, edit func(m map[string]any)) string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

func cursorQuery(q, cursor string) string {
	return strings.TrimSuffix(q, "}") + `,"cursor":` + strconv.Quote(cursor) + "}"
}

// TestBrowseErrorsCarryTheirCode: every browse validation error of docs/spec/contract.md
// section 4 and every cursor error, on the shell with its stable code, and in
// --json error output.
func TestBrowseErrorsCarryTheirCode(t *testing.T) {
	c := newFixtureCLI(t)
	const q = `{"limit":1}`
	cursor := browseCursor(t, c, q)
	nine := `[` + strings.Repeat(`{"field":"confidence","op":"gt","value":0.1},`, 8) + `{"field":"confidence","op":"gt","value":0.1}]`
	long := strings.Repeat("x", 1025)
	tests := []struct {
		name, query, code, message string
	}{
		{"not JSON", `{"limit":`, contract.CodeInvalidQuery, "a browse query must be valid JSON"},
		{"not an object", `[1]`, contract.CodeInvalidQuery, "a browse query must be a JSON object"},
		{"unknown key", `{"sort":"x"}`, contract.CodeInvalidQuery, `unknown browse query key "sort" (expected one of: `},
		{"bad filter", `{"filter":{"kinds":["memo"]}}`, contract.CodeInvalidQuery, "filter: `memo` is not an item kind"},
		{"unknown status", `{"status":"archived"}`, contract.CodeInvalidQuery, "invalid status"},
		{"unknown kind", `{"kind":["memo"]}`, contract.CodeInvalidQuery, "invalid kind"},
		{"too many filters", `{"filters":` + nine + `}`, contract.CodeInvalidQuery, "at most 8 filters"},
		{"a field twice", `{"filters":[{"field":"content","op":"contains","value":"a"},{"field":"content","op":"contains","value":"b"}]}`, contract.CodeInvalidQuery, `at most one filter per field; "content" appears twice`},
		{"unknown field", `{"filters":[{"field":"title","op":"contains","value":"a"}]}`, contract.CodeInvalidQuery, `unknown filter field "title"`},
		{"unknown op", `{"filters":[{"field":"content","op":"gt","value":"a"}]}`, contract.CodeInvalidQuery, `unknown op "gt" for filter field "content"`},
		{"empty values", `{"filters":[{"field":"status","op":"in","values":[]}]}`, contract.CodeInvalidQuery, "status values must not be empty"},
		{"empty content", `{"filters":[{"field":"content","op":"contains","value":""}]}`, contract.CodeInvalidQuery, "content value must not be empty"},
		{"content too long", `{"filters":[{"field":"content","op":"contains","value":"` + long + `"}]}`, contract.CodeInvalidQuery, "content value must be at most 1024 bytes"},
		{"bad namespace", `{"filters":[{"field":"namespace","op":"within","value":"agent"}]}`, contract.CodeInvalidQuery, "namespace value: "},
		{"min above max", `{"filters":[{"field":"confidence","op":"between","min":0.9,"max":0.1}]}`, contract.CodeInvalidQuery, "confidence between requires min <= max"},
		{"not a number", `{"filters":[{"field":"confidence","op":"gt","value":"high"}]}`, contract.CodeInvalidQuery, "confidence value must be a finite number"},
		{"not a day", `{"filters":[{"field":"updated_at","op":"on_day","day":"yesterday"}]}`, contract.CodeInvalidQuery, `updated_at day must be a "YYYY-MM-DD" UTC day`},
		{"days reversed", `{"filters":[{"field":"created_at","op":"between_days","from_day":"2026-12-01","until_day":"2026-11-01"}]}`, contract.CodeInvalidQuery, "created_at between_days requires from_day <= until_day"},
		{"extra operand", `{"filters":[{"field":"content","op":"contains","value":"a","min":1}]}`, contract.CodeInvalidQuery, `filter "content" with op "contains" does not take "min"`},
		{"too many sort keys", `{"order_by":[{"field":"kind","dir":"asc"},{"field":"status","dir":"asc"},{"field":"namespace","dir":"asc"},{"field":"confidence","dir":"asc"}]}`, contract.CodeInvalidQuery, "at most 3 order_by entries"},
		{"sort field twice", `{"order_by":[{"field":"kind","dir":"asc"},{"field":"kind","dir":"desc"}]}`, contract.CodeInvalidQuery, `order_by repeats the field "kind"`},
		{"unknown sort field", `{"order_by":[{"field":"text","dir":"asc"}]}`, contract.CodeInvalidQuery, `unknown sort field "text"`},
		{"bad direction", `{"order_by":[{"field":"kind","dir":"up"}]}`, contract.CodeInvalidQuery, `sort direction must be "asc" or "desc", got "up"`},
		{"limit 0", `{"limit":0}`, contract.CodeInvalidQuery, "limit must be an integer >= 1"},
		{"limit 1001", `{"limit":1001}`, contract.CodeInvalidQuery, "limit must be at most 1000"},
		{"negative offset", `{"offset":-1}`, contract.CodeInvalidQuery, "offset must be an integer >= 0"},
		{"offset with cursor", cursorQuery(`{"limit":1,"offset":2}`, cursor), contract.CodeInvalidQuery, "cursor and a non-zero offset cannot be combined"},
		{"cursor too long", cursorQuery(q, strings.Repeat("A", 4097)), contract.CodeInvalidQuery, "cursor must be at most 4096 characters"},
		{"empty cursor", cursorQuery(q, ""), contract.CodeInvalidQuery, "cursor must be a non-empty string"},
		{"now without milliseconds", `{"now":"2026-11-29T18:00:00Z"}`, contract.CodeInvalidQuery, `now must be a full ISO-8601 UTC instant ("YYYY-MM-DDTHH:MM:SS.sssZ")`},

		{"cursor not decodable", cursorQuery(q, "not a cursor!"), contract.CodeContinuationInvalid, "cursor is not decodable"},
		{"cursor version", cursorQuery(q, recode(t, cursor, func(m map[string]any) { m["v"] = 99 })), contract.CodeContinuationInvalid, "cursor version is not supported"},
		{"cursor of another query", cursorQuery(`{"limit":1,"kind":"learning"}`, cursor), contract.CodeContinuationInvalid, "cursor belongs to a different query"},
		{"cursor key", cursorQuery(q, recode(t, cursor, func(m map[string]any) { m["key"] = []any{} })), contract.CodeContinuationInvalid, "cursor key does not match the requested sort order"},
		{"cursor key type", cursorQuery(q, recode(t, cursor, func(m map[string]any) { m["key"] = []any{42} })), contract.CodeContinuationInvalid, `cursor key does not match the requested sort order: the key for "updated_at" must be a full ISO-8601 UTC instant`},
		{"cursor id", cursorQuery(q, recode(t, cursor, func(m map[string]any) { delete(m, "id") })), contract.CodeContinuationInvalid, "cursor id is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := c.run("", "browse", "--query", tt.query)
			prefix := "mnemo: invalid request: " + tt.code + ": " + tt.message
			if r.code != exitInvalid || r.stdout != "" || !strings.HasPrefix(r.stderr, prefix) || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("exit %d, stdout %q\nstderr %q\nwant   %q...", r.code, r.stdout, r.stderr, prefix)
			}
			// The same from stdin, and as the --json error body.
			r = c.run(tt.query, "--json", "browse")
			var body contract.ErrorBody
			if err := json.Unmarshal([]byte(r.stderr), &body); err != nil || r.code != exitInvalid || r.stdout != "" {
				t.Fatalf("--json: exit %d, stderr %q is not an error body (%v)", r.code, r.stderr, err)
			}
			if body.Error.Kind != "invalid_request" || body.Error.Code != tt.code || !strings.HasPrefix(body.Error.Message, tt.message) {
				t.Errorf("--json error body %+v, want code %s and message %q...", body.Error, tt.code, tt.message)
			}
		})
	}
}

func TestMistakesSayWhatTheCommandTakes(t *testing.T) {
	c := newFixtureCLI(t)
	r := c.onPTY(100, colourTerm(), true, "", "explore", "--facet", "tag")
	screen := visible(r.screen)
	for _, want := range []string{
		"mnemo: invalid request: unknown flag: --facet; usage: mnemo explore FACET [flags]\n",
		"FACET is an argument, not a flag: mnemo explore kind\n",
		"FACET is one of: kind, source, source_id, workspace, folder, file_path, language, repo, url, thread, agent, tool_call, tag, namespace, status\n",
		"--filter string", "--limit int",
		`Run "mnemo explore --help" for more.`,
	} {
		if r.code != exitInvalid || !strings.Contains(screen, want) {
			t.Errorf("explore --facet: exit %d, no %q in\n%s", r.code, want, screen)
		}
	}
	r = c.onPTY(100, colourTerm(), true, "", "explore")
	if screen := visible(r.screen); !strings.HasPrefix(screen, "mnemo: invalid request: accepts 1 arg(s), received 0; usage: mnemo explore FACET [flags]\n") ||
		!strings.Contains(screen, "FACET is one of: kind, source,") {
		t.Errorf("explore without a facet:\n%s", screen)
	}
	r = c.onPTY(100, colourTerm(), true, "", "explore", "colour")
	if screen := visible(r.screen); r.code != exitInvalid || !strings.HasPrefix(screen, "mnemo: invalid request: `colour` is not a facet; facets: kind, source,") {
		t.Errorf("explore with an unknown facet:\n%s", screen)
	}
	r = c.onPTY(100, colourTerm(), true, "", "list", "--lim", "2")
	if screen := visible(r.screen); !strings.Contains(screen, "Did you mean --limit?") {
		t.Errorf("a mistyped flag:\n%s", screen)
	}
	r = c.onPTY(100, colourTerm(), true, "", "lst")
	if screen := visible(r.screen); !strings.HasPrefix(screen, `mnemo: invalid request: unknown command "lst" for "mnemo"; did you mean get or list?`) {
		t.Errorf("a mistyped command:\n%s", screen)
	}
	// Piped, the error stays one line for scripts.
	if r := c.run("", "explore", "--facet", "tag"); r.stderr != "mnemo: invalid request: unknown flag: --facet; usage: mnemo explore FACET [flags]\n" {
		t.Errorf("piped: %q", r.stderr)
	}
}
