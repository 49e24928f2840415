package replicator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/mm2read"
	"github.com/kmmproject/kmm/pkg/offsetmap"
	"github.com/kmmproject/kmm/pkg/plan"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// Workers (kmm.workers.enabled): every `kmm replicate` of the flow joins the flow's consumer
// group on the source (Flow.WorkersGroup) with a paused membership consumer; the group's
// cooperative-sticky assignment says which source partitions this process copies. The copiers
// stay in assign mode: an assignment adds partitions to them, starting from the progress stored
// in the offsets topic (read afresh at every assignment; the group's own offsets are never
// committed nor read); a revocation takes them out of the copiers, waits until their records in
// flight are acknowledged, stores their positions, and only then lets the group hand them to
// another worker. A worker thrown out of the group (session timeout: "lost") stops copying them
// and stores nothing. The singleton duties (topic config and ACL sync, checkpoints and group
// offset sync, heartbeats, the source-ends snapshot) run only on the leader: the member of
// Flow.LeaderGroup on the target that holds partition 0 of the one-partition state topic.

// revokeDrain bounds the wait for a revoked partition's records in flight before its position
// is stored (records not acknowledged by then are copied again by the next owner).
const revokeDrain = 20 * time.Second

type workers struct {
	e      *engine
	member *rdkafka.Membership
	leader *rdkafka.Membership
	lead   atomic.Bool
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	ends     map[rdkafka.TP]int64 // leader: every selected source partition's end offset
	srcParts map[string]int       // selected source topic -> partitions
	assigned atomic.Int64         // partitions taken over since start
	revoked  atomic.Int64
	// stopBy (unix ms, 0 unset) bounds the revocations of a stop: the drain's budget.
	stopBy atomic.Int64
}

// memberHandler and leaderHandler adapt the two groups' callbacks.
type memberHandler struct{ w *workers }
type leaderHandler struct{ w *workers }

func (h memberHandler) Assigned(tps []rdkafka.TP) {
	h.w.assigned.Add(int64(len(tps)))
	h.w.e.takeOver(tps)
}
func (h memberHandler) Revoked(tps []rdkafka.TP, lost bool) {
	h.w.revoked.Add(int64(len(tps)))
	h.w.e.giveUp(tps, lost)
}
func (h leaderHandler) Assigned(tps []rdkafka.TP)           { h.w.setLead(true) }
func (h leaderHandler) Revoked(tps []rdkafka.TP, lost bool) { h.w.setLead(false) }

func (w *workers) setLead(on bool) {
	if w.lead.Swap(on) == on {
		return
	}
	msg := "this worker now leads the flow: it runs topic config and ACL sync, checkpoints, group offset sync, heartbeats and the source-ends snapshot"
	if !on {
		msg = "this worker no longer leads the flow: another worker runs the singleton duties"
	}
	w.e.emit(Event{Type: EvWorkerLeader, Message: msg})
}

// leads reports whether this process runs the flow's singleton duties: always without workers.
func (e *engine) leads() bool { return e.workers == nil || e.workers.lead.Load() }

// startWorkers joins both groups. Call after the copiers exist and refreshTopics has made the
// remote topics (it subscribes the member group to the selected topics).
func (e *engine) startWorkers(ctx context.Context) error {
	f := e.flow
	host, _ := os.Hostname()
	w := &workers{e: e, ends: map[rdkafka.TP]int64{}, srcParts: map[string]int{}}
	w.ctx, w.cancel = context.WithCancel(context.WithoutCancel(ctx))
	var err error
	name := fmt.Sprintf("%s worker %s-%d", f.Name(), host, os.Getpid())
	if w.member, err = rdkafka.NewMembership(name, f.WorkersGroup(), f.SourceConsumer, memberHandler{w}, e.clientOpts(e.srcW)); err != nil {
		return err
	}
	if w.leader, err = rdkafka.NewMembership(name+" (leader election)", f.LeaderGroup(), f.TargetConsumer, leaderHandler{w}, e.clientOpts(e.tgtW)); err != nil {
		w.member.Close()
		return err
	}
	e.workers = w
	if err := w.leader.Subscribe([]string{plan.StateTopic}); err != nil {
		return err
	}
	for _, m := range []*rdkafka.Membership{w.member, w.leader} {
		w.wg.Add(1)
		go func(m *rdkafka.Membership) { defer w.wg.Done(); m.Run(w.ctx) }(m)
	}
	return nil
}

// subscribe (re)subscribes the member group to the selected topics whose remote topics exist.
func (w *workers) subscribe(parts map[string]int) error {
	w.mu.Lock()
	w.srcParts = parts
	w.mu.Unlock()
	topics := make([]string, 0, len(parts))
	for t := range parts {
		topics = append(topics, t)
	}
	return w.member.Subscribe(topics)
}

