package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// progressBar draws import progress on one terminal line of stderr: a bar when
// the input's size is known, the count, the rate and the time left.
type progressBar struct {
	w     io.Writer
	total int64 // bytes; 0 when unknown (stdin)
	start time.Time
	last  time.Time
	now   func() time.Time
	drawn bool
	// verb starts the line ("importing" when empty).
	verb string
}

// progressEvery is how often the bar redraws, so drawing never slows an import.
const progressEvery = 100 * time.Millisecond

func newProgressBar(w io.Writer, totalBytes int64, now func() time.Time) *progressBar {
	t := now()
	return &progressBar{w: w, total: totalBytes, start: t, now: now}
}

// update redraws the bar when enough time has passed since the last draw.
func (p *progressBar) update(bytesRead int64, records int) {
	t := p.now()
	if p.drawn && t.Sub(p.last) < progressEvery {
		return
	}
	p.last, p.drawn = t, true
	fmt.Fprint(p.w, "\r"+p.line(bytesRead, records, t.Sub(p.start))+"\x1b[K")
}

// finish clears the bar's line.
func (p *progressBar) finish() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

// line renders one state of the bar.
func (p *progressBar) line(bytesRead int64, records int, elapsed time.Duration) string {
	rate := 0.0
	if secs := elapsed.Seconds(); secs > 0 {
		rate = float64(records) / secs
	}
	var b strings.Builder
	if p.verb == "" {
		b.WriteString("importing ")
	} else {
		b.WriteString(p.verb + " ")
	}
	if p.total > 0 {
		frac := min(float64(bytesRead)/float64(p.total), 1)
		const width = 24
		filled := int(frac * width)
		fmt.Fprintf(&b, "[%s%s] %3.0f%% ", strings.Repeat("=", filled), strings.Repeat(" ", width-filled), frac*100)
	}
	fmt.Fprintf(&b, "%s records  %s rec/s", groupThousands(int64(records)), groupThousands(int64(rate)))
	if p.total > 0 && bytesRead > 0 && bytesRead < p.total {
		left := time.Duration(float64(elapsed) * float64(p.total-bytesRead) / float64(bytesRead))
		fmt.Fprintf(&b, "  ETA %s", formatETA(left))
	}
	return b.String()
}

func formatETA(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// groupThousands prints n with comma separators: 12,345.
func groupThousands(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + groupThousands(-n)
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
