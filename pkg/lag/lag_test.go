package lag

import (
	"reflect"
	"testing"
	"time"
)

func TestCompute(t *testing.T) {
	now := time.UnixMilli(1_700_000_100_000)
	rows := Compute([]PartitionInput{
		{Flow: "A->B", Topic: "t", RemoteTopic: "A.t", Partition: 0, SourceStart: 0, SourceEnd: 100, Stored: 99},
		{Flow: "A->B", Topic: "t", RemoteTopic: "A.t", Partition: 1, SourceStart: 0, SourceEnd: 100, Stored: 49, OldestUnreplicatedMs: 1_700_000_040_000},
		{Flow: "A->B", Topic: "u", RemoteTopic: "A.u", Partition: 0, SourceStart: 10, SourceEnd: 30, Stored: -1, OldestUnreplicatedMs: 1_700_000_090_000},
		{Flow: "A->B", Topic: "v", RemoteTopic: "A.v", Partition: 0, SourceStart: 80, SourceEnd: 90, Stored: 19},
	}, now)
	want := []PartitionLag{
		{Flow: "A->B", Topic: "t", RemoteTopic: "A.t", Partition: 1, SourceEnd: 100, Next: 50, NextMax: 100, LagRecords: 50, LagSeconds: 60, Started: true, PositionSource: FromProgress},
		{Flow: "A->B", Topic: "u", RemoteTopic: "A.u", Partition: 0, SourceEnd: 30, Next: 10, NextMax: 30, LagRecords: 20, LagSeconds: 10, PositionSource: FromNone},
		// records wait and the oldest one's timestamp is not known: -1 (JSON null), never 0
		{Flow: "A->B", Topic: "v", RemoteTopic: "A.v", Partition: 0, SourceEnd: 90, Next: 20, NextMax: 90, LagRecords: 10, LagSeconds: -1, Started: true, LostToRetention: 60, PositionSource: FromProgress},
		{Flow: "A->B", Topic: "t", RemoteTopic: "A.t", Partition: 0, SourceEnd: 100, Next: 100, NextMax: 100, Started: true, Exact: true, PositionSource: FromProgress},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Fatalf("got  %+v\nwant %+v", rows, want)
	}
	v := Violations(rows, Thresholds{MaxRecords: 15, MaxTime: 30 * time.Second})
	if len(v) != 3 {
		t.Fatalf("violations %q", v)
	}
	if len(Violations(rows, Thresholds{})) != 0 {
		t.Fatal("no thresholds, no violations")
	}
}

func TestComputeGroups(t *testing.T) {
	rows := ComputeGroups([]GroupInput{
		{Flow: "A->B", Group: "g", Topic: "t", RemoteTopic: "A.t", Partition: 0, Committed: 90, SourceEnd: 100, Next: 95, NextMax: 98, Translated: 88, TargetEnd: 95, Bound: 3},
		{Flow: "A->B", Group: "g", Topic: "t", RemoteTopic: "A.t", Partition: 1, Committed: 100, SourceEnd: 100, Next: 100, NextMax: 100, Translated: 100, TargetEnd: 100, Bound: 0},
		{Flow: "A->B", Group: "h", Topic: "t", RemoteTopic: "A.t", Partition: 0, Committed: -1, SourceEnd: 100, Next: -1, NextMax: -1, Translated: -1, TargetEnd: -1, Bound: -1},
	})
	want := []GroupLag{
		{Flow: "A->B", Group: "g", Topic: "t", RemoteTopic: "A.t", Partition: 0, LagOnSource: 10, LagOnTarget: 7, WouldReread: 3, CouldMiss: 5, CouldMissMin: 2},
		{Flow: "A->B", Group: "g", Topic: "t", RemoteTopic: "A.t", Partition: 1, LagOnSource: 0, LagOnTarget: 0, WouldReread: 0, CouldMiss: 0, CouldMissMin: 0},
		{Flow: "A->B", Group: "h", Topic: "t", RemoteTopic: "A.t", Partition: 0, LagOnSource: -1, LagOnTarget: -1, WouldReread: -1, CouldMiss: -1, CouldMissMin: -1},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Fatalf("got  %+v\nwant %+v", rows, want)
	}
}

