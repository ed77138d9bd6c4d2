package bolt

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"mnemo/contract"
)

func sampleRecords() []storedRecord {
	at := time.Date(2026, 5, 6, 7, 8, 9, 123456789, time.UTC)
	meta := contract.MemoryMeta{
		Namespace: contract.MustNamespace("team:acme/agent:writer"), Workspace: contract.Ptr("/w"), Folder: contract.Ptr("/w/src"),
		FilePath: contract.Ptr("/w/src/a.go"), Language: contract.Ptr("go"), Repo: contract.Ptr("acme/app"), Commit: contract.Ptr("c0ffee"),
		URL: contract.Ptr("https://x.test"), ThreadID: contract.Ptr("t1"), Turns: &contract.TurnRange{First: 1, Last: 4},
		AgentID: contract.Ptr("writer"), ToolCall: &contract.ToolCallRef{Name: "grep", ID: contract.Ptr("call-1")},
		Source: contract.SourceRef{Kind: contract.SourceGithub, ID: contract.Ptr("gh-1")}, Tags: []string{"a", "b"},
		ObservedAt: &at, Derive: contract.Ptr(false), ObservedActor: &contract.ObservedActor{ID: "user:p", Name: contract.Ptr("P")},
	}
	full := contract.Learning("prefers tabs", contract.LearningPreference, 0.8, meta)
	js, _ := full.MarshalJSON()
	bare := contract.Document("x", contract.MemoryMeta{})
	bjs, _ := bare.MarshalJSON()
	return []storedRecord{
		{ord: 7, status: contract.StatusCandidate, kind: contract.KindLearning, created: 1, updated: 2, expires: at.UnixNano(),
			supersededBy: "abc", text: full.RenderText(), confidence: 0.8, meta: meta, itemJSON: js},
		{ord: 0, status: contract.StatusActive, kind: contract.KindDocument, created: -5, updated: 9, expires: noTime,
			text: "x", meta: contract.MemoryMeta{Source: contract.SourceRef{Kind: contract.SourceAgent}}, itemJSON: bjs},
	}
}

func TestRecordCodecRoundTrips(t *testing.T) {
	for _, want := range sampleRecords() {
		got, err := decodeRecord(encodeRecord(&want), partFull, parseNS)
		if err != nil {
			t.Fatal(err)
		}
		gj, _ := json.Marshal(struct {
			A contract.MemoryMeta
			B string
		}{got.meta, string(got.itemJSON)})
		wj, _ := json.Marshal(struct {
			A contract.MemoryMeta
			B string
		}{want.meta, string(want.itemJSON)})
		if string(gj) != string(wj) || got.ord != want.ord || got.status != want.status || got.kind != want.kind ||
			got.created != want.created || got.updated != want.updated || got.expires != want.expires ||
			got.supersededBy != want.supersededBy || got.text != want.text || got.confidence != want.confidence {
			t.Fatalf("round trip\n got %+v\nwant %+v", got, want)
		}
		if text, ok := recordText(encodeRecord(&want)); !ok || text != want.text {
			t.Fatalf("recordText = %q, %v", text, ok)
		}
	}
}

func TestDescMillisKeysSortNewestFirst(t *testing.T) {
	a, b, c := descMillisKey(2000, "b"), descMillisKey(1000, "a"), descMillisKey(-1000, "a")
	if !(string(a) < string(b) && string(b) < string(c)) {
		t.Fatal("keys do not sort newest first")
	}
	if string(descMillisKey(5, "a")) >= string(descMillisKey(5, "b")) {
		t.Fatal("equal instants do not sort by id")
	}
	if ms, id, ok := splitDescMillisKey(descMillisKey(-42, "z")); !ok || ms != -42 || id != "z" {
		t.Fatalf("split = %d %q %v", ms, id, ok)
	}
	if string(confKey(0.9, "b")) >= string(confKey(0.1, "a")) || string(confKey(0.5, "a")) >= string(confKey(0.5, "b")) {
		t.Fatal("confidence keys do not sort desc then id")
	}
}

// FuzzDecodeRecord feeds arbitrary bytes to the decoder: it may refuse them
// but must never panic, and what it accepts must re-encode to a record that
// decodes the same.
func FuzzDecodeRecord(f *testing.F) {
	for _, r := range sampleRecords() {
		f.Add(encodeRecord(&r))
	}
	f.Add([]byte{})
	f.Add([]byte{recordV1, 0, 0, 0, 1, 9, 9})
	f.Add([]byte{recordV2, 0, 0, 0, 1, 9, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := decodeRecord(data, partFull, parseNS)
		if err != nil {
			return
		}
		again, err := decodeRecord(encodeRecord(&s), partFull, parseNS)
		if err != nil {
			t.Fatalf("re-encoded record does not decode: %v", err)
		}
		if again.text != s.text || again.ord != s.ord || again.supersededBy != s.supersededBy {
			t.Fatalf("re-encoded record differs")
		}
		_, _ = recordText(data)
	})
}

