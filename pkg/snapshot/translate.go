package snapshot

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/kmmproject/kmm/pkg/checkpoint"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/lag"
	"github.com/kmmproject/kmm/pkg/mm2read"
	"github.com/kmmproject/kmm/pkg/offsetmap"
	"github.com/kmmproject/kmm/pkg/offsetsync"
)

// TranslateInput reads checkpoints, topics, end offsets and group states from T, and the offset
// mapping and live group offsets from S when it is reachable (srcErr says why not).
func TranslateInput(ctx context.Context, open cluster.Opener, f *flow.Flow, now time.Time) (in checkpoint.TranslateInput, srcErr error, err error) {
	in = checkpoint.TranslateInput{Source: f.SourceAlias, Target: f.TargetAlias, Policy: f.Policy, Now: now}
	tgt, err := open.Open(f, flow.Target)
	if err != nil {
		return in, nil, err
	}
	defer tgt.Close()
	if _, err := tgt.Ping(ctx, 10*time.Second); err != nil {
		return in, nil, kerr.WithHint(kerr.Wrap(kerr.Unreachable, cluster.Named(f.Target, f.TargetBootstrap, err)),
			cluster.UnreachableHint("translate-offsets needs the target cluster "+f.Target, f.Target))
	}
	in.Checkpoints = checkpoint.NewStore()
	if _, err := mm2read.LoadCheckpoints(ctx, tgt, f.CheckpointsTopic(), in.Checkpoints, nil); err != nil && !errors.Is(err, mm2read.ErrNoTopic) {
		return in, nil, err
	}
	topics, err := tgt.ListTopics(ctx)
	if err != nil {
		return in, nil, err
	}
	in.TargetTopics = map[string]bool{}
	for t := range topics {
		in.TargetTopics[t] = true
	}
	// kmm's offset maps (where every copied record landed): exact translations at any lag.
	if maps, err := mm2read.ReadOffsetMaps(ctx, tgt, f.OffsetMapTopic()); err == nil {
		in.Maps = map[checkpoint.TP]*offsetmap.Map{}
		for tp, m := range maps {
			in.Maps[checkpoint.TP{Topic: tp.Topic, Partition: tp.Partition}] = m
		}
	} else if !errors.Is(err, mm2read.ErrNoTopic) {
		return in, nil, err
	}
	var tps []cluster.TP
	seen := map[cluster.TP]bool{}
	for tp := range in.Maps {
		rt := cluster.TP{Topic: f.RemoteTopic(tp.Topic), Partition: tp.Partition}
		if topics[rt.Topic].Partitions > int(rt.Partition) && !seen[rt] {
			seen[rt] = true
			tps = append(tps, rt)
		}
	}
	groups := in.Checkpoints.Groups()
	for _, g := range groups {
		for _, e := range in.Checkpoints.Entries(g) {
			tp := cluster.TP{Topic: e.Topic, Partition: e.Partition}
			if !seen[tp] && topics[e.Topic].Partitions > int(e.Partition) {
				seen[tp] = true
				tps = append(tps, tp)
			}
		}
	}
	if len(tps) > 0 {
		if ends, err := tgt.ListOffsets(ctx, tps, cluster.Latest); err == nil {
			in.TargetEnds = map[checkpoint.TP]int64{}
			for tp, r := range ends {
				in.TargetEnds[checkpoint.TP{Topic: tp.Topic, Partition: tp.Partition}] = r.Offset
			}
		}
	}

	// The source: offset mapping (when the syncs live there) and live group offsets.
	src, srcErr := open.Open(f, flow.Source)
	if srcErr == nil {
		if _, err := src.Ping(ctx, 5*time.Second); err != nil {
			srcErr = err
			src.Close()
			src = nil
		} else {
			defer src.Close()
		}
	}
	m := offsetsync.NewStore(offsetsync.Options{})
	if _, err := mm2read.LoadFlowOffsetSyncs(ctx, f, src, tgt, m); err == nil || errors.Is(err, mm2read.ErrNoTopic) {
		m.MarkLoaded()
		in.Mapping = m
	}
	if src != nil {
		in.SourceOffsets = map[string][]checkpoint.SourceOffset{}
		if list, err := src.ListGroups(ctx); err == nil {
			for _, g := range list {
				if !f.GroupFilter(g.ID) {
					continue
				}
				offs, err := src.ListGroupOffsets(ctx, g.ID)
				if err != nil {
					continue
				}
				for tp, om := range offs {
					in.SourceOffsets[g.ID] = append(in.SourceOffsets[g.ID], checkpoint.SourceOffset{Topic: tp.Topic, Partition: tp.Partition, Offset: om.Offset, Metadata: om.Metadata})
				}
				groups = append(groups, g.ID)
			}
		}
	}
	slices.Sort(groups)
	groups = slices.Compact(groups)
	if len(groups) > 0 {
		if ds, err := tgt.DescribeGroups(ctx, groups...); err == nil {
			in.TargetGroups = map[string]checkpoint.TargetGroup{}
			for _, d := range ds {
				tg := checkpoint.TargetGroup{Group: d.ID, State: d.State, Members: d.Members, Err: d.Err}
				if d.Err == nil && d.Members == 0 {
					if offs, err := tgt.ListGroupOffsets(ctx, d.ID); err == nil {
						tg.Offsets = map[checkpoint.TP]int64{}
						for tp, om := range offs {
							tg.Offsets[checkpoint.TP{Topic: tp.Topic, Partition: tp.Partition}] = om.Offset
						}
					}
				}
				in.TargetGroups[d.ID] = tg
			}
		}
	}
	return in, srcErr, nil
}

