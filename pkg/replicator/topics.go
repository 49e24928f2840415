package replicator

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/metasync"
	"github.com/kmmproject/kmm/pkg/offsetmap"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// pstate is one replicated partition's state. acked and the counters are written by the
// delivery goroutine and read by the control loop; the offset-sync fields belong to the
// delivery goroutine; stored belongs to the control loop.
type pstate struct {
	p *rdkafka.CopyPart

	acked                atomic.Int64 // last source offset acknowledged by T (-1: none)
	records, bytes, gaps atomic.Int64
	lastAckMs            atomic.Int64 // wall clock of the last acknowledgement (coarse)
	latSumMs, latMaxMs   atomic.Int64 // replication latency: ack time − record timestamp
	srcEnd               atomic.Int64 // source end offset, refreshed by the control loop (-1 unknown)
	srcEndAtMs           atomic.Int64 // when srcEnd was last confirmed (unix ms; 0 never)

	stored atomic.Int64 // last position written to the offsets topic (control loop writes)

	syncStarted            bool
	prevUp, prevDown       int64
	lastSyncDown           int64
	delayedUp, delayedDown int64
	hasDelayed             bool

	// txnAcks: exactly-once mode, the acknowledged records of the open transaction, waiting
	// for its commit before their offset syncs (delivery goroutine; eos.go).
	txnAcks []txnAck

	// The partition's offset map (pkg/offsetmap: where every copied record landed). omap is the
	// delivery goroutine's own; a new segment publishes a copy in omapSnap before omapLast
	// moves, and omapLast is the source offset of the newest record in it (-1: none), so that
	// a reader on another goroutine (mapNow) gets a map consistent with itself.
	omap       offsetmap.Map
	omapSnap   atomic.Pointer[offsetmap.Map]
	omapLast   atomic.Int64
	omapStored atomic.Int64 // omapLast as of the map record last written to the target (-1: none)
	omapLoaded bool         // the map was read from the target at start (its history is whole)
	nomap      bool         // kmm.offset.map.enabled = false: no map is kept
}

// mapAdd records n records copied from source offset src on at target offset dst (delivery
// goroutine). A first segment at a target offset past 0 starts on a partition whose earlier
// copies this map does not hold (another replicator's, MM2's): it is marked trimmed.
func (ps *pstate) mapAdd(src, dst, n int64) {
	if dst < 0 || n <= 0 || ps.nomap {
		return
	}
	fresh := len(ps.omap.Segs) == 0
	grew := ps.omap.Add(src, dst, n)
	if grew && fresh && dst > 0 && !ps.omapLoaded {
		ps.omap.Trimmed = true
	}
	// Target records before the newest segment that the map does not hold (a crash's
	// unacknowledged copies) came from source offsets below any source end seen since the
	// restart: bounding them lets translation choose the newest copy (no needless re-reads).
	if ps.omap.BoundGap(ps.srcEnd.Load()) || grew {
		ps.omapSnap.Store(ps.omap.Clone())
	}
	ps.omapLast.Store(src + n - 1)
}

// mapNow is the partition's offset map as of the newest record acknowledged (any goroutine),
// and that record's source offset (-1: nothing copied).
func (ps *pstate) mapNow() (*offsetmap.Map, int64) {
	for {
		s1 := ps.omapSnap.Load()
		last := ps.omapLast.Load()
		if s2 := ps.omapSnap.Load(); s1 != s2 {
			continue // a segment began meanwhile: read again
		}
		if s1 == nil {
			return &offsetmap.Map{}, -1
		}
		m := s1.Clone()
		if k := len(m.Segs) - 1; k >= 0 && last >= m.Segs[k].SrcEnd() {
			grow := last + 1 - m.Segs[k].SrcEnd()
			m.Segs[k].N += grow
			m.Segs[k].Span += grow
		}
		return m, last
	}
}

// loadMap starts the partition's map from the one stored on the target (nil: none stored).
func (ps *pstate) loadMap(m *offsetmap.Map) {
	if m == nil {
		return
	}
	ps.omap = *m.Clone()
	ps.omapLoaded = true
	ps.omapSnap.Store(m.Clone())
	last := m.Next() - 1
	ps.omapLast.Store(last)
	ps.omapStored.Store(last)
}

