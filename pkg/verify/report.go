// Package verify proves that a flow's target is a faithful, failover-ready copy of its source:
// the metadata checks (topics, partitions, replication factor, configs, ACLs, progress, retention
// gaps, lag, heartbeats, checkpoints, offset syncs, group positions, flow state), the sample
// check of offset-sync anchors, the full content comparison of both sides by record digests, and
// the canary. It reads the clusters only through pkg/cluster and returns findings as data; the
// command (pkg/cmd/verifycmd) renders them. Only the canary writes (to its own topic).
package verify

import (
	"sort"
	"time"
)

// Status is the verdict of one finding.
type Status string

// Verdicts, worst last.
const (
	OK   Status = "OK"
	Warn Status = "WARN"
	Fail Status = "FAIL"
)

// Checks, in the order the table shows them.
const (
	CheckReachable   = "reachable"
	CheckTopics      = "topics"
	CheckPartitions  = "partitions"
	CheckRF          = "replication-factor"
	CheckConfigs     = "configs"
	CheckACLs        = "acls"
	CheckProgress    = "progress"
	CheckRetention   = "retention-gap"
	CheckTargetStart = "target-log-start"
	CheckLag         = "lag"
	CheckHeartbeats  = "heartbeats"
	CheckOffsetSyncs = "offset-syncs"
	CheckCheckpoints = "checkpoints"
	CheckGroups      = "group-offsets"
	CheckFlowState   = "flow-state"
	CheckSample      = "sample"
	CheckFull        = "full"
	CheckCanary      = "canary"
)

// CheckOrder is the order of checks in reports.
var CheckOrder = []string{CheckReachable, CheckFlowState, CheckTopics, CheckPartitions, CheckRF, CheckConfigs, CheckACLs, CheckProgress,
	CheckRetention, CheckTargetStart, CheckLag, CheckHeartbeats, CheckOffsetSyncs, CheckCheckpoints, CheckGroups, CheckSample, CheckFull, CheckCanary}

// Finding is one verdict of one check, on one topic/partition/group when it applies.
type Finding struct {
	Check        string           `json:"check"`
	Status       Status           `json:"status"`
	Topic        string           `json:"topic,omitempty"`        // source topic
	RemoteTopic  string           `json:"remote_topic,omitempty"` // its name on the target
	Partition    *int32           `json:"partition,omitempty"`
	Group        string           `json:"group,omitempty"`
	SourceOffset *int64           `json:"source_offset,omitempty"`
	TargetOffset *int64           `json:"target_offset,omitempty"`
	Reason       string           `json:"reason"`
	Counts       map[string]int64 `json:"counts,omitempty"`
}

// Report is the result of one verify run of one flow.
type Report struct {
	Flow       string    `json:"flow"`
	Level      string    `json:"level"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	Findings   []Finding `json:"findings"`
	Summary    Summary   `json:"summary"`
	// Seconds is how long each phase took: metadata, sample, full.
	Seconds map[string]float64 `json:"seconds"`
}

// Summary counts the findings by verdict.
type Summary struct {
	OK   int `json:"ok"`
	Warn int `json:"warn"`
	Fail int `json:"fail"`
}

// P returns a pointer to v (for the optional fields of a Finding).
func P[T any](v T) *T { return &v }

// Add appends a finding.
func (r *Report) Add(f Finding) { r.Findings = append(r.Findings, f) }

// Finish sorts the findings (check order, topic, partition, group) and counts them.
func (r *Report) Finish(now time.Time) {
	r.FinishedAt = now
	rank := map[string]int{}
	for i, c := range CheckOrder {
		rank[c] = i
	}
	sort.SliceStable(r.Findings, func(i, j int) bool {
		a, b := r.Findings[i], r.Findings[j]
		if rank[a.Check] != rank[b.Check] {
			return rank[a.Check] < rank[b.Check]
		}
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		pa, pb := int32(-1), int32(-1)
		if a.Partition != nil {
			pa = *a.Partition
		}
		if b.Partition != nil {
			pb = *b.Partition
		}
		if pa != pb {
			return pa < pb
		}
		return a.Group < b.Group
	})
	r.Summary = Summary{}
	for _, f := range r.Findings {
		switch f.Status {
		case OK:
			r.Summary.OK++
		case Warn:
			r.Summary.Warn++
		case Fail:
			r.Summary.Fail++
		}
	}
}

// Failed reports whether any finding failed.
func (r *Report) Failed() bool {
	for _, f := range r.Findings {
		if f.Status == Fail {
			return true
		}
	}
	return false
}

// Thresholds turn measurements into failures (zero: off).
type Thresholds struct {
	MaxLagRecords    int64         `toml:"max_lag_records"`
	MaxLagTime       time.Duration `toml:"-"`
	MaxCheckpointAge time.Duration `toml:"-"`
	// MaxDuplicates fails the full check when a partition has more duplicates; nil: never.
	MaxDuplicates *int64 `toml:"max_duplicates"`
}
