package switchover

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kmmproject/kmm/pkg/checkpoint"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flowstate"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/lag"
	"github.com/kmmproject/kmm/pkg/plan"
	"github.com/kmmproject/kmm/pkg/snapshot"
)

// RPORow is one source partition's loss in an emergency failover.
type RPORow struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// SourceEnd is the freshest source end offset known on the target, and SourceEndHow what
	// says so: the end-offset snapshot kmm replicate stores every second (the higher of its
	// reads of the end offsets and its fetch responses' high watermarks), or a group's
	// checkpoint (a group read up to there, so the source held at least that).
	SourceEnd    int64  `json:"source_end"`
	SourceEndHow string `json:"source_end_source"`
	// SnapshotEnd is the snapshot's end (-1: none), SnapshotAgeMs how old its confirmation of
	// this partition was at the cut (-1: no snapshot).
	SnapshotEnd   int64 `json:"source_end_snapshot"`
	SnapshotAgeMs int64 `json:"snapshot_age_ms"`
	// Replicated is the replicated position (next source offset not on the target) and how it
	// is known.
	Replicated       int64  `json:"replicated"`
	ReplicatedSource string `json:"replicated_source"`
	// RPORecords: records known to be on the source and not on the target (SourceEnd −
	// Replicated): the loss is at least this. RPORecordsMax adds the records the source may
	// have received after SourceEnd was confirmed (its write rate over the snapshot's window times
	// the time from that confirmation to the source's last sign of life): an estimate of the
	// most it can be. Equal when nothing suggests more.
	// Both are -1 (JSON null) when the partition's end is not known.
	RPORecords    int64 `json:"rpo_records"`
	RPORecordsMax int64 `json:"rpo_records_max"`
}

// MarshalJSON writes what is not known (-1 inside) as null, never as a number.
func (r RPORow) MarshalJSON() ([]byte, error) {
	type plain RPORow
	return lag.MarshalNoEscape(struct {
		plain
		SourceEnd     *int64 `json:"source_end"`
		SnapshotEnd   *int64 `json:"source_end_snapshot"`
		SnapshotAgeMs *int64 `json:"snapshot_age_ms"`
		RPORecords    *int64 `json:"rpo_records"`
		RPORecordsMax *int64 `json:"rpo_records_max"`
	}{plain(r), lag.Known(r.SourceEnd), lag.Known(r.SnapshotEnd), lag.Known(r.SnapshotAgeMs), lag.Known(r.RPORecords), lag.Known(r.RPORecordsMax)})
}

// RPOTotals are the sums over the rows whose loss is known: the loss known (at least) and the
// estimate of the most; both nil when no row's is known.
func RPOTotals(rows []RPORow) (known, most *int64) {
	var lo, hi int64
	n := 0
	for _, r := range rows {
		if r.RPORecords < 0 {
			continue
		}
		n++
		lo += r.RPORecords
		hi += max(r.RPORecordsMax, r.RPORecords)
	}
	if n == 0 {
		return nil, nil
	}
	return &lo, &hi
}

// Emergency is an emergency failover (the source is down): the Failover to plan, with what the
// target alone tells about the loss (the source-ends snapshot kmm replicate stores there) and
// the groups' positions (their checkpoints).
type Emergency struct {
	*Failover
	// Ends is the newest source-ends snapshot on the target (nil: none, with --accept-loss).
	Ends *flowstate.Ends
	// CkAges: the --max-checkpoint-age gate's view of each group (when the gate is set).
	CkAges []CheckpointAge
	// RPORows and RPOTotal are the loss as the preflight measured it (the max-rpo-records gate's);
	// RPOTotalMax the estimate of the most it can be (see RPORow).
	RPORows     []RPORow
	RPOTotal    int64
	RPOTotalMax int64

	env       Env
	ck        checkpoint.TranslateInput
	sourceEnd map[cluster.TP]int64
	// evidence: per source partition, the highest upstream offset a group's checkpoint names
	// (the source held at least that many offsets), and the group.
	evidence map[cluster.TP]ckEvidence
	mu       sync.Mutex
	pos      map[cluster.TP]snapshot.PositionEvidence // the replicated positions as last read
}

type ckEvidence struct {
	offset int64
	group  string
}

