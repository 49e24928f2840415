package mm2read_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/pkg/checkpoint"
	"github.com/kmmproject/kmm/pkg/offsetsync"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// startMM2 runs Apache MM2 (scripts/mm2.sh, dedicated mode) on props; it is stopped at test
// end, and its log tail printed on failure.
func startMM2(t *testing.T, bed *testbed.Bed, props string) {
	t.Helper()
	name := testbed.Unique(t, "mm2")
	script := filepath.Join(testbed.Root(), "scripts", "mm2.sh")
	env := append(os.Environ(), "MM2_HEAP=-Xms64m -Xmx384m", "KMM_TESTBED_DIR="+bed.Dir)
	cmd := exec.Command(script, "start", name, props)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mm2.sh start: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		stop := exec.Command(script, "stop", name)
		stop.Env = env
		_, _ = stop.CombinedOutput()
		logf := filepath.Join(bed.Dir, "mm2", name, "mm2.log")
		if t.Failed() {
			data, _ := os.ReadFile(logf)
			lines := strings.Split(string(data), "\n")
			t.Logf("MM2 log tail:\n%s", strings.Join(lines[max(0, len(lines)-60):], "\n"))
			return
		}
		_ = os.RemoveAll(filepath.Join(bed.Dir, "mm2", name))
	})
}

