// Package snapshot fetches what read commands (lag, status, translate-offsets) compute on: source
// offsets, the resume positions stored on the target, heartbeat and progress ages, checkpoints,
// group offsets, each cluster's reachability. It reads only, through the cluster seam
// (pkg/cluster: the caller's Opener), and never writes to a cluster.
package snapshot

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kmmproject/kmm/pkg/checkpoint"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/flowstate"
	"github.com/kmmproject/kmm/pkg/health"
	"github.com/kmmproject/kmm/pkg/lag"
	"github.com/kmmproject/kmm/pkg/mm2read"
	"github.com/kmmproject/kmm/pkg/plan"
)

// Lag reads, per flow, the selected source partitions' offsets and their replicated positions
// (Positions: the best evidence on the target), and the timestamps of the oldest unreplicated
// records.
func Lag(ctx context.Context, open cluster.Opener, flows []*flow.Flow, topics []string) ([]lag.PartitionLag, error) {
	return LagLive(ctx, open, flows, topics, nil)
}

// LiveFunc returns the live positions of a flow's partitions from a running replicator (nil
// when it has none).
type LiveFunc func(f *flow.Flow) map[cluster.TP]lag.Observed

// LagLive is Lag with live positions from a running replicator when live gives them.
func LagLive(ctx context.Context, open cluster.Opener, flows []*flow.Flow, topics []string, live LiveFunc) ([]lag.PartitionLag, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var ins []lag.PartitionInput
	for _, f := range flows {
		// Both clusters at once: one wait when both are down, and the error names each.
		cs, err := cluster.OpenAll(ctx, open, f, 10*time.Second, "", flow.Source, flow.Target)
		if err != nil {
			return nil, err
		}
		src, tgt := cs[0], cs[1]
		defer src.Close()
		defer tgt.Close()
		ts, err := src.ListTopics(ctx)
		if err != nil {
			return nil, err
		}
		var tps []cluster.TP
		for t, info := range ts {
			if !f.Selected(t) || (len(topics) > 0 && !slices.Contains(topics, t)) {
				continue
			}
			for p := 0; p < info.Partitions; p++ {
				tps = append(tps, cluster.TP{Topic: t, Partition: int32(p)})
			}
		}
		if len(tps) == 0 {
			continue
		}
		starts, err := src.ListOffsets(ctx, tps, cluster.Earliest)
		if err != nil {
			return nil, err
		}
		ends, err := src.ListOffsets(ctx, tps, cluster.Latest)
		if err != nil {
			return nil, err
		}
		q := PositionQuery{Flow: f, Source: src, Target: tgt, TPs: tps, SourceStarts: map[cluster.TP]int64{}, SourceEnds: map[cluster.TP]int64{}}
		for _, tp := range tps {
			q.SourceStarts[tp], q.SourceEnds[tp] = starts[tp].Offset, ends[tp].Offset
		}
		if live != nil {
			q.Live = live(f)
		} else {
			q.Live = LeaseLive(ctx, tgt, f)
		}
		pos, err := Positions(ctx, q)
		if err != nil {
			return nil, err
		}
		need := map[cluster.TP]int64{}
		var flowIns []lag.PartitionInput
		for _, tp := range tps {
			p := pos[tp].Position
			st := int64(-1)
			if s := pos[tp].Input.Stored; s != nil {
				st = s.Next - 1
			}
			in := lag.PartitionInput{Flow: f.Name(), Topic: tp.Topic, RemoteTopic: f.RemoteTopic(tp.Topic), Partition: tp.Partition,
				SourceStart: starts[tp].Offset, SourceEnd: ends[tp].Offset, Stored: st, Position: &p}
			if next := max(p.Next, in.SourceStart); next < in.SourceEnd {
				need[tp] = next
			}
			flowIns = append(flowIns, in)
		}
		oldest := cluster.Timestamps(ctx, src, need)
		for i := range flowIns {
			flowIns[i].OldestUnreplicatedMs = oldest[cluster.TP{Topic: flowIns[i].Topic, Partition: flowIns[i].Partition}]
		}
		ins = append(ins, flowIns...)
	}
	return lag.Compute(ins, time.Now()), nil
}

