package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"mnemo/bench/corpus"
	"mnemo/cliout"
	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/postgres"
	"mnemo/engine/postgres/pgtest"
	"mnemo/storecopy"
)

// fillBoltStore writes n corpus records into a store directory with distinct
// times: batches, candidates, a reviewed candidate, expiry, supersessions.
func fillBoltStore(t *testing.T, dir string, n int) {
	t.Helper()
	ctx := context.Background()
	at := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { at = at.Add(1500 * time.Millisecond); return at }
	e, err := bolt.Open(dir, bolt.Options{Clock: clock, FetchModes: []contract.FetchMode{contract.ModeKeyword}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = e.Close() }()
	entries := corpus.Generate(n, 3)
	ids := make([]string, len(entries))
	for i := 0; i < len(entries); {
		j := i + 1
		for j < len(entries) && j-i < 25 && entries[j].Status == entries[i].Status && entries[j].ExpiresAt == nil && entries[i].ExpiresAt == nil {
			j++
		}
		items := make([]contract.StoreItem, 0, j-i)
		for k := i; k < j; k++ {
			items = append(items, entries[k].Item)
		}
		status := entries[i].Status
		if status == contract.StatusSuperseded {
			status = contract.StatusActive
		}
		rs, err := e.StoreManyWith(ctx, items, contract.WriteOptions{Status: status, ExpiresAt: entries[i].ExpiresAt})
		if err != nil {
			t.Fatal(err)
		}
		for k, r := range rs {
			ids[i+k] = r.ID
		}
		i = j
	}
	approved := 0
	for i, en := range entries {
		switch {
		case en.Status == contract.StatusSuperseded && en.SupersededBy >= 0 && en.SupersededBy < len(ids):
			if _, err := e.Supersede(ctx, contract.SupersedeRequest{ID: ids[i], By: ids[en.SupersededBy]}); err != nil {
				t.Fatal(err)
			}
		case en.Status == contract.StatusCandidate && approved < 5:
			approved++
			if _, err := e.Review(ctx, contract.ReviewRequest{ID: ids[i], Action: contract.ReviewApprove}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestCopyBoltToPostgresAndBack copies a directory store to PostgreSQL and
// back: both exports are byte-identical and every record keeps its times; a
// second run replays everything and copies nothing.
func TestCopyBoltToPostgresAndBack(t *testing.T) {
	url := pgtest.URL(t)
	c := newTestCLI(t)
	src := filepath.Join(c.home, "src")
	back := filepath.Join(c.home, "back")
	fillBoltStore(t, src, 700)

	// The sandbox first: records outside it are superseded by records in it.
	sandbox := `{"at":"team:acme/service:nightly-digest","inherit":false,"descendants":true}`
	var rep storecopy.Report
	c.okJSON(&rep, "", "copy", "--reach", sandbox, src, url)
	if !rep.Verified || rep.Copied == 0 {
		t.Fatalf("bolt -> postgres, the sandbox: %+v", rep)
	}
	c.okJSON(&rep, "", "copy", src, url)
	if !rep.Verified || !rep.TimesKept || rep.Copied != rep.Read || rep.Read < 600 || rep.Sampled == 0 {
		t.Fatalf("bolt -> postgres: %+v", rep)
	}
	if strings.Contains(rep.Destination, passwordOfURL(url)) {
		t.Fatalf("the report shows the password: %s", rep.Destination)
	}
	var again storecopy.Report
	c.okJSON(&again, "", "copy", src, url)
	if !again.Verified || again.Copied != 0 || again.Replayed != rep.Read {
		t.Fatalf("resumed copy: %+v", again)
	}
	c.okJSON(&rep, "", "copy", "--reach", sandbox, url, back)
	c.okJSON(&rep, "", "copy", url, back)
	if !rep.Verified || !rep.TimesKept || rep.Copied != rep.Read || len(rep.Unlinked) != 0 || rep.SourceRecords <= rep.Read {
		t.Fatalf("postgres -> bolt: %+v", rep)
	}

	// Every record, the sandbox's too, is the same in all three stores.
	c.db = src
	want := c.ok("", "export", "--sandboxes")
	c.db = url
	viaPG := c.ok("", "export", "--sandboxes")
	c.db = back
	got := c.ok("", "export", "--sandboxes")
	if want != viaPG || want != got {
		wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
		for i := range min(len(wl), len(gl)) {
			if wl[i] != gl[i] {
				t.Logf("line %d:\n%s\n%s", i, wl[i], gl[i])
				break
			}
		}
		t.Fatalf("exports differ: source %d bytes, postgres %d, back %d", len(want), len(viaPG), len(got))
	}
	if n := strings.Count(want, "\n"); n != rep.SourceRecords {
		t.Fatalf("export --sandboxes has %d lines, the source holds %d records", n, rep.SourceRecords)
	}
	// Every record keeps its system fields, times included.
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(want), "\n") {
		var l struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, l.ID)
	}
	read := func(e contract.Engine) string {
		var all []contract.Record
		for start := 0; start < len(ids); start += contract.MaxGetIDs {
			recs, err := e.GetRecords(context.Background(), contract.GetRequest{IDs: ids[start:min(start+contract.MaxGetIDs, len(ids))]})
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, recs...)
		}
		b, _ := json.Marshal(all)
		return string(b)
	}
	stores := map[string]string{}
	for _, dir := range []string{src, back} {
		e, err := bolt.Open(dir, bolt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		stores[dir] = read(e)
		_ = e.Close()
	}
	pg, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	stores[url] = read(pg)
	_ = pg.Close()
	if stores[src] != stores[url] || stores[src] != stores[back] {
		t.Fatalf("records differ between the source, postgres and the copy back")
	}
}

func passwordOfURL(raw string) string {
	i := strings.Index(raw, "://")
	at := strings.Index(raw, "@")
	if i < 0 || at < 0 {
		return "\x00"
	}
	user := raw[i+3 : at]
	if name, pw, ok := strings.Cut(user, ":"); ok && pw != "" && !strings.Contains(name, pw) && !strings.Contains(raw[at:], pw) {
		return pw
	}
	// No password, or one that is also the role's or the database's name
	// (it shows wherever they do): nothing to look for.
	return "\x00"
}

// TestPostgresThroughTheCLI runs commands on a postgres:// store: the URL is
// printed with the password masked (info, errors, the debug log), and a
// server that does not answer is an unavailable error naming the host.
func TestPostgresThroughTheCLI(t *testing.T) {
	url := pgtest.URL(t)
	c := newTestCLI(t)
	c.db = url
	var rc contract.StoreReceipt
	c.okJSON(&rc, `{"type":"document","body":{"text":"the staging database runs postgres"},"meta":{"source":{"kind":"agent"}}}`, "store")
	var page contract.FetchPage
	c.okJSON(&page, "", "fetch", "--mode", "keyword", "staging")
	if len(page.Hits) != 1 || page.Hits[0].ID != rc.ID {
		t.Fatalf("fetch: %+v", page)
	}
	var info cliout.Info
	c.okJSON(&info, "", "--debug", "info")
	pw := passwordOfURL(url)
	if info.Records != 1 || info.Descriptor.ID != "postgres" || strings.Contains(info.Store, pw) || !strings.Contains(info.Store, "xxxxx") && pw != "\x00" {
		t.Fatalf("info: %+v", info)
	}
	// The config file's db key names the same store.
	cfg := c.writeFile("pg.toml", "db = "+strconv.Quote(url)+"\n")
	c.db = ""
	var viaConfig cliout.Info
	c.okJSON(&viaConfig, "", "--config", cfg, "info")
	if viaConfig.Store != info.Store || viaConfig.Records != 1 {
		t.Fatalf("info through the config file's db: %+v", viaConfig)
	}
	c.db = "postgres://someone:hunter2secret@127.0.0.1:1/nothing"
	r := c.run("", "info")
	if r.code != exitFailure || !strings.Contains(r.stderr, "unavailable: PostgreSQL at 127.0.0.1:1") || strings.Contains(r.stderr, "hunter2secret") {
		t.Fatalf("info with the server down: %+v", r)
	}
}
