package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/server/audit"
)

// The JSON goldens in testdata/cli were recorded from the commands as they were
// before the human form existed (docs/spec/cli.md section 2: scripts never see it). Every
// piped run, and every --json run, must print those bytes again. Record them
// anew only on purpose: go test -run TestJSONGoldens . -update

const goldenDir = "testdata/cli"

// fixtureItems are the fixture store's records, stored in this order.
var fixtureItems = []struct {
	item   string
	status contract.Status
}{
	{styleLearning, ""},
	{runbookDoc, ""},
	{supportChat, ""},
	{`{"type":"learning","text":"Deploys need two approvals before the canary","kind":"procedure","confidence":0.7,"meta":{"namespace":"team:acme","source":{"kind":"agent"},"tags":["ops","deploy"]}}`, ""},
	{`{"type":"learning","text":"prefers short commit messages","kind":"preference","confidence":0.55,"meta":{"namespace":"team:acme/agent:writer","source":{"kind":"agent"},"tags":["style"]}}`, contract.StatusCandidate},
	{`{"type":"learning","text":"Deploys need one approval","kind":"procedure","confidence":0.4,"meta":{"namespace":"team:acme","source":{"kind":"agent"},"tags":["ops"]}}`, ""},
	{`{"type":"learning","text":"Café menus are printed in Ünïcode; the\nsecond line is a detail","kind":"fact","confidence":0.8,"meta":{"namespace":"team:beta","source":{"kind":"import","id":"menu.txt"},"tags":["i18n"]}}`, ""},
}

// fixtureClock hands out instants an hour apart from a fixed start, so the
// fixture's timestamps are the same on every run.
type fixtureClock struct {
	mu   sync.Mutex
	next time.Time
}

func (c *fixtureClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.next
	c.next = c.next.Add(time.Hour)
	return t
}

// fixtureStart is the first instant of the fixture's clock.
var fixtureStart = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

