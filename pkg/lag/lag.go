// Package lag computes replication lag from snapshots: per source partition, how many records
// are not yet on the target and how old the oldest of them is, and which thresholds are
// exceeded. It is pure: no I/O, no clock reads (the caller passes "now").
package lag

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// PartitionInput is what the collector fetched for one replicated source partition.
type PartitionInput struct {
	Flow        string
	Topic       string // source topic
	RemoteTopic string
	Partition   int32
	SourceStart int64 // log start offset on S
	SourceEnd   int64 // end offset (high watermark) on S
	Stored      int64 // last replicated offset stored on T (mm2-offsets), -1 when none
	// Position is the replicated position from ReplicatedPosition; nil: from Stored alone.
	Position *Position
	// OldestUnreplicatedMs is the timestamp of the record at the next offset to replicate, 0
	// when unknown or when nothing is unreplicated.
	OldestUnreplicatedMs int64
}

// PartitionLag is one row of `kmm lag`.
type PartitionLag struct {
	Flow        string `json:"flow"`
	Topic       string `json:"topic"`
	RemoteTopic string `json:"remote_topic"`
	Partition   int32  `json:"partition"`
	SourceEnd   int64  `json:"source_end_offset"`
	Next        int64  `json:"next_offset"` // next source offset not known to be on the target
	// NextMax is the furthest the true next offset can be (== Next when Exact).
	NextMax    int64 `json:"next_offset_max"`
	LagRecords int64 `json:"lag_records"`
	// LagSeconds is the age of the oldest unreplicated record: 0 when none waits, -1 when
	// records wait and its timestamp could not be read (JSON null: not known, never 0).
	LagSeconds float64 `json:"lag_seconds"`
	Started    bool    `json:"started"` // a record of the partition is on T (or a position is stored)
	// LagRecordsMin is the smallest the lag can be when the position is an estimate (==
	// LagRecords when exact): LagRecords records are not known to be on T, at least
	// LagRecordsMin are not.
	LagRecordsMin int64 `json:"lag_records_min"`
	// Exact, PositionSource and AsOf say how the position (Next) is known: see ReplicatedPosition.
	// AsOf is zero when not known (JSON null).
	Exact          bool      `json:"exact"`
	PositionSource string    `json:"position_source"`
	AsOf           time.Time `json:"as_of"`
	// LostToRetention counts records that were deleted on S before they were replicated
	// (the stored position is behind the log start): they cannot be recovered.
	LostToRetention int64 `json:"lost_to_retention"`
}

// Next returns the next offset to replicate: stored+1, or the log start when nothing is stored
// (MM2's default auto.offset.reset=earliest).
func Next(in PartitionInput) int64 {
	if in.Stored >= 0 {
		return in.Stored + 1
	}
	return in.SourceStart
}

// Compute turns inputs into rows, sorted by lag (largest first), then name.
func Compute(ins []PartitionInput, now time.Time) []PartitionLag {
	out := make([]PartitionLag, 0, len(ins))
	for _, in := range ins {
		pos := in.Position
		if pos == nil {
			pi := PositionInput{SourceStart: in.SourceStart, SourceEnd: in.SourceEnd, TargetEnd: -1}
			if in.Stored >= 0 {
				pi.Stored = &Observed{Next: in.Stored + 1}
			}
			p := ReplicatedPosition(pi)
			pos = &p
		}
		next := pos.Next
		r := PartitionLag{Flow: in.Flow, Topic: in.Topic, RemoteTopic: in.RemoteTopic, Partition: in.Partition,
			SourceEnd: in.SourceEnd, Next: next, NextMax: max(pos.Max, next), Started: pos.OnTarget, Exact: pos.Exact, PositionSource: pos.Source, AsOf: pos.AsOf}
		from := next
		if from < in.SourceStart {
			r.LostToRetention = in.SourceStart - from
			from = in.SourceStart
		}
		if in.SourceEnd > from {
			r.LagRecords = in.SourceEnd - from
			r.LagRecordsMin = r.LagRecords
			if pos.Max >= from {
				r.LagRecordsMin = max(0, in.SourceEnd-pos.Max)
			}
			r.LagSeconds = -1 // records wait: their age is not known without the oldest one's timestamp
			if in.OldestUnreplicatedMs > 0 {
				r.LagSeconds = max(0, float64(now.UnixMilli()-in.OldestUnreplicatedMs)/1000)
			}
		}
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.LagRecords != b.LagRecords {
			return a.LagRecords > b.LagRecords
		}
		if a.Flow != b.Flow {
			return a.Flow < b.Flow
		}
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		return a.Partition < b.Partition
	})
	return out
}

// MarshalJSON writes what is not known as null, never as a number: lag_seconds (-1 inside) and
// as_of (zero inside).
func (r PartitionLag) MarshalJSON() ([]byte, error) {
	type plain PartitionLag
	var asOf *time.Time
	if !r.AsOf.IsZero() {
		asOf = &r.AsOf
	}
	return MarshalNoEscape(struct {
		plain
		LagSeconds *float64   `json:"lag_seconds"`
		AsOf       *time.Time `json:"as_of"`
	}{plain(r), knownFloat(r.LagSeconds), asOf})
}

// MarshalNoEscape is json.Marshal without HTML escaping (flows are named "A->B"): the
// MarshalJSON methods of the domain's rows that write unknown figures as null use it.
func MarshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// Known is n, or nil when n is negative (the -1 of a figure that is not known): JSON null.
func Known(n int64) *int64 {
	if n < 0 {
		return nil
	}
	return &n
}