// PrepareEmergency is the preflight of an emergency failover: srcDown is why the source could not
// be reached (nil: it answered; the gate "source-down" refuses unless --force). It reads the
// target only and returns the Emergency to plan with every gate; a refusal is err (nothing was
// written).
func PrepareEmergency(ctx context.Context, env Env, req FailoverRequest, tgt cluster.Cluster, srcDown error) (*Emergency, Gates, error) {
	f := req.F
	var gates Gates
	{
		g := gates.judge("source-down", map[string]any{"source": f.Source, "unreachable": srcDown != nil}, nil, "--force", req.Force)
		if srcDown == nil {
			g.Problems = []string{fmt.Sprintf("source cluster %s (%s) is reachable", f.Source, f.SourceBootstrap)}
			if req.Force {
				g.Verdict = Overridden
				env.warn("--force: source cluster %s is reachable; failing over from what %s holds", f.Source, f.Target)
			} else {
				gates = gates[:len(gates)-1]
				gates.refuse("source-down", map[string]any{"source": f.Source, "unreachable": false},
					kerr.WithHint(kerr.New(kerr.CheckFailed, "source cluster %s (%s) is reachable: emergency failover is for a source that is down; nothing was changed", f.Source, f.SourceBootstrap),
						"use --mode planned (exact, nothing lost), or --force to fail over from what the target holds anyway"))
				return nil, gates, gates.Err()
			}
		} else {
			env.warn("source cluster %s is unreachable (%v): failing over from what %s holds", f.Source, cluster.Cause(srcDown), f.Target)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, preflightBound)
	defer cancel()
	if !req.Force {
		gates.gateNoMM2(ctx, env, req.Force, f)
		if err := gates.Err(); err != nil {
			return nil, gates, err
		}
	}
	st, err := ReadFlowState(ctx, f, tgt, nil)
	if err != nil {
		return nil, gates, err
	}
	gates.gateFlowState(f, st, true)
	if err := gates.Err(); err != nil {
		return nil, gates, err
	}
	state, err := plan.ReadState(ctx, tgt)
	if err != nil {
		return nil, gates, err
	}
	ends, err := flowstate.DecodeEnds(state[flowstate.EndsKey(f.Source, f.Target)])
	if err != nil {
		return nil, gates, err
	}
	if ends == nil {
		if req.AcceptLoss {
			gates.judge("ends-snapshot", map[string]any{"snapshot": false}, []string{"no source end-offset snapshot of " + f.Name() + " on " + f.Target}, "--accept-loss", true)
		} else {
			gates.refuse("ends-snapshot", map[string]any{"snapshot": false}, kerr.WithHint(kerr.New(kerr.CheckFailed, "no source end-offset snapshot of %s on %s (kmm replicate stores one every 5 s): the loss cannot be stated; nothing was changed", f.Name(), f.Target),
				"pass --accept-loss to fail over without an RPO"))
			return nil, gates, gates.Err()
		}
	} else {
		gates.judge("ends-snapshot", map[string]any{"snapshot": true, "at": ends.At}, nil, "--accept-loss", req.AcceptLoss)
	}
	e := &Emergency{Ends: ends, sourceEnd: map[cluster.TP]int64{}, env: env}
	var tps []cluster.TP
	if ends != nil {
		for t, ps := range ends.Ends {
			if f.Policy.IsHeartbeatsTopic(t) {
				continue
			}
			for p, end := range ps {
				tp := cluster.TP{Topic: t, Partition: int32(p)}
				tps = append(tps, tp)
				e.sourceEnd[tp] = end
			}
		}
	}
	// The groups' checkpoints: their positions, and evidence of the source's end.
	in, _, err := snapshot.TranslateInput(ctx, env.Clusters, f, env.now())
	if err != nil {
		return nil, gates, err
	}
	e.evidence = map[cluster.TP]ckEvidence{}
	for _, g := range in.Checkpoints.Groups() {
		for _, c := range in.Checkpoints.Entries(g) {
			up, ok := f.UpstreamTopic(c.Topic)
			if !ok {
				continue
			}
			tp := cluster.TP{Topic: up, Partition: c.Partition}
			if c.UpstreamOffset > e.evidence[tp].offset {
				e.evidence[tp] = ckEvidence{offset: c.UpstreamOffset, group: g}
			}
			if _, known := e.sourceEnd[tp]; !known && ends == nil {
				tps = append(tps, tp) // no snapshot (--accept-loss): the checkpoints name the partitions
				e.sourceEnd[tp] = -1
			}
		}
	}
	sortTPs(tps)
	tps = slices.Compact(tps)
	e.Failover = &Failover{F: f, Tgt: tgt, TPs: tps, Now: env.Now, emergency: e,
		Opt: FailoverOptions{Mode: "emergency", Emergency: true, Timeout: req.Timeout, By: req.By, Force: req.Force, Reverse: req.Reverse}}
	rows, total, err := e.RPO(ctx)
	if err != nil {
		return nil, gates, err
	}
	e.RPORows, e.RPOTotal = rows, total
	for _, r := range rows {
		e.RPOTotalMax += max(r.RPORecordsMax, 0)
	}
	{
		var problems []string
		if req.MaxRPO >= 0 && total > req.MaxRPO {
			problems = []string{fmt.Sprintf("%d record(s) written on %s are not on %s (more than --max-rpo-records %d)", total, f.Source, f.Target, req.MaxRPO)}
		}
		g := gates.judge("max-rpo-records", map[string]any{"rpo_records": total, "max": req.MaxRPO}, problems, "--accept-loss", req.AcceptLoss)
		if g.Verdict == Refuse {
			gates = gates[:len(gates)-1]
			gates.refuse("max-rpo-records", map[string]any{"rpo_records": total, "max": req.MaxRPO},
				kerr.WithHint(kerr.New(kerr.CheckFailed, "%s; nothing was changed", problems[0]), "pass --accept-loss to fail over anyway"))
			return nil, gates, gates.Err()
		}
	}
	// Groups: those the checkpoints on T know.
	groups := selectGroups(in.Checkpoints.Groups(), req.Groups, req.GroupMatch, req.GroupsRegex, f.GroupFilter)
	gates.gateGroups(groups, req.Groups, req.GroupsRegex,
		func(g string) error {
			return kerr.New(kerr.Usage, "group %s has no checkpoint on %s: it cannot be translated without the source", g, f.Target)
		},
		kerr.New(kerr.Usage, "--groups %q matches no group with checkpoints on %s", req.GroupsRegex, f.Target))
	if err := gates.Err(); err != nil {
		return nil, gates, err
	}
	if req.MaxCkAge > 0 && len(groups) > 0 {
		if e.CkAges, err = CheckpointAges(ctx, f, nil, tgt, in.Checkpoints, groups, req.MaxCkAge, env.now()); err != nil {
			return nil, gates, err
		}
		stale := StaleProblems(e.CkAges, req.MaxCkAge, f)
		g := gates.judge("checkpoint-age", map[string]any{"max": req.MaxCkAge.String(), "groups": e.CkAges}, stale, "--accept-loss", req.AcceptLoss)
		switch g.Verdict {
		case Refuse:
			gates = gates[:len(gates)-1]
			gates.refuse("checkpoint-age", map[string]any{"max": req.MaxCkAge.String(), "groups": e.CkAges},
				kerr.WithHint(kerr.New(kerr.CheckFailed, "stale checkpoints: the groups' positions on %s may be later than what %s knows; nothing was changed:\n  %s", f.Source, f.Target, strings.Join(stale, "\n  ")),
					"pass --accept-loss to fail over anyway (the groups re-read from their last checkpoint)"))
			return nil, gates, gates.Err()
		case Overridden:
			env.warn("--accept-loss: failing over despite stale checkpoints:\n  %s", strings.Join(stale, "\n  "))
		}
	}
	if err := gates.gateInactive(ctx, groups, req.Force, tgt); err != nil {
		return nil, gates, err
	}
	if err := gates.gateCreatable(ctx, []creatable{stateTopic(tgt, f)}); err != nil {
		return nil, gates, err
	}
	if err := gates.Err(); err != nil {
		return nil, gates, err
	}
	in.Groups = groups
	e.ck = in
	e.Groups = groups
	return e, gates, nil
}

// RPO is the loss per source partition (in the order of TPs) and its total: records known to be
// on the source that are not on the target (see RPORow). Read after the replicator stopped, its
// final progress and offset map make the replicated positions exact.
func (e *Emergency) RPO(ctx context.Context) ([]RPORow, int64, error) {
	if len(e.TPs) == 0 {
		return nil, 0, nil
	}
	// The snapshot's ends are not the source's end now (SourceEnds: unknown, the source is down):
	// records written between the last snapshot and the outage may be on the target too, and
	// clamping the replicated position to the snapshot would under-state what the target holds
	// (and so mis-state the RPO).
	pos, err := snapshot.Positions(ctx, snapshot.PositionQuery{Flow: e.F, Target: e.Tgt, TPs: e.TPs})
	if err != nil {
		return nil, 0, err
	}
	e.mu.Lock()
	e.pos = pos
	e.mu.Unlock()
	now := e.now()
	edge := time.Time{} // the source's last sign of life: when it went down, or the newest confirmation
	if e.Ends != nil {
		edge = e.Ends.At
		if e.Ends.SourceDownSince != nil && e.Ends.SourceDownSince.After(edge) {
			edge = *e.Ends.SourceDownSince
		}
	}
	var rows []RPORow
	var total int64
	for _, tp := range e.TPs {
		p := pos[tp].Position
		r := RPORow{Topic: tp.Topic, Partition: tp.Partition, SourceEnd: -1, SnapshotEnd: -1, SnapshotAgeMs: -1,
			Replicated: p.Next, ReplicatedSource: p.Source}
		at := time.Time{}
		if end, ok := e.sourceEnd[tp]; ok && end >= 0 {
			at = e.Ends.PartitionAt(tp.Topic, tp.Partition)
			r.SourceEnd, r.SourceEndHow, r.SnapshotEnd = end, "end-offset snapshot", end
			r.SnapshotAgeMs = max(0, now.Sub(at).Milliseconds())
		}
		if ev, ok := e.evidence[tp]; ok && ev.offset > r.SourceEnd {
			r.SourceEnd, r.SourceEndHow = ev.offset, "checkpoint of group "+ev.group+" (it read up to there)"
		}
		if r.SourceEnd < 0 {
			// Nothing says where the partition ended: its loss is not known (never 0).
			r.SourceEndHow = "not known (no end-offset snapshot, no checkpoint)"
			r.RPORecords, r.RPORecordsMax = -1, -1
			rows = append(rows, r)
			continue
		}
		r.RPORecords = max(0, r.SourceEnd-p.Next)
		r.RPORecordsMax = r.RPORecords
		if rate, ok := e.Ends.Rate(tp.Topic, tp.Partition); ok && !at.IsZero() && edge.After(at) {
			r.RPORecordsMax += int64(math.Ceil(rate * edge.Sub(at).Seconds()))
		}
		total += r.RPORecords
		rows = append(rows, r)
	}
	return rows, total, nil
}

// translateNow translates the selected groups from what the target holds now (the replicators
// stopped: their final progress, offset maps and checkpoints are stored): the checkpoints, the
// offset maps and the replicated positions are read again first.
func (e *Emergency) translateNow(ctx context.Context) ([]ExactOffset, error) {
	in, _, err := snapshot.TranslateInput(ctx, e.env.Clusters, e.F, e.env.now())
	if err != nil {
		return nil, err
	}
	in.Groups = e.ck.Groups
	e.ck = in
	if _, _, err := e.RPO(ctx); err != nil {
		return nil, err
	}
	return e.translateFromCheckpoints(), nil
}

// translateFromCheckpoints translates the selected groups from their checkpoints on the target.
func (e *Emergency) translateFromCheckpoints() []ExactOffset {
	e.mu.Lock()
	pos := e.pos
	e.mu.Unlock()
	var out []ExactOffset
	for _, g := range checkpoint.Translate(e.ck) {
		for _, r := range g.Rows {
			x := ExactOffset{Group: g.Group, Topic: r.SourceTopic, Partition: r.Partition, RemoteTopic: r.TargetTopic,
				SourceOffset: r.SourceOffset, TargetOffset: r.TargetOffset, Metadata: r.Metadata, Exact: r.Exact || r.Bound == 0, Rereads: r.Bound,
				Why: fmt.Sprintf("from the checkpoints on %s (%s)", e.F.Target, r.Derived)}
			if r.Why != "" {
				x.Why += ": " + r.Why
			}
			// A group at or past everything the target holds of the partition resumes at the
			// target's end: the records between are not there (they are in the RPO), and it has
			// read every record there.
			if ev, ok := pos[cluster.TP{Topic: r.SourceTopic, Partition: r.Partition}]; ok && ev.Position.Exact && r.SourceOffset >= ev.Position.Next &&
				ev.Input.TargetEnd >= 0 && x.TargetOffset <= ev.Input.TargetEnd {
				if x.TargetOffset < ev.Input.TargetEnd {
					x.Why += fmt.Sprintf("; the group is at or past what %s holds (replicated to %d): it resumes at %s's end %d", e.F.Target, ev.Position.Next, e.F.Target, ev.Input.TargetEnd)
				}
				x.TargetOffset, x.Exact, x.Rereads = ev.Input.TargetEnd, true, 0
			}
			out = append(out, x)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Group < out[j].Group })
	return out
}

// cutNow is the cut recorded in the FAILED_OVER state: per source partition, the snapshot's
// source end, the replicated position and the target's end.
func (e *Emergency) cutNow(ctx context.Context) ([]flowstate.PartitionCut, error) {
	rows, _, err := e.RPO(ctx)
	if err != nil {
		return nil, err
	}
	pos, err := snapshot.Positions(ctx, snapshot.PositionQuery{Flow: e.F, Target: e.Tgt, TPs: e.TPs})
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
}

// SnapshotAge is the age of the source-ends snapshot now (-1: no snapshot).
func (e *Emergency) SnapshotAge() time.Duration {
	if e.Ends == nil {
		return -1
	}
	return e.now().Sub(e.Ends.At)
}
