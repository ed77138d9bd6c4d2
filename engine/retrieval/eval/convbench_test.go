package eval

import (
	"context"
	"os"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/retrieval"
)

// The conversation fetch benchmarks time hybrid fetch of the generated
// conversations' questions, each within its conversation, on a store of
// MNEMO_CONV_TURNS turns (default 10,000; docs/retrieval.md reports 100,000).
// Each reports the median and p95 latency besides ns/op.
//
//	MNEMO_CONV_TURNS=100000 nice -n 10 go test ./engine/retrieval/eval -run XXX -bench ConvFetch -benchtime 200x

type convBenchStore struct {
	dir   string
	convs []Conv
	err   error
}

var (
	convBenchOnce sync.Once
	convBench     convBenchStore
)

// TestMain removes the conversation benchmarks' store after the run.
func TestMain(m *testing.M) {
	code := m.Run()
	if convBench.dir != "" {
		_ = os.RemoveAll(convBench.dir)
	}
	os.Exit(code)
}

func convBenchTurns() int {
	if n, err := strconv.Atoi(os.Getenv("MNEMO_CONV_TURNS")); err == nil && n > 0 {
		return n
	}
	return 10000
}

// convBenchSetup builds the store once per process: conversations of 24
// sessions (about 470 turns each) until the store holds the turns asked for.
func convBenchSetup(b *testing.B) convBenchStore {
	convBenchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mnemo-convbench-")
		if err != nil {
			convBench.err = err
			return
		}
		convBench.dir = dir
		convs := ConversationsOfTurns(4242, convBenchTurns())
		total := 0
		for _, c := range convs {
			total += len(c.Turns)
		}
		convBench.convs = convs
		e, err := bolt.Open(dir, bolt.Options{})
		if err != nil {
			convBench.err = err
			return
		}
		defer e.Close()
		start := time.Now()
		if _, err := StoreConversations(context.Background(), e, convs); err != nil {
			convBench.err = err
			return
		}
		b.Logf("stored %d turns of %d conversations, learned and re-embedded in %s", total, len(convs), time.Since(start).Round(time.Second))
	})
	if convBench.err != nil {
		b.Fatal(convBench.err)
	}
	return convBench
}

func benchConvFetch(b *testing.B, mode contract.FetchMode, cfg *retrieval.ConvConfig, typ string) {
	s := convBenchSetup(b)
	ctx := context.Background()
	e, err := bolt.Open(s.dir, bolt.Options{Conversation: cfg})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	if err := e.WaitEmbedder(ctx); err != nil {
		b.Fatal(err)
	}
	type ask struct {
		q     string
		reach contract.Reach
	}
	var asks []ask
	for _, c := range s.convs {
		ns, _ := contract.ParseNamespace(c.Namespace)
		for _, q := range c.Questions {
			if typ == "" || q.Type == typ {
				asks = append(asks, ask{q.Text, contract.ReachSubtree(ns)})
			}
		}
	}
	// A first pass warms the vectors and the index.
	for _, a := range asks[:min(20, len(asks))] {
		if _, err := e.Fetch(ctx, contract.FetchRequest{Query: a.q, Mode: mode, Filter: contract.MetaFilter{Reach: &a.reach}, Limit: K}); err != nil {
			b.Fatal(err)
		}
	}
	var lat []time.Duration
	i := 0
	b.ResetTimer()
	for b.Loop() {
		a := asks[i%len(asks)]
		i++
		t0 := time.Now()
		if _, err := e.Fetch(ctx, contract.FetchRequest{Query: a.q, Mode: mode, Filter: contract.MetaFilter{Reach: &a.reach}, Limit: K}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*95/100)].Microseconds())/1000, "p95-ms")
}

func BenchmarkConvFetchKeyword(b *testing.B) { benchConvFetch(b, contract.ModeKeyword, nil, "") }
func BenchmarkConvFetchHybridNoLevers(b *testing.B) {
	benchConvFetch(b, contract.ModeHybrid, &retrieval.ConvConfig{}, "")
}
func BenchmarkConvFetchHybrid(b *testing.B) { benchConvFetch(b, contract.ModeHybrid, nil, "") }
func BenchmarkConvFetchHybridTemporal(b *testing.B) {
	benchConvFetch(b, contract.ModeHybrid, nil, ConvTemporal)
}
func BenchmarkConvFetchHybridMultiHop(b *testing.B) {
	benchConvFetch(b, contract.ModeHybrid, nil, ConvMultiHop)
}
func BenchmarkConvFetchHybridRelative(b *testing.B) {
	benchConvFetch(b, contract.ModeHybrid, nil, ConvRelative)
}
func BenchmarkConvFetchHybridNoNeighbour(b *testing.B) {
	benchConvFetch(b, contract.ModeHybrid, defaultsBut(func(c *retrieval.ConvConfig) { c.Neighbour = 0 }), "")
}
func BenchmarkConvFetchHybridExchange(b *testing.B) {
	benchConvFetch(b, contract.ModeHybrid, nil, ConvExchange)
}
func BenchmarkConvFetchHybridNoKind(b *testing.B) {
	benchConvFetch(b, contract.ModeHybrid, defaultsBut(func(c *retrieval.ConvConfig) { c.Kind = 0 }), "")
}
func BenchmarkConvFetchHybridSingleHop(b *testing.B) {
	benchConvFetch(b, contract.ModeHybrid, nil, ConvSingleHop)
}
func BenchmarkConvFetchHybridRelativeNoKind(b *testing.B) {
	benchConvFetch(b, contract.ModeHybrid, defaultsBut(func(c *retrieval.ConvConfig) { c.Kind = 0 }), ConvRelative)
}

// defaultsBut is the default conversation levers with one changed: a
// benchmark's lever off, to tell its cost apart.
func defaultsBut(change func(*retrieval.ConvConfig)) *retrieval.ConvConfig {
	cfg := retrieval.DefaultConvConfig()
	change(&cfg)
	return &cfg
}
