package mm2read_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/e2e/testbed/replbed"
	"github.com/kmmproject/kmm/pkg/checkpoint"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/mm2read"
	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/offsetsync"
	"github.com/kmmproject/kmm/pkg/policy"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

func defaultPolicy() policy.Policy { return policy.NewDefault(".", false, true) }

func flowFor(src, tgt testbed.Cluster, re string) *flow.Flow { return replbed.Flow(src, tgt, re) }

func startReplicator(t *testing.T, flows ...*flow.Flow) *replbed.Running {
	return replbed.Start(t, flows...)
}

// produceSeq writes records seq from..from+n-1 to every partition; the value is "p:seq".
func produceSeq(t *testing.T, c testbed.Cluster, topic string, parts int, from, n int) {
	t.Helper()
	var recs []rdkafka.Record
	for s := from; s < from+n; s++ {
		for p := 0; p < parts; p++ {
			recs = append(recs, rdkafka.Record{Topic: topic, Partition: int32(p), Key: []byte(strconv.Itoa(s)), Value: []byte(fmt.Sprintf("%d:%d", p, s))})
		}
	}
	c.Produce(t, recs)
}

// seqOf returns the seq of a record written by produceSeq.
func seqOf(t *testing.T, r rdkafka.Record) int64 {
	t.Helper()
	_, s, ok := strings.Cut(string(r.Value), ":")
	n, err := strconv.ParseInt(s, 10, 64)
	if !ok || err != nil {
		t.Fatalf("unexpected record value %q", r.Value)
	}
	return n
}

// waitEnds waits until every partition of topic on c has the given end offset.
func waitEnds(t *testing.T, c testbed.Cluster, topic string, parts int, end int64, timeout time.Duration) {
	t.Helper()
	a := c.Admin(t)
	var tps []rdkafka.TP
	for p := 0; p < parts; p++ {
		tps = append(tps, rdkafka.TP{Topic: topic, Partition: int32(p)})
	}
	testbed.Eventually(t, timeout, func() error {
		ends, err := a.ListOffsets(context.Background(), tps, rdkafka.Latest)
		if err != nil {
			return err
		}
		for _, tp := range tps {
			if ends[tp].Offset != end {
				return fmt.Errorf("%s[%d] on %s ends at %d, want %d", topic, tp.Partition, c.Name, ends[tp].Offset, end)
			}
		}
		return nil
	})
}

// consumeAndCommit is a real consumer of group on c: it reads each partition from the start
// up to (excluding) the given offset, then commits that offset for it.
func consumeAndCommit(t *testing.T, c testbed.Cluster, group, topic string, upto map[int32]int64) {
	t.Helper()
	cons, err := rdkafka.NewConsumer("cluster "+c.Name, rdkafka.Config{"bootstrap.servers": c.Bootstrap, "group.id": group, "fetch.queue.backoff.ms": "10"})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	start := map[rdkafka.TP]int64{}
	for p, off := range upto {
		if off > 0 {
			start[rdkafka.TP{Topic: topic, Partition: p}] = int64(rdkafka.Earliest)
		}
	}
	if err := cons.Assign(start); err != nil {
		t.Fatal(err)
	}
	seen := map[int32]int64{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		done := true
		for p, off := range upto {
			if off > 0 && seen[p] < off {
				done = false
			}
		}
		if done {
			break
		}
		recs, err := cons.Poll(ctx, 5000, 200*time.Millisecond)
		if err != nil {
			t.Fatalf("consuming %s on %s as %s: %v", topic, c.Name, group, err)
		}
		for _, r := range recs {
			if r.Offset < upto[r.Partition] {
				seen[r.Partition] = r.Offset + 1
			}
		}
	}
	commit := map[rdkafka.TP]int64{}
	for p, off := range upto {
		commit[rdkafka.TP{Topic: topic, Partition: p}] = off
	}
	if err := cons.Commit(commit); err != nil {
		t.Fatal(err)
	}
}

