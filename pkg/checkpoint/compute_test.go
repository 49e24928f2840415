package checkpoint

import (
	"fmt"
	"testing"
	"time"

	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/offsetsync"
	"github.com/kmmproject/kmm/pkg/policy"
)

func defaultPolicy() policy.Policy { return policy.NewDefault(".", false, true) }

func sy(u, d int64) offsetsync.Sync { return offsetsync.Sync{Upstream: u, Downstream: d} }

func cfg(src, tgt string) Config { return Config{Source: src, Target: tgt, Policy: defaultPolicy()} }

func mapping(syncs map[TP][]offsetsync.Sync) *offsetsync.Store {
	m := offsetsync.NewStore(offsetsync.Options{})
	for tp, ss := range syncs {
		for _, s := range ss {
			m.Add(tp, s, time.Time{})
		}
	}
	m.MarkLoaded()
	return m
}

func loadedStore(entries ...mm2wire.Checkpoint) *Store {
	s := NewStore()
	for _, e := range entries {
		s.Put(Entry{Checkpoint: e})
	}
	s.MarkLoaded()
	return s
}

func one(t *testing.T, ds []Decision) Decision {
	t.Helper()
	if len(ds) != 1 {
		t.Fatalf("%d decisions: %+v", len(ds), ds)
	}
	return ds[0]
}

// Port of MirrorCheckpointTaskTest.testDownstreamTopicRenaming and testCheckpoint.
func TestCheckpointRenamingAndTranslation(t *testing.T) {
	m := mapping(map[TP][]offsetsync.Sync{
		{Topic: "topic1", Partition: 2}:         {{Upstream: 3, Downstream: 4}},
		{Topic: "target2.topic5", Partition: 6}: {{Upstream: 7, Downstream: 8}},
		{Topic: "source6.topic7", Partition: 8}: {{Upstream: 0, Downstream: 0}},
	})
	c := cfg("source1", "target2")
	cases := []struct {
		group     string
		topic     string
		part      int32
		off       int64
		wantTopic string
		wantDown  int64
	}{
		{"group9", "topic1", 2, 10, "source1.topic1", 5},                 // d+1
		{"group11", "target2.topic5", 6, 12, "topic5", 9},                // came from the target: original name
		{"group13", "target2.topic5", 6, 7, "topic5", 8},                 // exact
		{"group15", "source6.topic7", 8, 0, "source1.source6.topic7", 0}, // another source: prefixed again
	}
	for _, tc := range cases {
		d := one(t, Compute(c, m, loadedStore(), tc.group, []SourceOffset{{Topic: tc.topic, Partition: tc.part, Offset: tc.off, Metadata: "md"}}))
		want := mm2wire.Checkpoint{Group: tc.group, Topic: tc.wantTopic, Partition: tc.part, UpstreamOffset: tc.off, DownstreamOffset: tc.wantDown, Metadata: "md"}
		if d.Outcome != Emit || d.Reason != FirstCheckpoint || d.Checkpoint != want {
			t.Fatalf("%s: %+v, want %+v", tc.group, d, want)
		}
	}
}

// Ports of testNoCheckpointForTopicWithoutOffsetSyncs, testNoCheckpointForTopicWithNullOffsetAndMetadata
// and testCheckpointStoreInitialized, plus the topic filter.
func TestCheckpointNotEmitted(t *testing.T) {
	m := mapping(map[TP][]offsetsync.Sync{{Topic: "topic1", Partition: 0}: {{Upstream: 3, Downstream: 4}}})
	c := cfg("source1", "target2")
	c.TopicFilter = func(t string) bool { return t != "excluded" }
	ds := Compute(c, m, loadedStore(), "group9", []SourceOffset{
		{Topic: "topic1", Partition: 1, Offset: 10},  // no syncs for the partition
		{Topic: "topic1", Partition: 0, Offset: 10},  // translated
		{Topic: "topic1", Partition: 0, Offset: -1},  // no committed offset (Java null)
		{Topic: "topic1", Partition: 0, Offset: 2},   // before every sync
		{Topic: "excluded", Partition: 0, Offset: 5}, // filtered
	})
	got := map[string]Outcome{}
	for _, d := range ds {
		got[fmt.Sprintf("%s/%d/%v/%d", d.Source.Topic, d.Source.Partition, d.Translation.Status, d.Source.Offset)] = d.Outcome
	}
	want := map[string]Outcome{
		"topic1/1/no_syncs/10":    NotTranslated,
		"topic1/0/translated/10":  Emit,
		"topic1/0/translated/-1":  NoOffset,
		"topic1/0/too_old/2":      NotTranslated,
		"excluded/0/translated/5": FilteredTopic,
	}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("%s: %v, want %v (all %v)", k, got[k], v, got)
		}
	}
	// Store not loaded: nothing (MM2's poll returns null until the store is initialized).
	d := one(t, Compute(cfg("source1", "target2"), m, NewStore(), "g", []SourceOffset{{Topic: "topic1", Partition: 0, Offset: 10}}))
	if d.Outcome != StoreNotLoaded {
		t.Fatalf("%+v", d)
	}
	// Mapping not loaded: not translated.
	m2 := offsetsync.NewStore(offsetsync.Options{})
	m2.Add(TP{Topic: "topic1"}, offsetsync.Sync{Upstream: 3, Downstream: 4}, time.Time{})
	d = one(t, Compute(cfg("source1", "target2"), m2, loadedStore(), "g", []SourceOffset{{Topic: "topic1", Partition: 0, Offset: 10}}))
	if d.Outcome != NotTranslated || d.Translation.Status != offsetsync.NotLoaded {
		t.Fatalf("%+v", d)
	}
}

