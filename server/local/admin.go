package local

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/server/audit"
	"mnemo/server/wire"
)

// The socket serves, beside the HTTP API, what only the store's own user
// asks of it and the API has no place for: which process holds the store,
// the index's state and the count of every record (mnemo info), and mnemo
// check. Only the socket serves them: `mnemo serve`'s listeners never do.
const (
	adminPrefix = "/local/v1/"
	adminStatus = adminPrefix + "status"
	// adminAlive answers at once, touching nothing of the store: a process
	// waiting on a long call asks it whether the holder still answers.
	adminAlive = adminPrefix + "alive"
	adminCheck = adminPrefix + "check"
	adminAudit = adminPrefix + "audit"
)

// Status is what the holder reports of itself and the store.
type Status struct {
	// PID is the process holding the store.
	PID int `json:"pid"`
	// Holder names this holding of the store (one process may hold it,
	// let go and hold it again): an attached process that gets Unavailable
	// tells by it whether the holder it asked is the one serving now.
	Holder string `json:"holder"`
	// Records counts every record, service sandboxes included.
	Records int              `json:"records"`
	Index   bolt.IndexStatus `json:"index"`
}

func statusOf(e *bolt.Engine, holder string) Status {
	return Status{PID: os.Getpid(), Holder: holder, Records: e.Len(), Index: e.IndexStatus()}
}

type checkRequest struct {
	Repair bool `json:"repair"`
}

// adminHandler serves the socket's own endpoints.
func adminHandler(e *bolt.Engine, holder string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+adminAlive, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, struct{}{}, nil)
	})
	mux.HandleFunc("GET "+adminStatus, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, statusOf(e, holder), nil)
	})
	mux.HandleFunc("POST "+adminCheck, func(w http.ResponseWriter, r *http.Request) {
		var req checkRequest
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<10)).Decode(&req); err != nil {
			writeJSON(w, nil, contract.Invalid("check: the request is not JSON: %w", err))
			return
		}
		rep, err := e.Check(r.Context(), req.Repair, nil)
		writeJSON(w, rep, err)
	})
	mux.HandleFunc("GET "+adminBackup, serveBackup(e))
	mux.HandleFunc("GET "+adminNamespaces, func(w http.ResponseWriter, r *http.Request) {
		counts, err := e.NamespaceCounts(r.Context())
		writeJSON(w, counts, err)
	})
	mux.HandleFunc("POST "+adminAudit, func(w http.ResponseWriter, r *http.Request) {
		var ev audit.Event
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&ev); err != nil {
			writeJSON(w, nil, contract.Invalid("audit: the event is not JSON: %w", err))
			return
		}
		writeJSON(w, struct{}{}, e.AppendAudit(r.Context(), ev))
	})
	return mux
}

// writeJSON answers v, or err in the API's error envelope.
func writeJSON(w http.ResponseWriter, v any, err error) {
	w.Header().Set("Content-Type", "application/json")
	if err != nil {
		ce := contract.AsError(err)
		w.WriteHeader(wire.StatusOf(ce))
		_ = json.NewEncoder(w).Encode(wire.ErrorEnvelope(ce))
		return
	}
	_ = json.NewEncoder(w).Encode(v)
}

// admin asks the holder over the socket.
func (s *Store) admin(ctx context.Context, method, path string, req, out any) error {
	s.mu.RLock()
	legacy := s.legacy
	s.mu.RUnlock()
	if legacy {
		return contract.Unsupported("the store is held by a server of an earlier mnemo, which does not answer this; stop it, or run the command on that server's host with the same mnemo")
	}
	return s.askHolder(ctx, method, path, req, out)
}

// askHolder sends one request to whichever process serves the socket now
// (it takes no lock: attach calls it while switching roles).
func (s *Store) askHolder(ctx context.Context, method, path string, req, out any) error {
	var body io.Reader
	if req != nil {
		b, err := json.Marshal(req)
		if err != nil {
			return contract.Invalid("the request cannot be encoded: %w", err)
		}
		body = bytes.NewReader(b)
	}
	hr, err := http.NewRequestWithContext(ctx, method, "http://mnemo"+path, body)
	if err != nil {
		return contract.EngineErr("cannot build a request to the store's holder: %w", err)
	}
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", s.sock)
		}}}
	resp, err := hc.Do(hr)
	if err != nil {
		ce := contract.Unavailable("cannot reach the process holding store %s", s.dir)
		ce.Err = err
		return ce
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		ce := contract.Unavailable("the process holding store %s stopped answering", s.dir)
		ce.Err = err
		return ce
	}
	if resp.StatusCode != http.StatusOK {
		return wire.ErrorOf(resp.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return contract.EngineErr("the store's holder answered %s with JSON this process cannot read: %w", path, err)
	}
	return nil
}

