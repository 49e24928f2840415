package lag

import "time"

// Where a replicated position came from (PositionEvidence.Source, the SOURCE column of `kmm lag`).
const (
	// FromLive: the position a running `kmm replicate` reports for its acknowledged records.
	FromLive = "live"
	// FromTargetEnd: the newest offset sync mapped through the target's current end offset: the
	// sync says source offset u landed at target offset d, so the T records after d are the
	// source records after u.
	FromTargetEnd = "offset-sync+target-end"
	// FromProgress: the resume position stored in the flow's offsets topic (flushed every
	// offset.flush.interval.ms: 1 s by kmm, 60 s by MM2).
	FromProgress = "stored-progress"
	// FromNone: nothing is known; the position is the source's log start.
	FromNone = "none"
	// FromMap: kmm's offset map stored on the target accounts for every record of the remote
	// partition up to its end: the source offset after the newest copy is the position.
	FromMap = "offset-map"
)

// MapObserved is what a partition's stored offset map (pkg/offsetmap) says: the source offset
// after its newest copied record, and the target offset after that copy.
type MapObserved struct {
	Next, TargetEnd int64
}

// Observed is a next-offset-to-replicate seen at a time.
type Observed struct {
	Next int64 // next source offset not replicated (last replicated + 1)
	At   time.Time
}

// SyncObserved is the newest offset sync of a partition: source offset Upstream is at target
// offset Downstream.
type SyncObserved struct {
	Upstream, Downstream int64
	At                   time.Time // when the sync was written
}

// PositionInput is what was fetched about one replicated partition. Everything is optional
// except the source offsets (SourceEnd < 0: the source was not readable).
type PositionInput struct {
	SourceStart int64 // -1 unknown
	SourceEnd   int64 // -1 unknown (source down)
	Live        *Observed
	Stored      *Observed
	// Map is the stored offset map's newest copy (nil: no map).
	Map  *MapObserved
	Sync *SyncObserved
	// TargetEnd is the remote partition's end offset now (-1: the partition does not exist or
	// was not read), read at TargetAt.
	TargetEnd int64
	TargetAt  time.Time
	// Verified is set by the caller after comparing the last record on the target with the
	// source record just before the estimate from the sync: when they are equal the estimate is
	// exact (the source's offsets between the sync and the estimate hold no gaps that fooled it).
	Verified *bool
}

// Position is the replicated position of a partition, from the best evidence available.
type Position struct {
	// Next is the next source offset not known to be on the target: every source record before
	// it is on the target. It is a lower bound of the truth.
	Next int64 `json:"next_offset"`
	// Max is the upper bound of the true next offset (== Next when Exact): records in
	// [Next, Max) may already be on the target. -1 when unknown (no source end).
	Max int64 `json:"next_offset_max"`
	// Exact: Next is the true position as of AsOf.
	Exact bool `json:"exact"`
	// Source names the evidence (FromLive, FromTargetEnd, FromProgress, FromNone).
	Source string `json:"position_source"`
	// AsOf is when that evidence was true.
	AsOf time.Time `json:"as_of"`
	// OnTarget: at least one record of the partition is on the target (or progress is stored).
	OnTarget bool `json:"on_target"`
}

// ReplicatedPosition is the replicated position of one partition: the live position of a running
// replicator when there is one; otherwise the further of stored progress and the newest offset
// sync mapped through the target's end; otherwise nothing (the source's log start).
//
// The mapping through the target end assumes the records after the sync on the target are
// distinct source records, one per source offset. The caller verifies it by comparing the last
// record on the target with the source record just before the estimate (Verified): equal, the
// estimate is exact (replication is in order, so everything before that record is there and
// nothing after it); not equal (duplicates, transaction markers, compaction gaps), only the
// synced record itself is known to be there. Unverified, the true position is in [Next, Max],
// Max being the source end.
//
// It is pure: the caller fetches and passes the observations, and it is the one definition of
// "replicated position" for lag, status, and failover's drain and RPO.
func ReplicatedPosition(in PositionInput) Position {
	p := Position{Next: in.SourceStart, Max: in.SourceEnd, Source: FromNone}
	if p.Next < 0 {
		p.Next = 0
	}
	p.OnTarget = in.TargetEnd > 0
	clamp := func() {
		if in.SourceEnd >= 0 && p.Next > in.SourceEnd {
			p.Next = in.SourceEnd
		}
		if in.SourceEnd >= 0 && p.Next == in.SourceEnd {
			p.Exact, p.Max = true, in.SourceEnd
		}
		if p.Exact {
			p.Max = p.Next
		}
	}
	if in.Live != nil && in.Live.Next >= 0 {
		p.Next, p.Source, p.AsOf, p.Exact = in.Live.Next, FromLive, in.Live.At, true
		p.OnTarget = p.OnTarget || in.Live.Next > 0
		clamp()
		return p
	}
	if m := in.Map; m != nil && m.Next >= 0 && in.TargetEnd >= 0 && m.TargetEnd == in.TargetEnd {
		// Every record of the remote partition is in the map: what the map's newest copy
		// follows is on the target, nothing after it (the stored progress may be further only
		// by source offsets without a record: transaction markers).
		p.Next, p.Source, p.AsOf, p.Exact = m.Next, FromMap, in.TargetAt, true
		if in.Stored != nil && in.Stored.Next > p.Next {
			p.Next = in.Stored.Next
		}
		p.OnTarget = in.TargetEnd > 0 || p.Next > 0
		clamp()
		return p
	}
	if in.Stored != nil && in.Stored.Next >= 0 {
		p.Next, p.Source, p.AsOf = in.Stored.Next, FromProgress, in.Stored.At
		p.OnTarget = true
		// Stored progress is exact as of when it was written; after that the replicator may
		// have gone on, up to the source end.
	}
	if m := in.Map; m != nil && m.Next > p.Next {
		p.Next, p.Source, p.AsOf = m.Next, FromMap, in.TargetAt // a floor: the map's copies are there
		p.OnTarget = true
	}
	if s := in.Sync; s != nil && in.TargetEnd >= 0 && in.TargetEnd > s.Downstream {
		est := s.Upstream + (in.TargetEnd - s.Downstream)
		if in.Verified != nil && !*in.Verified {
			// The records do not line up (duplicates, or source offsets without a record after
			// the sync): only the synced record itself is known to be there.
			est = s.Upstream + 1
		}
		if est >= p.Next {
			p.Next, p.Source, p.AsOf = est, FromTargetEnd, in.TargetAt
			p.Exact = in.Verified != nil && *in.Verified
		}
	} else if s != nil && in.TargetEnd >= 0 && in.TargetEnd == s.Downstream && s.Upstream >= p.Next {
		// The synced record is the last thing the sync saw; the target's end is its offset:
		// the record itself is not yet acknowledged there.
		p.Next, p.Source, p.AsOf = s.Upstream, FromTargetEnd, in.TargetAt
	}
	if p.Source == FromNone && in.TargetEnd == 0 {
		p.Exact, p.AsOf = true, in.TargetAt // nothing of the partition is on the target
	}
	clamp() // a Next below the source's log start is kept: Compute counts those records as lost to retention
	return p
}

// Remaining returns the records of the source not known to be on the target (SourceEnd − Next)
// and the smallest it can be (SourceEnd − Max); -1, -1 when the source end is unknown.
func (p Position) Remaining(sourceEnd int64) (upper, lower int64) {
	if sourceEnd < 0 {
		return -1, -1
	}
	upper = max(0, sourceEnd-p.Next)
	lower = upper
	if p.Max >= 0 {
		lower = max(0, sourceEnd-p.Max)
	}
	return upper, lower
}
