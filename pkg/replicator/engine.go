// Package replicator is the engine behind `kmm replicate`: for each MM2 flow S->T it discovers
// and creates remote topics, copies records partition by partition (at-least-once, in order),
// stores resume positions in MM2's Connect offsets topic, writes offset-syncs and heartbeats in
// MM2's byte formats, and keeps topic configs and ACLs in sync. It reports through Events and
// counters; it never prints, parses flags or reads configuration files. It takes its flows from
// pkg/flow, validated; only `kmm replicate` (and test harnesses) import it.
package replicator

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/flowstate"
	"github.com/kmmproject/kmm/pkg/groupprobe"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/offsetmap"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// Options tune a Run.
type Options struct {
	Sink Sink
	// ShutdownTimeout bounds the stop after ctx ends (default 30 s): fetching stops, the
	// target's acknowledgements are awaited, progress is stored, and every client is closed,
	// all within this time (plus closeGrace), whatever cluster is unreachable.
	ShutdownTimeout time.Duration
	StartTimeout    time.Duration // per-cluster reachability check at start (default 15 s)
	ProgressEvery   time.Duration // EvProgress cadence (default 10 s; <0 disables)
	// DownAfter and StallAfter are the outage thresholds (defaults DefaultDownAfter and
	// DefaultStallAfter).
	DownAfter, StallAfter time.Duration
	// Force starts even while Apache MM2 runs the same flow (its Connect group has members),
	// or while the flow's state (__kmm_state) says it is failed over.
	Force bool
	// Listen is the URL of the process's --listen endpoint, recorded in the flow's lease.
	Listen string
}

// closeGrace is how long past ShutdownTimeout closing the clients may take before Run stops
// waiting for them (librdkafka's close cannot be interrupted; the process exits anyway).
const closeGrace = 2 * time.Second

// linkProbes is how many metadata requests the start sends at most to time the round trip to
// each cluster (the first, which may connect, not counted): clusterWatch.roundTrip.
const linkProbes = 6

// Replicator runs flows and answers Stats while it does.
type Replicator struct {
	flows   []*flow.Flow
	opt     Options
	engines atomic.Pointer[[]*engine]
	watches atomic.Pointer[watches]
	recent  recentEvents // RecentEvents
}

// New prepares a replicator; Run starts it.
func New(flows []*flow.Flow, opt Options) *Replicator { return &Replicator{flows: flows, opt: opt} }

// SetListen records the --listen URL in the leases (call before Run).
func (r *Replicator) SetListen(url string) { r.opt.Listen = url }

// Stats returns a snapshot of every flow (empty before Run has set them up).
func (r *Replicator) Stats() []FlowStats {
	es := r.engines.Load()
	if es == nil {
		return nil
	}
	out := make([]FlowStats, 0, len(*es))
	for _, e := range *es {
		out = append(out, e.stats())
	}
	return out
}

// Clusters returns what the replicator knows about reaching each cluster (empty before Run
// has checked them).
func (r *Replicator) Clusters() []ClusterState { return r.watches.Load().states() }

// Run replicates every flow until ctx ends, then drains (stop fetching, wait for the target's
// acknowledgements, store progress) and returns nil. A cluster unreachable at start gives a
// kerr.Unreachable error naming alias and bootstrap; a fatal error in any flow stops all flows
// (progress already acknowledged is stored) and is returned. When the drain cannot deliver
// everything within Options.ShutdownTimeout (a cluster is unreachable, the target is slow),
// Run still returns within that bound (+ closeGrace), with a kerr.Incomplete error saying how
// many records per flow will be copied again after a restart.
func Run(ctx context.Context, flows []*flow.Flow, opt Options) error { return New(flows, opt).Run(ctx) }

