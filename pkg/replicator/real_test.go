package replicator_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/policy"
	"github.com/kmmproject/kmm/pkg/rdkafka"
	"github.com/kmmproject/kmm/pkg/replicator"
)

// flowFor builds a flow src->tgt replicating topics matching re, with fast intervals.
func flowFor(src, tgt testbed.Cluster, re string) *replicator.Flow {
	rx := regexp.MustCompile("^(?:" + re + ")$")
	cfg := func(c testbed.Cluster) rdkafka.Config { return rdkafka.Config{"bootstrap.servers": c.Bootstrap} }
	return &replicator.Flow{
		Source: src.Name, Target: tgt.Name, SourceBootstrap: src.Bootstrap, TargetBootstrap: tgt.Bootstrap, Enabled: true,
		SourceConsumer: cfg(src), SourceAdmin: cfg(src), SourceProducer: cfg(src),
		TargetProducer: rdkafka.Config{"bootstrap.servers": tgt.Bootstrap, "enable.idempotence": "true", "acks": "all", "linger.ms": "5"},
		TargetAdmin:    cfg(tgt), TargetConsumer: cfg(tgt),
		Policy: defaultPolicy(), TopicFilter: rx.MatchString, HeartbeatsReplication: true,
		ReplicationFactor: 1, RefreshTopics: true, RefreshTopicsInterval: time.Second,
		SyncTopicConfigs: true, SyncConfigsInterval: 2 * time.Second, SyncTopicACLs: true, SyncACLsInterval: 2 * time.Second,
		EmitOffsetSyncs: true, OffsetLagMax: 100, OffsetSyncsRF: 1,
		EmitHeartbeats: true, HeartbeatInterval: 200 * time.Millisecond, HeartbeatsRF: 1,
		OffsetsTopicRF: 1, OffsetFlushInterval: 500 * time.Millisecond, Tasks: 2,
		ConfigExcluded: func(n string) bool { return n == "min.insync.replicas" || n == "message.timestamp.type" },
	}
}

type running struct {
	cancel context.CancelFunc
	done   chan error
	mu     sync.Mutex
	events []replicator.Event
}

func start(t *testing.T, flows ...*replicator.Flow) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan error, 1)}
	go func() {
		r.done <- replicator.Run(ctx, flows, replicator.Options{ShutdownTimeout: 20 * time.Second, ProgressEvery: -1,
			Sink: replicator.SinkFunc(func(e replicator.Event) {
				r.mu.Lock()
				r.events = append(r.events, e)
				r.mu.Unlock()
				if e.Type == replicator.EvWarning || e.Type == replicator.EvError || e.Type == replicator.EvRetentionGap {
					t.Logf("event: %s %s", e.Type, e.Message)
				}
			})})
	}()
	t.Cleanup(func() { r.stop(t) })
	// Wait until every flow started, so a start-up error fails the test at once.
	deadline := time.Now().Add(90 * time.Second)
	for len(r.find(replicator.EvStarted)) < len(flows) {
		select {
		case err := <-r.done:
			r.cancel = nil
			t.Fatalf("replicator stopped during start: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("flows not started within 90s")
		}
	}
	return r
}

func (r *running) stop(t *testing.T) {
	if r.cancel == nil {
		return
	}
	r.cancel()
	r.cancel = nil
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("replicator returned %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Error("replicator did not stop within 60s of cancel")
	}
}

func (r *running) find(typ replicator.EventType) []replicator.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []replicator.Event
	for _, e := range r.events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// makeRecords builds n records for topic over parts partitions with headers, null keys every
// 7th record, tombstones every 11th, and explicit timestamps.
func makeRecords(topic string, parts, n int, base time.Time) []rdkafka.Record {
	recs := make([]rdkafka.Record, n)
	for i := range recs {
		v := make([]byte, 24)
		binary.BigEndian.PutUint64(v, uint64(i))
		var key []byte
		if i%7 != 0 {
			key = []byte(fmt.Sprintf("key-%d", i%1000))
		}
		if i%11 == 0 {
			v = nil
		}
		recs[i] = rdkafka.Record{Topic: topic, Partition: int32(i % parts), Key: key, Value: v,
			Headers:   []rdkafka.Header{{Key: "h1", Value: []byte(fmt.Sprint(i))}, {Key: "h2", Value: []byte{}}},
			Timestamp: base.Add(time.Duration(i) * time.Millisecond)}
	}
	return recs
}

func counts(recs []rdkafka.Record, parts int) []int {
	c := make([]int, parts)
	for _, r := range recs {
		c[r.Partition]++
	}
	return c
}