// MM2's monotonic filter, case by case.
func TestMonotonicFilter(t *testing.T) {
	tp := TP{Topic: "t1", Partition: 0}
	m := mapping(map[TP][]offsetsync.Sync{tp: {sy(100, 100), sy(200, 200), sy(300, 300)}})
	prev := mm2wire.Checkpoint{Group: "g", Topic: "A.t1", Partition: 0, UpstreamOffset: 250, DownstreamOffset: 201, Metadata: "old"}
	cases := []struct {
		name   string
		off    int64
		out    Outcome
		reason EmitReason
	}{
		{"same offset, same translation: repeated", 250, NotNewer, NotEmitted},
		{"advanced but same downstream: not emitted (metadata not compared)", 260, NotNewer, NotEmitted},
		{"downstream advanced", 300, Emit, DownstreamAdvanced},
		{"upstream rewound: emitted even though downstream goes back", 150, Emit, UpstreamRewound},
		{"upstream rewound before every sync: not translated", 50, NotTranslated, NotEmitted},
	}
	for _, c := range cases {
		d := one(t, Compute(cfg("A", "B"), m, loadedStore(prev), "g", []SourceOffset{{Topic: "t1", Partition: 0, Offset: c.off, Metadata: "new"}}))
		if d.Outcome != c.out || d.Reason != c.reason {
			t.Fatalf("%s: %v/%v, want %v/%v", c.name, d.Outcome, d.Reason, c.out, c.reason)
		}
		if c.out != NotTranslated && (d.Previous == nil || d.Previous.Checkpoint != prev) {
			t.Fatalf("%s: previous %+v", c.name, d.Previous)
		}
	}
	// The downstream would go backwards without an upstream rewind (the mapping lost the sync
	// the previous checkpoint used): not emitted. Port of testCheckpointRecordsMonotonicIfStoreRewinds.
	m2 := mapping(map[TP][]offsetsync.Sync{tp: {sy(100, 100)}})
	d := one(t, Compute(cfg("A", "B"), m2, loadedStore(prev), "g", []SourceOffset{{Topic: "t1", Partition: 0, Offset: 250}}))
	if d.Outcome != WouldRewind {
		t.Fatalf("%+v", d)
	}
	d = one(t, Compute(cfg("A", "B"), m2, loadedStore(prev), "g", []SourceOffset{{Topic: "t1", Partition: 0, Offset: 249}}))
	if d.Outcome != Emit || d.Reason != UpstreamRewound || d.Checkpoint.DownstreamOffset != 101 {
		t.Fatalf("%+v", d)
	}
}

// Port of testCheckpointsTaskRestartUsesExistingCheckpoints. kmm keeps every sync of the
// restarted task, so 370 translates to 276 (MM2's sparse store gives 176 and emits nothing).
func TestRestartUsesExistingCheckpoints(t *testing.T) {
	tp := TP{Topic: "t1", Partition: 0}
	m := mapping(map[TP][]offsetsync.Sync{tp: {sy(100, 100), sy(200, 200), sy(300, 300)}})
	st := loadedStore()
	d := one(t, Compute(cfg("source1", "target2"), m, st, "group1", []SourceOffset{{Topic: "t1", Offset: 250}}))
	want := mm2wire.Checkpoint{Group: "group1", Topic: "source1.t1", UpstreamOffset: 250, DownstreamOffset: 201}
	if d.Outcome != Emit || d.Checkpoint != want {
		t.Fatalf("%+v", d)
	}
	st.Put(Entry{Checkpoint: d.Checkpoint})
	// Restart: the syncs topic now holds 175, 275, 375, 475.
	m2 := mapping(map[TP][]offsetsync.Sync{tp: {sy(175, 175), sy(275, 275), sy(375, 375), sy(475, 475)}})
	for off, exp := range map[int64]struct {
		out  Outcome
		down int64
	}{250: {WouldRewind, 176}, 370: {Emit, 276}, 400: {Emit, 376}} {
		d := one(t, Compute(cfg("source1", "target2"), m2, st, "group1", []SourceOffset{{Topic: "t1", Offset: off}}))
		if d.Outcome != exp.out || d.Checkpoint.DownstreamOffset != exp.down {
			t.Fatalf("offset %d: %v %d, want %v %d", off, d.Outcome, d.Checkpoint.DownstreamOffset, exp.out, exp.down)
		}
	}
}

