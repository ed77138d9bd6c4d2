package retrieval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"mnemo/contract"
)

const testKey = "sk-test-5ecr3tK3yValue-0123456789"

// fakeOpenAI is an httptest server speaking the OpenAI wire format; handle
// decides each reply by the request's sequence number (from 1).
type fakeOpenAI struct {
	srv      *httptest.Server
	requests atomic.Int32
	bodies   chan map[string]any
}

func newFake(t *testing.T, handle func(n int, w http.ResponseWriter, body map[string]any)) *fakeOpenAI {
	t.Helper()
	f := &fakeOpenAI{bodies: make(chan map[string]any, 100)}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(f.requests.Add(1))
		if r.Method != http.MethodPost {
			http.Error(w, "method", http.StatusMethodNotAllowed)
			return
		}
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		body["_path"] = r.URL.Path
		body["_auth"] = r.Header.Get("Authorization")
		select {
		case f.bodies <- body:
		default:
		}
		handle(n, w, body)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// embeddingsOK answers every input with a vector derived from its text, in
// reverse index order to prove the client reorders by index.
func embeddingsOK(dim int) func(int, http.ResponseWriter, map[string]any) {
	return func(_ int, w http.ResponseWriter, body map[string]any) {
		inputs, _ := body["input"].([]any)
		type item struct {
			Object    string    `json:"object"`
			Embedding []float32 `json:"embedding"`
			Index     int       `json:"index"`
		}
		var data []item
		for i := len(inputs) - 1; i >= 0; i-- {
			v := make([]float32, dim)
			v[0] = float32(len(inputs[i].(string)))
			data = append(data, item{"embedding", v, i})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": body["model"]})
	}
}

func newTestEmbedder(t *testing.T, url string, mutate func(*OpenAIConfig)) Embedder {
	t.Helper()
	t.Setenv("MNEMO_TEST_KEY", testKey)
	cfg := OpenAIConfig{Endpoint: url, Model: "text-embed-test", APIKeyEnv: "MNEMO_TEST_KEY", Timeout: 2 * time.Second, RetryBackoff: time.Millisecond, MaxAttempts: 3}
	if mutate != nil {
		mutate(&cfg)
	}
	e, err := NewOpenAIEmbedder(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func assertKind(t *testing.T, err error, kind contract.ErrorKind) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", kind)
	}
	if !errors.Is(err, &contract.Error{Kind: kind}) {
		t.Fatalf("error %q is %s, want %s", err, contract.KindOf(err), kind)
	}
	assertNoKey(t, err.Error())
}

func assertNoKey(t *testing.T, s string) {
	t.Helper()
	for _, part := range []string{testKey, testKey[:8], testKey[len(testKey)-6:], "5ecr3tK3y"} {
		if strings.Contains(s, part) {
			t.Fatalf("message leaks the key: %q", s)
		}
	}
}

func TestOpenAIEmbedderBatchesAndOrders(t *testing.T) {
	f := newFake(t, embeddingsOK(4))
	e := newTestEmbedder(t, f.srv.URL+"/v1", func(c *OpenAIConfig) { c.BatchSize = 2 })
	if e.Dim() != 0 {
		t.Fatalf("Dim before any call = %d, want 0 (unknown)", e.Dim())
	}
	texts := []string{"a", "bb", "ccc", "dddd", "eeeee"}
	vecs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs {
		if int(v[0]) != len(texts[i]) {
			t.Fatalf("vector %d belongs to another text: %v", i, v)
		}
	}
	if got := f.requests.Load(); got != 3 {
		t.Errorf("requests = %d, want 3 batches of at most 2", got)
	}
	body := <-f.bodies
	if body["_path"] != "/v1/embeddings" || body["model"] != "text-embed-test" || body["_auth"] != "Bearer "+testKey {
		t.Errorf("request: path %v model %v auth ok %v", body["_path"], body["model"], body["_auth"] == "Bearer "+testKey)
	}
	if e.Dim() != 4 || e.Model() != "text-embed-test" {
		t.Errorf("Dim %d Model %q after a call", e.Dim(), e.Model())
	}
	if d, err := ProbeDim(context.Background(), e); err != nil || d != 4 {
		t.Errorf("ProbeDim = %d, %v", d, err)
	}
}

func TestOpenAIEmbedderErrors(t *testing.T) {
	slow := func(_ int, w http.ResponseWriter, _ map[string]any) {
		time.Sleep(300 * time.Millisecond)
		w.Write([]byte(`{"data":[]}`))
	}
	tests := []struct {
		name     string
		handle   func(int, http.ResponseWriter, map[string]any)
		mutate   func(*OpenAIConfig)
		kind     contract.ErrorKind
		requests int32
		contains string
	}{
		{
			name: "401 is unauthorized and not retried",
			handle: func(_ int, w http.ResponseWriter, _ map[string]any) {
				w.WriteHeader(401)
				fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s***%s"}}`, testKey[:8], testKey[len(testKey)-4:])
			},
			kind: contract.KindUnauthorized, requests: 1, contains: "MNEMO_TEST_KEY",
		},
		{
			name: "400 is a configuration error, the server's message scrubbed",
			handle: func(_ int, w http.ResponseWriter, _ map[string]any) {
				w.WriteHeader(400)
				fmt.Fprintf(w, `{"error":{"message":"model text-embed-test does not exist (key %s)"}}`, testKey)
			},
			kind: contract.KindConfig, requests: 1, contains: "does not exist",
		},
		{
			name:   "404 names the endpoint",
			handle: func(_ int, w http.ResponseWriter, _ map[string]any) { w.WriteHeader(404) },
			kind:   contract.KindConfig, requests: 1, contains: "check the endpoint URL",
		},
		{
			name: "500s exhaust the retries",
			handle: func(_ int, w http.ResponseWriter, _ map[string]any) {
				w.WriteHeader(503)
				w.Write([]byte(`{"error":"overloaded"}`))
			},
			kind: contract.KindUnavailable, requests: 3, contains: "after 3 attempts",
		},
		{
			name:     "each attempt times out",
			handle:   slow,
			mutate:   func(c *OpenAIConfig) { c.Timeout = 50 * time.Millisecond; c.MaxAttempts = 2 },
			kind:     contract.KindUnavailable,
			requests: 2, contains: "timed out",
		},
		{
			name:   "malformed JSON",
			handle: func(_ int, w http.ResponseWriter, _ map[string]any) { w.Write([]byte(`{"data": [`)) },
			kind:   contract.KindEngine, requests: 1, contains: "malformed",
		},
		{
			name: "wrong embedding count",
			handle: func(_ int, w http.ResponseWriter, _ map[string]any) {
				w.Write([]byte(`{"data":[{"embedding":[1,2],"index":0}]}`))
			},
			kind: contract.KindEngine, requests: 1, contains: "1 embeddings for 2 texts",
		},
		{
			name: "repeated index",
			handle: func(_ int, w http.ResponseWriter, _ map[string]any) {
				w.Write([]byte(`{"data":[{"embedding":[1,2],"index":0},{"embedding":[1,2],"index":0}]}`))
			},
			kind: contract.KindEngine, requests: 1, contains: "repeated index",
		},
		{
			name:   "vectors of the wrong length",
			handle: embeddingsOK(3),
			mutate: func(c *OpenAIConfig) { c.Dim = 8 },
			kind:   contract.KindConfig, requests: 1, contains: "length 3, expected 8",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, tt.handle)
			e := newTestEmbedder(t, f.srv.URL, tt.mutate)
			_, err := e.Embed(context.Background(), []string{"one", "two"})
			assertKind(t, err, tt.kind)
			if !strings.Contains(err.Error(), tt.contains) {
				t.Errorf("error %q does not say %q", err, tt.contains)
			}
			if got := f.requests.Load(); got != tt.requests {
				t.Errorf("requests = %d, want %d", got, tt.requests)
			}
		})
	}
}

