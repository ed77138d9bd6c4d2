package remote

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"mnemo/contract"
	"mnemo/engine/curate"
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
	return call[contract.StoreReceipt](ctx, c, wire.OpStore, body)
}

// StoreManyWith writes a batch with options; without options the body is the
// bare array of items, as every server reads it.
func (c *Client) StoreManyWith(ctx context.Context, items []contract.StoreItem, opts contract.WriteOptions) ([]contract.StoreReceipt, error) {
	items = contract.EmptyIfNil(items)
	var body any = wire.StoreManyBody{Items: items, Options: opts}
	if opts == (contract.WriteOptions{}) {
		body = items
	}
	return call[[]contract.StoreReceipt](ctx, c, wire.OpStoreMany, body)
}

// Recall asks the server a question.
func (c *Client) Recall(ctx context.Context, req contract.RecallRequest) (contract.RecallAnswer, error) {
	return call[contract.RecallAnswer](ctx, c, wire.OpRecall, req)
}

// Fetch ranks on the server.
func (c *Client) Fetch(ctx context.Context, req contract.FetchRequest) (contract.FetchPage, error) {
	return call[contract.FetchPage](ctx, c, wire.OpFetch, req)
}

// List lists on the server.
func (c *Client) List(ctx context.Context, req contract.ListRequest) (contract.ListPage, error) {
	return call[contract.ListPage](ctx, c, wire.OpList, req)
}

// Export exports from the server.
func (c *Client) Export(ctx context.Context, req contract.ListRequest) (contract.ExportPage, error) {
	return call[contract.ExportPage](ctx, c, wire.OpExport, req)
}

// Explore counts on the server.
func (c *Client) Explore(ctx context.Context, req contract.ExploreRequest) (contract.ExplorePage, error) {
	return call[contract.ExplorePage](ctx, c, wire.OpExplore, req)
}

// Get reads items by id.
func (c *Client) Get(ctx context.Context, req contract.GetRequest) ([]contract.Hit, error) {
	return call[[]contract.Hit](ctx, c, wire.OpGet, req)
}

// GetRecords reads whole records by id.
func (c *Client) GetRecords(ctx context.Context, req contract.GetRequest) ([]contract.Record, error) {
	out, err := call[recordsAnswer](ctx, c, wire.OpGetRecords, req)
	return []contract.Record(out), err
}

// Forget removes ids or what a filter selects.
func (c *Client) Forget(ctx context.Context, target contract.ForgetTarget) (contract.ForgetReport, error) {
	a, err := c.ForgetCounted(ctx, target)
	return contract.ForgetReport{Forgotten: a.Forgotten}, err
}

// ForgetCounted is Forget with the count of named ids the server left alone.
func (c *Client) ForgetCounted(ctx context.Context, target contract.ForgetTarget) (wire.ForgetAnswer, error) {
	return call[wire.ForgetAnswer](ctx, c, wire.OpForget, target)
}

// ForgetWithin removes the ids found under reach.
func (c *Client) ForgetWithin(ctx context.Context, ids []string, reach contract.Reach) (contract.ForgetReport, error) {
	a, err := c.ForgetWithinCounted(ctx, ids, reach)
	return contract.ForgetReport{Forgotten: a.Forgotten}, err
}

// ForgetWithinCounted is ForgetWithin with the count of ids left alone.
func (c *Client) ForgetWithinCounted(ctx context.Context, ids []string, reach contract.Reach) (wire.ForgetAnswer, error) {
	ids = contract.EmptyIfNil(ids)
	return call[wire.ForgetAnswer](ctx, c, wire.OpForgetWithin, contract.ForgetWithinRequest{IDs: ids, Reach: reach})
}

// Erase asks the server to erase.
func (c *Client) Erase(ctx context.Context, req contract.EraseRequest) (contract.EraseReport, error) {
	return call[contract.EraseReport](ctx, c, wire.OpErase, req)
}

// Consolidate asks the server to consolidate.
func (c *Client) Consolidate(ctx context.Context, req contract.ConsolidateRequest) (contract.ConsolidateReceipt, error) {
	return call[contract.ConsolidateReceipt](ctx, c, wire.OpConsolidate, req)
}

// Beliefs reads beliefs from the server.
func (c *Client) Beliefs(ctx context.Context, req contract.BeliefsRequest) ([]contract.Hit, error) {
	return call[[]contract.Hit](ctx, c, wire.OpBeliefs, req)
}

// KeptClusters reads the clusters the server's store keeps (curate.Kept);
// false when it keeps none for cfg, or is an earlier mnemo without them.
func (c *Client) KeptClusters(ctx context.Context, filter contract.MetaFilter, cfg curate.Config) (curate.KeptAnswer, error) {
	a, err := call[curate.KeptAnswer](ctx, c, wire.OpClusters, wire.ClustersBody{Filter: filter, Config: cfg})
	if err != nil && contract.KindOf(err) == contract.KindNotFound && strings.Contains(err.Error(), "no such operation") {
		return curate.KeptAnswer{}, nil
	}
	return a, err
}

// Browse lists on the server.
func (c *Client) Browse(ctx context.Context, q contract.BrowseQuery) (contract.BrowsePage, error) {
	out, err := call[browseAnswer](ctx, c, wire.OpBrowse, q)
	return contract.BrowsePage(out), err
}

// Review approves or rejects a candidate.
func (c *Client) Review(ctx context.Context, req contract.ReviewRequest) (contract.ReviewResult, error) {
	return call[contract.ReviewResult](ctx, c, wire.OpReview, req)
}

// Supersede marks a record superseded.
func (c *Client) Supersede(ctx context.Context, req contract.SupersedeRequest) (contract.Record, error) {
	return call[contract.Record](ctx, c, wire.OpSupersede, req)
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
	return call[[]contract.StoreReceipt](ctx, c, wire.OpRestore, body)
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
