package replicator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/kmmproject/kmm/pkg/buildinfo"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flowstate"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/plan"
	"github.com/kmmproject/kmm/pkg/whoami"
)

// LeaseRefresh is how often a running flow refreshes its lease and its source end-offset
// snapshot in __kmm_state on the target; LeaseTTL is how long a lease stays alive without one.
const (
	LeaseRefresh = 5 * time.Second
	LeaseTTL     = 15 * time.Second
)

// statePoll is how long the state follower waits per poll: a mark is seen within it.
const statePoll = 500 * time.Millisecond

// errMarked stops one flow (not the process) because its state says it must not run.
type errMarked struct{ st *flowstate.FlowRecord }

func (e *errMarked) Error() string {
	return fmt.Sprintf("flow %s marked %s (epoch %d, by %s, run %s)", e.st.Flow, e.st.State, e.st.Epoch, e.st.By, e.st.RunID)
}

// stateKeeper ties a flow to its record in __kmm_state: it refuses to start a flow that is not
// REPLICATING, keeps the flow's lease and source-ends snapshot fresh on the target, and follows
// the topic so that a mark (failover) stops the flow within a second or two.
type stateKeeper struct {
	e        *engine
	instance string
	started  time.Time
	listen   string
	prod     cluster.Producer
	reader   cluster.Reader
	marked   chan *flowstate.FlowRecord
	startEp  int64
	begin    *flowstate.FlowRecord // the state read at start
	mu       sync.Mutex
	released bool
	// stop, set by the engine, cancels its control loop (which may be blocked on an unreachable
	// source) when the flow is marked; got holds the mark.
	stop    func()
	got     atomicFlow
	markedC chan struct{} // closed when the flow is marked
	wg      sync.WaitGroup
	cancel  context.CancelFunc
	// The ends snapshot's rate window: ends about flowstate.RateWindow old (follow's goroutine).
	prevEnds, lastEnds     map[string][]int64
	prevEndsAt, lastEndsAt time.Time
	endsWritten            string // the last snapshot written (its JSON), to skip a repeat
}

// readFlowState returns the newest copy of the flow's state record on T and, when readable, S.
func readFlowState(ctx context.Context, src, tgt cluster.Cluster, name, s, t string) (*flowstate.FlowRecord, error) {
	var copies []*flowstate.FlowRecord
	for i, c := range []cluster.Cluster{tgt, src} {
		if c == nil {
			continue
		}
		recs, err := plan.ReadState(ctx, c)
		if err != nil {
			if i == 0 {
				return nil, fmt.Errorf("reading %s on %s: %w", plan.StateTopic, c.Alias(), err)
			}
			continue // the source's copy is best effort
		}
		f, err := flowstate.DecodeFlow(recs[flowstate.FlowKey(s, t)])
		if err != nil {
			return nil, fmt.Errorf("%s on %s: %w", plan.StateTopic, c.Alias(), err)
		}
		copies = append(copies, f)
	}
	return flowstate.Newest(name, copies...), nil
}

// newStateKeeper checks the flow's state at start and begins following it.
func newStateKeeper(ctx context.Context, e *engine) (*stateKeeper, error) {
	f := e.flow
	host, _ := os.Hostname()
	k := &stateKeeper{e: e, started: time.Now(), listen: e.opt.Listen, marked: make(chan *flowstate.FlowRecord, 1), markedC: make(chan struct{}),
		instance: fmt.Sprintf("%s-%d-%d", host, os.Getpid(), time.Now().UnixMilli())}
	if _, err := cluster.EnsureTopic(ctx, e.tgt, cluster.NewTopic{Name: plan.StateTopic, Partitions: 1, RF: f.StateTopicRF(),
		Configs: plan.StateTopicConfigs()}, "checkpoints.topic.replication.factor"); err != nil {
		return nil, err
	}
	tp := cluster.TP{Topic: plan.StateTopic, Partition: 0}
	ends, err := e.tgt.ListOffsets(ctx, []cluster.TP{tp}, cluster.Latest)
	if err != nil {
		return nil, err
	}
	st, err := readFlowState(ctx, e.src, e.tgt, f.Name(), f.Source, f.Target)
	if err != nil {
		return nil, err
	}
	if !st.State.Runs() {
		if !e.opt.Force {
			return nil, kerr.WithHint(kerr.New(kerr.CheckFailed, "flow %s is %s (epoch %d, since %s, by %s, run %s): it does not replicate",
				f.Name(), st.State, st.Epoch, st.At.Format(time.RFC3339), st.By, st.RunID),
				fmt.Sprintf("%s is the primary since the failover: its new records go back with kmm replicate FILE --flow '%s->%s', and kmm failback FILE --flow '%s' makes %s the primary again (do not --force this flow: it would copy %s's old records into %s, the new primary)",
					f.Target, f.Target, f.Source, f.Name(), f.Source, f.Source, f.Target))
		}
		e.emit(Event{Type: EvWarning, Message: fmt.Sprintf("flow %s is %s (epoch %d); --force: replicating anyway", f.Name(), st.State, st.Epoch)})
	}
	if !f.Workers && !e.opt.Force {
		if err := k.checkAlone(ctx); err != nil {
			return nil, err
		}
	}
	k.startEp, k.begin = st.Epoch, st
	if k.prod, err = e.tgt.NewProducer(plan.StateProducer()); err != nil {
		return nil, err
	}
	if k.reader, err = e.tgt.NewReader(); err != nil {
		return nil, err
	}
	if err := k.reader.Assign(map[cluster.TP]int64{tp: ends[tp].Offset}); err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(context.Background())
	k.cancel = cancel
	k.wg.Add(1)
	go k.follow(wctx)
	return k, nil
}

