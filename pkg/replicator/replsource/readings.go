package replsource

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/flowstate"
	"github.com/kmmproject/kmm/pkg/httpapi"
	"github.com/kmmproject/kmm/pkg/lag"
	"github.com/kmmproject/kmm/pkg/plan"
	"github.com/kmmproject/kmm/pkg/rdkafka"
	"github.com/kmmproject/kmm/pkg/replicator"
	"github.com/kmmproject/kmm/pkg/snapshot"
)

// Defaults of the background readings (Options).
const (
	// DefaultReadEvery is how often the flows' clusters are read again while someone looks.
	DefaultReadEvery = 15 * time.Second
	// DefaultReadIdle: reading stops this long after the last request of the status page or
	// /api/status, and starts again with the next one.
	DefaultReadIdle = 10 * time.Minute
	// readTimeout bounds one flow's reading.
	readTimeout = 60 * time.Second
)

// Options tune the background readings of the status page.
type Options struct {
	// Opener opens the flows' clusters for the readings (default: librdkafka clients whose
	// own log lines go to the debug level, so an outage is reported once, by the replicator's
	// cluster watch). The clusters it opens are kept open while reading goes on.
	Opener cluster.Opener
	// ReadEvery and ReadIdle: DefaultReadEvery, DefaultReadIdle when 0.
	ReadEvery, ReadIdle time.Duration
}

// quietOpener opens librdkafka clusters with a problem handler that ignores their problems:
// their log lines then go to the debug level (pkg/rdkafka), and reaching the clusters stays the
// replicator's to report.
type quietOpener struct{}

func (quietOpener) Open(f *flow.Flow, side flow.Side) (cluster.Cluster, error) {
	return rdkafka.NewCluster(f.Alias(side), f.Bootstrap(side), f.Settings(side, flow.Admin), f.Settings(side, flow.Consumer),
		f.Settings(side, flow.Producer), rdkafka.WithProblems(func(error) {}))
}

// keptOpener opens each side of a flow once and hands out the same cluster until closeAll:
// the readings every 15 s do not connect anew each time. The clusters it returns ignore Close.
type keptOpener struct {
	base cluster.Opener
	mu   sync.Mutex
	open map[string]cluster.Cluster
}

type kept struct{ cluster.Cluster }

func (kept) Close() {}

func (o *keptOpener) Open(f *flow.Flow, side flow.Side) (cluster.Cluster, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	key := f.Name() + "/" + string(side)
	if c, ok := o.open[key]; ok {
		return kept{c}, nil
	}
	c, err := o.base.Open(f, side)
	if err != nil {
		return nil, err
	}
	if o.open == nil {
		o.open = map[string]cluster.Cluster{}
	}
	o.open[key] = c
	return kept{c}, nil
}

func (o *keptOpener) closeAll() {
	o.mu.Lock()
	open := o.open
	o.open = nil
	o.mu.Unlock()
	for _, c := range open {
		c.Close()
	}
}

// reader reads, in the background and only while someone looks, what the status page shows
// beyond the replicator's own counters: per flow, the cost of failing over now (the functions
// `kmm lag --group` runs: snapshot.LagLive, snapshot.GroupLag, lag.ComputeGroups), and the
// flow's record and leases in __kmm_state.
type reader struct {
	stats  func() []replicator.FlowStats // the replicator's Stats
	flows  []*flow.Flow                  // copies made before the replicator runs
	open   *keptOpener
	every  time.Duration
	idle   time.Duration
	now    func() time.Time
	stopCh chan struct{}

	mu       sync.Mutex
	wanted   time.Time // the last Readings call
	running  bool      // the loop runs
	stopped  bool
	done     chan struct{}
	readings map[string]httpapi.FlowReading
	events   []httpapi.Event // state changes seen in __kmm_state, newest last
	states   map[string]string
}

func newReader(r *replicator.Replicator, flows []*flow.Flow, o Options) *reader {
	rd := &reader{stats: r.Stats, open: &keptOpener{base: o.Opener}, every: o.ReadEvery, idle: o.ReadIdle, now: time.Now,
		stopCh: make(chan struct{}), readings: map[string]httpapi.FlowReading{}, states: map[string]string{}}
	if rd.open.base == nil {
		rd.open.base = quietOpener{}
	}
	if rd.every <= 0 {
		rd.every = DefaultReadEvery
	}
	if rd.idle <= 0 {
		rd.idle = DefaultReadIdle
	}
	for _, f := range flows {
		if f.Enabled {
			cp := *f // the engine sets fields of its flows while it starts (link round trips)
			rd.flows = append(rd.flows, &cp)
		}
	}
	return rd
}