// stop leaves both groups: the member's partitions are revoked (drained, positions stored)
// first, then leadership is given up. It returns when both consumers are closed.
func (w *workers) stop() {
	if w == nil {
		return
	}
	w.cancel()
	w.member.Close()
	w.leader.Close()
	w.wg.Wait()
}

// takeOver starts copying partitions the group assigned to this worker, from the positions
// stored in the offsets topic (read now: the previous owner stored them before giving them up).
func (e *engine) takeOver(tps []rdkafka.TP) {
	f := e.flow
	begin := time.Now()
	var stored map[cluster.TP]int64
	var maps map[cluster.TP]*offsetmap.Map
	for attempt := 0; ; attempt++ {
		ctx, cancel := context.WithTimeout(e.workers.ctx, 30*time.Second)
		var err error
		stored, err = mm2read.ReadSourcePositions(ctx, e.tgt, f.OffsetsTopic, f.SourceAlias)
		if err == nil {
			if maps, err = mm2read.ReadOffsetMaps(ctx, e.tgt, f.OffsetMapTopic()); errors.Is(err, mm2read.ErrNoTopic) {
				maps, err = nil, nil
			}
		}
		cancel()
		if err == nil {
			break
		}
		if e.workers.ctx.Err() != nil {
			return
		}
		// Never start without the stored positions (the start would be auto.offset.reset's):
		// retry; the group waits (max.poll.interval.ms) and the partitions stay idle meanwhile.
		e.warnLimited("takeover", err, fmt.Sprintf("reading the stored positions in %s on %s to take over %d partition(s): %v (retrying)", f.OffsetsTopic, f.Target, len(tps), err))
		time.Sleep(time.Second)
	}
	var foreign []string
	kept := tps[:0:0]
	for _, tp := range tps {
		if f.Selected(tp.Topic) {
			kept = append(kept, tp)
		} else {
			foreign = append(foreign, fmt.Sprintf("%s[%d]", tp.Topic, tp.Partition))
		}
	}
	if len(foreign) > 0 {
		// Another worker subscribed the group to topics this one does not select: the workers
		// run different files. These partitions stay uncopied while this worker holds them.
		e.emit(Event{Type: EvWarning, Message: fmt.Sprintf("group %s assigned partitions of topics this worker's flow does not select: %s; not copied: run every worker of the flow with the same file",
			f.WorkersGroup(), strings.Join(foreign, " "))})
	}
	tps = kept
	if len(tps) == 0 {
		return
	}
	per := make([][]*rdkafka.CopyPart, len(e.copiers))
	starts := make([][]int64, len(e.copiers))
	var names []string
	var added []*pstate
	e.partsMu.Lock()
	for _, tp := range tps {
		remote := f.RemoteTopic(tp.Topic)
		ps := newPState(tp.Topic, remote, tp.Partition)
		added = append(added, ps)
		ps.nomap = f.NoOffsetMap
		ps.loadMap(maps[tp])
		start := int64(-1)
		if off, ok := stored[tp]; ok && off >= 0 {
			start = off + 1
			ps.stored.Store(off)
			ps.acked.Store(off)
		}
		e.parts[tp.Topic] = append(e.parts[tp.Topic], ps)
		e.remote[tp.Topic] = remote
		i := e.nextCop % len(e.copiers)
		e.nextCop++
		per[i] = append(per[i], ps.p)
		starts[i] = append(starts[i], start)
		names = append(names, fmt.Sprintf("%s[%d]@%d", tp.Topic, tp.Partition, start))
	}
	e.partsMu.Unlock()
	e.readEndsBeforeCopy(e.workers.ctx, added)
	for i, c := range e.copiers {
		if len(per[i]) > 0 {
			if err := c.Add(per[i], starts[i]); err != nil {
				e.warnLimited("takeover-add", err, fmt.Sprintf("starting to copy %d partition(s): %v", len(per[i]), err))
			}
		}
	}
	sort.Strings(names)
	e.emit(Event{Type: EvWorkerAssigned, Parts: len(tps), Message: fmt.Sprintf("group %s assigned %d partition(s) to this worker in %s, copying from the stored positions (topic[partition]@next offset, -1: auto.offset.reset): %s",
		f.WorkersGroup(), len(tps), roundDuration(time.Since(begin)), strings.Join(names, " "))})
}

