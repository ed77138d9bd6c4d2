package bolt

// WithLoadGate holds a large store's background table load until gate is
// closed, so tests can observe a store before its table has loaded.
func WithLoadGate(o Options, gate <-chan struct{}) Options {
	o.loadGate = gate
	return o
}