// recordAt reads the record at offset off of topic[p] on c.
func recordAt(t *testing.T, c testbed.Cluster, topic string, p int32, off int64) rdkafka.Record {
	t.Helper()
	cons, err := rdkafka.NewConsumer("cluster "+c.Name, c.Config())
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	if err := cons.Assign(map[rdkafka.TP]int64{{Topic: topic, Partition: p}: off}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		recs, err := cons.Poll(ctx, 1, 200*time.Millisecond)
		if err != nil {
			t.Fatalf("reading %s[%d]@%d on %s: %v", topic, p, off, c.Name, err)
		}
		if len(recs) > 0 {
			if recs[0].Offset != off {
				t.Fatalf("asked offset %d of %s[%d], got %d", off, topic, p, recs[0].Offset)
			}
			return recs[0]
		}
	}
}

// loadMapping rebuilds the mapping from the offset-syncs topic on c.
func loadMapping(t *testing.T, c testbed.Cluster, topic string) (*offsetsync.Store, offsetsync.LoadStats) {
	t.Helper()
	s := offsetsync.NewStore(offsetsync.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := mm2read.LoadOffsetSyncs(ctx, c.Open(t), topic, s)
	if err != nil {
		t.Fatalf("loading %s from %s: %v", topic, c.Name, err)
	}
	return s, st
}

// waitSynced waits until the offset syncs on c map the record end-1 of every partition of
// topic, and returns the mapping.
func waitSynced(t *testing.T, c testbed.Cluster, syncsTopic, topic string, parts int, end int64) *offsetsync.Store {
	t.Helper()
	var m *offsetsync.Store
	testbed.Eventually(t, 60*time.Second, func() error {
		m, _ = loadMapping(t, c, syncsTopic)
		for p := 0; p < parts; p++ {
			s, _, ok := m.Latest(offsetsync.TP{Topic: topic, Partition: int32(p)})
			if !ok || s.Upstream != end-1 {
				return fmt.Errorf("newest sync of %s[%d] is %v (present %v), want upstream %d", topic, p, s, ok, end-1)
			}
		}
		return nil
	})
	return m
}

func groupOffsets(t *testing.T, c testbed.Cluster, group string) []checkpoint.SourceOffset {
	t.Helper()
	offs, err := c.Admin(t).ListGroupOffsets(context.Background(), group)
	if err != nil {
		t.Fatal(err)
	}
	var out []checkpoint.SourceOffset
	for tp, om := range offs {
		out = append(out, checkpoint.SourceOffset{Topic: tp.Topic, Partition: tp.Partition, Offset: om.Offset, Metadata: om.Metadata})
	}
	return out
}

func writeCheckpoints(t *testing.T, c testbed.Cluster, topic string, cps []mm2wire.Checkpoint) {
	t.Helper()
	var recs []rdkafka.Record
	for _, cp := range cps {
		k, v, err := checkpoint.Record(cp)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rdkafka.Record{Topic: topic, Partition: 0, Key: k, Value: v, Timestamp: time.Now()})
	}
	c.Produce(t, recs)
}

func loadCheckpoints(t *testing.T, c testbed.Cluster, topic string) *checkpoint.Store {
	t.Helper()
	s := checkpoint.NewStore()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := mm2read.LoadCheckpoints(ctx, c.Open(t), topic, s, nil); err != nil {
		t.Fatalf("loading %s from %s: %v", topic, c.Name, err)
	}
	return s
}

func describe(t *testing.T, c testbed.Cluster, group string) checkpoint.TargetGroup {
	t.Helper()
	a := c.Admin(t)
	ds, err := a.DescribeGroups(context.Background(), group)
	if err != nil || len(ds) != 1 {
		t.Fatalf("describe %s on %s: %v %v", group, c.Name, ds, err)
	}
	tg := checkpoint.TargetGroup{Group: group, State: ds[0].State, Members: ds[0].Members, Err: ds[0].Err}
	offs, err := a.ListGroupOffsets(context.Background(), group)
	if err != nil {
		t.Fatal(err)
	}
	tg.Offsets = map[checkpoint.TP]int64{}
	for tp, om := range offs {
		tg.Offsets[checkpoint.TP{Topic: tp.Topic, Partition: tp.Partition}] = om.Offset
	}
	return tg
}

func mm2readLoad(ctx context.Context, t *testing.T, st *checkpoint.Store, topic string) (checkpoint.LoadStats, error) {
	t.Helper()
	bed := testbed.Attach(t)
	return mm2read.LoadCheckpoints(ctx, bed.B.Open(t), topic, st, nil)
}
