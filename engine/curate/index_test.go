package curate

import (
	"math/rand"
	"reflect"
	"testing"
	"time"

	"mnemo/contract"
)

func rec(id string, kind contract.ItemKind, text string) contract.Record {
	return contract.Record{ID: id, Kind: kind, Text: text, Status: contract.StatusActive,
		CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func TestRelate(t *testing.T) {
	base := "Postgres 16 (billing-db) has a connection limit of 200; billing-api uses a PgBouncer pool of 39."
	cfg := DefaultConfig()
	cases := []struct {
		name string
		a, b contract.Record
		want Relation
		diff string
	}{
		{"same text", rec("a", contract.KindDocument, base), rec("b", contract.KindDocument, base), Repeat, ""},
		{"one number", rec("a", contract.KindDocument, base), rec("b", contract.KindDocument, "Postgres 16 (billing-db) has a connection limit of 200; billing-api uses a PgBouncer pool of 20."), Conflict, "39 | 20"},
		{"negation", rec("a", contract.KindLearning, "The user wants dark mode in every editor they use at work."), rec("b", contract.KindLearning, "The user does not want dark mode in every editor they use at work."), Conflict, "negation"},
		{"name", rec("a", contract.KindLearning, "The on-call engineer for the payments service this week is Priya, reachable on the ops channel or by pager, and owns incident reviews, runbook updates, the status page, customer escalations, release freezes and the weekly capacity report."), rec("b", contract.KindLearning, "The on-call engineer for the payments service this week is Marcus, reachable on the ops channel or by pager, and owns incident reviews, runbook updates, the status page, customer escalations, release freezes and the weekly capacity report."), Conflict, "priya | marcu"},
		// A short sentence with one name swapped stays under the conflict
		// threshold (8 of 10 words shared): a known miss (docs/curation.md).
		{"short name swap", rec("a", contract.KindLearning, "The on-call engineer for the payments service this week is Priya, reachable on the ops channel."), rec("b", contract.KindLearning, "The on-call engineer for the payments service this week is Marcus, reachable on the ops channel."), None, ""},
		{"reordered", rec("a", contract.KindDocument, "Check ctx.Err() inside long loops so a cancelled request stops burning CPU. Every function that does I/O takes a context.Context first."), rec("b", contract.KindDocument, "Every function that does I/O takes a context.Context first. Check ctx.Err() inside long loops so a cancelled request stops burning CPU."), Repeat, ""},
		{"kinds apart", rec("a", contract.KindDocument, base), rec("b", contract.KindLearning, base), None, ""},
		{"unrelated", rec("a", contract.KindDocument, base), rec("b", contract.KindDocument, "Prune roses in late winter just as buds swell."), None, ""},
		{"too short", rec("a", contract.KindDocument, "use tabs"), rec("b", contract.KindDocument, "use tabs"), None, ""},
		// One page's subject is a name the other never says: another
		// function described by the same template, not a repeat.
		{"another subject", rec("a", contract.KindDocument, "The memcpy() function copies n bytes from memory area src to memory area dest. The memory areas must not overlap. Use memmove(3) if the memory areas do overlap."), rec("b", contract.KindDocument, "The memmove() function copies n bytes from memory area src to memory area dest. The memory areas may not overlap."), None, ""},
		// A hyphenated compound is no subject: a rewording still.
		{"compound is no subject", rec("a", contract.KindDocument, "Let the dough ferment in bulk until it has grown by about half and shows bubbles at the edges, usually four to five hours at 24 degrees. Cold kitchens need longer."), rec("b", contract.KindDocument, "Bulk-ferment the dough until it has grown by about half with bubbles at the edges, usually four to five hours at 24 degrees; cold kitchens need longer."), Repeat, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, diff := Relate(c.a, c.b, cfg)
			if got != c.want || diff != c.diff {
				t.Errorf("Relate = %s %q, want %s %q", got, diff, c.want, c.diff)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		cfg  Config
		want string
	}{
		{Config{MinOverlap: 0, Repeat: 0.5, Conflict: 0.5, Swap: 0.5, MinWords: 1}, "curate.min_overlap is 0; it must be above 0 and at most 1"},
		{Config{MinOverlap: 0.5, Repeat: 1.5, Conflict: 0.5, Swap: 0.5, MinWords: 1}, "curate.repeat is 1.5; it must be above 0 and at most 1"},
		{Config{MinOverlap: 0.6, Repeat: 0.5, Conflict: 0.7, Swap: 0.5, MinWords: 1}, "curate.min_overlap (0.6) must not exceed curate.repeat (0.5) or curate.conflict (0.7)"},
		{Config{MinOverlap: 0.5, Repeat: 0.5, Conflict: 0.5, Swap: 0.5, MinWords: 0}, "curate.min_words is 0; it must be at least 1"},
	}
	for _, b := range bad {
		if err := b.cfg.Validate(); err == nil || err.Error() != b.want {
			t.Errorf("Validate(%+v) = %v, want %q", b.cfg, err, b.want)
		}
	}
}

// TestIncrementalEqualsScratch stores the labelled set one record at a time
// in shuffled orders, forgetting some on the way, and compares the index's
// clusters with clusters computed from scratch over the records left.
func TestIncrementalEqualsScratch(t *testing.T) {
	s := loadEvalSet(t)
	cfg := DefaultConfig()
	for seed := int64(1); seed <= 3; seed++ {
		rng := rand.New(rand.NewSource(seed))
		order := rng.Perm(len(s.records))
		ix := NewIndex(cfg)
		live := map[string]contract.Record{}
		for n, i := range order {
			r := s.records[i]
			ix.Add(r)
			live[r.ID] = r
			if n%7 == 3 { // forget an earlier record now and then
				victim := s.records[order[rng.Intn(n+1)]].ID
				ix.Remove(victim)
				delete(live, victim)
			}
		}
		var left []contract.Record
		for _, r := range s.records {
			if _, ok := live[r.ID]; ok {
				left = append(left, r)
			}
		}
		got, want := ix.Clusters(), Find(left, cfg)
		if len(want) == 0 {
			t.Fatal("no clusters from scratch: the set lost its repeats")
		}
		if !reflect.DeepEqual(keys(got), keys(want)) {
			t.Fatalf("seed %d: incremental clusters %v differ from scratch %v", seed, keys(got), keys(want))
		}
		for i := range got {
			if got[i].Conflict != want[i].Conflict || !reflect.DeepEqual(got[i].IDs(), want[i].IDs()) {
				t.Fatalf("seed %d: cluster %s differs: %v %v / %v %v", seed, got[i].Key, got[i].IDs(), got[i].Conflict, want[i].IDs(), want[i].Conflict)
			}
		}
	}
}

func keys(cs []Cluster) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Key
	}
	return out
}

func TestClusterOrder(t *testing.T) {
	at := func(r contract.Record, d int) contract.Record {
		r.CreatedAt = r.CreatedAt.Add(time.Duration(d) * time.Hour)
		return r
	}
	text := "The worker runs as a systemd unit with Restart=on-failure and a RestartSec of five seconds."
	other := "Nightly pg_dump backups go to object storage and we restore the latest one every month."
	rs := []contract.Record{
		at(rec("w1", contract.KindDocument, text), 1), at(rec("w2", contract.KindDocument, text), 3),
		at(rec("b1", contract.KindDocument, other), 5), at(rec("b2", contract.KindDocument, other), 6),
		at(rec("w3", contract.KindDocument, text), 2),
	}
	cs := Find(rs, DefaultConfig())
	if len(cs) != 2 || !reflect.DeepEqual(cs[0].IDs(), []string{"w2", "w3", "w1"}) || !reflect.DeepEqual(cs[1].IDs(), []string{"b2", "b1"}) {
		t.Fatalf("clusters %v %v: want the larger first, newest member first", cs[0].IDs(), cs[1].IDs())
	}
}

// TestSides: a rewording of the base and a one-word edit of it disagree,
// though the two differ in more words than a swap; the edit's side is
// named apart from the keeper's, and a repeat cluster has no sides.
func TestSides(t *testing.T) {
	base := rec("base", contract.KindDocument, "The API opened too many database connections under load. We put PgBouncer in transaction mode in front of Postgres and capped each service at 20 connections.")
	reword := rec("reword", contract.KindDocument, "Under load the API opened too many database connections, so PgBouncer now sits in front of Postgres in transaction mode and each service is capped at 20 connections.")
	edit := rec("edit", contract.KindDocument, "The API opened too many database connections under load. We put PgBouncer in session mode in front of Postgres and capped each service at 20 connections.")
	other := rec("other", contract.KindDocument, "The API opened too many database connections under load. We put PgBouncer in transaction mode in front of Postgres and capped each service at 50 connections.")
	pair := memberIndex([]contract.Record{reword, edit})
	if rel, _, _ := pair.within(&pair.entries[0], &pair.entries[1], DefaultConfig()); rel != Repeat {
		t.Fatalf("the pair alone reads as %s; the test needs a pair that reads as a repeat", rel)
	}
	base.CreatedAt = base.CreatedAt.Add(time.Hour) // the newest: the suggested keeper
	clusters := Find([]contract.Record{reword, edit, base, other}, DefaultConfig())
	if len(clusters) != 1 || len(clusters[0].Members) != 4 || !clusters[0].Conflict {
		t.Fatalf("clusters = %+v, want one conflict of four", clusters)
	}
	c := clusters[0]
	want := map[string]int{"base": 0, "reword": 0}
	for id, side := range want {
		if got := c.SideOf(id); got != side {
			t.Errorf("side of %s = %d, want %d", id, got, side)
		}
	}
	if c.SideOf("edit") == 0 || c.SideOf("other") == 0 || c.SideOf("edit") == c.SideOf("other") {
		t.Errorf("sides = %v: the two edits each want a side of their own", c.Side)
	}
	rep := Find([]contract.Record{base, rec("copy", contract.KindDocument, base.Text)}, DefaultConfig())
	if len(rep) != 1 || rep[0].Side != nil {
		t.Errorf("a repeat cluster: %+v, want no sides", rep)
	}
}
