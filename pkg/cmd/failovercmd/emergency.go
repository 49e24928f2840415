package failovercmd

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kmmproject/kmm/pkg/checkpoint"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/flowstate"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/output"
	"github.com/kmmproject/kmm/pkg/plan"
	"github.com/kmmproject/kmm/pkg/snapshot"
	"github.com/kmmproject/kmm/pkg/switchover"
)

// RPORow is one source partition's loss in an emergency failover.
type RPORow struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// SourceEnd is the source's end offset in the last snapshot kmm replicate stored on the
	// target, SnapshotAgeMs how old that snapshot was at the cut.
	SourceEnd     int64 `json:"source_end_snapshot"`
	SnapshotAgeMs int64 `json:"snapshot_age_ms"`
	// Replicated is the replicated position (next source offset not on the target) and how it
	// is known.
	Replicated       int64  `json:"replicated"`
	ReplicatedSource string `json:"replicated_source"`
	// RPORecords: records written on the source (by the snapshot's time) that are not on the
	// target; records written after the snapshot are not known.
	RPORecords int64 `json:"rpo_records"`
}

type emergencyEnvelope struct {
	output.Envelope
	Plan      *plan.Plan `json:"plan"`
	Report    *plan.Run  `json:"report,omitempty"`
	RTOMillis int64      `json:"rto_ms,omitempty"`
	RPO       []RPORow   `json:"rpo"`
	RPOTotal  int64      `json:"rpo_records"`
	// CheckpointAges: the --max-checkpoint-age gate's view of each group (when the gate is set).
	CheckpointAges []CheckpointAge `json:"checkpoint_ages,omitempty"`
}