// follow reads __kmm_state on T as it grows and signals a state in which the flow must stop; it
// also refreshes the lease and the ends snapshot, independently of the engine's control loop (a
// loop blocked on an unreachable source must neither lose its lease nor miss a mark).
func (k *stateKeeper) follow(ctx context.Context) {
	defer k.wg.Done()
	f := k.e.flow
	key := flowstate.FlowKey(f.Source, f.Target)
	// The first lease is written here, at once, not before the pipelines start: its write (a
	// new idempotent producer's first acks=all request) took 50-500 ms of the start-up.
	nextRefresh, nextEnds := time.Now(), time.Now()
	for ctx.Err() == nil {
		if !time.Now().Before(nextRefresh) {
			if err := k.refresh(ctx); err != nil && ctx.Err() == nil {
				k.e.warnLimited("lease", err, fmt.Sprintf("writing the lease and source ends of %s in %s on %s: %v", f.Name(), plan.StateTopic, f.Target, err))
			}
			nextRefresh = time.Now().Add(LeaseRefresh)
			nextEnds = time.Now().Add(EndsEvery)
		} else if !time.Now().Before(nextEnds) {
			if err := k.writeEnds(ctx); err != nil && ctx.Err() == nil {
				k.e.warnLimited("lease", err, fmt.Sprintf("writing the source ends of %s in %s on %s: %v", f.Name(), plan.StateTopic, f.Target, err))
			}
			nextEnds = time.Now().Add(EndsEvery)
		}
		recs, err := k.reader.Poll(ctx, 500, statePoll)
		if err != nil {
			if ctx.Err() == nil {
				k.e.warnLimited("state", err, fmt.Sprintf("following %s on %s: %v", plan.StateTopic, f.Target, err))
				time.Sleep(statePoll)
			}
			continue
		}
		for _, r := range recs {
			if string(r.Key) != key {
				continue
			}
			st, err := flowstate.DecodeFlow(r.Value)
			if err != nil || st == nil {
				continue
			}
			if !st.State.Runs() && (!k.e.opt.Force || st.Epoch > k.startEp) {
				if k.got.Load() == nil {
					k.got.Store(st)
					close(k.markedC)
					k.mu.Lock()
					stop := k.stop
					k.mu.Unlock()
					if stop != nil {
						stop()
					}
				}
				select {
				case k.marked <- st:
				default:
				}
			}
		}
	}
}

// checkAlone refuses to run a flow another live `kmm replicate` already runs (its lease in
// __kmm_state is alive and refreshed): without workers mode both would copy every record (MM2's
// dedicated-mode processes share a flow; kmm's do with kmm.workers.enabled). A lease left by a
// process that is gone does not count: one of this host whose pid no longer runs at once, any
// other once it is not refreshed within a refresh interval (a crash's lease outlives it by up to
// LeaseTTL).
func (k *stateKeeper) checkAlone(ctx context.Context) error {
	f := k.e.flow
	others := func() (map[string]*flowstate.Lease, error) {
		recs, err := plan.ReadState(ctx, k.e.tgt)
		if err != nil {
			return nil, err
		}
		out := map[string]*flowstate.Lease{}
		me := whoami.UserAtHost()
		for _, l := range flowstate.Leases(recs, f.Source, f.Target) {
			if !l.Alive(time.Now()) || l.Instance == k.instance {
				continue
			}
			if l.Host == me && l.PID > 0 && syscall.Kill(l.PID, 0) == syscall.ESRCH {
				continue // this host's process that wrote it is gone (a crash)
			}
			out[l.Instance] = l
		}
		return out, nil
	}
	first, err := others()
	if err != nil || len(first) == 0 {
		return err
	}
	// Alive by its time: is it refreshed? Watch for a refresh interval and a little more.
	deadline := time.Now().Add(LeaseRefresh + 2*time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
		now, err := others()
		if err != nil {
			return err
		}
		for id, l := range now {
			if old, ok := first[id]; ok && l.Refreshed.After(old.Refreshed) {
				where := fmt.Sprintf("%s, pid %d, started %s", l.Host, l.PID, l.Started.UTC().Format(time.RFC3339))
				if l.Listen != "" {
					where += ", --listen " + l.Listen
				}
				return kerr.WithHint(kerr.New(kerr.CheckFailed, "flow %s is already replicated by a running kmm replicate (%s): a second one would copy every record again", f.Name(), where),
					fmt.Sprintf("stop that one first; or run both as workers of the flow, which share its partitions: set kmm.workers.enabled = true (or %s.kmm.workers.enabled = true) in the file of every process (docs/workers.md)", f.Name()))
			}
		}
	}
	return nil // not refreshed: a process that is gone; its lease expires by itself
}

