package switchover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/flowstate"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/mm2read"
	"github.com/kmmproject/kmm/pkg/plan"
	"github.com/kmmproject/kmm/pkg/snapshot"
)

// Step kinds of `kmm failover` (failback adds its own; see docs/architecture.md).
const (
	// KindWaitQuiet waits until no source end offset of the flow has moved for a while
	// (--fence none --quiet-for D). It writes nothing.
	KindWaitQuiet = "wait-source-quiet"
	// KindDrain waits until every partition's replicated position (lag.ReplicatedPosition, the
	// one definition) is exact and equal to the source's end. It writes nothing.
	KindDrain = "wait-drained"
	// KindMarkFlow writes the flow's state record (flow/<S>-><T>) to T and, when reachable, S.
	KindMarkFlow = "mark-flow"
	// KindWaitReplicators waits until no `kmm replicate` lease of the flow is alive (the running
	// replicator stopped the flow after the mark), then re-checks the drain.
	KindWaitReplicators = "wait-replicators-stopped"
	// KindCommitTranslated commits a group's offsets translated exactly at the cut.
	KindCommitTranslated = "commit-translated-offsets"
)

// FailoverCommand is the command name in the journal (run/failover/<S>-><T>).
const FailoverCommand = "failover"

// FailoverOptions are what the user chose.
type FailoverOptions struct {
	Mode     string        // planned
	QuietFor time.Duration // --fence none: how long the source ends must not move (0: no wait)
	Timeout  time.Duration // each wait's bound
	By       string        // user@host
	Force    bool          // commit groups active on T / S anyway
	// Progress, if set, is told what a wait is waiting for (stderr lines).
	Progress func(msg string)
	// Meter, if set, starts a progress meter of the drain: total records to wait for, Set with
	// the records replicated since, Done at the end (a bar on a terminal).
	Meter func(what string, total int64) Meter
	// Emergency: the source is down (PrepareEmergency). No quiet wait, no drain: the plan marks
	// the flow, waits for the replicators to stop it, commits the groups translated from what the
	// target holds and records that as the cut.
	Emergency bool
	// Reverse is the reverse flow T->S of the file (nil: the file has none). Planned mode
	// stores its resume positions at T's ends on S; both modes record T's ends in the flow
	// state (reverse_ends), from which failback stores them when S was down.
	Reverse *flow.Flow
	// Fence is how the source's writers are stopped (see FenceOptions); zero: none.
	Fence FenceOptions
	// Drift: differences in topic configs and ACL coverage between S and T found by the
	// preflight, reported in the plan's notes (never a refusal).
	Drift []string
}

// Meter shows the progress of a long wait (iostreams.Progress satisfies it).
type Meter interface {
	Set(done int64)
	Done()
}

// Failover plans and applies a planned failover of flow F (S->T): the steps and their Actions.
type Failover struct {
	F        *flow.Flow
	Src, Tgt cluster.Cluster
	Opt      FailoverOptions
	Groups   []string     // the groups to move, sorted
	TPs      []cluster.TP // the flow's source partitions
	Now      func() time.Time

	emergency *Emergency // set by PrepareEmergency

	mu         sync.Mutex
	translated []ExactOffset
	cut        map[cluster.TP]CutPartition
	runID      string
	revEnds    []flowstate.TopicEnd
}

func (fo *Failover) now() time.Time {
	if fo.Now != nil {
		return fo.Now()
	}
	return time.Now()
}

func (fo *Failover) progress(format string, args ...any) {
	if fo.Opt.Progress != nil {
		fo.Opt.Progress(fmt.Sprintf(format, args...))
	}
}

// MarkParams are the Params of a mark-flow step.
type MarkParams struct {
	State flowstate.State `json:"state"`
	Mode  string          `json:"mode"`
}

// GroupParams are the Params of a commit-translated-offsets step.
type GroupParams struct {
	Group string `json:"group"`
}

