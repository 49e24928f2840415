package checkpoint

import (
	"errors"
	"strings"
	"testing"

	"github.com/kmmproject/kmm/pkg/mm2wire"
)

func commitsOf(cs []Commit) map[TP]int64 {
	out := map[TP]int64{}
	for _, c := range cs {
		out[c.TP] = c.Offset
	}
	return out
}

// Ports of MirrorCheckpointTaskTest.testSyncOffset and
// testSyncOffsetForTargetGroupWithNullOffsetAndMetadata, plus kmm's active-group report.
func TestPlanGroupSync(t *testing.T) {
	t1p0, t2p0, t1p1 := TP{Topic: "topic1"}, TP{Topic: "topic2"}, TP{Topic: "topic1", Partition: 1}
	st := loadedStore(
		mm2wire.Checkpoint{Group: "consumer1", Topic: "topic1", UpstreamOffset: 200, DownstreamOffset: 101, Metadata: "metadata"},
		mm2wire.Checkpoint{Group: "consumer1", Topic: "topic1", Partition: 1, UpstreamOffset: 200, DownstreamOffset: 90},
		mm2wire.Checkpoint{Group: "consumer2", Topic: "topic2", UpstreamOffset: 100, DownstreamOffset: 51, Metadata: "metadata"},
		mm2wire.Checkpoint{Group: "sarama", Topic: "topic1", UpstreamOffset: 200, DownstreamOffset: 101},
		mm2wire.Checkpoint{Group: "new", Topic: "topic1", UpstreamOffset: 7, DownstreamOffset: 8},
		mm2wire.Checkpoint{Group: "busy", Topic: "topic1", UpstreamOffset: 7, DownstreamOffset: 8},
		mm2wire.Checkpoint{Group: "rebalancing", Topic: "topic1", UpstreamOffset: 7, DownstreamOffset: 8},
		mm2wire.Checkpoint{Group: "broken", Topic: "topic1", UpstreamOffset: 7, DownstreamOffset: 8},
		mm2wire.Checkpoint{Group: "overshoot", Topic: "topic1", UpstreamOffset: 7, DownstreamOffset: 5000},
	)
	targets := map[string]TargetGroup{
		"consumer1":   {State: "Empty", Offsets: map[TP]int64{t1p0: 100, t1p1: 95}},
		"consumer2":   {State: "Empty", Offsets: map[TP]int64{t2p0: 50}},
		"sarama":      {State: "Empty", Offsets: map[TP]int64{t1p0: -1}}, // reset to -1 by a non-Java client
		"new":         {State: "Dead"},
		"busy":        {State: "Stable", Members: 3},
		"rebalancing": {State: "PreparingRebalance"},
		"broken":      {Err: errors.New("COORDINATOR_NOT_AVAILABLE")},
		"overshoot":   {State: "Dead"},
	}
	plans := PlanGroupSync(st, nil, targets, map[TP]int64{t1p0: 1000})
	byGroup := map[string]GroupPlan{}
	for _, p := range plans {
		byGroup[p.Group] = p
	}
	if len(plans) != 8 || plans[0].Group != "broken" {
		t.Fatalf("%d plans, first %s", len(plans), plans[0].Group)
	}
	// Empty: forward only. topic1[0] 100 -> 101 written; topic1[1] already at 95 ≥ 90: kept.
	p := byGroup["consumer1"]
	if c := commitsOf(p.Commits); len(c) != 1 || c[t1p0] != 101 || p.Commits[0].Metadata != "metadata" || p.Commits[0].Current != 100 {
		t.Fatalf("consumer1 %+v", p)
	}
	if len(p.UpToDate) != 1 || p.UpToDate[0].TP != t1p1 || p.UpToDate[0].Current != 95 {
		t.Fatalf("consumer1 up to date %+v", p.UpToDate)
	}
	if c := commitsOf(byGroup["consumer2"].Commits); c[t2p0] != 51 {
		t.Fatalf("consumer2 %+v", byGroup["consumer2"])
	}
	if c := commitsOf(byGroup["sarama"].Commits); c[t1p0] != 101 {
		t.Fatalf("sarama %+v", byGroup["sarama"])
	}
	if c := commitsOf(byGroup["new"].Commits); c[t1p0] != 8 {
		t.Fatalf("new %+v", byGroup["new"])
	}
	for g, why := range map[string]SkipReason{"busy": SkipActive, "rebalancing": SkipActive, "broken": SkipStateUnknown} {
		p := byGroup[g]
		if p.Skipped != why || len(p.Commits) != 0 || !strings.Contains(p.Detail, "not synced") {
			t.Fatalf("%s: %+v", g, p)
		}
	}
	if !strings.Contains(byGroup["busy"].Detail, "3 active member(s)") {
		t.Fatalf("busy detail %q", byGroup["busy"].Detail)
	}
	if p := byGroup["overshoot"]; len(p.Commits) != 0 || len(p.Refused) != 1 {
		t.Fatalf("overshoot %+v", p)
	}
	// A group not described on T is not synced.
	ps := PlanGroupSync(st, []string{"consumer1", "nocp"}, map[string]TargetGroup{}, nil)
	if ps[0].Skipped != SkipStateUnknown || ps[1].Skipped != SkipNoCheckpoints {
		t.Fatalf("%+v", ps)
	}
	ps = PlanGroupSync(st, []string{"nocp"}, map[string]TargetGroup{"nocp": {State: "Dead"}}, nil)
	if ps[0].Skipped != SkipNoCheckpoints {
		t.Fatalf("%+v", ps)
	}
}

func TestPlanApply(t *testing.T) {
	res := []GroupTranslation{
		{Group: "g", Rows: []Row{{TargetTopic: "A.t", Partition: 0, TargetOffset: 10, Metadata: "m"}, {TargetTopic: "A.t", Partition: 1, TargetOffset: 5}}},
		{Group: "busy", Rows: []Row{{TargetTopic: "A.t", TargetOffset: 10}}},
		{Group: "empty"},
	}
	targets := map[string]TargetGroup{
		"g":     {State: "Empty", Offsets: map[TP]int64{{Topic: "A.t"}: 3, {Topic: "A.t", Partition: 1}: 9}},
		"busy":  {State: "Stable", Members: 1},
		"empty": {State: "Dead"},
	}
	ps := PlanApply(res, targets, nil, ApplyOptions{})
	if len(ps[0].Commits) != 2 || len(ps[0].Backwards) != 1 || ps[0].Backwards[0].Current != 9 {
		t.Fatalf("%+v", ps[0])
	}
	if ps[1].Skipped != SkipActive || ps[2].Skipped != SkipNothingToApply {
		t.Fatalf("%+v %+v", ps[1], ps[2])
	}
	ps = PlanApply(res, targets, nil, ApplyOptions{ForwardOnly: true, Force: true})
	if len(ps[0].Commits) != 1 || len(ps[0].UpToDate) != 1 || ps[1].Skipped != NotSkipped || len(ps[1].Commits) != 1 {
		t.Fatalf("%+v %+v", ps[0], ps[1])
	}
}
