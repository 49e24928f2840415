package switchover

import (
	"context"
	"fmt"
	"time"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/flowstate"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/plan"
)

// FailbackRequest is what the user asked of `kmm failback` for flow F (S->T, failed over); Rev
// is the file's reverse flow T->S.
type FailbackRequest struct {
	F, Rev      *flow.Flow
	Groups      []string
	GroupMatch  func(string) bool
	GroupsRegex string
	Stranded    string
	Fence       FenceOptions
	QuietFor    time.Duration
	Timeout     time.Duration
	Force       bool
	// MaxRevLag: --max-reverse-lag (-1: no gate).
	MaxRevLag int64
	// StartReverse runs the reverse flow in this process (--start-reverse; see
	// FailbackOptions.StartReverse); nil: the user runs kmm replicate T->S.
	StartReverse func(ctx context.Context) error
	By           string
}

// ReverseToStart is the reverse flow as failback --start-reverse runs it in process: enabled
// (the file may leave T->S disabled: it drives kmm replicate, and MM2 then runs it for
// heartbeats only), with the offset syncs failback translates over. A flow without a topics
// filter is a usage error.
func ReverseToStart(rev *flow.Flow) (*flow.Flow, error) {
	r := *rev
	r.EmitOffsetSyncs = true
	f, err := flow.AsEnabled(&r)
	if err != nil {
		return nil, kerr.Wrap(kerr.Usage, fmt.Errorf("--start-reverse: %w", err))
	}
	return f, nil
}

