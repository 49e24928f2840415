package replsource

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed/kfakebed"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/httpapi"
	"github.com/kmmproject/kmm/pkg/lag"
	"github.com/kmmproject/kmm/pkg/replicator"
	"github.com/kmmproject/kmm/pkg/snapshot"
)

func eventually(t *testing.T, within time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The readings start with the first request, keep the last result beside a failure, skip a
// flow whose cluster the replicator holds for down, and stop when nobody asks any more.
func TestReadingsLifecycle(t *testing.T) {
	f := &flow.Flow{Source: "A", Target: "B", Enabled: true, Tasks: 1}
	var mu sync.Mutex
	opens := 0
	openErr := errors.New("no such cluster")
	src := New(replicator.New([]*flow.Flow{f}, replicator.Options{}), []*flow.Flow{f}, Options{ReadEvery: 20 * time.Millisecond, ReadIdle: 150 * time.Millisecond,
		Opener: cluster.OpenerFunc(func(*flow.Flow, flow.Side) (cluster.Cluster, error) {
			mu.Lock()
			defer mu.Unlock()
			opens++
			return nil, openErr
		})})
	defer src.Close()
	stats := []replicator.FlowStats{{Flow: "A->B", Source: "A", Target: "B", Enabled: true, Running: true,
		Clusters: []replicator.ClusterState{{Alias: "A", Role: "source", Up: true}, {Alias: "B", Role: "target", Up: true}}}}
	var smu sync.Mutex
	src.readers.stats = func() []replicator.FlowStats { smu.Lock(); defer smu.Unlock(); return slices.Clone(stats) }

	if n := len(src.readers.open.open); n != 0 || opens != 0 {
		t.Fatal("read before anyone asked")
	}
	rs := src.Readings()
	if len(rs) != 1 || rs[0].Flow != "A->B" || rs[0].Every != 20*time.Millisecond || !rs[0].At.IsZero() {
		t.Fatalf("first readings: %+v", rs)
	}
	eventually(t, 5*time.Second, func() error {
		r := src.Readings()[0]
		if !strings.Contains(r.Err, "no such cluster") || r.Attempted.IsZero() || !r.At.IsZero() || r.Cost != nil {
			return fmt.Errorf("reading %+v", r)
		}
		return nil
	})
	// The target down: not read at all.
	smu.Lock()
	stats[0].Clusters[1] = replicator.ClusterState{Alias: "B", Role: "target", Up: false, DownSince: time.Unix(1_700_000_000, 0)}
	smu.Unlock()
	mu.Lock()
	before := opens
	mu.Unlock()
	eventually(t, 5*time.Second, func() error {
		if r := src.Readings()[0]; r.Err != "not read: cluster B (target) is down since 2023-11-14T22:13:20Z" {
			return fmt.Errorf("reading %+v", r)
		}
		return nil
	})
	mu.Lock()
	after := opens
	mu.Unlock()
	if after > before+2 { // at most the reading under way when B went down
		t.Errorf("%d opens while B was down", after-before)
	}
	// Nobody asks: the loop stops, and starts again with the next request.
	eventually(t, 5*time.Second, func() error {
		src.readers.mu.Lock()
		defer src.readers.mu.Unlock()
		if src.readers.running {
			return errors.New("still reading")
		}
		return nil
	})
	src.Readings()
	src.readers.mu.Lock()
	running := src.readers.running
	src.readers.mu.Unlock()
	if !running {
		t.Error("a request after the idle stop did not start the readings again")
	}
	src.Close()
	src.readers.mu.Lock()
	defer src.readers.mu.Unlock()
	if src.readers.running {
		t.Error("still reading after Close")
	}
}

// The cost of failing over now is `kmm lag --group`'s numbers: snapshot.LagLive with the
// replicator's live positions, snapshot.GroupLag and lag.ComputeGroups, summed per group.
func TestReadingsCostIsLagGroup(t *testing.T) {
	a, b := kfakebed.Start(t, "A"), kfakebed.Start(t, "B")
	a.CreateTopic(t, "orders", 2)
	var recs []cluster.Record
	for i := 0; i < 20; i++ {
		recs = append(recs, cluster.Record{Topic: "orders", Partition: int32(i % 2), Value: []byte(fmt.Sprint(i))})
	}
	a.Produce(t, recs)
	ctx := context.Background()
	if err := a.Open(t).AlterGroupOffsets(ctx, "billing", map[cluster.TP]cluster.OffsetMeta{{Topic: "orders", Partition: 0}: {Offset: 3}, {Topic: "orders", Partition: 1}: {Offset: 8}}); err != nil {
		t.Fatal(err)
	}
	f := kfakebed.Flow(a, b, "orders")
	f.EmitCheckpoints, f.GroupFilter = true, func(string) bool { return true }
	src := New(replicator.New([]*flow.Flow{f}, replicator.Options{}), []*flow.Flow{f}, Options{Opener: kfakebed.Opener(), ReadEvery: time.Hour})
	defer src.Close()
	stats := replicator.FlowStats{Flow: "A->B", Source: "A", Target: "B", Enabled: true, Running: true,
		Clusters:   []replicator.ClusterState{{Alias: "A", Role: "source", Up: true}, {Alias: "B", Role: "target", Up: true}},
		Partitions: []replicator.PartitionStats{{Topic: "orders", Partition: 0, Acked: 5}, {Topic: "orders", Partition: 1, Acked: -1}}}
	src.readers.stats = func() []replicator.FlowStats { return []replicator.FlowStats{stats} }
	src.Readings()
	var r httpapi.FlowReading
	eventually(t, 30*time.Second, func() error {
		if r = src.Readings()[0]; r.At.IsZero() {
			return fmt.Errorf("no reading yet: %+v", r)
		}
		return nil
	})
	if r.Err != "" || r.Cost == nil || r.State == nil || r.State.State != "REPLICATING" {
		t.Fatalf("reading %+v", r)
	}
	// The same functions, called as kmm lag --group does.
	live := func(*flow.Flow) map[cluster.TP]lag.Observed {
		return map[cluster.TP]lag.Observed{{Topic: "orders", Partition: 0}: {Next: 6, At: time.Now()}}
	}
	rows, err := snapshot.LagLive(ctx, kfakebed.Opener(), []*flow.Flow{f}, nil, live)
	if err != nil {
		t.Fatal(err)
	}
	ins, err := snapshot.GroupLag(ctx, kfakebed.Opener(), f, []string{"billing"}, rows, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var notOnT, reread, miss int64
	unknownReread := 0
	for _, row := range rows {
		notOnT += row.LagRecords
	}
	for _, g := range lag.ComputeGroups(ins) {
		if g.WouldReread >= 0 {
			reread += g.WouldReread
		} else {
			unknownReread++
		}
		miss += g.CouldMiss
	}
	c := r.Cost
	if c.Partitions != 2 || c.NotOnTarget != notOnT || c.NotOnTarget != 4+10 || c.PositionSources[lag.FromLive] != 1 {
		t.Errorf("cost %+v, kmm lag: %d records not on B", c, notOnT)
	}
	if len(c.Groups) != 1 || c.Groups[0].Group != "billing" || c.Groups[0].Partitions != 2 || c.Groups[0].WouldReread != reread ||
		c.Groups[0].RereadUnknown != unknownReread || c.Groups[0].CouldMiss != miss || c.Groups[0].LagOnSource != 7+2 {
		t.Errorf("groups %+v; kmm lag --group: re-read %d (%d unknown), could miss %d", c.Groups, reread, unknownReread, miss)
	}
}
