package ssh

import (
	"context"
	"sync"

	"mnemo/contract"
)

// gate counts the engine calls in flight across every session, so a graceful
// shutdown can refuse new calls and wait for the running ones (a forget the
// user confirmed just before the server stopped) to finish.
type gate struct {
	mu      sync.Mutex
	closed  bool
	running sync.WaitGroup
}

// enter admits one call, or refuses it once the server is stopping.
func (g *gate) enter() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return contract.Unavailable("the server is shutting down")
	}
	g.running.Add(1)
	return nil
}

func (g *gate) leave() { g.running.Done() }

// close refuses new calls and waits for the running ones, or for ctx.
func (g *gate) close(ctx context.Context) error {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	done := make(chan struct{})
	go func() {
		g.running.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sessionEngine is one session's engine: every call passes the gate, and reads
// end with the session (a closed connection cancels its searches), while
// writes run to completion once started.
//
// A reload of the keys file swaps the engine for one confined to the
// principal's new reach and role (use), or revokes the session (revoke), after
// which every call is refused.
type sessionEngine struct {
	mu      sync.RWMutex
	e       contract.Engine
	revoked bool
	g       *gate
	sess    context.Context
}

var _ contract.Engine = (*sessionEngine)(nil)

func (s *sessionEngine) engine() contract.Engine {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.e
}

// use swaps in the engine of the session's principal as the keys file now has it.
func (s *sessionEngine) use(e contract.Engine) {
	s.mu.Lock()
	s.e = e
	s.mu.Unlock()
}

// revoke refuses every later call: the keys file no longer names the key.
func (s *sessionEngine) revoke() {
	s.mu.Lock()
	s.revoked = true
	s.mu.Unlock()
}

func (s *sessionEngine) enter() error {
	s.mu.RLock()
	revoked := s.revoked
	s.mu.RUnlock()
	if revoked {
		return contract.Unauthorized("this session's key was removed from the keys file")
	}
	return s.g.enter()
}

// read binds ctx to the session's life as well.
func (s *sessionEngine) read(ctx context.Context) (context.Context, func(), error) {
	if err := s.enter(); err != nil {
		return ctx, func() {}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.sess, cancel)
	return ctx, func() { stop(); cancel(); s.g.leave() }, nil
}

// write lets a started write finish even if the session goes away.
func (s *sessionEngine) write(ctx context.Context) (context.Context, func(), error) {
	if err := s.enter(); err != nil {
		return ctx, func() {}, err
	}
	return context.WithoutCancel(ctx), s.g.leave, nil
}

func (s *sessionEngine) Descriptor() contract.Descriptor { return s.engine().Descriptor() }

func (s *sessionEngine) Health(ctx context.Context) contract.Health {
	ctx, done, err := s.read(ctx)
	if err != nil {
		return contract.Health{State: contract.HealthDown, Reason: contract.AsError(err).Message}
	}
	defer done()
	return s.engine().Health(ctx)
}

func (s *sessionEngine) StoreWith(ctx context.Context, item contract.StoreItem, opts contract.WriteOptions) (contract.StoreReceipt, error) {
	ctx, done, err := s.write(ctx)
	if err != nil {
		return contract.StoreReceipt{}, err
	}
	defer done()
	return s.engine().StoreWith(ctx, item, opts)
}

func (s *sessionEngine) StoreManyWith(ctx context.Context, items []contract.StoreItem, opts contract.WriteOptions) ([]contract.StoreReceipt, error) {
	ctx, done, err := s.write(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	return s.engine().StoreManyWith(ctx, items, opts)
}

func (s *sessionEngine) Recall(ctx context.Context, req contract.RecallRequest) (contract.RecallAnswer, error) {
	ctx, done, err := s.read(ctx)
	if err != nil {
		return contract.RecallAnswer{}, err
	}
	defer done()
	return s.engine().Recall(ctx, req)
}

func (s *sessionEngine) Fetch(ctx context.Context, req contract.FetchRequest) (contract.FetchPage, error) {
	ctx, done, err := s.read(ctx)
	if err != nil {
		return contract.FetchPage{}, err
	}
	defer done()
	return s.engine().Fetch(ctx, req)
}

func (s *sessionEngine) List(ctx context.Context, req contract.ListRequest) (contract.ListPage, error) {
	ctx, done, err := s.read(ctx)
	if err != nil {
		return contract.ListPage{}, err
	}
	defer done()
	return s.engine().List(ctx, req)
}

func (s *sessionEngine) Export(ctx context.Context, req contract.ListRequest) (contract.ExportPage, error) {
	ctx, done, err := s.read(ctx)
	if err != nil {
		return contract.ExportPage{}, err
	}
	defer done()
	return s.engine().Export(ctx, req)
}

func (s *sessionEngine) Explore(ctx context.Context, req contract.ExploreRequest) (contract.ExplorePage, error) {
	ctx, done, err := s.read(ctx)
	if err != nil {
		return contract.ExplorePage{}, err
	}
	defer done()
	return s.engine().Explore(ctx, req)
}

func (s *sessionEngine) Get(ctx context.Context, req contract.GetRequest) ([]contract.Hit, error) {
	ctx, done, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	return s.engine().Get(ctx, req)
}

func (s *sessionEngine) GetRecords(ctx context.Context, req contract.GetRequest) ([]contract.Record, error) {
	ctx, done, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	return s.engine().GetRecords(ctx, req)
}

func (s *sessionEngine) Forget(ctx context.Context, target contract.ForgetTarget) (contract.ForgetReport, error) {
	ctx, done, err := s.write(ctx)
	if err != nil {
		return contract.ForgetReport{}, err
	}
	defer done()
	return s.engine().Forget(ctx, target)
}

func (s *sessionEngine) ForgetWithin(ctx context.Context, ids []string, reach contract.Reach) (contract.ForgetReport, error) {
	ctx, done, err := s.write(ctx)
	if err != nil {
		return contract.ForgetReport{}, err
	}
	defer done()
	return contract.ForgetWithin(ctx, s.engine(), ids, reach)
}

func (s *sessionEngine) Erase(ctx context.Context, req contract.EraseRequest) (contract.EraseReport, error) {
	ctx, done, err := s.write(ctx)
	if err != nil {
		return contract.EraseReport{}, err
	}
	defer done()
	return contract.Erase(ctx, s.engine(), req)
}

func (s *sessionEngine) Consolidate(ctx context.Context, req contract.ConsolidateRequest) (contract.ConsolidateReceipt, error) {
	ctx, done, err := s.write(ctx)
	if err != nil {
		return contract.ConsolidateReceipt{}, err
	}
	defer done()
	return contract.Consolidate(ctx, s.engine(), req)
}

func (s *sessionEngine) Beliefs(ctx context.Context, req contract.BeliefsRequest) ([]contract.Hit, error) {
	ctx, done, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	return contract.Beliefs(ctx, s.engine(), req)
}

func (s *sessionEngine) Browse(ctx context.Context, q contract.BrowseQuery) (contract.BrowsePage, error) {
	ctx, done, err := s.read(ctx)
	if err != nil {
		return contract.BrowsePage{}, err
	}
	defer done()
	return s.engine().Browse(ctx, q)
}

func (s *sessionEngine) Review(ctx context.Context, req contract.ReviewRequest) (contract.ReviewResult, error) {
	ctx, done, err := s.write(ctx)
	if err != nil {
		return contract.ReviewResult{}, err
	}
	defer done()
	return s.engine().Review(ctx, req)
}

func (s *sessionEngine) Supersede(ctx context.Context, req contract.SupersedeRequest) (contract.Record, error) {
	ctx, done, err := s.write(ctx)
	if err != nil {
		return contract.Record{}, err
	}
	defer done()
	return s.engine().Supersede(ctx, req)
}
