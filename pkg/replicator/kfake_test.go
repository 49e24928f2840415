package replicator_test

// In-process tests of the engine's logic against kfake clusters through kmm's real librdkafka
// code: resume positions (MM2's Connect offsets format), retries, and at-least-once when the
// target rejects records. librdkafka talks to kfake for everything these use (metadata, topic
// creation, idempotent produce, fetch, list offsets, the Connect offsets topic). kfake has no
// __consumer_offsets topic, so checkpoints (which follow it) are off here and stay on the real
// bed (real_test.go, pkg/mm2read's real tests, e2e).

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kmmproject/kmm/e2e/testbed/kfakebed"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/mm2read"
	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/replicator"
)

// seqRecords makes n records of topic over parts partitions; the value carries the sequence.
func seqRecords(topic string, parts, from, n int) []cluster.Record {
	recs := make([]cluster.Record, n)
	for i := range recs {
		seq := from + i
		v := make([]byte, 8)
		binary.BigEndian.PutUint64(v, uint64(seq))
		recs[i] = cluster.Record{Topic: topic, Partition: int32(seq % parts), Key: []byte(fmt.Sprint(seq)), Value: v}
	}
	return recs
}

// running is an engine run in the background.
type running struct {
	cancel context.CancelFunc
	done   chan error
	mu     sync.Mutex
	events []replicator.Event
}

func start(t *testing.T, flows ...*flow.Flow) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan error, 1)}
	go func() {
		r.done <- replicator.Run(ctx, flows, replicator.Options{ShutdownTimeout: 10 * time.Second, ProgressEvery: -1, StartTimeout: 5 * time.Second,
			Sink: replicator.SinkFunc(func(e replicator.Event) {
				r.mu.Lock()
				r.events = append(r.events, e)
				if testing.Verbose() {
					t.Logf("%s %s %s", e.Time.Format("15:04:05.000"), e.Type, e.Message)
				}
				r.mu.Unlock()
			})})
	}()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// stop drains the run and returns its error.
func (r *running) stop(t *testing.T) error {
	t.Helper()
	if r.cancel == nil {
		return nil
	}
	r.cancel()
	r.cancel = nil
	select {
	case err := <-r.done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("the engine did not stop within 30s")
		return nil
	}
}

// copyUntil runs the engine on flows until the target topic holds n records (onB), then drains
// it and fails the test if the run ended with an error.
func copyUntil(t *testing.T, f *flow.Flow, onB func() int64, n int64) {
	t.Helper()
	r := start(t, f)
	waitFor(t, 30*time.Second, fmt.Sprintf("%d records on B", n), func() bool { return onB() >= n })
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond for up to d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// seqs returns the sequence numbers of a topic's records per partition, in offset order.
func seqs(t *testing.T, c kfakebed.Cluster, topic string) map[int32][]int {
	out := map[int32][]int{}
	for _, r := range c.ReadAll(t, topic) {
		out[r.Partition] = append(out[r.Partition], int(binary.BigEndian.Uint64(r.Value)))
	}
	return out
}

func count(m map[int32][]int) int {
	n := 0
	for _, l := range m {
		n += len(l)
	}
	return n
}

func positions(t *testing.T, b kfakebed.Cluster, f *flow.Flow) map[cluster.TP]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pos, err := mm2read.ReadSourcePositions(ctx, b.Open(t), f.OffsetsTopic, f.Source)
	if err != nil {
		t.Fatal(err)
	}
	return pos
}

func testFlow(a, b kfakebed.Cluster) *flow.Flow {
	f := kfakebed.Flow(a, b, "orders")
	f.EmitCheckpoints = false // follows __consumer_offsets, which kfake does not have
	return f
}

// A drained run stores the last replicated offset of every partition in MM2's format; the next
// run resumes exactly there: nothing is copied twice, nothing is skipped.
func TestKfakeResumePositions(t *testing.T) {
	t.Parallel() // own in-process clusters: waits overlap with the other tests of the package
	a, b := kfakebed.Start(t, "A"), kfakebed.Start(t, "B")
	a.CreateTopic(t, "orders", 3)
	a.Produce(t, seqRecords("orders", 3, 0, 300))
	f := testFlow(a, b)
	onB := b.Records(t, "A.orders")
	copyUntil(t, f, onB, 300)
	pos := positions(t, b, f)
	for p := int32(0); p < 3; p++ {
		if got := pos[cluster.TP{Topic: "orders", Partition: p}]; got != 99 {
			t.Fatalf("stored position of orders[%d] = %d, want 99 (the last replicated offset)", p, got)
		}
	}
	a.Produce(t, seqRecords("orders", 3, 300, 150))
	copyUntil(t, f, onB, 450)
	got := seqs(t, b, "A.orders")
	for p := int32(0); p < 3; p++ {
		l := got[p]
		if len(l) != 150 {
			t.Fatalf("partition %d has %d records after the resumed run, want 150 (none twice)", p, len(l))
		}
		for i, s := range l {
			if s != int(p)+3*i {
				t.Fatalf("partition %d offset %d holds seq %d, want %d", p, i, s, int(p)+3*i)
			}
		}
	}
}