func newPState(src, remote string, part int32) *pstate {
	ps := &pstate{prevUp: -1, prevDown: -1, lastSyncDown: -1}
	ps.stored.Store(-1)
	ps.p = &rdkafka.CopyPart{SrcTopic: src, DstTopic: remote, Partition: part, State: ps}
	ps.acked.Store(-1)
	ps.srcEnd.Store(-1)
	ps.omapLast.Store(-1)
	ps.omapStored.Store(-1)
	return ps
}

// refreshTopics discovers selected source topics and partitions, creates or grows their remote
// topics on the target, and starts copying partitions not yet copied. It returns how many
// partitions it started.
func (e *engine) refreshTopics(ctx context.Context) (int, error) {
	f := e.flow
	parent := ctx // the wait for new remote topics is bounded by its own progress, not admin.timeout.ms
	ctx, cancel := context.WithTimeout(ctx, f.AdminTimeout)
	defer cancel()
	srcTopics, err := e.src.ListTopics(ctx)
	if err != nil {
		return 0, err
	}
	tgtTopics, err := e.tgt.ListTopics(ctx)
	if err != nil {
		return 0, err
	}
	var selected []string
	for t := range srcTopics {
		if f.Selected(t) {
			selected = append(selected, t)
		}
	}
	sort.Strings(selected)

	var create []string
	for _, t := range selected {
		remote := f.RemoteTopic(t)
		if _, ok := tgtTopics[remote]; !ok {
			create = append(create, t)
		}
	}
	if len(create) > 0 {
		cfgs, err := e.src.DescribeTopicConfigs(ctx, create...)
		if err != nil {
			return 0, err
		}
		specs := make([]rdkafka.NewTopic, 0, len(create))
		for _, t := range create {
			specs = append(specs, rdkafka.NewTopic{Name: f.RemoteTopic(t), Partitions: srcTopics[t].Partitions,
				RF: f.ReplicationFactor, Configs: metasync.CreateConfigs(f, cfgs[t])})
		}
		res, err := e.tgt.CreateTopics(ctx, specs)
		if err != nil {
			return 0, err
		}
		for _, s := range specs {
			if err := res[s.Name]; err != nil && !rdkafka.ErrTopicExists(err) {
				hint := "check replication.factor (the target needs that many brokers; -1 uses the broker default) and that kmm may create topics on the target"
				if rdkafka.IsBatchTooLarge(err) {
					hint = rdkafka.BatchTooLargeHint
				}
				return 0, kerr.WithHint(fmt.Errorf("flow %s: creating %s on %s: %w", f.Name(), s.Name, f.Target, err), hint)
			}
			e.emit(Event{Type: EvTopicCreated, Remote: s.Name, Parts: s.Partitions, Message: fmt.Sprintf("created %s on %s with %d partitions", s.Name, f.Target, s.Partitions)})
		}
	}
	// Every topic grown first, then one wait for all remote topics, then all new partitions
	// added at once: one metadata request, one source end read and one assignment per
	// copier however many topics start (per topic, a flow of 100 topics x 100 partitions took
	// 51 s from creating its remote topics to copying).
	ready := map[string]int{} // remote topic -> partitions it must show
	for _, t := range selected {
		remote := f.RemoteTopic(t)
		n := srcTopics[t].Partitions
		if have := tgtTopics[remote].Partitions; have > 0 && have < n {
			if err := e.tgt.CreatePartitions(ctx, remote, n); err != nil {
				e.warnLimited("grow-"+remote, err, fmt.Sprintf("growing %s on %s to %d partitions: %v", remote, f.Target, n, err))
				continue
			}
			e.emit(Event{Type: EvPartitionsGrew, Remote: remote, Parts: n, Message: fmt.Sprintf("%s on %s grown from %d to %d partitions", remote, f.Target, have, n)})
		}
		if e.workers != nil || len(e.parts[t]) < n {
			ready[remote] = n
		}
	}
	if len(ready) == 0 && e.workers == nil {
		return 0, nil
	}
	if err := cluster.WaitAllPartitions(parent, e.tgt, ready); err != nil {
		return 0, err
	}
	if e.workers != nil {
		// Workers: the group assigns the partitions (takeOver); here only the remote topics are
		// made ready and the topics join the group's subscription.
		shared := map[string]int{} // selected topic -> partitions
		for _, t := range selected {
			if n, ok := ready[f.RemoteTopic(t)]; ok {
				shared[t] = n
			}
		}
		return 0, e.workers.subscribe(shared)
	}
	return e.startPartitions(ctx, selected, srcTopics, ready)
}

