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
	"sync"
	"sync/atomic"
	"time"

	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/groupprobe"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// Options tune a Run.
type Options struct {
	Sink            Sink
	ShutdownTimeout time.Duration // drain budget after ctx ends (default 30 s)
	StartTimeout    time.Duration // per-cluster reachability check at start (default 15 s)
	ProgressEvery   time.Duration // EvProgress cadence (default 10 s; <0 disables)
	// Force starts even while Apache MM2 runs the same flow (its Connect group has members).
	Force bool
}

// Replicator runs flows and answers Stats while it does.
type Replicator struct {
	flows   []*flow.Flow
	opt     Options
	engines atomic.Pointer[[]*engine]
}

// New prepares a replicator; Run starts it.
func New(flows []*flow.Flow, opt Options) *Replicator { return &Replicator{flows: flows, opt: opt} }

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

// Run replicates every flow until ctx ends, then drains (stop fetching, wait for the target's
// acknowledgements, store progress) and returns nil. A cluster unreachable at start gives a
// kerr.Unreachable error naming alias and bootstrap; a fatal error in any flow stops all flows
// (progress already acknowledged is stored) and is returned.
func Run(ctx context.Context, flows []*flow.Flow, opt Options) error { return New(flows, opt).Run(ctx) }

// Run is the package-level Run for this replicator.
func (r *Replicator) Run(ctx context.Context) error {
	flows, opt := r.flows, r.opt
	if opt.Sink == nil {
		opt.Sink = SinkFunc(func(Event) {})
	}
	if opt.ShutdownTimeout <= 0 {
		opt.ShutdownTimeout = 30 * time.Second
	}
	if opt.StartTimeout <= 0 {
		opt.StartTimeout = 15 * time.Second
	}
	if opt.ProgressEvery == 0 {
		opt.ProgressEvery = 10 * time.Second
	}
	engines := make([]*engine, 0, len(flows))
	for _, f := range flows {
		if !f.Validated() {
			return kerr.New(kerr.Usage, "flow %s was not validated (load flows with flow.FromMM2, or call Validate)", f.Name())
		}
		engines = append(engines, &engine{flow: f, opt: opt, sink: opt.Sink, gaps: make(chan gapCheck, 256), lastWarn: map[string]time.Time{},
			parts: map[string][]*pstate{}, remote: map[string]string{}})
	}
	r.engines.Store(&engines)
	defer func() {
		for _, e := range engines {
			e.running.Store(false)
			e.close()
		}
	}()
	if err := checkReachable(ctx, engines, opt.StartTimeout); err != nil {
		return err
	}
	for _, e := range engines {
		if err := e.start(ctx); err != nil {
			return err
		}
		e.started.Store(true)
	}
	// Run until the context ends or a flow fails.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, len(engines))
	for _, e := range engines {
		wg.Add(1)
		e.running.Store(true)
		go func(e *engine) {
			defer wg.Done()
			if err := e.loop(runCtx); err != nil {
				e.failed.Store(&err)
				errs <- err
				cancel()
			}
		}(e)
	}
	wg.Wait()
	close(errs)
	var firstErr error
	for err := range errs {
		if firstErr == nil {
			firstErr = err
		}
	}
	// Drain all flows in parallel within the shutdown budget.
	var dwg sync.WaitGroup
	for _, e := range engines {
		dwg.Add(1)
		go func(e *engine) { defer dwg.Done(); e.drain(opt.ShutdownTimeout) }(e)
	}
	dwg.Wait()
	return firstErr
}

func checkReachable(ctx context.Context, engines []*engine, timeout time.Duration) error {
	type target struct {
		alias, bootstrap string
		cfg              rdkafka.Config
	}
	seen := map[string]bool{}
	var ts []target
	for _, e := range engines {
		f := e.flow
		for _, t := range []target{{f.Source, f.SourceBootstrap, f.SourceAdmin}, {f.Target, f.TargetBootstrap, f.TargetAdmin}} {
			if !seen[t.alias] {
				seen[t.alias] = true
				ts = append(ts, t)
			}
		}
	}
	errs := make([]error, len(ts))
	var wg sync.WaitGroup
	for i, t := range ts {
		wg.Add(1)
		go func(i int, t target) {
			defer wg.Done()
			a, err := rdkafka.NewAdmin("cluster "+t.alias, t.cfg)
			if err != nil {
				errs[i] = err
				return
			}
			defer a.Close()
			if _, err := a.Ping(ctx, timeout); err != nil {
				errs[i] = kerr.WithHint(kerr.Wrap(kerr.Unreachable, fmt.Errorf("cluster %s (bootstrap %s) is not reachable: %w", t.alias, t.bootstrap, err)),
					fmt.Sprintf("check %s.bootstrap.servers and %s's security settings; `kmm config explain` shows the effective values", t.alias, t.alias))
			}
		}(i, t)
	}
	wg.Wait()
	return errors.Join(errs...)
}