// Positions written by another writer of MM2's format (Apache MM2, or kmm on another machine)
// are where the engine starts: a partition with a position resumes after it, one without starts
// at the beginning (auto.offset.reset=earliest).
func TestKfakeResumesFromMM2Positions(t *testing.T) {
	t.Parallel() // own in-process clusters: waits overlap with the other tests of the package
	a, b := kfakebed.Start(t, "A"), kfakebed.Start(t, "B")
	a.CreateTopic(t, "orders", 2)
	a.Produce(t, seqRecords("orders", 2, 0, 200))
	f := testFlow(a, b)
	b.CreateTopic(t, f.OffsetsTopic, f.OffsetsTopicPartitions)
	key := mm2wire.SourceOffsetKey{Connector: mm2wire.SourceConnectorName, Cluster: "A", Topic: "orders", Partition: 0}.AppendJSON(nil)
	b.Produce(t, []cluster.Record{{Topic: f.OffsetsTopic, Partition: mm2wire.PartitionForKey(key, int32(f.OffsetsTopicPartitions)), Key: key, Value: mm2wire.AppendOffsetValue(nil, 59)}})
	onB := b.Records(t, "A.orders")
	r := start(t, f)
	waitFor(t, 30*time.Second, "records on B", func() bool { return onB() >= 140 })
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	got := seqs(t, b, "A.orders")
	if len(got[0]) != 40 || got[0][0] != 120 || len(got[1]) != 100 || got[1][0] != 1 {
		t.Fatalf("partition 0: %d records from seq %v; partition 1: %d records (want 40 from seq 120, 100 from seq 1)", len(got[0]), first(got[0]), len(got[1]))
	}
}

func first(l []int) any {
	if len(l) == 0 {
		return "none"
	}
	return l[0]
}

// Retriable produce errors on the target (leadership moving, timeouts) are retried by the
// idempotent producer: every record arrives once, in order.
func TestKfakeRetriesTransientProduceErrors(t *testing.T) {
	t.Parallel() // own in-process clusters: waits overlap with the other tests of the package
	a, b := kfakebed.Start(t, "A"), kfakebed.Start(t, "B")
	a.CreateTopic(t, "orders", 2)
	a.Produce(t, seqRecords("orders", 2, 0, 400))
	h := b.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "A.orders", Err: kerr.NotLeaderForPartition, Count: 8},
		kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "A.orders", Err: kerr.RequestTimedOut, Count: 4})
	f := testFlow(a, b)
	onB := b.Records(t, "A.orders")
	r := start(t, f)
	waitFor(t, 60*time.Second, "400 records on B", func() bool { return onB() >= 400 })
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	if h.Hits() < 12 {
		t.Fatalf("only %d of 12 faults hit: the test did not exercise retries", h.Hits())
	}
	got := seqs(t, b, "A.orders")
	for p := int32(0); p < 2; p++ {
		if len(got[p]) != 200 {
			t.Fatalf("partition %d: %d records, want 200 exactly once", p, len(got[p]))
		}
		for i, s := range got[p] {
			if s != int(p)+2*i {
				t.Fatalf("partition %d out of order at %d: seq %d", p, i, s)
			}
		}
	}
}

// At-least-once when the target rejects records for good: the run fails with the error, the
// stored positions never pass a record the target did not acknowledge, and the next run copies
// every record not yet on the target (duplicates allowed, losses not).
func TestKfakeAtLeastOnceWhenTargetRejects(t *testing.T) {
	t.Parallel() // own in-process clusters: waits overlap with the other tests of the package
	a, b := kfakebed.Start(t, "A"), kfakebed.Start(t, "B")
	a.CreateTopic(t, "orders", 2)
	a.Produce(t, seqRecords("orders", 2, 0, 200))
	f := testFlow(a, b)
	onB := b.Records(t, "A.orders")
	r := start(t, f)
	waitFor(t, 30*time.Second, "200 records on B", func() bool { return onB() >= 200 })
	// From now on partition 1 is rejected (not retriable).
	h := b.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "A.orders", Partitions: []int32{1}, Err: kerr.TopicAuthorizationFailed, Count: -1})
	a.Produce(t, seqRecords("orders", 2, 200, 200))
	var runErr error
	select {
	case runErr = <-r.done:
		r.cancel = nil
	case <-time.After(60 * time.Second):
		t.Fatal("the engine did not fail within 60s of the rejection")
	}
	if runErr == nil || h.Hits() == 0 {
		t.Fatalf("run error %v, fault hits %d", runErr, h.Hits())
	}
	t.Logf("the run failed as it should: %v", runErr)
	reached := seqs(t, b, "A.orders")
	pos := positions(t, b, f)
	if got := pos[cluster.TP{Topic: "orders", Partition: 1}]; got >= int64(len(reached[1])) {
		t.Fatalf("stored position of orders[1] = %d but only %d records reached B: a rejected record would be skipped", got, len(reached[1]))
	}
	h.Remove()
	r = start(t, f)
	waitFor(t, 60*time.Second, "every record on B", func() bool {
		got := seqs(t, b, "A.orders")
		return distinct(got[0]) == 200 && distinct(got[1]) == 200
	})
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
	got := seqs(t, b, "A.orders")
	for p := int32(0); p < 2; p++ {
		if d := distinct(got[p]); d != 200 {
			t.Fatalf("partition %d: %d distinct records of 200", p, d)
		}
	}
	t.Logf("partition 1: %d records for 200 distinct (at-least-once: %d copied again)", len(got[1]), len(got[1])-200)
}

