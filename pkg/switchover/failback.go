package switchover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/flowstate"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/mm2read"
	"github.com/kmmproject/kmm/pkg/offsetsync"
	"github.com/kmmproject/kmm/pkg/plan"
)

// FailbackCommand is the command name in the journal (run/failback/<S>-><T>).
const FailbackCommand = "failback"

// Step kinds of `kmm failback` (it also uses KindWaitQuiet and KindDrain over the reverse flow,
// and KindStoreReverse's code for both directions' progress).
const (
	// KindMarkBack writes the flow's state record for failback (FAILING_BACK, then REPLICATING
	// with a new epoch) to the source and the target.
	KindMarkBack = "mark-flow-back"
	// KindStranded accounts for the records the source holds beyond the failover's cut: copied
	// to kmm.stranded.<topic> (quarantine), or only counted (skip, deliver).
	KindStranded = "stranded-records"
	// KindStoreReverseAt stores the reverse flow's resume positions from the flow state's
	// reverse_ends (an emergency failover could not: the source was down).
	KindStoreReverseAt = "store-reverse-progress-at-cut"
	// KindCommitBack commits a group's offsets translated back to the source.
	KindCommitBack = "commit-offsets-back"
	// KindRemoveFence deletes the DENY ACLs of failover's acl fence.
	KindRemoveFence = "remove-fence"
	// KindStoreForward stores the flow's own resume positions at the source's ends after the
	// catch-up, so that kmm replicate S->T does not copy back what just came from T.
	KindStoreForward = "store-forward-progress"
)

// Stranded modes (--stranded).
const (
	StrandedQuarantine = "quarantine"
	StrandedSkip       = "skip"
	StrandedDeliver    = "deliver"
)

// StrandedTopic is the quarantine topic of topic's stranded records.
func StrandedTopic(topic string) string { return "kmm.stranded." + topic }

// Headers of a quarantined record (its original headers follow).
const (
	HeaderStrandedTopic     = "kmm.stranded.topic"
	HeaderStrandedPartition = "kmm.stranded.partition"
	HeaderStrandedOffset    = "kmm.stranded.offset"
)

// StrandedRange is one source partition's stranded records: [From, To) on the source, written
// there after the last record that reached the target at the cut.
type StrandedRange struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	From      int64  `json:"from"`
	To        int64  `json:"to"`
	Records   int64  `json:"records"`
}

// FailbackOptions are what the user chose.
type FailbackOptions struct {
	Stranded string        // quarantine | skip | deliver
	QuietFor time.Duration // fence none on T: how long T's ends must not move
	Timeout  time.Duration
	By       string
	Force    bool
	Fence    FenceOptions // none, acl or hook (on T)
	Progress func(msg string)
	Meter    func(what string, total int64) Meter
	// Drift: differences in topic configs and ACL coverage between S's topics and their copies on
	// T, reported in the plan's notes (never a refusal).
	Drift []string
	// StartReverse (--start-reverse) runs the reverse flow T->S in this process until ctx ends,
	// then drains it and stores its progress: the drain step runs it for the catch-up and stops
	// it once T->S has copied everything. nil: the user runs kmm replicate T->S.
	StartReverse func(ctx context.Context) error
}

// Failback plans and applies `kmm failback` of flow F (S->T, FAILED_OVER): S becomes the primary
// again. Rev is the reverse flow T->S.
type Failback struct {
	F, Rev *flow.Flow
	S, T   cluster.Cluster
	State  *flowstate.FlowRecord // the FAILED_OVER (or FAILING_BACK, resumed) record
	Groups []string              // groups with offsets on T to move back, sorted
	// RevTPs are T's partitions the reverse flow copies (heartbeats excluded): quiet and drain.
	RevTPs   []cluster.TP
	Stranded []StrandedRange
	// RemoteWrites are records written on T into the flow's remote topics after the cut that the
	// reverse flow cannot copy back (a renaming policy: MM2's cycle rule), per partition of T.
	RemoteWrites []StrandedRange
	Opt          FailbackOptions
	Now          func() time.Time

	rev        *Failover // quiet and drain over the reverse flow
	mu         sync.Mutex
	translated []ExactOffset
	runID      string
}

func (fb *Failback) now() time.Time {
	if fb.Now != nil {
		return fb.Now()
	}
	return time.Now()
}

func (fb *Failback) progress(format string, args ...any) {
	if fb.Opt.Progress != nil {
		fb.Opt.Progress(fmt.Sprintf(format, args...))
	}
}