func TestOpenAIEmbedderRetriesTransientThenSucceeds(t *testing.T) {
	ok := embeddingsOK(2)
	f := newFake(t, func(n int, w http.ResponseWriter, body map[string]any) {
		switch n {
		case 1:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(429)
			w.Write([]byte(`{"error":{"message":"rate limited"}}`))
		case 2:
			w.WriteHeader(502)
		default:
			ok(n, w, body)
		}
	})
	e := newTestEmbedder(t, f.srv.URL, nil)
	vecs, err := e.Embed(context.Background(), []string{"hello"})
	if err != nil || len(vecs) != 1 {
		t.Fatalf("Embed = %v, %v; want success after retries", vecs, err)
	}
	if got := f.requests.Load(); got != 3 {
		t.Errorf("requests = %d, want 3 (429, 502, then 200)", got)
	}
}

func TestOpenAIEmbedderUnreachable(t *testing.T) {
	f := newFake(t, embeddingsOK(2))
	url := f.srv.URL
	f.srv.Close()
	e := newTestEmbedder(t, url+"/v1/embeddings?api-key="+testKey, nil)
	_, err := e.Embed(context.Background(), []string{"x"})
	assertKind(t, err, contract.KindUnavailable)
	if !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("error %q does not say unreachable", err)
	}
}

