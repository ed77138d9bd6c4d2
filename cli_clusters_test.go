package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"mnemo/engine/curate"
	"mnemo/server/local"
)

var clusterItems = []string{
	`{"type":"document","title":"pool","body":{"text":"Postgres 16 (billing-db) has a connection limit of 200; billing-api uses a PgBouncer pool of 39."},"meta":{"source":{"kind":"agent"},"observed_at":"2026-03-01T00:00:00Z"}}`,
	`{"type":"document","title":"pool","body":{"text":"Postgres 16 (billing-db) has a connection limit of 200; billing-api uses a PgBouncer pool of 20."},"meta":{"source":{"kind":"agent"},"observed_at":"2026-03-05T00:00:00Z"}}`,
	`{"type":"learning","text":"The user wants table-driven tests in Go, with a name field for every case and t.Run for subtests.","kind":"preference","confidence":0.9,"meta":{"source":{"kind":"agent"}}}`,
	`{"type":"learning","text":"The user wants table-driven tests in Go, with a name field for every case and t.Run for subtests.","kind":"preference","confidence":0.6,"meta":{"source":{"kind":"agent"},"agent_id":"other"}}`,
	`{"type":"learning","text":"Prune roses in late winter just as buds swell, above an outward-facing bud.","kind":"fact","confidence":0.7,"meta":{"source":{"kind":"agent"}}}`,
}

// TestClustersResolveUndo lists the clusters of a real store, resolves them,
// and undoes the resolution: every browse order and explore count is as before.
func TestClustersResolveUndo(t *testing.T) {
	c := newTestCLI(t)
	for i, it := range clusterItems {
		if i == 3 {
			// The less confident copy awaits review: undo gives it back as a
			// candidate, not approved.
			c.ok(it, "store", "--status", "candidate")
			continue
		}
		c.ok(it, "store")
	}
	var rep curate.Report
	c.okJSON(&rep, "", "clusters")
	if rep.Records != 5 || rep.Count != 2 || rep.Conflicts != 1 || rep.Clustered != 4 || len(rep.Clusters) != 2 {
		t.Fatalf("report %+v: want 2 clusters (1 conflict) holding 4 of 5 records", rep)
	}
	var conflict curate.ClusterReport
	for _, cl := range rep.Clusters {
		if cl.Conflict {
			conflict = cl
		}
	}
	if len(conflict.Members) != 2 || !strings.Contains(conflict.Members[0].Text, "pool of 20") || fmt.Sprint(conflict.Differences) != "[39 | 20]" && fmt.Sprint(conflict.Differences) != "[20 | 39]" {
		t.Fatalf("conflict cluster %+v: want the newest (pool of 20) first and 20 | 39", conflict)
	}

	before := storeViews(c)
	var dry clustersApplied
	c.okJSON(&dry, "", "clusters", "--apply", "--keep", "confident", "--dry-run")
	if !dry.DryRun || dry.Superseded != 2 || len(dry.Done) != 0 {
		t.Fatalf("dry run %+v: want 2 supersedes planned, none done", dry)
	}
	if after := storeViews(c); after != before {
		t.Fatalf("a dry run changed the store:\n%s\n%s", before, after)
	}
	applied := c.ok("", "clusters", "--apply", "--keep", "confident")
	var done clustersApplied
	if err := json.Unmarshal([]byte(applied), &done); err != nil || len(done.Done) != 2 {
		t.Fatalf("apply answered %s (%v): want 2 supersedes done", applied, err)
	}
	c.okJSON(&rep, "", "clusters")
	if rep.Count != 0 || rep.Records != 3 {
		t.Fatalf("after resolving: %+v, want no clusters over 3 records", rep)
	}
	var restored map[string]int
	c.okJSON(&restored, applied, "clusters", "--undo")
	if restored["restored"] != 2 {
		t.Fatalf("undo restored %v", restored)
	}
	if after := storeViews(c); after != before {
		t.Fatalf("undo did not put the store back:\nbefore %s\nafter  %s", before, after)
	}

	// Dismissal: the conflict stays hidden until a new record joins it.
	c.ok("", "clusters", "--dismiss", conflict.Key)
	c.okJSON(&rep, "", "clusters")
	if rep.Count != 1 || rep.Dismissed != 1 {
		t.Fatalf("after dismissing: %+v, want 1 cluster and 1 dismissed", rep)
	}
	c.ok(strings.Replace(clusterItems[1], "pool of 20", "pool of 25", 1), "store")
	c.okJSON(&rep, "", "clusters")
	if rep.Count != 2 || rep.Dismissed != 0 {
		t.Fatalf("after a new record joined the dismissed cluster: %+v, want it back", rep)
	}
	if _, err := os.Stat(c.home + "/state_home/mnemo/dismissed.json"); err != nil {
		t.Fatal(err)
	}
}

