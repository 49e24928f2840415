package replicator

import (
	"sync"
	"sync/atomic"
	"time"
)

// rateBurst is how much traffic the rate limiter lets through at once after an idle period:
// 50 ms of the limit, so a 10 s window carries at most 0.5 % more than the limit (plus one
// record). rateCatchUp is how much of the time pipelines overslept while they waited for the
// limit is made up for afterwards: a loaded machine wakes a sleeping pipeline late, and without
// it the flow copied 82-89 % of its limit at a load average of 70 on 2 cores; making up 250 ms
// adds at most 2.5 % to a 10 s window.
const (
	rateBurst   = 50 * time.Millisecond
	rateCatchUp = 250 * time.Millisecond
)

// rateLimiter is one flow's token bucket (kmm.rate.limit.bytes.per.second), shared by all the
// flow's pipelines (rdkafka.Throttle): each record takes its bytes; a pipeline that takes more
// than the bucket holds waits until the debt is paid. It refills at the limit, up to rateBurst's
// worth.
type rateLimiter struct {
	rate  float64 // bytes per second
	burst float64 // bytes
	catch float64 // bytes

	mu     sync.Mutex
	tokens float64 // may be negative: the debt the next pipelines wait for
	last   time.Time
	// waiting: the pipelines have been waiting for the limit since a Take left a debt (until a
	// Take finds more credit than catching up explains: the flow was idle), so the time passed
	// is theirs to catch up on.
	waiting bool

	throttled atomic.Int64 // nanoseconds the pipelines were told to wait, summed over pipelines
	now       func() time.Time
}

func newRateLimiter(bytesPerSecond int64) *rateLimiter {
	r := float64(bytesPerSecond)
	b := max(r*rateBurst.Seconds(), 1)
	return &rateLimiter{rate: r, burst: b, catch: max(r*rateCatchUp.Seconds(), 1), tokens: b, last: time.Now(), now: time.Now}
}

// Take implements rdkafka.Throttle. A wait under a millisecond is not slept (sleeps that short
// overshoot); the debt stays and the next record waits for it.
func (l *rateLimiter) Take(n int) time.Duration {
	now := l.now()
	l.mu.Lock()
	limit := max(l.burst, l.tokens) // (tokens granted under the catch-up are kept)
	if l.waiting {
		limit = l.catch
	}
	credit := l.tokens + now.Sub(l.last).Seconds()*l.rate
	idle := credit > limit // more time passed than waiting explains
	l.tokens = min(limit, credit) - float64(n)
	l.last = now
	debt := -l.tokens
	if debt > 0 {
		l.waiting = true
	} else if idle {
		l.waiting = false
	}
	l.mu.Unlock()
	if debt <= 0 {
		return 0
	}
	d := time.Duration(debt / l.rate * float64(time.Second))
	if d < time.Millisecond {
		return 0
	}
	l.throttled.Add(int64(d))
	return d
}

// Burst is the bucket's burst in bytes: the C data plane's largest batch under the limit.
func (l *rateLimiter) Burst() int { return int(l.burst) }

// throttledMs is how long the flow's pipelines waited for the limit, summed over pipelines.
func (l *rateLimiter) throttledMs() int64 {
	if l == nil {
		return 0
	}
	return l.throttled.Load() / int64(time.Millisecond)
}