func TestOpenAIEmbedderCancelledDuringBackoff(t *testing.T) {
	f := newFake(t, func(_ int, w http.ResponseWriter, _ map[string]any) { w.WriteHeader(500) })
	e := newTestEmbedder(t, f.srv.URL, func(c *OpenAIConfig) { c.RetryBackoff = time.Hour })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := e.Embed(ctx, []string{"x"})
	assertKind(t, err, contract.KindUnavailable)
	if f.requests.Load() != 1 {
		t.Errorf("requests = %d, want 1", f.requests.Load())
	}
}

func TestOpenAIConfigErrors(t *testing.T) {
	t.Setenv("MNEMO_EMPTY_KEY", "")
	tests := []struct {
		name string
		cfg  OpenAIConfig
		want string
	}{
		{"no endpoint", OpenAIConfig{Model: "m"}, "embedding endpoint is not configured"},
		{"not a URL", OpenAIConfig{Model: "m", Endpoint: "localhost:11434"}, "must be an http or https URL"},
		{"no model", OpenAIConfig{Endpoint: "http://x"}, "embedding model is not configured"},
		{"key variable unset", OpenAIConfig{Model: "m", Endpoint: "http://x", APIKeyEnv: "MNEMO_EMPTY_KEY"}, "environment variable MNEMO_EMPTY_KEY is not set"},
	}
	for _, tt := range tests {
		_, err := NewOpenAIEmbedder(tt.cfg, nil)
		if !errors.Is(err, contract.ErrConfig) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want a configuration error saying %q", tt.name, err, tt.want)
		}
	}
}