func (fb *Failback) revFailover() *Failover {
	if fb.rev == nil {
		fb.rev = &Failover{F: fb.Rev, Src: fb.T, Tgt: fb.S, TPs: fb.RevTPs,
			Opt: FailoverOptions{QuietFor: fb.Opt.QuietFor, Timeout: fb.Opt.Timeout, Progress: fb.Opt.Progress, Meter: fb.Opt.Meter}}
	}
	return fb.rev
}

// FindStranded computes the stranded ranges from the cut and the source's ends now. With a
// policy that keeps topic names, the reverse flow writes into the same topics: the range ends
// at the first offset it wrote (its earliest offset sync), not at the end.
func FindStranded(ctx context.Context, f, rev *flow.Flow, s, t cluster.Cluster, cut []flowstate.PartitionCut) ([]StrandedRange, error) {
	if len(cut) == 0 {
		return nil, nil
	}
	tps := make([]cluster.TP, len(cut))
	for i, c := range cut {
		tps[i] = cluster.TP{Topic: c.Topic, Partition: c.Partition}
	}
	ends, err := s.ListOffsets(ctx, tps, cluster.Latest)
	if err != nil {
		return nil, kerr.Wrap(kerr.Unreachable, fmt.Errorf("reading the end offsets of %s: %w", f.Source, err))
	}
	var back *offsetsync.Store // the reverse flow's syncs, when it writes into the same names
	if rev != nil {
		for _, c := range cut {
			if rev.RemoteTopic(f.RemoteTopic(c.Topic)) == c.Topic {
				if back, err = loadSyncs(ctx, rev, t, s); err != nil {
					return nil, err
				}
				break
			}
		}
	}
	var out []StrandedRange
	for i, c := range cut {
		to := ends[tps[i]].Offset
		from := c.Replicated
		if back != nil && from >= 0 {
			to = strandedEnd(back.History(offsetsync.TP{Topic: f.RemoteTopic(c.Topic), Partition: c.Partition}), from, to)
		}
		if from < 0 {
			from = to
		}
		r := StrandedRange{Topic: c.Topic, Partition: c.Partition, From: from, To: max(from, to)}
		r.Records = r.To - r.From
		out = append(out, r)
	}
	return out, nil
}

// strandedEnd is where the stranded records of a partition end when the reverse flow writes into
// the same topic: at the first record it wrote after the cut, its earliest offset sync (syncs, of
// the reverse flow, oldest first) at or past the cut's replicated position from, if before end.
// Syncs below from are an earlier failback's reverse copies: they were on the source before this
// cut (the flow has passed them since), so they end nothing: taking the earliest sync of all, a
// second failover and failback counted no stranded record and moved the groups past them.
func strandedEnd(syncs []offsetsync.Sync, from, end int64) int64 {
	for _, sy := range syncs {
		if sy.Downstream >= from {
			return min(end, sy.Downstream)
		}
	}
	return end
}

// FindRemoteWrites returns, per partition of the flow's remote topics on t that the reverse
// flow does not copy, the records written after the cut (t's end now minus its end at the cut).
func FindRemoteWrites(ctx context.Context, f, rev *flow.Flow, t cluster.Cluster, cut []flowstate.PartitionCut) ([]StrandedRange, error) {
	var tps []cluster.TP
	var at []int64
	for _, c := range cut {
		remote := f.RemoteTopic(c.Topic)
		if rev != nil && rev.Selected(remote) {
			continue // copied back by the reverse flow
		}
		tps = append(tps, cluster.TP{Topic: remote, Partition: c.Partition})
		at = append(at, c.TargetEnd)
	}
	if len(tps) == 0 {
		return nil, nil
	}
	ends, err := t.ListOffsets(ctx, tps, cluster.Latest)
	if err != nil {
		return nil, err
	}
	var out []StrandedRange
	for i, tp := range tps {
		r := StrandedRange{Topic: tp.Topic, Partition: tp.Partition, From: at[i], To: max(at[i], ends[tp].Offset)}
		r.Records = r.To - r.From
		out = append(out, r)
	}
	return out, nil
}

