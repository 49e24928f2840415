package snapshot

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/lag"
	"github.com/kmmproject/kmm/pkg/mm2read"
	"github.com/kmmproject/kmm/pkg/offsetsync"
)

// PositionQuery is what Positions needs: the flow, its opened sides (Source nil when it is
// down), the source partitions, and their source offsets when known.
type PositionQuery struct {
	Flow   *flow.Flow
	Source cluster.Cluster // nil: the source is not readable
	Target cluster.Cluster
	TPs    []cluster.TP
	// SourceStarts/SourceEnds: the source's offsets (missing: unknown).
	SourceStarts, SourceEnds map[cluster.TP]int64
	// Live are the positions a running replicator reported (next offsets), when asked.
	Live map[cluster.TP]lag.Observed
	Now  func() time.Time
}

// PositionEvidence is what Positions fetched for one partition, beside the position.
type PositionEvidence struct {
	Input    lag.PositionInput
	Position lag.Position
}

// Positions fetches the evidence of each partition's replicated position (stored progress, the
// newest offset sync, the remote partition's end offset on the target; the records on both sides
// to verify an estimate) and returns lag.ReplicatedPosition of each. It reads only.
func Positions(ctx context.Context, q PositionQuery) (map[cluster.TP]PositionEvidence, error) {
	f := q.Flow
	now := time.Now
	if q.Now != nil {
		now = q.Now
	}
	stored, err := mm2read.ReadSourcePositionsAt(ctx, q.Target, f.OffsetsTopic, f.SourceAlias)
	if err != nil {
		return nil, err
	}
	// The newest offset sync per partition, where the flow keeps them.
	var syncs *offsetsync.Store
	maps, err := mm2read.ReadOffsetMaps(ctx, q.Target, f.OffsetMapTopic())
	if err != nil && !errors.Is(err, mm2read.ErrNoTopic) {
		return nil, err
	}
	m := offsetsync.NewStore(offsetsync.Options{})
	if _, err := mm2read.LoadFlowOffsetSyncs(ctx, f, q.Source, q.Target, m); err == nil {
		syncs = m
	} else if !errors.Is(err, mm2read.ErrNoTopic) && !errors.Is(err, mm2read.ErrSideDown) {
		return nil, err
	}
	// The remote partitions' ends on the target.
	remote := map[cluster.TP]cluster.TP{}
	var rtps []cluster.TP
	tts, err := q.Target.ListTopics(ctx)
	if err != nil {
		return nil, err
	}
	for _, tp := range q.TPs {
		rt := cluster.TP{Topic: f.RemoteTopic(tp.Topic), Partition: tp.Partition}
		if tts[rt.Topic].Partitions > int(tp.Partition) {
			remote[tp] = rt
			rtps = append(rtps, rt)
		}
	}
	tEnds := map[cluster.TP]cluster.OffsetResult{}
	if len(rtps) > 0 {
		if tEnds, err = q.Target.ListOffsets(ctx, rtps, cluster.Latest); err != nil {
			return nil, err
		}
	}
	tAt := now()

	out := map[cluster.TP]PositionEvidence{}
	// Estimates from a sync to verify: the source record just before the estimate against the
	// last record on the target.
	verifyS, verifyT := map[cluster.TP]int64{}, map[cluster.TP]int64{}
	for _, tp := range q.TPs {
		in := lag.PositionInput{SourceStart: -1, SourceEnd: -1, TargetEnd: -1, TargetAt: tAt}
		if v, ok := q.SourceStarts[tp]; ok {
			in.SourceStart = v
		}
		if v, ok := q.SourceEnds[tp]; ok {
			in.SourceEnd = v
		}
		if l, ok := q.Live[tp]; ok {
			l := l
			in.Live = &l
		}
		if st, ok := stored[tp]; ok {
			in.Stored = &lag.Observed{Next: st.Offset + 1, At: st.At}
		}
		if om := maps[tp]; om != nil {
			if last, ok := om.Last(); ok {
				in.Map = &lag.MapObserved{Next: last.SrcEnd(), TargetEnd: last.TgtEnd()}
			}
		}
		if rt, ok := remote[tp]; ok {
			in.TargetEnd = tEnds[rt].Offset
		}
		if syncs != nil {
			if sy, at, ok := syncs.Latest(offsetsync.TP{Topic: tp.Topic, Partition: tp.Partition}); ok {
				in.Sync = &lag.SyncObserved{Upstream: sy.Upstream, Downstream: sy.Downstream, At: at}
				mapWhole := in.Map != nil && in.Map.TargetEnd == in.TargetEnd // the map answers exactly: nothing to verify
				if est := sy.Upstream + (in.TargetEnd - sy.Downstream); in.Live == nil && in.TargetEnd > sy.Downstream && q.Source != nil && !mapWhole &&
					(in.Stored == nil || est >= in.Stored.Next) {
					verifyS[tp] = min(est, max(in.SourceEnd, 1)) - 1
					verifyT[remote[tp]] = in.TargetEnd - 1
				}
			}
		}
		out[tp] = PositionEvidence{Input: in}
	}
	if len(verifyS) > 0 {
		sRecs := RecordsAt(ctx, q.Source, verifyS, 5*time.Second)
		tRecs := RecordsAt(ctx, q.Target, verifyT, 5*time.Second)
		for tp := range verifyS {
			ev := out[tp]
			s, sok := sRecs[tp]
			t, tok := tRecs[remote[tp]]
			ok := sok && tok && s.Offset == verifyS[tp] && SameRecord(s, t)
			ev.Input.Verified = &ok
			out[tp] = ev
		}
	}
	for tp, ev := range out {
		ev.Position = lag.ReplicatedPosition(ev.Input)
		out[tp] = ev
	}
	return out, nil
}

// SameRecord reports whether two records carry the same key, value, timestamp and headers (a
// record and its copy; a trailing kmm provenance header is not content).
func SameRecord(a, b cluster.Record) bool {
	ah, bh := cluster.WithoutOrigin(a.Headers), cluster.WithoutOrigin(b.Headers)
	if !bytes.Equal(a.Key, b.Key) || !bytes.Equal(a.Value, b.Value) || !a.Timestamp.Equal(b.Timestamp) || len(ah) != len(bh) {
		return false
	}
	for i := range ah {
		if ah[i].Key != bh[i].Key || !bytes.Equal(ah[i].Value, bh[i].Value) {
			return false
		}
	}
	return true
}

// RecordsAt reads, per partition, the first record at or after the given offset (waiting at
// most wait in total). Partitions without a record in time are missing from the result.
func RecordsAt(ctx context.Context, c cluster.Cluster, at map[cluster.TP]int64, wait time.Duration) map[cluster.TP]cluster.Record {
	out := map[cluster.TP]cluster.Record{}
	if len(at) == 0 {
		return out
	}
	r, err := c.NewReader()
	if err != nil {
		return out
	}
	defer r.Close()
	if err := r.Assign(at); err != nil {
		return out
	}
	deadline := time.Now().Add(wait)
	for len(out) < len(at) && time.Now().Before(deadline) {
		recs, err := r.Poll(ctx, 1000, 200*time.Millisecond)
		if err != nil {
			return out
		}
		for _, rec := range recs {
			tp := cluster.TP{Topic: rec.Topic, Partition: rec.Partition}
			if _, seen := out[tp]; !seen && rec.Offset >= at[tp] {
				out[tp] = rec
			}
		}
	}
	return out
}
