package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"mnemo/contract"
	"mnemo/engine/curate"
	"mnemo/server/auth"
	"mnemo/server/wire"
)

func (h *Handler) operations() map[string]operation {
	small, big := h.opts.MaxBody, h.opts.MaxStoreBody
	return map[wire.Op]operation{
		wire.OpStore:     {maxBody: big, serve: serveStore},
		wire.OpStoreMany: {maxBody: big, serve: serveStoreMany},
		wire.OpFetch: {maxBody: small, serve: typed(func(ctx context.Context, e *auth.Confined, r contract.FetchRequest) (any, error) {
			return e.Fetch(ctx, r)
		})},
		wire.OpRecall: {maxBody: small, serve: typed(func(ctx context.Context, e *auth.Confined, r contract.RecallRequest) (any, error) {
			return e.Recall(ctx, r)
		})},
		wire.OpList:         {maxBody: small, listing: true, serve: typed(serveList)},
		wire.OpExport:       {maxBody: small, listing: true, serve: typed(serveExport)},
		wire.OpExplore:      {maxBody: small, listing: true, serve: typed(serveExplore)},
		wire.OpBrowse:       {maxBody: small, listing: true, serve: typed(serveBrowse)},
		wire.OpGet:          {maxBody: small, serve: typed(serveGet)},
		wire.OpGetRecords:   {maxBody: small, serve: typed(serveGetRecords)},
		wire.OpForget:       {maxBody: small, serve: typed(serveForget)},
		wire.OpForgetWithin: {maxBody: small, serve: typed(serveForgetWithin)},
		wire.OpReview: {maxBody: small, serve: typed(func(ctx context.Context, e *auth.Confined, r contract.ReviewRequest) (any, error) {
			return e.Review(ctx, r)
		})},
		wire.OpSupersede: {maxBody: small, serve: typed(func(ctx context.Context, e *auth.Confined, r contract.SupersedeRequest) (any, error) {
			return e.Supersede(ctx, r)
		})},
		wire.OpErase: {maxBody: small, serve: typed(func(ctx context.Context, e *auth.Confined, r contract.EraseRequest) (any, error) {
			return contract.Erase(ctx, e, r)
		})},
		wire.OpConsolidate: {maxBody: small, serve: typed(func(ctx context.Context, e *auth.Confined, r contract.ConsolidateRequest) (any, error) {
			return contract.Consolidate(ctx, e, r)
		})},
		wire.OpBeliefs: {maxBody: small, serve: typed(serveBeliefs)},
		wire.OpClusters: {maxBody: small, serve: typed(func(ctx context.Context, e *auth.Confined, r wire.ClustersBody) (any, error) {
			if err := r.Config.Validate(); err != nil {
				return nil, contract.Invalid("config: %s", err)
			}
			a, err := e.KeptClusters(ctx, r.Filter, r.Config)
			if err != nil {
				return nil, err
			}
			a.Clusters = nonNilClusters(a.Clusters)
			return a, nil
		})},
		wire.OpRestore: {maxBody: big, serve: typed(func(ctx context.Context, e *auth.Confined, r wire.RestoreBody) (any, error) {
			return nonNil(e.Restore(ctx, r.Records))
		})},
	}
}

// typed decodes the body into the operation's request type first.
func typed[R any](serve func(ctx context.Context, e *auth.Confined, req R) (any, error)) func(context.Context, *auth.Confined, []byte) (any, error) {
	return func(ctx context.Context, e *auth.Confined, body []byte) (any, error) {
		var req R
		if err := decode(body, &req); err != nil {
			return nil, err
		}
		return serve(ctx, e, req)
	}
}

// decode reads a request body. Unknown keys are ignored, as the contract's
// wire format allows; a contract error raised while decoding (a browse query's
// validation, say) is returned as it is, code included; any other decoding
// error speaks the wire's field names, never Go types.
func decode(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return contract.Invalid("the request needs a JSON body")
	}
	if err := json.Unmarshal(body, v); err != nil {
		var ce *contract.Error
		if errors.As(err, &ce) {
			return ce
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field == "" {
			return contract.Invalid("the request body is not valid: it must be %s", strings.TrimPrefix(contract.DescribeJSONError(err), "value must be "))
		}
		return contract.Invalid("the request body is not valid: %s", contract.DescribeJSONError(err))
	}
	return nil
}

func serveStore(ctx context.Context, e *auth.Confined, body []byte) (any, error) {
	var probe map[string]json.RawMessage
	if err := decode(body, &probe); err != nil {
		return nil, err
	}
	if _, wrapped := probe["item"]; wrapped {
		if _, typed := probe["type"]; !typed {
			var req wire.StoreWithBody
			if err := decode(body, &req); err != nil {
				return nil, err
			}
			return e.StoreWith(ctx, req.Item, req.Options)
		}
	}
	var item contract.StoreItem
	if err := decode(body, &item); err != nil {
		return nil, err
	}
	return contract.Store(ctx, e, item)
}

func serveStoreMany(ctx context.Context, e *auth.Confined, body []byte) (any, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		var req wire.StoreManyBody
		if err := decode(body, &req); err != nil {
			return nil, err
		}
		return nonNil(e.StoreManyWith(ctx, req.Items, req.Options))
	}
	var items []contract.StoreItem
	if err := decode(body, &items); err != nil {
		return nil, err
	}
	return nonNil(contract.StoreMany(ctx, e, items))
}

// nonNil writes an empty list as [] rather than null.
func nonNil[T any](s []T, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return contract.EmptyIfNil(s), nil
}

func serveList(ctx context.Context, e *auth.Confined, r contract.ListRequest) (any, error) {
	page, err := e.List(ctx, r)
	return page, err
}

func serveExport(ctx context.Context, e *auth.Confined, r contract.ListRequest) (any, error) {
	page, err := e.Export(ctx, r)
	return page, err
}

func serveExplore(ctx context.Context, e *auth.Confined, r contract.ExploreRequest) (any, error) {
	page, err := e.Explore(ctx, r)
	return page, err
}

func serveBrowse(ctx context.Context, e *auth.Confined, q contract.BrowseQuery) (any, error) {
	page, err := e.Browse(ctx, q)
	return page, err
}

func serveGet(ctx context.Context, e *auth.Confined, r contract.GetRequest) (any, error) {
	return nonNil(e.Get(ctx, r))
}

func serveGetRecords(ctx context.Context, e *auth.Confined, r contract.GetRequest) (any, error) {
	return nonNil(e.GetRecords(ctx, r))
}

func serveBeliefs(ctx context.Context, e *auth.Confined, r contract.BeliefsRequest) (any, error) {
	return nonNil(contract.Beliefs(ctx, e, r))
}

func serveForget(ctx context.Context, e *auth.Confined, t contract.ForgetTarget) (any, error) {
	rep, skipped, err := e.ForgetCounted(ctx, t)
	if err != nil {
		return nil, err
	}
	return wire.ForgetAnswer{Forgotten: rep.Forgotten, Skipped: skipped}, nil
}

func serveForgetWithin(ctx context.Context, e *auth.Confined, r contract.ForgetWithinRequest) (any, error) {
	rep, skipped, err := e.ForgetWithinCounted(ctx, r.IDs, r.Reach)
	if err != nil {
		return nil, err
	}
	return wire.ForgetAnswer{Forgotten: rep.Forgotten, Skipped: skipped}, nil
}

func nonNilClusters(cs []curate.Cluster) []curate.Cluster {
	if cs == nil {
		return []curate.Cluster{}
	}
	return cs
}
