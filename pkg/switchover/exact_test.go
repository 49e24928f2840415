package switchover_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed/kfakebed"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/offsetsync"
	"github.com/kmmproject/kmm/pkg/switchover"
)

// TranslateExact against in-process clusters: a target that holds the source's records once is
// translated exactly (including a caught-up group and one before the first sync); a target with
// duplicates between the anchor and the group's offset (an earlier crash) keeps the earlier
// offset and bounds the re-reads: never a skip.
func TestTranslateExact(t *testing.T) {
	t.Parallel() // own in-process clusters: waits overlap with the other tests of the package
	ctx := context.Background()
	s, tg := kfakebed.Start(t, "S"), kfakebed.Start(t, "T")
	s.CreateTopic(t, "orders", 1)
	tg.CreateTopic(t, "S.orders", 1)
	ts := time.UnixMilli(1_700_000_000_000)
	rec := func(topic string, i int) cluster.Record {
		return cluster.Record{Topic: topic, Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprintf("v%d", i)), Timestamp: ts.Add(time.Duration(i) * time.Millisecond)}
	}
	var src []cluster.Record
	for i := 0; i < 100; i++ {
		src = append(src, rec("orders", i))
	}
	s.Produce(t, src)
	// The target: records 0..59 once, then 50..59 again (a crash replayed them), then 60..99.
	var tgt []cluster.Record
	for i := 0; i < 60; i++ {
		tgt = append(tgt, rec("S.orders", i))
	}
	for i := 50; i < 100; i++ {
		tgt = append(tgt, rec("S.orders", i))
	}
	tg.Produce(t, tgt)
	syncs := offsetsync.NewStore(offsetsync.Options{})
	tp := offsetsync.TP{Topic: "orders", Partition: 0}
	syncs.Add(tp, offsetsync.Sync{Upstream: 10, Downstream: 10}, ts)
	syncs.Add(tp, offsetsync.Sync{Upstream: 70, Downstream: 80}, ts) // after the replay: re-anchored
	S, T := s.Open(t), tg.Open(t)
	stp, rtp := cluster.TP{Topic: "orders"}, cluster.TP{Topic: "S.orders"}
	cut := map[cluster.TP]switchover.CutPartition{stp: {Source: stp, Remote: rtp, SourceEnd: 100, TargetEnd: 110}}
	res, err := switchover.TranslateExact(ctx, S, T, syncs, cut, []switchover.GroupOffset{
		{Group: "early", TP: stp, Offset: 5},    // before the first sync: anchored on the log starts
		{Group: "mid", TP: stp, Offset: 40},     // anchor 10->10, 30 records walked: exact
		{Group: "dup", TP: stp, Offset: 65},     // anchor 10->10 walks into the replay: bound
		{Group: "late", TP: stp, Offset: 90},    // anchor 70->80: exact
		{Group: "caught", TP: stp, Offset: 100}, // the end of both
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		off   int64
		exact bool
		rr    int64
	}{"early": {5, true, 0}, "mid": {40, true, 0}, "late": {100, true, 0}, "caught": {110, true, 0},
		// 55 records walked from 10 lands on 65 (the replayed 55); the copy of 65 is at 75: re-reads ≤ 10.
		"dup": {65, false, 10}}
	for _, r := range res {
		w := want[r.Group]
		if r.TargetOffset != w.off || r.Exact != w.exact || r.Rereads != w.rr || r.Skips != 0 {
			t.Errorf("%s: %+v, want offset %d exact %v re-reads %d", r.Group, r, w.off, w.exact, w.rr)
		}
	}
	if len(res) != len(want) {
		t.Fatalf("%d results", len(res))
	}
}