// storeViews is what a person sees of the store: browse in the orders undo
// keeps and the status and kind counts. Undo stamps updated_at (it is an
// update), so the updated_at order is the one it does not give back
// (docs/curation.md).
func storeViews(c *testCLI) string {
	var b strings.Builder
	for _, q := range []string{`{"order_by":[{"field":"created_at","dir":"desc"}]}`, `{"order_by":[{"field":"confidence","dir":"desc"}]}`, `{"status":"active","order_by":[{"field":"observed_at","dir":"asc"}]}`} {
		var page struct {
			Total   int `json:"total"`
			Records []struct {
				ID     string `json:"id"`
				Status string `json:"status"`
			} `json:"records"`
		}
		c.okJSON(&page, "", "browse", "--query", q)
		fmt.Fprintf(&b, "%d:", page.Total)
		for _, r := range page.Records {
			fmt.Fprintf(&b, " %s/%s", r.ID[:8], r.Status)
		}
		b.WriteString("\n")
	}
	for _, facet := range []string{"status", "kind"} {
		b.WriteString(c.ok("", "explore", facet))
	}
	return b.String()
}

func TestClustersUsage(t *testing.T) {
	c := newTestCLI(t)
	c.ok(clusterItems[0], "store")
	for _, args := range [][]string{
		{"clusters", "--dry-run"},
		{"clusters", "--apply", "--undo"},
		{"clusters", "--keep", "newest"},
		{"clusters", "--apply", "--keep", "oldest"},
	} {
		if r := c.run("", args...); r.code != 2 {
			t.Errorf("%v: exit %d (%s), want a usage error", args, r.code, r.stderr)
		}
	}
	if r := c.run("", "clusters", "--dismiss", "nope"); r.code != 4 {
		t.Errorf("dismissing an unknown cluster: exit %d (%s), want not found", r.code, r.stderr)
	}
}

// TestClustersOverHTTP: clusters, their resolution and its undo, beliefs and
// consolidate work through a server (--remote) as on the store itself.
func TestClustersOverHTTP(t *testing.T) {
	c := newTestCLI(t)
	url := serveStore(t, c.home+"/served")
	t.Setenv("MNEMO_TOKEN", testOwnerToken)
	for _, it := range clusterItems {
		c.ok(it, "--remote", url, "store")
	}
	var rep curate.Report
	c.okJSON(&rep, "", "--remote", url, "clusters")
	if rep.Count != 2 || rep.Records != 5 {
		t.Fatalf("clusters over HTTP: %+v", rep)
	}
	applied := c.ok("", "--remote", url, "clusters", "--apply", "--keep", "newest")
	c.okJSON(&rep, "", "--remote", url, "clusters")
	if rep.Count != 0 {
		t.Fatalf("after resolving over HTTP: %+v", rep)
	}
	c.ok(applied, "--remote", url, "clusters", "--undo")
	var beliefs []struct {
		Kind     string   `json:"kind"`
		Tags     []string `json:"-"`
		Evidence []string `json:"evidence"`
	}
	c.okJSON(&beliefs, "", "--remote", url, "beliefs")
	if len(beliefs) != 2 || len(beliefs[0].Evidence) != 2 || beliefs[0].Kind != "learning" {
		t.Fatalf("beliefs over HTTP after undo: %+v", beliefs)
	}
	var rec struct {
		Status string `json:"status"`
		Built  int    `json:"built"`
	}
	c.okJSON(&rec, "", "--remote", url, "consolidate")
	if rec.Status != "completed" || rec.Built != 2 {
		t.Fatalf("consolidate over HTTP: %+v", rec)
	}
}

// A process that holds the store for a while keeps its clusters: `mnemo
// clusters` from another process reads them through the holder's socket
// ("kept"), and they are the clusters a pass over the store finds, before
// and after a store that joins a cluster and a forget that leaves one.
func TestClustersKeptByTheHolder(t *testing.T) {
	c := newTestCLI(t)
	for _, it := range clusterItems {
		c.ok(it, "store")
	}
	var scan curate.Report
	c.okJSON(&scan, "", "clusters")
	if scan.Kept || scan.Count != 2 {
		t.Fatalf("without a holder: %+v, want 2 clusters found by a pass", scan)
	}
	cfg := curate.DefaultConfig()
	holder, err := local.Open(context.Background(), c.db, local.Options{Clusters: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	kept := func() curate.Report {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			var rep curate.Report
			c.okJSON(&rep, "", "clusters")
			if rep.Kept {
				return rep
			}
			if time.Now().After(deadline) {
				t.Fatalf("the holder did not answer kept clusters in 30 s: %+v", rep)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	got := kept()
	got.Kept = false
	if !reflect.DeepEqual(got, scan) {
		t.Fatalf("kept clusters differ from a pass's:\nkept %+v\npass %+v", got, scan)
	}
	// A third pool figure joins the conflict; forgetting it takes it out.
	third := strings.Replace(clusterItems[1], "pool of 20", "pool of 25", 1)
	third = strings.Replace(third, "2026-03-05", "2026-03-09", 1)
	var rec struct {
		ID string `json:"id"`
	}
	c.okJSON(&rec, third, "store")
	got = kept()
	if got.Count != 2 || got.Clustered != 5 || !strings.Contains(got.Clusters[0].Members[0].Text, "pool of 25") {
		t.Fatalf("after a third figure: %+v, want it newest in a cluster of 3", got)
	}
	c.ok("", "forget", "--ids", rec.ID)
	got = kept()
	got.Kept = false
	if !reflect.DeepEqual(got, scan) {
		t.Fatalf("after the forget, kept clusters differ from the first pass's:\nkept %+v\npass %+v", got, scan)
	}
}
