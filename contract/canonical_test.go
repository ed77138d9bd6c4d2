package contract

import (
	"testing"
	"time"
)

// JSONAndFingerprint answers what MarshalJSON and Fingerprint answer, with
// and without the fields the fingerprint leaves out.
func TestJSONAndFingerprintAgreeWithTheirParts(t *testing.T) {
	at := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	with := Learning("Kim prefers tabs <b>&</b>", LearningPreference, 0.8, MemoryMeta{Tags: []string{"style"}})
	with.Meta.ObservedAt = &at
	actor := with
	actor.Meta.ObservedAt = nil
	actor.Meta.ObservedActor = &ObservedActor{ID: "u1"}
	for _, it := range []StoreItem{
		Document("a note \"quoted\"\n", MemoryMeta{}),
		Learning("Kim prefers tabs <b>&</b>", LearningPreference, 0.8, MemoryMeta{Tags: []string{"style"}}),
		with, actor,
	} {
		js, id, err := it.JSONAndFingerprint()
		want, werr := it.MarshalJSON()
		if err != nil || werr != nil || string(js) != string(want) || id != it.Fingerprint() {
			t.Fatalf("%+v: %s %s %v, want %s %s %v", it, js, id, err, want, it.Fingerprint(), werr)
		}
	}
}
