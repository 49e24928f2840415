// Package health decides whether a replication flow is OK, DEGRADED or DOWN from a snapshot of
// what the clusters show, and says why in plain words. It is pure: no I/O, no clock reads.
package health

import (
	"fmt"
	"strings"
	"time"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/lag"
)

// FlowStatus is a snapshot of one flow, as collected from the clusters.
type FlowStatus struct {
	Flow              string
	Source, Target    string
	SourceBoot        string
	TargetBoot        string
	Enabled           bool
	Heartbeats        bool
	HeartbeatInterval time.Duration
	FlushInterval     time.Duration
	SourceErr         error // nil: reachable
	TargetErr         error
	SelectedTopics    []string // on S (nil when S is unreachable)
	MissingOnT        []string // selected topics whose remote topic does not exist on T
	// TopicsListed: S's topics were listed (SelectedTopics is known); TargetListed: T's too
	// (MissingOnT is known); LagKnown: Lag was computed. What is not known is reported as such
	// (null, "?"), never as 0.
	TopicsListed, TargetListed, LagKnown bool
	Lag                                  []lag.PartitionLag
	StoredParts                          int       // partitions with a stored position on T
	LastProgress                         time.Time // newest resume-position record for this source on T
	LastHeartbeat                        time.Time // newest heartbeat (S,T) on T
	// DRState is the flow's state in __kmm_state (REPLICATING, FAILING_OVER, FAILED_OVER,
	// FAILING_BACK; "" when it could not be read), DRDetail says since when and by whom, and
	// Replicators counts live replicator leases.
	DRState     string
	DRDetail    string
	Replicators int
	// Workers are the live replicators that run the flow as its workers (kmm.workers.enabled),
	// from their leases.
	Workers     []Worker
	Checkpoints bool // the flow emits checkpoints
	GroupSync   bool // sync.group.offsets.enabled
	Groups      []GroupStatus
	// Endpoint is what a running `kmm replicate --listen` (or a Connect REST API) says of the
	// flow's connectors; nil when no endpoint was given.
	Endpoint *EndpointStatus
	// RateLimit is the flow's kmm.rate.limit.bytes.per.second in the file (0: none).
	RateLimit int64
}

// EndpointStatus is a replicate endpoint's view of one flow.
type EndpointStatus struct {
	URL   string
	Err   string            // unreachable or unreadable ("" ok)
	State map[string]string // connector simple name -> RUNNING, FAILED, UNASSIGNED, ... (missing: not listed)
	Trace map[string]string // connector simple name -> failure trace
	// RateLimit and Throttled are the flow's rate limit in force and the seconds its pipelines
	// waited for it, from the endpoint's /metrics (nil: not reported).
	RateLimit *int64
	Throttled *float64
}

// GroupStatus is one consumer group as status sees it.
type GroupStatus struct {
	Group          string
	LastCheckpoint time.Time // newest checkpoint of the group on T (zero: none)
	Behind         bool      // the group committed on S past what its checkpoints say
	ActiveOnTarget int       // members on T (its offsets cannot be synced)
}

// State of a flow.
type State string

// States, worst last.
const (
	OK State = "OK"
	// FailedOver: the flow was failed over on purpose (__kmm_state FAILED_OVER): its target is
	// the primary and kmm replicate does not run it until failback. Not a fault (exit 0); its
	// target unreachable is still DOWN.
	FailedOver State = "FAILED_OVER"
	Degraded   State = "DEGRADED"
	Down       State = "DOWN"
)

// Healthy reports whether the state needs nobody's attention (OK, or FAILED_OVER on purpose).
func (s State) Healthy() bool { return s == OK || s == FailedOver }

// Limits tune the judgement.
type Limits struct {
	MaxHeartbeatAge time.Duration // default max(60 s, 10 × interval)
	MaxProgressAge  time.Duration // with records waiting; default max(2 min, 10 × flush interval)
	MaxLagRecords   int64         // 0: off
	// MaxCheckpointAge: a group that committed past its newest checkpoint longer ago than
	// this makes the flow DEGRADED. Default 2 min.
	MaxCheckpointAge time.Duration
}

