package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/server/auth"
	"mnemo/server/httpapi"
)

func TestMCPScopeFlags(t *testing.T) {
	c := newTestCLI(t)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no place", []string{"mcp"}, "mnemo: invalid request: mcp needs --place NAMESPACE: where the agent's memories are stored (\"root\" for the root)"},
		{"bad place", []string{"mcp", "--place", "acme"}, "mnemo: invalid request: --place: namespace segment `acme` must be written kind:id"},
		{"bad reach", []string{"mcp", "--place", "agent:w", "--reach", `{"at":"team:acme","wide":true}`}, `mnemo: invalid request: --reach has an unknown key "wide"`},
		{"reach without the place", []string{"mcp", "--place", "agent:w", "--reach", `{"at":"team:acme","inherit":false}`},
			"mnemo: invalid request: --reach does not admit --place agent:w: the agent could not read back what it stores"},
		{"bad zone", []string{"mcp", "--place", "agent:w", "--zone", "Mars/Olympus"}, "mnemo: invalid request: --zone Mars/Olympus is not an IANA time zone"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.run("", tc.args...)
			if r.code != 2 || !strings.HasPrefix(strings.TrimSpace(r.stderr), tc.want) || r.stdout != "" {
				t.Errorf("exit %d, stderr %q, stdout %q; want exit 2 and %q", r.code, r.stderr, r.stdout, tc.want)
			}
		})
	}
}

// mcpSession is an MCP client talking to one `mnemo mcp` run.
type mcpSession struct {
	t  *testing.T
	cs *sdk.ClientSession
}

func (s *mcpSession) call(name, args string) (string, bool) {
	s.t.Helper()
	res, err := s.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		s.t.Fatalf("%s: %v", name, err)
	}
	return res.Content[0].(*sdk.TextContent).Text, res.IsError
}

func (s *mcpSession) ok(name, args string) map[string]any {
	s.t.Helper()
	text, isErr := s.call(name, args)
	if isErr {
		s.t.Fatalf("%s %s: %s", name, args, text)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		s.t.Fatalf("%s: %v", name, err)
	}
	return out
}