// startPartitions starts copying the partitions of the selected topics not copied yet (their
// remote topics are ready), all at once, and returns how many it started.
func (e *engine) startPartitions(ctx context.Context, selected []string, srcTopics map[string]rdkafka.TopicInfo, ready map[string]int) (int, error) {
	per := make([][]*rdkafka.CopyPart, len(e.copiers))
	starts := make([][]int64, len(e.copiers))
	var newParts []*pstate
	var grew []string
	e.assignPipelines(selected, srcTopics, ready)
	for _, t := range selected {
		remote := e.flow.RemoteTopic(t)
		if _, ok := ready[remote]; !ok {
			continue
		}
		n := srcTopics[t].Partitions
		have := len(e.parts[t])
		e.partsMu.Lock()
		e.remote[t] = remote
		e.partsMu.Unlock()
		for p := have; p < n; p++ {
			ps := newPState(t, remote, int32(p))
			ps.nomap = e.flow.NoOffsetMap
			e.partsMu.Lock()
			e.parts[t] = append(e.parts[t], ps)
			e.partsMu.Unlock()
			start := int64(-1)
			ps.loadMap(e.resumeMaps[rdkafka.TP{Topic: t, Partition: int32(p)}])
			if off, ok := e.resume[rdkafka.TP{Topic: t, Partition: int32(p)}]; ok && off >= 0 {
				start = off + 1
				ps.stored.Store(off)
				ps.acked.Store(off)
			}
			i, whole := e.topicCop[t]
			if !whole {
				i = e.nextCop % len(e.copiers)
				e.nextCop++
			}
			e.copParts[i]++
			per[i] = append(per[i], ps.p)
			starts[i] = append(starts[i], start)
			newParts = append(newParts, ps)
		}
		if have > 0 {
			grew = append(grew, t)
		}
	}
	e.readEndsBeforeCopy(ctx, newParts)
	for i, c := range e.copiers {
		if len(per[i]) > 0 {
			if err := c.Add(per[i], starts[i]); err != nil {
				return len(newParts), err
			}
		}
	}
	for _, t := range grew {
		n := srcTopics[t].Partitions
		e.emit(Event{Type: EvTopicAdded, Topic: t, Remote: e.remote[t], Parts: n, Message: fmt.Sprintf("now copying %d partitions of %s", n, t)})
	}
	return len(newParts), nil
}

// AffinePartitions is the flow size (source partitions) from which each topic is copied by one
// pipeline instead of its partitions being spread round robin over all of them. librdkafka
// keeps state for every partition of every topic a client knows: 100 topics x 100 partitions
// cost a producer ~25 MB and a consumer assigned them all ~37 MB, and still ~21 and ~29 MB
// when it writes or reads only half of each topic (scripts/bench/notes.md), so spread
// partitions put every topic in every pipeline's two clients; whole topics do not.
// Smaller flows keep the round robin, which balances a few busy partitions best.
const AffinePartitions = 1000