// PrepareFailback is failback's preflight: it reads both clusters, judges every gate and returns
// the Failback to plan. A refusal is err (nothing was written); the gates come with it.
func PrepareFailback(ctx context.Context, env Env, req FailbackRequest, src, tgt cluster.Cluster) (*Failback, Gates, error) {
	ctx, cancel := context.WithTimeout(ctx, preflightBound)
	defer cancel()
	f, rev := req.F, req.Rev
	var gates Gates
	st, err := ReadFlowState(ctx, f, tgt, src)
	if err != nil {
		return nil, gates, err
	}
	in := map[string]any{"state": st.State, "epoch": st.Epoch}
	if st.State != flowstate.FailedOver && st.State != flowstate.FailingBack {
		gates.refuse("flow-state", in, kerr.WithHint(kerr.New(kerr.CheckFailed, "flow %s is %s (epoch %d), not FAILED_OVER: nothing to fail back; nothing was changed", f.Name(), st.State, st.Epoch),
			fmt.Sprintf("kmm failover FILE --flow '%s' makes %s the primary; failback returns from it", f.Name(), f.Target)))
		return nil, gates, gates.Err()
	}
	gates.judge("flow-state", in, nil, "", false)
	if st.State == flowstate.FailingBack { // a resumed failback: the cut is kept in the record
		env.warn("flow %s is FAILING_BACK (epoch %d): continuing that failback", f.Name(), st.Epoch)
	}
	tts, err := tgt.ListTopics(ctx)
	if err != nil {
		return nil, gates, err
	}
	// Partitions the reverse flow copies (heartbeats are never quiet, and not the application's).
	all, err := ReverseTPs(ctx, rev, tgt)
	if err != nil {
		return nil, gates, err
	}
	var revTPs []cluster.TP
	for _, tp := range all {
		if !rev.Policy.IsHeartbeatsTopic(tp.Topic) {
			revTPs = append(revTPs, tp)
		}
	}
	// Groups: committed offsets on T for the flow's remote topics or topics the reverse flow copies.
	mapped := map[string]bool{}
	for _, c := range st.Cut {
		mapped[f.RemoteTopic(c.Topic)] = true
	}
	for _, tp := range revTPs {
		mapped[tp.Topic] = true
	}
	list, err := tgt.ListGroups(ctx)
	if err != nil {
		return nil, gates, err
	}
	var ids []string
	for _, g := range list {
		ids = append(ids, g.ID)
	}
	var groups []string
	for _, g := range selectGroups(ids, req.Groups, req.GroupMatch, req.GroupsRegex, f.GroupFilter) {
		offs, err := tgt.ListGroupOffsets(ctx, g)
		if err != nil {
			return nil, gates, err
		}
		for tp := range offs {
			if mapped[tp.Topic] && tts[tp.Topic].Partitions > 0 {
				groups = append(groups, g)
				break
			}
		}
	}
	gates.gateGroups(groups, req.Groups, req.GroupsRegex,
		func(g string) error {
			return kerr.New(kerr.Usage, "group %s has no committed offset on %s for the topics of %s or %s", g, f.Target, f.Name(), rev.Name())
		},
		kerr.New(kerr.Usage, "--groups %q matches no group with committed offsets on %s", req.GroupsRegex, f.Target))
	if err := gates.Err(); err != nil {
		return nil, gates, err
	}
	if err := gates.gateInactive(ctx, groups, req.Force, src, tgt); err != nil {
		return nil, gates, err
	}
	// No Apache MM2 on either direction: A->B's would write A's records into B again, B->A's
	// would race the reverse drain and the positions failback stores.
	gates.gateNoMM2(ctx, env, req.Force, f, rev)
	// At most one kmm replicator of the reverse flow (and none with --start-reverse).
	recs, err := plan.ReadState(ctx, src)
	if err != nil {
		return nil, gates, err
	}
	alive := 0
	for _, l := range flowstate.Leases(recs, rev.Source, rev.Target) {
		if l.Alive(env.now()) {
			alive++
		}
	}
	var problems []string
	if alive > 1 {
		problems = append(problems, fmt.Sprintf("%d kmm replicate processes run %s: keep one", alive, rev.Name()))
	}
	if req.StartReverse != nil && alive > 0 {
		problems = append(problems, fmt.Sprintf("--start-reverse, but a kmm replicate process already runs %s: stop it, or drop --start-reverse", rev.Name()))
	}
	gates.judge("reverse-replicators", map[string]any{"alive": alive, "start_reverse": req.StartReverse != nil}, problems, "--force", req.Force)
	if err := gates.Err(); err != nil {
		return nil, gates, err
	}
	stranded, err := FindStranded(ctx, f, rev, src, tgt, st.Cut)
	if err != nil {
		return nil, gates, err
	}
	lagFB := &Failback{F: f, Rev: rev, S: src, T: tgt, RevTPs: revTPs, Opt: FailbackOptions{Timeout: req.Timeout}}
	lag, err := lagFB.ReverseLag(ctx)
	if err != nil {
		return nil, gates, err
	}
	env.warn("reverse flow %s: %d record(s) of %d partition(s) on %s not on %s yet", rev.Name(), lag, len(revTPs), f.Target, f.Source)
	if req.MaxRevLag >= 0 && lag > req.MaxRevLag {
		gates.refuse("max-reverse-lag", map[string]any{"records": lag, "max": req.MaxRevLag},
			kerr.WithHint(kerr.New(kerr.CheckFailed, "reverse flow %s has %d record(s) left to copy, more than --max-reverse-lag %d; nothing was changed", rev.Name(), lag, req.MaxRevLag),
				fmt.Sprintf("let kmm replicate FILE --flow '%s' catch up, then run failback again", rev.Name())))
		return nil, gates, gates.Err()
	}
	gates.judge("max-reverse-lag", map[string]any{"records": lag, "max": req.MaxRevLag}, nil, "", false)
	remoteWrites, err := FindRemoteWrites(ctx, f, rev, tgt, st.Cut)
	if err != nil {
		return nil, gates, err
	}
	// The topics failback's steps may create: the state topic on both sides (both copies are
	// required), the reverse flow's progress on S, the flow's own on T, the quarantine topics.
	needs := []creatable{stateTopic(tgt, f), stateTopic(src, f), offsetsTopic(tgt, f)}
	if len(st.ReverseEnds) > 0 {
		needs = append(needs, offsetsTopic(src, rev))
	}
	if req.Stranded == StrandedQuarantine {
		parts := map[string]int{}
		for _, r := range stranded {
			if r.Records > 0 {
				parts[r.Topic] = max(parts[r.Topic], int(r.Partition)+1)
			}
		}
		for t, n := range parts {
			needs = append(needs, creatable{src, cluster.NewTopic{Name: StrandedTopic(t), Partitions: n, RF: f.StateTopicRF()}, "checkpoints.topic.replication.factor"})
		}
	}
	if err := gates.gateCreatable(ctx, needs); err != nil {
		return nil, gates, err
	}
	drift := Drift(ctx, env, f)
	gates.warn("drift", map[string]any{"flow": f.Name()}, drift)
	return &Failback{F: f, Rev: rev, S: src, T: tgt, State: st, Groups: groups, RevTPs: revTPs, Stranded: stranded, RemoteWrites: remoteWrites, Now: env.Now,
		Opt: FailbackOptions{StartReverse: req.StartReverse, Stranded: req.Stranded, QuietFor: req.QuietFor, Timeout: req.Timeout, By: req.By, Force: req.Force,
			Fence: req.Fence, Drift: drift}}, gates, nil
}
