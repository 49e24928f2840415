package checkpoint

import (
	"strings"
	"testing"
	"time"

	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/offsetsync"
	"github.com/kmmproject/kmm/pkg/policy"
)

var now = time.UnixMilli(1_700_000_100_000)

func storeAt(cps ...mm2wire.Checkpoint) *Store {
	s := NewStore()
	for _, c := range cps {
		s.Put(Entry{Checkpoint: c, Time: now.Add(-30 * time.Second)})
	}
	s.MarkLoaded()
	return s
}

func kinds(g GroupTranslation) []ProblemKind {
	var out []ProblemKind
	for _, p := range g.Problems {
		out = append(out, p.Kind)
	}
	return out
}

func TestTranslateRows(t *testing.T) {
	orders0, orders1 := TP{Topic: "orders"}, TP{Topic: "orders", Partition: 1}
	cps := storeAt(
		// g1: caught up, its checkpoint used the sync of record 99 (exact).
		mm2wire.Checkpoint{Group: "g1", Topic: "A.orders", Partition: 0, UpstreamOffset: 100, DownstreamOffset: 100, Metadata: "m1"},
		// g2: lagging, checkpointed with the sync at 0 (bound 49); the mapping now has 40.
		mm2wire.Checkpoint{Group: "g2", Topic: "A.orders", Partition: 0, UpstreamOffset: 50, DownstreamOffset: 1},
		// g3: a checkpoint the mapping does not account for (e.g. written by MM2 from a sync
		// since compacted away).
		mm2wire.Checkpoint{Group: "g3", Topic: "A.orders", Partition: 1, UpstreamOffset: 70, DownstreamOffset: 65},
	)
	m := mapping(map[TP][]offsetsync.Sync{
		orders0: {sy(0, 0), sy(40, 40), sy(99, 99)},
		orders1: {sy(10, 5)},
	})
	in := TranslateInput{Source: "A", Target: "B", Policy: defaultPolicy(), Checkpoints: cps, Now: now}

	// Without the mapping (offset syncs on S, S down): checkpoints as they are, bound unknown.
	res := Translate(in)
	if len(res) != 3 {
		t.Fatalf("%+v", res)
	}
	r := res[0].Rows[0]
	want := Row{Group: "g1", SourceTopic: "orders", Partition: 0, SourceOffset: 100, TargetTopic: "A.orders", TargetOffset: 100, Metadata: "m1",
		Derived: FromCheckpoint, Age: 30 * time.Second, Exact: false, Bound: -1, Checkpoint: 100}
	if r != want || !res[0].OK() {
		t.Fatalf("g1 without mapping: %+v", r)
	}

	// With the mapping.
	in.Mapping = m
	res = Translate(in)
	g1, g2, g3 := res[0], res[1], res[2]
	if r := g1.Rows[0]; r.Derived != FromCheckpoint || !r.Exact || r.Bound != 0 || r.TargetOffset != 100 {
		t.Fatalf("g1: %+v", r)
	}
	if r := g2.Rows[0]; r.Derived != FromMapping || r.TargetOffset != 41 || r.Bound != 9 || r.Checkpoint != 1 || r.SourceOffset != 50 || r.Age != 30*time.Second {
		t.Fatalf("g2: %+v", r)
	}
	if r := g3.Rows[0]; r.Derived != FromCheckpoint || r.TargetOffset != 65 || r.Bound != -1 || r.SourceTopic != "orders" {
		t.Fatalf("g3: %+v", r)
	}
	for _, g := range res {
		if !g.OK() {
			t.Fatalf("%s: %+v", g.Group, g.Problems)
		}
	}

	// Live source offsets (S reachable).
	in.SourceOffsets = map[string][]SourceOffset{
		"g1": {{Topic: "orders", Partition: 0, Offset: 100, Metadata: "m1"}},
		"g2": {{Topic: "orders", Partition: 0, Offset: 99, Metadata: "live"}}, // moved on: exact now
		"g3": {{Topic: "orders", Partition: 1, Offset: 5}},                    // rewound before every sync
		"g4": {{Topic: "orders", Partition: 1, Offset: 11}},                   // no checkpoint yet: mapping
	}
	res = Translate(in)
	if len(res) != 4 {
		t.Fatalf("%d groups", len(res))
	}
	if r := res[1].Rows[0]; r.Derived != FromMapping || r.TargetOffset != 99 || !r.Exact || r.Age != 0 || r.Metadata != "live" {
		t.Fatalf("g2 live: %+v", r)
	}
	if g := res[2]; len(g.Rows) != 0 || len(g.Problems) != 1 || g.Problems[0].Kind != NoMapping ||
		!strings.Contains(g.Problems[0].Detail, "rewound") || !strings.Contains(g.Problems[0].Detail, "before the earliest") {
		t.Fatalf("g3 rewound: %+v", g)
	}
	if r := res[3].Rows[0]; r.Group != "g4" || r.Derived != FromMapping || r.TargetOffset != 6 || !r.Exact || r.Checkpoint != -1 {
		t.Fatalf("g4: %+v", r)
	}

	// Live offset ahead of the checkpoint, mapping cannot translate the partition: the
	// checkpoint, with the records committed since added to its bound.
	in2 := TranslateInput{Source: "A", Target: "B", Policy: defaultPolicy(), Now: now,
		Checkpoints: storeAt(mm2wire.Checkpoint{Group: "g", Topic: "A.orders", Partition: 0, UpstreamOffset: 40, DownstreamOffset: 40}),
		Mapping:     mapping(map[TP][]offsetsync.Sync{orders0: {sy(40, 40)}}),
	}
	in2.SourceOffsets = map[string][]SourceOffset{"g": {{Topic: "orders", Offset: 45}}}
	if r := Translate(in2)[0].Rows[0]; r.Derived != FromMapping || r.TargetOffset != 41 || r.Bound != 4 {
		t.Fatalf("live ahead: %+v", r)
	}
	in2.Mapping = mapping(map[TP][]offsetsync.Sync{{Topic: "elsewhere"}: {sy(0, 0)}})
	in2.Checkpoints.Put(Entry{Checkpoint: mm2wire.Checkpoint{Group: "g", Topic: "A.orders", UpstreamOffset: 40, DownstreamOffset: 40}})
	if r := Translate(in2)[0].Rows[0]; r.Derived != FromCheckpoint || r.TargetOffset != 40 || r.SourceOffset != 45 || r.Bound != -1 || r.Age != 0 {
		t.Fatalf("live ahead, no mapping: %+v", r)
	}
}