func distinct(l []int) int {
	seen := map[int]bool{}
	for _, s := range l {
		seen[s] = true
	}
	return len(seen)
}

// kmm.offset.map.enabled: on (the default) the map of every copied partition is stored on the
// target; a run with it off stores none and deletes the maps stored earlier (a map that stopped
// growing would translate later positions as if nothing had been copied since), while the copy
// and its resume positions are unchanged; on again, the map starts from the stored position.
func TestKfakeOffsetMapSwitch(t *testing.T) {
	t.Parallel()
	a, b := kfakebed.Start(t, "A"), kfakebed.Start(t, "B")
	a.CreateTopic(t, "orders", 2)
	a.Produce(t, seqRecords("orders", 2, 0, 200))
	f := testFlow(a, b)
	onB := b.Records(t, "A.orders")
	maps := func() map[cluster.TP]int64 {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		m, err := mm2read.ReadOffsetMaps(ctx, b.Open(t), f.OffsetMapTopic())
		if err != nil {
			t.Fatal(err)
		}
		out := map[cluster.TP]int64{}
		for tp, om := range m {
			out[tp] = om.Next()
		}
		return out
	}
	copyUntil(t, f, onB, 200)
	if got := maps(); len(got) != 2 || got[cluster.TP{Topic: "orders", Partition: 0}] != 100 {
		t.Fatalf("map on: stored maps %v, want both partitions up to source offset 100", got)
	}

	off := testFlow(a, b)
	off.NoOffsetMap = true
	a.Produce(t, seqRecords("orders", 2, 200, 100))
	copyUntil(t, off, onB, 300)
	if got := maps(); len(got) != 0 {
		t.Fatalf("map off: maps still stored %v, want the earlier ones deleted and none written", got)
	}
	if pos := positions(t, b, off); pos[cluster.TP{Topic: "orders", Partition: 1}] != 149 {
		t.Fatalf("map off: stored position %v, want 149 on orders[1] (progress unchanged)", pos)
	}
	if got := seqs(t, b, "A.orders"); count(got) != 300 || distinct(got[0])+distinct(got[1]) != 300 {
		t.Fatalf("map off: %d records on B (%d distinct), want 300 once each", count(got), distinct(got[0])+distinct(got[1]))
	}

	a.Produce(t, seqRecords("orders", 2, 300, 100))
	copyUntil(t, f, onB, 400)
	if got := maps(); got[cluster.TP{Topic: "orders", Partition: 0}] != 200 {
		t.Fatalf("map on again: stored maps %v, want orders[0] up to source offset 200", got)
	}
}

// A crash's copies the map never saw (target records after the stored map) are bounded by the
// source end read before the restarted copy begins: the newest copy's segment carries the bound,
// and a group inside the range copied again translates into the new copy, exactly, even when
// the whole range is copied again before any periodic refresh of the source ends.
func TestKfakeCrashGapBounded(t *testing.T) {
	t.Parallel()
	a, b := kfakebed.Start(t, "A"), kfakebed.Start(t, "B")
	a.CreateTopic(t, "orders", 1)
	a.Produce(t, seqRecords("orders", 1, 0, 200))
	f := testFlow(a, b)
	onB := b.Records(t, "A.orders")
	copyUntil(t, f, onB, 200)
	// What a crashed run leaves: copies of source 200-229 on B that no progress or map records.
	b.Produce(t, seqRecords("A.orders", 1, 200, 30))
	a.Produce(t, seqRecords("orders", 1, 200, 30))
	copyUntil(t, f, onB, 260)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	maps, err := mm2read.ReadOffsetMaps(ctx, b.Open(t), f.OffsetMapTopic())
	if err != nil {
		t.Fatal(err)
	}
	m := maps[cluster.TP{Topic: "orders", Partition: 0}]
	if m == nil || len(m.Segs) != 2 || m.Segs[1].Tgt != 230 || m.Segs[1].GapBound < 230 {
		t.Fatalf("stored map %+v: want a second segment at target 230 with a gap bound >= 230", m)
	}
	if tr := m.Translate(210, 260); !tr.Exact || tr.Target != 240 || tr.Rereads != 0 {
		t.Fatalf("source 210 translates to %+v, want target 240 (in the new copy), exact, 0 re-reads", tr)
	}
}
