package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mnemo/cliout"
	"mnemo/contract"
	"mnemo/importer"
	"mnemo/storeopen"
)

// cliResult is what one invocation printed and returned.
type cliResult struct {
	stdout, stderr string
	code           int
}

// testCLI runs mnemo in-process against a real store in a temporary directory,
// with the XDG directories and MNEMO_* variables isolated from the machine's.
type testCLI struct {
	t    *testing.T
	db   string
	home string
	// terminal makes every stream look like a terminal (forget's prompt).
	terminal bool
}

func newTestCLI(t *testing.T) *testCLI {
	t.Helper()
	home := t.TempDir()
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"} {
		t.Setenv(v, filepath.Join(home, strings.ToLower(strings.TrimPrefix(v, "XDG_"))))
	}
	t.Setenv("MNEMO_DB", "")
	t.Setenv("MNEMO_REMOTE", "")
	t.Setenv("MNEMO_TOKEN", "")
	return &testCLI{t: t, db: filepath.Join(home, "store"), home: home}
}

// run executes `mnemo --db DIR args...` with stdin.
func (c *testCLI) run(stdin string, args ...string) cliResult {
	c.t.Helper()
	var out, errOut bytes.Buffer
	full := append([]string{"--db", c.db}, args...)
	var code int
	if c.terminal {
		a := newApp(strings.NewReader(stdin), &out, &errOut)
		a.isTerminal = func(any) bool { return true }
		code = a.execute(full)
	} else {
		code = run(full, strings.NewReader(stdin), &out, &errOut)
	}
	return cliResult{stdout: out.String(), stderr: errOut.String(), code: code}
}

// ok runs a command that must succeed and returns its stdout.
func (c *testCLI) ok(stdin string, args ...string) string {
	c.t.Helper()
	r := c.run(stdin, args...)
	if r.code != 0 {
		c.t.Fatalf("mnemo %s: exit %d, stderr %q, stdout %q", strings.Join(args, " "), r.code, r.stderr, r.stdout)
	}
	if r.stderr != "" {
		c.t.Fatalf("mnemo %s: unexpected stderr %q", strings.Join(args, " "), r.stderr)
	}
	return r.stdout
}