// encodeRecordV1 writes the layout of stores before schema 4 (records
// uncompressed), as those binaries did, to prove they still read.
func encodeRecordV1(r *storedRecord) []byte {
	w := encodeHeader(r, recordV1)
	encodeBody(&w, r)
	return w.Buf
}

// sameRecord says whether two decoded records hold the same fields.
func sameRecord(a, b storedRecord) bool {
	ja, _ := json.Marshal(a.meta)
	jb, _ := json.Marshal(b.meta)
	return string(ja) == string(jb) && string(a.itemJSON) == string(b.itemJSON) && a.ord == b.ord &&
		a.status == b.status && a.kind == b.kind && a.created == b.created && a.updated == b.updated &&
		a.expires == b.expires && a.supersededBy == b.supersededBy && a.text == b.text && a.confidence == b.confidence
}

// TestVersion1RecordsReadAndUpgrade: a record in the old layout decodes to
// the record it was, and upgradeRecord turns it into the compressed layout
// (smaller when the item repeats its text) without changing a field.
func TestVersion1RecordsReadAndUpgrade(t *testing.T) {
	long := sampleRecords()[0]
	long.text = strings.Repeat("the deploy of the checkout service waits for the canary ", 20)
	it := contract.Learning(long.text, contract.LearningPreference, 0.8, long.meta)
	long.itemJSON, _ = it.MarshalJSON()
	for _, want := range append(sampleRecords(), long) {
		v1 := encodeRecordV1(&want)
		got, err := decodeRecord(v1, partFull, parseNS)
		if err != nil || !sameRecord(got, want) {
			t.Fatalf("version 1 decoded to %+v, %v", got, err)
		}
		v2, err := upgradeRecord(v1)
		if err != nil || v2[0] != recordV2 {
			t.Fatalf("upgrade: %v", err)
		}
		if got, err = decodeRecord(v2, partFull, parseNS); err != nil || !sameRecord(got, want) {
			t.Fatalf("upgraded record decoded to %+v, %v", got, err)
		}
		if again, _ := upgradeRecord(v2); string(again) != string(v2) {
			t.Fatal("upgrading a version 2 record changed it")
		}
		if string(encodeRecord(&want)) != string(v2) {
			t.Fatal("the upgraded record differs from the one a writer writes")
		}
		for _, b := range [][]byte{v1, v2} {
			if text, ok := recordText(b); !ok || text != want.text {
				t.Fatalf("recordText = %q, %v", text, ok)
			}
		}
	}
	v1, v2 := encodeRecordV1(&long), encodeRecord(&long)
	if len(v2)*2 > len(v1) {
		t.Fatalf("a record that repeats its text takes %d bytes compressed, %d before", len(v2), len(v1))
	}
	if _, err := upgradeRecord([]byte{9, 1, 2}); err == nil {
		t.Fatal("a record of an unknown layout was upgraded")
	}
}

// FuzzUpgradeRecord: arbitrary bytes are refused or upgraded to a record
// that decodes as the original did.
func FuzzUpgradeRecord(f *testing.F) {
	for _, r := range sampleRecords() {
		f.Add(encodeRecordV1(&r))
		f.Add(encodeRecord(&r))
	}
	f.Add([]byte{recordV1, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		up, err := upgradeRecord(data)
		if err != nil {
			return
		}
		a, errA := decodeRecord(data, partFull, parseNS)
		b, errB := decodeRecord(up, partFull, parseNS)
		if (errA == nil) != (errB == nil) || (errA == nil && !sameRecord(a, b)) {
			t.Fatalf("upgrade changed what the record says: %v / %v", errA, errB)
		}
	})
}

// TestDamagedBodyLengthIsRefused: a compressed body whose declared length
// is damaged is a corrupt record, not a huge allocation.
func TestDamagedBodyLengthIsRefused(t *testing.T) {
	r := sampleRecords()[0]
	b := encodeRecord(&r)
	h := recordHeaderLen(b)
	bad := append(append([]byte(nil), b[:h]...), 0xff, 0xff, 0xff, 0xff, 0x0f) // 4 GiB
	bad = append(bad, b[h+1:]...)
	if _, err := decodeRecord(bad, partFull, parseNS); err == nil {
		t.Fatal("a body declaring 4 GiB decoded")
	}
	if _, ok := recordText(bad); ok {
		t.Fatal("recordText read a body declaring 4 GiB")
	}
}
