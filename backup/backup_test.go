package backup_test

import (
	"bufio"
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"mnemo/backup"
	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/server/audit"
)

func openBolt(t testing.TB) *bolt.Engine {
	t.Helper()
	e, err := bolt.Open(t.TempDir(), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

func record(text string, status contract.Status, created time.Time) contract.Record {
	it := contract.Document(text, contract.MemoryMeta{Namespace: contract.MustNamespace("team:acme/service:digest")})
	return contract.Record{ID: it.Fingerprint(), Item: &it, Status: status, CreatedAt: created, UpdatedAt: created.Add(time.Minute)}
}

func logical(t testing.TB, recs []contract.Record, evs []audit.Event) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := backup.NewWriter(&buf, "test", time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC))
	for _, r := range recs {
		if err := w.Record(r); err != nil {
			t.Fatal(err)
		}
	}
	for _, ev := range evs {
		if err := w.Audit(ev); err != nil {
			t.Fatal(err)
		}
	}
	info, err := w.Close()
	if err != nil || info.Records != len(recs) || info.Audit != len(evs) || info.Bytes != int64(buf.Len()) {
		t.Fatalf("close: %+v %v (%d bytes)", info, err, buf.Len())
	}
	return buf.Bytes()
}

func TestLogicalRoundTrip(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 678e6, time.UTC)
	recs := []contract.Record{record("one", contract.StatusActive, at), record("two", contract.StatusCandidate, at.Add(time.Hour))}
	evs := []audit.Event{{At: at, Principal: "bob", Role: "reader", Op: "forget", Refused: "principal `bob` is a reader and cannot forget"}}
	data := logical(t, recs, evs)
	if f, err := backup.Sniff(bufioOf(data)); err != nil || f != backup.FormatLogical {
		t.Fatalf("sniff: %q %v", f, err)
	}
	e := openBolt(t)
	info, err := backup.RestoreLogical(context.Background(), bytes.NewReader(data), e)
	if err != nil || info.Records != 2 || info.Audit != 1 || info.Engine != "test" || info.Bytes != int64(len(data)) {
		t.Fatalf("restore: %+v %v", info, err)
	}
	got, err := e.GetRecords(context.Background(), contract.GetRequest{IDs: []string{recs[0].ID, recs[1].ID}, Reach: &contract.Reach{At: contract.MustNamespace("team:acme/service:digest")}})
	if err != nil || len(got) != 2 {
		t.Fatalf("records: %v %v", got, err)
	}
	for i := range got {
		if !got[i].CreatedAt.Equal(recs[i].CreatedAt) || !got[i].UpdatedAt.Equal(recs[i].UpdatedAt) || got[i].Status != recs[i].Status {
			t.Errorf("record %d: %+v; want %+v", i, got[i], recs[i])
		}
	}
	evsGot, err := e.ReadAudit(context.Background(), audit.Query{})
	if err != nil || len(evsGot) != 1 || evsGot[0].Refused != evs[0].Refused || !evsGot[0].At.Equal(at) {
		t.Fatalf("audit: %+v %v", evsGot, err)
	}
}

func TestLogicalRefusesWhatIsNotWhole(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	whole := string(logical(t, []contract.Record{record("one", contract.StatusActive, at)}, []audit.Event{{At: at, Principal: "a", Op: "store"}}))
	lines := strings.SplitAfter(whole, "\n")
	for _, c := range []struct {
		name, data, want string
	}{
		{"cut before its end", strings.Join(lines[:3], ""), "without its end line: it was cut short"},
		{"no header", strings.Join(lines[1:], ""), "line 1 is not a mnemo backup header"},
		{"a second header", lines[0] + strings.Join(lines, ""), "line 2 is a second header"},
		{"counts that disagree", strings.Join(lines[:1], "") + strings.Join(lines[2:], ""), "end line counts 1 records and 1 audit events; the file holds 0 and 1"},
		{"a record after the audit", lines[0] + lines[2] + lines[1] + lines[3], "line 3: a record after the audit events"},
		{"a line that is not JSON", lines[0] + "oops\n" + strings.Join(lines[1:], ""), "line 2 is not a backup line"},
		{"a line after the end", whole + lines[1], "follows the end line"},
		{"another version", strings.Replace(whole, `"version":1`, `"version":9`, 1), "backup version 9; this mnemo reads version 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := backup.RestoreLogical(context.Background(), strings.NewReader(c.data), openBolt(t))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("restore: %v; want an error saying %q", err, c.want)
			}
		})
	}
}

// FuzzRestoreLogical: whatever the bytes, a restore either refuses them with
// an error or restores a whole backup; it never panics.
func FuzzRestoreLogical(f *testing.F) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	f.Add(logical(f, []contract.Record{record("one", contract.StatusActive, at)}, []audit.Event{{At: at, Principal: "a", Op: "store"}}))
	f.Add([]byte(`{"mnemo_backup":{"version":1}}` + "\n" + `{"end":{"records":0,"audit_events":0}}`))
	f.Add([]byte("{\n"))
	e := openBolt(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := backup.RestoreLogical(context.Background(), bytes.NewReader(data), e)
		if err == nil && info.Bytes != int64(len(data)) {
			t.Fatalf("a restore that succeeded read %d of %d bytes", info.Bytes, len(data))
		}
	})
}

func bufioOf(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }
