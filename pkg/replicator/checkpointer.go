package replicator

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kmmproject/kmm/pkg/checkpoint"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/consumeroffsets"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/mm2read"
	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/offsetsync"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// checkpointer is kmm's MirrorCheckpointConnector: it follows the source groups' commits as they
// happen (tailing __consumer_offsets, falling back to polling), translates them with the offset
// mapping (rebuilt from the offset-syncs topic at start, then fed by the syncs this flow
// writes), writes MM2-format checkpoints to <S>.checkpoints.internal on T, and, with
// sync.group.offsets.enabled, commits them to idle groups on T.
type checkpointer struct {
	e       *engine
	topic   string
	prod    *rdkafka.Producer
	tracker *checkpoint.Tracker // these three set by load, under writeMu
	mapping *offsetsync.Store
	store   *checkpoint.Store

	writeMu     sync.Mutex
	written     atomic.Int64
	skipped     sync.Map // group -> reason (active on target)
	lastByGroup sync.Map // group -> unix ms of its newest checkpoint

	ctx    context.Context // ends at close
	cancel context.CancelFunc
	done   chan struct{}

	// The offset-syncs topic, read at start (load). Workers: the mapping then follows it
	// (every worker's syncs) from syncsNext, instead of being fed by this process's sync writer.
	syncsCluster *rdkafka.Cluster
	syncsTopic   string
	syncsNext    int64

	// The offset-syncs and checkpoints topics are read in run, not before the pipelines start:
	// on a cluster where these topics are long the read took 12 s, and records do not wait for
	// it (MM2's checkpoint connector reads them without holding its source connector up
	// either). Syncs this flow writes meanwhile wait in pending (under loadMu) and are added
	// after the read, in order; until then the mapping translates nothing (Loaded). Past
	// maxPendingSyncs they are dropped and the read is done again (they are in the topic:
	// onSyncs hears of syncs once written). close waits for the read (bounded), so that a run
	// shorter than the read still writes the checkpoints its syncs allow.
	loadMu    sync.Mutex
	loaded    bool
	pending   []mm2wire.OffsetSync
	overflow  bool          // pending was dropped: read the topic again
	ready     chan struct{} // closed once loaded and every group's offsets listed (or run ended)
	readyOnce sync.Once
}

// loadOffsetSyncs is mm2read.LoadOffsetSyncs (a variable for tests: a slow read).
var loadOffsetSyncs = mm2read.LoadOffsetSyncs

// maxPendingSyncs bounds the syncs kept while the start's read runs (~50 bytes each).
const maxPendingSyncs = 100_000

func newCheckpointer(ctx context.Context, e *engine) (*checkpointer, error) {
	f := e.flow
	topic := f.CheckpointsTopic()
	if _, err := cluster.EnsureTopic(ctx, e.tgt, cluster.NewTopic{Name: topic, Partitions: 1, RF: f.CheckpointsRF, Configs: map[string]string{"cleanup.policy": "compact"}}, "checkpoints.topic.replication.factor"); err != nil {
		return nil, err
	}
	syncSide, syncsTopic := f.OffsetSyncs()
	syncCluster := e.src
	if syncSide == flow.Target {
		syncCluster = e.tgt
	}
	p, err := rdkafka.NewProducer("cluster "+f.Target, f.TargetProducer, e.clientOpts(e.tgtW))
	if err != nil {
		return nil, err
	}
	c := &checkpointer{e: e, topic: topic, prod: p, done: make(chan struct{}), ready: make(chan struct{}), syncsCluster: syncCluster, syncsTopic: syncsTopic}
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.cancel, c.ctx = cancel, cctx
	go c.run(cctx)
	return c, nil
}

// close stops the checkpointer. If the start's read and first listing of the groups' offsets
// have not finished, it waits for them up to the shutdown timeout first, so that a run shorter
// than that read still writes the checkpoints its syncs allow.
func (c *checkpointer) close() {
	t := time.NewTimer(c.e.opt.ShutdownTimeout)
	select {
	case <-c.ready:
	case <-t.C:
	}
	t.Stop()
	c.cancel()
	<-c.done
	c.prod.CloseWithin(0)
}