// Run is the package-level Run for this replicator.
func (r *Replicator) Run(ctx context.Context) error {
	flows, opt := r.flows, r.opt
	if opt.Sink == nil {
		opt.Sink = SinkFunc(func(Event) {})
	}
	opt.Sink = recordingSink{next: opt.Sink, r: &r.recent}
	if opt.ShutdownTimeout <= 0 {
		opt.ShutdownTimeout = 30 * time.Second
	}
	if opt.StartTimeout <= 0 {
		opt.StartTimeout = 15 * time.Second
	}
	if opt.ProgressEvery == 0 {
		opt.ProgressEvery = 10 * time.Second
	}
	if opt.DownAfter <= 0 {
		opt.DownAfter = DefaultDownAfter
	}
	if opt.StallAfter <= 0 {
		opt.StallAfter = DefaultStallAfter
	}
	engines := make([]*engine, 0, len(flows))
	for _, f := range flows {
		if !f.Validated() {
			return kerr.New(kerr.Usage, "flow %s was not validated (load flows with flow.FromMM2, or call Validate)", f.Name())
		}
		engines = append(engines, &engine{flow: f, opt: opt, sink: opt.Sink, gaps: make(chan gapCheck, 256), lastWarn: map[string]time.Time{},
			parts: map[string][]*pstate{}, remote: map[string]string{}})
	}
	ws, err := newWatches(ctx, engines, opt)
	if err != nil {
		return err
	}
	r.watches.Store(ws)
	r.engines.Store(&engines)
	// Whatever happens from here on, the clients are closed within the stop bound.
	var stopAt atomic.Pointer[time.Time]
	tornDown := false
	closeAll := func() {
		if tornDown {
			return
		}
		tornDown = true
		begin := time.Now()
		if t := stopAt.Load(); t != nil {
			begin = *t
		}
		teardown(engines, ws, begin.Add(opt.ShutdownTimeout+closeGrace), opt.Sink)
	}
	defer closeAll()
	ws.start(engines)
	var firstErr error
	for _, e := range engines {
		if err := e.start(ctx); err != nil {
			// A signal during the start of a later flow still drains the flows already
			// copying; any other start failure is returned (after the same drain).
			if ctx.Err() == nil {
				firstErr = err
				r.recent.add(Event{Time: time.Now(), Type: EvError, Flow: e.flow.Name(), Message: "flow failed to start: " + err.Error()})
			}
			break
		}
		e.started.Store(true)
	}
	// Run until the context ends or a flow fails.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	context.AfterFunc(runCtx, func() { now := time.Now(); stopAt.CompareAndSwap(nil, &now) })
	if firstErr != nil || ctx.Err() != nil {
		cancel()
	} else {
		var wg sync.WaitGroup
		errs := make(chan error, len(engines))
		for _, e := range engines {
			wg.Add(1)
			e.running.Store(true)
			go func(e *engine) {
				defer wg.Done()
				lctx, lcancel := context.WithCancel(runCtx)
				defer lcancel()
				if e.state != nil {
					e.state.mu.Lock()
					e.state.stop = lcancel // a mark interrupts a loop blocked on an unreachable source
					e.state.mu.Unlock()
					if e.state.markedState() != nil {
						lcancel()
					}
				}
				// A loop blocked on an unreachable source does not delay the stop: a mark stops the
				// flow at once; the loop returns when its call does (its context is cancelled).
				loopErr := make(chan error, 1)
				go func() { loopErr <- e.loop(lctx) }()
				var err error
				select {
				case err = <-loopErr:
				case <-e.state.markedChan():
				}
				if st := e.state.markedState(); st != nil && runCtx.Err() == nil {
					err = &errMarked{st: st}
				}
				if err != nil {
					if st, ok := isMarked(err); ok {
						// Only this flow stops; the others go on, and the process stays up.
						e.stopForState(st)
						<-runCtx.Done()
						return
					}
					e.failed.Store(&err)
					// The command prints the error Run returns; the status page lists it too.
					r.recent.add(Event{Time: time.Now(), Type: EvError, Flow: e.flow.Name(), Message: "flow failed: " + err.Error()})
					errs <- err
					cancel()
				}
			}(e)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	begin := time.Now()
	if t := stopAt.Load(); t != nil {
		begin = *t
	}
	deadline := begin.Add(opt.ShutdownTimeout)
	// Drain all flows in parallel within the shutdown budget.
	results := make([]drainResult, len(engines))
	var dwg sync.WaitGroup
	for i, e := range engines {
		dwg.Add(1)
		go func(i int, e *engine) {
			defer dwg.Done()
			if e.stopped.Load() { // stopped by its state: drained and released already
				return
			}
			results[i] = e.drain(begin, deadline)
			e.state.release(deadline)
		}(i, e)
	}
	dwg.Wait()
	closeAll()
	if firstErr != nil {
		return firstErr
	}
	var incomplete []string
	for _, res := range results {
		if !res.complete() {
			incomplete = append(incomplete, res.summary())
		}
	}
	if len(incomplete) > 0 {
		return kerr.WithHint(kerr.New(kerr.Incomplete, "stopped after %s with work not delivered: %s",
			roundDuration(time.Since(begin)), strings.Join(incomplete, "; ")),
			"nothing is lost: progress is stored only for records the target acknowledged, so the next `kmm replicate` (or MM2) copies these again; to wait longer for the target, raise --shutdown-timeout")
	}
	return nil
}

// newWatches checks that every cluster answers (at start, within opt.StartTimeout) and keeps
// one watch per cluster for the run.
func newWatches(ctx context.Context, engines []*engine, opt Options) (*watches, error) {
	type target struct {
		alias, bootstrap string
		cfg              rdkafka.Config
	}
	ws := &watches{by: map[string]*clusterWatch{}}
	var ts []target
	need := map[string][]string{}
	for _, e := range engines {
		f := e.flow
		for _, t := range []target{{f.Source, f.SourceBootstrap, f.SourceAdmin}, {f.Target, f.TargetBootstrap, f.TargetAdmin}} {
			if _, seen := ws.by[t.alias]; !seen {
				w, err := newClusterWatch(t.alias, t.bootstrap, t.cfg, opt.DownAfter, opt.Sink.Emit)
				if err != nil {
					ws.close()
					return nil, err
				}
				ws.by[t.alias] = w
				ts = append(ts, t)
			}
		}
		// A heartbeats-only flow writes to its target only.
		if f.Enabled {
			need[f.Source] = append(need[f.Source], f.Name()+" (source)")
		}
		need[f.Target] = append(need[f.Target], f.Name()+" (target)")
		e.srcW, e.tgtW = ws.by[f.Source], ws.by[f.Target]
	}
	for alias, w := range ws.by {
		w.flows = need[alias]
		w.waiting = waitingText(engines, alias)
	}
	errs := make([]error, len(ts))
	var wg sync.WaitGroup
	for i, t := range ts {
		wg.Add(1)
		go func(i int, t target) {
			defer wg.Done()
			if _, err := ws.by[t.alias].admin.Ping(ctx, opt.StartTimeout); err != nil {
				errs[i] = cluster.Named(t.alias, t.bootstrap, err)
			}
		}(i, t)
	}
	wg.Wait()
	// Every cluster that did not answer is named, each once, and so is its key in the hint.
	var bad []string
	var down []error
	for i, err := range errs {
		if err == nil {
			continue
		}
		if kerr.KindOf(err) != kerr.Unreachable {
			ws.close()
			return nil, err
		}
		bad = append(bad, ts[i].alias)
		down = append(down, err)
	}
	if len(down) > 0 {
		ws.close()
		return nil, kerr.WithHint(kerr.Wrap(kerr.Unreachable, cluster.JoinUnreachable(down...)), cluster.UnreachableHint("", bad...))
	}
	now := time.Now()
	for _, w := range ws.by {
		w.ok(now)
	}
	return ws, nil
}

// waitingText describes, for a reminder, the records that wait for cluster alias.
func waitingText(engines []*engine, alias string) func() string {
	return func() string {
		var parts []string
		for _, e := range engines {
			if !e.flow.Enabled || !e.started.Load() || (e.flow.Source != alias && e.flow.Target != alias) {
				continue
			}
			n := e.waitingRecords()
			parts = append(parts, fmt.Sprintf("flow %s: %d record(s) waiting", e.flow.Name(), n))
		}
		return strings.Join(parts, ", ")
	}
}

// teardown closes every flow's clients and the watches, in parallel, and returns by hard at
// the latest (what has not closed by then is left to the process exit).
func teardown(engines []*engine, ws *watches, hard time.Time, sink Sink) {
	for _, e := range engines {
		e.running.Store(false)
	}
	ws.stop(time.Until(hard))
	done := make(chan string, len(engines)+1)
	for _, e := range engines {
		go func(e *engine) { e.close(); done <- e.flow.Name() }(e)
	}
	go func() { ws.close(); done <- "" }()
	pending := map[string]bool{"": true}
	for _, e := range engines {
		pending[e.flow.Name()] = true
	}
	timer := time.NewTimer(max(time.Until(hard), 0))
	defer timer.Stop()
	for len(pending) > 0 {
		select {
		case name := <-done:
			delete(pending, name)
		case <-timer.C:
			var names []string
			for n := range pending {
				if n != "" {
					names = append(names, n)
				}
			}
			sort.Strings(names)
			if len(names) > 0 {
				sink.Emit(Event{Time: time.Now(), Type: EvWarning, Flow: strings.Join(names, ","),
					Message: "closing the Kafka clients did not finish within the shutdown bound; exiting without waiting for them"})
			}
			return
		}
	}
}

// engine runs one flow.
type engine struct {
	flow *flow.Flow
	opt  Options
	sink Sink

	src, tgt   *rdkafka.Cluster // admin clients; readers and producers with the side's settings
	srcW, tgtW *clusterWatch    // reachability of source and target
	copiers    []*rdkafka.Copier
	parts      map[string][]*pstate          // source topic -> partitions
	remote     map[string]string             // source topic -> remote topic
	resume     map[rdkafka.TP]int64          // stored positions (last replicated offset)
	resumeMaps map[rdkafka.TP]*offsetmap.Map // stored offset maps (where every copied record landed)
	progress   *progressWriter
	syncs      *syncWriter
	ckpt       *checkpointer
	hb         *heartbeater
	limiter    *rateLimiter // the flow's rate limit (nil: none), shared by its copiers

	syncCount  atomic.Int64
	syncLastMs atomic.Int64

	// Outage bookkeeping, written by sample (1 s) and read by stats.
	lastAckMs    atomic.Int64 // newest acknowledgement of any partition (epoch ms, 0 none)
	waitingSince atomic.Int64 // records have waited continuously since (epoch ms, 0: none wait)
	ackedSeen    int64        // sample's previous total, to spot new acknowledgements

	gaps     chan gapCheck
	partsMu  sync.RWMutex // guards parts and remote against Stats readers
	running  atomic.Bool
	started  atomic.Bool // start() finished: hb, ckpt, copiers are set
	failed   atomic.Pointer[error]
	warnMu   sync.Mutex
	lastWarn map[string]time.Time
	gapTotal atomic.Int64
	nextCop  int
	// Whole topics per pipeline on large flows (assignPipelines): the pipeline of each topic
	// so placed, and the partitions given to each pipeline so far.
	topicCop map[string]int
	copParts []int

	state     *stateKeeper           // nil for heartbeats-only flows
	endsAtMs  atomic.Int64           // when the source ends were last read (unix ms)
	stopped   atomic.Bool            // stopped by its state (stopForState)
	paused    atomic.Pointer[string] // why the flow was stopped by its state
	closeOnce sync.Once
	// closedByState: stopForState closed the heartbeater and the checkpointer.
	closedByState bool
	ckptStopped   atomic.Bool // the checkpointer was closed: offset syncs no longer feed it

	// workers shares the flow with other processes (kmm.workers.enabled); nil otherwise.
	workers *workers
	// retiredRecs and retiredBytes count what partitions given up to other workers copied.
	retiredRecs, retiredBytes atomic.Int64
}

func (e *engine) emit(ev Event) {
	ev.Time = time.Now()
	ev.Flow = e.flow.Name()
	e.sink.Emit(ev)
}

// warnLimited emits a warning at most every 10 s per key. During an outage it stays quiet:
// a failure reaching a cluster (err) is the cluster watch's to report (one line when the
// cluster goes down, a reminder every 30 s), and while a cluster of the flow is down every
// other warning is a consequence of it.
func (e *engine) warnLimited(key string, err error, msg string) {
	if err != nil {
		if _, reach := rdkafka.Reachability(err); reach {
			return
		}
		// A call that got no answer in time is the cluster watch's to report (one WARN when
		// the cluster is declared down), not one warning per call.
		if errors.Is(err, context.DeadlineExceeded) {
			return
		}
	}
	if e.srcW.isDown() || e.tgtW.isDown() || e.syncsWatch().isDown() {
		return
	}
	e.warnMu.Lock()
	last := e.lastWarn[key]
	now := time.Now()
	if now.Sub(last) < 10*time.Second {
		e.warnMu.Unlock()
		return
	}
	e.lastWarn[key] = now
	e.warnMu.Unlock()
	e.emit(Event{Type: EvWarning, Message: msg})
}

// syncsWatch is the watch of the cluster that holds the offset-syncs topic.
func (e *engine) syncsWatch() *clusterWatch {
	if e.flow.OffsetSyncsOnTarget {
		return e.tgtW
	}
	return e.srcW
}

// clientOpts route a client's librdkafka problems to the cluster watch (reaching the cluster)
// or to a rate-limited warning (anything else).
func (e *engine) clientOpts(w *clusterWatch) rdkafka.Option {
	return rdkafka.WithProblems(func(err error) {
		if (w != nil && w.problem(err)) || rdkafka.Transient(err) {
			return
		}
		e.warnLimited("client-"+w.alias, nil, fmt.Sprintf("cluster %s (%s): %v", w.alias, w.bootstrap, err))
	})
}

func (e *engine) start(ctx context.Context) error {
	f := e.flow
	var err error
	if e.src, err = rdkafka.NewCluster(f.Source, f.SourceBootstrap, f.SourceAdmin, f.SourceConsumer, f.SourceProducer, e.clientOpts(e.srcW)); err != nil {
		return err
	}
	if e.tgt, err = rdkafka.NewCluster(f.Target, f.TargetBootstrap, f.TargetAdmin, f.TargetConsumer, f.TargetProducer, e.clientOpts(e.tgtW)); err != nil {
		return err
	}
	if f.EmitHeartbeats {
		if e.hb, err = newHeartbeater(ctx, e); err != nil {
			return err
		}
	}
	if !f.Enabled {
		e.emit(Event{Type: EvStarted, Message: "heartbeats only (flow not enabled)"})
		return nil
	}
	if err := e.checkMM2(ctx); err != nil {
		return err
	}
	if e.state, err = newStateKeeper(ctx, e); err != nil {
		return err
	}
	if e.progress, err = newProgressWriter(ctx, e); err != nil {
		return err
	}
	if !f.ExactlyOnce { // exactly-once: loaded once the pipelines fenced their predecessors
		if e.resume, err = e.progress.load(ctx); err != nil {
			return err
		}
	}
	if e.resumeMaps, err = e.progress.loadMaps(ctx); err != nil {
		return err
	}
	if f.EmitOffsetSyncs {
		if e.syncs, err = newSyncWriter(ctx, e); err != nil {
			return err
		}
	}
	// A long link to the target needs deeper producer queues than the default budget gives
	// (flow.WANRTT): measured once here, before the pipelines' producers exist, and before the
	// checkpointer reads the offset-syncs topic (that read's load must not lengthen the round
	// trips measured). Up to linkProbes requests each, stopping at the first under flow.WANRTT:
	// a near cluster costs two, one 100 ms away ~0.6 s of start-up.
	if !f.MemoryBudgetSet {
		f.SourceRTT, f.TargetRTT = e.srcW.roundTrip(ctx, linkProbes, flow.WANRTT), e.tgtW.roundTrip(ctx, linkProbes, flow.WANRTT)
	}
	if f.EmitCheckpoints {
		if e.ckpt, err = newCheckpointer(ctx, e); err != nil {
			return err
		}
	}
	// MM2's replication consumer and an idempotent acks=all producer (pkg/flow owns both).
	cons, prod := f.ReplicationConsumer(), f.ReplicationProducer()
	if every := e.statsInterval(ctx); every > 0 {
		cons["statistics.interval.ms"] = strconv.FormatInt(every.Milliseconds(), 10)
		prod["statistics.interval.ms"] = cons["statistics.interval.ms"]
	}
	if f.RateLimit > 0 {
		e.limiter = newRateLimiter(f.RateLimit)
	}
	// kmm.data.plane (KMM_DATA_PLANE): the C plane unless the file or the environment says go;
	// exactly-once runs the Go plane (cPlaneMissing).
	plane := rdkafka.ChoosePlane(f.DataPlane)
	if why := cPlaneMissing(f); plane == rdkafka.PlaneC && why != "" {
		plane = rdkafka.PlaneGo // documented (docs/replicate.md: exactly-once); the start line names the plane
	}
	n := f.Tasks
	for i := 0; i < n; i++ {
		pcfg := prod
		if f.ExactlyOnce {
			pcfg = f.TransactionalProducer(i)
		}
		c, err := rdkafka.NewCopier(fmt.Sprintf("%s-%d", f.Name(), i), cons, pcfg, e, rdkafka.WithDataPlane(plane))
		if err != nil {
			return kerr.Wrap(kerr.Usage, err)
		}
		if f.ExactlyOnce {
			if err := e.enableTransactions(ctx, c); err != nil {
				c.Start(ctx) // Close waits for the goroutines
				c.Close()
				return err
			}
		}
		c.SourceCluster, c.TargetCluster = f.Source, f.Target
		if e.limiter != nil {
			c.SetThrottle(e.limiter)
		}
		if f.RemoteTopic("t") == "t" {
			// Remote topics keep their names (IdentityReplicationPolicy): a copy could flow
			// back. The provenance header and the echo guard (docs/mm2-compat.md).
			c.SetOrigin(f.Source, f.Target)
		}
		e.copiers = append(e.copiers, c)
		c.Start(ctx)
	}
	if f.ExactlyOnce {
		if e.resume, err = e.loadCommitted(ctx); err != nil {
			return err
		}
	}
	if f.Workers {
		if err := e.startWorkers(ctx); err != nil {
			return err
		}
	}
	added, err := e.refreshTopics(ctx)
	if err != nil {
		return err
	}
	total := 0
	for _, l := range e.parts {
		total += len(l)
	}
	if e.workers != nil {
		e.emit(Event{Type: EvStarted, Topics: len(e.workers.srcParts), Message: fmt.Sprintf("%d topics shared by the workers of group %s on %s (leader election: group %s on %s), %d pipelines",
			len(e.workers.srcParts), f.WorkersGroup(), f.Source, f.LeaderGroup(), f.Target, len(e.copiers))})
		return nil // config and ACL sync are the leader's, from the control loop
	}
	e.emit(Event{Type: EvStarted, Topics: len(e.parts), Parts: total,
		Message: fmt.Sprintf("%d topics, %d partitions (%d new), %d pipelines (%s data plane)%s", len(e.parts), total, added, len(e.copiers), e.plane(), e.wanNote())})
	if f.SyncTopicConfigs {
		e.syncConfigs(ctx)
	}
	if f.SyncTopicACLs {
		e.syncACLs(ctx)
	}
	return nil
}

// plane names the data plane the flow's pipelines run ("go", "c", or "mixed").
func (e *engine) plane() string {
	p := ""
	for _, c := range e.copiers {
		switch {
		case p == "":
			p = c.Plane()
		case p != c.Plane():
			return "mixed"
		}
	}
	return p
}

// loop runs the periodic jobs of the flow until ctx ends or a pipeline fails.
func (e *engine) loop(ctx context.Context) error {
	f := e.flow
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	now := time.Now()
	next := struct{ refresh, configs, acls, flush, progress, ends, promote time.Time }{
		now.Add(f.RefreshTopicsInterval), now.Add(f.SyncConfigsInterval), now.Add(f.SyncACLsInterval),
		now.Add(f.OffsetFlushInterval), now.Add(e.opt.ProgressEvery), now, now.Add(f.SyncPromoteInterval)}
	var marked chan *flowstate.FlowRecord // nil (never ready) for a flow without a state keeper
	if e.state != nil {
		marked = e.state.marked
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case st := <-marked:
			return &errMarked{st: st}
		case g := <-e.gaps:
			e.checkGapNow(ctx, g)
		case <-tick.C:
		}
		for _, c := range e.copiers {
			if err := c.Err(); err != nil {
				return err
			}
		}
		if !f.Enabled {
			continue
		}
		now := time.Now()
		// Jobs that need a cluster wait while it is down (they would only time out and warn);
		// they run at their next interval once it is back.
		srcDown, tgtDown := e.srcW.isDown(), e.tgtW.isDown()
		if f.RefreshTopics && now.After(next.refresh) {
			if srcDown || tgtDown {
				next.refresh = now.Add(time.Second)
			} else {
				if _, err := e.refreshTopics(ctx); err != nil && ctx.Err() == nil {
					e.warnLimited("refresh", err, fmt.Sprintf("topic refresh: %v", err))
				}
				next.refresh = now.Add(f.RefreshTopicsInterval)
			}
		}
		if f.SyncTopicConfigs && now.After(next.configs) && !srcDown && !tgtDown && e.leads() {
			e.syncConfigs(ctx)
			next.configs = now.Add(f.SyncConfigsInterval)
		}
		if f.SyncTopicACLs && now.After(next.acls) && !srcDown && !tgtDown && e.leads() {
			e.syncACLs(ctx)
			next.acls = now.Add(f.SyncACLsInterval)
		}
		if now.After(next.flush) && !tgtDown {
			e.commit(ctx)
			next.flush = now.Add(f.OffsetFlushInterval)
			next.promote = now.Add(f.SyncPromoteInterval)
		}
		if e.ckpt != nil && now.After(next.promote) {
			e.promoteSyncs()
			next.promote = now.Add(f.SyncPromoteInterval)
		}
		if now.After(next.ends) {
			if srcDown {
				e.foldHighWatermarks()
			} else {
				e.refreshEnds(ctx)
				if e.workers != nil && e.leads() {
					e.workers.refreshAllEnds(ctx)
				}
			}
			next.ends = now.Add(EndsEvery)
		}
		if e.opt.ProgressEvery > 0 && now.After(next.progress) {
			e.emitProgress()
			next.progress = now.Add(e.opt.ProgressEvery)
		}
	}
}

// EndsEvery is how often the source's end offsets are read (and the copiers' fetch high
// watermarks folded in), and the ends snapshot written to __kmm_state on the target.
const EndsEvery = 500 * time.Millisecond

// promoteSyncs turns every partition's delayed offset sync into a pending one (MM2 does this
// at every commit).
func (e *engine) promoteSyncs() {
	if e.syncs == nil {
		return
	}
	for _, c := range e.copiers {
		c := c
		c.OnDeliveryGoroutine(func() {
			for _, p := range c.Parts() {
				e.syncs.promote(p.State.(*pstate))
			}
		})
	}
}

// commit stores acknowledged positions and promotes delayed offset syncs (MM2's commit()).
// A store waits at most commitTimeout: records it could not deliver stay queued and are
// delivered when the target answers again (no new store is queued behind them meanwhile).
func (e *engine) commit(ctx context.Context) {
	e.promoteSyncs()
	if e.progress.busy() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, commitTimeout)
	defer cancel()
	e.partsMu.RLock()
	parts := e.allParts()
	e.partsMu.RUnlock()
	store := e.progress.store
	if e.flow.ExactlyOnce { // the pipelines store progress in their transactions; the maps are stored here
		store = e.progress.storeMaps
	}
	if err := store(ctx, parts); err != nil && !errors.Is(err, context.Canceled) {
		e.warnLimited("progress", err, fmt.Sprintf("storing progress in %s on %s: %v", e.flow.OffsetsTopic, e.flow.Target, err))
	}
}

