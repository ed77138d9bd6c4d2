package activity

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"mnemo/contract"
	"mnemo/ui/common"
	"mnemo/ui/uitest"
)

func newModel(t *testing.T, w, h int) *Model {
	t.Helper()
	views := []common.ViewInfo{{Name: common.ViewActivity, Title: "Activity", Keys: []string{"5"},
		Actions: []string{"up", "down", "page-up", "page-down", "half-page-up", "half-page-down", "top", "bottom", "open", "copy-id", "pause-feed"}}}
	b, err := common.DefaultBindings(views)
	if err != nil {
		t.Fatal(err)
	}
	km, err := common.NewKeyMap(views, b)
	if err != nil {
		t.Fatal(err)
	}
	c := &common.Common{Styles: common.NewStyles(true, false), Keys: km, Now: uitest.Now, Total: -1}
	m := New(c)
	m.SetSize(w, h)
	return m
}

func burst(from, n int) []contract.Change {
	out := make([]contract.Change, n)
	for i := range out {
		seq := uint64(from + i)
		r := &contract.Record{ID: fmt.Sprintf("%040d", seq), Kind: contract.KindLearning, Text: fmt.Sprintf("note %d", seq),
			Status: contract.StatusActive}
		out[i] = contract.Change{Seq: seq, At: uitest.Now().Add(time.Duration(seq) * time.Second), Op: contract.OpStore,
			ID: r.ID, Status: contract.StatusActive, Record: r}
	}
	return out
}

// A burst of changes draws only the rows on screen; the others are drawn
// when scrolled to, and show what they should.
func TestActivityDrawsOnlyWhatIsSeen(t *testing.T) {
	m := newModel(t, 80, 24)
	m.Update(common.ChangesMsg{Changes: burst(1, 500)})
	if drawn, visible := len(m.rendered), m.list.Height; drawn > visible {
		t.Fatalf("%d rows drawn for a window of %d", drawn, visible)
	}
	if v := m.View(); !strings.Contains(v, "note 500") || strings.Contains(v, "note 400") {
		t.Fatalf("the head of the feed is not what shows:\n%s", v)
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyEnd})
	if v := m.View(); !strings.Contains(v, "note 1 ") {
		t.Fatalf("the oldest change is not drawn at the bottom:\n%s", v)
	}
	if drawn := len(m.rendered); drawn > 2*m.list.Height {
		t.Fatalf("%d rows drawn after one jump to the end, want the two windows seen", drawn)
	}
}

// A flush draws only its new rows that are on screen, and allocates for the
// changes it brings, not for those the view holds: the bytes a flush of 10
// allocates onto a full feed (Keep held, the oldest dropped each time) are
// about those onto a feed of 100.
func TestActivityFlushCostsWhatItBrings(t *testing.T) {
	const visible = 24 - 3
	flush := func(held, n int) (bytes uint64, draws int) {
		m := newModel(t, 80, 24)
		m.Update(common.ChangesMsg{Changes: burst(1, held)})
		const flushes = 50 // a feed of 100 stays under Keep
		batches := make([][]contract.Change, flushes)
		for i := range batches {
			batches[i] = burst(held+1+i*n, n)
		}
		drawn := m.draws
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for _, b := range batches {
			m.Update(common.ChangesMsg{Changes: b})
		}
		runtime.ReadMemStats(&after)
		if v := m.View(); !strings.Contains(v, fmt.Sprintf("note %d ", held+flushes*n)) {
			t.Fatalf("the newest change is not at the top:\n%s", v)
		}
		return (after.TotalAlloc - before.TotalAlloc) / flushes, (m.draws - drawn) / flushes
	}
	small, draws := flush(100, 10)
	if draws != 10 {
		t.Errorf("a flush of 10 drew %d rows, want the 10 new ones", draws)
	}
	full, draws := flush(Keep, 10)
	if draws != 10 {
		t.Errorf("a flush of 10 onto a full feed drew %d rows, want the 10 new ones", draws)
	}
	t.Logf("bytes a flush of 10 allocates: %d holding 100, %d holding %d", small, full, Keep)
	if full > 2*small {
		t.Errorf("a flush of 10 onto a full feed allocates %d bytes, onto a feed of 100 %d: it grows with the rows held", full, small)
	}
	if _, draws := flush(Keep, 200); draws != visible {
		t.Errorf("a flush of 200 onto a full feed drew %d rows, want the %d on screen", draws, visible)
	}
}

// BenchmarkActivityFlush times what a live TUI's Activity view does for each
// change of a flush onto a full feed (ns/change): flushes of 10 (a quiet
// store) and of 200 (writers at thousands a second, more than a screen).
func BenchmarkActivityFlush(b *testing.B) {
	for _, n := range []int{10, 200} {
		b.Run(fmt.Sprintf("flush=%d", n), func(b *testing.B) {
			m := newModel(&testing.T{}, 120, 40)
			m.Update(common.ChangesMsg{Changes: burst(1, Keep)})
			next := Keep + 1
			changes := make([][]contract.Change, 0, 64)
			for b.Loop() {
				b.StopTimer()
				if len(changes) == 0 {
					for range 64 {
						changes = append(changes, burst(next, n))
						next += n
					}
				}
				c := changes[0]
				changes = changes[1:]
				b.StartTimer()
				m.Update(common.ChangesMsg{Changes: c})
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/change")
		})
	}
}
