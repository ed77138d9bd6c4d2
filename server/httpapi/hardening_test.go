package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"mnemo/contract"
	"mnemo/server/httpapi"
)

// TestPagesAreCappedAtTheBoundary: list, export, fetch and recall answered
// `limit: 1000000` with the whole store in one request; like browse they now
// take at most 1000, refused in the contract's words, owner included, and an
// export larger than that is walked page by page with the cursor.
func TestPagesAreCappedAtTheBoundary(t *testing.T) {
	t.Parallel()
	f := newFixture(t, httpapi.Options{ListingRate: httpapi.Rate{PerSecond: -1}})
	for op, body := range map[string]string{
		"list":   `{"limit":%d}`,
		"export": `{"limit":%d}`,
		"fetch":  `{"query":"acme","mode":"keyword","limit":%d}`,
		"recall": `{"question":"what does acme ship?","limit":%d}`,
	} {
		for _, token := range []string{ownerToken, aliceToken} {
			status, out, _ := post(t, f.srv.URL, token, op, fmt.Sprintf(body, 1000000))
			kind, _, msg := errorOf(t, out)
			if status != http.StatusBadRequest || kind != "invalid_request" || msg != op+" limit must be at most 1000" {
				t.Fatalf("%s with limit 1000000: %d %v", op, status, out)
			}
			if status, out, _ := post(t, f.srv.URL, token, op, fmt.Sprintf(body, 1000)); status != http.StatusOK {
				t.Fatalf("%s with limit 1000: %d %v", op, status, out)
			}
		}
	}
	// 1,205 records export in pages of at most 1000, every one once.
	ctx := context.Background()
	var items []contract.StoreItem
	for i := range 1202 {
		items = append(items, doc("team:acme/agent:bulk", fmt.Sprintf("bulk note %d", i)))
	}
	for start := 0; start < len(items); start += contract.MaxStoreMany {
		if _, err := contract.StoreMany(ctx, f.owner, items[start:min(start+contract.MaxStoreMany, len(items))]); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	req := contract.ListRequest{Limit: 1000}
	pages := 0
	for {
		page, err := f.owner.Export(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, it := range page.Items {
			seen[it.ID] = true
		}
		if page.NextCursor == nil {
			break
		}
		req.Cursor = page.NextCursor
	}
	if len(seen) != 1205 || pages != 2 {
		t.Fatalf("export walked %d records in %d pages, want 1205 in 2", len(seen), pages)
	}
}

// TestItemSizeIsBoundedAtTheBoundary: one 24 MB document stalled another
// tenant's fetch for 13 s. An item's JSON is bounded (1 MiB by default,
// configurable), refused before anything is written.
func TestItemSizeIsBoundedAtTheBoundary(t *testing.T) {
	t.Parallel()
	f := newFixture(t, httpapi.Options{})
	big := fmt.Sprintf(`{"type":"document","body":{"text":%q},"meta":{"source":{"kind":"agent"}}}`, strings.Repeat("x", 2<<20))
	status, out, _ := post(t, f.srv.URL, ownerToken, "store", big)
	_, _, msg := errorOf(t, out)
	if status != http.StatusBadRequest || !strings.Contains(msg, "this server stores items of at most 1048576 bytes") {
		t.Fatalf("a 2 MiB item: %d %v", status, out)
	}
	near := fmt.Sprintf(`{"type":"document","body":{"text":%q},"meta":{"source":{"kind":"agent"}}}`, strings.Repeat("y", 1<<20-200))
	if status, out, _ := post(t, f.srv.URL, ownerToken, "store", near); status != http.StatusOK {
		t.Fatalf("an item just under 1 MiB: %d %v", status, out)
	}

	small := newFixture(t, httpapi.Options{MaxItemBytes: 4096})
	item := func(n int) string {
		return fmt.Sprintf(`{"type":"document","body":{"text":%q},"meta":{"namespace":"team:acme","source":{"kind":"agent"}}}`, strings.Repeat("z", n))
	}
	before, _ := small.owner.List(context.Background(), contract.ListRequest{Limit: 100})
	status, out, _ = post(t, small.srv.URL, aliceToken, "store_many", "["+item(100)+","+item(5000)+"]")
	_, _, msg = errorOf(t, out)
	if status != http.StatusBadRequest || !strings.HasPrefix(msg, "item 2 is ") || !strings.Contains(msg, "at most 4096 bytes") {
		t.Fatalf("store_many with a 5000-byte item under a 4096 bound: %d %v", status, out)
	}
	after, _ := small.owner.List(context.Background(), contract.ListRequest{Limit: 100})
	if len(after.Items) != len(before.Items) {
		t.Fatalf("a refused batch stored %d records", len(after.Items)-len(before.Items))
	}
}

// TestDecodeErrorsSpeakWireFieldNames: a body of the wrong shape was
// answered with Go's words (`Go struct field ListRequest.filter of type
// contract.filterWire`); every decode error now names the wire's fields.
func TestDecodeErrorsSpeakWireFieldNames(t *testing.T) {
	t.Parallel()
	f := newFixture(t, httpapi.Options{})
	for _, c := range []struct{ op, body, want string }{
		{"list", `{"filter":5,"limit":3}`, "the request body is not valid: filter must be an object"},
		{"list", `{"limit":"ten"}`, "the request body is not valid: limit must be an integer"},
		{"list", `{"filter":{"tags_any":"x"},"limit":2}`, "the request body is not valid: filter.tags_any must be an array"},
		{"list", `[1]`, "the request body is not valid: it must be an object"},
		{"get", `{"ids":"x"}`, "the request body is not valid: ids must be an array"},
		{"store", `{"type":5}`, "the request body is not valid: type must be a string"},
		{"fetch", `{"query":"x","mode":"keyword","limit":5,"filter":{"kinds":[1]}}`, "the request body is not valid: item kind must be a string"},
	} {
		status, out, _ := post(t, f.srv.URL, ownerToken, c.op, c.body)
		_, _, msg := errorOf(t, out)
		if status != http.StatusBadRequest || strings.Contains(msg, "Go ") || strings.Contains(msg, "contract.") || strings.Contains(msg, "struct") {
			t.Fatalf("%s %s: %d %q", c.op, c.body, status, msg)
		}
		if msg != c.want {
			t.Fatalf("%s %s: %q, want %q", c.op, c.body, msg, c.want)
		}
	}
}
