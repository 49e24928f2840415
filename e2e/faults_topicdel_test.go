package e2e

import (
	"context"
	"encoding/binary"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// TestFaultTargetTopicDeleted: the remote topic is deleted on the target while kmm copies
// into it. The documented rule (docs/replicate.md, "Target topic deleted"): kmm recreates it at its next
// topic refresh with the source's partition count and configs, as at first creation, and goes
// on from where it was: what the deleted topic held is gone (not copied again), every source
// record after the first one on the recreated topic is there, each in its source partition
// and order, and a new offset sync per partition maps the source offset of that first record
// to target offset 0 (the target offset went backwards), so translation never points into the
// deleted topic's offsets.
func TestFaultTargetTopicDeleted(t *testing.T) {
	bed := testbed.Attach(t)
	src, dst := bed.C, bed.B
	topic := testbed.Unique(t, "fdel")
	remote := src.Name + "." + topic
	const retention = "123456789"
	a := dst.Admin(t)
	f := &faultFlow{src: src, dst: dst, topic: topic, remote: remote}
	src.CreateTopic(t, topic, faultParts, map[string]string{"retention.ms": retention})
	f.props = faultProps(t, src, dst, topic, nil)
	f.load = src.StartLoad(t, topic, faultParts, faultRate)
	f.p, f.base = outageKMM(t, f.props)
	waitCount(t, dst, remote, faultParts, 5000, 2*time.Minute)

	if err := a.DeleteTopics(context.Background(), remote); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	// Recreated, with the source's partition count and configs.
	testbed.Eventually(t, 60*time.Second, func() error {
		f.alive(t, "after the target topic was deleted")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ts, err := a.ListTopics(ctx)
		if err != nil {
			return err
		}
		if ts[remote].Partitions != faultParts {
			return fmt.Errorf("%s on %s: %+v", remote, dst.Name, ts[remote])
		}
		if strings.Count(f.p.Stderr(), "created "+remote+" on "+dst.Name) < 2 {
			return fmt.Errorf("no second 'created %s' line yet", remote)
		}
		return nil
	})
	recreated := time.Since(deleted)
	cfgs, err := a.DescribeTopicConfigs(context.Background(), remote)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfgs[remote]["retention.ms"].Value; got != retention {
		t.Errorf("recreated %s: retention.ms = %q, want the source's %s", remote, got, retention)
	}
	t.Logf("%s recreated %s after the deletion", remote, recreated.Round(100*time.Millisecond))
	f.finishDeleted(t, deleted, "target-topic-deleted", 1, "recreated by the running kmm with the source's partitions and configs")
}

// TestFaultTargetTopicDeletedSlowRefresh: the other half of the rule. When the next topic
// refresh is further away than librdkafka's topic.metadata.propagation.max.ms (30 s), the
// producer gives the records up and kmm stops the flow with an error naming the topic (exit 1,
// a hint saying what to do), having written nothing anywhere; started again, it creates the
// topic and resumes from its stored progress.
func TestFaultTargetTopicDeletedSlowRefresh(t *testing.T) {
	bed := testbed.Attach(t)
	src, dst := bed.C, bed.B
	topic := testbed.Unique(t, "fdels")
	remote := src.Name + "." + topic
	a := dst.Admin(t)
	f := &faultFlow{src: src, dst: dst, topic: topic, remote: remote}
	src.CreateTopic(t, topic, faultParts, nil)
	f.props = faultProps(t, src, dst, topic, nil)
	slow := writeProps(t, "clusters = C, B", "C->B.enabled = true", "C->B.topics = "+regexp.QuoteMeta(topic), "refresh.topics.interval.seconds = 300")
	f.load = src.StartLoad(t, topic, faultParts, faultRate)
	p, _ := outageKMM(t, slow)
	waitCount(t, dst, remote, faultParts, 5000, 2*time.Minute)
	if err := a.DeleteTopics(context.Background(), remote); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	var code int
	select {
	case <-p.done:
		code = p.cmd.ProcessState.ExitCode()
	case <-time.After(90 * time.Second):
		t.Fatalf("kmm still runs 90 s after its target topic was deleted:\n%s", tail(p.Stderr(), 20))
	}
	stopped := time.Since(deleted)
	stderr := p.Stderr()
	t.Logf("kmm stopped %s after the deletion, exit %d:\n%s", stopped.Round(100*time.Millisecond), code, tail(stderr, 4))
	for _, want := range []string{"the target topic " + remote + "[", "is gone from B (deleted?)", "hint: kmm recreates a deleted remote topic"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stop message lacks %q:\n%s", want, tail(stderr, 10))
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	ts, err := a.ListTopics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ts[remote]; ok {
		t.Fatalf("%s exists again on %s after kmm stopped: something wrote it", remote, dst.Name)
	}
	// Started again (as an operator or supervisor would): the topic is created, the copy
	// resumes from the stored progress.
	f.p, f.base = outageKMM(t, f.props)
	f.finishDeleted(t, deleted, "target-topic-deleted-slow-refresh", 2,
		fmt.Sprintf("refresh 300 s: kmm stopped %.0f s after the deletion (exit 1, topic named, hint), wrote nothing; started again it created the topic", stopped.Seconds()))
}

// finishDeleted catches up, stops kmm and checks the rule from the outside.
func (f *faultFlow) finishDeleted(t *testing.T, deleted time.Time, scenario string, runs int, note string) {
	t.Helper()
	f.waitAcked(t, f.sourceEnds(t), 2*time.Minute)
	recover := time.Since(deleted)
	f.load.Stop()
	f.waitAcked(t, f.sourceEnds(t), 2*time.Minute)
	if code := f.p.stop(t, syscall.SIGTERM, outageShutdown+20*time.Second); code != 0 {
		t.Fatalf("graceful stop: exit %d\n%s", code, tail(f.p.Stderr(), 20))
	}
	// Source: seq -> offset per partition; the load puts seq s in partition s % parts.
	readAll := func(c testbed.Cluster, name string) []rdkafka.Record {
		var tps []rdkafka.TP
		for p := 0; p < faultParts; p++ {
			tps = append(tps, rdkafka.TP{Topic: name, Partition: int32(p)})
		}
		ends, err := c.Admin(t).ListOffsets(context.Background(), tps, rdkafka.Latest)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range ends {
			n += int(e.Offset)
		}
		return c.ConsumeN(t, name, faultParts, n, 2*time.Minute)
	}
	srcOff := make([]map[uint64]int64, faultParts)
	srcSeqs := make([][]uint64, faultParts)
	total := 0
	for p := range srcOff {
		srcOff[p] = map[uint64]int64{}
	}
	for _, r := range readAll(f.src, f.topic) {
		s := binary.BigEndian.Uint64(r.Value)
		srcOff[r.Partition][s] = r.Offset
		srcSeqs[r.Partition] = append(srcSeqs[r.Partition], s)
		total++
	}
	got := make([][]rdkafka.Record, faultParts)
	for _, r := range readAll(f.dst, f.remote) {
		got[r.Partition] = append(got[r.Partition], r)
	}
	var lost, dups, gone int
	firstUp := make([]int64, faultParts)
	for p := 0; p < faultParts; p++ {
		if len(got[p]) == 0 {
			t.Fatalf("recreated %s[%d] is empty", f.remote, p)
		}
		seen := map[uint64]bool{}
		last := int64(-1)
		for _, r := range got[p] {
			s := binary.BigEndian.Uint64(r.Value)
			off, ok := srcOff[p][s]
			if !ok || int(s%faultParts) != p {
				t.Fatalf("%s[%d] offset %d holds seq %d, which is not a record of %s[%d]: written to a wrong place", f.remote, p, r.Offset, s, f.topic, p)
			}
			if seen[s] {
				dups++
				continue
			}
			seen[s] = true
			if off <= last {
				t.Fatalf("%s[%d]: source offset %d after %d: order broken", f.remote, p, off, last)
			}
			last = off
		}
		firstUp[p] = srcOff[p][binary.BigEndian.Uint64(got[p][0].Value)]
		for _, s := range srcSeqs[p] {
			switch {
			case srcOff[p][s] < firstUp[p]:
				gone++
			case !seen[s]:
				lost++
			}
		}
	}
	// New offset syncs: for each partition, (first record's source offset -> 0).
	syncsTopic := "mm2-offset-syncs." + f.dst.Name + ".internal"
	var syncs []mm2wire.OffsetSync
	for _, r := range readAll2(t, f.src, syncsTopic) {
		if s, err := mm2wire.DecodeOffsetSync(r.Key, r.Value); err == nil && s.Topic == f.topic {
			syncs = append(syncs, s)
		}
	}
	for p := 0; p < faultParts; p++ {
		found := false
		for _, s := range syncs {
			found = found || (s.Partition == int32(p) && s.DownstreamOffset == 0 && s.UpstreamOffset == firstUp[p] && firstUp[p] > 0)
		}
		if !found {
			t.Errorf("no offset sync %s[%d] %d -> 0 for the recreated topic in %s (syncs: %v)", f.topic, p, firstUp[p], syncsTopic, syncs)
		}
	}
	assertDelivery(t, atLeastOnce, faultResult{Scenario: scenario, Fault: "remote topic deleted on the target while replicating",
		Records: total - gone, Lost: lost, Duplicated: dups, RecoverSec: recover.Seconds(), KMMRuns: runs,
		Note: fmt.Sprintf("%s; %d records copied before the deletion went with the deleted topic (not copied again, not counted); new offset sync per partition -> 0", note, gone)})
}

// readAll2 reads the single-partition topic name of c to its end.
func readAll2(t *testing.T, c testbed.Cluster, name string) []rdkafka.Record {
	t.Helper()
	ends, err := c.Admin(t).ListOffsets(context.Background(), []rdkafka.TP{{Topic: name, Partition: 0}}, rdkafka.Latest)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, e := range ends {
		n = int(e.Offset)
	}
	return c.ConsumeN(t, name, 1, n, time.Minute)
}