// Status reports which process holds the store, the index's state and the
// count of every record.
func (s *Store) Status(ctx context.Context) (Status, error) {
	return call(s, ctx, "status", again, func(ctx context.Context, e contract.Engine) (Status, error) {
		if b, ok := e.(*bolt.Engine); ok {
			return statusOf(b, s.holding()), nil
		}
		var st Status
		err := s.admin(ctx, http.MethodGet, adminStatus, nil, &st)
		return st, err
	})
}

// Len counts every record, service sandboxes included (0 when the holder
// cannot be asked).
func (s *Store) Len() int {
	st, err := s.Status(context.Background())
	if err != nil {
		return 0
	}
	return st.Records
}

// Check verifies the derived structures against the records (bolt's Check),
// in the process holding the store; progress is reported only there.
func (s *Store) Check(ctx context.Context, repair bool, progress func(done, total int)) (bolt.CheckReport, error) {
	return call(s, ctx, "check", again, func(ctx context.Context, e contract.Engine) (bolt.CheckReport, error) {
		if b, ok := e.(*bolt.Engine); ok {
			return b.Check(ctx, repair, progress)
		}
		var rep bolt.CheckReport
		err := s.admin(ctx, http.MethodPost, adminCheck, checkRequest{Repair: repair}, &rep)
		return rep, err
	})
}

// SetBulk defers the index work while a bulk load runs (bolt's SetBulk),
// when this process holds the store. A process attached to another leaves
// the holder's index as it is: a loader that died with the holder's index
// deferred would leave every other process's search behind.
func (s *Store) SetBulk(on bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.role == Holding && !s.closed {
		s.bolt.SetBulk(on)
	}
}

// BulkItems is how many items StoreBulk takes at once: bolt's
// MaxBulkItems when this process holds the store, store_many's 100 when it
// is attached to another (whose socket takes store_many's batches).
func (s *Store) BulkItems() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.role == Holding && !s.closed {
		return bolt.MaxBulkItems
	}
	return contract.MaxStoreMany
}

// StoreBulk stores up to BulkItems items: in one transaction of the engine
// this process holds, or as store_many calls of 100 through the holder.
func (s *Store) StoreBulk(ctx context.Context, items []contract.StoreItem, opts contract.WriteOptions) ([]contract.StoreReceipt, error) {
	return call(s, ctx, "store_many", again, func(ctx context.Context, e contract.Engine) ([]contract.StoreReceipt, error) {
		if b, ok := e.(*bolt.Engine); ok {
			return b.StoreBulk(ctx, items, opts)
		}
		out := make([]contract.StoreReceipt, 0, len(items))
		for start := 0; start < len(items); start += contract.MaxStoreMany {
			rs, err := e.StoreManyWith(ctx, items[start:min(start+contract.MaxStoreMany, len(items))], opts)
			if err != nil {
				return nil, err
			}
			out = append(out, rs...)
		}
		return out, nil
	})
}

// StartBulk is StoreBulk in two steps (contract.BulkPipeliner): while this
// process holds the store, the engine's (bolt.Engine.StartBulk), which
// prepares the items now and commits them after the batches started
// before; otherwise the items are stored at once, as StoreBulk stores them,
// and wait answers that.
func (s *Store) StartBulk(ctx context.Context, items []contract.StoreItem, opts contract.WriteOptions) (wait func() ([]contract.StoreReceipt, error)) {
	s.mu.RLock()
	b, holding := s.bolt, s.role == Holding && !s.closed
	s.mu.RUnlock()
	if holding {
		return b.StartBulk(ctx, items, opts)
	}
	rs, err := s.StoreBulk(ctx, items, opts)
	return func() ([]contract.StoreReceipt, error) { return rs, err }
}

// ReadAudit reads the store's audit log.
func (s *Store) ReadAudit(ctx context.Context, q audit.Query) ([]audit.Event, error) {
	return call(s, ctx, "audit", again, func(ctx context.Context, e contract.Engine) ([]audit.Event, error) {
		r, ok := e.(audit.Reader)
		if !ok {
			return nil, contract.Unsupported("this engine keeps no audit log")
		}
		return r.ReadAudit(ctx, q)
	})
}

// AppendAudit appends to the store's audit log, in the process holding the
// store (mnemo serve's log when another process holds it).
func (s *Store) AppendAudit(ctx context.Context, ev audit.Event) error {
	_, err := call(s, ctx, "audit", once, func(ctx context.Context, e contract.Engine) (struct{}, error) {
		if l, ok := e.(audit.Log); ok {
			return struct{}{}, l.AppendAudit(ctx, ev)
		}
		return struct{}{}, s.admin(ctx, http.MethodPost, adminAudit, ev, nil)
	})
	return err
}