// Report is the judgement of one flow, with the figures a person wants to see. A figure that
// is not known (a cluster unreachable; the lag of a heartbeats-only flow, which copies nothing)
// is nil: JSON null, "?" in the table, never 0.
type Report struct {
	Flow            string   `json:"flow"`
	State           State    `json:"state"`
	Reasons         []string `json:"reasons"`
	SourceReachable bool     `json:"source_reachable"`
	TargetReachable bool     `json:"target_reachable"`
	TopicsMatched   *int     `json:"topics_matched"`           // nil: the source's topics are not known
	TopicsMissing   *int     `json:"topics_missing_on_target"` // nil: the target's topics are not known
	Partitions      *int     `json:"partitions"`
	LagRecords      *int64   `json:"lag_records"`
	MaxLagSeconds   *float64 `json:"max_lag_seconds"` // nil also when records wait whose age is not known
	LostToRetention *int64   `json:"lost_to_retention"`
	// The ages are -1 when there is none on the target (never), nil when not known (the target
	// unreachable).
	HeartbeatAgeMs  *int64 `json:"heartbeat_age_ms"`
	ProgressAgeMs   *int64 `json:"progress_age_ms"`
	CheckpointAgeMs *int64 `json:"checkpoint_age_ms"`  // newest checkpoint of any group
	DRState         string `json:"dr_state,omitempty"` // the flow's state in __kmm_state
	// HeartbeatsOnly: the flow is disabled and runs for heartbeats only (MM2's herder): it
	// copies nothing, so it has no topics, lag or progress (null, "-" in the table).
	HeartbeatsOnly bool `json:"heartbeats_only,omitempty"`
	Replicators    *int `json:"replicators_alive"` // live `kmm replicate` leases of the flow; nil: not known
	// RateLimit is the flow's rate limit in bytes per second (0, omitted: none): the one the
	// running replicator reports (--endpoint), else the file's; RateLimitFrom says which
	// ("endpoint", "file"); ThrottledSeconds is how long the replicator's pipelines waited for it
	// since it started (with --endpoint).
	RateLimit        int64    `json:"rate_limit_bytes_per_second,omitempty"`
	RateLimitFrom    string   `json:"rate_limit_from,omitempty"`
	ThrottledSeconds *float64 `json:"throttled_seconds,omitempty"`
	Workers          []Worker `json:"workers,omitempty"` // kmm.workers.enabled: who copies which partitions
}

// Worker is one live `kmm replicate` that runs a flow as one of its workers.
type Worker struct {
	Instance   string   `json:"instance"`
	Host       string   `json:"host"`
	PID        int      `json:"pid"`
	Leader     bool     `json:"leader"`
	Partitions []string `json:"partitions"`
}

func age(now, t time.Time) int64 {
	if t.IsZero() {
		return -1
	}
	return max(0, now.Sub(t).Milliseconds()) // clocks of clusters and this host may differ slightly
}

func human(ms int64) string {
	return (time.Duration(ms) * time.Millisecond).Round(time.Second).String()
}

