package replicator_test

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/e2e/testbed/replbed"
	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/rdkafka"
	"github.com/kmmproject/kmm/pkg/replicator"
)

// The checkpointer's start-up read of the offset-syncs topic (12 s on a cluster where that topic
// is long) does not hold the records up, and a run stopped before that read ends still writes
// the checkpoints its offset syncs allow.
func TestRealCheckpointReadDoesNotHoldStart(t *testing.T) {
	bed := testbed.Attach(t)
	topic := testbed.Unique(t, "ckslow")
	group := testbed.Unique(t, "g")
	bed.A.CreateTopic(t, topic, 1, nil)
	recs := makeRecords(topic, 1, 1000, time.Now().Add(-time.Hour).Truncate(time.Millisecond))
	bed.A.Produce(t, recs)
	if err := bed.A.Admin(t).AlterGroupOffsets(context.Background(), group, map[rdkafka.TP]rdkafka.OffsetMeta{{Topic: topic}: {Offset: 1000}}); err != nil {
		t.Fatal(err)
	}

	const slow = 15 * time.Second
	defer replicator.SlowCheckpointRead(slow)()
	f := replbed.Flow(bed.A, bed.B, regexp.QuoteMeta(topic))
	f.EmitCheckpoints, f.CheckpointsRF, f.CheckpointPollInterval = true, 1, time.Second
	f.GroupFilter = func(g string) bool { return g == group }
	began := time.Now()
	r := replbed.Start(t, f)
	bed.B.ConsumeN(t, "A."+topic, 1, len(recs), slow)
	took := time.Since(began)
	if took >= slow-3*time.Second {
		t.Fatalf("the first 1,000 records took %s to copy: the start waited for the checkpointer's read (%s)", took.Round(time.Millisecond), slow)
	}
	t.Logf("1,000 records copied %s after the start, with the checkpointer's read slowed by %s", took.Round(time.Millisecond), slow)
	r.Stop(t) // before the read ends: the stop waits for it

	ckTopic := "A.checkpoints.internal"
	end, err := bed.B.Admin(t).ListOffsets(context.Background(), []rdkafka.TP{{Topic: ckTopic}}, rdkafka.Latest)
	if err != nil {
		t.Fatal(err)
	}
	n := int(end[rdkafka.TP{Topic: ckTopic}].Offset)
	var found *mm2wire.Checkpoint
	for _, rec := range bed.B.ConsumeN(t, ckTopic, 1, n, time.Minute) {
		cp, err := mm2wire.DecodeCheckpoint(rec.Key, rec.Value)
		if err == nil && cp.Group == group && cp.Topic == "A."+topic {
			found = &cp
		}
	}
	if found == nil {
		t.Fatalf("no checkpoint for group %s in %s after a run stopped during the checkpointer's read", group, ckTopic)
	}
	if found.UpstreamOffset != 1000 || found.DownstreamOffset != 1000 {
		t.Fatalf("checkpoint %+v, want upstream and downstream 1000", *found)
	}
}