func TestTranslateProblems(t *testing.T) {
	cps := storeAt(
		mm2wire.Checkpoint{Group: "active", Topic: "A.orders", UpstreamOffset: 1, DownstreamOffset: 1},
		mm2wire.Checkpoint{Group: "over", Topic: "A.orders", UpstreamOffset: 1, DownstreamOffset: 500},
		mm2wire.Checkpoint{Group: "sep", Topic: "A_orders", UpstreamOffset: 1, DownstreamOffset: 1},
		mm2wire.Checkpoint{Group: "ident", Topic: "orders", UpstreamOffset: 1, DownstreamOffset: 1},
		mm2wire.Checkpoint{Group: "gone", Topic: "A.deleted", UpstreamOffset: 1, DownstreamOffset: 1},
		mm2wire.Checkpoint{Group: "third", Topic: "C.orders", UpstreamOffset: 1, DownstreamOffset: 1},
	)
	in := TranslateInput{Source: "A", Target: "B", Policy: defaultPolicy(), Checkpoints: cps, Now: now,
		Groups:       []string{"active", "over", "sep", "ident", "gone", "third", "missing", "unknown"},
		Mapping:      mapping(map[TP][]offsetsync.Sync{{Topic: "orders"}: {sy(0, 0)}}),
		TargetTopics: map[string]bool{"A.orders": true, "A_orders": true, "orders": true, "C.orders": true},
		TargetEnds:   map[TP]int64{{Topic: "A.orders"}: 100},
		TargetGroups: map[string]TargetGroup{"active": {State: "Stable", Members: 2}, "unknown": {Err: errErr("boom")}},
	}
	res := Translate(in)
	want := map[string][]ProblemKind{
		"active":  {ActiveOnTarget},
		"over":    {BeyondTargetEnd},
		"sep":     {PolicyMismatch},
		"ident":   {PolicyMismatch},
		"gone":    {PolicyMismatch},
		"third":   {PolicyMismatch},
		"missing": {NoCheckpoint},
		"unknown": {TargetStateUnknown, NoCheckpoint},
	}
	for _, g := range res {
		got := kinds(g)
		w := want[g.Group]
		if len(got) != len(w) {
			t.Fatalf("%s: %v (%+v), want %v", g.Group, got, g.Problems, w)
		}
		for i := range w {
			if got[i] != w[i] {
				t.Fatalf("%s: %v, want %v", g.Group, got, w)
			}
		}
		if g.OK() {
			t.Fatalf("%s OK", g.Group)
		}
		t.Logf("%s: %s", g.Group, g.Problems[0].Detail)
	}
	if d := res[0].Problems[0].Detail; !strings.Contains(d, "2 active member(s)") {
		t.Fatalf("%q", d)
	}
	// The rows are still shown for active and overshooting groups.
	if len(res[0].Rows) != 1 || len(res[1].Rows) != 1 {
		t.Fatalf("%+v %+v", res[0], res[1])
	}
	// The topic filter.
	in.Topics = func(src, tgt string) bool { return src == "nothing" }
	for _, g := range Translate(in)[:2] {
		if len(g.Rows) != 0 {
			t.Fatalf("filtered: %+v", g)
		}
	}
	// No mapping, no live offsets: the sep checkpoint cannot be flagged from names alone.
	in.Topics, in.Mapping, in.TargetTopics = nil, nil, nil
	if g := Translate(in)[2]; g.Group != "sep" || !g.OK() {
		t.Fatalf("%+v", g)
	}
}

