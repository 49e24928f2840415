package snapshot_test

import (
	"context"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed/kfakebed"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/rdkafka"
	"github.com/kmmproject/kmm/pkg/snapshot"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// What the read commands compute on, read from in-process clusters through the seam: lag from
// source offsets and resume positions in MM2's format on the target, heartbeats and progress for
// status, a missing remote topic.
func TestLagAndStatusFromClusters(t *testing.T) {
	a, b := kfakebed.Start(t, "A"), kfakebed.Start(t, "B")
	f := kfakebed.Flow(a, b, "orders|audit")
	f.EmitHeartbeats, f.HeartbeatInterval = true, time.Second
	a.CreateTopic(t, "orders", 2)
	a.CreateTopic(t, "audit", 1)
	var recs []cluster.Record
	for i := 0; i < 40; i++ {
		recs = append(recs, cluster.Record{Topic: "orders", Partition: int32(i % 2), Value: []byte("x"), Timestamp: time.Now().Add(-time.Hour)})
	}
	a.Produce(t, recs)
	b.CreateTopic(t, "A.orders", 2)
	b.CreateTopic(t, f.OffsetsTopic, f.OffsetsTopicPartitions)
	key := mm2wire.SourceOffsetKey{Connector: mm2wire.SourceConnectorName, Cluster: "A", Topic: "orders", Partition: 0}.AppendJSON(nil)
	b.Produce(t, []cluster.Record{{Topic: f.OffsetsTopic, Partition: mm2wire.PartitionForKey(key, int32(f.OffsetsTopicPartitions)), Key: key, Value: mm2wire.AppendOffsetValue(nil, 14)}})
	hb := mm2wire.Heartbeat{SourceClusterAlias: "A", TargetClusterAlias: "B", Timestamp: time.Now().Add(-3 * time.Second).UnixMilli()}
	hk, err := hb.AppendKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	b.CreateTopic(t, "heartbeats", 1)
	b.Produce(t, []cluster.Record{{Topic: "heartbeats", Partition: 0, Key: hk, Value: hb.AppendValue(nil), Timestamp: time.UnixMilli(hb.Timestamp)}})

	ctx := context.Background()
	rows, err := snapshot.Lag(ctx, rdkafka.Opener{}, []*flow.Flow{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int32]int64{}
	for _, r := range rows {
		if r.Topic == "orders" {
			got[r.Partition] = r.LagRecords
		}
	}
	// orders[0]: 20 records, stored position 14 (next 15): 5 behind; orders[1]: nothing stored.
	if len(rows) != 3 || got[0] != 5 || got[1] != 20 {
		t.Fatalf("lag rows %+v", rows)
	}
	sts := snapshot.Status(ctx, rdkafka.Opener{}, []*flow.Flow{f})
	if len(sts) != 1 {
		t.Fatalf("status %+v", sts)
	}
	st := sts[0]
	if st.SourceErr != nil || st.TargetErr != nil || st.StoredParts != 1 || st.LastProgress.IsZero() {
		t.Fatalf("status %+v", st)
	}
	if d := time.Since(st.LastHeartbeat); d < 2*time.Second || d > time.Minute {
		t.Fatalf("last heartbeat %s ago", d)
	}
	if len(st.MissingOnT) != 1 || st.MissingOnT[0] != "audit" || len(st.SelectedTopics) != 2 {
		t.Fatalf("selected %v missing %v", st.SelectedTopics, st.MissingOnT)
	}
}

// A target whose first fetches are slow (a loaded machine, a long link: TLS, SASL, then the
// fetch) still shows its last heartbeat: status read "no heartbeat yet" when the first poll of
// the heartbeats tail came back empty.
func TestStatusHeartbeatSlowFirstFetch(t *testing.T) {
	a, b := kfakebed.Start(t, "A"), kfakebed.Start(t, "B")
	f := kfakebed.Flow(a, b, "orders")
	f.EmitHeartbeats, f.HeartbeatInterval = true, time.Second
	a.CreateTopic(t, "orders", 1)
	b.CreateTopic(t, "A.orders", 1)
	b.CreateTopic(t, "heartbeats", 1)
	hb := mm2wire.Heartbeat{SourceClusterAlias: "A", TargetClusterAlias: "B", Timestamp: time.Now().Add(-2 * time.Second).UnixMilli()}
	hk, err := hb.AppendKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Produce(t, []cluster.Record{{Topic: "heartbeats", Partition: 0, Key: hk, Value: hb.AppendValue(nil), Timestamp: time.UnixMilli(hb.Timestamp)}})
	slow := 0
	b.ControlKey(int16(kmsg.Fetch), func(kmsg.Request) (kmsg.Response, error, bool) {
		if slow++; slow <= 3 {
			b.KeepControl()
			time.Sleep(400 * time.Millisecond) // each of the first fetches answers late
		}
		return nil, nil, false
	})
	st := snapshot.Status(context.Background(), rdkafka.Opener{}, []*flow.Flow{f})[0]
	if st.LastHeartbeat.IsZero() {
		t.Fatalf("no heartbeat found behind %d slow fetches", min(slow, 3))
	}
}
