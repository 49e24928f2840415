package failovercmd

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/kmmproject/kmm/pkg/checkpoint"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/mm2read"
)

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

// checkpointAges judges the selected groups' checkpoints on the target against maxAge at now.
// With src (planned mode) only groups that committed on the source past their checkpoints can
// be stale; without it (emergency: the source is down) every group older than maxAge is.
func checkpointAges(ctx context.Context, f *flow.Flow, src, tgt cluster.Cluster, st *checkpoint.Store, groups []string, maxAge time.Duration, now time.Time) ([]CheckpointAge, error) {
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

// staleProblems words the stale groups for a refusal.
func staleProblems(ages []CheckpointAge, maxAge time.Duration, f *flow.Flow) []string {
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
