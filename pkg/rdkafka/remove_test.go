package rdkafka_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed/kfakebed"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// partHandler records the last acknowledged source offset and the records acknowledged per
// CopyPart (pointer), from Acked and AckedRun alike.
type partHandler struct {
	mu    sync.Mutex
	acked map[*rdkafka.CopyPart]int64
	recs  map[*rdkafka.CopyPart]int64
	bad   []string
}

func newPartHandler() *partHandler {
	return &partHandler{acked: map[*rdkafka.CopyPart]int64{}, recs: map[*rdkafka.CopyPart]int64{}}
}

func (h *partHandler) ack(p *rdkafka.CopyPart, first, last, n int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if prev, ok := h.acked[p]; ok && first <= prev {
		h.bad = append(h.bad, fmt.Sprintf("%s[%d]: acknowledged %d after %d", p.SrcTopic, p.Partition, first, prev))
	}
	h.acked[p] = last
	h.recs[p] += n
}
func (h *partHandler) Acked(p *rdkafka.CopyPart, src, dst int64, _ int, _ int64) {
	n := int64(1)
	if dst < 0 {
		n = 0
	}
	h.ack(p, src, src, n)
}
func (h *partHandler) AckedRun(p *rdkafka.CopyPart, r rdkafka.AckRun) {
	h.ack(p, r.FirstSrc, r.LastSrc, r.N)
}
func (h *partHandler) Gap(*rdkafka.CopyPart, int64, int64) {}
func (h *partHandler) Warn(string, error)                  {}

func (h *partHandler) get(p *rdkafka.CopyPart) (int64, int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	a, ok := h.acked[p]
	if !ok {
		a = -1
	}
	return a, h.recs[p]
}

// countThrottle sums what a copier takes from it and paces it at 20 kB/s, so that the source
// consumer holds records it has fetched but not copied when Remove comes.
type countThrottle struct{ taken atomic.Int64 }

func (c *countThrottle) Take(n int) time.Duration {
	c.taken.Add(int64(n))
	return time.Duration(n) * 50 * time.Microsecond
}
func (c *countThrottle) Burst() int { return 300 } // ~20 records per C batch

// Copier.Remove on both data planes: a removed partition's records already produced are all
// acknowledged before Remove returns, none of it is copied afterwards although its source grows,
// and when it is added again (a new CopyPart from the next offset) its acknowledgements go to the
// new CopyPart only, while the other partition goes on throughout. The throttle is given every
// copied record's key, value and header bytes exactly once (per record on the Go plane, per
// batch on the C plane).
func TestCopierRemoveAndThrottle(t *testing.T) {
	t.Parallel()
	for _, plane := range []string{rdkafka.PlaneC, rdkafka.PlaneGo} {
		t.Run(plane, func(t *testing.T) {
			t.Parallel()
			testCopierRemove(t, plane)
		})
	}
}

func testCopierRemove(t *testing.T, plane string) {
	a, b := kfakebed.Start(t, "A"), kfakebed.Start(t, "B")
	a.CreateTopic(t, "rm", 2)
	b.CreateTopic(t, "A.rm", 2)
	var weight int64
	produce := func(n int, from int) {
		recs := make([]cluster.Record, 0, 2*n)
		for i := from; i < from+n; i++ {
			for p := int32(0); p < 2; p++ {
				r := cluster.Record{Topic: "rm", Partition: p, Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf("value-%d-%d", p, i))}
				if i%3 == 0 {
					r.Headers = []cluster.Header{{Key: "h", Value: []byte("xyz")}}
				}
				weight += int64(len(r.Key) + len(r.Value))
				for _, hd := range r.Headers {
					weight += int64(len(hd.Key) + len(hd.Value))
				}
				recs = append(recs, r)
			}
		}
		a.Produce(t, recs)
	}
	produce(1000, 0)

	h := newPartHandler()
	c, err := rdkafka.NewCopier("rm", a.Config(), b.Config(), h, rdkafka.WithDataPlane(plane))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Plane() != plane {
		t.Fatalf("the copier runs the %s plane, want %s", c.Plane(), plane)
	}
	th := &countThrottle{}
	c.SetThrottle(th)
	c.Start(context.Background())
	p0, p1 := &rdkafka.CopyPart{SrcTopic: "rm", DstTopic: "A.rm", Partition: 0}, &rdkafka.CopyPart{SrcTopic: "rm", DstTopic: "A.rm", Partition: 1}
	if err := c.Add([]*rdkafka.CopyPart{p0, p1}, []int64{0, 0}); err != nil {
		t.Fatal(err)
	}
	waitAcked := func(what string, p *rdkafka.CopyPart, want int64) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			if got, _ := h.get(p); got == want {
				return
			}
			if time.Now().After(deadline) {
				got, _ := h.get(p)
				t.Fatalf("%s: acknowledged up to %d, want %d", what, got, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// Remove partition 0 while it copies.
	deadline := time.Now().Add(30 * time.Second)
	for got, _ := h.get(p0); got < 100 && time.Now().Before(deadline); got, _ = h.get(p0) {
		time.Sleep(time.Millisecond)
	}
	removed, ok := c.Remove([]rdkafka.TP{{Topic: "rm", Partition: 0}, {Topic: "other", Partition: 0}}, 10*time.Second)
	if !ok || len(removed) != 1 || removed[0] != p0 {
		t.Fatalf("Remove returned %v, %v; want [p0], true", removed, ok)
	}
	at, n0 := h.get(p0)
	produce(500, 1000)
	waitAcked("partition 1 after removal", p1, 1499)
	time.Sleep(300 * time.Millisecond)
	if got, n := h.get(p0); got != at || n != n0 {
		t.Fatalf("partition 0 acknowledged up to %d (%d records) after its removal at %d (%d records)", got, n, at, n0)
	}
	if n0 != at+1 {
		t.Fatalf("partition 0: %d records acknowledged up to offset %d", n0, at)
	}
	// Added again from the next offset: a new CopyPart gets the rest, the old one nothing.
	p0b := &rdkafka.CopyPart{SrcTopic: "rm", DstTopic: "A.rm", Partition: 0}
	if err := c.Add([]*rdkafka.CopyPart{p0b}, []int64{at + 1}); err != nil {
		t.Fatal(err)
	}
	waitAcked("partition 0 added again", p0b, 1499)
	if got, n := h.get(p0); got != at || n != n0 {
		t.Fatalf("the removed CopyPart got acknowledgements after it was added again: up to %d (%d records)", got, n)
	}
	if !c.Drain(10 * time.Second) {
		t.Fatal("drain did not finish")
	}
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	bad := h.bad
	h.mu.Unlock()
	if len(bad) > 0 {
		t.Fatalf("acknowledgements out of order: %v", bad)
	}
	_, nb := h.get(p0b)
	_, n1 := h.get(p1)
	if total := n0 + nb + n1; total != 3000 {
		t.Fatalf("%d records acknowledged, want 3000", total)
	}
	if got := th.taken.Load(); got != weight {
		t.Fatalf("the throttle was given %d bytes, want %d (every record's key, value and headers once)", got, weight)
	}
}
