package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// Offset translation continues across switches between MM2 and kmm: each writes checkpoints the
// other (and `kmm translate-offsets`) reads, and a caught-up group translates to the same exact
// offset whichever tool wrote the latest checkpoint.
func TestInteropCheckpointContinuity(t *testing.T) {
	bed := testbed.Attach(t)
	al := newAliases()
	topic, group := testbed.Unique(t, "ckc"), testbed.Unique(t, "g")
	const parts = 2
	bed.A.CreateTopic(t, topic, parts, nil)
	flow := al.A + "->" + al.B
	props := interopProps(t, bed, al, 2, flow+".enabled = true", flow+".topics = "+regexp.QuoteMeta(topic),
		flow+".groups = "+regexp.QuoteMeta(group), flow+".refresh.groups.interval.seconds = 1")
	remote := al.A + "." + topic
	aA := bed.A.Admin(t)
	produced := 0
	// step produces per partition more records, commits the group at the end on A (caught up),
	// and waits until translate-offsets shows a checkpoint at exactly that offset on B.
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

	mm2 := startTool(t, bed, "MM2", props)
	step("MM2", 300) // MM2 writes the checkpoint
	mm2.stop(t)
	k := startTool(t, bed, "kmm", props)
	// kmm loads MM2's checkpoints and syncs: the translation does not change.
	waitCheckpoints(t, props, al, group, parts, int64(produced/parts), "kmm after MM2")
	step("kmm", 200) // kmm writes the next one
	k.stop(t)
	mm2 = startTool(t, bed, "MM2", props)
	waitCheckpoints(t, props, al, group, parts, int64(produced/parts), "MM2 after kmm")
	step("MM2 again", 100) // and MM2 continues from kmm's
	mm2.stop(t)
}

// waitCheckpoints polls `kmm translate-offsets` until every partition of group has a checkpoint
// whose target offset is exactly end (same layout on both sides: a caught-up group maps 1:1).
func waitCheckpoints(t *testing.T, props string, al aliases, group string, parts int, end int64, who string) {
	t.Helper()
	testbed.Eventually(t, 90*time.Second, func() error {
		r := Run(t, "translate-offsets", props, "--source", al.A, "--target", al.B, "--group", group, "-o", "json")
		var env struct {
			Items []struct {
				Rows []struct {
					Partition    int32 `json:"partition"`
					TargetOffset int64 `json:"target_offset"`
					Checkpoint   int64 `json:"checkpoint_offset"`
					Exact        bool  `json:"exact"`
				} `json:"rows"`
			} `json:"items"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &env); err != nil || len(env.Items) != 1 {
			return fmt.Errorf("%s: translate-offsets: %v %s %s", who, err, r.Stdout, r.Stderr)
		}
		rows := env.Items[0].Rows
		if len(rows) != parts {
			return fmt.Errorf("%s: %d rows", who, len(rows))
		}
		for _, row := range rows {
			if row.Checkpoint != end || row.TargetOffset != end || !row.Exact {
				return fmt.Errorf("%s: partition %d: checkpoint %d, translated %d (exact %v), want %d", who, row.Partition, row.Checkpoint, row.TargetOffset, row.Exact, end)
			}
		}
		return nil
	})
	t.Logf("%s: group %s translates exactly to %d on every partition", who, group, end)
}
