package lagcmd

import (
	"testing"
	"time"

	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/lag"
	"github.com/kmmproject/kmm/pkg/output/goldentest"
)

func TestRenderGolden(t *testing.T) {
	now := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	pos := func(in lag.PositionInput) *lag.Position { p := lag.ReplicatedPosition(in); return &p }
	yes := true
	rows := lag.Compute([]lag.PartitionInput{
		// caught up, proven by the last record on the target
		{Flow: "A->B", Topic: "orders", RemoteTopic: "A.orders", Partition: 0, SourceEnd: 1000, Stored: 899, Position: pos(lag.PositionInput{SourceEnd: 1000,
			Stored: &lag.Observed{Next: 900, At: now.Add(-40 * time.Second)}, Sync: &lag.SyncObserved{Upstream: 0, Downstream: 0}, TargetEnd: 1000, TargetAt: now, Verified: &yes})},
		// stored progress only, 12 s old: somewhere between 0 and 600 records are missing
		{Flow: "A->B", Topic: "orders", RemoteTopic: "A.orders", Partition: 1, SourceEnd: 1000, Stored: 399, OldestUnreplicatedMs: now.Add(-90 * time.Second).UnixMilli(),
			Position: pos(lag.PositionInput{SourceEnd: 1000, Stored: &lag.Observed{Next: 400, At: now.Add(-12 * time.Second)}, TargetEnd: -1})},
		{Flow: "A->B", Topic: "audit", RemoteTopic: "A.audit", Partition: 0, SourceStart: 50, SourceEnd: 80, Stored: 9},
		{Flow: "A->B", Topic: "new", RemoteTopic: "A.new", Partition: 0, SourceEnd: 5, Stored: -1, OldestUnreplicatedMs: now.Add(-2 * time.Second).UnixMilli(),
			Position: pos(lag.PositionInput{SourceEnd: 5, TargetEnd: 0, TargetAt: now})},
	}, now)
	groups := lag.ComputeGroups([]lag.GroupInput{
		{Flow: "A->B", Group: "billing", Topic: "orders", RemoteTopic: "A.orders", Partition: 1, Committed: 350, SourceEnd: 1000, Next: 400, NextMax: 1000, Translated: 340, TargetEnd: 400, Bound: 9},
		{Flow: "A->B", Group: "billing", Topic: "orders", RemoteTopic: "A.orders", Partition: 0, Committed: 1000, SourceEnd: 1000, Next: 1000, NextMax: 1000, Translated: 1000, TargetEnd: 1000, Bound: 0},
	})
	links := []lag.LinkRTT{{Cluster: "A", AvgMs: 0.8, P99Ms: 1.9, MeasuredBy: "http://127.0.0.1:8083"},
		{Cluster: "B", AvgMs: 101.2, P99Ms: 112.5, MeasuredBy: "http://127.0.0.1:8083"}}
	th := lag.Thresholds{MaxRecords: 100}
	for _, c := range []struct {
		name, out string
		tty       bool
	}{{"lag-piped.txt", "table", false}, {"lag-tty.txt", "table", true}, {"lag.json", "json", false}} {
		io, _, out, _ := iostreams.Test()
		if c.tty {
			io.SetTTY(true, true, true)
			io.SetColorMode("auto")
		}
		if err := render(io, c.out, rows, groups, links, false, th, now); err != nil {
			t.Fatal(err)
		}
		goldentest.Golden(t, c.name, out.Bytes())
	}
}
