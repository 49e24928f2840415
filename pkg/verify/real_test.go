package verify_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/e2e/testbed/replbed"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/mm2read"
	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/plan"
	"github.com/kmmproject/kmm/pkg/rdkafka"
	"github.com/kmmproject/kmm/pkg/verify"
)

// records: null keys, tombstones, headers (several, one with a null value), CreateTime stamps.
func records(topic string, parts, from, n int) []rdkafka.Record {
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var out []rdkafka.Record
	for i := from; i < from+n; i++ {
		r := rdkafka.Record{Topic: topic, Partition: int32(i % parts), Value: []byte(fmt.Sprintf("value-%d", i)), Timestamp: base.Add(time.Duration(i) * time.Millisecond)}
		if i%5 != 0 || strings.Contains(topic, "vcompact") { // compacted topics refuse null keys
			r.Key = []byte(fmt.Sprintf("key-%d", i%37))
		}
		if i%7 == 3 && r.Key != nil {
			r.Value = nil
		}
		if i%3 == 0 {
			r.Headers = []rdkafka.Header{{Key: "trace", Value: []byte(fmt.Sprint(i))}, {Key: "empty"}, {Key: "n", Value: []byte("x")}}
		}
		out = append(out, r)
	}
	return out
}

func verifyFlow(bed *testbed.Bed, re string) *flow.Flow {
	f := replbed.Flow(bed.A, bed.B, re)
	f.EmitCheckpoints, f.CheckpointsRF, f.EmitHeartbeats, f.HeartbeatInterval, f.HeartbeatsRF = true, 1, true, time.Second, 1
	f.SyncTopicConfigs = true
	return f
}

