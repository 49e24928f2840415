package lagcmd

import (
	"encoding/json"
	"strings"
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

// What is not known is "?" in the table and null in JSON, never 0 (issue 35 item 6): the age of
// records waiting whose oldest timestamp could not be read, a position of unknown age, a
// group's figures that could not be computed.
func TestRenderUnknownIsNotZero(t *testing.T) {
	now := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	rows := lag.Compute([]lag.PartitionInput{
		{Flow: "A->B", Topic: "orders", RemoteTopic: "A.orders", Partition: 0, SourceEnd: 100, Stored: 9}, // no timestamp of the oldest waiting record
	}, now)
	groups := lag.ComputeGroups([]lag.GroupInput{
		{Flow: "A->B", Group: "billing", Topic: "orders", RemoteTopic: "A.orders", Partition: 0, Committed: -1, SourceEnd: -1, Next: -1, NextMax: -1, Translated: -1, TargetEnd: -1, Bound: -1},
	})
	io, _, out, _ := iostreams.Test()
	if err := render(io, "table", rows, groups, nil, false, lag.Thresholds{}, now); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	if f := strings.Fields(lines[1]); len(f) < 10 || f[6] != "0..90" || f[7] != "?" || f[9] != "?" {
		t.Errorf("partition row %q: want LAG 0..90, LAG TIME ? and AS OF ?", lines[1])
	}
	var grow string
	for _, l := range lines {
		if strings.Contains(l, "billing") {
			grow = l
		}
	}
	if f := strings.Fields(grow); len(f) != 8 || f[4] != "?" || f[5] != "?" || f[6] != "?" || f[7] != "?" {
		t.Errorf("group row %q: want ? for every figure", grow)
	}
	io, _, out, _ = iostreams.Test()
	if err := render(io, "json", rows, groups, nil, false, lag.Thresholds{}, now); err != nil {
		t.Fatal(err)
	}
	var env struct {
		Items  []map[string]any `json:"items"`
		Groups []map[string]any `json:"groups"`
	}
	if err := json.Unmarshal(out.Bytes(), &env); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"lag_seconds", "as_of"} {
		if v, ok := env.Items[0][k]; !ok || v != nil {
			t.Errorf("items[0].%s = %v (present %v), want null", k, v, ok)
		}
	}
	if env.Items[0]["lag_records"] != float64(90) || env.Items[0]["flow"] != "A->B" {
		t.Errorf("items[0] = %v", env.Items[0])
	}
	for _, k := range []string{"lag_on_source", "lag_on_target", "failover_would_reread", "failover_could_miss", "failover_could_miss_min"} {
		if v, ok := env.Groups[0][k]; !ok || v != nil {
			t.Errorf("groups[0].%s = %v (present %v), want null", k, v, ok)
		}
	}
}