// engine runs one flow.
type engine struct {
	flow *flow.Flow
	opt  Options
	sink Sink

	src, tgt *rdkafka.Cluster // admin clients; readers and producers with the side's settings
	copiers  []*rdkafka.Copier
	parts    map[string][]*pstate // source topic -> partitions
	remote   map[string]string    // source topic -> remote topic
	resume   map[rdkafka.TP]int64 // stored positions (last replicated offset)
	progress *progressWriter
	syncs    *syncWriter
	ckpt     *checkpointer
	hb       *heartbeater

	syncCount  atomic.Int64
	syncLastMs atomic.Int64

	gaps     chan gapCheck
	partsMu  sync.RWMutex // guards parts and remote against Stats readers
	running  atomic.Bool
	started  atomic.Bool // start() finished: hb, ckpt, copiers are set
	failed   atomic.Pointer[error]
	warnMu   sync.Mutex
	lastWarn map[string]time.Time
	gapTotal atomic.Int64
	nextCop  int
}

func (e *engine) emit(ev Event) {
	ev.Time = time.Now()
	ev.Flow = e.flow.Name()
	e.sink.Emit(ev)
}

// warnLimited emits a warning at most every 10 s per key, so a lost cluster is reported
// without flooding.
func (e *engine) warnLimited(key, msg string) {
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

func (e *engine) start(ctx context.Context) error {
	f := e.flow
	var err error
	if e.src, err = rdkafka.NewCluster(f.Source, f.SourceBootstrap, f.SourceAdmin, f.SourceConsumer, f.SourceProducer); err != nil {
		return err
	}
	if e.tgt, err = rdkafka.NewCluster(f.Target, f.TargetBootstrap, f.TargetAdmin, f.TargetConsumer, f.TargetProducer); err != nil {
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
	if e.progress, err = newProgressWriter(ctx, e); err != nil {
		return err
	}
	if e.resume, err = e.progress.load(ctx); err != nil {
		return err
	}
	if f.EmitOffsetSyncs {
		if e.syncs, err = newSyncWriter(ctx, e); err != nil {
			return err
		}
	}
	if f.EmitCheckpoints {
		if e.ckpt, err = newCheckpointer(ctx, e); err != nil {
			return err
		}
	}
	// MM2's replication consumer and an idempotent acks=all producer (pkg/flow owns both).
	cons, prod := f.ReplicationConsumer(), f.ReplicationProducer()
	n := f.Tasks
	for i := 0; i < n; i++ {
		c, err := rdkafka.NewCopier(fmt.Sprintf("%s-%d", f.Name(), i), cons, prod, e)
		if err != nil {
			return kerr.Wrap(kerr.Usage, err)
		}
		e.copiers = append(e.copiers, c)
		c.Start(ctx)
	}
	added, err := e.refreshTopics(ctx)
	if err != nil {
		return err
	}
	total := 0
	for _, l := range e.parts {
		total += len(l)
	}
	e.emit(Event{Type: EvStarted, Topics: len(e.parts), Parts: total,
		Message: fmt.Sprintf("%d topics, %d partitions (%d new), %d pipelines", len(e.parts), total, added, len(e.copiers))})
	if f.SyncTopicConfigs {
		e.syncConfigs(ctx)
	}
	if f.SyncTopicACLs {
		e.syncACLs(ctx)
	}
	return nil
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
	for {
		select {
		case <-ctx.Done():
			return nil
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
		if f.RefreshTopics && now.After(next.refresh) {
			if _, err := e.refreshTopics(ctx); err != nil && ctx.Err() == nil {
				e.warnLimited("refresh", fmt.Sprintf("topic refresh: %v", err))
			}
			next.refresh = now.Add(f.RefreshTopicsInterval)
		}
		if f.SyncTopicConfigs && now.After(next.configs) {
			e.syncConfigs(ctx)
			next.configs = now.Add(f.SyncConfigsInterval)
		}
		if f.SyncTopicACLs && now.After(next.acls) {
			e.syncACLs(ctx)
			next.acls = now.Add(f.SyncACLsInterval)
		}
		if now.After(next.flush) {
			e.commit(ctx)
			next.flush = now.Add(f.OffsetFlushInterval)
			next.promote = now.Add(f.SyncPromoteInterval)
		}
		if e.ckpt != nil && now.After(next.promote) {
			e.promoteSyncs()
			next.promote = now.Add(f.SyncPromoteInterval)
		}
		if now.After(next.ends) {
			e.refreshEnds(ctx)
			next.ends = now.Add(5 * time.Second)
		}
		if e.opt.ProgressEvery > 0 && now.After(next.progress) {
			e.emitProgress()
			next.progress = now.Add(e.opt.ProgressEvery)
		}
	}
}

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
func (e *engine) commit(ctx context.Context) {
	e.promoteSyncs()
	if err := e.progress.store(ctx, e.allParts()); err != nil {
		e.warnLimited("progress", fmt.Sprintf("storing progress in %s on %s: %v", e.flow.OffsetsTopic, e.flow.Target, err))
	}
}

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
	recs, bytes := e.totals()
	e.emit(Event{Type: EvProgress, Records: recs, Bytes: bytes, Topics: len(e.parts), Count: e.gapTotal.Load(), LagRecord: lag})
}

// Totals returns records and value bytes acknowledged so far (for tests and status).
func (e *engine) totals() (int64, int64) {
	var recs, bytes int64
	for _, p := range e.allParts() {
		recs += p.records.Load()
		bytes += p.bytes.Load()
	}
	return recs, bytes
}

func (e *engine) drain(timeout time.Duration) {
	if !e.flow.Enabled {
		return
	}
	e.emit(Event{Type: EvDraining})
	deadline := time.Now().Add(timeout)
	all := true
	for _, c := range e.copiers {
		if !c.Drain(time.Until(deadline)) {
			all = false
		}
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline.Add(5*time.Second))
	defer cancel()
	if e.syncs != nil {
		e.promoteSyncs()
		e.syncs.flush(ctx)
	}
	if err := e.progress.store(ctx, e.allParts()); err != nil {
		e.emit(Event{Type: EvError, Message: fmt.Sprintf("storing final progress: %v (records since the last stored position will be copied again on restart)", err)})
	}
	recs, bytes := e.totals()
	msg := "drained"
	if !all {
		msg = "shutdown timeout: some records were not acknowledged by the target; they will be copied again on restart"
	}
	e.emit(Event{Type: EvStopped, Records: recs, Bytes: bytes, Message: msg})
}

func (e *engine) close() {
	for _, c := range e.copiers {
		c.Close()
	}
	if e.hb != nil {
		e.hb.close()
	}
	if e.syncs != nil {
		e.syncs.close() // before the checkpointer: the sync writer feeds it
	}
	if e.ckpt != nil {
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

// CopyHandler implementation (called by the copiers).

// Acked runs on a copier's delivery goroutine for every acknowledged record.
func (e *engine) Acked(p *rdkafka.CopyPart, src, dst int64, vlen int, ts int64) {
	ps := p.State.(*pstate)
	ps.acked.Store(src)
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
	if e.syncs != nil {
		e.syncs.onAck(ps, src, dst)
	}
}

// Gap runs on a copier's consumer goroutine when offsets jump.
func (e *engine) Gap(p *rdkafka.CopyPart, expected, got int64) {
	select {
	case e.gaps <- gapCheck{ps: p.State.(*pstate), from: expected, to: got}:
	default: // a flood of gaps is compaction or transactions; checks are best effort
	}
}

// Warn reports transient client problems, rate-limited.
func (e *engine) Warn(side string, err error) {
	alias, boot := e.flow.Source, e.flow.SourceBootstrap
	if side == "target" {
		alias, boot = e.flow.Target, e.flow.TargetBootstrap
	}
	e.warnLimited(side, fmt.Sprintf("cluster %s (%s): %v (retrying)", alias, boot, err))
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
		e.warnLimited("gapcheck", fmt.Sprintf("checking a gap in %s[%d]: %v", tp.Topic, tp.Partition, err))
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
