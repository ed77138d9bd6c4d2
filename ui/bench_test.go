package ui

import (
	"context"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"mnemo/contract"
	"mnemo/engine/memory"
	"mnemo/ui/uitest"
)

// bigStore holds n learnings spread over namespaces, tags and confidences.
func bigStore(b *testing.B, n int) *memory.Engine {
	b.Helper()
	e := memory.New(memory.WithClock(uitest.Now))
	ctx := context.Background()
	batch := make([]contract.StoreItem, 0, contract.MaxStoreMany)
	for i := 0; i < n; i++ {
		meta := contract.MemoryMeta{
			Namespace: contract.MustNamespace(fmt.Sprintf("team:t%d/agent:a%d", i%7, i%13)),
			Tags:      []string{fmt.Sprintf("tag%d", i%17)},
		}
		batch = append(batch, contract.Learning(fmt.Sprintf("record %d remembers fact %d", i, i*31%1000),
			contract.LearningFact, float32(i%100)/100, meta))
		if len(batch) == cap(batch) || i == n-1 {
			if _, err := contract.StoreMany(ctx, e, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	return e
}

func benchModel(b *testing.B, e contract.Engine) *model {
	b.Helper()
	m := newModel(Options{Engine: e, StoreLabel: "bench", Keys: DefaultKeyMap(), Now: uitest.Now, Timer: uitest.Timer})
	update := func(msg tea.Msg) tea.Cmd { _, c := m.Update(msg); return c }
	uitest.Drain(update, update(tea.WindowSizeMsg{Width: 80, Height: 24}), 10*time.Second)
	uitest.Drain(update, m.Init(), 30*time.Second)
	uitest.Drain(update, update(KeyPress("tab")), time.Second)
	if got := m.exploreView().Total(); got < 100_000 {
		b.Fatalf("scope holds %d records", got)
	}
	return m
}

// BenchmarkViewAfterCursorMove is one cursor move in the record list and the
// frame after it, at 80x24 with 100k records in scope.
func BenchmarkViewAfterCursorMove(b *testing.B) {
	m := benchModel(b, bigStore(b, 100_000))
	down, up := KeyPress("j"), KeyPress("k")
	b.ReportAllocs()
	cpu0 := cpuTime()
	n := 0
	for i := 0; b.Loop(); i++ {
		k := down
		if i%20 >= 10 {
			k = up
		}
		m.Update(k)
		_ = m.View()
		n++
	}
	// wall time is inflated when the machine is shared; process CPU time per
	// move is the steadier figure
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(n), "cpu-ns/op")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type countingWriter struct{ n atomic.Int64 }

func (w *countingWriter) Write(p []byte) (int, error) { w.n.Add(int64(len(p))); return len(p), nil }

// BenchmarkBytesPerCursorMove runs the real program and renderer (16 colours)
// and reports the bytes written to the terminal per cursor move.
func BenchmarkBytesPerCursorMove(b *testing.B) {
	e := bigStore(b, 100_000)
	m := newModel(Options{Engine: e, StoreLabel: "bench", Keys: DefaultKeyMap(), Now: uitest.Now})
	out := &countingWriter{}
	p := tea.NewProgram(m, tea.WithInput(nil), tea.WithOutput(out), tea.WithWindowSize(80, 24),
		tea.WithColorProfile(colorprofile.ANSI), tea.WithoutSignalHandler())
	done := make(chan error, 1)
	go func() { _, err := p.Run(); done <- err }()
	time.Sleep(3 * time.Second) // first frame and the first page
	p.Send(KeyPress("tab"))
	time.Sleep(200 * time.Millisecond)
	start := out.n.Load()
	moves := 0
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		k := KeyPress("j")
		if i%20 >= 10 {
			k = KeyPress("k")
		}
		p.Send(k)
		moves++
		time.Sleep(20 * time.Millisecond) // one frame per move at 60 fps
	}
	b.StopTimer()
	b.ReportMetric(float64(out.n.Load()-start)/float64(moves), "bytes/move")
	p.Quit()
	<-done
}

// BenchmarkFirstFrame is start to first frame: the model is built and drawn
// before any engine answer arrives (100k records in the store).
func BenchmarkFirstFrame(b *testing.B) {
	e := bigStore(b, 100_000)
	b.ReportAllocs()
	for b.Loop() {
		m := newModel(Options{Engine: e, StoreLabel: "bench", Keys: DefaultKeyMap(), Now: uitest.Now, Timer: uitest.Timer})
		m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
		_ = m.Init()
		_ = m.View()
	}
}
