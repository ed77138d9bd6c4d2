package importer

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/memory"
	"mnemo/ingest"
)

const (
	tabsLearning   = `{"type":"learning","text":"prefers tabs","kind":"preference","confidence":0.8,"meta":{"source":{"kind":"agent"}}}`
	tabsLearningID = "8a8f01f6a30ffa27d488a48fc9218a8ec5af4228"
	xDocument      = `{"type":"document","body":{"text":"x"},"meta":{"source":{"kind":"agent"}}}`
	xDocumentID    = "b3371e4dfaed9fc1e36eb64bc4452cd89dcc0dbc"
)

func TestParseImportLine(t *testing.T) {
	expires := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		line       string
		wantID     string
		wantStatus contract.Status
		wantExp    *time.Time
		wantBy     string
		wantErr    string
	}{
		{name: "bare item", line: tabsLearning, wantID: tabsLearningID},
		{name: "export format", line: `{"id":"` + xDocumentID + `","item":` + xDocument + `}`, wantID: xDocumentID},
		{name: "export format without id", line: `{"item":` + xDocument + `}`, wantID: xDocumentID},
		{name: "status and expiry", line: `{"item":` + xDocument + `,"status":"candidate","expires_at":"2027-03-01T00:00:00Z"}`,
			wantID: xDocumentID, wantStatus: contract.StatusCandidate, wantExp: &expires},
		{name: "bare item with status", line: strings.TrimSuffix(tabsLearning, "}") + `,"status":"candidate"}`,
			wantID: tabsLearningID, wantStatus: contract.StatusCandidate},
		{name: "keys in any order, unknown keys ignored", line: `{"meta":{"source":{"kind":"agent"}},"body":{"text":"x"},"extra":1,"type":"document"}`, wantID: xDocumentID},
		{name: "superseded", line: `{"item":` + xDocument + `,"status":"superseded","superseded_by":"` + tabsLearningID + `"}`,
			wantID: xDocumentID, wantStatus: contract.StatusSuperseded, wantBy: tabsLearningID},
		{name: "superseded_by alone implies superseded", line: `{"item":` + xDocument + `,"superseded_by":"` + tabsLearningID + `"}`,
			wantID: xDocumentID, wantStatus: contract.StatusSuperseded, wantBy: tabsLearningID},

		{name: "not JSON", line: `not json`, wantErr: "invalid request: invalid JSON: "},
		{name: "truncated JSON", line: `{"type":"document"`, wantErr: "invalid request: invalid JSON: unexpected end of JSON input"},
		{name: "array", line: `[1,2]`, wantErr: "invalid request: a line must be a JSON object, not array"},
		{name: "string", line: `"hello"`, wantErr: "invalid request: a line must be a JSON object, not string"},
		{name: "neither item nor type", line: `{"text":"x"}`, wantErr: `invalid request: a line must be a StoreItem (with "type") or {"id", "item"}`},
		{name: "both item and type", line: `{"type":"document","item":` + xDocument + `}`, wantErr: "not both"},
		{name: "id beside a bare item", line: strings.TrimSuffix(xDocument, "}") + `,"id":"` + xDocumentID + `"}`, wantErr: `an "id" goes with {"id", "item"}`},
		{name: "wrong id", line: `{"id":"` + tabsLearningID + `","item":` + xDocument + `}`,
			wantErr: "invalid request: id " + tabsLearningID + " does not match the item's fingerprint " + xDocumentID},
		{name: "unknown type", line: `{"type":"poem","text":"x"}`, wantErr: "invalid request: invalid item: unknown item type `poem`, expected one of document, conversation, learning"},
		{name: "every missing field of a learning at once", line: `{"type":"learning","text":"t"}`, wantErr: "invalid request: invalid item: missing fields `kind`, `confidence`"},
		{name: "all three learning fields", line: `{"type":"learning"}`, wantErr: "missing fields `text`, `kind`, `confidence`"},
		{name: "one missing field", line: `{"type":"document"}`, wantErr: "invalid request: invalid item: missing field `body`"},
		{name: "missing fields of turns", line: `{"type":"conversation","turns":[{"role":"user"},{"text":"hi"}]}`, wantErr: "missing fields `turns[0].text`, `turns[1].role`"},
		{name: "item without type", line: `{"id":"` + xDocumentID + `","item":{"body":{"text":"x"}}}`, wantErr: "invalid item: missing field `type`"},
		{name: "empty body", line: `{"type":"document","body":{"text":"  "}}`, wantErr: "invalid request: document body must not be empty"},
		{name: "confidence out of range", line: `{"type":"learning","text":"t","kind":"fact","confidence":1.5}`, wantErr: "invalid request: learning confidence 1.5 is outside 0.0..=1.0"},
		{name: "unknown status", line: `{"item":` + xDocument + `,"status":"archived"}`, wantErr: "invalid request: `archived` is not a status, expected one of active, candidate, superseded"},
		{name: "bad expiry", line: `{"item":` + xDocument + `,"expires_at":"tomorrow"}`, wantErr: "invalid request: expires_at `tomorrow` is not an RFC 3339 instant"},
		{name: "superseded without successor", line: `{"item":` + xDocument + `,"status":"superseded"}`, wantErr: "status `superseded` needs superseded_by"},
		{name: "successor with another status", line: `{"item":` + xDocument + `,"status":"candidate","superseded_by":"` + tabsLearningID + `"}`, wantErr: "superseded_by goes with status `superseded`, not `candidate`"},
		{name: "successor not an id", line: `{"item":` + xDocument + `,"superseded_by":"later"}`, wantErr: "superseded_by `later` is not a record id"},
		{name: "status not a string", line: `{"item":` + xDocument + `,"status":3}`, wantErr: `invalid request: field "status" must be a string, not number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseLine([]byte(tt.line))
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("parsed %s without error, want %q", tt.line, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %q, want it to contain %q", err, tt.wantErr)
				}
				if contract.KindOf(err) != contract.KindInvalidRequest {
					t.Fatalf("error kind %q, want invalid request", contract.KindOf(err))
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if id := got.item.Fingerprint(); id != tt.wantID {
				t.Errorf("id %s, want %s", id, tt.wantID)
			}
			if got.status != tt.wantStatus {
				t.Errorf("status %q, want %q", got.status, tt.wantStatus)
			}
			if (got.expiresAt == nil) != (tt.wantExp == nil) || (got.expiresAt != nil && !got.expiresAt.Equal(*tt.wantExp)) {
				t.Errorf("expires_at %v, want %v", got.expiresAt, tt.wantExp)
			}
			if got.supersededBy != tt.wantBy {
				t.Errorf("superseded_by %q, want %q", got.supersededBy, tt.wantBy)
			}
		})
	}
}

// FuzzParseImportLine checks that any input either parses into a valid item
// whose fingerprint is stable through a re-encode, or fails as an invalid
// request - never a panic, never another error kind.
func FuzzParseImportLine(f *testing.F) {
	for _, seed := range []string{
		tabsLearning, xDocument,
		`{"id":"` + xDocumentID + `","item":` + xDocument + `,"status":"candidate","expires_at":"2027-03-01T00:00:00Z"}`,
		`{"item":` + xDocument + `,"superseded_by":"` + tabsLearningID + `"}`,
		`{"type":"conversation","turns":[{"role":"user","text":"hi","at":"2025-05-06T07:08:09Z"},{"role":"assistant","text":"yo","tool_calls":[{"name":"read_plan","id":"call-1"}]}],"meta":{"thread_id":"t1","source":{"kind":"conversation","id":"t1"}}}`,
		`{"type":"learning","text":"x","kind":"fact","confidence":1e400}`,
		`[]`, `null`, `{}`, `{"type":null}`, `{"item":null}`, "\xff\xfe",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parseLine(data)
		if err != nil {
			if contract.KindOf(err) != contract.KindInvalidRequest {
				t.Fatalf("error of kind %q: %v", contract.KindOf(err), err)
			}
			return
		}
		if err := got.item.Validate(); err != nil {
			t.Fatalf("accepted an invalid item: %v", err)
		}
		again, err := json.Marshal(got.item)
		if err != nil {
			t.Fatalf("cannot re-encode an accepted item: %v", err)
		}
		var back contract.StoreItem
		if err := json.Unmarshal(again, &back); err != nil {
			t.Fatalf("cannot decode the re-encoded item %s: %v", again, err)
		}
		if back.Fingerprint() != got.item.Fingerprint() {
			t.Fatalf("fingerprint changed through a re-encode: %s", again)
		}
	})
}

// pickyEngine is a real reference engine that, like a server with stricter
// rules than the contract, refuses items whose text names its word.
type pickyEngine struct {
	*memory.Engine
	word string
}

func (p pickyEngine) refuses(items []contract.StoreItem) error {
	for _, it := range items {
		if strings.Contains(it.RenderText(), p.word) {
			return contract.Invalid("this server refuses %s text", p.word)
		}
	}
	return nil
}

func (p pickyEngine) StoreManyWith(ctx context.Context, items []contract.StoreItem, opts contract.WriteOptions) ([]contract.StoreReceipt, error) {
	if err := p.refuses(items); err != nil {
		return nil, err
	}
	return p.Engine.StoreManyWith(ctx, items, opts)
}

func (p pickyEngine) StoreWith(ctx context.Context, item contract.StoreItem, opts contract.WriteOptions) (contract.StoreReceipt, error) {
	if err := p.refuses([]contract.StoreItem{item}); err != nil {
		return contract.StoreReceipt{}, err
	}
	return p.Engine.StoreWith(ctx, item, opts)
}

func TestImportFindsTheLineAnEngineRefusesAndStoresTheRest(t *testing.T) {
	var lines []string
	for i := range 7 {
		text := fmt.Sprintf("note %d", i)
		if i == 4 {
			text = "a forbidden note"
		}
		lines = append(lines, fmt.Sprintf(`{"type":"document","body":{"text":%q},"meta":{"source":{"kind":"agent"}}}`, text))
	}
	e := pickyEngine{memory.New(), "forbidden"}
	im := &Importer{Engine: e, Batch: 3, DefaultStatus: contract.StatusActive}
	summary, err := im.Run(context.Background(), strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	if summary.Stored != 6 || summary.Failed != 1 || len(summary.Errors) != 1 ||
		summary.Errors[0] != (LineError{Line: 5, Error: "invalid request: this server refuses forbidden text"}) {
		t.Errorf("summary: %+v", summary)
	}
	if e.Len() != 6 {
		t.Errorf("the engine holds %d records, want 6", e.Len())
	}
}

// failingEngine stops accepting writes after a number of batches, like a disk
// that fills up: the import stops, and what was stored stays.
type failingEngine struct {
	*memory.Engine
	batchesLeft *int
}

func (f failingEngine) StoreManyWith(ctx context.Context, items []contract.StoreItem, opts contract.WriteOptions) ([]contract.StoreReceipt, error) {
	if *f.batchesLeft == 0 {
		return nil, contract.EngineErr("no space left on device")
	}
	*f.batchesLeft--
	return f.Engine.StoreManyWith(ctx, items, opts)
}

func TestImportStopsOnAnEngineFailureAndKeepsWhatWasStored(t *testing.T) {
	var lines []string
	for i := range 10 {
		lines = append(lines, fmt.Sprintf(`{"type":"document","body":{"text":"note %d"},"meta":{"source":{"kind":"agent"}}}`, i))
	}
	left := 2
	e := failingEngine{memory.New(), &left}
	im := &Importer{Engine: e, Batch: 3, DefaultStatus: contract.StatusActive}
	summary, err := im.Run(context.Background(), strings.NewReader(strings.Join(lines, "\n")))
	if err == nil || err.Error() != "engine error: no space left on device" {
		t.Fatalf("error %v, want the engine's", err)
	}
	if summary.Stored != 6 || e.Len() != 6 {
		t.Errorf("summary %+v, engine holds %d; want 6 stored and kept", summary, e.Len())
	}
}

// slowReader hands out its lines one at a time and cancels the import after a
// number of them, like a Ctrl-C in the middle of a file.
type slowReader struct {
	lines  []string
	cancel context.CancelFunc
	after  int
}

func (s *slowReader) Read(p []byte) (int, error) {
	if len(s.lines) == 0 {
		return 0, io.EOF
	}
	if s.after == 0 {
		s.cancel()
		time.Sleep(10 * time.Millisecond)
	}
	s.after--
	n := copy(p, s.lines[0]+"\n")
	s.lines = s.lines[1:]
	return n, nil
}

func TestImportInterruptedSaysSo(t *testing.T) {
	var lines []string
	for i := range 50 {
		lines = append(lines, fmt.Sprintf(`{"type":"document","body":{"text":"note %d"},"meta":{"source":{"kind":"agent"}}}`, i))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := memory.New()
	im := &Importer{Engine: e, Batch: 5, DefaultStatus: contract.StatusActive}
	summary, err := im.Run(ctx, &slowReader{lines: lines, cancel: cancel, after: 20})
	if err == nil || err.Error() != "unavailable: import interrupted; what was stored stays, and running it again replays it" {
		t.Fatalf("error %v, want the interruption", err)
	}
	if summary.Stored > 20 || summary.Stored != e.Len() {
		t.Errorf("summary %+v, engine holds %d", summary, e.Len())
	}
}

// TestImportStoresSupersedesAndReplays runs a whole file through a real
// in-memory engine: a superseded line names a successor further down, an
// unknown meta key is reported once with its first line, and the same file
// again replays every line.
func TestImportStoresSupersedesAndReplays(t *testing.T) {
	ctx := context.Background()
	e := memory.New()
	lines := strings.Join([]string{
		`{"item":` + xDocument + `,"superseded_by":"` + tabsLearningID + `"}`,
		`{"type":"learning","text":"likes short names","kind":"preference","confidence":0.7,"meta":{"source":{"kind":"agent"},"mood":"sunny"}}`,
		``,
		tabsLearning,
		`{"type":"learning","text":"also","kind":"preference","confidence":0.7,"meta":{"source":{"kind":"agent"},"mood":"rainy"}}`,
	}, "\n")
	im := &Importer{Engine: e, Batch: 2, DefaultStatus: contract.StatusCandidate}
	got, err := im.Run(ctx, strings.NewReader(lines))
	if err != nil {
		t.Fatal(err)
	}
	if got.Stored != 4 || got.Replayed != 0 || got.Failed != 0 || len(got.Errors) != 0 {
		t.Fatalf("first run = %+v, want 4 stored", got)
	}
	if u := im.UnknownMeta(); len(u) != 1 || u[0] != (UnknownKey{Key: "mood", Line: 2}) {
		t.Errorf("unknown meta = %+v, want mood first on line 2", u)
	}
	recs, err := e.GetRecords(ctx, contract.GetRequest{IDs: []string{xDocumentID, tabsLearningID}})
	if err != nil || len(recs) != 2 {
		t.Fatalf("get = %v, %v", recs, err)
	}
	for _, r := range recs {
		want := contract.StatusCandidate
		if r.ID == xDocumentID {
			want = contract.StatusSuperseded
		}
		if r.Status != want {
			t.Errorf("%s is %s, want %s", r.ID, r.Status, want)
		}
	}
	again, err := (&Importer{Engine: e, Batch: 100, DefaultStatus: contract.StatusCandidate}).Run(ctx, strings.NewReader(lines))
	if err != nil {
		t.Fatal(err)
	}
	if again.Stored != 0 || again.Replayed != 4 || again.Failed != 0 {
		t.Errorf("second run = %+v, want 4 replayed", again)
	}
}

func TestImportRefusesABatchOutOfRange(t *testing.T) {
	for _, n := range []int{0, contract.MaxStoreMany + 1} {
		_, err := (&Importer{Engine: memory.New(), Batch: n}).Run(context.Background(), strings.NewReader(tabsLearning))
		if contract.KindOf(err) != contract.KindInvalidRequest {
			t.Errorf("batch %d: err = %v, want invalid request", n, err)
		}
	}
}

// TestRunFromNamesLocations imports another system's memory (mem0's API
// pages): each record's source id is its location, a refused record is named
// by its location rather than a line of the stream, and what the source
// skipped is listed.
func TestRunFromNamesLocations(t *testing.T) {
	ctx := context.Background()
	src, err := ingest.Lookup("mem0")
	if err != nil {
		t.Fatal(err)
	}
	e := pickyEngine{memory.New(), "Kyoto"}
	place, err := contract.ParseNamespace("team:acme")
	if err != nil {
		t.Fatal(err)
	}
	im := &Importer{Engine: e, Batch: 2, DefaultStatus: contract.StatusActive}
	sum, err := im.RunFrom(ctx, src, "../ingest/testdata/mem0/pages", place)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Stored != 2 || sum.Failed != 1 || len(sum.Errors) != 1 || sum.Errors[0].Location != "page-1.json#6c9a-02" ||
		sum.Errors[0].Error != "invalid request: this server refuses Kyoto text" {
		t.Errorf("summary %+v", sum)
	}
	if len(sum.Skipped) != 2 || sum.Skipped[0].Location != "page-2.json#6c9a-04" || sum.Skipped[1].Location != "page-2.json$.results[2]" {
		t.Errorf("skipped %+v", sum.Skipped)
	}
	again, err := (&Importer{Engine: e.Engine, Batch: 100, DefaultStatus: contract.StatusActive}).RunFrom(ctx, src, "../ingest/testdata/mem0/pages", place)
	if err != nil {
		t.Fatal(err)
	}
	if again.Stored != 1 || again.Replayed != 2 || again.Failed != 0 {
		t.Errorf("second run %+v, want the refused record stored and the rest replayed", again)
	}
}

// bulkEngine is a real reference engine that, like a store this process
// holds, takes up to its bulk items a call (counted).
type bulkEngine struct {
	*memory.Engine
	items int
	calls *[]int
}

func (b bulkEngine) BulkItems() int { return b.items }

func (b bulkEngine) StoreBulk(ctx context.Context, items []contract.StoreItem, opts contract.WriteOptions) ([]contract.StoreReceipt, error) {
	if len(items) > b.items {
		return nil, contract.Invalid("%d items, more than %d", len(items), b.items)
	}
	*b.calls = append(*b.calls, len(items))
	var out []contract.StoreReceipt
	for start := 0; start < len(items); start += contract.MaxStoreMany {
		rs, err := b.Engine.StoreManyWith(ctx, items[start:min(start+contract.MaxStoreMany, len(items))], opts)
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	return out, nil
}

// TestImportInBulk: with Bulk, an engine that takes more than a store_many
// gets the lines of each options group in calls of its size (the rest at the
// end); without Bulk (an explicit --batch) or following, store_many's.
func TestImportInBulk(t *testing.T) {
	var lines []string
	for i := range 2345 {
		status := ""
		if i%3 == 0 {
			status = `,"status":"candidate"`
		}
		lines = append(lines, fmt.Sprintf(`{"item":{"type":"document","body":{"text":"bulk note %d"}}%s}`, i, status))
	}
	input := strings.Join(lines, "\n")
	for _, c := range []struct {
		name    string
		bulk    bool
		trickle bool
		want    []int
	}{
		{"bulk", true, false, []int{1000, 782, 563}},
		{"explicit batch", false, false, nil},
		{"trickle", true, true, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var calls []int
			e := bulkEngine{memory.New(), 1000, &calls}
			im := &Importer{Engine: e, Batch: 100, Bulk: c.bulk, Trickle: c.trickle, DefaultStatus: contract.StatusActive}
			got, err := im.Run(context.Background(), strings.NewReader(input))
			if err != nil || got.Stored != 2345 || e.Len() != 2345 {
				t.Fatalf("summary %+v, engine %d records, %v", got, e.Len(), err)
			}
			if !slices.Equal(calls, c.want) {
				t.Fatalf("bulk calls %v, want %v", calls, c.want)
			}
		})
	}
}
