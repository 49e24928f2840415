package replicator_test

import (
	"context"
	"encoding/binary"
	"regexp"
	"sort"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/e2e/testbed/replbed"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// A record produced at a low rate reaches the target promptly: with a flow running, 200 records
// are produced one every 10 ms (an idempotent producer, as Java's default) and every one of them
// must be on the target within lowRateBound of its produce call. Both topics use
// LogAppendTime, so the broker append times split each record's latency into the source leg
// (produce -> source append) and the copy leg (source append -> target append: kmm's own
// share), which the failure message prints. The bound leaves a loaded CI machine its margin:
// the copy leg measured p50 8-14 ms, p99 40-330 ms at load 25-90 on a 2-core machine.
func TestRealLowRateLatency(t *testing.T) {
	const lowRateBound = 3 * time.Second
	bed := testbed.Attach(t)
	topic := testbed.Unique(t, "lowrate")
	remote := "A." + topic
	const parts, n = 6, 200
	lat := map[string]string{"message.timestamp.type": "LogAppendTime"}
	bed.A.CreateTopic(t, topic, parts, lat)
	bed.B.CreateTopic(t, remote, parts, lat)

	r := replbed.Start(t, replbed.Flow(bed.A, bed.B, regexp.QuoteMeta(topic)))
	defer r.Stop(t)

	p, err := rdkafka.NewProducer("low-rate", rdkafka.Config{"bootstrap.servers": bed.A.Bootstrap, "linger.ms": "0", "enable.idempotence": "true"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	produce := func(seq int) time.Time {
		v := make([]byte, 8)
		binary.BigEndian.PutUint64(v, uint64(seq))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		at := time.Now()
		if _, err := p.ProduceSync(ctx, []rdkafka.Record{{Topic: topic, Partition: int32(seq % parts), Value: v}}); err != nil {
			t.Fatal(err)
		}
		return at
	}
	// Warm-up: one record per partition, copied before the measurement starts (assignment and
	// the producer's first connection are start-up, not latency).
	for i := 0; i < parts; i++ {
		produce(-1)
	}
	bed.B.ConsumeN(t, remote, parts, parts, time.Minute)

	sent := make([]time.Time, n)
	start := time.Now()
	for i := 0; i < n; i++ {
		if d := time.Until(start.Add(time.Duration(i) * 10 * time.Millisecond)); d > 0 {
			time.Sleep(d)
		}
		sent[i] = produce(i)
	}
	appendedAt := func(recs []rdkafka.Record) map[int]time.Time {
		out := map[int]time.Time{}
		for _, rec := range recs {
			if seq := int(int64(binary.BigEndian.Uint64(rec.Value))); seq >= 0 {
				out[seq] = rec.Timestamp
			}
		}
		return out
	}
	src := appendedAt(bed.A.ConsumeN(t, topic, parts, parts+n, time.Minute))
	tgt := appendedAt(bed.B.ConsumeN(t, remote, parts, parts+n, time.Minute))
	var e2e, copyLeg []time.Duration
	var late []int
	for i := 0; i < n; i++ {
		ta, ok := tgt[i]
		if !ok {
			t.Fatalf("record %d is not on the target", i)
		}
		// Broker append times have ms resolution; the produce time has µs.
		d := ta.Sub(sent[i].Truncate(time.Millisecond))
		e2e = append(e2e, d)
		copyLeg = append(copyLeg, ta.Sub(src[i]))
		if d > lowRateBound {
			late = append(late, i)
		}
	}
	q := func(ds []time.Duration, f float64) time.Duration {
		s := append([]time.Duration(nil), ds...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		return s[int(f*float64(len(s)-1))]
	}
	summary := func() string {
		return "produce -> target append p50 " + q(e2e, 0.5).String() + ", p99 " + q(e2e, 0.99).String() + ", max " + q(e2e, 1).String() +
			"; copy leg (source append -> target append) p50 " + q(copyLeg, 0.5).String() + ", p99 " + q(copyLeg, 0.99).String() + ", max " + q(copyLeg, 1).String()
	}
	if len(late) > 0 {
		t.Fatalf("%d of %d records reached the target later than %v after their produce call (first: #%d after %v): %s",
			len(late), n, lowRateBound, late[0], e2e[late[0]], summary())
	}
	t.Logf("%d records at 100/s: %s", n, summary())
}