// giveUp stops copying partitions the group revoked. Unless the assignment was lost, their
// records in flight are awaited and their positions stored before it returns (and only then
// does the group hand them to another worker). A lost assignment (this worker was thrown out
// of the group) stores nothing: another worker may be copying them already.
func (e *engine) giveUp(tps []rdkafka.TP, lost bool) {
	f := e.flow
	begin := time.Now()
	wait := revokeDrain
	if by := e.workers.stopBy.Load(); by > 0 {
		wait = min(wait, max(time.Until(time.UnixMilli(by)), 0))
	}
	if lost {
		wait = 0
	}
	var removed []*pstate
	drained := true
	for _, c := range e.copiers {
		parts, ok := c.Remove(tps, wait)
		drained = drained && ok
		for _, p := range parts {
			removed = append(removed, p.State.(*pstate))
		}
	}
	var storeErr error
	if !lost && len(removed) > 0 {
		ctx, cancel := context.WithTimeout(e.workers.ctx, commitTimeout)
		if by := e.workers.stopBy.Load(); by > 0 { // stopping: the drain's own bound applies
			cancel()
			ctx, cancel = context.WithDeadline(context.Background(), time.UnixMilli(by).Add(time.Second))
		}
		storeErr = e.progress.store(ctx, removed)
		cancel()
	}
	gone := map[*pstate]bool{}
	for _, ps := range removed {
		gone[ps] = true
		e.retiredRecs.Add(ps.records.Load())
		e.retiredBytes.Add(ps.bytes.Load())
	}
	e.partsMu.Lock()
	for t, l := range e.parts {
		kept := l[:0:0]
		for _, ps := range l {
			if !gone[ps] {
				kept = append(kept, ps)
			}
		}
		if len(kept) == 0 {
			delete(e.parts, t)
		} else {
			e.parts[t] = kept
		}
	}
	e.partsMu.Unlock()
	var names []string
	for _, ps := range removed {
		names = append(names, fmt.Sprintf("%s[%d]@%d", ps.p.SrcTopic, ps.p.Partition, ps.acked.Load()+1))
	}
	sort.Strings(names)
	how := "drained, positions stored"
	switch {
	case lost:
		how = "LOST (this worker was thrown out of the group): copying stopped, nothing stored; the new owner resumes from the positions stored before"
	case storeErr != nil:
		how = fmt.Sprintf("positions not stored (%v): the new owner copies again from the positions stored before", storeErr)
	case !drained:
		how = "records still in flight after " + revokeDrain.String() + " are copied again by the new owner; positions stored"
	}
	e.emit(Event{Type: EvWorkerRevoked, Parts: len(tps), Message: fmt.Sprintf("group %s revoked %d partition(s) from this worker in %s (%s): %s",
		f.WorkersGroup(), len(tps), roundDuration(time.Since(begin)), how, strings.Join(names, " "))})
}

// refreshAllEnds (leader) reads the end offsets of every selected source partition, for the
// source-ends snapshot in the state topic, which must cover the partitions every worker copies.
func (w *workers) refreshAllEnds(ctx context.Context) {
	w.mu.Lock()
	var tps []rdkafka.TP
	for t, n := range w.srcParts {
		for p := 0; p < n; p++ {
			tps = append(tps, rdkafka.TP{Topic: t, Partition: int32(p)})
		}
	}
	w.mu.Unlock()
	if len(tps) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, err := w.e.src.ListOffsets(ctx, tps, rdkafka.Latest)
	if err != nil {
		return
	}
	w.mu.Lock()
	for tp, r := range res {
		w.ends[tp] = r.Offset
	}
	w.mu.Unlock()
}

// allEnds returns the leader's view of every selected partition's end (nil when it has none).
func (w *workers) allEnds() map[string][]int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.ends) == 0 {
		return nil
	}
	out := map[string][]int64{}
	for t, n := range w.srcParts {
		l := make([]int64, n)
		for p := range l {
			l[p] = -1
			if v, ok := w.ends[rdkafka.TP{Topic: t, Partition: int32(p)}]; ok {
				l[p] = v
			}
		}
		out[t] = l
	}
	return out
}

// WorkerStats is this process's part of a flow shared by workers.
type WorkerStats struct {
	Group       string   `json:"group"`
	LeaderGroup string   `json:"leader_group"`
	Leader      bool     `json:"leader"`
	Partitions  []string `json:"partitions"` // topic[partition] this worker copies
	Assigned    int64    `json:"partitions_assigned_total"`
	Revoked     int64    `json:"partitions_revoked_total"`
}

func (w *workers) stats() *WorkerStats {
	if w == nil {
		return nil
	}
	ws := &WorkerStats{Group: w.member.Group(), LeaderGroup: w.leader.Group(), Leader: w.lead.Load(), Assigned: w.assigned.Load(), Revoked: w.revoked.Load(),
		Partitions: []string{}}
	for _, tp := range w.member.Owned() {
		ws.Partitions = append(ws.Partitions, fmt.Sprintf("%s[%d]", tp.Topic, tp.Partition))
	}
	return ws
}
