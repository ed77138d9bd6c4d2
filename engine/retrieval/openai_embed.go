package retrieval

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"mnemo/contract"
)

// OpenAIConfig configures an OpenAI-compatible /v1/embeddings client (OpenAI,
// Ollama, vLLM, llama.cpp server, a hosted API).
type OpenAIConfig struct {
	// Endpoint is the server root, the API root (".../v1") or the full
	// ".../v1/embeddings" URL.
	Endpoint string
	// Model is the embedding model to ask for; it is also the model id the
	// vectors are tagged with.
	Model string
	// APIKeyEnv names the environment variable holding the key; empty sends no
	// key (local servers).
	APIKeyEnv string
	// Timeout bounds each attempt (default 30 s).
	Timeout time.Duration
	// BatchSize is the most texts per request (default 64).
	BatchSize int
	// Dim is the expected vector length; 0 learns it from the first reply.
	Dim int
	// Concurrency is how many batch requests one Embed call keeps in flight
	// (default 1); more speeds up re-embedding a store against a server that
	// allows it.
	Concurrency int
	// MaxAttempts bounds tries per request, the first included (default 4).
	MaxAttempts int
	// RetryBackoff is the first wait before a retry; it doubles each time
	// (default 250 ms), and a server's Retry-After is honoured up to 20 s.
	RetryBackoff time.Duration
}

type openAIEmbedder struct {
	cfg    OpenAIConfig
	client *openAIClient
	dim    atomic.Int64
}

// NewOpenAIEmbedder returns an Embedder calling an OpenAI-compatible
// /v1/embeddings endpoint through hc (nil: a default client). The key is read
// from the environment now and is never part of an error. It does no I/O;
// with Dim 0, Dim reports 0 until the first Embed (see ProbeDim).
func NewOpenAIEmbedder(cfg OpenAIConfig, hc *http.Client) (Embedder, error) {
	if cfg.Model == "" {
		return nil, contract.ConfigErr("embedding model is not configured")
	}
	if cfg.Dim < 0 {
		return nil, contract.ConfigErr("embedding dim must not be negative")
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DefaultEmbedBatchSize
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 1
	}
	c, err := newOpenAIClient("embedding", cfg.Endpoint, "embeddings", cfg.APIKeyEnv, cfg.Timeout, cfg.MaxAttempts, cfg.RetryBackoff, hc)
	if err != nil {
		return nil, err
	}
	e := &openAIEmbedder{cfg: cfg, client: c}
	e.dim.Store(int64(cfg.Dim))
	return e, nil
}

func (e *openAIEmbedder) Model() string { return e.cfg.Model }
func (e *openAIEmbedder) Dim() int      { return int(e.dim.Load()) }

type embeddingRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type embeddingReply struct {
	Data []struct {
		Embedding []float32 `json:"embedding"`
		Index     *int      `json:"index"`
	} `json:"data"`
}

func (e *openAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	slots := make(chan struct{}, e.cfg.Concurrency)
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	for lo := 0; lo < len(texts); lo += e.cfg.BatchSize {
		hi := min(lo+e.cfg.BatchSize, len(texts))
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			vecs, err := e.embedBatch(ctx, texts[lo:hi])
			if err != nil {
				// the first failure is the one to report; it also stops the rest
				once.Do(func() { firstErr = err; cancel() })
				return
			}
			copy(out[lo:hi], vecs)
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, contract.Unavailable("embedding endpoint %s: request cancelled", e.client.shownURL)
	}
	return out, nil
}

func (e *openAIEmbedder) embedBatch(ctx context.Context, batch []string) ([][]float32, error) {
	var reply embeddingReply
	if err := e.client.post(ctx, embeddingRequest{Model: e.cfg.Model, Input: batch}, &reply); err != nil {
		return nil, err
	}
	where := e.client.shownURL
	if len(reply.Data) != len(batch) {
		return nil, contract.EngineErr("embedding endpoint %s returned %d embeddings for %d texts", where, len(reply.Data), len(batch))
	}
	vecs := make([][]float32, len(batch))
	for i, d := range reply.Data {
		at := i
		if d.Index != nil {
			at = *d.Index
		}
		if at < 0 || at >= len(batch) || vecs[at] != nil {
			return nil, contract.EngineErr("embedding endpoint %s returned a bad or repeated index %d", where, at)
		}
		if len(d.Embedding) == 0 {
			return nil, contract.EngineErr("embedding endpoint %s returned an empty embedding", where)
		}
		vecs[at] = d.Embedding
	}
	for _, v := range vecs {
		want := e.dim.Load()
		if want == 0 {
			e.dim.CompareAndSwap(0, int64(len(v)))
			want = e.dim.Load()
		}
		if int64(len(v)) != want {
			return nil, contract.ConfigErr("embedding endpoint %s returned vectors of length %d, expected %d (model %s)", where, len(v), want, e.cfg.Model)
		}
	}
	return vecs, nil
}

// ProbeDim returns the embedder's vector length, embedding one short text when
// it is not known yet (an OpenAI embedder configured without Dim).
func ProbeDim(ctx context.Context, e Embedder) (int, error) {
	if d := e.Dim(); d > 0 {
		return d, nil
	}
	vs, err := e.Embed(ctx, []string{"dimension probe"})
	if err != nil {
		return 0, err
	}
	if len(vs) != 1 || len(vs[0]) == 0 {
		return 0, contract.EngineErr("embedder %s returned no vector for a probe", e.Model())
	}
	return len(vs[0]), nil
}
