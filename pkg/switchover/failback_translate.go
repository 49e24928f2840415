package switchover

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/offsetsync"
)

// translate translates every group's committed offsets on T back to S, once per run, after the
// reverse flow is drained (see docs/architecture.md, "failback"):
//   - a position inside the replicated part of a remote topic (at or before T's end at the cut)
//     is translated in reverse over the S->T mapping (the flow's offset syncs with upstream and
//     downstream swapped; records counted on both sides, the record at the result compared);
//   - a position past the cut, in a topic the reverse flow copies (under a policy that keeps
//     names, the remote topic itself), is translated forward over the reverse flow's copy;
//   - records written on T into a remote topic under a renaming policy cannot flow back (MM2's
//     cycle rule): the position is the cut's, and the row says how many records it passed.
//
// Groups at the cut move past the stranded records (--stranded quarantine|skip).
func (fb *Failback) translate(ctx context.Context) ([]ExactOffset, error) {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	if fb.translated != nil {
		return fb.translated, nil
	}
	f, rev := fb.F, fb.Rev
	fwd, err := loadSyncs(ctx, f, fb.S, fb.T)
	if err != nil {
		return nil, err
	}
	back, err := loadSyncs(ctx, rev, fb.T, fb.S)
	if err != nil {
		return nil, err
	}
	swapped := offsetsync.NewStore(offsetsync.Options{})
	type cutInfo struct {
		topic                string // on S
		targetEnd, replicate int64
	}
	byRemote := map[cluster.TP]cutInfo{}
	for _, c := range fb.State.Cut {
		remote := cluster.TP{Topic: f.RemoteTopic(c.Topic), Partition: c.Partition}
		byRemote[remote] = cutInfo{topic: c.Topic, targetEnd: c.TargetEnd, replicate: c.Replicated}
		for _, s := range fwd.History(offsetsync.TP{Topic: c.Topic, Partition: c.Partition}) {
			swapped.Add(offsetsync.TP{Topic: remote.Topic, Partition: remote.Partition}, offsetsync.Sync{Upstream: s.Downstream, Downstream: s.Upstream}, time.Time{})
		}
	}
	stranded := map[cluster.TP]StrandedRange{}
	for _, r := range fb.Stranded {
		stranded[cluster.TP{Topic: r.Topic, Partition: r.Partition}] = r
	}
	revCut, backCut := map[cluster.TP]CutPartition{}, map[cluster.TP]CutPartition{}
	var revOffs, backOffs []GroupOffset
	passed := map[string]int64{} // group/topic/partition -> records past the cut that cannot flow back
	var backTPs []cluster.TP
	for _, g := range fb.Groups {
		offs, err := fb.T.ListGroupOffsets(ctx, g)
		if err != nil {
			return nil, fmt.Errorf("reading the offsets of group %s on %s: %w", g, f.Target, err)
		}
		for tp, om := range offs {
			if om.Offset < 0 {
				continue
			}
			o := GroupOffset{Group: g, TP: tp, Offset: om.Offset, Metadata: om.Metadata}
			backName := rev.RemoteTopic(tp.Topic)
			if ci, ok := byRemote[tp]; ok {
				identity := backName == ci.topic && rev.Selected(tp.Topic)
				if om.Offset <= ci.targetEnd || !identity {
					if om.Offset > ci.targetEnd {
						passed[fmt.Sprintf("%s/%s/%d", g, tp.Topic, tp.Partition)] = om.Offset - ci.targetEnd
					}
					revCut[tp] = CutPartition{Source: tp, Remote: cluster.TP{Topic: ci.topic, Partition: tp.Partition}, SourceEnd: ci.targetEnd, TargetEnd: ci.replicate}
					revOffs = append(revOffs, o)
					continue
				}
			} else if !rev.Selected(tp.Topic) {
				continue // a topic neither flow maps
			}
			if _, ok := backCut[tp]; !ok {
				backCut[tp] = CutPartition{Source: tp, Remote: cluster.TP{Topic: backName, Partition: tp.Partition}}
				backTPs = append(backTPs, tp)
			}
			backOffs = append(backOffs, o)
		}
	}
	if len(backTPs) > 0 { // the reverse flow is drained and T frozen: the ends now are the cut
		var remotes []cluster.TP
		for _, tp := range backTPs {
			remotes = append(remotes, backCut[tp].Remote)
		}
		te, err := fb.T.ListOffsets(ctx, backTPs, cluster.Latest)
		if err != nil {
			return nil, err
		}
		se, err := fb.S.ListOffsets(ctx, remotes, cluster.Latest)
		if err != nil {
			return nil, err
		}
		for _, tp := range backTPs {
			c := backCut[tp]
			c.SourceEnd, c.TargetEnd = te[tp].Offset, se[c.Remote].Offset
			backCut[tp] = c
		}
	}
	rows, err := TranslateExact(ctx, fb.T, fb.S, swapped, revCut, revOffs)
	if err != nil {
		return nil, err
	}
	onS := map[string]map[cluster.TP]cluster.OffsetMeta{} // the groups' own positions on S
	for _, g := range fb.Groups {
		m, err := fb.S.ListGroupOffsets(ctx, g)
		if err != nil {
			return nil, fmt.Errorf("reading the offsets of group %s on %s: %w", g, f.Source, err)
		}
		onS[g] = m
	}
	for i := range rows {
		e := &rows[i]
		e.Why = "reverse translation over " + f.Name() + ": " + e.Why
		if n := passed[fmt.Sprintf("%s/%s/%d", e.Group, e.Topic, e.Partition)]; n > 0 {
			e.Exact = false
			e.Why += fmt.Sprintf("; %d record(s) written on %s into remote topic %s after the cut cannot flow back to %s (MM2's cycle rule): not on %s",
				n, f.Target, e.Topic, f.Source, f.Source)
		}
		src := cluster.TP{Topic: e.RemoteTopic, Partition: e.Partition}
		sr, hasStranded := stranded[src]
		hasStranded = hasStranded && sr.Records > 0
		// Never backwards on S: the group's own position there (kept since before the failover)
		// is where it had read to; going below it would hand it those records again. Only
		// --stranded deliver asks for records again (the stranded ones, which it may have read).
		if cur, ok := onS[e.Group][src]; ok && cur.Offset > e.TargetOffset && fb.Opt.Stranded != StrandedDeliver {
			e.Why += fmt.Sprintf("; kept the group's own position %d on %s (the translation, %d, is behind it: never moved backwards)", cur.Offset, f.Source, e.TargetOffset)
			if e.Rereads > 0 {
				e.Rereads = max(0, e.Rereads-(cur.Offset-e.TargetOffset))
			}
			e.TargetOffset = cur.Offset
		}
		if !hasStranded {
			continue
		}
		switch {
		case e.TargetOffset >= sr.From && e.TargetOffset < sr.To && fb.Opt.Stranded != StrandedDeliver:
			e.Why += fmt.Sprintf("; moved past %d stranded record(s) [%d, %d) (--stranded %s)", sr.To-e.TargetOffset, e.TargetOffset, sr.To, fb.Opt.Stranded)
			e.TargetOffset = sr.To
		case e.TargetOffset <= sr.From:
			e.Why += fmt.Sprintf("; the group will read the %d stranded record(s) [%d, %d) after the cut", sr.Records, sr.From, sr.To)
		}
	}
	more, err := TranslateExact(ctx, fb.T, fb.S, back, backCut, backOffs)
	if err != nil {
		return nil, err
	}
	for i := range more {
		more[i].Why = "forward over the copy of " + rev.Name() + ": " + more[i].Why
	}
	rows = append(rows, more...)
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Group != rows[j].Group {
			return rows[i].Group < rows[j].Group
		}
		if rows[i].Topic != rows[j].Topic {
			return rows[i].Topic < rows[j].Topic
		}
		return rows[i].Partition < rows[j].Partition
	})
	if rows == nil {
		rows = []ExactOffset{}
	}
	fb.translated = rows
	return rows, nil
}

// Translate translates every group's offsets back (what the commit steps commit; computed once
// per run). The benchmark times it apart from the commits.
func (fb *Failback) Translate(ctx context.Context) ([]ExactOffset, error) { return fb.translate(ctx) }