// buildFixtureStore writes the fixture store into dir: the records above, one
// superseded by another, and a few audit events.
func buildFixtureStore(t *testing.T, dir string) {
	t.Helper()
	clock := &fixtureClock{next: fixtureStart}
	e, err := bolt.Open(dir, bolt.Options{Clock: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ids := make([]string, len(fixtureItems))
	for i, f := range fixtureItems {
		var it contract.StoreItem
		if err := json.Unmarshal([]byte(f.item), &it); err != nil {
			t.Fatal(err)
		}
		var r contract.StoreReceipt
		if f.status != "" {
			r, err = e.StoreWith(ctx, it, contract.WriteOptions{Status: f.status})
		} else {
			r, err = contract.Store(ctx, e, it)
		}
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = r.ID
	}
	if _, err := e.Supersede(ctx, contract.SupersedeRequest{ID: ids[5], By: ids[3]}); err != nil {
		t.Fatal(err)
	}
	for i, ev := range []audit.Event{
		{Principal: "owner", Role: "admin", Via: "http", Op: "store", IDs: []string{ids[0]}, Count: 1},
		{Principal: "agent-7", Role: "curator", Via: "ssh", Op: "forget_within", IDs: []string{ids[1], ids[2]}, Count: 1, Skipped: 1},
		{Principal: "stranger", Via: "http", Op: "authenticate", Refused: "the token is not known"},
	} {
		ev.At = fixtureStart.Add(time.Duration(i) * 90 * time.Minute)
		if err := e.AppendAudit(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

// fixtureID is the id of fixtureItems[i].
func fixtureID(t *testing.T, i int) string { return fingerprintOf(t, fixtureItems[i].item) }

// newFixtureCLI is a test CLI on a fresh copy of the fixture store.
func newFixtureCLI(t *testing.T) *testCLI {
	t.Helper()
	c := newTestCLI(t)
	buildFixtureStore(t, c.db)
	return c
}

// goldenCase is one command whose JSON is recorded.
type goldenCase struct {
	name  string
	args  func(t *testing.T, c *testCLI) []string
	stdin string
	code  int
}

func fixed(args ...string) func(*testing.T, *testCLI) []string {
	return func(*testing.T, *testCLI) []string { return args }
}

// goldenCases are the commands that gained a human form, with arguments that
// reach their interesting fields (cursors, scores, citations, errors).
func goldenCases() []goldenCase {
	return []goldenCase{
		{name: "list", args: fixed("list")},
		{name: "list-limit", args: fixed("list", "--limit", "2", "--filter", `{"tags_any":["ops","style"]}`)},
		{name: "list-all", args: fixed("list", "--all")},
		{name: "browse", args: fixed("browse")},
		{name: "browse-query", args: fixed("browse", "--query", `{"status":["active","candidate","superseded"],"order_by":[{"field":"confidence","dir":"desc"}],"limit":3}`)},
		{name: "browse-empty", args: fixed("browse", "--query", `{"kind":[]}`)},
		{name: "fetch", args: fixed("fetch", "deploys", "approvals")},
		{name: "fetch-keyword", args: fixed("fetch", "tabs", "--mode", "keyword", "--limit", "1")},
		{name: "recall", args: fixed("recall", "how", "do", "deploys", "go", "out")},
		{name: "get", args: func(t *testing.T, _ *testCLI) []string {
			return []string{"get", fixtureID(t, 1), fixtureID(t, 0), fixtureID(t, 4)}
		}},
		{name: "explore-tag", args: fixed("explore", "tag")},
		{name: "explore-namespace", args: fixed("explore", "namespace")},
		{name: "explore-kind-limit", args: fixed("explore", "kind", "--limit", "2")},
		{name: "info", args: fixed("info")},
		{name: "health", args: fixed("health")},
		{name: "audit", args: fixed("audit")},
		{name: "check", args: fixed("check")},
		{name: "copy", args: func(_ *testing.T, c *testCLI) []string {
			return []string{"copy", c.db, filepath.Join(c.home, "copied")}
		}},
		{name: "import", args: func(_ *testing.T, c *testCLI) []string {
			return []string{"import", c.writeFile("golden.jsonl", jsonl(tabsLearning, styleLearning, `{"type":"learning"`, xDocument))}
		}, code: exitInvalid},
		{name: "import-clean", args: fixed("import", "-"), stdin: jsonl(tabsLearning, xDocument)},
		{name: "forget-ids", args: func(t *testing.T, _ *testCLI) []string {
			return []string{"forget", "--ids", fixtureID(t, 6) + ",0000000000000000000000000000000000000000", "--yes"}
		}},
		{name: "forget-filter", args: fixed("forget", "--filter", `{"tags_any":["ops"]}`, "--yes")},
		{name: "forget-dry-run", args: func(t *testing.T, _ *testCLI) []string {
			return []string{"forget", "--ids", fixtureID(t, 0) + "," + fixtureID(t, 2), "--dry-run"}
		}},
		{name: "forget-dry-run-filter", args: fixed("forget", "--filter", `{"tags_any":["style"]}`, "--dry-run")},
	}
}

// normalizeGolden replaces the test's temporary home, which info prints.
// normalizeGolden writes the test's home as $HOME and the pid of the
// process holding the store (info's held_by) as $PID.
func normalizeGolden(c *testCLI, s string) string {
	s = strings.ReplaceAll(s, c.home, "$HOME")
	return heldByPID.ReplaceAllString(s, "${1}$$PID")
}

var heldByPID = regexp.MustCompile(`("held_by": ?|held by pid )[0-9]+`)

func readGolden(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(goldenDir, name))
	if err != nil {
		t.Fatalf("golden %s: %v (record with go test . -update)", name, err)
	}
	return string(data)
}

func writeGolden(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(goldenDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(goldenDir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestJSONGoldens: piped, every command prints the recorded JSON byte for byte.
func TestJSONGoldens(t *testing.T) {
	update := *updateGoldens
	for _, gc := range goldenCases() {
		t.Run(gc.name, func(t *testing.T) {
			c := newFixtureCLI(t)
			r := c.run(gc.stdin, gc.args(t, c)...)
			if r.code != gc.code || r.stderr != "" {
				t.Fatalf("exit %d (want %d), stderr %q", r.code, gc.code, r.stderr)
			}
			got := normalizeGolden(c, r.stdout)
			if update {
				writeGolden(t, gc.name+".json", got)
				// The JSON on a terminal, indented: what --json prints there.
				// Only stdout is the terminal (stdin may be piped in).
				c := newFixtureCLI(t)
				var out, errOut bytes.Buffer
				a := newApp(strings.NewReader(gc.stdin), &out, &errOut)
				a.isTerminal = func(s any) bool { return s == io.Writer(&out) }
				a.execute(append([]string{"--db", c.db, "--json"}, gc.args(t, c)...))
				writeGolden(t, gc.name+".tty.json", normalizeGolden(c, out.String()))
				return
			}
			if want := readGolden(t, gc.name+".json"); got != want {
				t.Errorf("piped output changed (if the engine's answer changed on purpose, ranking say, re-record with go test . -update)\n got %s\nwant %s", got, want)
			}
		})
	}
}