// loadSyncs loads flow f's offset syncs (on its source, or its target with
// offset-syncs.topic.location=target).
func loadSyncs(ctx context.Context, f *flow.Flow, src, tgt cluster.Cluster) (*offsetsync.Store, error) {
	st := offsetsync.NewStore(offsetsync.Options{})
	if _, err := mm2read.LoadFlowOffsetSyncs(ctx, f, src, tgt, st); err != nil && !errors.Is(err, mm2read.ErrNoTopic) {
		return nil, err
	}
	return st, nil
}

// Plan is the failback's plan (journaled on T, where the flow state was made FAILED_OVER).
func (fb *Failback) Plan() (*plan.Plan, error) {
	f, rev := fb.F, fb.Rev
	p := &plan.Plan{Command: FailbackCommand, Flow: f.Name(), Journal: f.Target, Created: fb.now(), Steps: []plan.Step{}, Notes: append([]string(nil), fb.Opt.Drift...)}
	add := func(s plan.Step, params any) {
		if params != nil {
			s.Params, _ = json.Marshal(params)
		}
		p.Steps = append(p.Steps, s)
	}
	add(plan.Step{ID: "mark/" + string(flowstate.FailingBack), Kind: KindMarkBack, Cluster: f.Target,
		Writes: fmt.Sprintf("flow/%s = FAILING_BACK in %s on %s and %s", f.Name(), plan.StateTopic, f.Target, f.Source),
		Why:    "kmm replicate keeps refusing the flow until the failback is complete"}, MarkParams{State: flowstate.FailingBack, Mode: FailbackCommand})
	var stranded int64
	for _, r := range fb.Stranded {
		stranded += r.Records
	}
	switch fb.Opt.Stranded {
	case StrandedQuarantine:
		add(plan.Step{ID: "stranded", Kind: KindStranded, Cluster: f.Source,
			Writes: fmt.Sprintf("%d stranded record(s) copied to kmm.stranded.<topic> on %s (original topic, partition, offset in headers)", stranded, f.Source),
			Why:    "records written on " + f.Source + " that never reached " + f.Target + " before the cut: kept for people, and the groups at the cut move past them",
			Expect: map[string]int64{"records": stranded}}, nil)
	default:
		p.Notes = append(p.Notes, fmt.Sprintf("--stranded %s: %d stranded record(s) on %s are not copied (%s)", fb.Opt.Stranded, stranded, f.Source,
			map[string]string{StrandedSkip: "groups at the cut move past them", StrandedDeliver: "groups read them"}[fb.Opt.Stranded]))
	}
	for _, r := range fb.RemoteWrites {
		if r.Records > 0 {
			p.Notes = append(p.Notes, fmt.Sprintf("%s[%d] on %s: %d record(s) written after the cut [%d, %d) cannot flow back to %s (a remote topic: MM2's cycle rule); they stay on %s only",
				r.Topic, r.Partition, f.Target, r.Records, r.From, r.To, f.Source, f.Target))
		}
	}
	if len(fb.State.ReverseEnds) > 0 {
		add(plan.Step{ID: "reverse-progress", Kind: KindStoreReverseAt, Cluster: f.Source,
			Writes: fmt.Sprintf("resume positions of %s at %s's ends at the cut (reverse_ends), where none is stored yet, in %s on %s", rev.Name(), f.Target, rev.OffsetsTopic, f.Source),
			Why:    fmt.Sprintf("%s copies only what %s received after the cut (no echo of %s's own records)", rev.Name(), f.Target, f.Source)}, nil)
	}
	var tFence []flowstate.FenceACL // --fence acl on T: removed before the flow replicates again
	switch fb.Opt.Fence.Method {
	case FenceACL:
		tFence = FenceACLs(fb.revTopics(), fb.Opt.Fence.Principals)
		add(plan.Step{ID: "fence/acl", Kind: KindFence, Cluster: f.Target,
			Writes: fmt.Sprintf("DENY WRITE ACLs on %s: %d topic(s) x %s", f.Target, len(fb.revTopics()), strings.Join(fb.Opt.Fence.Principals, ", ")),
			Why:    "no producer may write to " + f.Target + " while its records are copied back and the groups translated; removed before " + f.Name() + " replicates again",
			Expect: map[string]int64{"acls": int64(len(tFence))}}, FenceParams{Method: FenceACL, ACLs: tFence})
	case FenceHook:
		add(plan.Step{ID: "fence/hook", Kind: KindFence, Cluster: f.Target,
			Writes: fmt.Sprintf("whatever the hook does: sh -c %q", fb.Opt.Fence.Command),
			Why:    "the hook stops the writers on " + f.Target}, FenceParams{Method: FenceHook, Command: fb.Opt.Fence.Command})
	case "", FenceNone:
		if fb.Opt.QuietFor > 0 {
			add(plan.Step{ID: "fence/quiet", Kind: KindWaitQuiet, Cluster: f.Target,
				Writes: fmt.Sprintf("nothing: waits until no end offset of the reverse flow's %d partition(s) on %s moves for %s", len(fb.RevTPs), f.Target, fb.Opt.QuietFor),
				Why:    "--fence none: the writers on " + f.Target + " are stopped by you"}, nil)
		}
	}
	runs := fmt.Sprintf("run kmm replicate FILE --flow '%s'", rev.Name())
	if fb.Opt.StartReverse != nil {
		runs = "--start-reverse: kmm runs it in this process until then, and stops it"
	}
	add(plan.Step{ID: "drain", Kind: KindDrain, Cluster: f.Source,
		Writes: fmt.Sprintf("nothing: waits until %s has copied all %d partition(s) to %s's end (%s)", rev.Name(), len(fb.RevTPs), f.Target, runs),
		Why:    "the groups' positions on " + f.Target + " translate exactly only when the reverse copy is complete"}, nil)
	for _, g := range fb.Groups {
		add(plan.Step{ID: CommitStepID(g), Kind: KindCommitBack, Cluster: f.Source,
			Writes: fmt.Sprintf("committed offsets of group %s on %s, translated back from %s", g, f.Source, f.Target),
			Why:    fmt.Sprintf("the group resumes on %s where it stopped on %s", f.Source, f.Target)}, GroupParams{Group: g})
	}
	if fc := fb.State.Fence; fc != nil && fc.Method == FenceACL && len(fc.ACLs) > 0 {
		add(plan.Step{ID: "remove-fence", Kind: KindRemoveFence, Cluster: fc.Cluster,
			Writes: fmt.Sprintf("deletes failover's %d DENY WRITE ACL(s) on %s", len(fc.ACLs), fc.Cluster),
			Why:    "the producers write to " + f.Source + " again", Expect: map[string]int64{"acls": int64(len(fc.ACLs))}}, nil)
	}
	if len(tFence) > 0 {
		add(plan.Step{ID: "remove-fence/" + f.Target, Kind: KindRemoveFence, Cluster: f.Target,
			Writes: fmt.Sprintf("deletes this failback's %d DENY WRITE ACL(s) on %s", len(tFence), f.Target),
			Why:    f.Name() + " (and " + f.Target + "'s own producers, as you choose) write to " + f.Target + " again", Expect: map[string]int64{"acls": int64(len(tFence))}},
			FenceParams{Method: FenceACL, ACLs: tFence})
	}
	add(plan.Step{ID: "forward-progress", Kind: KindStoreForward, Cluster: f.Target,
		Writes: fmt.Sprintf("resume positions of %s at %s's ends now in %s on %s", f.Name(), f.Source, f.OffsetsTopic, f.Target),
		Why:    fmt.Sprintf("kmm replicate %s does not copy back what came from %s, nor the stranded records", f.Name(), f.Target)}, nil)
	add(plan.Step{ID: "mark/" + string(flowstate.Replicating), Kind: KindMarkBack, Cluster: f.Target,
		Writes: fmt.Sprintf("flow/%s = REPLICATING with a new epoch", f.Name()),
		Why:    fmt.Sprintf("kmm replicate %s runs again; stop kmm replicate %s first", f.Name(), rev.Name())}, MarkParams{State: flowstate.Replicating, Mode: FailbackCommand})
	return p, p.Validate()
}

