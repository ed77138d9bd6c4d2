package main

import (
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"mnemo/engine/bolt"
	"mnemo/server/auth"
	"mnemo/server/httpapi"
)

func TestImportWarnsOncePerUnknownMetaKey(t *testing.T) {
	c := newTestCLI(t)
	file := c.writeFile("odd.jsonl", jsonl(
		`{"type":"document","body":{"text":"one"},"meta":{"source":{"kind":"agent"}}}`,
		`{"type":"document","body":{"text":"two"},"meta":{"source":{"kind":"agent"},"bogus":1}}`,
		`{"type":"document","body":{"text":"three"},"meta":{"source":{"kind":"agent"},"bogus":2,"colour":"red"}}`,
	))
	r := c.run("", "import", file)
	if r.code != 0 || r.stdout != `{"stored":3,"replayed":0,"failed":0,"errors":[]}`+"\n" {
		t.Fatalf("import: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	want := "mnemo import: line 2: meta key \"bogus\" is not part of the contract; it is ignored (not kept) wherever it appears in this file\n" +
		"mnemo import: line 3: meta key \"colour\" is not part of the contract; it is ignored (not kept) wherever it appears in this file\n"
	if r.stderr != want {
		t.Fatalf("stderr %q\nwant   %q", r.stderr, want)
	}
}

func TestCommandLineWordsForBadFlags(t *testing.T) {
	c := newTestCLI(t)
	c.ok(styleLearning, "store")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"watch", "--since", "-1"}, `mnemo: invalid request: --since takes a change seq, a whole number from 0 (the seq of the last line printed), not "-1"; --from-now starts at the newest change` + "\n"},
		{[]string{"list", "--limit", "1000000000"}, "mnemo: invalid request: list --limit must be at most 1,000, not 1,000,000,000; --all walks every page\n"},
		{[]string{"fetch", "tabs", "--limit", "5000"}, "mnemo: invalid request: fetch --limit must be at most 1,000, not 5,000; --cursor pages through the rest\n"},
	} {
		r := c.run("", tc.args...)
		if r.code != 2 || r.stderr != tc.want {
			t.Errorf("mnemo %v: exit %d, stderr %q\nwant %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	c.ok("", "list", "--limit", "1000")
}

// A confined principal's forget by ids says what it left alone and why, as
// the HTTP API does; a missing or unknown token speaks of MNEMO_TOKEN.
func TestRemoteForgetSaysWhatItSkipped(t *testing.T) {
	c := newTestCLI(t)
	dir := filepath.Join(c.home, "served")
	e, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := auth.ParseKeys([]byte(fmt.Sprintf("[[principal]]\nname = \"wes\"\nrole = \"curator\"\nreach = {at = \"team:acme/agent:writer\"}\ntoken_sha256 = [%q]\n", auth.HashToken("wes-token"))))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(e, httpapi.Options{OwnerToken: testOwnerToken, Keys: keys}))
	t.Cleanup(func() {
		srv.Close()
		_ = e.Close()
	})
	t.Setenv("MNEMO_TOKEN", testOwnerToken)
	c.ok(jsonl(styleLearning, runbookDoc), "--remote", srv.URL, "import", "-")
	t.Setenv("MNEMO_TOKEN", "wes-token")
	out := c.ok("", "--remote", srv.URL, "forget", "--ids", fingerprintOf(t, styleLearning)+","+fingerprintOf(t, runbookDoc), "--yes")
	if out != `{"forgotten":1,"skipped":1}`+"\n" {
		t.Fatalf("forget by a confined principal: %q", out)
	}
	c.terminal = true
	r := c.run("", "--remote", srv.URL, "forget", "--ids", fingerprintOf(t, runbookDoc), "--yes")
	if r.code != 0 || r.stdout != "nothing was forgotten\nskipped 1 id: not in the store, or outside what your token may change\n" {
		t.Fatalf("forget for a person: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	c.terminal = false

	t.Setenv("MNEMO_TOKEN", "")
	r = c.run("", "--remote", srv.URL, "list")
	if r.code == 0 || !strings.Contains(r.stderr, "needs a token: set MNEMO_TOKEN") || strings.Contains(r.stderr, "Authorization") {
		t.Fatalf("no token: exit %d, %q", r.code, r.stderr)
	}
	t.Setenv("MNEMO_TOKEN", "nobody's")
	r = c.run("", "--remote", srv.URL, "list")
	if r.code == 0 || !strings.Contains(r.stderr, "does not know the token in MNEMO_TOKEN") {
		t.Fatalf("unknown token: exit %d, %q", r.code, r.stderr)
	}
}