// refresh writes the lease and the source ends snapshot.
func (k *stateKeeper) refresh(ctx context.Context) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.released {
		return nil
	}
	if k.e.tgtW.isDown() {
		return nil // nothing reaches the target; the next refresh after it returns renews the lease
	}
	f := k.e.flow
	now := time.Now()
	lease := &flowstate.Lease{Flow: f.Name(), Instance: k.instance, Host: whoami.UserAtHost(), PID: os.Getpid(), Started: k.started.UTC(),
		Refreshed: now.UTC(), TTL: flowstate.Duration(LeaseTTL), KMM: buildinfo.Version, Listen: k.listen}
	if ws := k.e.workers.stats(); ws != nil {
		lease.Workers = &flowstate.LeaseWorkers{Group: ws.Group, Leader: ws.Leader, Partitions: ws.Partitions}
	}
	lv, err := flowstate.Encode(lease)
	if err != nil {
		return err
	}
	recs := []cluster.Record{{Topic: plan.StateTopic, Partition: 0, Key: []byte(flowstate.LeaseKey(f.Source, f.Target, k.instance)), Value: lv, Timestamp: now}}
	ev, err := k.endsRecord(now)
	if err != nil {
		return err
	}
	if ev != nil {
		recs = append(recs, cluster.Record{Topic: plan.StateTopic, Partition: 0, Key: []byte(flowstate.EndsKey(f.Source, f.Target)), Value: ev, Timestamp: now})
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err = k.prod.ProduceSync(ctx, recs)
	if err == nil && ev != nil {
		k.endsWritten = string(ev)
	}
	return err
}

// writeEnds writes the source ends snapshot alone (every EndsEvery, between lease refreshes),
// when it changed since the last one written.
func (k *stateKeeper) writeEnds(ctx context.Context) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.released || k.e.tgtW.isDown() {
		return nil
	}
	now := time.Now()
	ev, err := k.endsRecord(now)
	if err != nil || ev == nil || string(ev) == k.endsWritten {
		return err
	}
	f := k.e.flow
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := k.prod.ProduceSync(ctx, []cluster.Record{{Topic: plan.StateTopic, Partition: 0, Key: []byte(flowstate.EndsKey(f.Source, f.Target)), Value: ev, Timestamp: now}}); err != nil {
		return err
	}
	k.endsWritten = string(ev)
	return nil
}

// endsRecord is the encoded source ends snapshot (nil before any end was read), with the rate
// window's earlier ends and, while the source is down, since when.
func (k *stateKeeper) endsRecord(now time.Time) ([]byte, error) {
	ends := k.ends()
	if ends == nil {
		return nil, nil
	}
	if !ends.At.Equal(k.lastEndsAt) {
		if k.prevEnds == nil || ends.At.Sub(k.prevEndsAt) >= 2*flowstate.RateWindow {
			k.prevEnds, k.prevEndsAt = ends.Ends, ends.At // the first, or after a pause: start the window anew
		} else if k.lastEnds != nil && ends.At.Sub(k.prevEndsAt) >= flowstate.RateWindow {
			k.prevEnds, k.prevEndsAt = k.lastEnds, k.lastEndsAt
		}
		k.lastEnds, k.lastEndsAt = ends.Ends, ends.At
	}
	if k.prevEndsAt.Before(ends.At) {
		ends.Prev, ends.PrevAt = k.prevEnds, k.prevEndsAt.UTC()
	}
	if st := k.e.srcW.state(); !st.Up && !st.DownSince.IsZero() {
		ds := st.DownSince.UTC()
		ends.SourceDownSince = &ds
	}
	return flowstate.Encode(ends)
}