// runEmergency fails over from what the target holds: the source is proven unreachable (or
// --force), the RPO per partition comes from the source end-offset snapshot kmm replicate
// stored on the target and the replicated position, groups are translated from the checkpoints.
func runEmergency(ctx context.Context, o *Options, fac *cmdutil.Factory, f *flow.Flow, flows []*flow.Flow,
	open func(flow.Side, string, string) (cluster.Cluster, error), groupMatch func(string) bool, start time.Time) error {
	ios := fac.IO
	tgt, err := open(flow.Target, f.Target, f.TargetBootstrap)
	if err != nil {
		return err
	}
	defer tgt.Close()
	if src, err := open(flow.Source, f.Source, f.SourceBootstrap); err == nil {
		src.Close()
		if !o.Force {
			return kerr.WithHint(kerr.New(kerr.CheckFailed, "source cluster %s (%s) is reachable: emergency failover is for a source that is down; nothing was changed", f.Source, f.SourceBootstrap),
				"use --mode planned (exact, nothing lost), or --force to fail over from what the target holds anyway")
		}
		fmt.Fprintf(ios.ErrOut, "kmm: --force: source cluster %s is reachable; failing over from what %s holds\n", f.Source, f.Target)
	} else {
		fmt.Fprintf(ios.ErrOut, "kmm: source cluster %s is unreachable (%v): failing over from what %s holds\n", f.Source, err, f.Target)
	}
	pctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if !o.Force {
		if pr := cmdutil.MM2Running(pctx, fac, f, ios.ErrOut); pr != "" {
			return kerr.New(kerr.CheckFailed, "preflight failed, nothing was changed:\n  %s", pr)
		}
	}
	st, err := switchover.ReadFlowState(pctx, f, tgt, nil)
	if err != nil {
		return err
	}
	if st.State == flowstate.FailedOver || st.State == flowstate.FailingBack {
		return kerr.New(kerr.CheckFailed, "flow %s is already %s (epoch %d, %s, by %s): nothing was changed", f.Name(), st.State, st.Epoch, st.At.Format(time.RFC3339), st.By)
	}
	state, err := plan.ReadState(pctx, tgt)
	if err != nil {
		return err
	}
	ends, err := flowstate.DecodeEnds(state[flowstate.EndsKey(f.Source, f.Target)])
	if err != nil {
		return err
	}
	if ends == nil && !o.AcceptLoss {
		return kerr.WithHint(kerr.New(kerr.CheckFailed, "no source end-offset snapshot of %s on %s (kmm replicate stores one every 5 s): the loss cannot be stated; nothing was changed", f.Name(), f.Target),
			"pass --accept-loss to fail over without an RPO")
	}
	var tps []cluster.TP
	sourceEnds := map[cluster.TP]int64{}
	if ends != nil {
		for t, ps := range ends.Ends {
			if f.Policy.IsHeartbeatsTopic(t) {
				continue
			}
			for p, e := range ps {
				tp := cluster.TP{Topic: t, Partition: int32(p)}
				tps = append(tps, tp)
				sourceEnds[tp] = e
			}
		}
	}
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
	rpo := func(ctx context.Context) ([]RPORow, int64, error) {
		if len(tps) == 0 {
			return nil, 0, nil
		}
		// The snapshot's ends are not the source's end now (SourceEnds: unknown, the source is
		// down): records written between the last snapshot and the outage may be on the target
		// too, and clamping the replicated position to the snapshot would under-state what the
		// target holds (and so mis-state the RPO).
		pos, err := snapshot.Positions(ctx, snapshot.PositionQuery{Flow: f, Target: tgt, TPs: tps})
		if err != nil {
			return nil, 0, err
		}
		var rows []RPORow
		var total int64
		for _, tp := range tps {
			p := pos[tp].Position
			r := RPORow{Topic: tp.Topic, Partition: tp.Partition, SourceEnd: sourceEnds[tp], SnapshotAgeMs: time.Since(ends.At).Milliseconds(),
				Replicated: p.Next, ReplicatedSource: p.Source, RPORecords: max(0, sourceEnds[tp]-p.Next)}
			total += r.RPORecords
			rows = append(rows, r)
		}
		return rows, total, nil
	}
	rows, total, err := rpo(pctx)
	if err != nil {
		return err
	}
	if o.MaxRPO >= 0 && total > o.MaxRPO && !o.AcceptLoss {
		return kerr.WithHint(kerr.New(kerr.CheckFailed, "%d record(s) written on %s are not on %s (more than --max-rpo-records %d); nothing was changed", total, f.Source, f.Target, o.MaxRPO),
			"pass --accept-loss to fail over anyway")
	}
	// Groups: those the checkpoints on T know.
	in, _, err := snapshot.TranslateInput(pctx, fac.Clusters, f, fac.Clock())
	if err != nil {
		return err
	}
	var groups []string
	for _, g := range in.Checkpoints.Groups() {
		switch {
		case len(o.Groups) > 0 && !slices.Contains(o.Groups, g):
		case len(o.Groups) == 0 && groupMatch != nil && !groupMatch(g):
		case len(o.Groups) == 0 && groupMatch == nil && !f.GroupFilter(g):
		default:
			groups = append(groups, g)
		}
	}
	sort.Strings(groups)
	for _, g := range o.Groups {
		if !slices.Contains(groups, g) {
			return kerr.New(kerr.Usage, "group %s has no checkpoint on %s: it cannot be translated without the source", g, f.Target)
		}
	}
	if o.GroupsRegex != "" && len(groups) == 0 {
		return kerr.New(kerr.Usage, "--groups %q matches no group with checkpoints on %s", o.GroupsRegex, f.Target)
	}
	var ckAges []CheckpointAge
	if o.MaxCkAge > 0 && len(groups) > 0 {
		if ckAges, err = checkpointAges(pctx, f, nil, tgt, in.Checkpoints, groups, o.MaxCkAge, time.Now()); err != nil {
			return err
		}
		if stale := staleProblems(ckAges, o.MaxCkAge, f); len(stale) > 0 {
			if !o.AcceptLoss {
				return kerr.WithHint(kerr.New(kerr.CheckFailed, "stale checkpoints: the groups' positions on %s may be later than what %s knows; nothing was changed:\n  %s", f.Source, f.Target, strings.Join(stale, "\n  ")),
					"pass --accept-loss to fail over anyway (the groups re-read from their last checkpoint)")
			}
			fmt.Fprintf(ios.ErrOut, "kmm: --accept-loss: failing over despite stale checkpoints:\n  %s\n", strings.Join(stale, "\n  "))
		}
	}
	if len(groups) > 0 && !o.Force {
		ds, err := tgt.DescribeGroups(pctx, groups...)
		if err != nil {
			return err
		}
		var active []string
		for _, d := range ds {
			if d.Members > 0 {
				active = append(active, fmt.Sprintf("group %s has %d member(s) on %s", d.ID, d.Members, f.Target))
			}
		}
		if len(active) > 0 {
			return kerr.New(kerr.CheckFailed, "preflight failed, nothing was changed:\n  %s\n  (stop their consumers first, or --force)", strings.Join(active, "\n  "))
		}
	}
	in.Groups = groups
	fo := &switchover.Failover{F: f, Tgt: tgt, Groups: groups, TPs: tps,
		Opt: switchover.FailoverOptions{Mode: "emergency", Emergency: true, Timeout: o.Timeout, By: userAtHost(), Force: o.Force, Reverse: reverseOf(flows, f),
			Progress: func(msg string) { fmt.Fprintf(ios.ErrOut, "kmm: %s\n", msg) },
			Translate: func(context.Context) ([]switchover.ExactOffset, error) {
				var out []switchover.ExactOffset
				for _, g := range checkpoint.Translate(in) {
					for _, r := range g.Rows {
						e := switchover.ExactOffset{Group: g.Group, Topic: r.SourceTopic, Partition: r.Partition, RemoteTopic: r.TargetTopic,
							SourceOffset: r.SourceOffset, TargetOffset: r.TargetOffset, Metadata: r.Metadata, Exact: r.Bound == 0, Rereads: r.Bound,
							Why: fmt.Sprintf("from the checkpoints on %s (%s)", f.Target, r.Derived)}
						out = append(out, e)
					}
				}
				return out, nil
			},
			Cut: func(ctx context.Context) ([]flowstate.PartitionCut, error) {
				rows, _, err := rpo(ctx)
				if err != nil {
					return nil, err
				}
				pos, err := snapshot.Positions(ctx, snapshot.PositionQuery{Flow: f, Target: tgt, TPs: tps})
				if err != nil {
					return nil, err
				}
				var cut []flowstate.PartitionCut
				for _, r := range rows {
					tp := cluster.TP{Topic: r.Topic, Partition: r.Partition}
					cut = append(cut, flowstate.PartitionCut{Topic: r.Topic, Partition: r.Partition, SourceEnd: r.SourceEnd, Replicated: r.Replicated,
						ReplicatedSource: r.ReplicatedSource, TargetEnd: pos[tp].Input.TargetEnd})
				}
				return cut, nil
			}}}
	p, err := fo.Plan()
	if err != nil {
		return err
	}
	journal := &plan.TopicJournal{C: tgt, RF: f.StateTopicRF(), RFKey: "checkpoints.topic.replication.factor", Now: fac.Clock}
	defer journal.Close()
	ex := &plan.Executor{Journal: journal, Actions: fo.Actions()}
	applied, err := cmdutil.Apply(ctx, fac, o.ApplyOpts, p, ex)
	env := emergencyEnvelope{Envelope: output.Envelope{SchemaVersion: output.SchemaVersion, Kind: "failover", GeneratedAt: fac.Clock().UTC(), Items: fo.Translated()},
		Plan: p, RPO: rows, RPOTotal: total, CheckpointAges: ckAges}
	if applied != nil && applied.Report != nil {
		env.Report = applied.Report
		// After the replicator stopped, its final progress makes the RPO exact.
		if r2, t2, rerr := rpo(ctx); rerr == nil {
			env.RPO, env.RPOTotal = r2, t2
		} else {
			fmt.Fprintf(ios.ErrOut, "kmm: re-reading the replicated positions after the stop: %v (the RPO is the one before it)\n", rerr)
		}
		for _, s := range applied.Report.Steps {
			if s.Kind == switchover.KindCommitTranslated && s.Finished != nil {
				env.RTOMillis = max(env.RTOMillis, s.Finished.Sub(start).Milliseconds())
			}
		}
	}
	ev := newEvidence(o, f, start, p, applied, err)
	if env.RTOMillis > 0 {
		ev.RTOMillis, ev.RTONote = env.RTOMillis, "start to the last group commit: consumers may resume on "+f.Target
	}
	ev.Translations, ev.CkAges, ev.RPOTotal = fo.Translated(), ckAges, env.RPOTotal
	ev.RPONote = fmt.Sprintf("written on %s by the time of the last end-offset snapshot and not on %s; records written after it are not known", f.Source, f.Target)
	for _, r := range env.RPO {
		ev.RPO = append(ev.RPO, RPOLine{Topic: r.Topic, Partition: r.Partition, SourceEnd: r.SourceEnd, Replicated: r.Replicated,
			How: fmt.Sprintf("%s; snapshot %d ms old", r.ReplicatedSource, r.SnapshotAgeMs), Records: r.RPORecords})
	}
	if ends == nil {
		ev.Notes = append(ev.Notes, "no source end-offset snapshot on "+f.Target+": the RPO is not known (--accept-loss)")
	}
	if o.Output == "json" {
		if werr := output.WriteJSON(ios.Out, env); werr != nil && err == nil {
			err = werr
		}
		return writeReport(o, ios.ErrOut, ev, err)
	}
	fmt.Fprintln(ios.Out)
	if tr := fo.Translated(); len(tr) > 0 {
		if rerr := renderTranslations(ios.Out, tr); rerr != nil && err == nil {
			err = rerr
		}
		fmt.Fprintln(ios.Out)
	}
	var cells [][]string
	for _, r := range env.RPO {
		cells = append(cells, []string{r.Topic, fmt.Sprint(r.Partition), fmt.Sprint(r.SourceEnd), fmt.Sprint(r.Replicated), r.ReplicatedSource,
			fmt.Sprint(r.RPORecords), (time.Duration(r.SnapshotAgeMs) * time.Millisecond).Round(time.Second).String()})
	}
	if terr := output.Table(ios.Out, []string{"TOPIC", "PARTITION", "SOURCE END (SNAPSHOT)", "REPLICATED", "HOW KNOWN", "RPO RECORDS", "SNAPSHOT AGE"}, cells); terr != nil && err == nil {
		err = terr
	}
	fmt.Fprintf(ios.Out, "RPO %d record(s) written on %s by the snapshot's time are not on %s; records written after it are not known\n", env.RPOTotal, f.Source, f.Target)
	return writeReport(o, ios.ErrOut, ev, err)
}
