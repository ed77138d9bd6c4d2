package remote

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"mnemo/contract"
	"mnemo/server/audit"
	"mnemo/server/wire"
)

// StoreWith writes one item with options; without options the body is the
// bare item, as every server reads it.
func (c *Client) StoreWith(ctx context.Context, item contract.StoreItem, opts contract.WriteOptions) (contract.StoreReceipt, error) {
	var body any = wire.StoreWithBody{Item: item, Options: opts}
	if opts == (contract.WriteOptions{}) {
		body = item
	}
	var out contract.StoreReceipt
	err := c.call(ctx, wire.OpStore, body, &out)
	return out, err
}

// StoreManyWith writes a batch with options; without options the body is the
// bare array of items, as every server reads it.
func (c *Client) StoreManyWith(ctx context.Context, items []contract.StoreItem, opts contract.WriteOptions) ([]contract.StoreReceipt, error) {
	items = contract.EmptyIfNil(items)
	var body any = wire.StoreManyBody{Items: items, Options: opts}
	if opts == (contract.WriteOptions{}) {
		body = items
	}
	var out []contract.StoreReceipt
	err := c.call(ctx, wire.OpStoreMany, body, &out)
	return out, err
}

// Recall asks the server a question.
func (c *Client) Recall(ctx context.Context, req contract.RecallRequest) (contract.RecallAnswer, error) {
	var out contract.RecallAnswer
	err := c.call(ctx, wire.OpRecall, req, &out)
	return out, err
}

// Fetch ranks on the server.
func (c *Client) Fetch(ctx context.Context, req contract.FetchRequest) (contract.FetchPage, error) {
	var out contract.FetchPage
	err := c.call(ctx, wire.OpFetch, req, &out)
	return out, err
}

// List lists on the server.
func (c *Client) List(ctx context.Context, req contract.ListRequest) (contract.ListPage, error) {
	var out contract.ListPage
	err := c.call(ctx, wire.OpList, req, &out)
	return out, err
}

// Export exports from the server.
func (c *Client) Export(ctx context.Context, req contract.ListRequest) (contract.ExportPage, error) {
	var out contract.ExportPage
	err := c.call(ctx, wire.OpExport, req, &out)
	return out, err
}

// Explore counts on the server.
func (c *Client) Explore(ctx context.Context, req contract.ExploreRequest) (contract.ExplorePage, error) {
	var out contract.ExplorePage
	err := c.call(ctx, wire.OpExplore, req, &out)
	return out, err
}

// Get reads items by id.
func (c *Client) Get(ctx context.Context, req contract.GetRequest) ([]contract.Hit, error) {
	var out []contract.Hit
	err := c.call(ctx, wire.OpGet, req, &out)
	return out, err
}

// GetRecords reads whole records by id.
func (c *Client) GetRecords(ctx context.Context, req contract.GetRequest) ([]contract.Record, error) {
	var out []contract.Record
	err := c.call(ctx, wire.OpGetRecords, req, &out)
	return out, err
}

// Forget removes ids or what a filter selects.
func (c *Client) Forget(ctx context.Context, target contract.ForgetTarget) (contract.ForgetReport, error) {
	a, err := c.ForgetCounted(ctx, target)
	return contract.ForgetReport{Forgotten: a.Forgotten}, err
}

// ForgetCounted is Forget with the count of named ids the server left alone.
func (c *Client) ForgetCounted(ctx context.Context, target contract.ForgetTarget) (wire.ForgetAnswer, error) {
	var out wire.ForgetAnswer
	err := c.call(ctx, wire.OpForget, target, &out)
	return out, err
}

// ForgetWithin removes the ids found under reach.
func (c *Client) ForgetWithin(ctx context.Context, ids []string, reach contract.Reach) (contract.ForgetReport, error) {
	a, err := c.ForgetWithinCounted(ctx, ids, reach)
	return contract.ForgetReport{Forgotten: a.Forgotten}, err
}

