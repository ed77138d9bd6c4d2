package ssh

import (
	"context"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/memory"
)

// slowForget blocks every forget until released, as a write in flight.
type slowForget struct {
	*memory.Engine
	started, release chan struct{}
}

func (s slowForget) Forget(ctx context.Context, t contract.ForgetTarget) (contract.ForgetReport, error) {
	close(s.started)
	<-s.release
	return s.Engine.Forget(ctx, t)
}

func TestShutdownWaitsForWritesInFlightAndRefusesNewCalls(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	rec, err := contract.Store(ctx, mem, contract.Document("bye", contract.MetaFromSource(contract.SourceAgent, nil)))
	if err != nil {
		t.Fatal(err)
	}
	slow := slowForget{Engine: mem, started: make(chan struct{}), release: make(chan struct{})}
	sessCtx, endSession := context.WithCancel(ctx)
	g := &gate{}
	e := &sessionEngine{e: slow, g: g, sess: sessCtx}

	forgot := make(chan error, 1)
	go func() {
		_, err := e.Forget(ctx, contract.ForgetIDs(rec.ID))
		forgot <- err
	}()
	<-slow.started
	// The user's connection drops while the write runs: it still completes.
	endSession()
	closed := make(chan error, 1)
	go func() { closed <- g.close(ctx) }()
	select {
	case <-closed:
		t.Fatal("shutdown did not wait for the write in flight")
	case <-time.After(100 * time.Millisecond):
	}
	close(slow.release)
	if err := <-forgot; err != nil {
		t.Fatalf("the write in flight failed: %v", err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if mem.Len() != 0 {
		t.Fatal("the forget did not land")
	}
	if _, err := e.List(ctx, contract.ListRequest{Limit: 1}); contract.KindOf(err) != contract.KindUnavailable {
		t.Fatalf("a call after shutdown: %v", err)
	}
}

func TestReadsEndWithTheSession(t *testing.T) {
	sessCtx, endSession := context.WithCancel(context.Background())
	e := &sessionEngine{e: memory.New(), g: &gate{}, sess: sessCtx}
	ctx, done, err := e.read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	endSession()
	select {
	case <-ctx.Done():
	case <-time.After(time.Second):
		t.Fatal("a read outlived its session")
	}
}