// Evaluate judges one flow.
func Evaluate(s FlowStatus, now time.Time, lim Limits) Report {
	r := Report{Flow: s.Flow, State: OK, SourceReachable: s.SourceErr == nil, TargetReachable: s.TargetErr == nil, Reasons: []string{},
		DRState: s.DRState, Workers: s.Workers, HeartbeatsOnly: !s.Enabled}
	hbAge, progAge := age(now, s.LastHeartbeat), age(now, s.LastProgress)
	var lagRecords, lost int64
	var maxLagSec float64
	ageUnknown := false
	for _, l := range s.Lag {
		lagRecords += l.LagRecords
		lost += l.LostToRetention
		if l.LagRecords > 0 && l.LagSeconds < 0 {
			ageUnknown = true
		}
		maxLagSec = max(maxLagSec, l.LagSeconds)
	}
	// The figures, where known.
	if s.SourceErr == nil && s.TopicsListed {
		r.TopicsMatched = ptr(len(s.SelectedTopics))
		if s.TargetErr == nil && s.TargetListed {
			r.TopicsMissing = ptr(len(s.MissingOnT))
		}
	}
	if s.LagKnown && s.SourceErr == nil && s.TargetErr == nil {
		r.Partitions, r.LagRecords, r.LostToRetention = ptr(len(s.Lag)), ptr(lagRecords), ptr(lost)
		if !ageUnknown {
			r.MaxLagSeconds = ptr(maxLagSec)
		}
	}
	if s.TargetErr == nil {
		r.HeartbeatAgeMs, r.Replicators = ptr(hbAge), ptr(s.Replicators)
		if s.Enabled {
			r.ProgressAgeMs = ptr(progAge)
		}
	}
	if s.RateLimit > 0 {
		r.RateLimit, r.RateLimitFrom = s.RateLimit, "file"
	}
	if ep := s.Endpoint; ep != nil && ep.Err == "" && ep.RateLimit != nil {
		r.RateLimit, r.RateLimitFrom, r.ThrottledSeconds = *ep.RateLimit, "endpoint", ep.Throttled
		if r.RateLimit == 0 {
			r.RateLimitFrom = ""
		}
	}
	var newestCk time.Time
	for _, g := range s.Groups {
		if g.LastCheckpoint.After(newestCk) {
			newestCk = g.LastCheckpoint
		}
	}
	if s.TargetErr == nil {
		r.CheckpointAgeMs = ptr(age(now, newestCk))
	}
	worse := func(st State, format string, args ...any) {
		if st == Down || (st == Degraded && r.State.Healthy()) {
			r.State = st
		}
		r.Reasons = append(r.Reasons, fmt.Sprintf(format, args...))
	}
	if s.DRState == "FAILED_OVER" {
		// Failed over on purpose: the target is the primary; the replication checks (heartbeats,
		// progress, checkpoints, the source's reachability) do not apply until failback.
		r.State = FailedOver
		r.Reasons = append(r.Reasons, fmt.Sprintf("failed over to %s (%s): %s is the primary; kmm replicate does not run %s until kmm failback FILE --flow '%s'",
			s.Target, s.DRDetail, s.Target, s.Flow, s.Flow))
		if s.TargetErr != nil {
			worse(Down, "target cluster %s (%s), the primary since the failover, is unreachable: %s", s.Target, s.TargetBoot, cluster.Cause(s.TargetErr))
		}
		if s.SourceErr != nil {
			r.Reasons = append(r.Reasons, fmt.Sprintf("source cluster %s (%s) is unreachable (%s); failback needs it", s.Source, s.SourceBoot, cluster.Cause(s.SourceErr)))
		}
		return r
	}
	if s.TargetErr != nil {
		worse(Down, "target cluster %s (%s) is unreachable: %s", s.Target, s.TargetBoot, cluster.Cause(s.TargetErr))
	}
	if s.DRState != "" && s.DRState != "REPLICATING" {
		worse(Degraded, "flow is %s (%s): kmm replicate does not run it", s.DRState, s.DRDetail)
	}
	if ep := s.Endpoint; ep != nil {
		if ep.Err != "" {
			worse(Degraded, "replicate endpoint %s: %s", ep.URL, ep.Err)
		} else {
			stalledSaid := false
			for _, c := range []string{"MirrorSourceConnector", "MirrorCheckpointConnector", "MirrorHeartbeatConnector"} {
				switch st := ep.State[c]; st {
				case "FAILED":
					worse(Down, "replicate at %s reports %s FAILED: %s", ep.URL, c, firstLine(ep.Trace[c]))
				case "RUNNING":
					// A RUNNING connector with a trace cannot move (kmm replicate --listen
					// reports a cluster it needs unreachable, or a stall).
					if tr := ep.Trace[c]; tr != "" && !stalledSaid {
						stalledSaid = true // the connectors of a flow share the reason: say it once
						worse(Down, "replicate at %s: %s is %s", ep.URL, c, firstLine(tr))
					}
				case "":
				default:
					if c == "MirrorSourceConnector" && s.Enabled {
						worse(Degraded, "replicate at %s reports %s %s", ep.URL, c, st)
					}
				}
			}
			if s.Enabled && ep.State["MirrorSourceConnector"] == "" {
				worse(Degraded, "replicate at %s does not run this flow", ep.URL)
			}
		}
	}
	if s.SourceErr != nil {
		msg := "source cluster %s (%s) is unreachable: %s"
		if s.TargetErr == nil && progAge >= 0 {
			msg += fmt.Sprintf("; %s last stored progress %s ago", s.Target, human(progAge))
		}
		worse(Down, msg, s.Source, s.SourceBoot, cluster.Cause(s.SourceErr))
	}
	if s.Heartbeats && s.TargetErr == nil {
		maxHB := lim.MaxHeartbeatAge
		if maxHB <= 0 {
			maxHB = max(time.Minute, 10*s.HeartbeatInterval)
		}
		switch {
		case hbAge < 0:
			worse(Degraded, "no heartbeat from %s on %s yet (is `kmm replicate` or MM2 running for this flow?)", s.Flow, s.Target)
		case time.Duration(hbAge)*time.Millisecond > maxHB:
			worse(Degraded, "no heartbeat from %s for %s", s.Flow, human(hbAge))
		}
	}
	if !s.Enabled || s.SourceErr != nil || s.TargetErr != nil {
		return r
	}
	if len(s.MissingOnT) > 0 {
		worse(Degraded, "%d topic(s) not yet on %s: %s", len(s.MissingOnT), s.Target, list(s.MissingOnT))
	}
	if lost > 0 {
		n := 0
		for _, l := range s.Lag {
			if l.LostToRetention > 0 {
				n++
			}
		}
		worse(Degraded, "%d partition(s) lost %d record(s) to retention on %s before they were replicated", n, lost, s.Source)
	}
	maxProg := lim.MaxProgressAge
	if maxProg <= 0 {
		maxProg = max(2*time.Minute, 10*s.FlushInterval)
	}
	if lagRecords > 0 {
		switch {
		case progAge < 0:
			worse(Degraded, "%d record(s) wait and no progress is stored on %s (is `kmm replicate` running?)", lagRecords, s.Target)
		case time.Duration(progAge)*time.Millisecond > maxProg:
			worse(Degraded, "no progress for %s while %d record(s) wait", human(progAge), lagRecords)
		}
	}
	if s.Checkpoints {
		maxCk := lim.MaxCheckpointAge
		if maxCk <= 0 {
			maxCk = 2 * time.Minute
		}
		for _, g := range s.Groups {
			switch {
			case g.Behind && g.LastCheckpoint.IsZero():
				worse(Degraded, "group %s has committed offsets on %s but no checkpoint on %s", g.Group, s.Source, s.Target)
			case g.Behind && now.Sub(g.LastCheckpoint) > maxCk && s.SourceErr == nil:
				worse(Degraded, "checkpoints for group %s are %s old while it keeps committing on %s", g.Group, human(now.Sub(g.LastCheckpoint).Milliseconds()), s.Source)
			}
			if s.GroupSync && g.ActiveOnTarget > 0 {
				worse(Degraded, "group %s is active on %s (%d member(s)), so its offsets are not synced", g.Group, s.Target, g.ActiveOnTarget)
			}
		}
	}
	if lim.MaxLagRecords > 0 && lagRecords > lim.MaxLagRecords {
		worse(Degraded, "%d records behind (limit %d)", lagRecords, lim.MaxLagRecords)
	}
	return r
}

func ptr[T any](v T) *T { return &v }

func list(s []string) string {
	if len(s) > 5 {
		return strings.Join(s[:5], ", ") + fmt.Sprintf(" and %d more", len(s)-5)
	}
	return strings.Join(s, ", ")
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