func knownFloat(f float64) *float64 {
	if f < 0 {
		return nil
	}
	return &f
}

// Thresholds are the limits of `--max-lag-records` and `--max-lag-time` (zero: off).
type Thresholds struct {
	MaxRecords int64
	MaxTime    time.Duration
}

// Violations lists, in plain words, the rows over a threshold.
func Violations(rows []PartitionLag, th Thresholds) []string {
	var out []string
	for _, r := range rows {
		if th.MaxRecords > 0 && r.LagRecords > th.MaxRecords {
			out = append(out, fmt.Sprintf("%s %s[%d]: %d records behind (limit %d)", r.Flow, r.Topic, r.Partition, r.LagRecords, th.MaxRecords))
		}
		if th.MaxTime > 0 && r.LagSeconds > th.MaxTime.Seconds() {
			out = append(out, fmt.Sprintf("%s %s[%d]: oldest unreplicated record is %s old (limit %s)", r.Flow, r.Topic, r.Partition,
				time.Duration(r.LagSeconds*float64(time.Second)).Round(time.Second), th.MaxTime))
		}
	}
	return out
}

// GroupInput is one consumer group's position on one partition, with what the collector knows
// of both sides.
type GroupInput struct {
	Flow        string
	Group       string
	Topic       string // source topic
	RemoteTopic string
	Partition   int32
	Committed   int64 // committed offset on S (-1 none)
	SourceEnd   int64 // end offset on S (-1 unknown)
	Next        int64 // next source offset not known to be on T (-1 unknown)
	NextMax     int64 // the furthest the true next offset can be (-1 unknown: Next)
	Translated  int64 // the group's translated offset on T (-1 none)
	TargetEnd   int64 // end offset of the remote partition (-1 unknown)
	Bound       int64 // records the translated offset may re-deliver (-1 unknown)
}

// GroupLag is one row of `kmm lag --group`.
type GroupLag struct {
	Flow        string `json:"flow"`
	Group       string `json:"group"`
	Topic       string `json:"topic"`
	RemoteTopic string `json:"remote_topic"`
	Partition   int32  `json:"partition"`
	LagOnSource int64  `json:"lag_on_source"` // -1 unknown (JSON null)
	LagOnTarget int64  `json:"lag_on_target"` // from the translated offset; -1 unknown (JSON null)
	// If the group failed over now: records it would read again (the translation's bound), and
	// records it has not read yet that are not on the target (lost if the source is lost).
	WouldReread int64 `json:"failover_would_reread"` // -1 unknown
	CouldMiss   int64 `json:"failover_could_miss"`   // -1 unknown
	// CouldMissMin is the least it can be when the replicated position is an estimate.
	CouldMissMin int64 `json:"failover_could_miss_min"`
}

// MarshalJSON writes the figures that are not known (-1 inside) as null.
func (g GroupLag) MarshalJSON() ([]byte, error) {
	type plain GroupLag
	return MarshalNoEscape(struct {
		plain
		LagOnSource  *int64 `json:"lag_on_source"`
		LagOnTarget  *int64 `json:"lag_on_target"`
		WouldReread  *int64 `json:"failover_would_reread"`
		CouldMiss    *int64 `json:"failover_could_miss"`
		CouldMissMin *int64 `json:"failover_could_miss_min"`
	}{plain(g), Known(g.LagOnSource), Known(g.LagOnTarget), Known(g.WouldReread), Known(g.CouldMiss), Known(g.CouldMissMin)})
}

// ComputeGroups turns group inputs into rows, worst first.
func ComputeGroups(ins []GroupInput) []GroupLag {
	out := make([]GroupLag, 0, len(ins))
	for _, in := range ins {
		r := GroupLag{Flow: in.Flow, Group: in.Group, Topic: in.Topic, RemoteTopic: in.RemoteTopic, Partition: in.Partition,
			LagOnSource: -1, LagOnTarget: -1, WouldReread: in.Bound, CouldMiss: -1, CouldMissMin: -1}
		if in.SourceEnd >= 0 && in.Committed >= 0 {
			r.LagOnSource = max(0, in.SourceEnd-in.Committed)
		}
		if in.TargetEnd >= 0 && in.Translated >= 0 {
			r.LagOnTarget = max(0, in.TargetEnd-in.Translated)
		}
		if in.Translated < 0 {
			r.WouldReread = -1
		}
		if r.WouldReread > 0 && in.TargetEnd >= 0 && in.Translated >= 0 {
			// Records read again are records the target holds after the translated offset.
			r.WouldReread = min(r.WouldReread, max(0, in.TargetEnd-in.Translated))
		}
		if in.SourceEnd >= 0 && in.Next >= 0 {
			from := max(in.Next, in.Committed)
			r.CouldMiss = max(0, in.SourceEnd-from)
			r.CouldMissMin = r.CouldMiss
			if in.NextMax > in.Next {
				r.CouldMissMin = max(0, in.SourceEnd-max(in.NextMax, in.Committed))
			}
		}
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.CouldMiss != b.CouldMiss {
			return a.CouldMiss > b.CouldMiss
		}
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		return a.Partition < b.Partition
	})
	return out
}

// LinkRTT is the round trip a running replicator measures to one cluster (its metadata probe
// over the last minute): an on-call engineer sees that a slow flow is a slow link.
type LinkRTT struct {
	Cluster    string  `json:"cluster"`
	AvgMs      float64 `json:"rtt_avg_ms"`
	P99Ms      float64 `json:"rtt_p99_ms"`
	MeasuredBy string  `json:"measured_by"` // the replicate --listen endpoint
}
