package cliout

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// ProgressBar draws import progress on one terminal line of stderr: a bar when
// the input's size is known, the count, the rate and the time left.
type ProgressBar struct {
	w io.Writer
	// Total is the input's size in bytes; 0 when unknown (stdin).
	Total int64
	start time.Time
	last  time.Time
	now   func() time.Time
	drawn bool
	// Verb starts the line ("importing" when empty).
	Verb string
}

// progressEvery is how often the bar redraws, so drawing never slows an import.
const progressEvery = 100 * time.Millisecond

// NewProgressBar is an import's progress bar on w; totalBytes is the input's
// size (0 when unknown).
func NewProgressBar(w io.Writer, totalBytes int64, now func() time.Time) *ProgressBar {
	t := now()
	return &ProgressBar{w: w, Total: totalBytes, start: t, now: now}
}

// Update redraws the bar when enough time has passed since the last draw.
func (p *ProgressBar) Update(bytesRead int64, records int) {
	t := p.now()
	if p.drawn && t.Sub(p.last) < progressEvery {
		return
	}
	p.last, p.drawn = t, true
	fmt.Fprint(p.w, "\r"+p.line(bytesRead, records, t.Sub(p.start))+"\x1b[K")
}

// Finish clears the bar's line.
func (p *ProgressBar) Finish() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

// line renders one state of the bar.
func (p *ProgressBar) line(bytesRead int64, records int, elapsed time.Duration) string {
	rate := 0.0
	if secs := elapsed.Seconds(); secs > 0 {
		rate = float64(records) / secs
	}
	var b strings.Builder
	if p.Verb == "" {
		b.WriteString("importing ")
	} else {
		b.WriteString(p.Verb + " ")
	}
	if p.Total > 0 {
		frac := min(float64(bytesRead)/float64(p.Total), 1)
		const width = 24
		filled := int(frac * width)
		fmt.Fprintf(&b, "[%s%s] %3.0f%% ", strings.Repeat("=", filled), strings.Repeat(" ", width-filled), frac*100)
	}
	fmt.Fprintf(&b, "%s records  %s rec/s", Count(records), Count(int(rate)))
	if p.Total > 0 && bytesRead > 0 && bytesRead < p.Total {
		left := time.Duration(float64(elapsed) * float64(p.Total-bytesRead) / float64(bytesRead))
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

// CopyProgress draws the copy's progress on one terminal line of stderr.
type CopyProgress struct {
	w     io.Writer
	start time.Time
	last  time.Time
}

// NewCopyProgress is a copy's progress line on w, starting now.
func NewCopyProgress(w io.Writer) *CopyProgress { return &CopyProgress{w: w, start: time.Now()} }

// Update redraws the line when enough time has passed since the last draw.
func (p *CopyProgress) Update(done, total int) {
	now := time.Now()
	if now.Sub(p.last) < progressEvery {
		return
	}
	p.last = now
	elapsed := now.Sub(p.start)
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(done) / s
	}
	var b strings.Builder
	b.WriteString("copying ")
	if total > 0 {
		frac := min(float64(done)/float64(total), 1)
		const width = 24
		filled := int(frac * width)
		fmt.Fprintf(&b, "[%s%s] %3.0f%% ", strings.Repeat("=", filled), strings.Repeat(" ", width-filled), frac*100)
	}
	fmt.Fprintf(&b, "%s of %s records  %s rec/s", Count(done), Count(total), Count(int(rate)))
	if rate > 0 && done < total {
		fmt.Fprintf(&b, "  ETA %s", formatETA(time.Duration(float64(total-done)/rate*float64(time.Second))))
	}
	fmt.Fprint(p.w, "\r"+b.String()+"\x1b[K")
}

// Finish clears the line.
func (p *CopyProgress) Finish() {
	if !p.last.IsZero() {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
