package mcp

import (
	"context"
	"fmt"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"mnemo/contract"
	"mnemo/engine/memory"
)

// benchTools is a placed scope over 1,000 learnings at the place.
func benchTools(b *testing.B) *Tools {
	b.Helper()
	e := memory.New()
	ctx := context.Background()
	for i := range 1000 {
		meta := contract.MemoryMeta{Namespace: placeNS, Source: contract.SourceRef{Kind: contract.SourceAgent}, Tags: []string{fmt.Sprintf("t%d", i%7)}}
		if _, err := contract.Store(ctx, e, contract.Learning(fmt.Sprintf("learning number %d about tabs", i), contract.LearningFact, 0.8, meta)); err != nil {
			b.Fatal(err)
		}
	}
	return New(e, ScopeAt(placeNS))
}

// BenchmarkCallList is the tools' own cost: argument reading, the engine's
// list of 10 and rendering.
func BenchmarkCallList(b *testing.B) {
	tools := benchTools(b)
	args := []byte(`{"filter":{"tags_any":["t3"],"kinds":["learning"]},"limit":10}`)
	ctx := context.Background()
	for b.Loop() {
		if _, err := tools.Call(ctx, ToolList, args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMCPRoundTripList adds the protocol: one tools/call over the SDK's
// in-memory transport, client and server in this process.
func BenchmarkMCPRoundTripList(b *testing.B) {
	tools := benchTools(b)
	ctx := context.Background()
	serverT, clientT := sdk.NewInMemoryTransports()
	ss, err := NewServer(tools, ServerOptions{}).Connect(ctx, serverT, nil)
	if err != nil {
		b.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cs.Close(); _ = ss.Wait() }()
	params := &sdk.CallToolParams{Name: ToolList, Arguments: map[string]any{"filter": map[string]any{"tags_any": []string{"t3"}}, "limit": 10}}
	for b.Loop() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}