// Apache MM2 replicates S->T (aliases of A and B unique to this test) and checkpoints a real
// group; kmm's checkpoint store reads MM2's checkpoints, kmm's mapping reads MM2's offset
// syncs and translates the group at least as far as MM2 did (exactly for the caught-up
// partition), never past the group's next record, and translate-offsets accepts the result.
func TestRealReadsApacheMM2(t *testing.T) {
	bed := testbed.Attach(t)
	var b [3]byte
	_, _ = rand.Read(b[:])
	S, T := "S"+hex.EncodeToString(b[:]), "T"+hex.EncodeToString(b[:])
	t.Cleanup(func() { deleteTopicsContaining(bed, S, T) })

	topic := testbed.Unique(t, "mmx")
	group := testbed.Unique(t, "mmg")
	remote := S + "." + topic
	const parts, n = 2, 500
	bed.A.CreateTopic(t, topic, parts, nil)
	produceSeq(t, bed.A, topic, parts, 0, n)
	commits := map[int32]int64{0: n, 1: 123}
	consumeAndCommit(t, bed.A, group, topic, commits)

	lines := []string{
		"clusters = " + S + ", " + T,
		S + ".bootstrap.servers = " + bed.A.Bootstrap,
		T + ".bootstrap.servers = " + bed.B.Bootstrap,
		S + "->" + T + ".enabled = true",
		S + "->" + T + ".topics = " + topic,
		S + "->" + T + ".groups = " + group,
		"emit.checkpoints.interval.seconds = 1",
		"refresh.groups.interval.seconds = 1",
		"refresh.topics.interval.seconds = 1",
		"emit.heartbeats.interval.seconds = 1",
		"sync.group.offsets.enabled = false",
		"replication.factor = 1",
		"checkpoints.topic.replication.factor = 1",
		"heartbeats.topic.replication.factor = 1",
		"offset-syncs.topic.replication.factor = 1",
	}
	for _, a := range []string{S, T} {
		lines = append(lines, a+".offset.storage.replication.factor = 1", a+".config.storage.replication.factor = 1",
			a+".status.storage.replication.factor = 1", a+".offset.flush.interval.ms = 1000", a+".plugin.discovery = service_load")
	}
	props := filepath.Join(t.TempDir(), "mm2.properties")
	if err := os.WriteFile(props, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	startMM2(t, bed, props)
	waitEnds(t, bed.B, remote, parts, n, 3*time.Minute)

	// MM2's checkpoints, read by kmm: wait until the caught-up partition is exact (MM2 3.7+
	// promotes the delayed sync of the last record at its offset commit).
	cpTopic := S + ".checkpoints.internal"
	var st *checkpoint.Store
	testbed.Eventually(t, 3*time.Minute, func() error {
		st = checkpoint.NewStore()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := mm2readLoadCheckpoints(ctx, t, st, cpTopic); err != nil {
			return err
		}
		e0, ok0 := st.Get(group, checkpoint.TP{Topic: remote, Partition: 0})
		e1, ok1 := st.Get(group, checkpoint.TP{Topic: remote, Partition: 1})
		if !ok0 || !ok1 || e0.UpstreamOffset != n || e0.DownstreamOffset != n || e1.UpstreamOffset != commits[1] {
			return fmt.Errorf("MM2 checkpoints of %s so far: %v", group, st.Entries(group))
		}
		return nil
	})
	for _, e := range st.Entries(group) {
		t.Logf("MM2 checkpoint: %s[%d] upstream %d -> downstream %d (written %s ago)", e.Topic, e.Partition, e.UpstreamOffset, e.DownstreamOffset, time.Since(e.Time).Round(time.Millisecond))
	}

	// MM2's offset syncs, read by kmm.
	m, ls := loadMapping(t, bed.A, "mm2-offset-syncs."+T+".internal")
	t.Logf("MM2 offset syncs: %d records, %d undecodable", ls.Records, ls.Undecodable)
	for p := int32(0); p < parts; p++ {
		tp := offsetsync.TP{Topic: topic, Partition: p}
		t.Logf("p%d: MM2 syncs %v", p, m.History(tp))
		tr := m.Translate(tp, commits[p])
		e, _ := st.Get(group, checkpoint.TP{Topic: remote, Partition: p})
		if tr.Status != offsetsync.Translated || tr.Downstream < e.DownstreamOffset || tr.Downstream > commits[p] {
			t.Fatalf("p%d: kmm translates %d to %+v; MM2 checkpointed %d", p, commits[p], tr, e.DownstreamOffset)
		}
		if commits[p] == n && !tr.Exact {
			t.Fatalf("p%d caught up: %+v", p, tr)
		}
		if tr.Downstream < n {
			got := seqOf(t, recordAt(t, bed.B, remote, p, tr.Downstream))
			if got > commits[p] || commits[p]-got > tr.Bound {
				t.Fatalf("p%d: record at %d is seq %d, group at %d, bound %d", p, tr.Downstream, got, commits[p], tr.Bound)
			}
		}
	}
	res := checkpoint.Translate(checkpoint.TranslateInput{Source: S, Target: T, Policy: defaultPolicy(), Checkpoints: st, Mapping: m,
		Groups: []string{group}, Now: time.Now()})
	if len(res) != 1 || !res[0].OK() || len(res[0].Rows) != parts {
		t.Fatalf("translate-offsets on MM2's checkpoints: %+v", res)
	}
	for _, r := range res[0].Rows {
		t.Logf("row: %+v", r)
		if r.SourceTopic != topic || r.SourceOffset != commits[r.Partition] || r.Bound < 0 {
			t.Fatalf("row %+v", r)
		}
	}
}

func mm2readLoadCheckpoints(ctx context.Context, t *testing.T, st *checkpoint.Store, topic string) (checkpoint.LoadStats, error) {
	return mm2readLoad(ctx, t, st, topic)
}

// deleteTopicsContaining deletes the topics on A and B whose name contains one of the aliases.
func deleteTopicsContaining(bed *testbed.Bed, names ...string) {
	for _, c := range []testbed.Cluster{bed.A, bed.B} {
		a, err := rdkafka.NewAdmin("cleanup "+c.Name, c.Config())
		if err != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if ts, err := a.ListTopics(ctx); err == nil {
			var del []string
			for topic := range ts {
				for _, x := range names {
					if strings.Contains(topic, x) {
						del = append(del, topic)
						break
					}
				}
			}
			if len(del) > 0 {
				_ = a.DeleteTopics(ctx, del...)
			}
		}
		cancel()
		a.Close()
	}
}
