package replicator

import (
	"math/rand"
	"testing"
	"time"
)

// The limiter on a simulated clock: pipelines that copy records of random sizes as fast as the
// limiter lets them (each waits what Take says, plus an oversleep) copy, in every 10 s window,
// within 1 % of the limit (give or take the records at the window's edges), also when every
// wait overshoots by 100 ms (a loaded machine); after an idle period the burst is at most 50 ms of
// the limit (250 ms when the flow was waiting for the limit before: the catch-up).
func TestRateLimiterPacesWithinTheLimit(t *testing.T) {
	for _, tc := range []struct {
		name      string
		rate      int64
		pipelines int
		maxRecord int
		oversleep time.Duration
	}{
		{"2MB/s, 2 pipelines, small records", 2_000_000, 2, 2000, 100 * time.Microsecond},
		{"2MB/s, 4 pipelines, 1 MB records", 2_000_000, 4, 1_000_000, time.Millisecond},
		{"100kB/s, 1 pipeline", 100_000, 1, 5000, 2 * time.Millisecond},
		{"50MB/s, 2 pipelines", 50_000_000, 2, 1000, 50 * time.Microsecond},
		{"2MB/s, 2 pipelines woken 100 ms late", 2_000_000, 2, 10000, 100 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Unix(1_000_000, 0)
			var clock time.Time
			l := newRateLimiter(tc.rate)
			l.now = func() time.Time { return clock }
			l.last = start
			rng := rand.New(rand.NewSource(1))
			// Each pipeline's next free moment; the simulation always runs the earliest one.
			free := make([]time.Time, tc.pipelines)
			for i := range free {
				free[i] = start
			}
			const seconds = 40
			perSecond := make([]int64, seconds)
			for {
				p := 0
				for i := range free {
					if free[i].Before(free[p]) {
						p = i
					}
				}
				clock = free[p]
				n := 1 + rng.Intn(tc.maxRecord)
				d := l.Take(n)
				if d > 0 {
					d += tc.oversleep
				}
				sent := clock.Add(d) // the record is produced after the wait
				s := int(sent.Sub(start) / time.Second)
				if s >= seconds {
					break
				}
				perSecond[s] += int64(n)
				free[p] = sent
			}
			for w := 0; w+10 <= seconds; w++ {
				var sum int64
				for _, b := range perSecond[w : w+10] {
					sum += b
				}
				// A record counts in the second it is sent: a window may gain or lose one record
				// per pipeline at each edge.
				ratio, edge := float64(sum)/float64(tc.rate*10), float64(tc.pipelines*tc.maxRecord)/float64(tc.rate*10)
				if ratio < 0.99-edge || ratio > 1.01+edge {
					t.Fatalf("window %d-%d s: %d bytes, %.4f of the limit", w, w+10, sum, ratio)
				}
			}
			if l.throttledMs() == 0 {
				t.Fatal("no throttled time counted")
			}
		})
	}
	// After idling, what passes at once is the burst: 50 ms of the limit.
	l := newRateLimiter(1_000_000)
	clock := time.Unix(2_000_000, 0)
	l.now = func() time.Time { return clock }
	l.last = clock.Add(-time.Hour)
	var free int64
	for l.Take(1000) == 0 {
		free += 1000
	}
	if free < 45_000 || free > 51_000 {
		t.Fatalf("after an idle hour %d bytes passed without waiting, want ~50000 (50 ms of 1 MB/s)", free)
	}
	// Idle after waiting for the limit (the flow was rate-bound): at most the catch-up, 250 ms.
	clock = clock.Add(time.Hour)
	free = 0
	for l.Take(1000) == 0 {
		free += 1000
	}
	if free < 245_000 || free > 251_000 {
		t.Fatalf("after waiting, then an idle hour, %d bytes passed without waiting, want ~250000 (250 ms of 1 MB/s)", free)
	}
}
