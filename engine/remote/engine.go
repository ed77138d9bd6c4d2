package remote

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"mnemo/contract"
	"mnemo/server/audit"
)

// ForgetAnswer is the server's forget report with the ids it left alone.
type ForgetAnswer struct {
	Forgotten int `json:"forgotten"`
	Skipped   int `json:"skipped,omitempty"`
}

// Store writes one item.
func (c *Client) Store(ctx context.Context, item contract.StoreItem) (contract.StoreReceipt, error) {
	var out contract.StoreReceipt
	err := c.call(ctx, "store", item, &out)
	return out, err
}

// StoreWith writes one item with options.
func (c *Client) StoreWith(ctx context.Context, item contract.StoreItem, opts contract.WriteOptions) (contract.StoreReceipt, error) {
	var out contract.StoreReceipt
	err := c.call(ctx, "store", storeWithBody{Item: item, Options: opts}, &out)
	return out, err
}

type storeWithBody struct {
	Item    contract.StoreItem    `json:"item"`
	Options contract.WriteOptions `json:"options"`
}

type storeManyBody struct {
	Items   []contract.StoreItem  `json:"items"`
	Options contract.WriteOptions `json:"options"`
}

// StoreMany writes a batch.
func (c *Client) StoreMany(ctx context.Context, items []contract.StoreItem) ([]contract.StoreReceipt, error) {
	if items == nil {
		items = []contract.StoreItem{}
	}
	var out []contract.StoreReceipt
	err := c.call(ctx, "store_many", items, &out)
	return out, err
}

// StoreManyWith writes a batch with options.
func (c *Client) StoreManyWith(ctx context.Context, items []contract.StoreItem, opts contract.WriteOptions) ([]contract.StoreReceipt, error) {
	if items == nil {
		items = []contract.StoreItem{}
	}
	var out []contract.StoreReceipt
	err := c.call(ctx, "store_many", storeManyBody{Items: items, Options: opts}, &out)
	return out, err
}

// Recall asks the server a question.
func (c *Client) Recall(ctx context.Context, req contract.RecallRequest) (contract.RecallAnswer, error) {
	var out contract.RecallAnswer
	err := c.call(ctx, "recall", req, &out)
	return out, err
}

// Fetch ranks on the server.
func (c *Client) Fetch(ctx context.Context, req contract.FetchRequest) (contract.FetchPage, error) {
	var out contract.FetchPage
	err := c.call(ctx, "fetch", req, &out)
	return out, err
}

// List lists on the server.
func (c *Client) List(ctx context.Context, req contract.ListRequest) (contract.ListPage, error) {
	var out contract.ListPage
	err := c.call(ctx, "list", req, &out)
	return out, err
}

// Export exports from the server.
func (c *Client) Export(ctx context.Context, req contract.ListRequest) (contract.ExportPage, error) {
	var out contract.ExportPage
	err := c.call(ctx, "export", req, &out)
	return out, err
}

// Explore counts on the server.
func (c *Client) Explore(ctx context.Context, req contract.ExploreRequest) (contract.ExplorePage, error) {
	var out contract.ExplorePage
	err := c.call(ctx, "explore", req, &out)
	return out, err
}

// Get reads items by id.
func (c *Client) Get(ctx context.Context, req contract.GetRequest) ([]contract.Hit, error) {
	var out []contract.Hit
	err := c.call(ctx, "get", req, &out)
	return out, err
}

// GetRecords reads whole records by id.
func (c *Client) GetRecords(ctx context.Context, req contract.GetRequest) ([]contract.Record, error) {
	var out []contract.Record
	err := c.call(ctx, "get_records", req, &out)
	return out, err
}

// Forget removes ids or what a filter selects.
func (c *Client) Forget(ctx context.Context, target contract.ForgetTarget) (contract.ForgetReport, error) {
	a, err := c.ForgetCounted(ctx, target)
	return contract.ForgetReport{Forgotten: a.Forgotten}, err
}

// ForgetCounted is Forget with the count of named ids the server left alone.
func (c *Client) ForgetCounted(ctx context.Context, target contract.ForgetTarget) (ForgetAnswer, error) {
	var out ForgetAnswer
	err := c.call(ctx, "forget", target, &out)
	return out, err
}

// ForgetWithin removes the ids found under reach.
func (c *Client) ForgetWithin(ctx context.Context, ids []string, reach contract.Reach) (contract.ForgetReport, error) {
	a, err := c.ForgetWithinCounted(ctx, ids, reach)
	return contract.ForgetReport{Forgotten: a.Forgotten}, err
}

// ForgetWithinCounted is ForgetWithin with the count of ids left alone.
func (c *Client) ForgetWithinCounted(ctx context.Context, ids []string, reach contract.Reach) (ForgetAnswer, error) {
	if ids == nil {
		ids = []string{}
	}
	var out ForgetAnswer
	err := c.call(ctx, "forget_within", contract.ForgetWithinRequest{IDs: ids, Reach: reach}, &out)
	return out, err
}

// Erase asks the server to erase.
func (c *Client) Erase(ctx context.Context, req contract.EraseRequest) (contract.EraseReport, error) {
	var out contract.EraseReport
	err := c.call(ctx, "erase", req, &out)
	return out, err
}

// Consolidate asks the server to consolidate.
func (c *Client) Consolidate(ctx context.Context, req contract.ConsolidateRequest) (contract.ConsolidateReceipt, error) {
	var out contract.ConsolidateReceipt
	err := c.call(ctx, "consolidate", req, &out)
	return out, err
}

// Beliefs reads beliefs from the server.
func (c *Client) Beliefs(ctx context.Context, req contract.BeliefsRequest) ([]contract.Hit, error) {
	var out []contract.Hit
	err := c.call(ctx, "beliefs", req, &out)
	return out, err
}

// Browse lists on the server.
func (c *Client) Browse(ctx context.Context, q contract.BrowseQuery) (contract.BrowsePage, error) {
	var out contract.BrowsePage
	err := c.call(ctx, "browse", q, &out)
	return out, err
}

// Review approves or rejects a candidate.
func (c *Client) Review(ctx context.Context, req contract.ReviewRequest) (contract.ReviewResult, error) {
	var out contract.ReviewResult
	err := c.call(ctx, "review", req, &out)
	return out, err
}

// Supersede marks a record superseded.
func (c *Client) Supersede(ctx context.Context, req contract.SupersedeRequest) (contract.Record, error) {
	var out contract.Record
	err := c.call(ctx, "supersede", req, &out)
	return out, err
}

// ReadAudit reads the server's audit log (admins only).
func (c *Client) ReadAudit(ctx context.Context, q audit.Query) ([]audit.Event, error) {
	v := url.Values{}
	if !q.Since.IsZero() {
		v.Set("since", contract.FormatMillis(q.Since))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	op := "audit"
	if len(v) > 0 {
		op += "?" + v.Encode()
	}
	var out []audit.Event
	err := c.do(ctx, http.MethodGet, op, nil, &out)
	return out, err
}
