package mm2read_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/pkg/checkpoint"
	"github.com/kmmproject/kmm/pkg/mm2read"
	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/offsetsync"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// kmm replicates A->B; a real consumer group on A commits caught up and lagging; the mapping
// rebuilt from the real offset-syncs topic translates the caught-up partition exactly and the
// lagging ones within the reported bound and never past. The checkpoints computed from it are
// written to B, read back, applied to the group on B with the group-offset-sync plan, and a
// consumer of the group on B receives exactly the next record (caught up) or at most bound
// re-reads (lagging). While that consumer is active, the plan and translate-offsets say why
// the group is not synced. After a replicator restart, the rebuilt mapping is still exact.
func TestRealTranslateAfterReplication(t *testing.T) {
	bed := testbed.Attach(t)
	topic := testbed.Unique(t, "cpx")
	remote := "A." + topic
	group := testbed.Unique(t, "grp")
	const parts, n = 3, 2000
	const syncsTopic = "mm2-offset-syncs.B.internal"
	bed.A.CreateTopic(t, topic, parts, nil)
	// The first half arrives in one burst (the replicator coalesces pending syncs, so they are
	// sparse there), the second half paced in batches of 100 that each reach B and get their
	// offset sync (steady traffic: a sync at least every offset.lag.max records).
	produceSeq(t, bed.A, topic, parts, 0, n/2)
	f := flowFor(bed.A, bed.B, regexp.QuoteMeta(topic))
	r := startReplicator(t, f)
	t.Cleanup(func() { _ = bed.B.Admin(t).DeleteTopics(context.Background(), remote) })
	waitEnds(t, bed.B, remote, parts, n/2, 2*time.Minute)
	for from := n / 2; from < n; from += 100 {
		produceSeq(t, bed.A, topic, parts, from, 100)
		waitSynced(t, bed.A, syncsTopic, topic, parts, int64(from+100))
	}

	// p0 caught up, p1 and p2 lagging.
	commits := map[int32]int64{0: n, 1: 1234, 2: 1567}
	consumeAndCommit(t, bed.A, group, topic, commits)

	m := waitSynced(t, bed.A, syncsTopic, topic, parts, n)
	cfg := checkpoint.Config{Source: "A", Target: "B", Policy: defaultPolicy()}
	ds := checkpoint.Compute(cfg, m, loadedEmpty(), group, groupOffsets(t, bed.A, group))
	if len(ds) != parts {
		t.Fatalf("%d decisions", len(ds))
	}
	for p := 0; p < parts; p++ {
		h := m.History(offsetsync.TP{Topic: topic, Partition: int32(p)})
		t.Logf("p%d: %d syncs kept: %v", p, len(h), h)
	}
	// The burst: the replicator coalesced the pending syncs (newest per partition), so the
	// first records may have no sync at all (a group there cannot be translated: too old) and
	// the others a bound far above offset.lag.max. Whatever is translated is still correct.
	for p := int32(0); p < parts; p++ {
		tr := m.Translate(offsetsync.TP{Topic: topic, Partition: p}, 777)
		t.Logf("burst part, p%d at 777: %v -> %d (bound %d, via %v)", p, tr.Status, tr.Downstream, tr.Bound, tr.Sync)
		if tr.Status == offsetsync.Translated {
			if got := seqOf(t, recordAt(t, bed.B, remote, p, tr.Downstream)); got > 777 || 777-got > tr.Bound {
				t.Fatalf("burst p%d: record at %d is seq %d, bound %d", p, tr.Downstream, got, tr.Bound)
			}
		} else if tr.Status != offsetsync.TooOld || tr.Sync.Upstream <= 777 {
			t.Fatalf("burst p%d: %+v", p, tr)
		}
	}
	bounds := map[int32]int64{}
	for _, d := range ds {
		p, g := d.Source.Partition, d.Source.Offset
		tr := d.Translation
		if d.Outcome != checkpoint.Emit || d.Checkpoint.Topic != remote || d.Checkpoint.UpstreamOffset != commits[p] {
			t.Fatalf("p%d: %+v", p, d)
		}
		t.Logf("p%d: group at %d -> %d on B (exact %v, bound %d, via sync %v)", p, g, tr.Downstream, tr.Exact, tr.Bound, tr.Sync)
		if g == n {
			if !tr.Exact || tr.Downstream != n {
				t.Fatalf("caught-up p%d: %+v", p, tr)
			}
			continue
		}
		if tr.Bound < 0 || tr.Exact {
			t.Fatalf("p%d: lagging group: %+v", p, tr)
		}
		if g >= n/2 && tr.Bound >= 100 {
			t.Fatalf("p%d: group at %d in the paced part: bound %d ≥ 100", p, g, tr.Bound)
		}
		// Never past: the record at the translated offset was consumed at most bound records
		// before the group's position, or is the group's next record.
		got := seqOf(t, recordAt(t, bed.B, remote, p, tr.Downstream))
		if got > g || g-got > tr.Bound {
			t.Fatalf("p%d: record at %d on B is seq %d; group at %d, bound %d", p, tr.Downstream, got, g, tr.Bound)
		}
		bounds[p] = tr.Bound
	}

	// Write the checkpoints to B and read them back (kmm's own bytes).
	cpTopic := testbed.Unique(t, "A.cp") + ".checkpoints.internal"
	bed.B.CreateTopic(t, cpTopic, 1, map[string]string{"cleanup.policy": "compact"})
	writeCheckpoints(t, bed.B, cpTopic, checkpoint.Emitted(ds))
	st := loadCheckpoints(t, bed.B, cpTopic)
	if st.Len() != parts {
		t.Fatalf("read back %d checkpoints", st.Len())
	}
	res := checkpoint.Translate(checkpoint.TranslateInput{Source: "A", Target: "B", Policy: defaultPolicy(), Checkpoints: st,
		Mapping: m, Groups: []string{group}, Now: time.Now()})
	if len(res) != 1 || !res[0].OK() || len(res[0].Rows) != parts {
		t.Fatalf("translate-offsets: %+v", res)
	}
	for _, row := range res[0].Rows {
		if row.Derived != checkpoint.FromCheckpoint || row.SourceOffset != commits[row.Partition] || row.Age < 0 || row.Age > time.Minute {
			t.Fatalf("row %+v", row)
		}
		if (row.SourceOffset == n) != row.Exact || (!row.Exact && row.Bound != bounds[row.Partition]) {
			t.Fatalf("row %+v", row)
		}
	}

	// Group offset sync to B: the group does not exist there yet.
	tg := describe(t, bed.B, group)
	t.Logf("group on B before sync: state %q members %d err %v", tg.State, tg.Members, tg.Err)
	plans := checkpoint.PlanGroupSync(st, []string{group}, map[string]checkpoint.TargetGroup{group: tg}, nil)
	if len(plans) != 1 || plans[0].Skipped != checkpoint.NotSkipped || len(plans[0].Commits) != parts {
		t.Fatalf("plan %+v", plans)
	}
	applyPlan(t, bed.B, plans[0])

	// One more record per partition; a consumer of the group on B starts at the committed
	// offsets: caught up → exactly the new record; lagging → within the bound.
	produceSeq(t, bed.A, topic, parts, n, 1)
	waitEnds(t, bed.B, remote, parts, n+1, time.Minute)
	cons, first := firstRecords(t, bed.B, group, remote, parts)
	for p := int32(0); p < parts; p++ {
		g := commits[p]
		if got := first[p]; got > g || g-got > max(bounds[p], 0) {
			t.Fatalf("p%d: consumer on B started at seq %d; group was at %d on A (bound %d)", p, got, g, bounds[p])
		}
		if g == n && first[p] != n {
			t.Fatalf("caught-up p%d: first record %d, want %d (0 duplicates, 0 skipped)", p, first[p], n)
		}
	}
	// The group is now active on B: not synced, and translate-offsets says why.
	var active checkpoint.TargetGroup
	testbed.Eventually(t, 30*time.Second, func() error {
		active = describe(t, bed.B, group)
		if active.Members == 0 {
			return fmt.Errorf("group %s on B: state %s, %d members", group, active.State, active.Members)
		}
		return nil
	})
	plans = checkpoint.PlanGroupSync(st, []string{group}, map[string]checkpoint.TargetGroup{group: active}, nil)
	if plans[0].Skipped != checkpoint.SkipActive || len(plans[0].Commits) != 0 || !strings.Contains(plans[0].Detail, "active member") {
		t.Fatalf("active plan %+v", plans[0])
	}
	t.Logf("skip: %s", plans[0].Detail)
	res = checkpoint.Translate(checkpoint.TranslateInput{Source: "A", Target: "B", Policy: defaultPolicy(), Checkpoints: st, Mapping: m,
		Groups: []string{group}, TargetGroups: map[string]checkpoint.TargetGroup{group: active}, Now: time.Now()})
	if len(res[0].Problems) != 1 || res[0].Problems[0].Kind != checkpoint.ActiveOnTarget {
		t.Fatalf("problems %+v", res[0].Problems)
	}
	cons.Close()

	// Restart the replicator between commits: the mapping is rebuilt from the topic and the
	// caught-up group is still exact; the lagging ones keep their history.
	r.Stop(t)
	produceSeq(t, bed.A, topic, parts, n+1, 300)
	commits[0] = n + 301
	consumeAndCommit(t, bed.A, group, topic, map[int32]int64{0: commits[0]})
	startReplicator(t, f)
	waitEnds(t, bed.B, remote, parts, n+301, 2*time.Minute)
	m2 := waitSynced(t, bed.A, syncsTopic, topic, parts, n+301)
	ds = checkpoint.Compute(cfg, m2, st, group, groupOffsets(t, bed.A, group))
	for _, d := range ds {
		p, tr := d.Source.Partition, d.Translation
		switch p {
		case 0:
			if d.Outcome != checkpoint.Emit || d.Reason != checkpoint.DownstreamAdvanced || !tr.Exact || tr.Downstream != n+301 {
				t.Fatalf("after restart p0: %+v", d)
			}
		default:
			if d.Outcome != checkpoint.NotNewer || tr.Bound != bounds[p] {
				t.Fatalf("after restart p%d: %+v (bound before %d)", p, d, bounds[p])
			}
		}
	}
	ps, _ := m2.PartitionStats(offsetsync.TP{Topic: topic})
	t.Logf("mapping of %s[0] after restart: %d syncs kept, %d resets", topic, ps.Entries, ps.Resets)
}