// commitTimeout bounds one progress store in the control loop; longer than DefaultDownAfter,
// so an outage is declared (and this warning suppressed) before a store gives up.
const commitTimeout = 30 * time.Second

func (e *engine) allParts() []*pstate {
	var out []*pstate
	topics := make([]string, 0, len(e.parts))
	for t := range e.parts {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	for _, t := range topics {
		out = append(out, e.parts[t]...)
	}
	return out
}

func (e *engine) emitProgress() {
	var lag int64
	e.partsMu.RLock()
	parts := e.allParts()
	e.partsMu.RUnlock()
	for _, p := range parts {
		if end := p.srcEnd.Load(); end >= 0 {
			lag += max(0, end-(p.acked.Load()+1))
		}
	}
	e.partsMu.RLock()
	recs, bytes := e.totals()
	e.partsMu.RUnlock()
	e.emit(Event{Type: EvProgress, Records: recs, Bytes: bytes, Topics: len(e.parts), Count: e.gapTotal.Load(), LagRecord: lag})
}

// Totals returns records and value bytes acknowledged so far (for tests and status).
func (e *engine) totals() (int64, int64) {
	recs, bytes := e.retiredRecs.Load(), e.retiredBytes.Load()
	for _, p := range e.allParts() {
		recs += p.records.Load()
		bytes += p.bytes.Load()
	}
	return recs, bytes
}

// roundDuration keeps two significant figures or so: 12ms, 340ms, 1.2s, 31s.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond)
	case d < 10*time.Second:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

// drainResult is what one flow's drain achieved.
type drainResult struct {
	flow, target  string
	targetDown    bool
	undelivered   int64 // records fetched and never acknowledged (given up at the bound)
	unstoredParts int   // partitions whose acknowledged position could not be stored
	unstored      int64 // offsets acknowledged past the stored positions (an upper bound on records)
	storeErr      error
}

func (r drainResult) complete() bool { return r.undelivered == 0 && r.unstoredParts == 0 }

// summary says what will be copied again, for the error Run returns.
func (r drainResult) summary() string {
	var parts []string
	if r.undelivered > 0 {
		s := fmt.Sprintf("%d record(s) in flight to %s were not acknowledged", r.undelivered, r.target)
		if r.targetDown {
			s += fmt.Sprintf(" (%s is unreachable)", r.target)
		}
		parts = append(parts, s)
	}
	if r.unstoredParts > 0 {
		parts = append(parts, fmt.Sprintf("the positions of %d partition(s) (up to %d acknowledged record(s)) could not be stored on %s: %v",
			r.unstoredParts, r.unstored, r.target, r.storeErr))
	}
	return "flow " + r.flow + ": " + strings.Join(parts, "; ")
}

// drain stops the flow within the bound: stop fetching, wait until drain budget's end for the
// target to acknowledge what is in flight (not at all when the target is known to be down),
// give up on what is left (purge: no acknowledgement can arrive afterwards), then store the
// acknowledged positions and the pending offset syncs. Budget: the last reserve (a fifth of
// the timeout, 1–5 s) is kept for storing and closing.
func (e *engine) drain(begin, deadline time.Time) drainResult {
	res := drainResult{flow: e.flow.Name(), target: e.flow.Target}
	if !e.flow.Enabled || !e.started.Load() {
		return res
	}
	e.emit(Event{Type: EvDraining})
	reserve := min(max(deadline.Sub(begin)/5, time.Second), 5*time.Second)
	drainUntil, storeUntil := deadline.Add(-reserve), deadline.Add(-reserve/2)
	// A worker leaves its groups first: its partitions are drained and their positions stored
	// (the revocation, within the drain's own budget), and the other workers take them over.
	if e.workers != nil {
		e.workers.stopBy.Store(drainUntil.UnixMilli())
		if e.tgtW.isDown() {
			e.workers.stopBy.Store(time.Now().UnixMilli()) // nothing can be acknowledged nor stored
		}
		e.workers.stop()
	}
	res.targetDown = e.tgtW.isDown()
	all := !res.targetDown
	if all {
		// Wait in slices, to stop waiting as soon as the target is declared down.
	copiers:
		for _, c := range e.copiers {
			for !c.Drain(min(time.Until(drainUntil), 500*time.Millisecond)) {
				if !time.Now().Before(drainUntil) || e.tgtW.isDown() {
					all = false
					break copiers
				}
			}
		}
	}
	if !all {
		for _, c := range e.copiers {
			res.undelivered += c.Abandon(max(min(time.Until(storeUntil), time.Second), 100*time.Millisecond))
		}
	}
	// No acknowledgement can arrive from here on: store what was acknowledged.
	ctx, cancel := context.WithDeadline(context.Background(), storeUntil)
	defer cancel()
	e.partsMu.RLock()
	parts := e.allParts()
	e.partsMu.RUnlock()
	if res.targetDown || e.tgtW.isDown() {
		res.targetDown = true
		st := e.tgtW.state()
		res.storeErr = fmt.Errorf("%s is unreachable (%s)", e.flow.Target, st.Cause)
	} else if !e.flow.ExactlyOnce { // exactly-once: Drain committed the positions with the records
		res.storeErr = e.progress.store(ctx, parts)
	} else {
		res.storeErr = e.progress.storeMaps(ctx, parts)
	}
	syncsLeft := 0
	if e.syncs != nil {
		e.syncs.stopRun()
		e.promoteSyncs()
		if !e.syncsWatch().isDown() {
			e.syncs.flush(ctx)
		}
		syncsLeft = e.syncs.pendingCount()
	}
	for _, ps := range parts {
		a, st := ps.acked.Load(), ps.stored.Load()
		if a < 0 || a == st {
			continue
		}
		res.unstoredParts++
		if st >= 0 {
			res.unstored += a - st
		} else {
			res.unstored += ps.records.Load()
		}
	}
	e.partsMu.RLock()
	recs, bytes := e.totals()
	e.partsMu.RUnlock()
	msg := fmt.Sprintf("drained in %s: every fetched record was acknowledged by %s and its position stored", roundDuration(time.Since(begin)), e.flow.Target)
	if !res.complete() {
		msg = fmt.Sprintf("stopped at the shutdown bound with work not delivered: %s; nothing is lost: progress is stored only for acknowledged records, so these are copied again after a restart",
			strings.TrimPrefix(res.summary(), "flow "+res.flow+": "))
	}
	if syncsLeft > 0 {
		side, _ := e.flow.OffsetSyncs()
		sw := e.flow.Alias(side)
		msg += fmt.Sprintf("; %d offset sync(s) could not be written to %s (offsets of consumer groups translate less precisely until new syncs are written)", syncsLeft, sw)
	}
	if why := e.paused.Load(); why != nil {
		msg = *why + "; " + msg
	}
	e.emit(Event{Type: EvStopped, Records: recs, Bytes: bytes, Undelivered: res.undelivered, Incomplete: !res.complete(), Message: msg})
	return res
}

// stopForState stops this flow because its state says it must not run (a failover marked it):
// stop fetching, drain what is in flight, store final progress, stop offset syncs, checkpoints,
// group offset sync and heartbeats, release the lease; one log line says so, and the flow's
// stats say PAUSED with the reason.
func (e *engine) stopForState(st *flowstate.FlowRecord) {
	e.stopped.Store(true)
	e.running.Store(false)
	reason := fmt.Sprintf("stopped: flow %s marked %s (epoch %d) by %s, run %s", st.Flow, st.State, st.Epoch, st.By, st.RunID)
	e.paused.Store(&reason)
	if e.ckpt != nil {
		// No more checkpoints nor group offset sync into the new primary. Cancel now; its
		// goroutine may be blocked on an unreachable source, so it is waited for in the background.
		e.ckptStopped.Store(true)
		e.ckpt.cancel()
	}
	if e.hb != nil {
		e.hb.close()
	}
	e.closedByState = true // doClose (after the loop goroutines end) skips the heartbeater and the checkpointer
	now := time.Now()
	e.drain(now, now.Add(min(e.opt.ShutdownTimeout, 4*time.Second)))
	e.state.release(time.Now().Add(leaseReleaseWait))
	if e.ckpt != nil {
		go e.ckpt.close()
	}
	// The clients are closed when the process ends (Run's close): stats readers (the HTTP
	// endpoint) may still read them.
}

func (e *engine) close() { e.closeOnce.Do(e.doClose) }

// doClose closes every client of the flow, in dependency order (nothing is closed while a
// goroutine may still use it). Producers purge what they still hold instead of waiting for
// an unreachable cluster. Run bounds the whole in time (teardown).
func (e *engine) doClose() {
	e.state.release(time.Now().Add(leaseReleaseWait)) // a no-op after a drain released it
	e.workers.stop()                                  // a no-op after a drain left the groups
	for _, c := range e.copiers {
		c.Close()
	}
	if e.hb != nil && !e.closedByState {
		e.hb.close()
	}
	if e.syncs != nil {
		e.syncs.close() // before the checkpointer: the sync writer feeds it
	}
	if e.ckpt != nil && !e.closedByState {
		e.ckpt.close()
	}
	if e.progress != nil {
		e.progress.close()
	}
	if e.src != nil {
		e.src.Close()
	}
	if e.tgt != nil {
		e.tgt.Close()
	}
}

// sample runs every second (watches): it passes signs of working connections to the cluster
// watches and keeps the stall bookkeeping (since when records wait).
func (e *engine) sample(now time.Time) {
	if !e.started.Load() || !e.flow.Enabled {
		return
	}
	var lastAck, acked int64
	e.partsMu.RLock()
	for _, l := range e.parts {
		for _, ps := range l {
			lastAck = max(lastAck, ps.lastAckMs.Load())
			acked += ps.records.Load()
		}
	}
	e.partsMu.RUnlock()
	e.lastAckMs.Store(lastAck)
	if acked > e.ackedSeen {
		e.tgtW.ok(now)
	}
	e.ackedSeen = acked
	waiting := false
	for _, c := range e.copiers {
		if c.InFlight() > 0 {
			waiting = true
		}
		for _, cs := range c.ClientStats() {
			if cs.AnyBrokerAnswering(probeTimeout) {
				if cs.Role == "target-producer" {
					e.tgtW.ok(cs.At)
				} else {
					e.srcW.ok(cs.At)
				}
			}
			if cs.Role == "source-consumer" && cs.ConsumerLag > 0 && now.Sub(cs.At) < freshStats {
				waiting = true
			}
		}
	}
	switch {
	case !waiting:
		e.waitingSince.Store(0)
	case e.waitingSince.Load() == 0:
		e.waitingSince.Store(now.UnixMilli())
	}
}

// waitingRecords is the number of records fetched and not yet acknowledged, plus those the
// source consumer knows of and has not handed over yet.
func (e *engine) waitingRecords() int64 {
	var n int64
	for _, c := range e.copiers {
		n += int64(c.InFlight())
		for _, cs := range c.ClientStats() {
			if cs.Role == "source-consumer" && cs.ConsumerLag > 0 && time.Since(cs.At) < freshStats {
				n += cs.ConsumerLag
			}
		}
	}
	return n
}

// stalledMs is how long records have waited without any being delivered (0 when none wait).
func (e *engine) stalledMs(nowMs int64) int64 {
	since := e.waitingSince.Load()
	if since == 0 {
		return 0
	}
	return max(nowMs-max(since, e.lastAckMs.Load()), 0)
}

// CopyHandler implementation (called by the copiers).

// Acked runs on a copier's delivery goroutine for every acknowledged record.
func (e *engine) Acked(p *rdkafka.CopyPart, src, dst int64, vlen int, ts int64) {
	ps := p.State.(*pstate)
	if !e.flow.ExactlyOnce { // exactly-once: mapped once committed (eos.go)
		ps.mapAdd(src, dst, 1) // before acked moves: a store reading acked first finds the map covering it
	}
	ps.acked.Store(src)
	if dst < 0 { // an echo the copier did not write (its origin is the target): no copy
		return
	}
	ps.records.Add(1)
	ps.bytes.Add(int64(vlen))
	now := coarseNow.Load()
	ps.lastAckMs.Store(now)
	if lat := now - ts; lat >= 0 && ts > 0 {
		ps.latSumMs.Add(lat)
		if lat > ps.latMaxMs.Load() {
			ps.latMaxMs.Store(lat)
		}
	}
	if e.flow.ExactlyOnce {
		ps.txnAcks = append(ps.txnAcks, txnAck{src, dst}) // mapped and synced once committed (eos.go)
		return
	}
	if e.syncs != nil {
		e.syncs.onAck(ps, src, dst)
	}
}

// Idle runs on a copier's delivery goroutine when the source partition's tail past its last
// record holds nothing to copy (a commit or abort marker, aborted records under read_committed)
// and every copied record is acknowledged: the position moves to the source's end, so stored
// progress (MM2's format: the last offset done, next-1) and the live position say the partition
// is fully replicated, and lag, status and failover's drain see 0 left.
//
// No offset sync is written for the tail (docs/mm2-compat.md, "Transactions"): a sync (next,
// target end) would be a claim about a record that does not exist yet; with MM2's rule (a group
// past a sync's upstream offset translates one past its downstream offset) a group later
// committed inside the aborted records that follow next would translate one past the copy of the
// next committed record, skipping it, and on a target partition with other writers
// (IdentityReplicationPolicy, active/active) the target end is not where the next copy lands.
// Without it, MM2's rule already gives every group at or past the tail the target's end
// (last sync's downstream offset + 1), and failover's exact translation walks the records.
func (e *engine) Idle(p *rdkafka.CopyPart, next int64) {
	ps := p.State.(*pstate)
	if next-1 > ps.acked.Load() {
		ps.acked.Store(next - 1)
	}
}

// AckedRun runs on a copier's delivery goroutine for a run of acknowledged records (the C data
// plane): the same bookkeeping as N calls of Acked.
func (e *engine) AckedRun(p *rdkafka.CopyPart, r rdkafka.AckRun) {
	ps := p.State.(*pstate)
	ps.mapAdd(r.FirstSrc, r.FirstDst, r.LastSrc-r.FirstSrc+1) // before acked moves (see Acked)
	ps.acked.Store(r.LastSrc)
	ps.records.Add(r.N)
	ps.bytes.Add(r.Bytes)
	ps.lastAckMs.Store(coarseNow.Load())
	if r.LatSumMs > 0 {
		ps.latSumMs.Add(r.LatSumMs)
	}
	if r.LatMaxMs > ps.latMaxMs.Load() {
		ps.latMaxMs.Store(r.LatMaxMs)
	}
	if e.syncs != nil {
		e.syncs.onAckRun(ps, r.FirstSrc, r.FirstDst, r.LastSrc, r.LastDst)
	}
}

// Gap runs on a copier's consumer goroutine when offsets jump.
func (e *engine) Gap(p *rdkafka.CopyPart, expected, got int64) {
	select {
	case e.gaps <- gapCheck{ps: p.State.(*pstate), from: expected, to: got}:
	default: // a flood of gaps is compaction or transactions; checks are best effort
	}
}

// Warn receives a pipeline client's problems: failures to reach a cluster go to its watch
// (which logs the outage once); anything else is a rate-limited warning.
func (e *engine) Warn(side string, err error) {
	if errors.Is(err, rdkafka.ErrTxnAborted) { // its own key: librdkafka's TXNERR line comes first
		e.warnLimited("txn-abort", nil, fmt.Sprintf("cluster %s (%s): %v", e.flow.Target, e.flow.TargetBootstrap, err))
		return
	}
	alias, boot, w := e.flow.Source, e.flow.SourceBootstrap, e.srcW
	if side == "target" {
		alias, boot, w = e.flow.Target, e.flow.TargetBootstrap, e.tgtW
	}
	if (w != nil && w.problem(err)) || rdkafka.Transient(err) {
		return
	}
	e.warnLimited(side, nil, fmt.Sprintf("cluster %s (%s): %v (retrying)", alias, boot, err))
}

type gapCheck struct {
	ps       *pstate
	from, to int64
}

// checkGapNow decides whether a jump in source offsets lost records to retention: if the log
// start offset is now past the first missing offset, [from, min(logStart,to)-1] was deleted
// before it was replicated. Compaction and transaction markers leave the log start alone.
func (e *engine) checkGapNow(ctx context.Context, g gapCheck) {
	tp := rdkafka.TP{Topic: g.ps.p.SrcTopic, Partition: g.ps.p.Partition}
	res, err := e.src.ListOffsets(ctx, []rdkafka.TP{tp}, rdkafka.Earliest)
	if err != nil {
		e.warnLimited("gapcheck", err, fmt.Sprintf("checking a gap in %s[%d]: %v", tp.Topic, tp.Partition, err))
		return
	}
	start := res[tp].Offset
	if start <= g.from {
		return
	}
	last := start - 1
	if g.to-1 < last {
		last = g.to - 1
	}
	n := last - g.from + 1
	g.ps.gaps.Add(n)
	e.gapTotal.Add(n)
	e.emit(Event{Type: EvRetentionGap, Topic: tp.Topic, Partition: i32(tp.Partition), From: i64(g.from), To: i64(last), Count: n,
		Message: fmt.Sprintf("records %d..%d of %s[%d] were deleted on %s by retention before they were replicated: %d records lost; continuing from offset %d",
			g.from, last, tp.Topic, tp.Partition, e.flow.Source, n, g.to)})
}

// checkMM2 refuses to run a flow that Apache MM2 is running right now: two writers of the same
// remote topics and resume positions would duplicate records. MM2's Connect group is not a
// consumer group, so librdkafka cannot describe it; groupprobe speaks the protocol itself.
func (e *engine) checkMM2(ctx context.Context) error {
	f := e.flow
	if e.opt.Force || f.MM2Group == "" {
		return nil
	}
	g, err := groupprobe.Describe(ctx, f.TargetAdmin, f.MM2Group)
	if err != nil {
		e.emit(Event{Type: EvWarning, Message: fmt.Sprintf("could not check whether Apache MM2 runs this flow (group %s on %s): %v", f.MM2Group, f.Target, err)})
		return nil
	}
	if g.Members > 0 {
		return kerr.WithHint(kerr.New(kerr.CheckFailed, "flow %s: Apache MirrorMaker 2 is running it (Connect group %s on %s has %d member(s), state %s)", f.Name(), f.MM2Group, f.Target, g.Members, g.State),
			"stop MM2 first (kmm resumes from its positions in "+f.OffsetsTopic+"), or pass --force if you are sure")
	}
	return nil
}

// cPlaneMissing names what flow f uses that the C data plane lacks ("" if nothing).
func cPlaneMissing(f *flow.Flow) string {
	switch {
	case f.ExactlyOnce:
		return "exactly.once.source.support"
	}
	return ""
}

// wanNote says, for the start message, that the pipelines' producer queues were sized for a
// long link to the target ("" when they were not).
func (e *engine) wanNote() string {
	f := e.flow
	if f.MemoryBudgetSet {
		return ""
	}
	var notes []string
	c := f.ReplicationConsumer()
	prefetch := fmt.Sprintf("prefetch queues of %s KiB (fetches of %s bytes)", c["queued.max.messages.kbytes"], c["fetch.max.bytes"])
	if f.SourceRTT >= flow.WANRTT {
		notes = append(notes, fmt.Sprintf("%s is %s away: %s per pipeline for the link", f.Source, f.SourceRTT.Round(time.Millisecond), prefetch))
	}
	if f.TargetRTT >= flow.WANRTT {
		also := ""
		if f.SourceRTT < flow.WANRTT {
			also = " and " + prefetch
		}
		notes = append(notes, fmt.Sprintf("%s is %s away: producer queues of %s KiB%s per pipeline for the link",
			f.Target, f.TargetRTT.Round(time.Millisecond), f.ReplicationProducer()["queue.buffering.max.kbytes"], also))
	}
	if len(notes) == 0 {
		return ""
	}
	return "; " + strings.Join(notes, "; ") + " (kmm.memory.budget.bytes bounds them)"
}

// statsEveryPerThousand is the pipelines' statistics interval per 1,000 source partitions
// (at least rdkafka's 5 s, at most maxStatsEvery), and freshStats how old statistics may be for
// their consumer lag to count as records waiting. librdkafka's statistics describe every
// partition a client knows (~1 KB of JSON each, built by librdkafka and parsed here): every 5 s
// at 10,000 partitions they cost ~70 MiB of peak memory and a tenth of the process's CPU, and
// each partition's statistics timer is re-inserted in librdkafka's sorted timer list, a walk of
// all of them (docs/benchmarks.md, "Many partitions").
const (
	statsEveryPerThousand = 5 * time.Second
	maxStatsEvery         = time.Minute
	freshStats            = 15 * time.Second
)

// statsInterval is the statistics interval of the flow's pipelines for the source partitions
// the flow selects now (0: the default, 5 s, for up to 1,000 partitions or when unknown).
func (e *engine) statsInterval(ctx context.Context) time.Duration {
	ctx, cancel := context.WithTimeout(ctx, e.flow.AdminTimeout)
	defer cancel()
	ts, err := e.src.ListTopics(ctx)
	if err != nil {
		return 0
	}
	n := 0
	for name, t := range ts {
		if e.flow.Selected(name) {
			n += t.Partitions
		}
	}
	if n <= 1000 {
		return 0
	}
	return min(statsEveryPerThousand*time.Duration((n+999)/1000), maxStatsEvery)
}
