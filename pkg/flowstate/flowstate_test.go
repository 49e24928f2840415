package flowstate

import (
	"strings"
	"testing"
	"time"
)

func TestFlowRoundTripAndTransitions(t *testing.T) {
	at := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	cur := Newest("A->B")
	if cur.State != Replicating || cur.Epoch != 0 {
		t.Fatalf("no record: %+v", cur)
	}
	f, err := Next(cur, FailingOver, at, "planned", "ops@h", "r1")
	if err != nil || f.Epoch != 1 {
		t.Fatalf("%v %+v", err, f)
	}
	f2, err := Next(f, FailedOver, at, "planned", "ops@h", "r1")
	if err != nil || f2.Epoch != 2 {
		t.Fatalf("%v %+v", err, f2)
	}
	f2.Cut = []PartitionCut{{Topic: "t", Partition: 1, SourceEnd: 10, Replicated: 10, TargetEnd: 12}}
	b, err := Encode(f2)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeFlow(b)
	if err != nil || got.State != FailedOver || got.Epoch != 2 || len(got.Cut) != 1 || got.Cut[0].TargetEnd != 12 {
		t.Fatalf("%v %+v", err, got)
	}
	if _, err := Next(cur, FailedOver, at, "", "", ""); err == nil {
		t.Fatal("REPLICATING -> FAILED_OVER must be refused")
	}
	if _, err := Next(f2, FailingOver, at, "", "", ""); err == nil {
		t.Fatal("FAILED_OVER -> FAILING_OVER must be refused")
	}
	if n := Newest("A->B", f, nil, f2); n != f2 {
		t.Fatalf("newest: %+v", n)
	}
}

func TestDecodeRefusesNewerAndWrongType(t *testing.T) {
	if _, err := DecodeFlow([]byte(`{"v":2,"type":"flow","state":"REPLICATING"}`)); err == nil || !strings.Contains(err.Error(), "version 2") {
		t.Fatalf("newer version: %v", err)
	}
	if _, err := DecodeFlow([]byte(`{"v":1,"type":"run"}`)); err == nil {
		t.Fatal("wrong type accepted")
	}
	if _, err := DecodeFlow([]byte(`{"v":1,"type":"flow","state":"PAUSED"}`)); err == nil {
		t.Fatal("unknown state accepted")
	}
	if f, err := DecodeFlow(nil); f != nil || err != nil {
		t.Fatal("tombstone")
	}
}

func TestLeaseAndEnds(t *testing.T) {
	now := time.Now()
	l := &Lease{Flow: "A->B", Instance: "h-1", Refreshed: now.Add(-5 * time.Second), TTL: Duration(15 * time.Second)}
	b, err := Encode(l)
	if err != nil {
		t.Fatal(err)
	}
	state := map[string][]byte{LeaseKey("A", "B", "h-1"): b, LeaseKey("A", "B", "h-2"): nil, LeaseKey("A", "C", "x"): b}
	ls := Leases(state, "A", "B")
	if len(ls) != 1 || !ls[0].Alive(now) || ls[0].Alive(now.Add(20*time.Second)) {
		t.Fatalf("%+v", ls)
	}
	e := &Ends{Flow: "A->B", At: now, Ends: map[string][]int64{"t": {5, 7}}}
	b, _ = Encode(e)
	e2, err := DecodeEnds(b)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := e2.End("t", 1); !ok || v != 7 {
		t.Fatalf("%v %v", v, ok)
	}
	if _, ok := e2.End("t", 2); ok {
		t.Fatal("partition out of range")
	}
}