// assignPipelines places the ready topics of a large flow that have no pipeline yet, whole,
// each on the pipeline with the fewest partitions (the largest topics first); a topic placed
// keeps its pipeline when it grows. Below AffinePartitions, or with fewer topics than twice
// the pipelines (a whole topic each would leave them unbalanced), nothing is placed and the
// partitions go round robin.
func (e *engine) assignPipelines(selected []string, srcTopics map[string]rdkafka.TopicInfo, ready map[string]int) {
	if len(e.copParts) != len(e.copiers) {
		e.copParts = make([]int, len(e.copiers))
	}
	if e.topicCop == nil {
		e.topicCop = map[string]int{}
	}
	var fresh []string
	total, topics := 0, 0
	for _, t := range selected {
		if _, ok := ready[e.flow.RemoteTopic(t)]; !ok {
			continue
		}
		total += srcTopics[t].Partitions
		topics++
		if _, placed := e.topicCop[t]; !placed && len(e.parts[t]) == 0 {
			fresh = append(fresh, t)
		}
	}
	if len(e.copiers) < 2 || total < AffinePartitions || topics < 2*len(e.copiers) {
		return
	}
	sort.SliceStable(fresh, func(i, j int) bool { return srcTopics[fresh[i]].Partitions > srcTopics[fresh[j]].Partitions })
	load := slices.Clone(e.copParts)
	for _, t := range fresh {
		best := 0
		for i := range load {
			if load[i] < load[best] {
				best = i
			}
		}
		e.topicCop[t] = best
		load[best] += srcTopics[t].Partitions
	}
}

// replicatedTopics returns the source topics the flow replicates, sorted.
func (e *engine) replicatedTopics() []string {
	topics := make([]string, 0, len(e.remote))
	for t := range e.remote {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	return topics
}

// syncConfigs applies MM2's incremental topic config sync (KIP-894 rules, metasync.ConfigOps)
// to every replicated topic: SET non-default entries, DELETE source defaults (SET with
// use.defaults.from=source), never touch excluded properties.
func (e *engine) syncConfigs(ctx context.Context) {
	f := e.flow
	ctx, cancel := context.WithTimeout(ctx, f.AdminTimeout)
	defer cancel()
	topics := e.replicatedTopics()
	if len(topics) == 0 {
		return
	}
	cfgs, err := e.src.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		e.warnLimited("configsync", err, fmt.Sprintf("config sync: describing source configs: %v", err))
		return
	}
	ops := map[string][]rdkafka.ConfigOp{}
	for _, t := range topics {
		if o := metasync.ConfigOps(f, cfgs[t]); len(o) > 0 {
			ops[e.remote[t]] = o
		}
	}
	if err := e.tgt.IncrementalAlterTopicConfigs(ctx, ops); err != nil {
		e.warnLimited("configsync", err, fmt.Sprintf("config sync: %v", err))
		return
	}
	e.emit(Event{Type: EvConfigsSynced, Topics: len(ops)})
}

// syncACLs copies LITERAL topic ACLs of replicated topics to their remote topics
// (metasync.DesiredACLs): ALLOW WRITE is dropped (only kmm writes remote topics), ALLOW ALL
// becomes ALLOW READ, the rest is copied. Additive only: nothing is ever removed on the target.
func (e *engine) syncACLs(ctx context.Context) {
	f := e.flow
	ctx, cancel := context.WithTimeout(ctx, f.AdminTimeout)
	defer cancel()
	topics := e.replicatedTopics()
	if len(topics) == 0 {
		return
	}
	// The ACLs of the replicated topics only (MM2 lists every topic ACL of the source and
	// filters the names): asking a cluster for all its ACLs can crash librdkafka
	// (rdkafka.Admin.DescribeTopicACLs); an ACL of a topic not replicated yet is synced once it is.
	acls, err := e.src.DescribeTopicACLs(ctx, topics)
	if err != nil {
		e.warnLimited("aclsync", err, fmt.Sprintf("ACL sync: %v", err))
		return
	}
	out := metasync.DesiredACLs(f, acls, func(t string) bool { _, ok := e.remote[t]; return ok })
	if len(out) == 0 {
		return
	}
	if err := e.tgt.CreateACLs(ctx, out); err != nil {
		e.warnLimited("aclsync", err, fmt.Sprintf("ACL sync: %v", err))
		return
	}
	e.emit(Event{Type: EvACLsSynced, Count: int64(len(out))})
}
