package checkpoint

import (
	"fmt"
	"slices"
	"strings"
)

// TargetGroup is what T says about a group (DescribeGroups and, for idle groups,
// ListGroupOffsets).
type TargetGroup struct {
	Group string
	// State is the group state as described on T: Empty, Stable, PreparingRebalance,
	// CompletingRebalance, Dead (also what a group that does not exist reports), Unknown, or a
	// KIP-848 state (Assigning, Reconciling, NotReady). "" means not described.
	State   string
	Members int
	// Err is a describe error for this group (then nothing is committed to it).
	Err error
	// Offsets are the group's committed offsets on T (needed for Empty groups); a missing
	// partition or an offset < 0 means none.
	Offsets map[TP]int64
}

// Idle reports whether the group may receive offsets: no members and state Empty or Dead
// (Dead is what a group that does not exist on T reports).
func (g TargetGroup) Idle() bool {
	if g.Err != nil || g.Members > 0 {
		return false
	}
	return strings.EqualFold(g.State, "Empty") || strings.EqualFold(g.State, "Dead")
}

// Active describes why a group is not idle, or "" when it is.
func (g TargetGroup) Active() string {
	switch {
	case g.Err != nil:
		return fmt.Sprintf("its state on the target is unknown: %v", g.Err)
	case g.Members > 0:
		return fmt.Sprintf("it has %d active member(s) on the target (state %s)", g.Members, g.State)
	case g.Idle():
		return ""
	case g.State == "":
		return "its state on the target was not described"
	}
	return fmt.Sprintf("it is in state %s on the target", g.State)
}

// Commit is one offset to commit on T.
type Commit struct {
	TP       TP // downstream
	Offset   int64
	Metadata string
	// Current is the group's committed offset on T before, -1 if none.
	Current int64
}

// SkipReason says why a whole group is not synced.
type SkipReason string

// Skip reasons.
const (
	NotSkipped         SkipReason = ""
	SkipActive         SkipReason = "active_on_target"     // members on T, or a rebalancing state
	SkipStateUnknown   SkipReason = "target_state_unknown" // describe failed or missing
	SkipNoCheckpoints  SkipReason = "no_checkpoint"
	SkipNothingToApply SkipReason = "nothing_to_apply" // only with PlanApply: no row
)

// GroupPlan is what to do with one group on T.
type GroupPlan struct {
	Group   string
	State   string
	Members int
	// Skipped is set when nothing of the group is committed; Detail says why in words.
	Skipped SkipReason
	Detail  string
	// Commits are the offsets to write with AlterGroupOffsets.
	Commits []Commit
	// UpToDate are partitions already at or past the translated offset on T (forward only).
	UpToDate []Commit
	// Refused are partitions whose translated offset is past the end of the target partition:
	// a checkpoint that cannot be right (written under MM2's pre-3.5 rule, or a target
	// truncated since) is never committed.
	Refused []Commit
	// Backwards are commits that move the group's offset on T backwards (PlanApply without
	// ForwardOnly only; they are also in Commits).
	Backwards []Commit
}

// PlanGroupSync is MM2's sync.group.offsets job (§4.5) over the checkpoint store: for each group
// (nil: every group with checkpoints) commit the checkpointed downstream offsets and metadata to
// the same group on T, only if the group has no active members there. A group that does not
// exist on T (Dead) gets all its checkpointed partitions; an Empty group only the partitions
// where T has no offset or a lower one. Active groups are reported, not sent to the broker (MM2
// sends them and logs the UNKNOWN_MEMBER_ID rejection). ends, if not nil, are the log-end
// offsets of the target partitions: offsets past them are refused.
func PlanGroupSync(st *Store, groups []string, targets map[string]TargetGroup, ends map[TP]int64) []GroupPlan {
	if groups == nil {
		groups = st.Groups()
	}
	out := make([]GroupPlan, 0, len(groups))
	for _, g := range groups {
		var want []Commit
		for _, e := range st.Entries(g) {
			want = append(want, Commit{TP: e.TP(), Offset: e.DownstreamOffset, Metadata: e.Metadata, Current: -1})
		}
		p := plan(g, want, targets, ends, true, false)
		if len(want) == 0 {
			p.Skipped, p.Detail = SkipNoCheckpoints, "no checkpoint for this group"
		}
		out = append(out, p)
	}
	return out
}

// ApplyOptions tune PlanApply.
type ApplyOptions struct {
	// Force commits to groups that are not idle on T (the broker still rejects groups with
	// live members).
	Force bool
	// ForwardOnly skips partitions where T is already at or past the translated offset.
	ForwardOnly bool
}

// PlanApply turns translate-offsets results into commits (--apply): the translated offset of
// every row, with the same idle-group rule as PlanGroupSync unless opt.Force.
func PlanApply(results []GroupTranslation, targets map[string]TargetGroup, ends map[TP]int64, opt ApplyOptions) []GroupPlan {
	out := make([]GroupPlan, 0, len(results))
	for _, r := range results {
		var want []Commit
		for _, row := range r.Rows {
			want = append(want, Commit{TP: TP{Topic: row.TargetTopic, Partition: row.Partition}, Offset: row.TargetOffset, Metadata: row.Metadata, Current: -1})
		}
		p := plan(r.Group, want, targets, ends, opt.ForwardOnly, opt.Force)
		if len(want) == 0 && p.Skipped == NotSkipped {
			p.Skipped, p.Detail = SkipNothingToApply, "no translated offset for this group"
		}
		out = append(out, p)
	}
	return out
}

func plan(group string, want []Commit, targets map[string]TargetGroup, ends map[TP]int64, forwardOnly, force bool) GroupPlan {
	tg, described := targets[group]
	if !described {
		tg = TargetGroup{Group: group}
	}
	p := GroupPlan{Group: group, State: tg.State, Members: tg.Members}
	if !force && !tg.Idle() {
		p.Skipped = SkipActive
		if tg.Err != nil || !described || tg.State == "" {
			p.Skipped = SkipStateUnknown
		}
		p.Detail = fmt.Sprintf("group %s not synced: %s", group, tg.Active())
		return p
	}
	// MM2 compares with T's offsets for Empty groups; a Dead group has none.
	for _, c := range want {
		cur, has := tg.Offsets[c.TP]
		if has && cur >= 0 {
			c.Current = cur
		}
		if end, ok := ends[c.TP]; ok && c.Offset > end {
			p.Refused = append(p.Refused, c)
			continue
		}
		if forwardOnly && c.Current >= 0 && c.Current >= c.Offset {
			p.UpToDate = append(p.UpToDate, c)
			continue
		}
		if c.Current > c.Offset {
			p.Backwards = append(p.Backwards, c)
		}
		p.Commits = append(p.Commits, c)
	}
	sortCommits(p.Commits)
	sortCommits(p.UpToDate)
	sortCommits(p.Refused)
	sortCommits(p.Backwards)
	return p
}

func sortCommits(cs []Commit) {
	slices.SortFunc(cs, func(a, b Commit) int { return compareTP(a.TP, b.TP) })
}
