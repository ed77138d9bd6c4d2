package contract

import (
	"encoding/json"
	"testing"
	"time"
)

func TestFingerprintVectors(t *testing.T) {
	cases := []struct {
		json string
		id   string
	}{
		{`{"type":"document","body":{"text":"x"},"meta":{"source":{"kind":"agent"}}}`, "b3371e4dfaed9fc1e36eb64bc4452cd89dcc0dbc"},
		{`{"type":"learning","text":"prefers tabs","kind":"preference","confidence":0.8,"meta":{"source":{"kind":"agent"}}}`, "8a8f01f6a30ffa27d488a48fc9218a8ec5af4228"},
		{`{"type":"learning","text":"prefers tabs","kind":"preference","confidence":0.8,"meta":{"namespace":"team:acme/agent:writer","source":{"kind":"agent"},"tags":["style"]}}`, "20c6a97a5399b003912eecbf1f7cc29d5163a7a7"},
		{`{"type":"conversation","turns":[{"role":"user","text":"hi","at":"2025-05-06T07:08:09Z"},{"role":"assistant","text":"yo","tool_calls":[{"name":"read_plan","id":"call-1"}]}],"meta":{"thread_id":"t1","source":{"kind":"conversation","id":"t1"}}}`, "d2772d94cb4acf9fbbe7f25716a21ab06a2f1d04"},
	}
	for _, c := range cases {
		var it StoreItem
		if err := json.Unmarshal([]byte(c.json), &it); err != nil {
			t.Fatalf("%s: %v", c.json, err)
		}
		if got := string(it.CanonicalJSON()); got != c.json {
			t.Errorf("canonical form\n got %s\nwant %s", got, c.json)
		}
		if got := it.Fingerprint(); got != c.id {
			t.Errorf("fingerprint of %s = %s, want %s", c.json, got, c.id)
		}
	}
}

func TestFingerprintIgnoresKeyOrderUnknownKeysAndObservation(t *testing.T) {
	a := `{"meta":{"tags":["style"],"source":{"kind":"agent"},"namespace":"team:acme/agent:writer","zzz":1},"confidence":0.8,"kind":"preference","text":"prefers tabs","type":"learning","extra":true}`
	var it StoreItem
	if err := json.Unmarshal([]byte(a), &it); err != nil {
		t.Fatal(err)
	}
	if got := it.Fingerprint(); got != "20c6a97a5399b003912eecbf1f7cc29d5163a7a7" {
		t.Fatalf("got %s", got)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	it.Meta.ObservedAt = &now
	it.Meta.ObservedActor = &ObservedActor{ID: "user:priya"}
	if got := it.Fingerprint(); got != "20c6a97a5399b003912eecbf1f7cc29d5163a7a7" {
		t.Fatalf("observation changed the id: %s", got)
	}
}

func TestFormatF32(t *testing.T) {
	cases := map[float32]string{
		0.1: "0.1", 1.0: "1.0", 0: "0.0", 1e-7: "1e-7", 0.30000001: "0.3", 0.8: "0.8", 0.75: "0.75",
		1.5e-7: "1.5e-7", 123456: "123456.0", 1e13: "1e13", 0.00001: "0.00001", 0.000001: "0.000001", 0.30000004: "0.30000004",
		1234567.5: "1234567.5", 3.4028235e38: "3.4028235e38",
	}
	for f, want := range cases {
		if got := FormatF32(f); got != want {
			t.Errorf("FormatF32(%v) = %s, want %s", f, got, want)
		}
	}
	// 0.30000001 as an f32 is a different float than 0.3 only if it rounds apart.
	if got := FormatF32(float32(0.30000001)); got != "0.3" && got != "0.30000001" {
		t.Errorf("got %s", got)
	}
}

func TestFingerprintCoversMetadata(t *testing.T) {
	base := Learning("prefers tabs", LearningPreference, 0.8, MemoryMeta{})
	fp := base.Fingerprint()
	if len(fp) != 40 || fp != "8a8f01f6a30ffa27d488a48fc9218a8ec5af4228" {
		t.Fatalf("base fingerprint %s", fp)
	}
	changes := map[string]func(*StoreItem){
		"source kind":   func(it *StoreItem) { it.Meta.Source.Kind = SourceFile },
		"source id":     func(it *StoreItem) { it.Meta.Source.ID = Ptr("s") },
		"thread_id":     func(it *StoreItem) { it.Meta.ThreadID = Ptr("t1") },
		"one tag":       func(it *StoreItem) { it.Meta.Tags = []string{"style"} },
		"namespace":     func(it *StoreItem) { it.Meta.Namespace = MustNamespace("agent:writer") },
		"confidence":    func(it *StoreItem) { it.Confidence = 0.75 },
		"one character": func(it *StoreItem) { it.Text = "prefers tab" },
		"learning kind": func(it *StoreItem) { it.Kind = LearningFact },
		"evidence":      func(it *StoreItem) { it.Evidence = Ptr("said so") },
		"derive set":    func(it *StoreItem) { it.Meta.Derive = Ptr(false) },
	}
	seen := map[string]string{fp: "base"}
	for name, change := range changes {
		it := base
		change(&it)
		got := it.Fingerprint()
		if prev, ok := seen[got]; ok {
			t.Errorf("%s gives the same fingerprint as %s", name, prev)
		}
		seen[got] = name
	}
	same := map[string]func(*StoreItem){
		"observed_at":    func(it *StoreItem) { it.Meta.ObservedAt = Ptr(time.Unix(1, 0)) },
		"observed_actor": func(it *StoreItem) { it.Meta.ObservedActor = &ObservedActor{ID: "user:x", Name: Ptr("X")} },
		"root namespace": func(it *StoreItem) { it.Meta.Namespace = MustNamespace("root") },
		"empty tags":     func(it *StoreItem) { it.Meta.Tags = []string{} },
		"agent default":  func(it *StoreItem) { it.Meta.Source.Kind = SourceAgent },
	}
	for name, change := range same {
		it := base
		change(&it)
		if got := it.Fingerprint(); got != fp {
			t.Errorf("%s changed the fingerprint to %s", name, got)
		}
	}
}