type errErr string

func (e errErr) Error() string { return string(e) }

func TestTranslateIdentityAndTargetOrigin(t *testing.T) {
	// Default policy, a topic that came from the target is checkpointed under its original name.
	cps := storeAt(mm2wire.Checkpoint{Group: "g", Topic: "orders", UpstreamOffset: 10, DownstreamOffset: 10})
	m := mapping(map[TP][]offsetsync.Sync{{Topic: "B.orders"}: {sy(10, 10)}})
	res := Translate(TranslateInput{Source: "A", Target: "B", Policy: defaultPolicy(), Checkpoints: cps, Mapping: m, Now: now})
	if r := res[0].Rows[0]; r.SourceTopic != "B.orders" || !r.Exact || !res[0].OK() {
		t.Fatalf("%+v", res[0])
	}
	// Identity policy: same names.
	p := policy.NewIdentity(".", false, true, "A")
	cps = storeAt(mm2wire.Checkpoint{Group: "g", Topic: "orders", UpstreamOffset: 10, DownstreamOffset: 7})
	m = mapping(map[TP][]offsetsync.Sync{{Topic: "orders"}: {sy(5, 6)}})
	res = Translate(TranslateInput{Source: "A", Target: "B", Policy: p, Checkpoints: cps, Mapping: m, Now: now})
	if r := res[0].Rows[0]; r.SourceTopic != "orders" || r.TargetTopic != "orders" || r.Bound != 4 || r.Derived != FromCheckpoint || !res[0].OK() {
		t.Fatalf("%+v", res[0])
	}
	// Checkpoints written under Default, read with Identity: the mapping knows "orders".
	cps = storeAt(mm2wire.Checkpoint{Group: "g", Topic: "A.orders", UpstreamOffset: 10, DownstreamOffset: 11})
	res = Translate(TranslateInput{Source: "A", Target: "B", Policy: p, Checkpoints: cps, Mapping: m, Now: now})
	if k := kinds(res[0]); len(k) != 1 || k[0] != PolicyMismatch {
		t.Fatalf("%+v", res[0])
	}
}

func TestDiagnoseCheckpointsTopic(t *testing.T) {
	r := DiagnoseCheckpointsTopic(defaultPolicy(), "A", []string{"A_checkpoints_internal", "A.checkpoints.internal", "AB.checkpoints.internal", "A-checkpoints-internal", "A.checkpoints_internal", "orders"})
	if r.Expected != "A.checkpoints.internal" || !r.Exists || len(r.Others) != 2 || r.Others[0] != "A-checkpoints-internal" || r.Others[1] != "A_checkpoints_internal" {
		t.Fatalf("%+v", r)
	}
	r = DiagnoseCheckpointsTopic(policy.NewDefault("_", true, true), "A", []string{"A.checkpoints.internal"})
	if r.Expected != "A_checkpoints_internal" || r.Exists || len(r.Others) != 1 {
		t.Fatalf("%+v", r)
	}
}