// Actions are the failback's step actions.
func (fb *Failback) Actions() map[string]plan.Action {
	rf := fb.revFailover()
	return map[string]plan.Action{
		KindMarkBack:       markBack{fb},
		KindStranded:       strandedAct{fb},
		KindStoreReverseAt: storeReverseAt{fb},
		KindFence:          fence{rf},
		KindWaitQuiet:      waitQuiet{rf},
		KindDrain:          drainBack{drain{rf}, fb.Rev, fb},
		KindCommitBack:     commitGroup{c: fb.S, translate: fb.translate, idx: &groupIndex{}},
		KindRemoveFence:    removeFence{fb},
		KindStoreForward:   storeForward{fb},
	}
}

// ReverseLag returns how many records of the reverse flow's partitions on T are not on S yet
// (by the replicated position of kmm lag; a partition without exact evidence counts at least 1).
func (fb *Failback) ReverseLag(ctx context.Context) (int64, error) {
	if len(fb.RevTPs) == 0 {
		return 0, nil
	}
	_, left, err := fb.revFailover().Drained(ctx)
	return left, err
}

// Translated returns the translations made by the run.
func (fb *Failback) Translated() []ExactOffset {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	return slices.Clone(fb.translated)
}

// drainBack is the drain of the reverse flow, whose replicator the user runs: a timeout says so.
type drainBack struct {
	drain
	rev *flow.Flow
	fb  *Failback
}

