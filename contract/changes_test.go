package contract_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"mnemo/contract"
)

func TestChangesRequestValidation(t *testing.T) {
	for _, c := range []struct {
		req  contract.ChangesRequest
		want string
	}{
		{contract.ChangesRequest{Limit: 0}, "invalid request: changes limit must be between 1 and 1000, not 0"},
		{contract.ChangesRequest{Limit: 1001}, "invalid request: changes limit must be between 1 and 1000, not 1001"},
		{contract.ChangesRequest{Limit: 1, Wait: -time.Millisecond}, "invalid request: changes wait must be between 0s and 1m0s, not -1ms"},
		{contract.ChangesRequest{Limit: 1, Wait: 61 * time.Second}, "invalid request: changes wait must be between 0s and 1m0s, not 1m1s"},
		{contract.ChangesRequest{Limit: 1, Since: 3, FromNow: true}, "invalid request: changes takes a since or from_now, not both"},
	} {
		err := c.req.Validate()
		if err == nil || err.Error() != c.want || !errors.Is(err, contract.ErrInvalidRequest) {
			t.Errorf("%+v: %v; want %q", c.req, err, c.want)
		}
	}
	if err := (contract.ChangesRequest{Limit: 1000, Wait: time.Minute, FromNow: true}).Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestCheckSince(t *testing.T) {
	if err := contract.CheckSince(10, 10, 20); err != nil {
		t.Fatal(err)
	}
	err := contract.CheckSince(9, 10, 20)
	if !errors.Is(err, contract.ErrExpired) || err.Error() != "expired: changes after seq 9 are no longer kept (this feed holds seq 11 onward); reload the state and resume from the head the reload reports" {
		t.Fatalf("too old: %v", err)
	}
	err = contract.CheckSince(21, 0, 20)
	if !errors.Is(err, contract.ErrExpired) || err.Error() != "expired: since 21 is past this feed's head 20: the store was replaced or restored; reload the state and resume from its head" {
		t.Fatalf("ahead: %v", err)
	}
	if k, ok := contract.ErrorKindFromWire("expired"); !ok || k != contract.KindExpired {
		t.Fatal("the expired kind does not come back from the wire")
	}
}

func TestRetentionKeepsBothWindows(t *testing.T) {
	r := contract.DefaultChangeRetention()
	now := time.Now()
	old := now.Add(-8 * 24 * time.Hour)
	if r.Prunable(1, old, now, 1_000_000) {
		t.Fatal("pruned a change within the last 1,000,000")
	}
	if r.Prunable(1, now.Add(-time.Hour), now, 5_000_000) {
		t.Fatal("pruned a change within the last 7 days")
	}
	if !r.Prunable(1, old, now, 1_000_001) {
		t.Fatal("kept a change older than both windows")
	}
	if got := (contract.ChangeRetention{MaxChanges: 5}).OrDefault(); got.MaxAge != 7*24*time.Hour || got.MaxChanges != 5 {
		t.Fatalf("OrDefault %+v", got)
	}
}

func TestChangeJSON(t *testing.T) {
	at := time.Date(2026, 12, 1, 14, 4, 12, 254_000_000, time.UTC)
	c := contract.Change{Seq: 7, At: at, Op: contract.OpForget, ID: "abc", Namespace: contract.MustNamespace("team:acme"), Status: contract.StatusActive}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"seq":7,"at":"2026-12-01T14:04:12.254Z","op":"forget","id":"abc","namespace":"team:acme","status":"active"}` {
		t.Fatalf("%s", b)
	}
	var back contract.Change
	if err := json.Unmarshal(b, &back); err != nil || back.Seq != 7 || !back.At.Equal(at) || back.Namespace.String() != "team:acme" || back.Record != nil {
		t.Fatalf("%+v %v", back, err)
	}
	for _, op := range contract.ChangeOps() {
		if got, ok := contract.ChangeOpOfCode(op.Code()); !ok || got != op {
			t.Fatalf("op %s does not survive its code", op)
		}
	}
}

// TestServeChangesWaitsOnTheSignal: a read that finds nothing waits for the
// signal, reads again, and a confined read that examined only others'
// changes moves on without waiting for another.
func TestServeChangesWaitsOnTheSignal(t *testing.T) {
	var sig contract.ChangeSignal
	var mu sync.Mutex
	reads := 0
	var have []contract.Change
	read := func(_ context.Context, since uint64, limit int, _ *contract.Reach, fromNow bool) (contract.ChangesPage, error) {
		mu.Lock()
		defer mu.Unlock()
		reads++
		p := contract.ChangesPage{Next: since, Head: uint64(len(have))}
		if fromNow {
			p.Next = p.Head
			return p, nil
		}
		for _, c := range have {
			if c.Seq > since && len(p.Changes) < limit {
				p.Changes = append(p.Changes, c)
				p.Next = c.Seq
			}
		}
		return p, nil
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		mu.Lock()
		have = append(have, contract.Change{Seq: 1, Op: contract.OpStore})
		mu.Unlock()
		sig.Notify()
	}()
	p, err := contract.ServeChanges(context.Background(), contract.ChangesRequest{FromNow: true, Limit: 5, Wait: 5 * time.Second}, sig.C, 0, read)
	if err != nil || len(p.Changes) != 1 || p.Next != 1 {
		t.Fatalf("%+v %v", p, err)
	}
	start := time.Now()
	p, err = contract.ServeChanges(context.Background(), contract.ChangesRequest{Since: 1, Limit: 5, Wait: 100 * time.Millisecond}, sig.C, 0, read)
	if err != nil || len(p.Changes) != 0 || p.Next != 1 || time.Since(start) < 90*time.Millisecond {
		t.Fatalf("a quiet wait: %+v %v after %s", p, err, time.Since(start))
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := contract.ServeChanges(ctx, contract.ChangesRequest{Since: 1, Limit: 5, Wait: 10 * time.Second}, sig.C, 0, read); !errors.Is(err, contract.ErrUnavailable) {
		t.Fatalf("a cancelled wait: %v", err)
	}
}

// TestChangesPageJSON: the hand-assembled page is the bytes encoding/json
// writes for it (the record's text with characters it escapes included), and
// a Shared change marshals to the same bytes as the change itself.
func TestChangesPageJSON(t *testing.T) {
	at := time.Date(2026, 12, 1, 14, 4, 12, 254_000_000, time.UTC)
	conf := contract.F32(0.75)
	rec := contract.Record{ID: "r1", Kind: contract.KindLearning, Text: "a <b> & \u2028 \"quoted\" note", Confidence: &conf,
		Meta: contract.MemoryMeta{Namespace: contract.MustNamespace("team:acme"), Tags: []string{"x"}}, Status: contract.StatusCandidate,
		CreatedAt: at, UpdatedAt: at}
	page := contract.ChangesPage{Next: 9, Head: 12, Floor: 3, Changes: []contract.Change{
		{Seq: 8, At: at, Op: contract.OpStore, ID: "r1", Namespace: rec.Meta.Namespace, Status: contract.StatusCandidate, Record: &rec},
		{Seq: 9, At: at, Op: contract.OpForget, ID: "r2", Namespace: contract.Root(), Status: contract.StatusActive},
	}}
	want, err := json.Marshal(page)
	if err != nil {
		t.Fatal(err)
	}
	got, err := page.AppendJSON(nil)
	if err != nil || string(got) != string(want) {
		t.Fatalf("AppendJSON:\n%s\nencoding/json:\n%s (%v)", got, want, err)
	}
	shared := page
	shared.Changes = []contract.Change{page.Changes[0].Shared(), page.Changes[1].Shared()}
	for range 2 {
		got, err = shared.AppendJSON(nil)
		if err != nil || string(got) != string(want) {
			t.Fatalf("shared:\n%s\nwant:\n%s (%v)", got, want, err)
		}
	}
	empty, _ := contract.ChangesPage{Next: 4, Head: 4}.AppendJSON(nil)
	if string(empty) != `{"changes":[],"next":4,"head":4,"floor":0}` {
		t.Fatalf("an empty page: %s", empty)
	}
	var back contract.ChangesPage
	if err := json.Unmarshal(got, &back); err != nil || len(back.Changes) != 2 || back.Changes[0].Record.Text != rec.Text {
		t.Fatalf("read back: %+v %v", back, err)
	}
}

// a page of changes with records of every shape the contract has.
func changesPageFixture(n int) contract.ChangesPage {
	at := time.Date(2026, 12, 1, 14, 4, 12, 254_000_000, time.UTC)
	conf := contract.F32(0.625)
	agent, repo, by, srcID, name := "agent-7", "mnemo", "r0", "conv-1", "Kim"
	exp := at.Add(time.Hour)
	page := contract.ChangesPage{Next: uint64(n), Head: uint64(n + 5), Floor: 1, Changes: []contract.Change{}}
	for i := range n {
		ns := contract.MustNamespace(fmt.Sprintf("team:acme/agent:a%d", i%3))
		c := contract.Change{Seq: uint64(i + 1), At: at, Op: contract.OpStore, ID: fmt.Sprintf("id%d", i), Namespace: ns, Status: contract.StatusActive}
		switch i % 4 {
		case 0:
			c.Record = &contract.Record{ID: c.ID, Kind: contract.KindDocument, Text: "a <note> & more", Meta: contract.MemoryMeta{Namespace: ns, Tags: []string{"t1", "t2"}},
				Status: contract.StatusActive, CreatedAt: at, UpdatedAt: at}
			c.Record.Meta.Source.Kind = contract.SourceAgent
		case 1:
			c.Op, c.Status = contract.OpApprove, contract.StatusCandidate
			meta := contract.MemoryMeta{Namespace: ns, AgentID: &agent, Repo: &repo, Turns: &contract.TurnRange{First: 1, Last: 3},
				ObservedAt: &at, ObservedActor: &contract.ObservedActor{ID: "u1", Name: &name}}
			meta.Source = contract.SourceRef{Kind: contract.SourceConversation, ID: &srcID}
			c.Record = &contract.Record{ID: c.ID, Kind: contract.KindLearning, Text: "learned", Meta: meta, Confidence: &conf,
				Status: contract.StatusCandidate, CreatedAt: at, UpdatedAt: at.Add(time.Second), ExpiresAt: &exp}
		case 2:
			c.Op, c.Status = contract.OpForget, contract.StatusActive
		case 3:
			c.Op, c.Status = contract.OpSupersede, contract.StatusSuperseded
			c.Namespace = contract.Root()
			c.Record = &contract.Record{ID: c.ID, Kind: contract.KindDocument, Text: "old", Meta: contract.MemoryMeta{},
				Status: contract.StatusSuperseded, SupersededBy: &by, CreatedAt: at, UpdatedAt: at}
			c.Record.Meta.Source.Kind = contract.SourceAgent
		}
		page.Changes = append(page.Changes, c)
	}
	return page
}

// loadPageFixture is a page of n stores as the load test writes them
// (engine/remote's load_test.go): about 470 bytes a change.
func loadPageFixture(n int) contract.ChangesPage {
	at := time.Date(2026, 12, 7, 15, 10, 0, 123_000_000, time.UTC)
	page := contract.ChangesPage{Next: uint64(n), Head: uint64(n), Floor: 1}
	for i := range n {
		ns := contract.MustNamespace(fmt.Sprintf("team:load/agent:a%d", i%8))
		meta := contract.MetaFromSource(contract.SourceAgent, nil)
		meta.Namespace = ns
		meta.Tags = []string{fmt.Sprintf("t%d", i%5)}
		id := fmt.Sprintf("%040x", i*7919+1)
		c := contract.Change{Seq: uint64(i + 1), At: at.Add(time.Duration(i/25) * time.Millisecond), Op: contract.OpStore, ID: id, Namespace: ns, Status: contract.StatusActive}
		c.Record = &contract.Record{ID: id, Kind: contract.KindDocument, Text: fmt.Sprintf("agent %d note %d about deploy and cache w%dq%d", i%8, i, i%8, i),
			Meta: meta, Status: contract.StatusActive, CreatedAt: c.At, UpdatedAt: c.At}
		page.Changes = append(page.Changes, c)
	}
	return page
}

// TestChangesPageDecode: a page read in one pass holds the same changes as
// its changes read one by one (Change.UnmarshalJSON), and refuses what they
// refuse.
func TestChangesPageDecode(t *testing.T) {
	var slow struct {
		Changes []contract.Change `json:"changes"`
		Next    uint64            `json:"next"`
		Head    uint64            `json:"head"`
		Floor   uint64            `json:"floor"`
	}
	for _, page := range []contract.ChangesPage{changesPageFixture(12), loadPageFixture(60)} {
		body, err := page.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		var fast contract.ChangesPage
		if err := json.Unmarshal(body, &fast); err != nil {
			t.Fatal(err)
		}
		slow.Changes = nil
		if err := json.Unmarshal(body, &slow); err != nil {
			t.Fatal(err)
		}
		want := contract.ChangesPage{Changes: slow.Changes, Next: slow.Next, Head: slow.Head, Floor: slow.Floor}
		if !reflect.DeepEqual(fast, want) {
			t.Fatalf("one pass:\n%+v\none by one:\n%+v", fast, want)
		}
		again, _ := fast.AppendJSON(nil)
		if string(again) != string(body) {
			t.Fatalf("read and written again:\n%s\nwas\n%s", again, body)
		}
	}
	for _, bad := range []string{
		`{"changes":[{"seq":1,"at":"2026-12-01T14:04:12.254Z","op":"store","id":"a","namespace":"root","status":"gone"}]}`,
		`{"changes":[{"seq":1,"at":"yesterday","op":"store","id":"a","namespace":"root","status":"active"}]}`,
		`{"changes":[{"seq":1,"at":"2026-12-01T14:04:12.254Z","op":"store","id":"a","namespace":"Not A Namespace!","status":"active"}]}`,
		`{"changes":[{"seq":1,"at":"2026-12-01T14:04:12.254Z","op":"store","id":"a","namespace":"root","status":"active","record":{"id":"a","kind":"poem","status":"active","created_at":"2026-12-01T14:04:12.254Z","updated_at":"2026-12-01T14:04:12.254Z"}}]}`,
		`{"changes":[{"seq":1,"at":"2026-12-01T14:04:12.254Z","op":"store","id":"a","namespace":"root","status":"active","record":{"id":"a","kind":"document","meta":{"source":{"id":"x"}},"status":"active","created_at":"2026-12-01T14:04:12.254Z","updated_at":"2026-12-01T14:04:12.254Z"}}]}`,
	} {
		var one contract.ChangesPage
		errFast := json.Unmarshal([]byte(bad), &one)
		errSlow := json.Unmarshal([]byte(bad), &slow)
		if errFast == nil || errSlow == nil || errFast.Error() != errSlow.Error() {
			t.Errorf("%s:\none pass: %v\none by one: %v", bad, errFast, errSlow)
		}
	}
}

func BenchmarkChangesPageDecode(b *testing.B) {
	body, err := changesPageFixture(1000).AppendJSON(nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("page", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			var p contract.ChangesPage
			if err := p.UnmarshalJSON(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decoder", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		var d contract.ChangesDecoder
		for b.Loop() {
			if _, err := d.Decode(bytes.Clone(body)); err != nil {
				b.Fatal(err)
			}
		}
	})
	// load: a page as the serve-mode load test's watchers read it (stores
	// of documents with a namespace, a tag and an agent source, the changes
	// of one write sharing their time): what a follower pays a change.
	load, err := loadPageFixture(100).AppendJSON(nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("load", func(b *testing.B) {
		b.SetBytes(int64(len(load)))
		var d contract.ChangesDecoder
		for b.Loop() {
			if _, err := d.Decode(bytes.Clone(load)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("change-by-change", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			var p struct {
				Changes []contract.Change `json:"changes"`
			}
			if err := json.Unmarshal(body, &p); err != nil {
				b.Fatal(err)
			}
		}
	})
}
