package switchover

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kmmproject/kmm/pkg/checkpoint"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/flowstate"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/mm2read"
	"github.com/kmmproject/kmm/pkg/plan"
	"github.com/kmmproject/kmm/pkg/verify"
)

// Env is how the DR commands' preflights reach what is not one of the clusters they were handed.
type Env struct {
	// Clusters opens flows' sides (the drift check's verify read, emergency's checkpoints read).
	Clusters cluster.Opener
	// Groups describes Kafka Connect groups (the "no Apache MM2" gate); nil: that gate warns.
	Groups cluster.GroupProber
	// Now is the clock (checkpoint ages, plans); nil: time.Now.
	Now func() time.Time
	// Warn receives what the user should read that refuses nothing (a check that could not run).
	Warn func(msg string)
}

func (e Env) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e Env) warn(format string, args ...any) {
	if e.Warn != nil {
		e.Warn(fmt.Sprintf(format, args...))
	}
}

// preflightBound bounds the reads of a preflight.
const preflightBound = 2 * time.Minute

// FailoverRequest is what the user asked of `kmm failover`.
type FailoverRequest struct {
	F       *flow.Flow
	Reverse *flow.Flow // the file's flow T->S (nil: none)
	Mode    string     // planned, rehearse or emergency
	// Groups (--group) and GroupMatch (--groups, the regex GroupsRegex) select the groups; with
	// neither, the flow's groups filter does.
	Groups      []string
	GroupMatch  func(string) bool
	GroupsRegex string
	Force       bool
	// MaxCkAge: --max-checkpoint-age (0 off); MaxRPO: --max-rpo-records (emergency; -1 off);
	// AcceptLoss: --accept-loss (emergency: the loss gates pass).
	MaxCkAge   time.Duration
	MaxRPO     int64
	AcceptLoss bool
	QuietFor   time.Duration
	Timeout    time.Duration
	Fence      FenceOptions
	By         string // user@host
}