func (a drainBack) Apply(ctx context.Context, s plan.Step) (map[string]int64, error) {
	start := a.fb.Opt.StartReverse
	if start == nil {
		n, err := a.drain.Apply(ctx, s)
		if err != nil && kerr.KindOf(err) == kerr.CheckFailed {
			err = kerr.WithHint(err, fmt.Sprintf("is the reverse flow running? kmm replicate FILE --flow '%s' (then run kmm failback again: it resumes)", a.rev.Name()))
		}
		return n, err
	}
	// --start-reverse: the reverse flow runs here until drained, then stops (its progress
	// stored). It ending early stops the drain with its error.
	began := time.Now()
	a.fb.progress("starting %s in this process (--start-reverse)", a.rev.Name())
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	ended := make(chan error, 1)
	go func() { ended <- start(rctx) }()
	dctx, cancelDrain := context.WithCancel(ctx)
	var early error
	go func() {
		select {
		case err := <-ended:
			if err == nil {
				err = fmt.Errorf("the reverse flow %s stopped before the drain ended", a.rev.Name())
			}
			early = err
			ended <- err // for the stop below
			cancelDrain()
		case <-dctx.Done():
		}
	}()
	n, err := a.drain.Apply(dctx, s)
	cancelDrain()
	stop()
	stopAt := time.Now()
	rerr := <-ended
	if early != nil {
		return n, fmt.Errorf("reverse flow %s (--start-reverse): %w", a.rev.Name(), early)
	}
	if err != nil {
		return n, err
	}
	if rerr != nil {
		return n, fmt.Errorf("stopping the reverse flow %s (--start-reverse): %w", a.rev.Name(), rerr)
	}
	a.fb.progress("%s drained and stopped (ran %s, stop %s)", a.rev.Name(), time.Since(began).Round(100*time.Millisecond), time.Since(stopAt).Round(100*time.Millisecond))
	if n == nil {
		n = map[string]int64{}
	}
	n["reverse_run_ms"] = time.Since(began).Milliseconds()
	return n, nil
}

type markBack struct{ fb *Failback }

func (a markBack) Check(ctx context.Context, s plan.Step) (bool, error) {
	p, err := markParams(s)
	if err != nil {
		return false, err
	}
	st, err := ReadFlowState(ctx, a.fb.F, a.fb.T, a.fb.S)
	if err != nil {
		return false, err
	}
	switch p.State {
	case flowstate.FailingBack:
		return st.State == flowstate.FailingBack || (st.State == flowstate.Replicating && st.Epoch > a.fb.State.Epoch), nil
	default:
		return st.State == flowstate.Replicating && st.Epoch > a.fb.State.Epoch, nil
	}
}

func (a markBack) Apply(ctx context.Context, s plan.Step) (map[string]int64, error) {
	fb := a.fb
	p, err := markParams(s)
	if err != nil {
		return nil, err
	}
	cur, err := ReadFlowState(ctx, fb.F, fb.T, fb.S)
	if err != nil {
		return nil, err
	}
	if fb.runID == "" {
		if recs, err := plan.ReadState(ctx, fb.T); err == nil {
			if r, err := plan.DecodeRun(recs[plan.RunKey(FailbackCommand, fb.F.Name())]); err == nil && r != nil {
				fb.runID = r.ID
			}
		}
	}
	next, err := flowstate.Next(cur, p.State, fb.now(), p.Mode, fb.Opt.By, fb.runID)
	if err != nil {
		return nil, kerr.Wrap(kerr.CheckFailed, err)
	}
	if p.State == flowstate.FailingBack { // keep what failback needs after a crash
		next.Cut, next.ReverseEnds, next.Fence = cur.Cut, cur.ReverseEnds, cur.Fence
	}
	v, err := flowstate.Encode(next)
	if err != nil {
		return nil, err
	}
	rec := []cluster.Record{{Topic: plan.StateTopic, Partition: 0, Key: []byte(flowstate.FlowKey(fb.F.Source, fb.F.Target)), Value: v, Timestamp: fb.now()}}
	for _, c := range []cluster.Cluster{fb.T, fb.S} {
		if err := writeState(ctx, c, fb.F, rec); err != nil {
			return nil, fmt.Errorf("writing the flow state to %s on %s: %w", plan.StateTopic, c.Alias(), err)
		}
	}
	return map[string]int64{"epoch": next.Epoch, "copies": 2}, nil
}