// want records a request and starts the loop when it is not running.
func (rd *reader) want() []httpapi.FlowReading {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	rd.wanted = rd.now()
	if !rd.running && !rd.stopped && len(rd.flows) > 0 {
		rd.running = true
		rd.done = make(chan struct{})
		for _, f := range rd.flows {
			if _, ok := rd.readings[f.Name()]; !ok {
				rd.readings[f.Name()] = httpapi.FlowReading{Flow: f.Name(), Every: rd.every}
			}
		}
		go rd.loop(rd.done)
	}
	out := make([]httpapi.FlowReading, 0, len(rd.readings))
	for _, f := range rd.flows {
		if r, ok := rd.readings[f.Name()]; ok {
			out = append(out, r)
		}
	}
	return out
}

// loop reads every flow, then waits rd.every, until nobody asked for rd.idle or close.
func (rd *reader) loop(done chan struct{}) {
	defer close(done)
	defer rd.open.closeAll()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-rd.stopCh:
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		for _, f := range rd.flows {
			if ctx.Err() != nil {
				break
			}
			rd.readFlow(ctx, f)
		}
		rd.mu.Lock()
		if rd.now().Sub(rd.wanted) > rd.idle || ctx.Err() != nil {
			rd.running = false
			rd.mu.Unlock()
			return
		}
		rd.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(rd.every):
		}
	}
}

// close stops the loop and closes its clients.
func (rd *reader) close() {
	rd.mu.Lock()
	if rd.stopped {
		rd.mu.Unlock()
		return
	}
	rd.stopped = true
	done := rd.done
	rd.mu.Unlock()
	close(rd.stopCh)
	if done != nil {
		<-done
	}
}

// readFlow reads one flow and stores the result (or the failure beside the last result).
func (rd *reader) readFlow(ctx context.Context, f *flow.Flow) {
	start := rd.now()
	rd.update(f.Name(), func(r *httpapi.FlowReading) { r.Attempted = start })
	var fs *replicator.FlowStats
	for _, s := range rd.stats() {
		if s.Flow == f.Name() {
			s := s
			fs = &s
		}
	}
	if fs == nil {
		rd.update(f.Name(), func(r *httpapi.FlowReading) { r.Err = "the replicator has not started the flow yet" })
		return
	}
	// A cluster the replicator holds for down would only make the reading wait for its timeouts.
	for _, c := range fs.Clusters {
		if !c.Up {
			rd.update(f.Name(), func(r *httpapi.FlowReading) {
				r.Err = fmt.Sprintf("not read: cluster %s (%s) is down since %s", c.Alias, c.Role, c.DownSince.UTC().Format(time.RFC3339))
			})
			return
		}
	}
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	cost, err := rd.cost(ctx, f, fs)
	if err != nil {
		rd.update(f.Name(), func(r *httpapi.FlowReading) { r.Err = err.Error() })
		return
	}
	st, workers, err := rd.state(ctx, f)
	if err != nil {
		rd.update(f.Name(), func(r *httpapi.FlowReading) { r.Err = err.Error() })
		return
	}
	end := rd.now()
	rd.update(f.Name(), func(r *httpapi.FlowReading) {
		r.Err, r.At, r.Took, r.Cost, r.State, r.Workers = "", end, end.Sub(start), cost, st, workers
	})
	rd.mu.Lock()
	if prev, seen := rd.states[f.Name()]; st != nil && (st.State != prev && (seen || st.State != string(flowstate.Replicating))) {
		msg := fmt.Sprintf("__kmm_state says %s is %s (epoch %d", f.Name(), st.State, st.Epoch)
		if !st.At.IsZero() {
			msg += fmt.Sprintf(", marked %s by %s, run %s", st.At.UTC().Format(time.RFC3339), st.By, st.RunID)
		}
		rd.events = append(rd.events, httpapi.Event{Time: end, Type: "flow_state", Flow: f.Name(), Message: msg + ")"})
		if len(rd.events) > replicator.RecentEventsKept {
			rd.events = rd.events[1:]
		}
	}
	if st != nil {
		rd.states[f.Name()] = st.State
	}
	rd.mu.Unlock()
}

func (rd *reader) update(name string, fn func(*httpapi.FlowReading)) {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	r := rd.readings[name]
	r.Flow, r.Every = name, rd.every
	fn(&r)
	rd.readings[name] = r
}