// Plan is the failover's plan (journaled on T).
func (fo *Failover) Plan() (*plan.Plan, error) {
	f := fo.F
	p := &plan.Plan{Command: FailoverCommand, Flow: f.Name(), Journal: f.Target, Created: fo.now(), Steps: []plan.Step{}}
	add := func(s plan.Step, params any) {
		if params != nil {
			s.Params, _ = json.Marshal(params)
		}
		p.Steps = append(p.Steps, s)
	}
	if !fo.Opt.Emergency {
		fs, err := fo.fenceStep()
		if err != nil {
			return nil, err
		}
		if fs != nil {
			p.Steps = append(p.Steps, *fs)
		}
	}
	if fo.Opt.QuietFor > 0 && !fo.Opt.Emergency && (fo.Opt.Fence.Method == "" || fo.Opt.Fence.Method == FenceNone) {
		add(plan.Step{ID: "fence/quiet", Kind: KindWaitQuiet, Cluster: f.Source,
			Writes: fmt.Sprintf("nothing: waits until no end offset of the flow's %d source partition(s) moves for %s", len(fo.TPs), fo.Opt.QuietFor),
			Why:    "--fence none: the writers are stopped by you; the source must be quiet before the cut"}, nil)
	}
	if !fo.Opt.Emergency {
		add(plan.Step{ID: "drain", Kind: KindDrain, Cluster: f.Target,
			Writes: fmt.Sprintf("nothing: waits until all %d partition(s) are replicated to the source's end", len(fo.TPs)),
			Why:    "exact translation needs the source frozen and fully replicated", Expect: map[string]int64{"partitions": int64(len(fo.TPs))}}, nil)
	}
	add(plan.Step{ID: "mark/" + string(flowstate.FailingOver), Kind: KindMarkFlow, Cluster: f.Target,
		Writes: fmt.Sprintf("flow/%s = FAILING_OVER in %s on %s (and %s)", f.Name(), plan.StateTopic, f.Target, f.Source),
		Why:    "a running kmm replicate stops the flow, storing its final progress; a new one refuses it"},
		MarkParams{State: flowstate.FailingOver, Mode: fo.Opt.Mode})
	add(plan.Step{ID: "replicators-stopped", Kind: KindWaitReplicators, Cluster: f.Target,
		Writes: "nothing: waits until no kmm replicate lease of the flow is alive, then checks the drain again",
		Why:    "no replicator may write into the new primary after the cut"}, nil)
	for _, g := range fo.Groups {
		p.Steps = append(p.Steps, fo.CommitStep(g))
	}
	switch rev := fo.Opt.Reverse; {
	case rev == nil:
		p.Notes = append(p.Notes, fmt.Sprintf("the file has no flow %s->%s: no reverse progress is stored", f.Target, f.Source))
	case fo.Opt.Emergency:
		p.Notes = append(p.Notes, fmt.Sprintf("reverse flow %s: %s is down, so its resume positions are not stored now; the flow state keeps %s's ends (reverse_ends) and kmm failback stores them", rev.Name(), f.Source, f.Target))
	default:
		add(plan.Step{ID: "reverse-progress", Kind: KindStoreReverse, Cluster: f.Source,
			Writes: fmt.Sprintf("resume positions of flow %s at %s's current ends in %s on %s (MM2's Connect offsets)", rev.Name(), f.Target, rev.OffsetsTopic, f.Source),
			Why:    fmt.Sprintf("kmm replicate (or MM2) running %s copies only what is written on %s after the cut-over", rev.Name(), f.Target)}, nil)
	}
	p.Notes = append(p.Notes, fo.Opt.Drift...)
	add(plan.Step{ID: "mark/" + string(flowstate.FailedOver), Kind: KindMarkFlow, Cluster: f.Target,
		Writes: fmt.Sprintf("flow/%s = FAILED_OVER with the cut (per partition: source end, replicated position, target end)", f.Name()),
		Why:    fmt.Sprintf("consumers may resume on %s; kmm replicate %s stays stopped until kmm failback", f.Target, f.Name())},
		MarkParams{State: flowstate.FailedOver, Mode: fo.Opt.Mode})
	return p, p.Validate()
}