// emit writes the checkpoints the decisions call for and confirms them to the tracker.
func (c *checkpointer) emit(ctx context.Context, ds []checkpoint.Decision) {
	cps := checkpoint.Emitted(ds)
	if len(cps) == 0 {
		return
	}
	recs := make([]rdkafka.Record, 0, len(cps))
	now := time.Now()
	for _, cp := range cps {
		k, v, err := checkpoint.Record(cp)
		if err != nil {
			c.e.warnLimited("checkpoint-encode", err, fmt.Sprintf("checkpoint for group %s: %v", cp.Group, err))
			continue
		}
		recs = append(recs, rdkafka.Record{Topic: c.topic, Partition: 0, Key: k, Value: v, Timestamp: now})
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := c.prod.ProduceSync(wctx, recs); err != nil {
		c.e.warnLimited("checkpoint-write", err, fmt.Sprintf("writing checkpoints to %s on %s: %v (will retry)", c.topic, c.e.flow.Target, err))
		return
	}
	c.tracker.Written(cps, now)
	for _, cp := range cps {
		c.lastByGroup.Store(cp.Group, now.UnixMilli())
	}
	c.written.Add(int64(len(cps)))
}

// onSyncs is called by the offset-sync writer after syncs were written; the checkpoints they
// allow are written within ctx (the writer's) and the checkpointer's own life.
func (c *checkpointer) onSyncs(ctx context.Context, syncs []mm2wire.OffsetSync) {
	if c.e.flow.Workers {
		return // workers: the offset-syncs topic feeds the mapping (followSyncs)
	}
	c.loadMu.Lock()
	if !c.loaded { // added after the start's read, in order (load)
		if len(c.pending)+len(syncs) > maxPendingSyncs {
			c.pending, c.overflow = nil, true
		} else {
			c.pending = append(c.pending, syncs...)
		}
		c.loadMu.Unlock()
		return
	}
	c.loadMu.Unlock()
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.addSyncsLocked(ctx, syncs)
}

// addSyncsLocked adds syncs to the mapping and writes the checkpoints that moves; writeMu held.
func (c *checkpointer) addSyncsLocked(ctx context.Context, syncs []mm2wire.OffsetSync) {
	if len(syncs) == 0 {
		return
	}
	now := time.Now()
	var ds []checkpoint.Decision
	for _, s := range syncs {
		_, d := c.tracker.AddSync(offsetsync.TP{Topic: s.Topic, Partition: s.Partition}, offsetsync.Sync{Upstream: s.UpstreamOffset, Downstream: s.DownstreamOffset}, now)
		ds = append(ds, d...)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel)
	defer stop()
	c.emit(ctx, ds)
}

func (c *checkpointer) update(ctx context.Context, group string, offs []checkpoint.SourceOffset, full bool) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	var ds []checkpoint.Decision
	if full {
		ds = c.tracker.SetGroup(group, offs)
	} else {
		ds = c.tracker.UpdateOffsets(group, offs)
	}
	c.emit(ctx, ds)
}

// load reads the offset-syncs topic into the mapping and the checkpoints topic into the store
// (what newCheckpointer did before the pipelines started), retrying every 5 s after an error
// until it succeeds or ctx ends; then it adds the syncs written meanwhile and marks both loaded.
// false when ctx ended first.
func (c *checkpointer) load(ctx context.Context) bool {
	f := c.e.flow
	var wait time.Duration // before the next read: none at first and after an overflow
	for {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(wait):
		}
		wait = 5 * time.Second // after an error
		mapping := offsetsync.NewStore(offsetsync.Options{})
		ls, err := loadOffsetSyncs(ctx, c.syncsCluster, c.syncsTopic, mapping)
		if err != nil && !errors.Is(err, mm2read.ErrNoTopic) {
			c.e.warnLimited("checkpoint-load", err, fmt.Sprintf("flow %s: reading offset syncs (no checkpoints until it succeeds; retrying): %v", f.Name(), err))
			continue
		}
		store := checkpoint.NewStore()
		if _, err := mm2read.LoadCheckpoints(ctx, c.e.tgt, c.topic, store, f.GroupFilter); err != nil && !errors.Is(err, mm2read.ErrNoTopic) {
			c.e.warnLimited("checkpoint-load", err, fmt.Sprintf("flow %s: reading %s (no checkpoints until it succeeds; retrying): %v", f.Name(), c.topic, err))
			continue
		}
		store.MarkLoaded()
		c.writeMu.Lock()
		c.loadMu.Lock()
		if c.overflow { // syncs were dropped while reading: read again, they are in the topic by now
			c.overflow = false
			c.loadMu.Unlock()
			c.writeMu.Unlock()
			wait = 0
			continue
		}
		c.mapping, c.store = mapping, store
		c.tracker = checkpoint.NewTracker(checkpoint.Config{Source: f.SourceAlias, Target: f.TargetAlias, Policy: f.Policy, TopicFilter: f.TopicFilter,
			Exact: c.e.exactTranslation}, mapping, store)
		c.syncsNext = max(ls.LastOffset+1, 0)
		// The read may already hold some of the syncs written meanwhile: add only the newer
		// ones (an older sync would read as a rewind and reset the partition's history).
		var pending []mm2wire.OffsetSync
		for _, s := range c.pending {
			if l, _, ok := mapping.Latest(offsetsync.TP{Topic: s.Topic, Partition: s.Partition}); !ok || s.UpstreamOffset > l.Upstream {
				pending = append(pending, s)
			}
		}
		c.pending, c.loaded = nil, true
		c.mapping.MarkLoaded()
		c.loadMu.Unlock()
		c.addSyncsLocked(ctx, pending)
		c.writeMu.Unlock()
		return true
	}
}