func (s *mcpSession) tools() []string {
	s.t.Helper()
	res, err := s.cs.ListTools(context.Background(), nil)
	if err != nil {
		s.t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// startInProcessMCP runs `mnemo --db DIR mcp args...` in this process on pipes
// and connects a client to it. The returned function ends the session and
// returns the command's exit code and stderr.
func startInProcessMCP(t *testing.T, c *testCLI, args ...string) (*mcpSession, func() (int, string)) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr strings.Builder
	code := make(chan int, 1)
	go func() {
		code <- run(append([]string{"--db", c.db, "mcp"}, args...), inR, outW, &stderr)
		_ = outW.Close()
	}()
	client := sdk.NewClient(&sdk.Implementation{Name: "cmd-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connect to mnemo mcp: %v", err)
	}
	return &mcpSession{t: t, cs: cs}, func() (int, string) {
		_ = cs.Close()
		select {
		case n := <-code:
			return n, stderr.String()
		case <-time.After(30 * time.Second):
			t.Fatal("mnemo mcp did not end after its client hung up")
			return -1, ""
		}
	}
}

func TestMCPCommandServesTheStoreAtThePlace(t *testing.T) {
	c := newTestCLI(t)
	c.ok(styleLearning, "store") // team:acme/agent:writer
	c.ok(runbookDoc, "store")    // team:acme
	c.ok(`{"type":"learning","text":"the spy's secret plan","kind":"fact","confidence":0.9,"meta":{"namespace":"team:acme/agent:spy","source":{"kind":"agent"}}}`, "store")

	s, end := startInProcessMCP(t, c, "--place", "team:acme/agent:writer")
	if got := s.tools(); len(got) != 7 {
		t.Errorf("tools = %v, want all seven", got)
	}
	list := s.ok("memory_list", `{"limit":50}`)
	if n := len(list["items"].([]any)); n != 2 {
		t.Errorf("list sees %d memories, want the place's and the team's 2: %v", n, list)
	}
	stored := s.ok("memory_store", `{"document":{"title":"Notes","text":"ship on Tuesday"},"tags":["ops"]}`)
	if text, isErr := s.call("memory_forget", `{"filter":{}}`); !isErr || !strings.Contains(text, "an empty filter would mean everything") {
		t.Errorf("empty forget filter: %s", text)
	}
	if code, stderr := end(); code != 0 || stderr != "" {
		t.Fatalf("mnemo mcp ended with %d, stderr %q", code, stderr)
	}

	// The lock is released: the CLI reads what the agent stored, at the place.
	var hits []contract.Hit
	c.okJSON(&hits, "", "get", stored["id"].(string))
	if len(hits) != 1 || hits[0].Meta.Namespace.String() != "team:acme/agent:writer" || hits[0].Meta.SourceKindOf() != contract.SourceAgent {
		t.Errorf("stored memory = %+v, want it at the place with an agent source", hits)
	}
}

func TestMCPCommandReadOnly(t *testing.T) {
	c := newTestCLI(t)
	c.ok(styleLearning, "store")
	s, end := startInProcessMCP(t, c, "--place", "team:acme/agent:writer", "--read-only")
	if got := s.tools(); slices.Contains(got, "memory_store") || slices.Contains(got, "memory_forget") {
		t.Errorf("read-only tools = %v", got)
	}
	if text, isErr := s.call("memory_store", `{"learning":{"text":"x"}}`); !isErr || text != "unsupported: memory_store is not offered: these memory tools are read-only" {
		t.Errorf("store on read-only: %s", text)
	}
	if code, _ := end(); code != 0 {
		t.Errorf("exit %d", code)
	}
	var page contract.ListPage
	c.okJSON(&page, "", "list")
	if len(page.Items) != 1 {
		t.Errorf("a read-only session changed the store: %d items", len(page.Items))
	}
}

// TestMCPBinaryOverStdio builds the mnemo binary and drives `mnemo mcp` as an
// MCP host does: a subprocess speaking JSON-RPC on its stdin and stdout.
func TestMCPBinaryOverStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	c := newTestCLI(t)
	c.ok(styleLearning, "store")
	bin := filepath.Join(t.TempDir(), "mnemo")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	cmd := exec.Command(bin, "--db", c.db, "mcp", "--place", "team:acme/agent:writer",
		"--reach", `{"at":"team:acme","descendants":true}`)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(c.home, "config"), "XDG_STATE_HOME="+filepath.Join(c.home, "state"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	client := sdk.NewClient(&sdk.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v (stderr %q)", err, stderr.String())
	}
	s := &mcpSession{t: t, cs: cs}
	if init := cs.InitializeResult(); init == nil || init.ServerInfo.Name != "mnemo" {
		t.Errorf("server info = %+v", init)
	}

	receipt := s.ok("memory_store", `{"conversation":{"turns":[{"role":"user","text":"deploy on tuesday?"},{"role":"assistant","text":"yes, after the canary"}]},"tags":["ops"]}`)
	got := s.ok("memory_get", fmt.Sprintf(`{"ids":[%q,%q]}`, receipt["id"], fingerprintOf(t, styleLearning)))
	if n := len(got["items"].([]any)); n != 2 {
		t.Errorf("get = %v, want both memories", got)
	}
	recall := s.ok("memory_recall", `{"question":"when do we deploy?","limit":3}`)
	if cites := recall["citations"].([]any); len(cites) == 0 {
		t.Errorf("recall cites nothing: %v", recall)
	}
	if text, isErr := s.call("memory_list", `{"filter":{"namespace":"team:other"}}`); !isErr ||
		text != "invalid request: memory_list: `filter.namespace` is fixed by the host and cannot be passed to a memory tool" {
		t.Errorf("namespace in a filter: %s", text)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Errorf("mnemo mcp exited with %v, stderr %q", cmd.ProcessState, stderr.String())
	}
}

// TestMCPCommandOverRemote serves a store that `mnemo serve` owns: the tools
// run through engine/remote, forget by ids through forget_within.
func TestMCPCommandOverRemote(t *testing.T) {
	c := newTestCLI(t)
	url := serveStore(t, filepath.Join(c.home, "served"))
	t.Setenv("MNEMO_TOKEN", testOwnerToken)
	c.ok(styleLearning, "--remote", url, "store")
	spy := `{"type":"learning","text":"the spy's secret plan","kind":"fact","confidence":0.9,"meta":{"namespace":"team:acme/agent:spy","source":{"kind":"agent"}}}`
	c.ok(spy, "--remote", url, "store")

	s, end := startInProcessMCP(t, c, "--remote", url, "--place", "team:acme/agent:writer")
	stored := s.ok("memory_store", `{"learning":{"text":"release notes go in CHANGELOG.md","learning_kind":"procedure"}}`)
	forget := s.ok("memory_forget", fmt.Sprintf(`{"ids":[%q,%q]}`, stored["id"], fingerprintOf(t, spy)))
	if forget["forgotten"] != 1.0 || len(forget["skipped"].([]any)) != 1 {
		t.Errorf("forget over remote = %v, want the agent's memory removed and the spy's skipped", forget)
	}
	list := s.ok("memory_list", `{}`)
	if n := len(list["items"].([]any)); n != 1 {
		t.Errorf("list over remote = %v, want only the writer's seeded memory", list)
	}
	if code, stderr := end(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var hits []contract.Hit
	c.okJSON(&hits, "", "--remote", url, "get", fingerprintOf(t, spy))
	if len(hits) != 1 {
		t.Errorf("the spy's memory is gone from the server")
	}
}

// A reader's token gets the read tools only: its principal cannot store or
// forget, so mnemo mcp does not offer memory_store or memory_forget.
func TestMCPToolsFollowThePrincipalsRole(t *testing.T) {
	c := newTestCLI(t)
	dir := filepath.Join(c.home, "served")
	e, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := auth.ParseKeys([]byte(fmt.Sprintf("[[principal]]\nname = \"bob\"\nrole = \"reader\"\ntoken_sha256 = [%q]\n\n[[principal]]\nname = \"cora\"\nrole = \"curator\"\ntoken_sha256 = [%q]\n",
		auth.HashToken("bob-token"), auth.HashToken("cora-token"))))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(e, httpapi.Options{OwnerToken: testOwnerToken, Keys: keys}))
	t.Cleanup(func() {
		srv.Close()
		_ = e.Close()
	})
	for _, tc := range []struct {
		token  string
		writes bool
	}{{"bob-token", false}, {"cora-token", true}, {testOwnerToken, true}} {
		t.Setenv("MNEMO_TOKEN", tc.token)
		s, end := startInProcessMCP(t, c, "--remote", srv.URL, "--place", "team:acme/agent:writer")
		got := s.tools()
		if offered := slices.Contains(got, "memory_store") || slices.Contains(got, "memory_forget"); offered != tc.writes {
			t.Errorf("token %s: tools %v; want the write tools offered: %v", tc.token, got, tc.writes)
		}
		if len(got) < 5 {
			t.Errorf("token %s: tools %v; want the five reads at least", tc.token, got)
		}
		if code, stderr := end(); code != 0 {
			t.Fatalf("token %s: exit %d, stderr %q", tc.token, code, stderr)
		}
	}
}