// CommitStep is the step committing group g's offsets translated at the cut.
func (fo *Failover) CommitStep(g string) plan.Step {
	f := fo.F
	params, _ := json.Marshal(GroupParams{Group: g})
	return plan.Step{ID: CommitStepID(g), Kind: KindCommitTranslated, Cluster: f.Target,
		Writes: fmt.Sprintf("committed offsets of group %s on %s, translated exactly at the cut", g, f.Target),
		Why:    fmt.Sprintf("the group resumes on %s where it stopped on %s", f.Target, f.Source), Params: params}
}

// Translate computes the exact translations of every selected group at the cut (once per run:
// what the commit steps commit). The source must be frozen and fully replicated.
func (fo *Failover) Translate(ctx context.Context) ([]ExactOffset, error) { return fo.translate(ctx) }

// Actions are the failover's step actions.
func (fo *Failover) Actions() map[string]plan.Action {
	return map[string]plan.Action{
		KindWaitQuiet:        waitQuiet{fo},
		KindDrain:            drain{fo},
		KindMarkFlow:         mark{fo},
		KindWaitReplicators:  waitReplicators{fo},
		KindCommitTranslated: commitGroup{c: fo.Tgt, translate: fo.translate, idx: &groupIndex{}},
		KindStoreReverse:     storeReverse{fo},
		KindFence:            fence{fo},
	}
}

// SetRunID records the run id written into the flow state.
func (fo *Failover) SetRunID(id string) { fo.runID = id }

// Translated returns the exact translations made by the run (nil before the commits).
func (fo *Failover) Translated() []ExactOffset {
	fo.mu.Lock()
	defer fo.mu.Unlock()
	return slices.Clone(fo.translated)
}

// Cut returns the cut per source partition (source end and target end when translated), in
// the order of TPs; nil before the translation.
func (fo *Failover) Cut() []CutPartition {
	fo.mu.Lock()
	defer fo.mu.Unlock()
	if fo.cut == nil {
		return nil
	}
	out := make([]CutPartition, 0, len(fo.TPs))
	for _, tp := range fo.TPs {
		if c, ok := fo.cut[tp]; ok {
			out = append(out, c)
		}
	}
	return out
}

// ends reads the flow's source end offsets.
func (fo *Failover) ends(ctx context.Context) (map[cluster.TP]int64, error) {
	res, err := fo.Src.ListOffsets(ctx, fo.TPs, cluster.Latest)
	if err != nil {
		return nil, kerr.Wrap(kerr.Unreachable, fmt.Errorf("reading the end offsets of %s: %w", fo.F.Source, err))
	}
	out := make(map[cluster.TP]int64, len(res))
	for tp, r := range res {
		out[tp] = r.Offset
	}
	return out, nil
}

