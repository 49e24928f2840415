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
		{Flow: "A->B", Topic: "t", RemoteTopic: "A.t", Partition: 1, SourceEnd: 100, Next: 50, LagRecords: 50, LagSeconds: 60, Started: true},
		{Flow: "A->B", Topic: "u", RemoteTopic: "A.u", Partition: 0, SourceEnd: 30, Next: 10, LagRecords: 20, LagSeconds: 10},
		{Flow: "A->B", Topic: "v", RemoteTopic: "A.v", Partition: 0, SourceEnd: 90, Next: 20, LagRecords: 10, Started: true, LostToRetention: 60},
		{Flow: "A->B", Topic: "t", RemoteTopic: "A.t", Partition: 0, SourceEnd: 100, Next: 100, Started: true},
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
		{Flow: "A->B", Group: "g", Topic: "t", RemoteTopic: "A.t", Partition: 0, Committed: 90, SourceEnd: 100, Next: 95, Translated: 88, TargetEnd: 95, Bound: 3},
		{Flow: "A->B", Group: "g", Topic: "t", RemoteTopic: "A.t", Partition: 1, Committed: 100, SourceEnd: 100, Next: 100, Translated: 100, TargetEnd: 100, Bound: 0},
		{Flow: "A->B", Group: "h", Topic: "t", RemoteTopic: "A.t", Partition: 0, Committed: -1, SourceEnd: 100, Next: -1, Translated: -1, TargetEnd: -1, Bound: -1},
	})
	want := []GroupLag{
		{Flow: "A->B", Group: "g", Topic: "t", RemoteTopic: "A.t", Partition: 0, LagOnSource: 10, LagOnTarget: 7, WouldReread: 3, CouldMiss: 5},
		{Flow: "A->B", Group: "g", Topic: "t", RemoteTopic: "A.t", Partition: 1, LagOnSource: 0, LagOnTarget: 0, WouldReread: 0, CouldMiss: 0},
		{Flow: "A->B", Group: "h", Topic: "t", RemoteTopic: "A.t", Partition: 0, LagOnSource: -1, LagOnTarget: -1, WouldReread: -1, CouldMiss: -1},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Fatalf("got  %+v\nwant %+v", rows, want)
	}
}