func TestEndpointPath(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "/v1/embeddings"},
		{"/", "/v1/embeddings"},
		{"/v1", "/v1/embeddings"},
		{"/v1/", "/v1/embeddings"},
		{"/openai/v1/embeddings", "/openai/v1/embeddings"},
		{"/proxy", "/proxy/v1/embeddings"},
	}
	for _, tt := range tests {
		if got := endpointPath(tt.in, "embeddings"); got != tt.want {
			t.Errorf("endpointPath(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestOpenAIChat(t *testing.T) {
	f := newFake(t, func(_ int, w http.ResponseWriter, body map[string]any) {
		w.Write([]byte(`{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"  Use tabs [1].  "},"finish_reason":"stop"}]}`))
	})
	t.Setenv("MNEMO_TEST_KEY", testKey)
	a, err := NewOpenAIChat(ChatConfig{Endpoint: f.srv.URL + "/v1/", Model: "chat-test", APIKeyEnv: "MNEMO_TEST_KEY"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.Answer(context.Background(), AnswerRequest{
		Question: "tabs or spaces?", Instructions: "one sentence",
		Citations: cites("The user prefers tabs.", "Go code is formatted by gofmt."),
	})
	if err != nil || got != "Use tabs [1]." || a.Model() != "chat-test" {
		t.Fatalf("Answer = %q, %v (model %q)", got, err, a.Model())
	}
	body := <-f.bodies
	if body["_path"] != "/v1/chat/completions" || body["model"] != "chat-test" {
		t.Errorf("path %v model %v", body["_path"], body["model"])
	}
	msgs := body["messages"].([]any)
	user := msgs[1].(map[string]any)["content"].(string)
	for _, want := range []string{"Question: tabs or spaces?", "Instructions for the answer: one sentence", "[1] (document)\nThe user prefers tabs.", "[2] (document)\nGo code is formatted by gofmt."} {
		if !strings.Contains(user, want) {
			t.Errorf("prompt lacks %q:\n%s", want, user)
		}
	}
	if sys := msgs[0].(map[string]any)["content"].(string); !strings.Contains(sys, "[1]") {
		t.Errorf("system prompt does not ask for [n] citations: %s", sys)
	}

	none, err := a.Answer(context.Background(), AnswerRequest{Question: "anything?"})
	if err != nil || none != NothingStored || f.requests.Load() != 1 {
		t.Errorf("no citations: %q, %v, %d requests", none, err, f.requests.Load())
	}
}

func TestOpenAIChatErrors(t *testing.T) {
	tests := []struct {
		name  string
		reply string
		code  int
		kind  contract.ErrorKind
	}{
		{"no choices", `{"choices":[]}`, 200, contract.KindEngine},
		{"null content", `{"choices":[{"message":{"content":null}}]}`, 200, contract.KindEngine},
		{"malformed", `<html>bad gateway</html>`, 200, contract.KindEngine},
		{"forbidden", `{"error":{"message":"key ` + testKey + ` has no access"}}`, 403, contract.KindUnauthorized},
		{"server error", `{"error":{"message":"boom"}}`, 500, contract.KindUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, func(_ int, w http.ResponseWriter, _ map[string]any) {
				w.WriteHeader(tt.code)
				w.Write([]byte(tt.reply))
			})
			t.Setenv("MNEMO_TEST_KEY", testKey)
			a, err := NewOpenAIChat(ChatConfig{Endpoint: f.srv.URL, Model: "m", APIKeyEnv: "MNEMO_TEST_KEY", MaxAttempts: 2, RetryBackoff: time.Millisecond}, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = a.Answer(context.Background(), AnswerRequest{Question: "q", Citations: cites("text")})
			assertKind(t, err, tt.kind)
		})
	}
}

func TestDropUnknownMarkers(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Use tabs [1].", "Use tabs [1]."},
		{"Use tabs [1][3]. Spaces [0] never [2].", "Use tabs [1]. Spaces never [2]."},
		{"See [12] and [99999999999999999999].", "See and."},
		{"An array a[1] stays.", "An array a[1] stays."},
	}
	for _, tt := range tests {
		if got := dropUnknownMarkers(tt.in, 2); got != tt.want {
			t.Errorf("dropUnknownMarkers(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestOpenAIEmbedderConcurrentBatches(t *testing.T) {
	var inFlight, peak atomic.Int32
	ok := embeddingsOK(2)
	f := newFake(t, func(n int, w http.ResponseWriter, body map[string]any) {
		cur := inFlight.Add(1)
		for {
			p := peak.Load()
			if cur <= p || peak.CompareAndSwap(p, cur) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		inFlight.Add(-1)
		ok(n, w, body)
	})
	e := newTestEmbedder(t, f.srv.URL, func(c *OpenAIConfig) { c.BatchSize = 3; c.Concurrency = 3 })
	texts := make([]string, 20)
	for i := range texts {
		texts[i] = strings.Repeat("x", i+1)
	}
	vecs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs {
		if int(v[0]) != i+1 {
			t.Fatalf("vector %d belongs to another text: %v", i, v)
		}
	}
	if f.requests.Load() != 7 || peak.Load() < 2 || peak.Load() > 3 {
		t.Errorf("requests %d, peak in flight %d; want 7 batches, at most 3 at once", f.requests.Load(), peak.Load())
	}
}

func TestOpenAIEmbedderConcurrentFailureStopsTheRest(t *testing.T) {
	f := newFake(t, func(n int, w http.ResponseWriter, _ map[string]any) {
		w.WriteHeader(401)
	})
	e := newTestEmbedder(t, f.srv.URL, func(c *OpenAIConfig) { c.BatchSize = 1; c.Concurrency = 2 })
	_, err := e.Embed(context.Background(), make([]string, 50))
	assertKind(t, err, contract.KindUnauthorized)
	if n := f.requests.Load(); n > 4 {
		t.Errorf("%d requests after the first refusal; want the rest stopped", n)
	}
}