// ends is the flow's source end offsets as last read by the control loop (nil before any).
func (k *stateKeeper) ends() *flowstate.Ends {
	e := k.e
	if e.workers != nil {
		// Workers: the leader writes the snapshot of every selected partition; the others none.
		all := e.workers.allEnds()
		if !e.leads() || all == nil {
			return nil
		}
		return &flowstate.Ends{Flow: e.flow.Name(), Ends: all, At: time.UnixMilli(e.endsAtMs.Load()).UTC()}
	}
	e.partsMu.RLock()
	defer e.partsMu.RUnlock()
	out := &flowstate.Ends{Flow: e.flow.Name(), Ends: map[string][]int64{}, PartAt: map[string][]int64{}}
	at := e.endsAtMs.Load()
	if at == 0 {
		return nil
	}
	out.At = time.UnixMilli(at).UTC()
	for t, ps := range e.parts {
		l, la := make([]int64, len(ps)), make([]int64, len(ps))
		for _, p := range ps {
			if int(p.p.Partition) < len(l) {
				l[p.p.Partition] = p.srcEnd.Load()
				la[p.p.Partition] = p.srcEndAtMs.Load()
			}
		}
		out.Ends[t], out.PartAt[t] = l, la
	}
	return out
}

// release tombstones the lease (clean stop) and stops following the topic. The tombstone waits
// until deadline at most (and never past leaseReleaseWait): a stop keeps its bound.
func (k *stateKeeper) release(deadline time.Time) {
	if k == nil {
		return
	}
	// First end the keeper's loop: a lease refresh in flight holds k.mu while it waits (up to
	// 5 s) for a hung target; cancelled, it returns at once and the stop keeps its bound (the
	// tombstone below has its own context).
	k.cancel()
	k.mu.Lock()
	if k.released {
		k.mu.Unlock()
		return
	}
	k.released = true
	k.mu.Unlock()
	f := k.e.flow
	// The tombstone is a courtesy (the lease expires by itself): it never makes a stop wait for
	// an unreachable target, and it waits at most leaseReleaseWait for a reachable one.
	wait := min(leaseReleaseWait, time.Until(deadline))
	switch {
	case k.e.tgtW.isDown():
		// Nothing to say beyond the cluster watch's WARN: the lease expires in LeaseTTL.
	case wait <= 0:
		k.e.emit(Event{Type: EvWarning, Message: fmt.Sprintf("the lease of %s on %s was not released: the stop's time is up (the lease expires in %s)", f.Name(), f.Target, LeaseTTL)})
	default:
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		if _, err := k.prod.ProduceSync(ctx, []cluster.Record{{Topic: plan.StateTopic, Partition: 0,
			Key: []byte(flowstate.LeaseKey(f.Source, f.Target, k.instance)), Value: nil, Timestamp: time.Now()}}); err != nil {
			k.e.emit(Event{Type: EvWarning, Message: fmt.Sprintf("releasing the lease of %s on %s: %v (it expires in %s)", f.Name(), f.Target, err, LeaseTTL)})
		}
		cancel()
	}
	k.wg.Wait() // its loop was cancelled first thing
	k.reader.Close()
	// Nothing to wait for: a tombstone still queued is purged (the lease expires anyway).
	if p, ok := k.prod.(interface{ CloseWithin(time.Duration) int }); ok {
		p.CloseWithin(0)
	} else {
		k.prod.Close()
	}
}

// leaseReleaseWait bounds the lease tombstone written at a clean stop.
const leaseReleaseWait = 2 * time.Second

// isMarked returns the state that stopped a flow.
func isMarked(err error) (*flowstate.FlowRecord, bool) {
	var m *errMarked
	if errors.As(err, &m) {
		return m.st, true
	}
	return nil, false
}

// atomicFlow holds the mark that stopped a flow.
type atomicFlow struct {
	mu sync.Mutex
	st *flowstate.FlowRecord
}

func (a *atomicFlow) Load() *flowstate.FlowRecord {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.st
}

func (a *atomicFlow) Store(st *flowstate.FlowRecord) {
	a.mu.Lock()
	a.st = st
	a.mu.Unlock()
}

// markedState is the mark that stopped the flow, nil if none (nil-safe).
func (k *stateKeeper) markedState() *flowstate.FlowRecord {
	if k == nil {
		return nil
	}
	return k.got.Load()
}

// current is the flow's state as the keeper knows it: the mark that stopped the flow, else the
// state read at start (nil-safe).
func (k *stateKeeper) current() *flowstate.FlowRecord {
	if k == nil {
		return nil
	}
	if st := k.got.Load(); st != nil {
		return st
	}
	return k.begin
}

// markedChan is closed when the flow is marked (nil, never ready, without a keeper).
func (k *stateKeeper) markedChan() <-chan struct{} {
	if k == nil {
		return nil
	}
	return k.markedC
}