func loadedEmpty() *checkpoint.Store {
	s := checkpoint.NewStore()
	s.MarkLoaded()
	return s
}

func applyPlan(t *testing.T, c testbed.Cluster, p checkpoint.GroupPlan) {
	t.Helper()
	offs := map[rdkafka.TP]rdkafka.OffsetMeta{}
	for _, cm := range p.Commits {
		offs[rdkafka.TP{Topic: cm.TP.Topic, Partition: cm.TP.Partition}] = rdkafka.OffsetMeta{Offset: cm.Offset, Metadata: cm.Metadata}
	}
	if err := c.Admin(t).AlterGroupOffsets(context.Background(), p.Group, offs); err != nil {
		t.Fatalf("alter offsets of %s on %s: %v", p.Group, c.Name, err)
	}
}

// firstRecords subscribes a consumer of group to topic on c (starting at the group's
// committed offsets) and returns it with the seq of the first record it gets per partition.
func firstRecords(t *testing.T, c testbed.Cluster, group, topic string, parts int) (*rdkafka.Consumer, map[int32]int64) {
	t.Helper()
	cons, err := rdkafka.NewConsumer("cluster "+c.Name, rdkafka.Config{"bootstrap.servers": c.Bootstrap, "group.id": group,
		"auto.offset.reset": "error", "session.timeout.ms": "10000"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cons.Close)
	if err := cons.Subscribe(topic); err != nil {
		t.Fatal(err)
	}
	first := map[int32]int64{}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for len(first) < parts {
		recs, err := cons.Poll(ctx, 1000, 200*time.Millisecond)
		if err != nil {
			t.Fatalf("consuming %s on %s as %s (got %v): %v", topic, c.Name, group, first, err)
		}
		for _, r := range recs {
			if _, ok := first[r.Partition]; !ok {
				first[r.Partition] = seqOf(t, r)
			}
		}
	}
	return cons, first
}

// Checkpoints written by kmm decode with MM2's own CheckpointFormatter in Kafka's console
// consumer, field for field, and read back identically with kmm's loader.
func TestRealCheckpointsReadByJava(t *testing.T) {
	bed := testbed.Attach(t)
	topic := testbed.Unique(t, "A.cpj") + ".checkpoints.internal"
	bed.B.CreateTopic(t, topic, 1, map[string]string{"cleanup.policy": "compact"})
	cps := []mm2wire.Checkpoint{
		{Group: "g1", Topic: "A.orders", Partition: 3, UpstreamOffset: 10, DownstreamOffset: 110},
		{Group: "group with spaces", Topic: "A.t", Partition: 0, UpstreamOffset: 0, DownstreamOffset: 0, Metadata: "meta=1,x"},
		{Group: "ü-group-€", Topic: "orders", Partition: 2147483647, UpstreamOffset: 1 << 40, DownstreamOffset: 1<<40 + 1, Metadata: "日本語 😀"},
		{Group: strings.Repeat("g", 300), Topic: "B.x", Partition: 7, UpstreamOffset: 9_223_372_036_854_775_807, DownstreamOffset: 5, Metadata: strings.Repeat("m", 2000)},
	}
	writeCheckpoints(t, bed.B, topic, cps)
	lines := bed.JavaConsole(t, bed.B, topic, "org.apache.kafka.connect.mirror.formatters.CheckpointFormatter", len(cps))
	if len(lines) != len(cps) {
		t.Fatalf("Java read %d lines: %q", len(lines), lines)
	}
	for i, cp := range cps {
		want := fmt.Sprintf("Checkpoint{consumerGroupId=%s, topicPartition=%s-%d, upstreamOffset=%d, downstreamOffset=%d, metadata=%s}",
			cp.Group, cp.Topic, cp.Partition, cp.UpstreamOffset, cp.DownstreamOffset, cp.Metadata)
		if lines[i] != want {
			t.Fatalf("record %d: Java printed\n%s\nwant\n%s", i, lines[i], want)
		}
	}
	st := loadCheckpoints(t, bed.B, topic)
	for _, cp := range cps {
		e, ok := st.Get(cp.Group, checkpoint.TP{Topic: cp.Topic, Partition: cp.Partition})
		if !ok || e.Checkpoint != cp || e.Time.IsZero() {
			t.Fatalf("read back %+v (present %v), want %+v", e, ok, cp)
		}
	}
}

// A topic that does not exist gives ErrNoTopic; an empty topic loads as an empty store.
func TestRealReadMissingAndEmpty(t *testing.T) {
	bed := testbed.Attach(t)
	ctx := context.Background()
	s := checkpoint.NewStore()
	_, err := mm2read.LoadCheckpoints(ctx, bed.B.Open(t), testbed.Unique(t, "nope"), s, nil)
	if !errors.Is(err, mm2read.ErrNoTopic) || s.Loaded() {
		t.Fatalf("missing topic: %v (loaded %v)", err, s.Loaded())
	}
	empty := testbed.Unique(t, "empty")
	bed.B.CreateTopic(t, empty, 1, nil)
	m := offsetsync.NewStore(offsetsync.Options{})
	st, err := mm2read.LoadOffsetSyncs(ctx, bed.B.Open(t), empty, m)
	if err != nil || !m.Loaded() || st.Records != 0 {
		t.Fatalf("empty topic: %+v %v", st, err)
	}
}
