// Package switchover is the domain of kmm's disaster-recovery commands: their preflights as
// lists of gates (gate.go; PrepareFailover, PrepareEmergency, PrepareFailback), the plans they
// apply through pkg/plan (failover: fence, quiet, drain, mark, commit, reverse progress;
// failback: mark, stranded records, fence, drain, commit back, remove the fence, forward
// progress; rehearse: shadow groups; translate-offsets --apply: commit-group-offsets), the exact
// translation of group offsets at the cut (exact.go), and emergency's RPO and cut from what the
// target holds (emergency.go). Each step kind has an Action that checks whether the step is in
// effect on the cluster and applies it through pkg/cluster.
//
// It never prints, reads flags or opens clients: it gets cluster interfaces (and an Env for the
// rest) and returns plans, gates, numbers and errors. pkg/cmd/failovercmd and failbackcmd parse
// flags and render.
package switchover

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/kmmproject/kmm/pkg/checkpoint"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/plan"
)

// KindCommitOffsets commits a group's translated offsets on the target.
const KindCommitOffsets = "commit-group-offsets"

// OffsetCommit is one partition's offset to commit.
type OffsetCommit struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Metadata  string `json:"metadata,omitempty"`
	// Current is the group's offset on the target when the plan was made (-1: none).
	Current int64 `json:"current"`
}

// CommitParams are the Params of a commit-group-offsets step.
type CommitParams struct {
	Group   string         `json:"group"`
	Offsets []OffsetCommit `json:"offsets"`
}

// CommitStepID is the stable id of the step committing group's offsets.
func CommitStepID(group string) string { return "commit-offsets/" + group }

// CommitOffsetsPlan turns the group plans of translate-offsets --apply into a plan on f's
// target: one step per group committing its translated offsets; a group that is not committed
// (active on the target, nothing translated) is a skipped step saying why; offsets refused
// (past the end of the target partition) are notes.
func CommitOffsetsPlan(command string, f *flow.Flow, groups []checkpoint.GroupPlan, now time.Time) (*plan.Plan, error) {
	groups = append([]checkpoint.GroupPlan(nil), groups...)
	sort.Slice(groups, func(i, j int) bool { return groups[i].Group < groups[j].Group })
	p := &plan.Plan{Command: command, Flow: f.Name(), Journal: f.Target, Created: now, Steps: []plan.Step{}}
	for _, g := range groups {
		s := plan.Step{ID: CommitStepID(g.Group), Kind: KindCommitOffsets, Cluster: f.Target,
			Why: fmt.Sprintf("translated from the group's offsets on %s (checkpoints and offset syncs of %s)", f.Source, f.Name())}
		params := CommitParams{Group: g.Group, Offsets: []OffsetCommit{}}
		backwards, fresh := int64(0), int64(0)
		for _, c := range g.Commits {
			params.Offsets = append(params.Offsets, OffsetCommit{Topic: c.TP.Topic, Partition: c.TP.Partition, Offset: c.Offset, Metadata: c.Metadata, Current: c.Current})
			switch {
			case c.Current < 0:
				fresh++
			case c.Current > c.Offset:
				backwards++
			}
		}
		for _, c := range g.Refused {
			p.Notes = append(p.Notes, fmt.Sprintf("%s %s[%d]: refused: %d is past the end of the target partition", g.Group, c.TP.Topic, c.TP.Partition, c.Offset))
		}
		switch {
		case g.Skipped != checkpoint.NotSkipped:
			s.Skip = g.Detail
			s.Writes = fmt.Sprintf("nothing (group %s)", g.Group)
		case len(g.Commits) == 0:
			s.Skip = "no offset to commit"
			s.Writes = fmt.Sprintf("nothing (group %s)", g.Group)
		default:
			s.Writes = fmt.Sprintf("committed offsets of group %s on %s: %d partition(s)", g.Group, f.Target, len(g.Commits))
			s.Expect = map[string]int64{"partitions": int64(len(g.Commits)), "new": fresh, "backwards": backwards}
		}
		b, err := json.Marshal(params)
		if err != nil {
			return nil, err
		}
		s.Params = b
		p.Steps = append(p.Steps, s)
	}
	return p, p.Validate()
}

// CommitOffsets is the Action of commit-group-offsets steps on one cluster.
type CommitOffsets struct {
	Groups cluster.Groups
}

func params(s plan.Step) (CommitParams, map[cluster.TP]cluster.OffsetMeta, error) {
	var p CommitParams
	if err := json.Unmarshal(s.Params, &p); err != nil {
		return p, nil, fmt.Errorf("step %s: params: %w", s.ID, err)
	}
	want := make(map[cluster.TP]cluster.OffsetMeta, len(p.Offsets))
	for _, o := range p.Offsets {
		want[cluster.TP{Topic: o.Topic, Partition: o.Partition}] = cluster.OffsetMeta{Offset: o.Offset, Metadata: o.Metadata}
	}
	return p, want, nil
}

// Check reports whether the group's committed offsets on the cluster already equal every offset
// of the step.
func (a CommitOffsets) Check(ctx context.Context, s plan.Step) (bool, error) {
	p, want, err := params(s)
	if err != nil {
		return false, err
	}
	in, err := offsetsInEffect(ctx, a.Groups, p.Group, want)
	if err != nil {
		return false, fmt.Errorf("reading the offsets of group %s: %w", p.Group, err)
	}
	return in, nil
}