// Status collects the status of every flow. Unreachable clusters are recorded, not returned as
// errors, so the report can say what the other side knows.
// Flows are collected in parallel (and each flow's two clusters too), so unreachable clusters
// cost one connection timeout, not one per cluster.
func Status(ctx context.Context, open cluster.Opener, flows []*flow.Flow) []health.FlowStatus {
	return StatusLive(ctx, open, flows, nil)
}

// StatusLive is Status with live positions from a running replicator when live gives them.
func StatusLive(ctx context.Context, open cluster.Opener, flows []*flow.Flow, live LiveFunc) []health.FlowStatus {
	out := make([]health.FlowStatus, len(flows))
	var wg sync.WaitGroup
	for i, f := range flows {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = flowStatus(ctx, open, f, live)
		}()
	}
	wg.Wait()
	return out
}

func flowStatus(ctx context.Context, opener cluster.Opener, f *flow.Flow, live LiveFunc) health.FlowStatus {
	st := health.FlowStatus{Flow: f.Name(), Source: f.Source, Target: f.Target, SourceBoot: f.SourceBootstrap, TargetBoot: f.TargetBootstrap,
		Enabled: f.Enabled, Heartbeats: f.EmitHeartbeats, HeartbeatInterval: f.HeartbeatInterval, FlushInterval: f.OffsetFlushInterval, RateLimit: f.RateLimit,
		Checkpoints: f.Enabled && f.EmitCheckpoints, GroupSync: f.Enabled && f.EmitCheckpoints && f.SyncGroupOffsets}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	open := func(side flow.Side) (cluster.Cluster, error) {
		c, err := opener.Open(f, side)
		if err != nil {
			return nil, err
		}
		if _, err := c.Ping(ctx, 10*time.Second); err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	}
	var src, tgt cluster.Cluster
	var serr, terr error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); src, serr = open(flow.Source) }()
	go func() { defer wg.Done(); tgt, terr = open(flow.Target) }()
	wg.Wait()
	st.SourceErr = serr
	if src != nil {
		defer src.Close()
	}
	st.TargetErr = terr
	if tgt != nil {
		defer tgt.Close()
	}
	if tgt != nil {
		st.DRState, st.DRDetail, st.Replicators, st.Workers = drState(ctx, src, tgt, f)
		st.LastHeartbeat = lastHeartbeat(ctx, tgt, f)
		if f.Enabled {
			st.LastProgress, st.StoredParts = lastProgress(ctx, tgt, f)
		}
	}
	if tgt != nil && st.Checkpoints {
		st.Groups = groupStatus(ctx, src, tgt, f)
	}
	if src == nil || !f.Enabled {
		return st
	}
	ts, err := src.ListTopics(ctx)
	if err != nil {
		st.SourceErr = err
		return st
	}
	st.TopicsListed = true
	for t := range ts {
		if f.Selected(t) {
			st.SelectedTopics = append(st.SelectedTopics, t)
		}
	}
	slices.Sort(st.SelectedTopics)
	if tgt != nil {
		if tts, err := tgt.ListTopics(ctx); err == nil {
			st.TargetListed = true
			for _, t := range st.SelectedTopics {
				if _, ok := tts[f.RemoteTopic(t)]; !ok {
					st.MissingOnT = append(st.MissingOnT, t)
				}
			}
		}
		if rows, err := LagLive(ctx, opener, []*flow.Flow{f}, nil, live); err == nil {
			st.Lag, st.LagKnown = rows, true
		}
	}
	return st
}