// ForgetWithinCounted is ForgetWithin with the count of ids left alone.
func (c *Client) ForgetWithinCounted(ctx context.Context, ids []string, reach contract.Reach) (wire.ForgetAnswer, error) {
	ids = contract.EmptyIfNil(ids)
	var out wire.ForgetAnswer
	err := c.call(ctx, wire.OpForgetWithin, contract.ForgetWithinRequest{IDs: ids, Reach: reach}, &out)
	return out, err
}

// Erase asks the server to erase.
func (c *Client) Erase(ctx context.Context, req contract.EraseRequest) (contract.EraseReport, error) {
	var out contract.EraseReport
	err := c.call(ctx, wire.OpErase, req, &out)
	return out, err
}

// Consolidate asks the server to consolidate.
func (c *Client) Consolidate(ctx context.Context, req contract.ConsolidateRequest) (contract.ConsolidateReceipt, error) {
	var out contract.ConsolidateReceipt
	err := c.call(ctx, wire.OpConsolidate, req, &out)
	return out, err
}

// Beliefs reads beliefs from the server.
func (c *Client) Beliefs(ctx context.Context, req contract.BeliefsRequest) ([]contract.Hit, error) {
	var out []contract.Hit
	err := c.call(ctx, wire.OpBeliefs, req, &out)
	return out, err
}

// Browse lists on the server.
func (c *Client) Browse(ctx context.Context, q contract.BrowseQuery) (contract.BrowsePage, error) {
	var out contract.BrowsePage
	err := c.call(ctx, wire.OpBrowse, q, &out)
	return out, err
}

// Review approves or rejects a candidate.
func (c *Client) Review(ctx context.Context, req contract.ReviewRequest) (contract.ReviewResult, error) {
	var out contract.ReviewResult
	err := c.call(ctx, wire.OpReview, req, &out)
	return out, err
}

// Supersede marks a record superseded.
func (c *Client) Supersede(ctx context.Context, req contract.SupersedeRequest) (contract.Record, error) {
	var out contract.Record
	err := c.call(ctx, wire.OpSupersede, req, &out)
	return out, err
}

// Principal asks the server who the client's token is and what it may do
// (GET /v1/principal). A server from before the endpoint answers NotFound.
func (c *Client) Principal(ctx context.Context) (wire.PrincipalAnswer, error) {
	var out wire.PrincipalAnswer
	err := c.do(ctx, http.MethodGet, wire.EndpointPrincipal, nil, &out)
	return out, err
}

// Restore writes whole records as they were (contract.Restorer), where the
// principal may write; a server whose engine cannot answers Unsupported.
func (c *Client) Restore(ctx context.Context, recs []contract.Record) ([]contract.StoreReceipt, error) {
	if err := contract.ValidateRestore(recs); err != nil {
		return nil, err
	}
	body := wire.RestoreBody{Records: make([]contract.Record, len(recs))}
	for i := range recs {
		body.Records[i] = recs[i].Whole()
	}
	var out []contract.StoreReceipt
	err := c.call(ctx, wire.OpRestore, body, &out)
	return out, err
}

// ReadAudit reads the server's audit log (admins only).
func (c *Client) ReadAudit(ctx context.Context, q audit.Query) ([]audit.Event, error) {
	v := url.Values{}
	if !q.Since.IsZero() {
		v.Set(wire.AuditSince, contract.FormatMillis(q.Since))
	}
	if q.Limit > 0 {
		v.Set(wire.AuditLimit, strconv.Itoa(q.Limit))
	}
	op := wire.EndpointAudit
	if len(v) > 0 {
		op += "?" + v.Encode()
	}
	var out []audit.Event
	err := c.do(ctx, http.MethodGet, op, nil, &out)
	return out, err
}

// Writes tells whether e lets its caller change memory (store, forget,
// review, supersede): a server's client asks the server who its token is
// (a reader may not); any other engine lets its caller write. A server from
// before GET /v1/principal is taken to allow it (it refuses a write itself).
// mnemo mcp and the TUI hide what the caller cannot do by it.
func Writes(ctx context.Context, e contract.Engine) (bool, error) {
	c, ok := e.(interface {
		Principal(context.Context) (wire.PrincipalAnswer, error)
	})
	if !ok {
		return true, nil
	}
	p, err := c.Principal(ctx)
	if errors.Is(err, contract.ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return p.Writes, nil
}
