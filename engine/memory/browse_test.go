package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"mnemo/contract"
)

func browseIDs(p contract.BrowsePage) []string {
	out := make([]string, len(p.Records))
	for i, r := range p.Records {
		out[i] = r.ID
	}
	return out
}

func TestBrowseSeesEveryStatusNewestUpdateFirst(t *testing.T) {
	ctx := context.Background()
	e := New(WithClock(fixedClock()))
	a := mustStore(t, e, doc("first"), contract.WriteOptions{})
	b := mustStore(t, e, doc("second"), contract.WriteOptions{Status: contract.StatusCandidate})
	c := mustStore(t, e, doc("third"), contract.WriteOptions{})
	if _, err := e.Supersede(ctx, contract.SupersedeRequest{ID: c, By: a}); err != nil {
		t.Fatal(err)
	}
	p, err := e.Browse(ctx, contract.BrowseQuery{})
	if err != nil {
		t.Fatal(err)
	}
	// c was updated last (by supersede), then b, then a.
	if got := browseIDs(p); !slices.Equal(got, []string{c, b, a}) || p.Total != 3 || p.Continuation != nil {
		t.Fatalf("default order %v total %d", got, p.Total)
	}
	if p.Records[0].Status != contract.StatusSuperseded || *p.Records[0].SupersededBy != a || p.Records[1].Status != contract.StatusCandidate {
		t.Fatalf("statuses %+v", p.Records)
	}
	if _, err := e.Review(ctx, contract.ReviewRequest{ID: b, Action: contract.ReviewApprove}); err != nil {
		t.Fatal(err)
	}
	p, _ = e.Browse(ctx, contract.BrowseQuery{})
	if got := browseIDs(p); !slices.Equal(got, []string{b, c, a}) {
		t.Fatalf("approval did not move the record to the top: %v", got)
	}
	only, _ := e.Browse(ctx, contract.BrowseQuery{Status: []contract.Status{contract.StatusSuperseded}})
	if got := browseIDs(only); !slices.Equal(got, []string{c}) {
		t.Fatalf("status shorthand %v", got)
	}
}

func TestBrowseWalkKeepsTotalAndEndsWithEmptyPage(t *testing.T) {
	ctx := context.Background()
	e := New(WithClock(fixedClock()))
	var all []string
	for i := range 9 {
		all = append(all, mustStore(t, e, doc(fmt.Sprintf("walk %d", i)), contract.WriteOptions{}))
	}
	now := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	q := contract.BrowseQuery{Limit: 3, Now: &now, OrderBy: []contract.SortKey{{Field: "created_at", Dir: "asc"}}}
	var seen []string
	pages := 0
	for {
		p, err := e.Browse(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if p.Total != 9 {
			t.Fatalf("page %d total %d", pages, p.Total)
		}
		seen = append(seen, browseIDs(p)...)
		if p.Continuation == nil {
			break
		}
		q.Cursor = *p.Continuation
	}
	if pages != 4 || !slices.Equal(seen, all) {
		t.Fatalf("%d pages visiting %v; want 4 pages visiting %v in store order", pages, seen, all)
	}
	other := q
	other.Now = nil
	_, err := e.Browse(ctx, other)
	if !errors.Is(err, &contract.Error{Kind: contract.KindInvalidRequest, Code: contract.CodeContinuationInvalid}) {
		t.Fatalf("a cursor reused without its now: %v", err)
	}
}

func TestBrowseLeavesOutExpiredRecordsOnlyWithNow(t *testing.T) {
	ctx := context.Background()
	e := New()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	gone := mustStore(t, e, doc("expired"), contract.WriteOptions{ExpiresAt: &now})
	later := now.Add(time.Millisecond)
	kept := mustStore(t, e, doc("still valid"), contract.WriteOptions{ExpiresAt: &later})
	p, _ := e.Browse(ctx, contract.BrowseQuery{Now: &now})
	if got := browseIDs(p); !slices.Equal(got, []string{kept}) || p.Total != 1 {
		t.Fatalf("with now: %v", got)
	}
	p, _ = e.Browse(ctx, contract.BrowseQuery{})
	if !sameSetOf(browseIDs(p), []string{gone, kept}) {
		t.Fatalf("without now: %v", browseIDs(p))
	}
	if !p.Records[0].ExpiresAt.Equal(now) && !p.Records[1].ExpiresAt.Equal(now) {
		t.Fatal("expires_at did not read back")
	}
}

func TestBrowseRefusesInvalidQueries(t *testing.T) {
	_, err := New().Browse(context.Background(), contract.BrowseQuery{Limit: 1001})
	if !errors.Is(err, &contract.Error{Kind: contract.KindInvalidRequest, Code: contract.CodeInvalidQuery}) {
		t.Fatalf("limit 1001: %v", err)
	}
	_, err = New().Browse(context.Background(), contract.BrowseQuery{Cursor: "%%%"})
	if !errors.Is(err, &contract.Error{Kind: contract.KindInvalidRequest, Code: contract.CodeContinuationInvalid}) {
		t.Fatalf("garbage cursor: %v", err)
	}
}

func sameSetOf(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// FuzzListCursor feeds arbitrary cursors to list: each is either refused with
// the reference's message or is a canonical non-negative offset that pages on.
func FuzzListCursor(f *testing.F) {
	for _, s := range []string{"0", "2", "10", "x", "-1", "01", "", "+3", "99999999999999999999", " 1"} {
		f.Add(s)
	}
	e := New()
	for i := range 5 {
		if _, err := contract.Store(context.Background(), e, doc(fmt.Sprintf("fuzz %d", i))); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, cursor string) {
		p, err := e.List(context.Background(), contract.ListRequest{Limit: 2, Cursor: &cursor})
		if err != nil {
			want := fmt.Sprintf("unknown cursor `%s`", cursor)
			var ce *contract.Error
			if !errors.As(err, &ce) || ce.Kind != contract.KindInvalidRequest || ce.Message != want {
				t.Fatalf("cursor %q: %v", cursor, err)
			}
			return
		}
		if len(p.Items) > 2 {
			t.Fatalf("cursor %q gave %d items", cursor, len(p.Items))
		}
		if p.NextCursor != nil && *p.NextCursor == cursor {
			t.Fatalf("cursor %q repeats", cursor)
		}
	})
}
