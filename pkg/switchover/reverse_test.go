package switchover_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed/kfakebed"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flowstate"
	"github.com/kmmproject/kmm/pkg/mm2read"
	"github.com/kmmproject/kmm/pkg/switchover"
)

// The reverse flow's resume positions: stored at B's ends (end-1, MM2's "last replicated
// offset") in mm2-offsets.B.internal on A with MM2's exact key bytes, read back by the reader kmm
// replicate and lag use; a second store writes nothing; a position a reverse replicator already
// moved past is never moved back.
func TestReverseProgressStoreAtEnds(t *testing.T) {
	a, b := kfakebed.Start(t, "A"), kfakebed.Start(t, "B")
	rev := kfakebed.Flow(b, a, "orders")
	b.CreateTopic(t, "orders", 2)
	b.CreateTopic(t, "other", 1)
	var recs []cluster.Record
	for i := 0; i < 8; i++ {
		recs = append(recs, cluster.Record{Topic: "orders", Partition: int32(i % 2), Value: []byte("v")})
	}
	b.Produce(t, recs)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bc, ac := b.Open(t), a.Open(t)
	ends, err := switchover.ReverseEnds(ctx, rev, bc)
	if err != nil {
		t.Fatal(err)
	}
	res, err := bc.ListOffsets(ctx, []cluster.TP{{Topic: "orders", Partition: 0}, {Topic: "orders", Partition: 1}}, cluster.Latest)
	if err != nil {
		t.Fatal(err)
	}
	want := []flowstate.TopicEnd{{Topic: "orders", Partition: 0, End: res[cluster.TP{Topic: "orders", Partition: 0}].Offset},
		{Topic: "orders", Partition: 1, End: res[cluster.TP{Topic: "orders", Partition: 1}].Offset}}
	if len(ends) != 2 || ends[0] != want[0] || ends[1] != want[1] || want[0].End+want[1].End != 8 {
		t.Fatalf("reverse ends %+v, want %+v (topic 'other' is not the reverse flow's)", ends, want)
	}
	rp := switchover.ReverseProgress{Rev: rev, On: ac}
	miss, err := rp.Missing(ctx, ends)
	if err != nil || len(miss) != 2 {
		t.Fatalf("missing before the store: %+v %v", miss, err)
	}
	if n, err := rp.Store(ctx, miss); err != nil || n != 2 {
		t.Fatalf("store: %d %v", n, err)
	}
	pos, err := mm2read.ReadSourcePositions(ctx, ac, rev.OffsetsTopic, rev.SourceAlias)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ends {
		if got := pos[cluster.TP{Topic: e.Topic, Partition: e.Partition}]; got != e.End-1 {
			t.Errorf("%s[%d]: stored %d, want %d", e.Topic, e.Partition, got, e.End-1)
		}
	}
	raw := a.ReadAll(t, rev.OffsetsTopic)
	if len(raw) != 2 {
		t.Fatalf("offsets topic holds %d records, want 2", len(raw))
	}
	if !strings.HasPrefix(string(raw[0].Key), `["MirrorSourceConnector",{"cluster":"B","partition":`) || !strings.HasPrefix(string(raw[0].Value), `{"offset":`) {
		t.Errorf("offsets topic record: key %q value %q", raw[0].Key, raw[0].Value)
	}
	if miss, err := rp.Missing(ctx, ends); err != nil || len(miss) != 0 {
		t.Errorf("missing after the store: %+v %v", miss, err)
	}
	// A reverse replicator that ran further is not moved back.
	ahead := []flowstate.TopicEnd{{Topic: "orders", Partition: 0, End: ends[0].End + 10}}
	if _, err := rp.Store(ctx, ahead); err != nil {
		t.Fatal(err)
	}
	if miss, err := rp.Missing(ctx, ends); err != nil || len(miss) != 0 {
		t.Errorf("an older end is missing after the position moved past it: %+v %v", miss, err)
	}
}

// The fence is the failover's first step: acl lists one DENY WRITE binding per topic and
// principal, hook carries the command; none with --quiet-for waits instead; the reverse flow's
// progress is a step before the last mark in planned mode and a note in emergency mode.
func TestFailoverPlanFenceAndReverse(t *testing.T) {
	a, b := kfakebed.Start(t, "A"), kfakebed.Start(t, "B")
	f, rev := kfakebed.Flow(a, b, "orders|billing"), kfakebed.Flow(b, a, ".*")
	tps := []cluster.TP{{Topic: "billing", Partition: 0}, {Topic: "orders", Partition: 0}, {Topic: "orders", Partition: 1}}
	mk := func(opt switchover.FailoverOptions) []string {
		fo := &switchover.Failover{F: f, TPs: tps, Groups: []string{"g"}, Opt: opt}
		p, err := fo.Plan()
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, s := range p.Steps {
			ids = append(ids, s.ID)
			if s.ID == "fence/acl" {
				var fp switchover.FenceParams
				if err := json.Unmarshal(s.Params, &fp); err != nil {
					t.Fatal(err)
				}
				if len(fp.ACLs) != 4 || fp.ACLs[0].Topic != "billing" || fp.ACLs[0].Principal != "User:alice" || fp.ACLs[3].Topic != "orders" || fp.ACLs[3].Principal != "User:bob" {
					t.Errorf("fence ACLs: %+v", fp.ACLs)
				}
			}
		}
		ids = append(ids, p.Notes...)
		return ids
	}
	got := strings.Join(mk(switchover.FailoverOptions{Fence: switchover.FenceOptions{Method: "acl", Principals: []string{"User:alice", "User:bob"}}, QuietFor: time.Second, Reverse: rev}), ",")
	if got != "fence/acl,drain,mark/FAILING_OVER,replicators-stopped,commit-offsets/g,reverse-progress,mark/FAILED_OVER" {
		t.Errorf("acl plan: %s", got)
	}
	got = strings.Join(mk(switchover.FailoverOptions{Fence: switchover.FenceOptions{Method: "hook", Command: "true"}, Reverse: rev}), ",")
	if !strings.HasPrefix(got, "fence/hook,drain,") {
		t.Errorf("hook plan: %s", got)
	}
	got = strings.Join(mk(switchover.FailoverOptions{QuietFor: time.Second}), ",")
	if !strings.HasPrefix(got, "fence/quiet,drain,") || !strings.Contains(got, "no flow B->A") {
		t.Errorf("none plan without a reverse flow: %s", got)
	}
	got = strings.Join(mk(switchover.FailoverOptions{Emergency: true, Reverse: rev}), ",")
	if strings.Contains(got, "reverse-progress,") || !strings.Contains(got, "reverse_ends") {
		t.Errorf("emergency plan: %s", got)
	}
	if err := switchover.CheckPrincipal("alice"); err == nil {
		t.Error("principal without a type accepted")
	}
	if err := switchover.CheckPrincipal(switchover.AllPrincipals); err != nil {
		t.Error(err)
	}
}