func TestReplicatedPosition(t *testing.T) {
	t0 := time.UnixMilli(1_700_000_000_000)
	tNow := t0.Add(50 * time.Second)
	yes, no := true, false
	cases := []struct {
		name     string
		in       PositionInput
		next     int64
		max      int64
		exact    bool
		source   string
		onTarget bool
	}{
		{"nothing anywhere", PositionInput{SourceStart: 0, SourceEnd: 100, TargetEnd: 0}, 0, 0, true, FromNone, false},
		// progress flushed at 40 of 100, but the target holds 100 records after the sync (0 -> 0)
		{"sync through target end beats old progress", PositionInput{SourceStart: 0, SourceEnd: 100, Stored: &Observed{Next: 40, At: t0},
			Sync: &SyncObserved{Upstream: 0, Downstream: 0, At: t0}, TargetEnd: 100, TargetAt: tNow}, 100, 100, true, FromTargetEnd, true},
		{"sync estimate short of the end, unverified", PositionInput{SourceStart: 0, SourceEnd: 100, Stored: &Observed{Next: 40, At: t0},
			Sync: &SyncObserved{Upstream: 10, Downstream: 5, At: t0}, TargetEnd: 65, TargetAt: tNow}, 70, 100, false, FromTargetEnd, true},
		{"sync estimate verified", PositionInput{SourceStart: 0, SourceEnd: 100, Sync: &SyncObserved{Upstream: 10, Downstream: 5},
			TargetEnd: 65, TargetAt: tNow, Verified: &yes}, 70, 70, true, FromTargetEnd, true},
		{"verification failed keeps the bound", PositionInput{SourceStart: 0, SourceEnd: 100, Sync: &SyncObserved{Upstream: 10, Downstream: 5},
			TargetEnd: 65, TargetAt: tNow, Verified: &no}, 11, 100, false, FromTargetEnd, true},
		{"progress ahead of a stale sync", PositionInput{SourceStart: 0, SourceEnd: 100, Stored: &Observed{Next: 90, At: t0},
			Sync: &SyncObserved{Upstream: 10, Downstream: 5}, TargetEnd: 50, TargetAt: tNow}, 90, 100, false, FromProgress, true},
		{"live wins", PositionInput{SourceStart: 0, SourceEnd: 100, Live: &Observed{Next: 95, At: tNow}, Stored: &Observed{Next: 90, At: t0},
			Sync: &SyncObserved{Upstream: 0, Downstream: 0}, TargetEnd: 100}, 95, 95, true, FromLive, true},
		{"sync at the target end: that record is not there yet", PositionInput{SourceStart: 0, SourceEnd: 100,
			Sync: &SyncObserved{Upstream: 30, Downstream: 20}, TargetEnd: 20, TargetAt: tNow}, 30, 100, false, FromTargetEnd, true},
		{"estimate past the source end is clamped", PositionInput{SourceStart: 0, SourceEnd: 100, Sync: &SyncObserved{Upstream: 90, Downstream: 0},
			TargetEnd: 50, TargetAt: tNow}, 100, 100, true, FromTargetEnd, true},
		{"source down: no upper bound", PositionInput{SourceStart: -1, SourceEnd: -1, Stored: &Observed{Next: 40, At: t0}, TargetEnd: 40},
			40, -1, false, FromProgress, true},
	}
	for _, c := range cases {
		p := ReplicatedPosition(c.in)
		if p.Next != c.next || p.Max != c.max || p.Exact != c.exact || p.Source != c.source || p.OnTarget != c.onTarget {
			t.Errorf("%s: got %+v, want next %d max %d exact %v source %s onTarget %v", c.name, p, c.next, c.max, c.exact, c.source, c.onTarget)
		}
		if up, lo := p.Remaining(c.in.SourceEnd); c.in.SourceEnd >= 0 && (up != c.in.SourceEnd-c.next || lo > up) {
			t.Errorf("%s: remaining %d..%d", c.name, lo, up)
		}
	}
}