// okJSON runs a command that must succeed and decodes its JSON answer.
func (c *testCLI) okJSON(v any, stdin string, args ...string) {
	c.t.Helper()
	out := c.ok(stdin, args...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		c.t.Fatalf("mnemo %s: stdout is not the expected JSON: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// writeFile writes a fixture file under the test's home.
func (c *testCLI) writeFile(name, content string) string {
	c.t.Helper()
	p := filepath.Join(c.home, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		c.t.Fatal(err)
	}
	return p
}

func jsonl(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

const (
	tabsLearning   = `{"type":"learning","text":"prefers tabs","kind":"preference","confidence":0.8,"meta":{"source":{"kind":"agent"}}}`
	tabsLearningID = "8a8f01f6a30ffa27d488a48fc9218a8ec5af4228"
	xDocument      = `{"type":"document","body":{"text":"x"},"meta":{"source":{"kind":"agent"}}}`
	xDocumentID    = "b3371e4dfaed9fc1e36eb64bc4452cd89dcc0dbc"
	styleLearning  = `{"type":"learning","text":"prefers tabs over spaces in Go code","kind":"preference","confidence":0.9,"meta":{"namespace":"team:acme/agent:writer","source":{"kind":"agent"},"tags":["style"]}}`
	runbookDoc     = `{"type":"document","title":"Deploy runbook","body":{"text":"Deploys go out on Tuesdays after the canary is green."},"meta":{"namespace":"team:acme","source":{"kind":"file","id":"docs/deploy.md"},"folder":"docs","file_path":"docs/deploy.md","tags":["ops"]}}`
	supportChat    = `{"type":"conversation","turns":[{"role":"user","text":"the export button is broken"},{"role":"assistant","text":"I filed a ticket for the export button"}],"meta":{"thread_id":"t-42","source":{"kind":"conversation","id":"t-42"}}}`
)

func fingerprintOf(t *testing.T, itemJSON string) string {
	t.Helper()
	var it contract.StoreItem
	if err := json.Unmarshal([]byte(itemJSON), &it); err != nil {
		t.Fatal(err)
	}
	return it.Fingerprint()
}

func TestStoreAndReadCommands(t *testing.T) {
	c := newTestCLI(t)
	styleID, docID := fingerprintOf(t, styleLearning), fingerprintOf(t, runbookDoc)

	var receipt contract.StoreReceipt
	c.okJSON(&receipt, styleLearning, "store")
	if receipt.ID != styleID || receipt.Replayed {
		t.Fatalf("first store: %+v, want id %s not replayed", receipt, styleID)
	}
	c.okJSON(&receipt, styleLearning, "store")
	if !receipt.Replayed {
		t.Fatalf("second store of the same item is a replay: %+v", receipt)
	}
	c.okJSON(&receipt, runbookDoc, "store", "--status", "candidate", "--expires-at", "2099-01-01T00:00:00Z")
	if receipt.ID != docID {
		t.Fatalf("store_with: %+v", receipt)
	}
	if got := c.ok(tabsLearning, "fingerprint"); got != tabsLearningID+"\n" {
		t.Errorf("fingerprint printed %q, want %q", got, tabsLearningID+"\n")
	}

	var hits []contract.Hit
	c.okJSON(&hits, "", "get", docID, "0000000000000000000000000000000000000000", styleID)
	if len(hits) != 2 || hits[0].ID != docID || hits[1].ID != styleID {
		t.Fatalf("get: %+v, want doc then learning, unknown id left out", hits)
	}
	c.okJSON(&hits, "", "get", docID, "--reach", `{"at":"team:acme/agent:writer","inherit":false}`)
	if len(hits) != 0 {
		t.Errorf("get outside the reach: %+v, want nothing", hits)
	}

	var page contract.ListPage
	c.okJSON(&page, "", "list", "--filter", `{"tags_any":["style"]}`)
	if len(page.Items) != 1 || page.Items[0].ID != styleID {
		t.Errorf("list --filter: %+v", page.Items)
	}
	c.okJSON(&page, "", "list", "--limit", "1")
	if len(page.Items) != 1 || page.NextCursor == nil {
		t.Fatalf("list --limit 1 has a next page: %+v", page)
	}
	var page2 contract.ListPage
	c.okJSON(&page2, "", "list", "--limit", "1", "--cursor", *page.NextCursor)
	if len(page2.Items) != 1 || page2.Items[0].ID == page.Items[0].ID {
		t.Errorf("second page: %+v after %+v", page2.Items, page.Items)
	}
	all := strings.Split(strings.TrimSpace(c.ok("", "list", "--all", "--limit", "1")), "\n")
	if len(all) != 2 {
		t.Errorf("list --all printed %d lines, want 2: %q", len(all), all)
	}

	var fetched contract.FetchPage
	c.okJSON(&fetched, "", "fetch", "tabs", "spaces", "--mode", "keyword")
	if len(fetched.Hits) == 0 || fetched.Hits[0].ID != styleID {
		t.Errorf("fetch tabs: %+v", fetched.Hits)
	}
	c.okJSON(&fetched, "", "fetch", "canary", "--mode", "keyword")
	if len(fetched.Hits) != 0 {
		t.Errorf("fetch must hide the candidate: %+v", fetched.Hits)
	}
	c.okJSON(&fetched, "", "fetch", "canary", "--mode", "keyword", "--filter", `{"statuses":["candidate"]}`)
	if len(fetched.Hits) != 1 || fetched.Hits[0].ID != docID {
		t.Errorf("fetch with statuses [candidate]: %+v", fetched.Hits)
	}

	var answer contract.RecallAnswer
	c.okJSON(&answer, "", "recall", "what", "indentation", "does", "the", "writer", "prefer?", "--limit", "3")
	if len(answer.Citations) == 0 || answer.Citations[0].ID != styleID || answer.Answer == "" {
		t.Errorf("recall: %+v", answer)
	}

	var explored contract.ExplorePage
	c.okJSON(&explored, "", "explore", "status")
	if explored.Total != 2 || len(explored.Buckets) != 2 {
		t.Errorf("explore status: %+v", explored)
	}
	c.okJSON(&explored, "", "explore", "kind", "--filter", `{"statuses":["candidate"]}`)
	if explored.Total != 1 || explored.Buckets[0].Value != "document" {
		t.Errorf("explore kind of candidates: %+v", explored)
	}

	if got := c.ok("", "narrow", "tag", "style", "--filter", `{"kinds":["learning"]}`); got != `{"kinds":["learning"],"tags_any":["style"]}`+"\n" {
		t.Errorf("narrow printed %q", got)
	}

	var browsed contract.BrowsePage
	c.okJSON(&browsed, "", "browse", "--query", `{"status":"candidate"}`)
	if browsed.Total != 1 || len(browsed.Records) != 1 || browsed.Records[0].ID != docID || browsed.Records[0].ExpiresAt == nil {
		t.Errorf("browse candidates: %+v", browsed)
	}
	c.okJSON(&browsed, `{"order_by":[{"field":"confidence","dir":"desc"}],"limit":1}`, "browse")
	if browsed.Total != 2 || len(browsed.Records) != 1 || browsed.Records[0].ID != styleID || browsed.Continuation == nil {
		t.Errorf("browse from stdin: %+v", browsed)
	}

	var reviewed contract.Record
	c.okJSON(&reviewed, "", "review", docID, "--approve")
	if reviewed.ID != docID || reviewed.Status != contract.StatusActive {
		t.Errorf("review --approve: %+v", reviewed)
	}
	var superseded contract.Record
	c.okJSON(&superseded, "", "supersede", styleID, "--by", docID)
	if superseded.Status != contract.StatusSuperseded || contract.Deref(superseded.SupersededBy) != docID {
		t.Errorf("supersede: %+v", superseded)
	}

	var health contract.Health
	c.okJSON(&health, "", "health")
	if health.State != contract.HealthOK {
		t.Errorf("health: %+v", health)
	}

	var info struct {
		Version    string              `json:"version"`
		Store      string              `json:"store"`
		Records    int                 `json:"records"`
		Index      storeopen.Index     `json:"index"`
		Descriptor contract.Descriptor `json:"descriptor"`
		Config     string              `json:"config"`
		Log        string              `json:"log"`
	}
	c.okJSON(&info, "", "info")
	if info.Records != 2 || info.Store != c.db || info.Descriptor.ID != "mnemo" || info.Version == "" {
		t.Errorf("info: %+v", info)
	}
	if info.Index.State == "" || info.Index.AppliedSeq == 0 {
		t.Errorf("info index: %+v", info.Index)
	}
	if info.Config != filepath.Join(c.home, "config_home", "mnemo", "config.toml") || info.Log != filepath.Join(c.home, "state_home", "mnemo", "mnemo.log") {
		t.Errorf("info paths: config %s, log %s", info.Config, info.Log)
	}

	var report contract.ForgetReport
	c.okJSON(&report, "", "forget", "--ids", styleID+","+docID, "--yes")
	if report.Forgotten != 2 {
		t.Errorf("forget: %+v", report)
	}
	c.okJSON(&hits, "", "get", styleID, docID)
	if len(hits) != 0 {
		t.Errorf("forgotten ids still read back: %+v", hits)
	}
}

func TestErrorsAndExitCodes(t *testing.T) {
	c := newTestCLI(t)
	styleID := fingerprintOf(t, styleLearning)
	c.ok(styleLearning, "store")
	missing := "ffffffffffffffffffffffffffffffffffffffff"

	// A continuation from one query, to present with another.
	var browsed contract.BrowsePage
	c.okJSON(&browsed, "", "browse", "--query", `{"limit":1}`)
	c.ok(tabsLearning, "store")
	c.okJSON(&browsed, "", "browse", "--query", `{"limit":1}`)
	if browsed.Continuation == nil {
		t.Fatal("browse of 2 records with limit 1 gave no continuation")
	}
	foreign := fmt.Sprintf(`{"limit":1,"kind":"learning","cursor":%q}`, *browsed.Continuation)

	tests := []struct {
		name  string
		stdin string
		args  []string
		code  int
		// stderr is the exact line, or a prefix when it ends in "..."
		stderr string
	}{
		{"bad JSON filter", "", []string{"list", "--filter", `{"kinds":`}, 2,
			"mnemo: invalid request: --filter is not a JSON object: unexpected EOF"},
		{"filter with an unknown key", "", []string{"list", "--filter", `{"tag_any":["x"]}`}, 2,
			`mnemo: invalid request: --filter has an unknown key "tag_any"; known keys: reach, ...`},
		{"filter with a bad kind", "", []string{"list", "--filter", `{"kinds":["poem"]}`}, 2,
			"mnemo: invalid request: --filter is not a valid filter: ..."},
		{"reach with an unknown key", "", []string{"get", styleID, "--reach", `{"at":"team:acme","below":true}`}, 2,
			`mnemo: invalid request: --reach has an unknown key "below"; known keys: at, inherit, descendants`},
		{"unknown facet", "", []string{"explore", "colour"}, 2,
			"mnemo: invalid request: `colour` is not a facet; facets: kind, source, ..."},
		{"unknown facet to narrow", "", []string{"narrow", "colour", "red"}, 2,
			"mnemo: invalid request: `colour` is not a facet; facets: kind, source, ..."},
		{"explore limit out of range", "", []string{"explore", "kind", "--limit", "0"}, 2,
			"mnemo: invalid request: explore limit must be between 1 and 500"},
		{"empty forget filter", "", []string{"forget", "--filter", "{}", "--yes"}, 2,
			"mnemo: invalid request: forget refuses an empty filter, which would mean everything"},
		{"forget with nothing to forget", "", []string{"forget", "--yes"}, 2,
			"mnemo: invalid request: forget needs --ids ID... or --filter JSON"},
		{"forget with ids and filter", "", []string{"forget", "--ids", styleID, "--filter", `{"kinds":["learning"]}`}, 2,
			"mnemo: invalid request: forget takes --ids or --filter, not both"},
		{"invalid browse query", "", []string{"browse", "--query", `{"limit":0}`}, 2, "mnemo: invalid request: invalid-query: limit must be an integer >= 1"},
		{"browse query not JSON", "", []string{"browse", "--query", `{"limit":`}, 2, "mnemo: invalid request: ..."},
		{"foreign cursor", "", []string{"browse", "--query", foreign}, 2,
			"mnemo: invalid request: continuation-invalid: cursor belongs to a different query"},
		{"review of an unknown id", "", []string{"review", missing, "--approve"}, 4, "mnemo: not found: ..."},
		{"review of an active record", "", []string{"review", styleID, "--reject"}, 6,
			"mnemo: conflict: record " + styleID + " is 'active', not a candidate"},
		{"review without an action", "", []string{"review", styleID}, 2,
			"mnemo: invalid request: review takes exactly one of --approve or --reject"},
		{"supersede by an unknown id", "", []string{"supersede", styleID, "--by", missing}, 4, "mnemo: not found: ..."},
		{"supersede itself", "", []string{"supersede", styleID, "--by", styleID}, 2,
			"mnemo: invalid request: a record cannot supersede itself"},
		{"store of an invalid item", `{"type":"document","body":{"text":""}}`, []string{"store"}, 2,
			"mnemo: invalid request: document body must not be empty"},
		{"store of a learning missing three fields", `{"type":"learning"}`, []string{"store"}, 2,
			"mnemo: invalid request: stdin is not a StoreItem: missing fields `text`, `kind`, `confidence`"},
		{"store of no item", "", []string{"store"}, 2,
			"mnemo: invalid request: stdin is empty; expected one StoreItem as JSON"},
		{"store with a bad status", styleLearning, []string{"store", "--status", "superseded"}, 2,
			"mnemo: invalid request: a stored item's status must be `active` or `candidate`, not `superseded`"},
		{"fetch with an unknown mode", "", []string{"fetch", "x", "--mode", "fuzzy"}, 2,
			"mnemo: invalid request: `fuzzy` is not a fetch mode, expected one of keyword, vector, hybrid"},
		{"fetch with a bad limit", "", []string{"fetch", "x", "--limit", "0"}, 2,
			"mnemo: invalid request: fetch limit must be positive"},
		{"unknown command", "", []string{"frobnicate"}, 2, `mnemo: invalid request: unknown command "frobnicate" for "mnemo"`},
		{"unknown flag", "", []string{"list", "--colour"}, 2, "mnemo: invalid request: unknown flag: --colour; usage: mnemo list [flags]"},
		{"missing argument", "", []string{"get"}, 2, "mnemo: invalid request: requires at least 1 arg(s), only received 0; usage: mnemo get ID... [flags]"},
		{"import of a missing file", "", []string{"import", filepath.Join(c.home, "nope.jsonl")}, 2,
			"mnemo: invalid request: import file " + filepath.Join(c.home, "nope.jsonl") + " does not exist"},
		{"import with a bad batch", "", []string{"import", "-", "--batch", "101"}, 2,
			"mnemo: invalid request: --batch must be between 1 and 100"},
		{"an unknown output format", "", []string{"-o", "yaml", "list"}, 2,
			"mnemo: invalid request: -o takes json or text, not `yaml`"},
		{"two output formats", "", []string{"--json", "-o", "text", "list"}, 2,
			`{"error":{"kind":"invalid_request","message":"--json and -o text ask for different outputs; give one"}}`},
		{"completion for an unknown shell", "", []string{"completion", "tcsh"}, 2,
			"mnemo: invalid request: no completion for shell `tcsh`; choose bash, zsh or fish"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := c.run(tt.stdin, tt.args...)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", r.code, tt.code, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("stdout must be empty on error, got %q", r.stdout)
			}
			if strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("stderr must be one line, got %q", r.stderr)
			}
			got := strings.TrimSuffix(r.stderr, "\n")
			if prefix, ok := strings.CutSuffix(tt.stderr, "..."); ok {
				if !strings.HasPrefix(got, prefix) {
					t.Errorf("stderr %q, want prefix %q", got, prefix)
				}
			} else if got != tt.stderr {
				t.Errorf("stderr %q\nwant       %q", got, tt.stderr)
			}
		})
	}
}

func TestConfigFileErrors(t *testing.T) {
	c := newTestCLI(t)
	bad := c.writeFile("bad.toml", "theme = \"dark\"\n[embeder]\nmodel = \"x\"\n")
	r := c.run("", "--config", bad, "list")
	want := "mnemo: configuration error: " + bad + ": unknown key \"embeder\" (line 2)\n"
	if r.code != 2 || r.stderr != want {
		t.Errorf("exit %d, stderr %q\nwant %q", r.code, r.stderr, want)
	}
	missing := filepath.Join(c.home, "none.toml")
	r = c.run("", "--config", missing, "list")
	if r.code != 2 || r.stderr != "mnemo: configuration error: config file "+missing+" does not exist\n" {
		t.Errorf("missing --config: exit %d, stderr %q", r.code, r.stderr)
	}
	// The default config file is read from $XDG_CONFIG_HOME; its store key
	// names the store when neither --db nor MNEMO_DB does.
	dir := filepath.Join(c.home, "config_home", "mnemo")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(c.home, "from-config")
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(fmt.Sprintf("store = %q\n", other)), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	// A read command on a store that is not there says so and creates nothing.
	if code := run([]string{"info"}, strings.NewReader(""), &out, &errOut); code != exitNotFound ||
		!strings.Contains(errOut.String(), "no store at "+other) {
		t.Fatalf("info on a missing store: exit %d, %s", code, errOut.String())
	}
	if _, err := os.Stat(other); !os.IsNotExist(err) {
		t.Fatalf("info created %s: %v", other, err)
	}
	out.Reset()
	errOut.Reset()
	if code := run([]string{"store"}, strings.NewReader(styleLearning), &out, &errOut); code != 0 {
		t.Fatalf("store: exit %d, %s", code, errOut.String())
	}
	out.Reset()
	if code := run([]string{"info"}, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("info: exit %d, %s", code, errOut.String())
	}
	var info cliout.Info
	if err := json.Unmarshal(out.Bytes(), &info); err != nil || info.Store != other {
		t.Errorf("info with store from the config: %s (%v)", out.String(), err)
	}
	t.Setenv("MNEMO_DB", filepath.Join(c.home, "from-env"))
	if code := run([]string{"store"}, strings.NewReader(styleLearning), &out, &errOut); code != 0 {
		t.Fatalf("store: exit %d, %s", code, errOut.String())
	}
	out.Reset()
	if code := run([]string{"info"}, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("info: exit %d, %s", code, errOut.String())
	}
	if err := json.Unmarshal(out.Bytes(), &info); err != nil || info.Store != filepath.Join(c.home, "from-env") {
		t.Errorf("MNEMO_DB wins over the config: %s", out.String())
	}
}

func TestDebugLogsToTheStateFileOnly(t *testing.T) {
	c := newTestCLI(t)
	r := c.run("", "--debug", "explore", "colour")
	if r.code != 2 || r.stderr != "mnemo: invalid request: `colour` is not a facet; facets: "+facetList()+"\n" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	log, err := os.ReadFile(filepath.Join(c.home, "state_home", "mnemo", "mnemo.log"))
	if err != nil {
		t.Fatalf("no log file: %v", err)
	}
	if !strings.Contains(string(log), "mnemo start") || !strings.Contains(string(log), "is not a facet") {
		t.Errorf("log holds %q", log)
	}
}

func TestCompletionScripts(t *testing.T) {
	c := newTestCLI(t)
	for _, shell := range []string{"bash", "zsh", "fish"} {
		out := c.ok("", "completion", shell)
		if !strings.Contains(out, "mnemo") || len(out) < 500 {
			t.Errorf("%s completion looks empty: %q", shell, out)
		}
	}
}

func TestDemoStoresTheCorpusOnceAndReplays(t *testing.T) {
	c := newTestCLI(t)
	var first, second importer.Summary
	c.okJSON(&first, "", "demo", "--no-tui")
	lines := bytes.Count(demoCorpus, []byte("\n"))
	if first.Stored != lines || first.Replayed != 0 || first.Failed != 0 {
		t.Fatalf("first demo: %+v, want %d stored", first, lines)
	}
	c.okJSON(&second, "", "demo", "--no-tui")
	if second.Stored != 0 || second.Replayed != lines {
		t.Errorf("second demo: %+v, want %d replayed", second, lines)
	}
	var page contract.BrowsePage
	c.okJSON(&page, "", "browse", "--query", `{"status":"candidate","limit":1}`)
	if page.Total == 0 {
		t.Error("the demo corpus stored no candidates")
	}
}

func TestTUIRefusesABadKeyBinding(t *testing.T) {
	c := newTestCLI(t)
	cfg := c.writeFile("keys.toml", "[keys]\nteleport = [\"t\"]\n")
	r := c.run("", "--config", cfg, "tui")
	want := "mnemo: configuration error: " + cfg + ": config [keys]: unknown action \"teleport\"\n"
	if r.code != 2 || r.stdout != "" || r.stderr != want {
		t.Errorf("exit %d, stdout %q, stderr %q\nwant %q", r.code, r.stdout, r.stderr, want)
	}
}

func TestConformanceCommandPassesOnAScratchStore(t *testing.T) {
	c := newTestCLI(t)
	out := c.ok("", "conformance")
	if !strings.HasPrefix(out, "conformance of mnemo (bbolt + Bleve) (a scratch store)\n") {
		t.Errorf("header: %q", out)
	}
	if strings.Contains(out, "FAIL ") || !strings.Contains(out, "PASS  browse_") || !strings.HasSuffix(out, " 0 failed\n") {
		t.Errorf("report:\n%s", out)
	}
	if _, err := os.Stat(c.db); err == nil {
		t.Error("conformance touched the user's store")
	}
}

func TestBenchPrintsATable(t *testing.T) {
	c := newTestCLI(t)
	r := c.run("", "bench", "--records", "200", "--iterations", "1")
	if r.code != 0 && r.code != 1 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	for _, row := range []string{"| browse 200, default order, exact total |", "| keyword fetch top 10 |", "| store_many import, end to end |", "| conversation hybrid fetch top 10, every question |"} {
		if !strings.Contains(r.stdout, row) {
			t.Errorf("table lacks %q:\n%s", row, r.stdout)
		}
	}
	if (r.code == 0) == strings.Contains(r.stdout, "| FAIL |") {
		t.Errorf("exit %d does not agree with the table:\n%s", r.code, r.stdout)
	}
}

func TestTUINeedsATerminal(t *testing.T) {
	c := newTestCLI(t)
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	for _, args := range [][]string{{}, {"tui"}, {"demo"}} {
		var out, errOut bytes.Buffer
		code := run(append([]string{"--db", c.db}, args...), null, &out, &errOut)
		if code != 2 || out.Len() != 0 || !strings.HasPrefix(errOut.String(), "mnemo: invalid request: the TUI needs a terminal") {
			t.Errorf("mnemo %v with stdin from %s: exit %d, stdout %q, stderr %q", args, os.DevNull, code, out.String(), errOut.String())
		}
	}
	if _, err := os.Stat(c.db); err == nil {
		t.Error("demo stored the corpus before finding there is no terminal")
	}
}

func TestOutputKeepsHTMLCharacters(t *testing.T) {
	c := newTestCLI(t)
	item := `{"type":"learning","text":"use a <b>bold</b> & 'quoted' name","kind":"fact","confidence":1,"meta":{"source":{"kind":"agent"}}}`
	c.ok(item, "store")
	out := c.ok("", "list")
	if !strings.Contains(out, `"text":"use a <b>bold</b> & 'quoted' name"`) {
		t.Errorf("list escaped the text: %s", out)
	}
	exported := c.ok("", "export")
	if !strings.Contains(exported, `"text":"use a <b>bold</b> & 'quoted' name"`) || !strings.Contains(exported, `"confidence":1.0`) {
		t.Errorf("export changed the item: %s", exported)
	}
}

func TestReviewReject(t *testing.T) {
	c := newTestCLI(t)
	var receipt contract.StoreReceipt
	c.okJSON(&receipt, styleLearning, "store", "--status", "candidate")
	if out := c.ok("", "review", receipt.ID, "--reject"); out != `{"forgotten":1}`+"\n" {
		t.Errorf("review --reject printed %q", out)
	}
	if out := c.ok("", "get", receipt.ID); out != "[]\n" {
		t.Errorf("a rejected candidate still reads back: %q", out)
	}
	r := c.run("", "review", receipt.ID, "--approve")
	if r.code != 4 || !strings.HasPrefix(r.stderr, "mnemo: not found: ") {
		t.Errorf("review after reject: exit %d, %q", r.code, r.stderr)
	}
}