// lastHeartbeat returns the timestamp of the newest heartbeat keyed (S,T) among the last
// records of T's heartbeats topic.
func lastHeartbeat(ctx context.Context, tgt cluster.Cluster, f *flow.Flow) time.Time {
	recs := tailRecords(ctx, tgt, f.Policy.HeartbeatsTopic(), 200)
	var newest time.Time
	for _, r := range recs {
		hb, err := decodeHeartbeat(r)
		if err == nil && hb.src == f.SourceAlias && hb.tgt == f.TargetAlias && hb.ts.After(newest) {
			newest = hb.ts
		}
	}
	return newest
}

// lastProgress returns the newest resume-position record time for this source on T and how
// many partitions have a stored position.
func lastProgress(ctx context.Context, tgt cluster.Cluster, f *flow.Flow) (time.Time, int) {
	pos, err := mm2read.ReadSourcePositions(ctx, tgt, f.OffsetsTopic, f.SourceAlias)
	if err != nil {
		return time.Time{}, 0
	}
	recs := tailRecords(ctx, tgt, f.OffsetsTopic, 50)
	var newest time.Time
	for _, r := range recs {
		if isSourcePosition(r, f.SourceAlias) && r.Timestamp.After(newest) {
			newest = r.Timestamp
		}
	}
	return newest, len(pos)
}

// tailRecords reads up to n last records of every partition of topic.
func tailRecords(ctx context.Context, a cluster.Cluster, topic string, n int64) []cluster.Record {
	ts, err := a.ListTopics(ctx)
	if err != nil || ts[topic].Partitions == 0 {
		return nil
	}
	var tps []cluster.TP
	for p := 0; p < ts[topic].Partitions; p++ {
		tps = append(tps, cluster.TP{Topic: topic, Partition: int32(p)})
	}
	starts, err1 := a.ListOffsets(ctx, tps, cluster.Earliest)
	ends, err2 := a.ListOffsets(ctx, tps, cluster.Latest)
	if err1 != nil || err2 != nil {
		return nil
	}
	at := map[cluster.TP]int64{}
	for _, tp := range tps {
		if ends[tp].Offset > starts[tp].Offset {
			at[tp] = max(starts[tp].Offset, ends[tp].Offset-n)
		}
	}
	if len(at) == 0 {
		return nil
	}
	c, err := a.NewReader()
	if err != nil {
		return nil
	}
	defer c.Close()
	if err := c.Assign(at); err != nil {
		return nil
	}
	// Read until every partition's last record is in, or nothing came for a while (compaction
	// and transaction markers leave offsets without records). An empty first poll is not the
	// end: a client on a loaded machine or a long link (TLS, SASL, then the first fetch) takes
	// more than one poll to bring anything, and stopping there reported "no heartbeat yet".
	var out []cluster.Record
	last := map[cluster.TP]int64{}
	done := 0
	deadline := time.Now().Add(10 * time.Second)
	quiet := time.Now()
	for done < len(at) && time.Now().Before(deadline) && time.Since(quiet) < cluster.DefaultIdle {
		recs, err := c.Poll(ctx, 5000, 300*time.Millisecond)
		if err != nil {
			break
		}
		if len(recs) > 0 {
			quiet = time.Now()
		}
		for _, r := range recs {
			tp := cluster.TP{Topic: r.Topic, Partition: r.Partition}
			before, seen := last[tp]
			last[tp] = r.Offset
			if r.Offset >= ends[tp].Offset-1 && (!seen || before < ends[tp].Offset-1) {
				done++
			}
		}
		out = append(out, recs...)
	}
	return out
}

