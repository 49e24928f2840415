package consumeroffsets_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/pkg/consumeroffsets"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// Commits made by a real Kafka 4.1 broker's group coordinator decode from __consumer_offsets.
func TestRealDecodeBrokerCommits(t *testing.T) {
	bed := testbed.Attach(t)
	ctx := context.Background()
	a := bed.A.Admin(t)
	topic, group := testbed.Unique(t, "co"), testbed.Unique(t, "g")
	bed.A.CreateTopic(t, topic, 2, nil)
	md, err := a.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := md["__consumer_offsets"].Partitions
	if n == 0 {
		t.Fatal("no __consumer_offsets topic")
	}
	var tps []rdkafka.TP
	for p := 0; p < n; p++ {
		tps = append(tps, rdkafka.TP{Topic: "__consumer_offsets", Partition: int32(p)})
	}
	ends, err := a.ListOffsets(ctx, tps, rdkafka.Latest)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.AlterGroupOffsets(ctx, group, map[rdkafka.TP]rdkafka.OffsetMeta{{Topic: topic, Partition: 1}: {Offset: 17, Metadata: "meta-ü"}}); err != nil {
		t.Fatal(err)
	}
	c, err := rdkafka.NewConsumer("A", bed.A.Config())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := map[rdkafka.TP]int64{}
	for _, tp := range tps {
		start[tp] = ends[tp].Offset
	}
	if err := c.Assign(start); err != nil {
		t.Fatal(err)
	}
	var got consumeroffsets.Commit
	testbed.Eventually(t, 20*time.Second, func() error {
		recs, err := c.Poll(ctx, 1000, 200*time.Millisecond)
		if err != nil {
			return err
		}
		for _, r := range recs {
			cm, err := consumeroffsets.Decode(r.Key, r.Value)
			if err == nil && cm.Group == group {
				got = cm
				return nil
			}
		}
		return fmt.Errorf("commit of %s not seen yet", group)
	})
	if got.Topic != topic || got.Partition != 1 || got.Offset != 17 || got.Metadata != "meta-ü" || got.Timestamp < time.Now().Add(-time.Minute).UnixMilli() {
		t.Fatalf("decoded %+v", got)
	}
}
