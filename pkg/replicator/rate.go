package replicator

import (
	"sync"
	"sync/atomic"
	"time"
)

// rateBurst is how much traffic the rate limiter lets through at once after an idle period:
// 50 ms of the limit, so any 10 s window carries at most 0.5 % more than the limit (plus one
// record). Smaller, and the pipelines sleep too often to keep up with a high limit.
const rateBurst = 50 * time.Millisecond

// rateLimiter is one flow's token bucket (kmm.rate.limit.bytes.per.second), shared by all the
// flow's pipelines (rdkafka.Throttle): each record takes its bytes; a pipeline that takes more
// than the bucket holds waits until the debt is paid. It refills at the limit, up to rateBurst's
// worth.
type rateLimiter struct {
	rate  float64 // bytes per second
	burst float64 // bytes

	mu     sync.Mutex
	tokens float64 // may be negative: the debt the next pipelines wait for
	last   time.Time

	throttled atomic.Int64 // nanoseconds the pipelines were told to wait, summed over pipelines
	now       func() time.Time
}

func newRateLimiter(bytesPerSecond int64) *rateLimiter {
	r := float64(bytesPerSecond)
	b := max(r*rateBurst.Seconds(), 1)
	return &rateLimiter{rate: r, burst: b, tokens: b, last: time.Now(), now: time.Now}
}

// Take implements rdkafka.Throttle. A wait under a millisecond is not slept (sleeps that short
// overshoot); the debt stays and the next record waits for it.
func (l *rateLimiter) Take(n int) time.Duration {
	now := l.now()
	l.mu.Lock()
	l.tokens = min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.rate) - float64(n)
	l.last = now
	debt := -l.tokens
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

// throttledMs is how long the flow's pipelines waited for the limit, summed over pipelines.
func (l *rateLimiter) throttledMs() int64 {
	if l == nil {
		return 0
	}
	return l.throttled.Load() / int64(time.Millisecond)
}