// 300k records over 3 topics × 6 partitions arrive byte-identical, per partition and in order.
func TestRealReplicate300k(t *testing.T) {
	bed := testbed.Attach(t)
	prefix := testbed.Unique(t, "r300")
	const parts = 6
	base := time.Now().Add(-2 * time.Hour).Truncate(time.Millisecond)
	var topics []string
	srcRecs := map[string][]rdkafka.Record{}
	for i := 0; i < 3; i++ {
		topic := fmt.Sprintf("%s-t%d", prefix, i)
		topics = append(topics, topic)
		bed.A.CreateTopic(t, topic, parts, map[string]string{"retention.ms": "86400000"})
		srcRecs[topic] = makeRecords(topic, parts, 100_000, base)
		bed.A.Produce(t, srcRecs[topic])
	}
	excluded := prefix + "-skip" // not matched by the flow's topic filter
	bed.A.CreateTopic(t, excluded, 1, nil)

	f := flowFor(bed.A, bed.B, regexp.QuoteMeta(prefix)+`-t\d`)
	r := start(t, f)
	for _, topic := range topics {
		remote := "A." + topic
		want := testbed.DigestRecords(srcRecs[topic], parts)
		got := bed.B.Digests(t, remote, parts, counts(srcRecs[topic], parts), 3*time.Minute)
		for p := range want {
			if want[p] != got[p] {
				t.Fatalf("%s[%d]: target digest differs (count %d vs %d)", remote, p, got[p].Count, want[p].Count)
			}
		}
	}
	r.stop(t)
	ts, err := bed.B.Admin(t).ListTopics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ts["A."+excluded]; ok {
		t.Fatalf("excluded topic %s was replicated", excluded)
	}
	// Config sync carried the topic-level retention override.
	cfgs, err := bed.B.Admin(t).DescribeTopicConfigs(context.Background(), "A."+topics[0])
	if err != nil {
		t.Fatal(err)
	}
	if v := cfgs["A."+topics[0]]["retention.ms"].Value; v != "86400000" {
		t.Fatalf("retention.ms on target = %q", v)
	}
	// Resume positions are MM2's: last replicated offset per source partition.
	pos, err := replicator.ReadSourcePositions(context.Background(), bed.B.Admin(t), rdkafka.Config{"bootstrap.servers": bed.B.Bootstrap}, "mm2-offsets.A.internal", "A")
	if err != nil {
		t.Fatal(err)
	}
	for _, topic := range topics {
		for p := 0; p < parts; p++ {
			want := int64(counts(srcRecs[topic], parts)[p] - 1)
			if got, ok := pos[rdkafka.TP{Topic: topic, Partition: int32(p)}]; !ok || got != want {
				t.Fatalf("stored position of %s[%d] = %d (present %v), want %d", topic, p, got, ok, want)
			}
		}
	}
	// Offset syncs on A: the newest sync for each partition maps the last record exactly
	// (delayed syncs are promoted on commit and drain).
	syncs := latestSyncs(t, bed.A, "mm2-offset-syncs.B.internal")
	for _, topic := range topics {
		for p := 0; p < parts; p++ {
			s, ok := syncs[rdkafka.TP{Topic: topic, Partition: int32(p)}]
			last := int64(counts(srcRecs[topic], parts)[p] - 1)
			if !ok || s[0] != last || s[1] != last {
				t.Fatalf("offset sync of %s[%d] = %v (present %v), want [%d %d]", topic, p, s, ok, last, last)
			}
		}
	}
}

func latestSyncs(t *testing.T, c testbed.Cluster, topic string) map[rdkafka.TP][2]int64 {
	t.Helper()
	a := c.Admin(t)
	end, err := a.ListOffsets(context.Background(), []rdkafka.TP{{Topic: topic}}, rdkafka.Latest)
	if err != nil {
		t.Fatal(err)
	}
	n := int(end[rdkafka.TP{Topic: topic}].Offset)
	recs := c.ConsumeN(t, topic, 1, n, time.Minute)
	out := map[rdkafka.TP][2]int64{}
	for _, r := range recs {
		os, err := mm2wire.DecodeOffsetSync(r.Key, r.Value)
		if err != nil {
			t.Fatalf("undecodable offset sync at %d: %v", r.Offset, err)
		}
		out[rdkafka.TP{Topic: os.Topic, Partition: os.Partition}] = [2]int64{os.UpstreamOffset, os.DownstreamOffset}
	}
	return out
}

func defaultPolicy() policy.Policy { return policy.NewDefault(".", false, true) }