func run(t *testing.T, f *flow.Flow, o verify.Options) *verify.Report {
	t.Helper()
	if !f.Validated() {
		if err := f.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := verify.Run(ctx, rdkafka.Opener{}, f, o)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func fails(rep *verify.Report) []verify.Finding {
	var out []verify.Finding
	for _, f := range rep.Findings {
		if f.Status == verify.Fail {
			out = append(out, f)
		}
	}
	return out
}

func dump(rep *verify.Report) string {
	var b strings.Builder
	for _, f := range rep.Findings {
		if f.Status != verify.OK || f.Check == verify.CheckFull || f.Check == verify.CheckSample {
			p := ""
			if f.Partition != nil {
				p = fmt.Sprint(*f.Partition)
			}
			fmt.Fprintf(&b, "  %s %s %s[%s] %s %v\n", f.Check, f.Status, f.Topic, p, f.Reason, f.Counts)
		}
	}
	return b.String()
}

// find returns the findings of check on topic (and partition p when p ≥ 0) with status st.
func find(rep *verify.Report, check, topic string, p int32, st verify.Status) []verify.Finding {
	var out []verify.Finding
	for _, f := range rep.Findings {
		if f.Check == check && f.Status == st && (topic == "" || f.Topic == topic) && (p < 0 || f.Partition != nil && *f.Partition == p) {
			out = append(out, f)
		}
	}
	return out
}

// waitReplicated waits until the stored positions of every partition of topics reach the ends.
func waitReplicated(t *testing.T, bed *testbed.Bed, f *flow.Flow, topics map[string]int) {
	t.Helper()
	a, b := bed.A.Open(t), bed.B.Open(t)
	testbed.Eventually(t, 2*time.Minute, func() error {
		ctx := context.Background()
		pos, err := mm2read.ReadSourcePositions(ctx, b, f.OffsetsTopic, "A")
		if err != nil {
			return err
		}
		for topic, parts := range topics {
			var tps []cluster.TP
			for p := 0; p < parts; p++ {
				tps = append(tps, cluster.TP{Topic: topic, Partition: int32(p)})
			}
			ends, err := a.ListOffsets(ctx, tps, cluster.Latest)
			if err != nil {
				return err
			}
			for _, tp := range tps {
				if st, ok := pos[tp]; !ok || st+1 < ends[tp].Offset {
					return fmt.Errorf("%v: stored %d (%v), end %d", tp, st, ok, ends[tp].Offset)
				}
			}
		}
		return nil
	})
}

// A clean copy passes at every level; then every injected divergence is found and named, and
// the clean topics stay clean.
func TestRealVerify(t *testing.T) {
	bed := testbed.Attach(t)
	ctx := context.Background()
	clean := testbed.Unique(t, "vclean")
	compact := testbed.Unique(t, "vcompact")
	extra := testbed.Unique(t, "vextra")
	missing := testbed.Unique(t, "vmissing")
	dups := testbed.Unique(t, "vdups")
	cfg := testbed.Unique(t, "vconfig")
	grow := testbed.Unique(t, "vgrow")
	gap := testbed.Unique(t, "vgap")
	acl := testbed.Unique(t, "vacl")
	group := testbed.Unique(t, "vgroup")
	all := map[string]int{clean: 3, compact: 1, extra: 2, missing: 1, dups: 1, cfg: 1, grow: 1, gap: 1, acl: 1}
	for topic, parts := range all {
		var c map[string]string
		switch topic {
		case compact:
			c = map[string]string{"cleanup.policy": "compact"}
		case cfg:
			c = map[string]string{"retention.ms": "86400000"}
		case gap:
			c = map[string]string{"segment.ms": "1000"} // segments roll, so a shorter retention.ms can delete them
		}
		bed.A.CreateTopic(t, topic, parts, c)
		bed.A.Produce(t, records(topic, parts, 0, 300))
	}
	var names []string
	for topic := range all {
		names = append(names, regexp.QuoteMeta(topic))
	}
	re := strings.Join(names, "|")
	f := verifyFlow(bed, re)
	r := replbed.Start(t, f)
	waitReplicated(t, bed, f, all)

	// A group commits on A; its checkpoint reaches B.
	adminA := bed.A.Admin(t)
	if err := adminA.AlterGroupOffsets(ctx, group, map[rdkafka.TP]rdkafka.OffsetMeta{{Topic: clean, Partition: 0}: {Offset: 50}}); err != nil {
		t.Fatal(err)
	}
	testbed.Eventually(t, time.Minute, func() error {
		rep := run(t, verifyFlow(bed, re), verify.Options{Groups: regexp.MustCompile("^" + regexp.QuoteMeta(group) + "$").MatchString})
		if len(find(rep, verify.CheckGroups, clean, 0, verify.OK)) == 0 {
			return fmt.Errorf("no checkpoint of %s yet:\n%s", group, dump(rep))
		}
		return nil
	})
	r.Stop(t)

	t.Run("clean copy passes at every level", func(t *testing.T) {
		for _, level := range []string{verify.LevelMetadata, verify.LevelSample, verify.LevelFull} {
			rep := run(t, verifyFlow(bed, re), verify.Options{Level: level, Seed: 7})
			if fs := fails(rep); len(fs) > 0 {
				t.Fatalf("%s: clean copy failed:\n%s", level, dump(rep))
			}
			switch level {
			case verify.LevelSample:
				oks := find(rep, verify.CheckSample, clean, -1, verify.OK)
				if len(oks) != 3 || oks[0].Counts["anchors"] == 0 {
					t.Fatalf("sample: %d partitions sampled:\n%s", len(oks), dump(rep))
				}
			case verify.LevelFull:
				oks := find(rep, verify.CheckFull, clean, -1, verify.OK)
				var matched int64
				for _, o := range oks {
					matched += o.Counts["matched"]
				}
				if len(oks) != 3 || matched != 300 {
					t.Fatalf("full: %d partitions, %d matched:\n%s", len(oks), matched, dump(rep))
				}
				if c := find(rep, verify.CheckFull, compact, 0, verify.OK); len(c) != 1 || c[0].Counts["keys_compared"] != 37 {
					t.Fatalf("compacted topic: %+v\n%s", c, dump(rep))
				}
			}
		}
	})

	// The divergences, injected with the replicator stopped.
	adminB := bed.B.Admin(t)
	extraOff := bed.B.Produce(t, []rdkafka.Record{{Topic: "A." + extra, Partition: 1, Value: []byte("injected")}})[0]
	if err := adminB.DeleteRecords(ctx, rdkafka.TP{Topic: "A." + missing}, 20); err != nil {
		t.Fatal(err)
	}
	// duplicates: what a crash between produce and position store re-copies.
	var again []rdkafka.Record
	for _, rec := range bed.A.ConsumeN(t, dups, 1, 300, time.Minute)[290:] {
		again = append(again, rdkafka.Record{Topic: "A." + dups, Partition: 0, Key: rec.Key, Value: rec.Value, Headers: rec.Headers, Timestamp: rec.Timestamp})
	}
	bed.B.Produce(t, again)
	if err := adminB.IncrementalAlterTopicConfigs(ctx, map[string][]rdkafka.ConfigOp{"A." + cfg: {{Name: "retention.ms", Value: "7200000"}}}); err != nil {
		t.Fatal(err)
	}
	if err := adminA.CreatePartitions(ctx, grow, 2); err != nil {
		t.Fatal(err)
	}
	// A retention gap: records produced while nothing replicates, then retention.ms shortened on
	// the source (the records are an hour old) and the broker's retention check deletes them.
	bed.A.Produce(t, records(gap, 1, 300, 50))
	time.Sleep(1100 * time.Millisecond) // past segment.ms: the next record rolls the segment
	if err := adminA.IncrementalAlterTopicConfigs(ctx, map[string][]rdkafka.ConfigOp{gap: {{Name: "retention.ms", Value: "60000"}}}); err != nil {
		t.Fatal(err)
	}
	bed.A.Produce(t, []rdkafka.Record{{Topic: gap, Partition: 0, Value: []byte("fresh")}})
	testbed.Eventually(t, time.Minute, func() error {
		st, err := adminA.ListOffsets(ctx, []rdkafka.TP{{Topic: gap}}, rdkafka.Earliest)
		if err != nil || st[rdkafka.TP{Topic: gap}].Offset < 350 {
			return fmt.Errorf("log start of %s: %v %v", gap, st, err)
		}
		return nil
	})
	srcACL := rdkafka.ACL{ResourceType: "TOPIC", ResourceName: acl, PatternType: "LITERAL", Principal: "User:alice", Host: "*", Operation: "READ", Permission: "ALLOW"}
	if err := adminA.CreateACLs(ctx, []rdkafka.ACL{srcACL}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = adminA.DeleteACLs(context.Background(), srcACL) })
	// The group commits on A while nothing replicates: its checkpoints stop.
	if err := adminA.AlterGroupOffsets(ctx, group, map[rdkafka.TP]rdkafka.OffsetMeta{{Topic: clean, Partition: 0}: {Offset: 80}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // the checkpoint must be measurably older than 1 s

	rep := run(t, verifyFlow(bed, re), verify.Options{Level: verify.LevelFull, Thresholds: verify.Thresholds{MaxCheckpointAge: time.Second}})
	t.Logf("findings:\n%s", dump(rep))
	expect := func(check, topic string, p int32, src, tgt int64, words string) {
		t.Helper()
		for _, f := range find(rep, check, topic, p, verify.Fail) {
			if (src < 0 || f.SourceOffset != nil && *f.SourceOffset == src) && (tgt < 0 || f.TargetOffset != nil && *f.TargetOffset == tgt) && strings.Contains(f.Reason, words) {
				return
			}
		}
		t.Errorf("no FAIL %s on %s[%d] at source %d target %d saying %q", check, topic, p, src, tgt, words)
	}
	expect(verify.CheckFull, extra, 1, -1, extraOff, "1 extra")
	expect(verify.CheckTargetStart, missing, 0, 0, 0, "gone from the target")
	expect(verify.CheckFull, missing, 0, 0, -1, "20 missing")
	expect(verify.CheckConfigs, cfg, -1, -1, -1, "retention.ms=86400000 on the source, 7200000 on the target")
	expect(verify.CheckPartitions, grow, 1, -1, -1, "not on the target")
	expect(verify.CheckRetention, gap, 0, 300, -1, "50 record(s) deleted on the source before they were copied")
	expect(verify.CheckACLs, acl, -1, -1, -1, "User:alice may READ")
	if fs := find(rep, verify.CheckCheckpoints, "", -1, verify.Fail); len(fs) != 1 || fs[0].Group != group || !strings.Contains(fs[0].Reason, "checkpoints stopped") {
		t.Errorf("checkpoints stopped not reported: %+v", fs)
	}
	d := find(rep, verify.CheckFull, dups, 0, verify.OK)
	if len(d) != 1 || d[0].Counts["duplicates"] != 10 || d[0].Counts["extra"] != 0 {
		t.Errorf("duplicates: %+v", d)
	}
	for _, fd := range fails(rep) {
		if fd.Topic == clean || fd.Topic == compact || fd.Topic == dups {
			t.Errorf("clean topic failed: %+v", fd)
		}
	}
	// Granted on the target, the ACL check passes (a literal ACL on this test's topic only: a
	// prefixed one would deny other principals on every remote topic of the shared bed).
	tgtACL := rdkafka.ACL{ResourceType: "TOPIC", ResourceName: "A." + acl, PatternType: "LITERAL", Principal: "User:alice", Host: "*", Operation: "ALL", Permission: "ALLOW"}
	if err := adminB.CreateACLs(ctx, []rdkafka.ACL{tgtACL}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = adminB.DeleteACLs(context.Background(), tgtACL) })
	testbed.Eventually(t, 30*time.Second, func() error {
		rep := run(t, verifyFlow(bed, regexp.QuoteMeta(acl)), verify.Options{})
		if len(find(rep, verify.CheckACLs, acl, -1, verify.OK)) != 1 {
			return fmt.Errorf("ACL granted on B, still:\n%s", dump(rep))
		}
		return nil
	})
	// --max-duplicates turns the duplicates into a failure.
	zero := int64(0)
	rep = run(t, verifyFlow(bed, regexp.QuoteMeta(dups)), verify.Options{Level: verify.LevelFull, Thresholds: verify.Thresholds{MaxDuplicates: &zero}})
	if fs := find(rep, verify.CheckFull, dups, 0, verify.Fail); len(fs) != 1 || !strings.Contains(fs[0].Reason, "10 duplicate(s)") {
		t.Errorf("--max-duplicates 0: %s", dump(rep))
	}
	// --from groups compares from the group's translated position only.
	rep = run(t, verifyFlow(bed, regexp.QuoteMeta(clean)), verify.Options{Level: verify.LevelFull, FromGroups: true,
		Groups: regexp.MustCompile("^" + regexp.QuoteMeta(group) + "$").MatchString})
	fs := find(rep, verify.CheckFull, clean, 0, verify.OK)
	if len(fs) != 1 || fs[0].Counts["matched"] > 100 || fs[0].Counts["matched"] < 50 || !strings.Contains(fs[0].Reason, "group "+group) ||
		len(find(rep, verify.CheckFull, clean, 1, verify.OK)) != 1 || find(rep, verify.CheckFull, clean, 1, verify.OK)[0].Counts["matched"] != 0 {
		t.Errorf("--from groups: %s", dump(rep))
	}
}

// The flow failed over: its state record in __kmm_state on the target says so.
func TestRealVerifyFlowFailedOver(t *testing.T) {
	bed := testbed.Attach(t)
	f := verifyFlow(bed, regexp.QuoteMeta(testbed.Unique(t, "none")))
	b := bed.B.Open(t)
	put := func(v []byte) {
		p, err := b.NewProducer(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if _, err := cluster.EnsureTopic(context.Background(), b, cluster.NewTopic{Name: plan.StateTopic, Partitions: 1, RF: 1, Configs: map[string]string{"cleanup.policy": "compact"}}, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := p.ProduceSync(context.Background(), []cluster.Record{{Topic: plan.StateTopic, Partition: 0, Key: []byte(plan.FlowKey("A->B")), Value: v}}); err != nil {
			t.Fatal(err)
		}
	}
	put([]byte(`{"v":1,"type":"flow","flow":"A->B","state":"FAILED_OVER","epoch":3,"at":"2026-12-01T00:00:00Z","mode":"planned"}`))
	t.Cleanup(func() { put(nil) })
	rep := run(t, f, verify.Options{})
	if fs := find(rep, verify.CheckFlowState, "", -1, verify.Fail); len(fs) != 1 || !strings.Contains(fs[0].Reason, "FAILED_OVER (epoch 3, since 2026-12-01T00:00:00Z)") {
		t.Fatalf("flow state:\n%s", dump(rep))
	}
	put([]byte(`{"v":1,"type":"flow","flow":"A->B","state":"REPLICATING","epoch":4}`))
	rep = run(t, verifyFlow(bed, regexp.QuoteMeta(testbed.Unique(t, "none"))), verify.Options{})
	if fs := find(rep, verify.CheckFlowState, "", -1, verify.OK); len(fs) != 1 || fs[0].Reason != "replicating (epoch 4)" {
		t.Fatalf("flow state after failback:\n%s", dump(rep))
	}
	put([]byte(`{"v":2,"type":"flow","flow":"A->B","state":"REPLICATING","epoch":5}`))
	rep = run(t, verifyFlow(bed, regexp.QuoteMeta(testbed.Unique(t, "none"))), verify.Options{})
	if fs := find(rep, verify.CheckFlowState, "", -1, verify.Warn); len(fs) != 1 || !strings.Contains(fs[0].Reason, "upgrade kmm") {
		t.Fatalf("newer format:\n%s", dump(rep))
	}
}

// A copy made by a test producer that flips a byte of one value and drops a header of another
// record, with offset syncs in MM2's format pairing the offsets: sample and full name both
// records by offset; a copy with a timestamp changed fails unless the target stamps
// LogAppendTime.
func TestRealVerifyAlteredCopy(t *testing.T) {
	bed := testbed.Attach(t)
	topic := testbed.Unique(t, "valtered")
	remote := "A." + topic
	bed.A.CreateTopic(t, topic, 1, nil)
	bed.B.CreateTopic(t, remote, 1, nil)
	bed.A.Produce(t, records(topic, 1, 0, 200))
	var cp []rdkafka.Record
	for _, r := range bed.A.ConsumeN(t, topic, 1, 200, time.Minute) {
		c := rdkafka.Record{Topic: remote, Partition: 0, Key: r.Key, Value: append([]byte(nil), r.Value...), Headers: r.Headers, Timestamp: r.Timestamp}
		if r.Value == nil {
			c.Value = nil
		}
		switch r.Offset {
		case 57:
			c.Value[3] ^= 0x20
		case 99:
			c.Headers = c.Headers[:len(c.Headers)-1]
		}
		cp = append(cp, c)
	}
	bed.B.Produce(t, cp)
	var syncs []rdkafka.Record
	for _, o := range []int64{0, 57, 99, 150} {
		s := mm2wire.OffsetSync{Topic: topic, Partition: 0, UpstreamOffset: o, DownstreamOffset: o}
		k, err := s.AppendKey(nil)
		if err != nil {
			t.Fatal(err)
		}
		syncs = append(syncs, rdkafka.Record{Topic: "mm2-offset-syncs.B.internal", Partition: 0, Key: k, Value: s.AppendValue(nil)})
	}
	bed.A.Produce(t, syncs)
	f := verifyFlow(bed, regexp.QuoteMeta(topic))
	rep := run(t, f, verify.Options{Level: verify.LevelSample, Samples: 10})
	s := find(rep, verify.CheckSample, topic, 0, verify.Fail)
	if len(s) != 1 || *s[0].SourceOffset != 57 || *s[0].TargetOffset != 57 || s[0].Counts["differing"] != 2 ||
		!strings.Contains(s[0].Reason, "source 57 / target 57: value differs") || !strings.Contains(s[0].Reason, "source 99 / target 99: 3 header(s) on the source, 2 on the target") {
		t.Fatalf("sample:\n%s", dump(rep))
	}
	rep = run(t, verifyFlow(bed, regexp.QuoteMeta(topic)), verify.Options{Level: verify.LevelFull})
	full := find(rep, verify.CheckFull, topic, 0, verify.Fail)
	if len(full) != 1 || *full[0].SourceOffset != 57 || *full[0].TargetOffset != 57 || full[0].Counts["diverged"] != 2 || full[0].Counts["matched"] != 198 ||
		!strings.Contains(full[0].Reason, "source offset 99 differs from target offset 99") {
		t.Fatalf("full:\n%s", dump(rep))
	}
	// A target topic stamping LogAppendTime: records compared without timestamps.
	lat := testbed.Unique(t, "vlogtime")
	bed.A.CreateTopic(t, lat, 1, nil)
	bed.B.CreateTopic(t, "A."+lat, 1, map[string]string{"message.timestamp.type": "LogAppendTime"})
	bed.A.Produce(t, records(lat, 1, 0, 50))
	cp = cp[:0]
	for _, r := range bed.A.ConsumeN(t, lat, 1, 50, time.Minute) {
		cp = append(cp, rdkafka.Record{Topic: "A." + lat, Partition: 0, Key: r.Key, Value: r.Value, Headers: r.Headers, Timestamp: r.Timestamp})
	}
	bed.B.Produce(t, cp)
	rep = run(t, verifyFlow(bed, regexp.QuoteMeta(lat)), verify.Options{Level: verify.LevelFull})
	if ok := find(rep, verify.CheckFull, lat, 0, verify.OK); len(ok) != 1 || ok[0].Counts["matched"] != 50 {
		t.Fatalf("LogAppendTime target:\n%s", dump(rep))
	}
}

// The canary: probes flow through a running replicator (no gap, latency percentiles); with the
// replicator stopped every probe is a gap; a flow whose filter does not select kmm-canary fails
// with the fix.
func TestRealCanary(t *testing.T) {
	bed := testbed.Attach(t)
	ctx := context.Background()
	notSelected := verifyFlow(bed, "orders")
	if err := notSelected.Validate(); err != nil {
		t.Fatal(err)
	}
	fd, err := verify.Canary(ctx, rdkafka.Opener{}, notSelected, verify.CanaryOptions{Duration: time.Second})
	if err != nil || fd.Status != verify.Fail || !strings.Contains(fd.Reason, "does not replicate kmm-canary") || !strings.Contains(fd.Reason, "A->B.topics") {
		t.Fatalf("not selected: %v %+v", err, fd)
	}
	f := verifyFlow(bed, verify.CanaryTopic)
	r := replbed.Start(t, f)
	fd, err = verify.Canary(ctx, rdkafka.Opener{}, f, verify.CanaryOptions{Duration: 3 * time.Second})
	if err != nil || fd.Status != verify.OK || fd.Counts["sent"] < 10 || fd.Counts["sent"] > 31 || fd.Counts["received"] != fd.Counts["sent"] || fd.Counts["gaps"] != 0 ||
		fd.Counts["p50_ms"] <= 0 || fd.Counts["p99_ms"] < fd.Counts["p50_ms"] {
		t.Fatalf("canary through the replicator: %v %+v", err, fd)
	}
	t.Logf("canary: %s", fd.Reason)
	r.Stop(t)
	f2 := verifyFlow(bed, verify.CanaryTopic)
	if err := f2.Validate(); err != nil {
		t.Fatal(err)
	}
	fd, err = verify.Canary(ctx, rdkafka.Opener{}, f2, verify.CanaryOptions{Duration: time.Second, Grace: 2 * time.Second})
	if err != nil || fd.Status != verify.Fail || fd.Counts["gaps"] != fd.Counts["sent"] || fd.Counts["sent"] == 0 || !strings.Contains(fd.Reason, "first missing seq 0") {
		t.Fatalf("canary with the replicator stopped: %v %+v", err, fd)
	}
}

// A scan reader handed from one partition to the next starts reading at once: with librdkafka's
// default fetch.wait.max.ms the broker held the reader's last fetch at the end of the previous
// partition for 500 ms, so 12 small partitions through one worker took over 5.5 s.
func TestRealVerifyReusedReadersStartAtOnce(t *testing.T) {
	bed := testbed.Attach(t)
	topic := testbed.Unique(t, "vreuse")
	const parts = 12
	bed.A.CreateTopic(t, topic, parts, nil)
	bed.B.CreateTopic(t, "A."+topic, parts, nil)
	ts := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	recs := func(tp string) []rdkafka.Record {
		var out []rdkafka.Record
		for i := 0; i < 50*parts; i++ {
			out = append(out, rdkafka.Record{Topic: tp, Partition: int32(i % parts), Key: []byte(fmt.Sprint(i)), Value: []byte("v"), Timestamp: ts})
		}
		return out
	}
	bed.A.Produce(t, recs(topic))
	bed.B.Produce(t, recs("A."+topic))
	f := verifyFlow(bed, regexp.QuoteMeta(topic))
	rep := run(t, f, verify.Options{Level: verify.LevelFull, Parallel: 1, Topics: func(s string) bool { return s == topic }})
	matched := int64(0)
	for _, fd := range rep.Findings {
		if fd.Check == verify.CheckFull && fd.Topic == topic {
			matched += fd.Counts["matched"]
		}
	}
	if matched != 50*parts {
		t.Fatalf("matched %d of %d:\n%s", matched, 50*parts, dump(rep))
	}
	t.Logf("full scan of %d partitions through one worker: %.2f s", parts, rep.Seconds["full"])
	if rep.Seconds["full"] > 4 {
		t.Errorf("full scan of %d small partitions through one worker took %.2f s (over 4 s: reused readers wait?)", parts, rep.Seconds["full"])
	}
}