// wait polls cond every interval until it is true or the timeout passes.
func (fo *Failover) wait(ctx context.Context, what string, cond func() (bool, string, error)) error {
	deadline := time.Now().Add(fo.Opt.Timeout)
	last := time.Time{}
	for {
		ok, status, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return kerr.New(kerr.CheckFailed, "%s: not done within --timeout %s (%s)", what, fo.Opt.Timeout, status)
		}
		if time.Since(last) > 5*time.Second {
			fo.progress("%s: %s", what, status)
			last = time.Now()
		}
		select {
		case <-ctx.Done():
			return kerr.Wrap(kerr.Interrupted, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// Drained reports whether every partition is replicated to the source's end, by the replicated
// position of issue 21 (exact evidence only), and how many records remain.
func (fo *Failover) Drained(ctx context.Context) (bool, int64, error) {
	ends, err := fo.ends(ctx)
	if err != nil {
		return false, 0, err
	}
	pos, err := snapshot.Positions(ctx, snapshot.PositionQuery{Flow: fo.F, Source: fo.Src, Target: fo.Tgt, TPs: fo.TPs, SourceEnds: ends})
	if err != nil {
		return false, 0, err
	}
	var left int64
	for _, tp := range fo.TPs {
		p := pos[tp].Position
		if !p.Exact || p.Next < ends[tp] {
			left += max(1, ends[tp]-p.Next)
		}
	}
	return left == 0, left, nil
}

type waitQuiet struct{ fo *Failover }

func (a waitQuiet) Check(context.Context, plan.Step) (bool, error) { return false, nil }

func (a waitQuiet) Apply(ctx context.Context, _ plan.Step) (map[string]int64, error) {
	fo := a.fo
	prev, err := fo.ends(ctx)
	if err != nil {
		return nil, err
	}
	since := time.Now()
	err = fo.wait(ctx, "waiting for "+fo.F.Source+" to be quiet", func() (bool, string, error) {
		cur, err := fo.ends(ctx)
		if err != nil {
			return false, "", err
		}
		for tp, e := range cur {
			if prev[tp] != e {
				prev, since = cur, time.Now()
				break
			}
		}
		q := time.Since(since)
		return q >= fo.Opt.QuietFor, fmt.Sprintf("quiet for %s of %s", q.Round(time.Second), fo.Opt.QuietFor), nil
	})
	return map[string]int64{"quiet_ms": time.Since(since).Milliseconds()}, err
}

type drain struct{ fo *Failover }

func (a drain) Check(ctx context.Context, _ plan.Step) (bool, error) {
	ok, _, err := a.fo.Drained(ctx)
	return ok, err
}

func (a drain) Apply(ctx context.Context, _ plan.Step) (map[string]int64, error) {
	var first int64 = -1
	var m Meter
	err := a.fo.wait(ctx, "waiting for replication to reach the source's end", func() (bool, string, error) {
		ok, left, err := a.fo.Drained(ctx)
		if err != nil {
			return false, "", err
		}
		if first < 0 {
			first = left
			if !ok && a.fo.Opt.Meter != nil {
				m = a.fo.Opt.Meter(fmt.Sprintf("draining %s", a.fo.F.Name()), first)
			}
		}
		if m != nil {
			m.Set(max(first-left, 0))
		}
		return ok, fmt.Sprintf("%d record(s) not replicated yet", left), nil
	})
	if m != nil {
		m.Done()
	}
	return map[string]int64{"records_waited_for": max(first, 0)}, err
}

// ReadFlowState returns the newest copy of the flow's state on T and, when given, S.
func ReadFlowState(ctx context.Context, f *flow.Flow, tgt, src cluster.Cluster) (*flowstate.FlowRecord, error) {
	var copies []*flowstate.FlowRecord
	for i, c := range []cluster.Cluster{tgt, src} {
		if c == nil {
			continue
		}
		recs, err := plan.ReadState(ctx, c)
		if err != nil {
			if i == 0 {
				return nil, err
			}
			continue
		}
		st, err := flowstate.DecodeFlow(recs[flowstate.FlowKey(f.Source, f.Target)])
		if err != nil {
			return nil, err
		}
		copies = append(copies, st)
	}
	return flowstate.Newest(f.Name(), copies...), nil
}

type mark struct{ fo *Failover }

func markParams(s plan.Step) (MarkParams, error) {
	var p MarkParams
	if err := json.Unmarshal(s.Params, &p); err != nil {
		return p, fmt.Errorf("step %s: params: %w", s.ID, err)
	}
	return p, nil
}

// after reports whether state a is at or after b on failover's path.
func after(a, b flowstate.State) bool {
	rank := map[flowstate.State]int{flowstate.Replicating: 0, flowstate.FailingOver: 1, flowstate.FailedOver: 2}
	ra, oka := rank[a]
	rb, okb := rank[b]
	return oka && okb && ra >= rb
}

func (a mark) Check(ctx context.Context, s plan.Step) (bool, error) {
	p, err := markParams(s)
	if err != nil {
		return false, err
	}
	st, err := ReadFlowState(ctx, a.fo.F, a.fo.Tgt, nil)
	if err != nil {
		return false, err
	}
	return after(st.State, p.State) && st.State != flowstate.Replicating, nil
}

func (a mark) Apply(ctx context.Context, s plan.Step) (map[string]int64, error) {
	fo := a.fo
	p, err := markParams(s)
	if err != nil {
		return nil, err
	}
	cur, err := ReadFlowState(ctx, fo.F, fo.Tgt, fo.Src)
	if err != nil {
		return nil, err
	}
	if fo.runID == "" { // the executor's run (journaled before its first step)
		if recs, err := plan.ReadState(ctx, fo.Tgt); err == nil {
			if r, err := plan.DecodeRun(recs[plan.RunKey(FailoverCommand, fo.F.Name())]); err == nil && r != nil {
				fo.runID = r.ID
			}
		}
	}
	next, err := flowstate.Next(cur, p.State, fo.now(), p.Mode, fo.Opt.By, fo.runID)
	if err != nil {
		return nil, kerr.Wrap(kerr.CheckFailed, err)
	}
	if p.State == flowstate.FailedOver && fo.emergency != nil {
		if next.Cut, err = fo.emergency.cutNow(ctx); err != nil {
			return nil, err
		}
		next.Note = "emergency: the source was unreachable; the cut is what the target held"
	} else if p.State == flowstate.FailedOver {
		if _, err := fo.translate(ctx); err != nil { // the cut (also when a resumed run committed before)
			return nil, err
		}
		fo.mu.Lock()
		for _, tp := range fo.TPs {
			c := fo.cut[tp]
			next.Cut = append(next.Cut, flowstate.PartitionCut{Topic: tp.Topic, Partition: tp.Partition, SourceEnd: c.SourceEnd,
				Replicated: c.SourceEnd, ReplicatedSource: "drained (exact)", TargetEnd: c.TargetEnd})
		}
		fo.mu.Unlock()
	}
	if p.State == flowstate.FailedOver {
		if next.ReverseEnds, err = fo.reverseEnds(ctx); err != nil {
			return nil, err
		}
		next.Fence = fo.fenceRecord()
	}
	v, err := flowstate.Encode(next)
	if err != nil {
		return nil, err
	}
	rec := []cluster.Record{{Topic: plan.StateTopic, Partition: 0, Key: []byte(flowstate.FlowKey(fo.F.Source, fo.F.Target)), Value: v, Timestamp: fo.now()}}
	written := int64(0)
	for i, c := range []cluster.Cluster{fo.Tgt, fo.Src} {
		if c == nil {
			continue
		}
		if err := writeState(ctx, c, fo.F, rec); err != nil {
			if i == 0 {
				return nil, fmt.Errorf("writing the flow state to %s on %s: %w", plan.StateTopic, c.Alias(), err)
			}
			fo.progress("the flow state's copy on %s was not written (%v); %s holds it", c.Alias(), err, fo.F.Target)
			continue
		}
		written++
	}
	return map[string]int64{"epoch": next.Epoch, "copies": written}, nil
}

func writeState(ctx context.Context, c cluster.Cluster, f *flow.Flow, recs []cluster.Record) error {
	if _, err := cluster.EnsureTopic(ctx, c, cluster.NewTopic{Name: plan.StateTopic, Partitions: 1, RF: f.StateTopicRF(),
		Configs: plan.StateTopicConfigs()}, "checkpoints.topic.replication.factor"); err != nil {
		return err
	}
	prod, err := c.NewProducer(plan.StateProducer())
	if err != nil {
		return err
	}
	defer prod.Close()
	_, err = prod.ProduceSync(ctx, recs)
	return err
}

type waitReplicators struct{ fo *Failover }

func (a waitReplicators) alive(ctx context.Context) (int, error) {
	recs, err := plan.ReadState(ctx, a.fo.Tgt)
	if err != nil {
		return 0, err
	}
	n := 0
	now := time.Now()
	for _, l := range flowstate.Leases(recs, a.fo.F.Source, a.fo.F.Target) {
		if l.Alive(now) {
			n++
		}
	}
	return n, nil
}

func (a waitReplicators) Check(ctx context.Context, _ plan.Step) (bool, error) {
	n, err := a.alive(ctx)
	if err != nil || n > 0 {
		return false, err
	}
	if a.fo.Opt.Emergency {
		return true, nil
	}
	ok, _, err := a.fo.Drained(ctx)
	return ok, err
}

func (a waitReplicators) Apply(ctx context.Context, _ plan.Step) (map[string]int64, error) {
	var first = -1
	err := a.fo.wait(ctx, "waiting for kmm replicate to stop the flow", func() (bool, string, error) {
		n, err := a.alive(ctx)
		if first < 0 {
			first = n
		}
		return n == 0, fmt.Sprintf("%d replicator lease(s) alive", n), err
	})
	if err != nil {
		return nil, err
	}
	if a.fo.Opt.Emergency {
		return map[string]int64{"replicators_waited_for": int64(max(first, 0))}, nil
	}
	ok, left, err := a.fo.Drained(ctx)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, kerr.New(kerr.CheckFailed, "after the replicator stopped, %d record(s) of the source are not on %s (was the source written to after the drain? fence the writers and run failover again)", left, a.fo.F.Target)
	}
	return map[string]int64{"replicators_waited_for": int64(max(first, 0))}, nil
}

// translate computes the exact translations of every selected group once per run, at the cut.
func (fo *Failover) translate(ctx context.Context) ([]ExactOffset, error) {
	fo.mu.Lock()
	defer fo.mu.Unlock()
	if fo.translated != nil {
		return fo.translated, nil
	}
	if fo.emergency != nil {
		tr, err := fo.emergency.translateNow(ctx)
		if err != nil {
			return nil, err
		}
		if tr == nil {
			tr = []ExactOffset{}
		}
		fo.translated = tr
		return tr, nil
	}
	f := fo.F
	ends, err := fo.ends(ctx)
	if err != nil {
		return nil, err
	}
	remote := make([]cluster.TP, len(fo.TPs))
	for i, tp := range fo.TPs {
		remote[i] = cluster.TP{Topic: f.RemoteTopic(tp.Topic), Partition: tp.Partition}
	}
	tends, err := fo.Tgt.ListOffsets(ctx, remote, cluster.Latest)
	if err != nil {
		return nil, err
	}
	fo.cut = map[cluster.TP]CutPartition{}
	for i, tp := range fo.TPs {
		fo.cut[tp] = CutPartition{Source: tp, Remote: remote[i], SourceEnd: ends[tp], TargetEnd: tends[remote[i]].Offset}
	}
	syncs, err := loadSyncs(ctx, f, fo.Src, fo.Tgt)
	if err != nil {
		return nil, err
	}
	inFlow := map[cluster.TP]bool{}
	for _, tp := range fo.TPs {
		inFlow[tp] = true
	}
	committed := make([]map[cluster.TP]cluster.OffsetMeta, len(fo.Groups))
	if err := forEach(ctx, len(fo.Groups), partitionConcurrency, func(i int) error {
		m, err := fo.Src.ListGroupOffsets(ctx, fo.Groups[i])
		if err != nil {
			return fmt.Errorf("reading the offsets of group %s on %s: %w", fo.Groups[i], f.Source, err)
		}
		committed[i] = m
		return nil
	}); err != nil {
		return nil, err
	}
	var offs []GroupOffset
	for i, g := range fo.Groups {
		for tp, om := range committed[i] {
			if inFlow[tp] && om.Offset >= 0 {
				offs = append(offs, GroupOffset{Group: g, TP: tp, Offset: om.Offset, Metadata: om.Metadata})
			}
		}
	}
	maps, err := mm2read.ReadOffsetMaps(ctx, fo.Tgt, f.OffsetMapTopic())
	if err != nil && !errors.Is(err, mm2read.ErrNoTopic) {
		return nil, err
	}
	tr, err := TranslateExactMaps(ctx, fo.Src, fo.Tgt, syncs, maps, fo.cut, offs)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(tr, func(i, j int) bool { return tr[i].Group < tr[j].Group })
	fo.translated = tr
	return tr, nil
}