func (c *checkpointer) markReady() { c.readyOnce.Do(func() { close(c.ready) }) }

func (c *checkpointer) run(ctx context.Context) {
	defer close(c.done)
	defer c.markReady()
	if !c.load(ctx) {
		return
	}
	f := c.e.flow
	// Start following __consumer_offsets before listing, so no commit falls between the two.
	// On a fresh cluster the topic appears with the first group commit: keep trying (polling
	// meanwhile); where the principal may not read it, polling is all there is.
	tail, tailErr := c.openTail(ctx)
	if tailErr != nil {
		c.e.warnLimited("checkpoint-tail", tailErr, fmt.Sprintf("cannot follow __consumer_offsets on %s yet (%v): polling group offsets every %s meanwhile", f.Source, tailErr, f.CheckpointPollInterval))
	}
	defer func() {
		if tail != nil {
			tail.Close()
		}
	}()
	var syncsTail cluster.Reader
	defer func() {
		if syncsTail != nil {
			syncsTail.Close()
		}
	}()
	// Workers: only the leader writes checkpoints and syncs group offsets; the others keep
	// their mapping current and wait.
	workers := f.Workers
	if workers && !c.e.leads() {
		c.markReady() // a worker that does not lead writes no checkpoints
	}
	for workers && !c.e.leads() && ctx.Err() == nil {
		syncsTail = c.followSyncs(ctx, syncsTail, false)
	}
	c.pollAll(ctx)
	c.markReady()
	nextPoll := time.Now().Add(f.CheckpointPollInterval)
	nextSync := time.Now().Add(f.SyncGroupOffsetsInterval)
	nextTail := time.Now().Add(5 * time.Second)
	nextMaps, mapSeen := time.Now().Add(time.Second), map[*pstate]int64{}
	if tail != nil {
		nextPoll = time.Now().Add(time.Minute) // a periodic full listing catches anything missed
	}
	for ctx.Err() == nil {
		if workers {
			syncsTail = c.followSyncs(ctx, syncsTail, true)
			if !c.e.leads() {
				for !c.e.leads() && ctx.Err() == nil {
					syncsTail = c.followSyncs(ctx, syncsTail, false)
				}
				c.pollAll(ctx) // leading again: every group's offsets afresh
				continue
			}
		}
		if tail == nil && time.Now().After(nextTail) {
			if tail, tailErr = c.openTail(ctx); tail != nil {
				c.pollAll(ctx) // commits made before the tail started
				nextPoll = time.Now().Add(time.Minute)
			}
			nextTail = time.Now().Add(5 * time.Second)
		}
		if tail != nil {
			recs, err := tail.Poll(ctx, 5000, 200*time.Millisecond)
			if err != nil && ctx.Err() == nil {
				c.e.warnLimited("checkpoint-tail", err, fmt.Sprintf("following __consumer_offsets on %s: %v", f.Source, err))
			}
			c.applyCommits(ctx, recs)
		} else {
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
		now := time.Now()
		if now.After(nextPoll) {
			c.pollAll(ctx)
			if tail != nil {
				nextPoll = now.Add(time.Minute)
			} else {
				nextPoll = now.Add(f.CheckpointPollInterval)
			}
		}
		if f.SyncGroupOffsets && now.After(nextSync) {
			c.syncGroups(ctx)
			nextSync = now.Add(f.SyncGroupOffsetsInterval)
		}
		if now.After(nextMaps) {
			c.reevaluateMoved(ctx, mapSeen)
			nextMaps = now.Add(min(f.CheckpointPollInterval, f.SyncPromoteInterval*5))
		}
	}
}

// reevaluateMoved re-evaluates the groups on every partition whose offset map moved since the
// last pass: a group ahead of replication gets its checkpoint moved as the records before its
// position are copied (MM2 moves it with each new offset sync, which may be far apart on a slow
// flow; the map moves with every acknowledgement).
func (c *checkpointer) reevaluateMoved(ctx context.Context, seen map[*pstate]int64) {
	c.e.partsMu.RLock()
	parts := c.e.allParts()
	c.e.partsMu.RUnlock()
	var moved []checkpoint.TP
	for _, ps := range parts {
		if last := ps.omapLast.Load(); last >= 0 && seen[ps] != last {
			seen[ps] = last
			moved = append(moved, checkpoint.TP{Topic: ps.p.SrcTopic, Partition: ps.p.Partition})
		}
	}
	if len(moved) == 0 {
		return
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	var ds []checkpoint.Decision
	for _, tp := range moved {
		ds = append(ds, c.tracker.Reevaluate(tp)...)
	}
	c.emit(ctx, ds)
}

func (c *checkpointer) openTail(ctx context.Context) (*rdkafka.Consumer, error) {
	f := c.e.flow
	ts, err := c.e.src.ListTopics(ctx)
	if err != nil {
		return nil, err
	}
	n := ts["__consumer_offsets"].Partitions
	if n == 0 {
		return nil, errors.New("__consumer_offsets is not visible")
	}
	tps := make([]rdkafka.TP, n)
	for p := range tps {
		tps[p] = rdkafka.TP{Topic: "__consumer_offsets", Partition: int32(p)}
	}
	ends, err := c.e.src.ListOffsets(ctx, tps, rdkafka.Latest)
	if err != nil {
		return nil, err
	}
	cons, err := rdkafka.NewConsumer("cluster "+f.Source, f.SourceConsumer, c.e.clientOpts(c.e.srcW))
	if err != nil {
		return nil, err
	}
	start := map[rdkafka.TP]int64{}
	for _, tp := range tps {
		start[tp] = ends[tp].Offset
	}
	if err := cons.Assign(start); err != nil {
		cons.Close()
		return nil, err
	}
	return cons, nil
}

func (c *checkpointer) applyCommits(ctx context.Context, recs []rdkafka.Record) {
	if len(recs) == 0 {
		return
	}
	f := c.e.flow
	byGroup := map[string][]checkpoint.SourceOffset{}
	var order []string
	for _, r := range recs {
		cm, err := consumeroffsets.Decode(r.Key, r.Value)
		if err != nil || !f.GroupFilter(cm.Group) {
			continue
		}
		if _, seen := byGroup[cm.Group]; !seen {
			order = append(order, cm.Group)
		}
		off := cm.Offset
		if cm.Deleted {
			off = -1
		}
		byGroup[cm.Group] = append(byGroup[cm.Group], checkpoint.SourceOffset{Topic: cm.Topic, Partition: cm.Partition, Offset: off, Metadata: cm.Metadata})
	}
	for _, g := range order {
		c.update(ctx, g, byGroup[g], false)
	}
}

// pollAll lists the source groups that pass the group filter and their committed offsets.
func (c *checkpointer) pollAll(ctx context.Context) {
	f := c.e.flow
	pctx, cancel := context.WithTimeout(ctx, f.AdminTimeout)
	defer cancel()
	groups, err := c.e.src.ListGroups(pctx)
	if err != nil {
		if ctx.Err() == nil {
			c.e.warnLimited("checkpoint-groups", err, fmt.Sprintf("listing groups on %s: %v", f.Source, err))
		}
		return
	}
	for _, g := range groups {
		if !f.GroupFilter(g.ID) {
			continue
		}
		offs, err := c.e.src.ListGroupOffsets(pctx, g.ID)
		if err != nil {
			continue
		}
		var list []checkpoint.SourceOffset
		for tp, om := range offs {
			list = append(list, checkpoint.SourceOffset{Topic: tp.Topic, Partition: tp.Partition, Offset: om.Offset, Metadata: om.Metadata})
		}
		c.update(ctx, g.ID, list, true)
	}
}

// syncGroups commits checkpointed offsets to groups that are idle on T, forward only, and
// reports the groups skipped because they are active there.
func (c *checkpointer) syncGroups(ctx context.Context) {
	f := c.e.flow
	sctx, cancel := context.WithTimeout(ctx, f.AdminTimeout)
	defer cancel()
	groups := c.store.Groups()
	if len(groups) == 0 {
		return
	}
	sort.Strings(groups)
	descs, err := c.e.tgt.DescribeGroups(sctx, groups...)
	if err != nil {
		c.e.warnLimited("groupsync", err, fmt.Sprintf("group offset sync: describing groups on %s: %v", f.Target, err))
		return
	}
	targets := map[string]checkpoint.TargetGroup{}
	for _, d := range descs {
		tg := checkpoint.TargetGroup{Group: d.ID, State: d.State, Members: d.Members, Err: d.Err}
		if d.Err == nil && d.Members == 0 {
			if offs, err := c.e.tgt.ListGroupOffsets(sctx, d.ID); err == nil {
				tg.Offsets = map[checkpoint.TP]int64{}
				for tp, om := range offs {
					tg.Offsets[checkpoint.TP{Topic: tp.Topic, Partition: tp.Partition}] = om.Offset
				}
			}
		}
		targets[d.ID] = tg
	}
	for _, p := range checkpoint.PlanGroupSync(c.store, groups, targets, nil) {
		if p.Skipped == checkpoint.SkipActive {
			if _, already := c.skipped.Swap(p.Group, p.Detail); !already {
				c.e.emit(Event{Type: EvWarning, Message: p.Detail + " (its offsets are synced once it has no members on " + f.Target + ")"})
			}
			continue
		}
		c.skipped.Delete(p.Group)
		if len(p.Commits) == 0 {
			continue
		}
		offs := map[rdkafka.TP]rdkafka.OffsetMeta{}
		for _, cm := range p.Commits {
			offs[rdkafka.TP{Topic: cm.TP.Topic, Partition: cm.TP.Partition}] = rdkafka.OffsetMeta{Offset: cm.Offset, Metadata: cm.Metadata}
		}
		if err := c.e.tgt.AlterGroupOffsets(sctx, p.Group, offs); err != nil {
			c.e.warnLimited("groupsync-"+p.Group, err, fmt.Sprintf("group offset sync of %s on %s: %v", p.Group, f.Target, err))
			continue
		}
		c.e.emit(Event{Type: EvGroupSynced, Message: fmt.Sprintf("committed %d translated offset(s) of group %s on %s", len(p.Commits), p.Group, f.Target), Count: int64(len(p.Commits))})
	}
}

// followSyncs (workers) reads the offset syncs every worker wrote since the last call into the
// mapping, opening the reader at syncsNext when r is nil; emit writes the checkpoints they
// allow (the leader). It returns the reader to use next time (nil after an error). Without new
// syncs it waits up to 200 ms.
func (c *checkpointer) followSyncs(ctx context.Context, r cluster.Reader, emit bool) cluster.Reader {
	if r == nil {
		var err error
		if r, err = c.syncsCluster.NewReader(); err == nil {
			err = r.Assign(map[cluster.TP]int64{{Topic: c.syncsTopic, Partition: 0}: c.syncsNext})
		}
		if err != nil {
			if r != nil {
				r.Close()
			}
			c.e.warnLimited("checkpoint-syncs", err, fmt.Sprintf("following %s: %v", c.syncsTopic, err))
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			return nil
		}
	}
	recs, err := r.Poll(ctx, 5000, 200*time.Millisecond)
	if err != nil && ctx.Err() == nil {
		c.e.warnLimited("checkpoint-syncs", err, fmt.Sprintf("following %s: %v", c.syncsTopic, err))
	}
	if len(recs) == 0 {
		return r
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	now := time.Now()
	var ds []checkpoint.Decision
	for _, rec := range recs {
		c.syncsNext = rec.Offset + 1
		s, err := mm2wire.DecodeOffsetSync(rec.Key, rec.Value)
		if err != nil {
			continue
		}
		_, d := c.tracker.AddSync(offsetsync.TP{Topic: s.Topic, Partition: s.Partition}, offsetsync.Sync{Upstream: s.UpstreamOffset, Downstream: s.DownstreamOffset}, now)
		ds = append(ds, d...)
	}
	if emit {
		c.emit(ctx, ds)
	}
	return r
}

// exactTranslation translates a group's source offset g from the partition's live offset map
// (the checkpoints' Exact): where the copied records landed, not the nearest older offset sync.
// Not known (ok false) for a partition this process does not copy (workers: another worker's)
// or a position before its map's history: the syncs translate those.
func (e *engine) exactTranslation(tp checkpoint.TP, g int64) (offsetsync.Translation, bool) {
	var ps *pstate
	e.partsMu.RLock()
	for _, p := range e.parts[tp.Topic] {
		if p.p.Partition == tp.Partition {
			ps = p
			break
		}
	}
	e.partsMu.RUnlock()
	if ps == nil || ps.nomap {
		return offsetsync.Translation{}, false
	}
	m, _ := ps.mapNow()
	tr := m.Translate(g, -1)
	if !tr.Known {
		return offsetsync.Translation{}, false
	}
	return offsetsync.Translation{Status: offsetsync.Translated, Downstream: tr.Target, Exact: tr.Exact, Bound: tr.Rereads}, true
}
