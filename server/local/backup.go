package local

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"

	"mnemo/backup"
	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/server/wire"
)

// adminBackup streams the holder's backup (bolt's Backup); the trailers
// carry its report, or the error that cut it short.
const (
	adminBackup         = adminPrefix + "backup"
	backupInfoTrailer   = "Mnemo-Backup-Info"
	backupErrorTrailer  = "Mnemo-Backup-Error"
	backupTrailerHeader = backupInfoTrailer + ", " + backupErrorTrailer
)

func serveBackup(e *bolt.Engine) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", backupTrailerHeader)
		w.Header().Set("Content-Type", "application/octet-stream")
		info, err := e.Backup(r.Context(), w)
		if err != nil {
			b, _ := json.Marshal(contract.DetailOf(contract.AsError(err)))
			w.Header().Set(backupErrorTrailer, string(b))
			return
		}
		b, _ := json.Marshal(info)
		w.Header().Set(backupInfoTrailer, string(b))
	}
}

// Backup writes a consistent copy of the store to w (bolt's Backup), in the
// process holding it: here, or streamed over the socket from the holder. A
// backup cut short is an error, never a silent short file.
func (s *Store) Backup(ctx context.Context, w io.Writer) (backup.Info, error) {
	return call(s, ctx, "backup", once, func(ctx context.Context, e contract.Engine) (backup.Info, error) {
		if b, ok := e.(*bolt.Engine); ok {
			return b.Backup(ctx, w)
		}
		return s.backupFromHolder(ctx, w)
	})
}

func (s *Store) backupFromHolder(ctx context.Context, w io.Writer) (backup.Info, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://mnemo"+adminBackup, nil)
	if err != nil {
		return backup.Info{}, contract.EngineErr("cannot build a request to the store's holder: %w", err)
	}
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, DisableCompression: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", s.sock)
		}}}
	resp, err := hc.Do(hr)
	if err != nil {
		ce := contract.Unavailable("cannot reach the process holding store %s", s.dir)
		ce.Err = err
		return backup.Info{}, ce
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return backup.Info{}, wire.ErrorOf(resp.StatusCode, data)
	}
	if _, err := io.Copy(w, resp.Body); err != nil {
		ce := contract.Unavailable("the backup from the process holding store %s was cut short", s.dir)
		ce.Err = err
		return backup.Info{}, ce
	}
	if msg := resp.Trailer.Get(backupErrorTrailer); msg != "" {
		return backup.Info{}, wire.ErrorOf(http.StatusInternalServerError, []byte(`{"error":`+msg+`}`))
	}
	var info backup.Info
	raw := resp.Trailer.Get(backupInfoTrailer)
	if raw == "" || json.Unmarshal([]byte(raw), &info) != nil {
		return backup.Info{}, contract.EngineErr("the process holding store %s ended the backup without its report", s.dir)
	}
	return info, nil
}

// adminNamespaces answers the holder's per-namespace counts.
const adminNamespaces = adminPrefix + "namespaces"

// NamespaceCounts counts the records of each namespace, service sandboxes
// included (contract.NamespaceCounter), in the process holding the store.
func (s *Store) NamespaceCounts(ctx context.Context) (map[string]int, error) {
	return call(s, ctx, "namespaces", again, func(ctx context.Context, e contract.Engine) (map[string]int, error) {
		if b, ok := e.(*bolt.Engine); ok {
			return b.NamespaceCounts(ctx)
		}
		var out map[string]int
		err := s.admin(ctx, http.MethodGet, adminNamespaces, nil, &out)
		return out, err
	})
}