// Two source topics that rename to the same target topic: MM2's Collectors.toMap throws and the
// whole group gets no checkpoint; kmm withholds only the colliding partitions.
func TestCollision(t *testing.T) {
	m := mapping(map[TP][]offsetsync.Sync{{Topic: "t"}: {sy(0, 0)}, {Topic: "B.t"}: {sy(0, 0)}, {Topic: "u", Partition: 1}: {sy(0, 0)}})
	c := Config{Source: "A", Target: "B", Policy: collidingPolicy{policy.NewDefault(".", false, true)}}
	ds := Compute(c, m, loadedStore(), "g", []SourceOffset{{Topic: "t", Offset: 1}, {Topic: "B.t", Offset: 1}, {Topic: "u", Partition: 1, Offset: 1}})
	var outs []Outcome
	for _, d := range ds {
		outs = append(outs, d.Outcome)
	}
	if len(ds) != 3 || outs[0] != Collision || outs[1] != Collision || outs[2] != Emit {
		t.Fatalf("%v", outs)
	}
}

// collidingPolicy names every topic "t" on the target.
type collidingPolicy struct{ *policy.Default }

func (collidingPolicy) FormatRemoteTopic(string, string) string { return "t" }
func (collidingPolicy) OriginalTopic(string) string             { return "t" }

func TestTracker(t *testing.T) {
	tp := TP{Topic: "orders", Partition: 0}
	m := mapping(map[TP][]offsetsync.Sync{tp: {sy(0, 0), sy(100, 100)}})
	st := loadedStore()
	tr := NewTracker(cfg("A", "B"), m, st)

	// Group commits 150 (between syncs): checkpoint 101, bound 49.
	ds := tr.SetGroup("g1", []SourceOffset{{Topic: "orders", Offset: 150, Metadata: "m"}})
	d := one(t, ds)
	if d.Outcome != Emit || d.Checkpoint.DownstreamOffset != 101 || d.Translation.Bound != 49 {
		t.Fatalf("%+v", d)
	}
	// Not written yet: recomputing emits it again.
	if d := one(t, tr.Recompute()); d.Outcome != Emit {
		t.Fatalf("recompute before Written: %+v", d)
	}
	tr.Written(Emitted(ds), time.UnixMilli(5))
	if d := one(t, tr.Recompute()); d.Outcome != NotNewer {
		t.Fatalf("recompute after Written: %+v", d)
	}
	if e, ok := st.Get("g1", TP{Topic: "A.orders"}); !ok || e.DownstreamOffset != 101 || e.Time.UnixMilli() != 5 {
		t.Fatalf("stored %+v", e)
	}
	// The sync of record 149 arrives: the caught-up group becomes exact.
	c, ds := tr.AddSync(tp, offsetsync.Sync{Upstream: 149, Downstream: 149}, time.Time{})
	d = one(t, ds)
	if c != offsetsync.Appended || d.Outcome != Emit || d.Reason != DownstreamAdvanced || d.Checkpoint.DownstreamOffset != 150 || !d.Translation.Exact {
		t.Fatalf("%v %+v", c, d)
	}
	tr.Written(Emitted(ds), time.Time{})
	// A repeated sync re-evaluates nothing.
	if c, ds := tr.AddSync(tp, offsetsync.Sync{Upstream: 149, Downstream: 149}, time.Time{}); c != offsetsync.Repeated || ds != nil {
		t.Fatalf("%v %v", c, ds)
	}
	// A sync for a partition nobody tracks re-evaluates nothing.
	if _, ds := tr.AddSync(TP{Topic: "other"}, offsetsync.Sync{}, time.Time{}); len(ds) != 0 {
		t.Fatalf("%v", ds)
	}
	// Incremental commit of another group on another partition.
	ds = tr.UpdateOffsets("g2", []SourceOffset{{Topic: "orders", Offset: 100}, {Topic: "orders", Partition: 1, Offset: 5}})
	if len(ds) != 2 || ds[0].Outcome != Emit || ds[1].Outcome != NotTranslated {
		t.Fatalf("%+v", ds)
	}
	tr.Written(Emitted(ds), time.Time{})
	// A new sync on orders[0] re-evaluates g1 and g2 only there.
	_, ds = tr.AddSync(tp, offsetsync.Sync{Upstream: 160, Downstream: 160}, time.Time{})
	if len(ds) != 2 || ds[0].Group != "g1" || ds[1].Group != "g2" || ds[0].Outcome != NotNewer || ds[1].Outcome != NotNewer {
		t.Fatalf("%+v", ds)
	}
	// A deleted commit (offset -1) removes the partition from the tracker.
	tr.UpdateOffsets("g2", []SourceOffset{{Topic: "orders", Offset: -1}})
	_, ds = tr.AddSync(tp, offsetsync.Sync{Upstream: 170, Downstream: 170}, time.Time{})
	if len(ds) != 1 || ds[0].Group != "g1" {
		t.Fatalf("%+v", ds)
	}
	tr.RemoveGroup("g1")
	if _, ds := tr.AddSync(tp, offsetsync.Sync{Upstream: 180, Downstream: 180}, time.Time{}); len(ds) != 0 {
		t.Fatalf("%+v", ds)
	}
	if g := tr.Groups(); len(g) != 1 || g[0] != "g2" {
		t.Fatalf("groups %v", g)
	}
	// SetGroup replaces: g2's orders[1] disappears.
	tr.SetGroup("g2", []SourceOffset{{Topic: "orders", Offset: 175}})
	if ds := tr.Recompute(); len(ds) != 1 {
		t.Fatalf("%+v", ds)
	}
}

