package e2e

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// The pre-IdentityReplicationPolicy "no prefix" recipe (replication.policy.separator and
// source.cluster.alias empty), which real MM2 files use: Apache MM2 4.1.1 runs it, keeping topic
// names and naming its internal topics without separators. kmm takes over from it on the same
// file: it resumes from MM2's stored positions (source partitions of cluster ""), translates the
// group from MM2's checkpoints in "checkpointsinternal", and writes heartbeats keyed ("", B) as
// MM2 does.
func TestInteropEmptySeparatorTakeover(t *testing.T) {
	bed := testbed.Attach(t)
	al := newAliases()
	topic, group := testbed.Unique(t, "nosep"), testbed.Unique(t, "g")
	const parts = 2
	bed.A.CreateTopic(t, topic, parts, nil)
	flow := al.A + "->" + al.B
	props := interopProps(t, bed, al, 2, flow+".enabled = true", flow+".topics = "+regexp.QuoteMeta(topic),
		flow+".groups = "+regexp.QuoteMeta(group), flow+".refresh.groups.interval.seconds = 1",
		"replication.policy.separator =", "source.cluster.alias =")
	// The one warning: what the empty separator means. Nothing about source.cluster.alias,
	// which MM2 uses.
	sideBySide(t, props, map[string]string{"replication.policy.separator": "separator-empty"})
	remote := topic // no prefix
	checkpoints := "checkpointsinternal"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = bed.B.Admin(t).DeleteTopics(ctx, remote, checkpoints)
	})
	aA, aB := bed.A.Admin(t), bed.B.Admin(t)
	produced := 0
	step := func(who string, per int) {
		bed.A.Produce(t, seqRecords(topic, parts, produced, per*parts))
		produced += per * parts
		end := int64(produced / parts)
		waitCount(t, bed.B, remote, parts, produced, 2*time.Minute)
		offs := map[rdkafka.TP]rdkafka.OffsetMeta{}
		for p := 0; p < parts; p++ {
			offs[rdkafka.TP{Topic: topic, Partition: int32(p)}] = rdkafka.OffsetMeta{Offset: end, Metadata: who}
		}
		if err := aA.AlterGroupOffsets(context.Background(), group, offs); err != nil {
			t.Fatal(err)
		}
		waitCheckpoints(t, props, al, group, parts, end, who)
	}

	m := startTool(t, bed, "MM2", props)
	step("MM2", 400)
	m.stop(t)
	ts, err := aB.ListTopics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{remote, checkpoints, "heartbeats"} {
		if _, ok := ts[want]; !ok {
			t.Fatalf("MM2 did not create %s on %s (topics: %d)", want, bed.B.Name, len(ts))
		}
	}
	ends := checkPositionsOf(t, "MM2", bed.B, al.A, "", topic, remote, parts)
	t.Logf("MM2 stored positions under cluster \"\" for %d records in %s", sum(ends), remote)
	hbEnd := endOffsets(t, bed.B, "heartbeats", 1)[0]

	k := startTool(t, bed, "kmm", props)
	// kmm reads MM2's checkpoints: the translation is unchanged before kmm writes its own.
	waitCheckpoints(t, props, al, group, parts, int64(produced/parts), "kmm after MM2")
	step("kmm", 300)
	testbed.Eventually(t, 30*time.Second, func() error {
		pairs, err := heartbeatPairs(aB, bed.B, "heartbeats", hbEnd)
		if err != nil {
			return err
		}
		if !pairs["->"+al.B] {
			return fmt.Errorf("no heartbeat keyed (\"\", %q) on %s since kmm started (keys %v)", al.B, bed.B.Name, sortedKeys(pairs))
		}
		return nil
	})
	k.stop(t)
	checkPositionsOf(t, "kmm", bed.B, al.A, "", topic, remote, parts)
	assertExactlyOnce(t, bed, bed.A, bed.B, topic, remote, parts, produced)
}