// groupStatus reads the checkpoints on T and, when S is reachable, whether each group has
// committed past them; with group sync on, whether the group is active on T.
func groupStatus(ctx context.Context, src, tgt cluster.Cluster, f *flow.Flow) []health.GroupStatus {
	store := checkpoint.NewStore()
	if _, err := mm2read.LoadCheckpoints(ctx, tgt, f.CheckpointsTopic(), store, f.GroupFilter); err != nil {
		return nil
	}
	var out []health.GroupStatus
	for _, g := range store.Groups() {
		gs := health.GroupStatus{Group: g}
		upstream := map[string]int64{}
		for _, e := range store.Entries(g) {
			if e.Time.After(gs.LastCheckpoint) {
				gs.LastCheckpoint = e.Time
			}
			up := e.Topic
			if u, ok := f.UpstreamTopic(e.Topic); ok {
				up = u
			}
			upstream[fmt.Sprintf("%s/%d", up, e.Partition)] = e.UpstreamOffset
		}
		if src != nil {
			if offs, err := src.ListGroupOffsets(ctx, g); err == nil {
				for tp, om := range offs {
					if ck, ok := upstream[fmt.Sprintf("%s/%d", tp.Topic, tp.Partition)]; ok && om.Offset > ck {
						gs.Behind = true
					}
				}
			}
		}
		if f.SyncGroupOffsets {
			if ds, err := tgt.DescribeGroups(ctx, g); err == nil && len(ds) == 1 {
				gs.ActiveOnTarget = ds[0].Members
			}
		}
		out = append(out, gs)
	}
	return out
}

// drState reads the flow's state record (newest epoch of T's and S's copies) and its live
// replicator leases from __kmm_state.
func drState(ctx context.Context, src, tgt cluster.Cluster, f *flow.Flow) (state, detail string, alive int, workers []health.Worker) {
	var copies []*flowstate.FlowRecord
	var leases []*flowstate.Lease
	for _, c := range []cluster.Cluster{tgt, src} {
		if c == nil {
			continue
		}
		recs, err := plan.ReadState(ctx, c)
		if err != nil {
			continue
		}
		if fs, err := flowstate.DecodeFlow(recs[flowstate.FlowKey(f.Source, f.Target)]); err == nil && fs != nil {
			copies = append(copies, fs)
		}
		if c == tgt {
			leases = flowstate.Leases(recs, f.Source, f.Target)
		}
	}
	st := flowstate.Newest(f.Name(), copies...)
	now := time.Now()
	for _, l := range leases {
		if l.Alive(now) {
			alive++
			if l.Workers != nil {
				workers = append(workers, health.Worker{Instance: l.Instance, Host: l.Host, PID: l.PID, Leader: l.Workers.Leader, Partitions: l.Workers.Partitions})
			}
		}
	}
	sort.Slice(workers, func(i, j int) bool { return workers[i].Instance < workers[j].Instance })
	if st.Epoch > 0 {
		detail = fmt.Sprintf("epoch %d since %s, %s by %s, run %s", st.Epoch, st.At.Format(time.RFC3339), st.Mode, st.By, st.RunID)
	}
	return string(st.State), detail, alive, workers
}

// LeaseLive takes live positions from the running `kmm replicate` that the flow's replicator
// lease names (its --listen URL, in __kmm_state on the target), when no --endpoint was given.
// A loopback URL counts only from the lease's own host. nil when no live replicator answers:
// the caller falls back to what the target holds.
func LeaseLive(ctx context.Context, tgt cluster.Cluster, f *flow.Flow) map[cluster.TP]lag.Observed {
	recs, err := plan.ReadState(ctx, tgt)
	if err != nil {
		return nil
	}
	host, _ := os.Hostname()
	now := time.Now()
	var out map[cluster.TP]lag.Observed
	for _, l := range flowstate.Leases(recs, f.Source, f.Target) {
		if !l.Alive(now) || l.Listen == "" {
			continue
		}
		if u, err := url.Parse(l.Listen); err != nil || (isLoopback(u.Hostname()) && l.Host != host && !strings.HasSuffix(l.Host, "@"+host)) {
			continue
		}
		m := LivePositions(ctx, l.Listen, f, now)
		if m == nil {
			continue
		}
		if l.Workers == nil {
			return m // the one replicator of the flow
		}
		// Workers: each knows the partitions it copies; together they know them all.
		if out == nil {
			out = map[cluster.TP]lag.Observed{}
		}
		for tp, o := range m {
			if _, seen := out[tp]; !seen {
				out[tp] = o
			}
		}
	}
	return out
}

func isLoopback(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
