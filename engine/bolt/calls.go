package bolt

import (
	"context"
	"sync"

	"mnemo/contract"
)

// callGate counts the calls inside the engine so that Close can wait for
// them: without it a read racing a Close found bbolt or the index closed
// under it and answered an engine error. Once shut, no call enters, so every
// call after Close answers unavailable; Close closes the files only after the
// last call inside has left. Calls may nest (Store enters, then StoreWith).
type callGate struct {
	mu     sync.Mutex
	idle   *sync.Cond // signalled when inside drops to zero
	inside int
	shut   bool
}

func newCallGate() *callGate {
	g := &callGate{}
	g.idle = sync.NewCond(&g.mu)
	return g
}

// enter admits a call unless the gate is shut.
func (g *callGate) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut {
		return false
	}
	g.inside++
	return true
}

// leave ends a call enter admitted.
func (g *callGate) leave() {
	g.mu.Lock()
	g.inside--
	if g.inside == 0 {
		g.idle.Broadcast()
	}
	g.mu.Unlock()
}

// shutAndWait refuses new calls and waits for those inside to leave.
func (g *callGate) shutAndWait() {
	g.mu.Lock()
	g.shut = true
	for g.inside > 0 {
		g.idle.Wait()
	}
	g.mu.Unlock()
}

// enter admits a call into the engine: unavailable once Close has begun, and
// the context's error when ctx has already ended. Every operation calls it
// (after validating its request, so an invalid request says so whatever the
// store's state) and defers leave.
func (e *Engine) enter(ctx context.Context) error {
	if !e.calls.enter() {
		return errClosed()
	}
	if err := contract.ContextErr(ctx); err != nil {
		e.calls.leave()
		return err
	}
	return nil
}

// leave ends a call enter admitted.
func (e *Engine) leave() { e.calls.leave() }

func errClosed() error { return contract.Unavailable("the store is closed") }