// GroupLag collects, for the given groups of flow f, what `kmm lag --group` shows: committed
// offsets on S, translated offsets on T (checkpoints or mapping), and the partitions' offsets
// on both sides. parts are the replication rows already collected for f.
func GroupLag(ctx context.Context, open cluster.Opener, f *flow.Flow, groups []string, parts []lag.PartitionLag, now time.Time) ([]lag.GroupInput, error) {
	in, _, err := TranslateInput(ctx, open, f, now)
	if err != nil {
		return nil, err
	}
	in.Groups = groups
	byTP := map[checkpoint.TP]lag.PartitionLag{}
	for _, p := range parts {
		byTP[checkpoint.TP{Topic: p.Topic, Partition: p.Partition}] = p
	}
	var out []lag.GroupInput
	for _, g := range checkpoint.Translate(in) {
		translated := map[checkpoint.TP]checkpoint.Row{}
		for _, r := range g.Rows {
			translated[checkpoint.TP{Topic: r.SourceTopic, Partition: r.Partition}] = r
		}
		seen := map[checkpoint.TP]bool{}
		add := func(tp checkpoint.TP, committed int64) {
			if seen[tp] {
				return
			}
			seen[tp] = true
			gi := lag.GroupInput{Flow: f.Name(), Group: g.Group, Topic: tp.Topic, RemoteTopic: f.RemoteTopic(tp.Topic),
				Partition: tp.Partition, Committed: committed, SourceEnd: -1, Next: -1, NextMax: -1, Translated: -1, TargetEnd: -1, Bound: -1}
			if p, ok := byTP[tp]; ok {
				gi.SourceEnd, gi.Next, gi.NextMax = p.SourceEnd, p.Next, p.NextMax
			}
			if r, ok := translated[tp]; ok {
				gi.Translated, gi.Bound, gi.RemoteTopic = r.TargetOffset, r.Bound, r.TargetTopic
				if gi.Committed < 0 {
					gi.Committed = r.SourceOffset
				}
				if end, ok := in.TargetEnds[checkpoint.TP{Topic: r.TargetTopic, Partition: r.Partition}]; ok {
					gi.TargetEnd = end
				}
			}
			out = append(out, gi)
		}
		for _, so := range in.SourceOffsets[g.Group] {
			add(checkpoint.TP{Topic: so.Topic, Partition: so.Partition}, so.Offset)
		}
		for tp := range translated {
			add(tp, -1)
		}
	}
	return out, nil
}