// cost is what failing over now would cost: what `kmm lag --group` prints, for every group
// with checkpoints or committed offsets of the flow's topics, summed per group.
func (rd *reader) cost(ctx context.Context, f *flow.Flow, fs *replicator.FlowStats) (*httpapi.FailoverCost, error) {
	// The live positions: this replicator's acknowledged offsets (what `kmm lag` asks it for
	// over HTTP). A worker knows its share only: then the leases' endpoints are asked, as
	// `kmm lag` does.
	var live snapshot.LiveFunc
	if fs.Workers == nil {
		now := rd.now()
		pos := map[cluster.TP]lag.Observed{}
		for _, p := range fs.Partitions {
			if p.Acked >= 0 {
				pos[cluster.TP{Topic: p.Topic, Partition: p.Partition}] = lag.Observed{Next: p.Acked + 1, At: now}
			}
		}
		live = func(*flow.Flow) map[cluster.TP]lag.Observed { return pos }
	}
	rows, err := snapshot.LagLive(ctx, rd.open, []*flow.Flow{f}, nil, live)
	if err != nil {
		return nil, err
	}
	c := &httpapi.FailoverCost{Partitions: len(rows), Exact: true, PositionSources: map[string]int{}}
	for _, r := range rows {
		c.NotOnTarget += r.LagRecords
		c.NotOnTargetMin += r.LagRecordsMin
		c.Exact = c.Exact && (r.Exact || r.LagRecordsMin == r.LagRecords)
		c.PositionSources[r.PositionSource]++
		c.OldestSeconds = max(c.OldestSeconds, r.LagSeconds)
		if !r.AsOf.IsZero() && (c.OldestAsOf.IsZero() || r.AsOf.Before(c.OldestAsOf)) {
			c.OldestAsOf = r.AsOf
		}
	}
	ins, err := snapshot.GroupLag(ctx, rd.open, f, nil, rows, rd.now())
	if err != nil {
		return nil, err
	}
	ins = slices.DeleteFunc(ins, func(g lag.GroupInput) bool { return !f.Selected(g.Topic) })
	byGroup := map[string]*httpapi.GroupCost{}
	for _, g := range lag.ComputeGroups(ins) {
		gc := byGroup[g.Group]
		if gc == nil {
			gc = &httpapi.GroupCost{Group: g.Group, LagOnSource: -1, LagOnTarget: -1}
			byGroup[g.Group] = gc
		}
		gc.Partitions++
		if g.WouldReread >= 0 {
			gc.WouldReread += g.WouldReread
		} else {
			gc.RereadUnknown++
		}
		if g.CouldMiss >= 0 {
			gc.CouldMiss += g.CouldMiss
			gc.CouldMissMin += max(g.CouldMissMin, 0)
		} else {
			gc.MissUnknown++
		}
		if g.LagOnSource >= 0 {
			gc.LagOnSource = max(gc.LagOnSource, 0) + g.LagOnSource
		}
		if g.LagOnTarget >= 0 {
			gc.LagOnTarget = max(gc.LagOnTarget, 0) + g.LagOnTarget
		}
	}
	for _, gc := range byGroup {
		c.Groups = append(c.Groups, *gc)
	}
	sort.Slice(c.Groups, func(i, j int) bool { return c.Groups[i].Group < c.Groups[j].Group })
	return c, nil
}

// state reads the flow's record (the newest of T's and, best effort, S's copy) and its live
// workers' leases from __kmm_state.
func (rd *reader) state(ctx context.Context, f *flow.Flow) (*httpapi.FlowState, []httpapi.WorkerLease, error) {
	tgt, err := rd.open.Open(f, flow.Target)
	if err != nil {
		return nil, nil, err
	}
	recs, err := plan.ReadState(ctx, tgt)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s on %s: %w", plan.StateTopic, f.Target, err)
	}
	var copies []*flowstate.FlowRecord
	if st, err := flowstate.DecodeFlow(recs[flowstate.FlowKey(f.Source, f.Target)]); err == nil && st != nil {
		copies = append(copies, st)
	}
	if src, err := rd.open.Open(f, flow.Source); err == nil {
		if srecs, err := plan.ReadState(ctx, src); err == nil {
			if st, err := flowstate.DecodeFlow(srecs[flowstate.FlowKey(f.Source, f.Target)]); err == nil && st != nil {
				copies = append(copies, st)
			}
		}
	}
	st := flowstate.Newest(f.Name(), copies...)
	out := &httpapi.FlowState{State: string(st.State), Epoch: st.Epoch, At: st.At, By: st.By, RunID: st.RunID}
	var workers []httpapi.WorkerLease
	now := rd.now()
	for _, l := range flowstate.Leases(recs, f.Source, f.Target) {
		if l.Alive(now) && l.Workers != nil {
			workers = append(workers, httpapi.WorkerLease{Instance: l.Instance, Host: l.Host, Leader: l.Workers.Leader, Partitions: l.Workers.Partitions})
		}
	}
	sort.Slice(workers, func(i, j int) bool { return workers[i].Instance < workers[j].Instance })
	return out, workers, nil
}

// stateEvents are the state changes the readings saw, newest last.
func (rd *reader) stateEvents() []httpapi.Event {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	return slices.Clone(rd.events)
}