func TestRecordBytes(t *testing.T) {
	// The spec's example (§2.2).
	k, v, err := Record(mm2wire.Checkpoint{Group: "g1", Topic: "A.orders", Partition: 3, UpstreamOffset: 10, DownstreamOffset: 110})
	if err != nil {
		t.Fatal(err)
	}
	if string(k) != string(mustHex("00 02 67 31 00 08 41 2e 6f 72 64 65 72 73 00 00 00 03")) ||
		string(v) != string(mustHex("00 00 00 00 00 00 00 00 00 0a 00 00 00 00 00 00 00 6e 00 00")) {
		t.Fatalf("key %x value %x", k, v)
	}
}

// The offset map knows a position only within a bound (after a failback: the target's own
// writes between the cut and the copy's resumption are records it does not account for, so it
// answers the cut's position with a large re-read bound): the offset syncs written since know a
// later one, and the checkpoint takes the higher of the two (neither skips a record). An exact
// map answer stays, whatever the syncs say.
func TestCheckpointInexactMapYieldsToSyncs(t *testing.T) {
	tp := TP{Topic: "orders"}
	m := mapping(map[TP][]offsetsync.Sync{tp: {sy(431, 431), sy(939, 939), sy(2760, 2760)}})
	c := cfg("A", "B")
	c.Policy = policy.NewIdentity(".", false, true, "")
	c.Exact = func(TP, int64) (offsetsync.Translation, bool) {
		return offsetsync.Translation{Status: offsetsync.Translated, Downstream: 432, Bound: 2335}, true
	}
	prev := mm2wire.Checkpoint{Group: "g", Topic: "orders", UpstreamOffset: 432, DownstreamOffset: 432}
	d := one(t, Compute(c, m, loadedStore(prev), "g", []SourceOffset{{Topic: "orders", Offset: 2767}}))
	if d.Outcome != Emit || d.Reason != DownstreamAdvanced || d.Checkpoint.DownstreamOffset != 2761 || d.Translation.Bound != 6 {
		t.Fatalf("inexact map, newer syncs: %+v", d)
	}
	// Syncs that know less than the map: the map's answer.
	c.Exact = func(TP, int64) (offsetsync.Translation, bool) {
		return offsetsync.Translation{Status: offsetsync.Translated, Downstream: 2765, Bound: 2}, true
	}
	if d := one(t, Compute(c, m, loadedStore(), "g", []SourceOffset{{Topic: "orders", Offset: 2767}})); d.Checkpoint.DownstreamOffset != 2765 {
		t.Fatalf("inexact map ahead of the syncs: %+v", d)
	}
	// Exact: the map, always.
	c.Exact = func(TP, int64) (offsetsync.Translation, bool) {
		return offsetsync.Translation{Status: offsetsync.Translated, Downstream: 2767, Exact: true}, true
	}
	if d := one(t, Compute(c, m, loadedStore(), "g", []SourceOffset{{Topic: "orders", Offset: 2767}})); d.Checkpoint.DownstreamOffset != 2767 || !d.Translation.Exact {
		t.Fatalf("exact map: %+v", d)
	}
}