type strandedAct struct{ fb *Failback }

// copied returns, per partition of the quarantine topic, the highest original offset copied.
func (a strandedAct) copied(ctx context.Context, r StrandedRange) (int64, error) {
	q := cluster.TP{Topic: StrandedTopic(r.Topic), Partition: r.Partition}
	ts, err := a.fb.S.ListTopics(ctx)
	if err != nil {
		return 0, err
	}
	if int(r.Partition) >= ts[q.Topic].Partitions {
		return -1, nil
	}
	ends, err := a.fb.S.ListOffsets(ctx, []cluster.TP{q}, cluster.Latest)
	if err != nil {
		return 0, err
	}
	recs, err := readRecords(ctx, a.fb.S, q, max(0, ends[q].Offset-1), ends[q].Offset)
	if err != nil || len(recs) == 0 {
		return -1, err
	}
	for _, h := range recs[len(recs)-1].Headers {
		if h.Key == HeaderStrandedOffset {
			return strconv.ParseInt(string(h.Value), 10, 64)
		}
	}
	return -1, nil
}

func (a strandedAct) Check(ctx context.Context, _ plan.Step) (bool, error) {
	for _, r := range a.fb.Stranded {
		if r.Records == 0 {
			continue
		}
		last, err := a.copied(ctx, r)
		if err != nil || last < r.To-1 {
			return false, err
		}
	}
	return true, nil
}

func (a strandedAct) Apply(ctx context.Context, _ plan.Step) (map[string]int64, error) {
	fb := a.fb
	var copiedN, total int64
	parts := map[string]int{}
	for _, r := range fb.Stranded {
		parts[r.Topic] = max(parts[r.Topic], int(r.Partition)+1)
	}
	ts, err := fb.S.ListTopics(ctx)
	if err != nil {
		return nil, err
	}
	prod, err := fb.S.NewProducer(map[string]string{"acks": "all", "enable.idempotence": "true"})
	if err != nil {
		return nil, err
	}
	defer prod.Close()
	for _, r := range fb.Stranded {
		total += r.Records
		if r.Records == 0 {
			continue
		}
		q := StrandedTopic(r.Topic)
		if _, err := cluster.EnsureTopic(ctx, fb.S, cluster.NewTopic{Name: q, Partitions: max(parts[r.Topic], ts[r.Topic].Partitions), RF: fb.F.StateTopicRF()}, "checkpoints.topic.replication.factor"); err != nil {
			return nil, err
		}
		last, err := a.copied(ctx, r)
		if err != nil {
			return nil, err
		}
		recs, err := readRecords(ctx, fb.S, cluster.TP{Topic: r.Topic, Partition: r.Partition}, max(r.From, last+1), r.To)
		if err != nil {
			return nil, err
		}
		out := make([]cluster.Record, 0, len(recs))
		for _, x := range recs {
			hs := append([]cluster.Header{{Key: HeaderStrandedTopic, Value: []byte(r.Topic)}, {Key: HeaderStrandedPartition, Value: []byte(strconv.Itoa(int(r.Partition)))},
				{Key: HeaderStrandedOffset, Value: []byte(strconv.FormatInt(x.Offset, 10))}}, x.Headers...)
			out = append(out, cluster.Record{Topic: q, Partition: r.Partition, Key: x.Key, Value: x.Value, Headers: hs, Timestamp: x.Timestamp})
		}
		if len(out) > 0 {
			if _, err := prod.ProduceSync(ctx, out); err != nil {
				return nil, fmt.Errorf("copying stranded records of %s[%d] to %s on %s: %w", r.Topic, r.Partition, q, fb.F.Source, err)
			}
		}
		copiedN += int64(len(out))
	}
	return map[string]int64{"stranded": total, "copied": copiedN}, nil
}

