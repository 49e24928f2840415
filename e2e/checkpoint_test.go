package e2e

import (
	"context"
	"encoding/binary"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// A group's commits on A become checkpoints on B within about a second, are synced to the idle
// group on B, and a consumer of that group on B resumes with exactly the next record when the
// group was caught up. A group active on B is not synced and kmm says why.
func TestCheckpointsAndGroupSync(t *testing.T) {
	bed := testbed.Attach(t)
	ctx := context.Background()
	topic := testbed.Unique(t, "ck")
	group, active := testbed.Unique(t, "g"), testbed.Unique(t, "act")
	const parts = 3
	bed.A.CreateTopic(t, topic, parts, nil)
	bed.A.Produce(t, seqRecords(topic, parts, 0, 3000)) // 1000 per partition
	props := writeProps(t, "clusters = A, B", "A->B.enabled = true", "A->B.topics = "+regexp.QuoteMeta(topic),
		"A->B.groups = "+regexp.QuoteMeta(group)+"|"+regexp.QuoteMeta(active),
		"A->B.sync.group.offsets.enabled = true", "A->B.sync.group.offsets.interval.seconds = 1",
		// Dense offset syncs, so each new commit below maps to a new downstream offset (checkpoints
		// are only re-emitted when the downstream offset advances, as in MM2).
		"A->B.offset.lag.max = 1")
	p := startKMM(t, "replicate", props, "-o", "json")
	remote := "A." + topic
	waitCount(t, bed.B, remote, parts, 3000, time.Minute)

	aA, aB := bed.A.Admin(t), bed.B.Admin(t)
	commit := func(g string, offs map[int32]int64) {
		m := map[rdkafka.TP]rdkafka.OffsetMeta{}
		for p, o := range offs {
			m[rdkafka.TP{Topic: topic, Partition: p}] = rdkafka.OffsetMeta{Offset: o, Metadata: "m"}
		}
		if err := aA.AlterGroupOffsets(ctx, g, m); err != nil {
			t.Fatal(err)
		}
	}
	// Caught up on partition 0, lagging on 1 and 2.
	commit(group, map[int32]int64{0: 1000, 1: 640, 2: 123})
	var onB map[rdkafka.TP]rdkafka.OffsetMeta
	testbed.Eventually(t, 30*time.Second, func() error {
		var err error
		onB, err = aB.ListGroupOffsets(ctx, group)
		if err != nil {
			return err
		}
		if len(onB) < parts {
			return fmt.Errorf("group %s on B has %d partitions committed", group, len(onB))
		}
		// The first checkpoints may use the syncs read so far (a loaded machine: 659 of 1000);
		// the group's offset moves on as the checkpointer reads the rest.
		if o := onB[rdkafka.TP{Topic: remote, Partition: 0}]; o.Offset != 1000 || o.Metadata != "m" {
			return fmt.Errorf("caught-up partition translated to %+v, want exactly 1000 with metadata", o)
		}
		return nil
	})
	for _, pc := range []struct {
		p     int32
		upstr int64
	}{{1, 640}, {2, 123}} {
		o := onB[rdkafka.TP{Topic: remote, Partition: pc.p}].Offset
		// Same layout on both sides here, so the translation must skip nothing (≤ upstream)
		// and re-read at most offset.lag.max records.
		if o > pc.upstr || pc.upstr-o > 100 {
			t.Fatalf("partition %d: %d translated to %d", pc.p, pc.upstr, o)
		}
	}

	// A consumer of the group on B gets exactly the next record of the caught-up partition.
	bed.A.Produce(t, []rdkafka.Record{{Topic: topic, Partition: 0, Value: seqValue(0, 999_999)}})
	waitCount(t, bed.B, remote, parts, 3001, time.Minute)
	c, err := rdkafka.NewConsumer("B", rdkafka.Config{"bootstrap.servers": bed.B.Bootstrap, "group.id": group, "auto.offset.reset": "earliest"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Assign(map[rdkafka.TP]int64{{Topic: remote, Partition: 0}: 1000}); err != nil {
		t.Fatal(err)
	}
	recs, err := c.Poll(ctx, 1, 20*time.Second)
	c.Close()
	if err != nil || len(recs) != 1 || binary.BigEndian.Uint64(recs[0].Value[8:]) != 999_999 {
		t.Fatalf("first record for the group on B: %v %v", recs, err)
	}

	// Freshness: commits on A → checkpoints on B.
	lat := checkpointLatencies(t, bed, group, topic, remote, commit, 100)
	slices.Sort(lat)
	p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
	t.Logf("commit on A -> checkpoint on B over %d commits: p50 %s, p99 %s, max %s", len(lat), p50, p99, lat[len(lat)-1])
	if p99 > 3*time.Second {
		t.Errorf("checkpoint p99 %s is far above the 1 s target", p99)
	}

	// A group with a live member on B is not synced, and kmm says so.
	cons, err := rdkafka.NewConsumer("B", rdkafka.Config{"bootstrap.servers": bed.B.Bootstrap, "group.id": active, "session.timeout.ms": "10000"})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	if err := cons.Subscribe(remote); err != nil {
		t.Fatal(err)
	}
	testbed.Eventually(t, 30*time.Second, func() error {
		_, _ = cons.Poll(ctx, 10, 100*time.Millisecond)
		ds, err := aB.DescribeGroups(ctx, active)
		if err != nil || len(ds) != 1 || ds[0].Members != 1 {
			return fmt.Errorf("active group not stable yet: %+v %v", ds, err)
		}
		return nil
	})
	commit(active, map[int32]int64{0: 500})
	testbed.Eventually(t, 30*time.Second, func() error {
		_, _ = cons.Poll(ctx, 10, 100*time.Millisecond)
		if !strings.Contains(p.stdout.String(), "group "+active+" not synced") {
			return fmt.Errorf("no warning about active group %s yet", active)
		}
		return nil
	})
	if code := p.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
	// Checkpoints decode with MM2's own formatter.
	lines := bed.JavaConsole(t, bed.B, "A.checkpoints.internal", "org.apache.kafka.connect.mirror.formatters.CheckpointFormatter", 1_000_000)
	found := false
	for _, l := range lines {
		if strings.Contains(l, "consumerGroupId="+group) && strings.Contains(l, "topicPartition="+remote+"-0") {
			found = true
		}
	}
	if !found {
		t.Fatalf("CheckpointFormatter shows no checkpoint of %s (%d lines)", group, len(lines))
	}
}

func seqValue(part, seq int) []byte {
	v := make([]byte, 16)
	binary.BigEndian.PutUint64(v, uint64(part))
	binary.BigEndian.PutUint64(v[8:], uint64(seq))
	return v
}

// checkpointLatencies commits n new offsets of group on partition 1 and measures how long each
// takes to appear as a checkpoint on B.
func checkpointLatencies(t *testing.T, bed *testbed.Bed, group, topic, remote string, commit func(string, map[int32]int64), n int) []time.Duration {
	t.Helper()
	ctx := context.Background()
	aB := bed.B.Admin(t)
	end, err := aB.ListOffsets(ctx, []rdkafka.TP{{Topic: "A.checkpoints.internal"}}, rdkafka.Latest)
	if err != nil {
		t.Fatal(err)
	}
	c, err := rdkafka.NewConsumer("B", bed.B.Config())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Assign(map[rdkafka.TP]int64{{Topic: "A.checkpoints.internal"}: end[rdkafka.TP{Topic: "A.checkpoints.internal"}].Offset}); err != nil {
		t.Fatal(err)
	}
	var out []time.Duration
	for i := 0; i < n; i++ {
		up := int64(700 + i*3) // stays below the 1000 records of the partition
		start := time.Now()
		commit(group, map[int32]int64{1: up})
		deadline := start.Add(20 * time.Second)
		for got := false; !got; {
			if time.Now().After(deadline) {
				t.Fatalf("no checkpoint for upstream offset %d within 20s", up)
			}
			recs, err := c.Poll(ctx, 100, 100*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				cp, err := mm2wire.DecodeCheckpoint(r.Key, r.Value)
				if err == nil && cp.Group == group && cp.Topic == remote && cp.Partition == 1 && cp.UpstreamOffset == up {
					got = true
				}
			}
		}
		out = append(out, time.Since(start))
	}
	return out
}
