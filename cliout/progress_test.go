package cliout

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestProgressLine(t *testing.T) {
	tests := []struct {
		name    string
		total   int64
		read    int64
		records int
		elapsed time.Duration
		want    string
	}{
		{"known size, a quarter done", 4000, 1000, 25000, 5 * time.Second,
			"importing [======                  ]  25% 25,000 records  5,000 rec/s  ETA 0:15"},
		{"known size, done", 4000, 4000, 100000, 20 * time.Second,
			"importing [========================] 100% 100,000 records  5,000 rec/s"},
		{"unknown size (stdin)", 0, 1000, 1234, 2 * time.Second,
			"importing 1,234 records  617 rec/s"},
		{"long ETA", 10000, 1, 10, time.Second, "ETA 2:46:39"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &ProgressBar{Total: tt.total}
			got := p.line(tt.read, tt.records, tt.elapsed)
			if tt.name == "long ETA" {
				if !strings.HasSuffix(got, tt.want) {
					t.Fatalf("got %q, want suffix %q", got, tt.want)
				}
				return
			}
			if got != tt.want {
				t.Fatalf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestProgressBarThrottlesAndClears(t *testing.T) {
	var out bytes.Buffer
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := NewProgressBar(&out, 100, func() time.Time { return clock })
	p.Update(10, 10)
	clock = clock.Add(10 * time.Millisecond)
	p.Update(20, 20) // too soon: not drawn
	clock = clock.Add(200 * time.Millisecond)
	p.Update(30, 30)
	p.Finish()
	if n := strings.Count(out.String(), "importing"); n != 2 {
		t.Errorf("drew %d times, want 2: %q", n, out.String())
	}
	if !strings.HasSuffix(out.String(), "\r\x1b[K") {
		t.Errorf("finish did not clear the line: %q", out.String())
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -5000: "-5,000"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
	if got := Counted(uint64(1), "record", "records") + ", " + Counted(1204, "record", "records"); got != "1 record, 1,204 records" {
		t.Errorf("Counted = %q", got)
	}
}
