package httpapi

import (
	"math"
	"sync"
	"time"
)

// Rate is a token bucket's refill rate and size.
type Rate struct {
	// PerSecond is how many requests a second a principal may sustain.
	PerSecond float64
	// Burst is how many it may make at once after a quiet spell.
	Burst int
}

// limiter keeps one token bucket per principal name.
type limiter struct {
	rate Rate
	now  func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newLimiter(rate Rate, now func() time.Time) *limiter {
	return &limiter{rate: rate, now: now, buckets: map[string]*bucket{}}
}

// take spends one token of who's bucket, or says how long until one is there.
func (l *limiter) take(who string) (ok bool, retryAfter time.Duration) {
	if l.rate.PerSecond <= 0 {
		return true, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b := l.buckets[who]
	if b == nil {
		// Buckets of principals are few (the keys file); the anonymous bucket is
		// one. The map cannot grow with attacker input.
		b = &bucket{tokens: float64(l.rate.Burst), last: now}
		l.buckets[who] = b
	}
	if elapsed := now.Sub(b.last).Seconds(); elapsed > 0 {
		b.tokens = math.Min(float64(l.rate.Burst), b.tokens+elapsed*l.rate.PerSecond)
	}
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := (1 - b.tokens) / l.rate.PerSecond
	return false, time.Duration(math.Ceil(wait*1e9)) * time.Nanosecond
}
