package main

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mnemo/cliout"
	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/importer"
	"mnemo/server/httpapi"
)

const testOwnerToken = "owner-token-for-cli-tests"

// serveStore serves a real bolt store in dir over HTTP on loopback, as `mnemo
// serve` would: the address and the owner token are written beside the store.
func serveStore(t *testing.T, dir string) string {
	t.Helper()
	e, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(e, httpapi.Options{OwnerToken: testOwnerToken}))
	t.Cleanup(func() {
		srv.Close()
		_ = e.Close()
	})
	if err := os.WriteFile(filepath.Join(dir, bolt.AddrFile), []byte(strings.TrimPrefix(srv.URL, "http://")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, bolt.TokenFile), []byte(testOwnerToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return srv.URL
}

func TestRemoteCommands(t *testing.T) {
	c := newTestCLI(t)
	url := serveStore(t, filepath.Join(c.home, "served"))
	t.Setenv("MNEMO_TOKEN", testOwnerToken)

	var receipt contract.StoreReceipt
	c.okJSON(&receipt, styleLearning, "--remote", url, "store", "--status", "candidate")
	if receipt.ID != fingerprintOf(t, styleLearning) {
		t.Fatalf("store over HTTP: %+v", receipt)
	}
	var summary importer.Summary
	c.okJSON(&summary, jsonl(runbookDoc, supportChat), "--remote", url, "import", "-")
	if summary.Stored != 2 {
		t.Errorf("import over HTTP: %+v", summary)
	}
	var page contract.BrowsePage
	c.okJSON(&page, "", "--remote", url, "browse", "--query", `{"status":"candidate"}`)
	if page.Total != 1 || page.Records[0].ID != receipt.ID {
		t.Errorf("browse over HTTP: %+v", page)
	}
	var info cliout.Info
	c.okJSON(&info, "", "--remote", url, "info")
	if info.Store != url || info.Records != 3 || info.Index != nil {
		t.Errorf("info over HTTP: %+v", info)
	}
	r := c.run("", "--remote", url, "review", "ffffffffffffffffffffffffffffffffffffffff", "--approve")
	if r.code != 4 || !strings.HasPrefix(r.stderr, "mnemo: not found: ") {
		t.Errorf("not found over HTTP: exit %d, %q", r.code, r.stderr)
	}
	r = c.run("", "--remote", url, "browse", "--query", `{"limit":5000}`)
	if r.code != 2 || r.stderr != "mnemo: invalid request: invalid-query: limit must be at most 1000\n" {
		t.Errorf("invalid browse over HTTP: exit %d, %q", r.code, r.stderr)
	}
	// A cursor is judged by the server; its code comes back in the error body.
	c.okJSON(&page, "", "--remote", url, "browse", "--query", `{"limit":1}`)
	foreign := `{"limit":1,"kind":"document","cursor":"` + *page.Continuation + `"}`
	r = c.run("", "--remote", url, "browse", "--query", foreign)
	if r.code != 2 || r.stderr != "mnemo: invalid request: continuation-invalid: cursor belongs to a different query\n" {
		t.Errorf("foreign cursor over HTTP: exit %d, %q", r.code, r.stderr)
	}
	r = c.run("", "--remote", url, "--json", "browse", "--query", foreign)
	if r.code != 2 || r.stderr != `{"error":{"kind":"invalid_request","code":"continuation-invalid","message":"cursor belongs to a different query"}}`+"\n" {
		t.Errorf("foreign cursor over HTTP with --json: exit %d, %q", r.code, r.stderr)
	}

	out := c.ok("", "--remote", url, "conformance")
	if !strings.HasPrefix(out, "conformance of mnemo (bbolt + Bleve) ("+url+")\n") || !strings.HasSuffix(out, " 0 failed\n") {
		t.Errorf("conformance over HTTP:\n%s", out)
	}

	t.Setenv("MNEMO_TOKEN", "wrong")
	r = c.run("", "--remote", url, "list")
	if r.code != 5 || r.stdout != "" || !strings.HasPrefix(r.stderr, "mnemo: unauthorized: ") || strings.Contains(r.stderr, "wrong") {
		t.Errorf("wrong token: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	t.Setenv("MNEMO_TOKEN", "")
	r = c.run("", "--remote", "ftp://example.com", "list")
	if r.code != 2 || r.stderr != "mnemo: configuration error: the server address `ftp://example.com` must start with http://, https:// or unix://\n" {
		t.Errorf("bad URL: exit %d, %q", r.code, r.stderr)
	}
}

// TestAttachesToTheServerHoldingTheStore: a store locked by a server of an
// earlier mnemo (no socket) that left its address and token is used through
// the server.
func TestAttachesToTheServerHoldingTheStore(t *testing.T) {
	c := newTestCLI(t)
	serveStore(t, c.db)
	var receipt contract.StoreReceipt
	c.okJSON(&receipt, styleLearning, "store")
	var hits []contract.Hit
	c.okJSON(&hits, "", "get", receipt.ID)
	if len(hits) != 1 {
		t.Fatalf("get through the attached server: %+v", hits)
	}
	// Without a readable token the lock is reported.
	if err := os.Remove(filepath.Join(c.db, bolt.TokenFile)); err != nil {
		t.Fatal(err)
	}
	r := c.run("", "list")
	if r.code != 3 || r.stderr != fmt.Sprintf("mnemo: locked: store %s is locked by process %d, which does not share it (an earlier mnemo, or another program that opened mnemo.db); stop it and try again\n", c.db, os.Getpid()) {
		t.Errorf("locked without a token: exit %d, %q", r.code, r.stderr)
	}
}