// selectGroups is the groups of list the request selects (sorted), and the usage refusal of a
// --group that is not among them or a --groups that matches none ("" when none).
func selectGroups(list []string, groups []string, match func(string) bool, regex string, filter func(string) bool) []string {
	var out []string
	for _, g := range list {
		switch {
		case len(groups) > 0:
			if !slices.Contains(groups, g) {
				continue
			}
		case match != nil:
			if !match(g) {
				continue
			}
		case filter != nil && !filter(g):
			continue
		}
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}

// gateGroups is the usage gate "groups": every --group is among the groups found, a --groups
// regex matches at least one. notFound words a missing group.
func (g *Gates) gateGroups(found []string, req []string, regex string, notFound func(group string) error, noneMatch error) {
	in := map[string]any{"selected": found}
	for _, x := range req {
		if !slices.Contains(found, x) {
			g.refuse("groups", in, notFound(x))
			return
		}
	}
	if regex != "" && len(found) == 0 {
		g.refuse("groups", in, noneMatch)
		return
	}
	g.judge("groups", in, nil, "", false)
}

// gateInactive is the gate "groups-inactive": no selected group has members on the given sides
// (their consumers are stopped); --force overrides.
func (g *Gates) gateInactive(ctx context.Context, groups []string, force bool, sides ...cluster.Cluster) error {
	var problems []string
	members := map[string]any{}
	for _, c := range sides {
		if len(groups) == 0 {
			break
		}
		ds, err := c.DescribeGroups(ctx, groups...)
		if err != nil {
			return err
		}
		for _, d := range ds {
			if d.Members > 0 {
				members[d.ID+"@"+c.Alias()] = d.Who
				var who []string
				for _, m := range d.Who {
					who = append(who, fmt.Sprintf("client id %s on host %s", m.ClientID, strings.TrimPrefix(m.Host, "/")))
				}
				problems = append(problems, fmt.Sprintf("group %s has %d member(s) on %s (%s): stop its consumers first; a consumer that crashed stays a member until its session times out (session.timeout.ms after its last heartbeat: 45 s by default), then run again",
					d.ID, d.Members, c.Alias(), strings.Join(who, "; ")))
			}
		}
	}
	g.judge("groups-inactive", map[string]any{"groups": len(groups), "members": members}, problems, "--force", force)
	return nil
}

// gateNoMM2 is the gate "no-mm2": Apache MM2 does not run the flows (its Connect group on each
// flow's target has no member); --force overrides. MM2 would go on writing into the new primary
// (and, after an emergency, resume when the source returns).
func (g *Gates) gateNoMM2(ctx context.Context, env Env, force bool, flows ...*flow.Flow) {
	var problems []string
	for _, f := range flows {
		if p := MM2Running(ctx, env, f); p != "" {
			problems = append(problems, p)
		}
	}
	g.judge("no-mm2", map[string]any{"flows": len(flows)}, problems, "--force", force)
}

// creatable is a topic a plan may create on c, and the key of the file that sets its replication
// factor.
type creatable struct {
	c   cluster.Cluster
	t   cluster.NewTopic
	key string
}

// stateTopic is __kmm_state on c as the flow's plans create it.
func stateTopic(c cluster.Cluster, f *flow.Flow) creatable {
	return creatable{c, cluster.NewTopic{Name: plan.StateTopic, Partitions: 1, RF: f.StateTopicRF(), Configs: plan.StateTopicConfigs()},
		"checkpoints.topic.replication.factor"}
}

// offsetsTopic is flow f's Connect offsets topic on c (its target) as progress stores create it.
func offsetsTopic(c cluster.Cluster, f *flow.Flow) creatable {
	return creatable{c, cluster.NewTopic{Name: f.OffsetsTopic, Partitions: f.OffsetsTopicPartitions, RF: f.OffsetsTopicRF, Configs: map[string]string{"cleanup.policy": "compact"}},
		f.Target + ".offset.storage.replication.factor"}
}

// gateCreatable is the gate "topics-creatable": every topic the plan may create exists, or the
// cluster says it would create it (CreateTopics with validate-only: the replication factor
// against its brokers, the principal's CREATE right, its policies), so that neither a dry run
// nor the preflight passes a plan that then stops half way (a failover that committed the
// groups on the target and could not store the reverse progress).
func (g *Gates) gateCreatable(ctx context.Context, needs []creatable) error {
	var problems []string
	topics := map[cluster.Cluster]map[string]cluster.TopicInfo{}
	for _, n := range needs {
		ts, ok := topics[n.c]
		if !ok {
			var err error
			if ts, err = n.c.ListTopics(ctx); err != nil {
				return err
			}
			topics[n.c] = ts
		}
		if _, ok := ts[n.t.Name]; ok {
			continue
		}
		res, err := n.c.ValidateTopics(ctx, []cluster.NewTopic{n.t})
		if err != nil {
			return err
		}
		if e := res[n.t.Name]; e != nil && !errors.Is(e, cluster.ErrTopicExists) {
			problems = append(problems, fmt.Sprintf("the plan creates topic %s on %s (replication factor %d), which %s refuses: %v; set %s to at most its brokers (-1: the broker default), or grant CREATE on it",
				n.t.Name, n.c.Alias(), n.t.RF, n.c.Alias(), e, n.key))
		}
	}
	g.judge("topics-creatable", map[string]any{"topics": len(needs)}, problems, "", false)
	return nil
}

// MM2Running is the check "no Apache MM2 runs the flow": MM2's Connect group (the worker's
// group.id, default <S>-mm2) on the target has members; it returns the problem ("" when none).
// It warns (through env) when the group cannot be described: the check does not block then.
func MM2Running(ctx context.Context, env Env, f *flow.Flow) string {
	if f.MM2Group == "" {
		return ""
	}
	if env.Groups == nil {
		env.warn("warning: could not check whether Apache MM2 runs flow %s (no group prober)", f.Name())
		return ""
	}
	g, err := env.Groups.DescribeAnyGroup(ctx, f, flow.Target, f.MM2Group)
	if err != nil {
		env.warn("warning: could not check whether Apache MM2 runs flow %s (Connect group %s on %s): %v", f.Name(), f.MM2Group, f.Target, err)
		return ""
	}
	if g.Members > 0 {
		return fmt.Sprintf("Apache MirrorMaker 2 is running flow %s (Connect group %s on %s has %d member(s), state %s): stop MM2 first",
			f.Name(), f.MM2Group, f.Target, g.Members, g.State)
	}
	return ""
}

// Drift is the "config/ACL drift reported" part of the preflights: verify's metadata checks of
// flow f's topic configs (equal modulo config.properties.exclude) and ACL coverage (who may
// read or write a source topic may on its remote topic), as plan notes. Drift is reported, never
// refused: after the cut-over it is what consumers and producers meet on the new primary. A
// check that cannot run is a note too.
func Drift(ctx context.Context, env Env, f *flow.Flow) []string {
	rep, err := verify.Run(ctx, env.Clusters, f, verify.Options{Level: verify.LevelMetadata, Groups: func(string) bool { return false }})
	if err != nil {
		return []string{fmt.Sprintf("drift of %s not checked: %v", f.Name(), err)}
	}
	var out []string
	for _, fd := range rep.Findings {
		if (fd.Check != verify.CheckConfigs && fd.Check != verify.CheckACLs) || fd.Status == verify.OK {
			continue
		}
		where := f.Name()
		if fd.Topic != "" {
			where = fmt.Sprintf("%s: topic %s (%s on %s)", f.Name(), fd.Topic, fd.RemoteTopic, f.Target)
		}
		out = append(out, fmt.Sprintf("drift (%s, %s): %s: %s", fd.Check, fd.Status, where, fd.Reason))
	}
	return out
}

// gateFlowState is the gate "flow-state" of a failover: the flow is not FAILED_OVER or
// FAILING_BACK already.
func (g *Gates) gateFlowState(f *flow.Flow, st *flowstate.FlowRecord, emergency bool) {
	in := map[string]any{"state": st.State, "epoch": st.Epoch}
	switch {
	case st.State == flowstate.FailedOver && !emergency:
		g.refuse("flow-state", in, kerr.WithHint(kerr.New(kerr.CheckFailed, "flow %s is already FAILED_OVER (epoch %d, %s, by %s, run %s)", f.Name(), st.Epoch, st.At.Format(time.RFC3339), st.By, st.RunID),
			fmt.Sprintf("nothing to do; to go back, kmm failback FILE --flow '%s'", f.Name())))
	case st.State == flowstate.FailingBack && !emergency:
		g.refuse("flow-state", in, kerr.New(kerr.CheckFailed, "flow %s is FAILING_BACK (epoch %d): finish the failback first", f.Name(), st.Epoch))
	case st.State == flowstate.FailedOver || st.State == flowstate.FailingBack:
		g.refuse("flow-state", in, kerr.New(kerr.CheckFailed, "flow %s is already %s (epoch %d, %s, by %s): nothing was changed", f.Name(), st.State, st.Epoch, st.At.Format(time.RFC3339), st.By))
	default:
		g.judge("flow-state", in, nil, "", false)
	}
}

// PrepareFailover is the preflight of a planned failover or a rehearsal: it reads both clusters,
// judges every gate (see Gates) and returns the Failover to plan. A refusal is err (nothing was
// written); the gates are returned with it.
func PrepareFailover(ctx context.Context, env Env, req FailoverRequest, src, tgt cluster.Cluster) (*Failover, Gates, error) {
	ctx, cancel := context.WithTimeout(ctx, preflightBound)
	defer cancel()
	f := req.F
	rehearse := req.Mode == "rehearse"
	var gates Gates
	st, err := ReadFlowState(ctx, f, tgt, src)
	if err != nil {
		return nil, gates, err
	}
	gates.gateFlowState(f, st, false)
	if err := gates.Err(); err != nil {
		return nil, gates, err
	}
	sts, err := src.ListTopics(ctx)
	if err != nil {
		return nil, gates, err
	}
	tts, err := tgt.ListTopics(ctx)
	if err != nil {
		return nil, gates, err
	}
	var topics []string
	for t := range sts {
		// Heartbeats are kmm's and MM2's own records, written all the time by other flows: not
		// the application's data, and never quiet.
		if f.Selected(t) && !f.Policy.IsHeartbeatsTopic(t) {
			topics = append(topics, t)
		}
	}
	sort.Strings(topics)
	var tps []cluster.TP
	var problems []string
	for _, t := range topics {
		rt := f.RemoteTopic(t)
		if tts[rt].Partitions == 0 {
			problems = append(problems, fmt.Sprintf("topic %s has no remote topic %s on %s", t, rt, f.Target))
			continue
		}
		if tts[rt].Partitions != sts[t].Partitions {
			problems = append(problems, fmt.Sprintf("topic %s has %d partition(s) on %s, %s has %d on %s", t, sts[t].Partitions, f.Source, rt, tts[rt].Partitions, f.Target))
		}
		for p := 0; p < sts[t].Partitions; p++ {
			tps = append(tps, cluster.TP{Topic: t, Partition: int32(p)})
		}
	}
	if len(tps) == 0 && len(problems) == 0 {
		gates.refuse("topics", map[string]any{"topics": 0}, kerr.New(kerr.CheckFailed, "flow %s replicates no topic of %s: nothing to fail over", f.Name(), f.Source))
		return nil, gates, gates.Err()
	}
	gates.judge("remote-topics", map[string]any{"topics": len(topics), "partitions": len(tps)}, problems, "", false)

	// The groups to move: committed offsets on the flow's topics on S.
	inFlow := map[string]bool{}
	for _, t := range topics {
		inFlow[t] = true
	}
	list, err := src.ListGroups(ctx)
	if err != nil {
		return nil, gates, err
	}
	var ids []string
	for _, g := range list {
		ids = append(ids, g.ID)
	}
	var groups []string
	for _, g := range selectGroups(ids, req.Groups, req.GroupMatch, req.GroupsRegex, f.GroupFilter) {
		offs, err := src.ListGroupOffsets(ctx, g)
		if err != nil {
			return nil, gates, err
		}
		for tp := range offs {
			if inFlow[tp.Topic] {
				groups = append(groups, g)
				break
			}
		}
	}
	gates.gateGroups(groups, req.Groups, req.GroupsRegex,
		func(g string) error {
			return kerr.WithHint(kerr.New(kerr.Usage, "group %s has no committed offset on %s for the topics of %s", g, f.Source, f.Name()),
				"list the groups with kmm translate-offsets FILE --flow '"+f.Name()+"'")
		},
		kerr.New(kerr.Usage, "--groups %q matches no group with committed offsets on %s for the topics of %s", req.GroupsRegex, f.Source, f.Name()))
	if err := gates.Err(); err != nil && kerr.KindOf(err) == kerr.Usage {
		return nil, gates, err
	}
	if !rehearse { // a rehearsal has no downtime: the groups keep running, and it changes nothing MM2 writes
		if err := gates.gateInactive(ctx, groups, req.Force, tgt, src); err != nil {
			return nil, gates, err
		}
		gates.gateNoMM2(ctx, env, req.Force, f)
	}
	if req.MaxCkAge > 0 && len(groups) > 0 {
		ages, err := CheckpointAges(ctx, f, src, tgt, nil, groups, req.MaxCkAge, env.now())
		if err != nil {
			return nil, gates, err
		}
		gates.judge("checkpoint-age", map[string]any{"max": req.MaxCkAge.String(), "groups": ages}, StaleProblems(ages, req.MaxCkAge, f), "", false)
	}
	needs := []creatable{stateTopic(tgt, f)}
	if req.Reverse != nil && !rehearse {
		needs = append(needs, offsetsTopic(src, req.Reverse))
	}
	if err := gates.gateCreatable(ctx, needs); err != nil {
		return nil, gates, err
	}
	drift := Drift(ctx, env, f)
	gates.warn("drift", map[string]any{"flow": f.Name()}, drift)
	if err := gates.Err(); err != nil {
		return nil, gates, err
	}
	return &Failover{F: f, Src: src, Tgt: tgt, Groups: groups, TPs: tps, Now: env.Now,
		Opt: FailoverOptions{Mode: req.Mode, QuietFor: req.QuietFor, Timeout: req.Timeout, By: req.By, Force: req.Force, Reverse: req.Reverse,
			Fence: req.Fence, Drift: drift}}, gates, nil
}

// CheckpointAge is one group's newest checkpoint on the target, as the --max-checkpoint-age
// gate judged it.
type CheckpointAge struct {
	Group string `json:"group"`
	// Newest is the time of the group's newest checkpoint record (zero: none); AgeMs its age
	// at the failover (-1: no checkpoint).
	Newest time.Time `json:"newest_checkpoint,omitempty"`
	AgeMs  int64     `json:"age_ms"`
	// Behind (planned mode): the group committed on the source past its checkpoints. A group
	// whose last commit is checkpointed is fresh however old the checkpoint is.
	Behind bool `json:"behind,omitempty"`
	Stale  bool `json:"stale"`
}

// CheckpointAges judges the selected groups' checkpoints on the target against maxAge at now.
// With src (planned mode) only groups that committed on the source past their checkpoints can
// be stale; without it (emergency: the source is down) every group older than maxAge is. st
// holds the checkpoints already read (nil: read them from tgt).
func CheckpointAges(ctx context.Context, f *flow.Flow, src, tgt cluster.Cluster, st *checkpoint.Store, groups []string, maxAge time.Duration, now time.Time) ([]CheckpointAge, error) {
	if st == nil {
		st = checkpoint.NewStore()
		keep := map[string]bool{}
		for _, g := range groups {
			keep[g] = true
		}
		if _, err := mm2read.LoadCheckpoints(ctx, tgt, f.CheckpointsTopic(), st, func(g string) bool { return keep[g] }); err != nil && !errors.Is(err, mm2read.ErrNoTopic) {
			return nil, err
		}
	}
	var out []CheckpointAge
	for _, g := range groups {
		a := CheckpointAge{Group: g, AgeMs: -1}
		upstream := map[cluster.TP]int64{}
		for _, e := range st.Entries(g) {
			if e.Time.After(a.Newest) {
				a.Newest = e.Time
			}
			up := e.Topic
			if u, ok := f.UpstreamTopic(e.Topic); ok {
				up = u
			}
			upstream[cluster.TP{Topic: up, Partition: e.Partition}] = e.UpstreamOffset
		}
		if !a.Newest.IsZero() {
			a.AgeMs = max(0, now.Sub(a.Newest).Milliseconds())
		}
		old := a.AgeMs < 0 || time.Duration(a.AgeMs)*time.Millisecond > maxAge
		if src != nil {
			offs, err := src.ListGroupOffsets(ctx, g)
			if err != nil {
				return nil, err
			}
			for tp, om := range offs {
				if !f.Selected(tp.Topic) || om.Offset < 0 {
					continue
				}
				if ck, ok := upstream[tp]; !ok || om.Offset > ck {
					a.Behind = true
				}
			}
			a.Stale = old && a.Behind
		} else {
			a.Stale = old
		}
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Group < out[j].Group })
	return out, nil
}

// StaleProblems words the stale groups for a refusal.
func StaleProblems(ages []CheckpointAge, maxAge time.Duration, f *flow.Flow) []string {
	var out []string
	for _, a := range ages {
		if !a.Stale {
			continue
		}
		switch {
		case a.AgeMs < 0:
			out = append(out, fmt.Sprintf("group %s has no checkpoint on %s (--max-checkpoint-age %s)", a.Group, f.Target, maxAge))
		case a.Behind:
			out = append(out, fmt.Sprintf("group %s committed on %s past its newest checkpoint on %s, which is %s old (--max-checkpoint-age %s)",
				a.Group, f.Source, f.Target, (time.Duration(a.AgeMs)*time.Millisecond).Round(time.Second), maxAge))
		default:
			out = append(out, fmt.Sprintf("group %s: its newest checkpoint on %s is %s old (--max-checkpoint-age %s)",
				a.Group, f.Target, (time.Duration(a.AgeMs)*time.Millisecond).Round(time.Second), maxAge))
		}
	}
	return out
}