// readRecords reads the records of tp in [from, to).
func readRecords(ctx context.Context, c cluster.Cluster, tp cluster.TP, from, to int64) ([]cluster.Record, error) {
	if from >= to {
		return nil, nil
	}
	r, err := c.NewReader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if err := r.Assign(map[cluster.TP]int64{tp: from}); err != nil {
		return nil, err
	}
	var out []cluster.Record
	idle := time.Now()
	for {
		if len(out) > 0 && out[len(out)-1].Offset >= to-1 {
			return out, nil
		}
		recs, err := r.Poll(ctx, 5000, 300*time.Millisecond)
		if err != nil {
			return nil, err
		}
		if len(recs) == 0 {
			if time.Since(idle) > cluster.DefaultIdle {
				return out, nil
			}
			continue
		}
		idle = time.Now()
		for _, x := range recs {
			if x.Offset >= from && x.Offset < to {
				out = append(out, x)
			}
			if x.Offset >= to-1 {
				return out, nil
			}
		}
	}
}

type storeReverseAt struct{ fb *Failback }

func (a storeReverseAt) rp() ReverseProgress { return ReverseProgress{Rev: a.fb.Rev, On: a.fb.S} }

func (a storeReverseAt) Check(ctx context.Context, _ plan.Step) (bool, error) {
	miss, err := a.rp().Missing(ctx, a.fb.State.ReverseEnds)
	return len(miss) == 0, err
}

func (a storeReverseAt) Apply(ctx context.Context, _ plan.Step) (map[string]int64, error) {
	miss, err := a.rp().Missing(ctx, a.fb.State.ReverseEnds)
	if err != nil {
		return nil, err
	}
	n, err := a.rp().Store(ctx, miss)
	return map[string]int64{"positions_written": n}, err
}

type removeFence struct{ fb *Failback }

// of returns the step's ACLs and their cluster: failback's own fence on T (in the step's
// params), or failover's on S (in the flow state).
func (a removeFence) of(s plan.Step) ([]flowstate.FenceACL, cluster.Cluster, string, error) {
	if len(s.Params) > 0 {
		p, err := fenceParams(s)
		return p.ACLs, a.fb.T, a.fb.F.Target, err
	}
	return a.fb.State.Fence.ACLs, a.fb.S, a.fb.F.Source, nil
}

func (a removeFence) Check(ctx context.Context, s plan.Step) (bool, error) {
	acls, c, _, err := a.of(s)
	if err != nil {
		return false, err
	}
	_, n, err := HasACLs(ctx, c, acls)
	return n == 0, err
}

func (a removeFence) Apply(ctx context.Context, s plan.Step) (map[string]int64, error) {
	acls, c, alias, err := a.of(s)
	if err != nil {
		return nil, err
	}
	bs := make([]cluster.ACL, len(acls))
	for i, x := range acls {
		bs[i] = ACLBinding(x)
	}
	if err := c.DeleteACLs(ctx, bs...); err != nil {
		return nil, fmt.Errorf("deleting the fence's ACLs on %s: %w", alias, err)
	}
	return map[string]int64{"acls": int64(len(bs))}, nil
}

// revTopics are the topics on T the reverse flow copies, sorted, once each.
func (fb *Failback) revTopics() []string {
	var ts []string
	for _, tp := range fb.RevTPs {
		if !slices.Contains(ts, tp.Topic) {
			ts = append(ts, tp.Topic)
		}
	}
	slices.Sort(ts)
	return ts
}

type storeForward struct{ fb *Failback }

func (a storeForward) ends(ctx context.Context) ([]flowstate.TopicEnd, ReverseProgress, error) {
	ends, err := ReverseEnds(ctx, a.fb.F, a.fb.S)
	return ends, ReverseProgress{Rev: a.fb.F, On: a.fb.T}, err
}

func (a storeForward) Check(ctx context.Context, _ plan.Step) (bool, error) {
	ends, rp, err := a.ends(ctx)
	if err != nil {
		return false, err
	}
	miss, err := rp.Missing(ctx, ends)
	return len(miss) == 0, err
}

func (a storeForward) Apply(ctx context.Context, _ plan.Step) (map[string]int64, error) {
	ends, rp, err := a.ends(ctx)
	if err != nil {
		return nil, err
	}
	miss, err := rp.Missing(ctx, ends)
	if err != nil {
		return nil, err
	}
	n, err := rp.Store(ctx, miss)
	return map[string]int64{"partitions": int64(len(ends)), "positions_written": n}, err
}
