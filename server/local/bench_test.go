package local

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"mnemo/contract"
)

// BenchmarkStore times a store in the process holding the store and in one
// reaching it through the socket, two writers at once (b.SetParallelism
// with GOMAXPROCS 2 on these machines): the socket's cost is the difference.
func BenchmarkStore(b *testing.B) {
	for _, through := range []bool{false, true} {
		name := "holding"
		if through {
			name = "through-socket"
		}
		b.Run(name, func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "store")
			holder, err := Open(context.Background(), dir, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer holder.Close()
			s := holder
			if through {
				if s, err = Open(context.Background(), dir, Options{}); err != nil {
					b.Fatal(err)
				}
				defer s.Close()
			}
			var n atomic.Int64
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := contract.Store(context.Background(), s, learning(fmt.Sprintf("%s note %d", name, n.Add(1)))); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkGet isolates the socket's cost per call from the store's fsyncs:
// a get of one record in the holding process and through the socket.
func BenchmarkGet(b *testing.B) {
	for _, through := range []bool{false, true} {
		name := "holding"
		if through {
			name = "through-socket"
		}
		b.Run(name, func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "store")
			holder, err := Open(context.Background(), dir, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer holder.Close()
			r, err := contract.Store(context.Background(), holder, learning("the record every get reads"))
			if err != nil {
				b.Fatal(err)
			}
			s := holder
			if through {
				if s, err = Open(context.Background(), dir, Options{}); err != nil {
					b.Fatal(err)
				}
				defer s.Close()
			}
			req := contract.GetRequest{IDs: []string{r.ID}}
			b.ResetTimer()
			for range b.N {
				if hits, err := s.Get(context.Background(), req); err != nil || len(hits) != 1 {
					b.Fatal(hits, err)
				}
			}
		})
	}
}