// offsetsInEffect is the Check of every commit step: group's committed offsets on g already
// equal want for every partition of want.
func offsetsInEffect(ctx context.Context, g cluster.Groups, group string, want map[cluster.TP]cluster.OffsetMeta) (bool, error) {
	have, err := g.ListGroupOffsets(ctx, group)
	if err != nil {
		return false, err
	}
	for tp, w := range want {
		if h, ok := have[tp]; !ok || h.Offset != w.Offset {
			return false, nil
		}
	}
	return true, nil
}

// commitNumbers are the report numbers of a commit step of translated rows: partitions
// committed, how many exact, the sum of the rows' re-reads (at most); never a skip. Rows whose
// re-reads are not known are counted as rereads_unknown, and rereads_max is then left out: an
// unknown is never summed as 0.
func commitNumbers(partitions int, rows []ExactOffset) map[string]int64 {
	exact, sum, unknown := int64(0), int64(0), int64(0)
	for _, r := range rows {
		if r.Exact {
			exact++
		}
		switch {
		case r.Rereads < 0:
			unknown++
		default:
			sum += r.Rereads
		}
	}
	n := map[string]int64{"partitions": int64(partitions), "exact": exact, "skips": 0}
	if unknown > 0 {
		n["rereads_unknown"] = unknown
	} else {
		n["rereads_max"] = sum
	}
	return n
}

// groupConcurrency is how many groups' offsets are checked and committed at a time: each group
// is its own step (its own round trips to the group coordinator), independent of the others.
const groupConcurrency = 8

// Concurrency implements plan.Concurrent: groups are committed groupConcurrency at a time.
func (CommitOffsets) Concurrency() int { return groupConcurrency }

// Apply commits the step's offsets (AlterConsumerGroupOffsets; the broker refuses groups with
// members).
func (a CommitOffsets) Apply(ctx context.Context, s plan.Step) (map[string]int64, error) {
	p, want, err := params(s)
	if err != nil {
		return nil, err
	}
	if err := a.Groups.AlterGroupOffsets(ctx, p.Group, want); err != nil {
		return nil, fmt.Errorf("committing offsets of group %s: %w", p.Group, err)
	}
	return map[string]int64{"partitions": int64(len(want))}, nil
}

// commitGroup is the Action of a step committing one group's translated offsets (GroupParams)
// on cluster c: failover's commit-translated-offsets on the target and failback's
// commit-offsets-back on the source. translate computes every group's rows once per run.
type commitGroup struct {
	c         cluster.Cluster
	translate func(context.Context) ([]ExactOffset, error)
	idx       *groupIndex // the translation's rows by group, shared by the steps
}

// groupIndex is a translation's rows by group, built once: every step looking its group's rows
// up in the whole translation was quadratic (5,000 groups x 50 partitions: 2 x 5,000 scans of
// 250,000 rows).
type groupIndex struct {
	mu   sync.Mutex
	src  []ExactOffset // the translation indexed
	rows map[string][]ExactOffset
}

// of returns group g's rows of tr, indexing tr first when it is not the translation indexed.
func (x *groupIndex) of(tr []ExactOffset, g string) []ExactOffset {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.rows == nil || len(tr) != len(x.src) || (len(tr) > 0 && &tr[0] != &x.src[0]) {
		x.rows, x.src = map[string][]ExactOffset{}, tr
		for _, e := range tr {
			x.rows[e.Group] = append(x.rows[e.Group], e)
		}
	}
	return x.rows[g]
}

func (a commitGroup) want(ctx context.Context, s plan.Step) (string, map[cluster.TP]cluster.OffsetMeta, []ExactOffset, error) {
	var p GroupParams
	if err := json.Unmarshal(s.Params, &p); err != nil {
		return "", nil, nil, fmt.Errorf("step %s: params: %w", s.ID, err)
	}
	tr, err := a.translate(ctx)
	if err != nil {
		return "", nil, nil, err
	}
	rows := a.idx.of(tr, p.Group)
	want := make(map[cluster.TP]cluster.OffsetMeta, len(rows))
	for _, e := range rows {
		want[cluster.TP{Topic: e.RemoteTopic, Partition: e.Partition}] = cluster.OffsetMeta{Offset: e.TargetOffset, Metadata: e.Metadata}
	}
	return p.Group, want, rows, nil
}

// Concurrency implements plan.Concurrent (one group per step).
func (commitGroup) Concurrency() int { return groupConcurrency }

func (a commitGroup) Check(ctx context.Context, s plan.Step) (bool, error) {
	g, want, _, err := a.want(ctx, s)
	if err != nil {
		return false, err
	}
	return offsetsInEffect(ctx, a.c, g, want)
}

func (a commitGroup) Apply(ctx context.Context, s plan.Step) (map[string]int64, error) {
	g, want, rows, err := a.want(ctx, s)
	if err != nil {
		return nil, err
	}
	if len(want) == 0 {
		return map[string]int64{"partitions": 0}, nil
	}
	if err := a.c.AlterGroupOffsets(ctx, g, want); err != nil {
		return nil, fmt.Errorf("committing offsets of group %s on %s: %w", g, a.c.Alias(), err)
	}
	return commitNumbers(len(want), rows), nil
}
