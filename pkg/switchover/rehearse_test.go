package switchover_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed/kfakebed"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/plan"
	"github.com/kmmproject/kmm/pkg/switchover"
)

// A rehearsal end to end on in-process clusters: the source and its copy hold the same records,
// group g1 is committed on the source (and, differently, on the target). The rehearsal deletes a
// leftover shadow group, commits g1's translation to kmm-rehearse.g1, proves each shadow position
// by the records (equal, or both at the end), deletes the shadow groups and leaves g1 on the
// target as it was. With a shadow commit tampered one record early, the verify step says
// "differs": it compares records, it does not trust the translation.
func TestRehearsal(t *testing.T) {
	t.Parallel() // own in-process clusters per case: waits overlap with the other tests of the package
	for _, tamper := range []bool{false, true} {
		t.Run(fmt.Sprintf("tamper=%v", tamper), func(t *testing.T) { t.Parallel(); rehearsal(t, tamper) })
	}
}

func rehearsal(t *testing.T, tamper bool) {
	a, b := kfakebed.Start(t, "A"), kfakebed.Start(t, "B")
	f := kfakebed.Flow(a, b, "orders")
	a.CreateTopic(t, "orders", 2)
	b.CreateTopic(t, "A.orders", 2)
	base := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	for _, side := range []struct {
		c     kfakebed.Cluster
		topic string
	}{{a, "orders"}, {b, "A.orders"}} {
		var recs []cluster.Record
		for p := int32(0); p < 2; p++ {
			for i := 0; i < 10; i++ {
				recs = append(recs, cluster.Record{Topic: side.topic, Partition: p, Key: []byte(fmt.Sprintf("k%d-%d", p, i)), Value: []byte(fmt.Sprintf("v%d", i)),
					Timestamp: base.Add(time.Duration(i) * time.Millisecond), Headers: []cluster.Header{{Key: "seq", Value: []byte{byte(i)}}}})
			}
		}
		side.c.Produce(t, recs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	src, tgt := a.Open(t), b.Open(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(src.AlterGroupOffsets(ctx, "g1", map[cluster.TP]cluster.OffsetMeta{{Topic: "orders", Partition: 0}: {Offset: 4}, {Topic: "orders", Partition: 1}: {Offset: 10}}))
	realOnB := map[cluster.TP]cluster.OffsetMeta{{Topic: "A.orders", Partition: 0}: {Offset: 1}, {Topic: "A.orders", Partition: 1}: {Offset: 2}}
	must(tgt.AlterGroupOffsets(ctx, "g1", realOnB))
	must(tgt.AlterGroupOffsets(ctx, "kmm-rehearse.old", map[cluster.TP]cluster.OffsetMeta{{Topic: "A.orders", Partition: 0}: {Offset: 3}}))

	fo := &switchover.Failover{F: f, Src: src, Tgt: tgt, Groups: []string{"g1"}, TPs: []cluster.TP{{Topic: "orders", Partition: 0}, {Topic: "orders", Partition: 1}},
		Opt: switchover.FailoverOptions{Mode: "rehearse", Timeout: time.Minute}}
	r := &switchover.Rehearsal{Fo: fo, Leftover: []string{"kmm-rehearse.old"}}
	must(r.Prepare(ctx))
	p, err := r.Plan()
	must(err)
	if tamper {
		for i, s := range p.Steps {
			if s.Kind == switchover.KindCommitShadow {
				var sp switchover.ShadowParams
				must(json.Unmarshal(s.Params, &sp))
				sp.Offsets[0].Offset--
				p.Steps[i].Params, _ = json.Marshal(sp)
			}
		}
	}
	ex := &plan.Executor{Journal: &plan.MemJournal{}, Actions: r.Actions()}
	run, _, err := ex.Begin(ctx, p)
	must(err)
	run, err = ex.Execute(ctx, p, run)
	must(err)
	got := map[string]string{}
	for _, c := range r.Checks() {
		got[fmt.Sprintf("%s[%d]@%d", c.RemoteTopic, c.Partition, c.ShadowOffset)] = c.Result
	}
	want := map[string]string{"A.orders[0]@4": "equal", "A.orders[1]@10": "at-end"}
	if tamper {
		want = map[string]string{"A.orders[0]@3": "differs", "A.orders[1]@10": "at-end"}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("checks %v, want %v (%+v)", got, want, r.Checks())
	}
	for _, e := range r.Translated() {
		if !e.Exact || e.TargetOffset != e.SourceOffset {
			t.Errorf("translation %+v", e)
		}
	}
	// No progress nor offset sync here: the replicated position is unknown (a lower bound of 0),
	// so all 10 records per partition are "not known to be replicated".
	if ps := r.Partitions(); len(ps) != 2 || ps[0].ReplicatedExact || ps[0].NotReplicated != 10 || ps[1].SourceEnd != 10 {
		t.Errorf("partitions %+v", r.Partitions())
	}
	for _, g := range []string{"kmm-rehearse.g1", "kmm-rehearse.old"} {
		if offs, err := tgt.ListGroupOffsets(ctx, g); err != nil || len(offs) != 0 {
			t.Errorf("shadow group %s left: %v %v", g, offs, err)
		}
	}
	if offs, err := tgt.ListGroupOffsets(ctx, "g1"); err != nil || fmt.Sprint(offs) != fmt.Sprint(realOnB) {
		t.Errorf("g1 on B changed: %v (was %v) %v", offs, realOnB, err)
	}
	if run.Steps[0].Numbers["deleted"] != 1 {
		t.Errorf("clean-before: %+v", run.Steps[0])
	}
}
