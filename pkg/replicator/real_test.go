package replicator_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/e2e/testbed/replbed"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/mm2read"
	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// flowFor is the bed's flow with config and ACL sync and heartbeats on.
func flowFor(src, tgt testbed.Cluster, re string) *flow.Flow {
	f := replbed.Flow(src, tgt, re)
	f.SyncTopicConfigs, f.SyncConfigsInterval, f.SyncTopicACLs, f.SyncACLsInterval = true, 2*time.Second, true, 2*time.Second
	f.EmitHeartbeats, f.HeartbeatInterval, f.HeartbeatsRF = true, 200*time.Millisecond, 1
	f.ConfigExcluded = func(n string) bool { return n == "min.insync.replicas" || n == "message.timestamp.type" }
	return f
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
	r := replbed.Start(t, f)
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
	r.Stop(t)
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
	pos, err := mm2read.ReadSourcePositions(context.Background(), bed.B.Open(t), "mm2-offsets.A.internal", "A")
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
