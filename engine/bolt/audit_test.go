package bolt_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/server/audit"
)

func TestAuditLogKeepsEventsInTimeOrderAcrossReopen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	base := time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)
	f := contract.MetaFilter{TagsAny: []string{"style"}}
	events := []audit.Event{
		{At: base.Add(2 * time.Second), Principal: "alice", Role: "curator", Via: "http", Op: "forget", Filter: &f, Count: 3},
		{At: base, Principal: "owner", Role: "admin", Via: "http", Op: "store", IDs: []string{"a"}, Count: 1},
		{At: base.Add(time.Second), Principal: "bob", Role: "reader", Via: "ssh", Op: "forget", IDs: []string{"x"}, Refused: "principal `bob` is a reader and cannot forget"},
	}
	for _, ev := range events {
		if err := e.AppendAudit(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err = bolt.Open(dir, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	got, err := e.ReadAudit(ctx, audit.Query{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"owner store", "bob forget", "alice forget"}
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d", len(got), len(want))
	}
	for i, ev := range got {
		if s := ev.Principal + " " + ev.Op; s != want[i] {
			t.Fatalf("event %d is %q, want %q", i, s, want[i])
		}
	}
	if got[2].Filter == nil || got[2].Filter.TagsAny[0] != "style" || got[2].Count != 3 {
		t.Fatalf("the forget's filter and count did not survive: %+v", got[2])
	}
	if got[1].Refused == "" {
		t.Fatal("the refusal lost its message")
	}
	since, err := e.ReadAudit(ctx, audit.Query{Since: base.Add(time.Second), Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(since) != 1 || since[0].Principal != "bob" {
		t.Fatalf("since+limit gave %+v, want bob's refusal only", since)
	}
}

func TestAuditAppendsConcurrently(t *testing.T) {
	t.Parallel()
	e, err := bolt.Open(t.TempDir(), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := e.AppendAudit(ctx, audit.Event{Principal: fmt.Sprint("p", i), Op: "store", Count: 1}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, err := e.ReadAudit(ctx, audit.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 40 {
		t.Fatalf("got %d events, want 40", len(got))
	}
	for _, ev := range got {
		if ev.At.IsZero() {
			t.Fatal("an event without a time was not stamped")
		}
	}
}
