package httpapi

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// StatusSchemaVersion is the schema_version of GET /api/status (kmm's JSON documents carry
// schema_version and kind; a field's meaning never changes within a version).
const StatusSchemaVersion = 1

// StatusKind is the kind of GET /api/status.
const StatusKind = "replicate-status"

// statusRefresh is how often the page refreshes itself (its script).
const statusRefresh = 2 * time.Second

// worstPartitions is how many partitions the page and the JSON list per flow, largest lag first.
const worstPartitions = 5

// eventsShown is how many of the source's events the page and the JSON show.
const eventsShown = 100

// statusDoc is GET /api/status, and what the page renders. Unknown numbers are null (nil),
// never 0; every measured number says how old it is where that matters.
type statusDoc struct {
	SchemaVersion  int        `json:"schema_version"`
	Kind           string     `json:"kind"`
	GeneratedAt    time.Time  `json:"generated_at"`
	KMM            kmmView    `json:"kmm"`
	RefreshSeconds float64    `json:"refresh_seconds"`
	Health         string     `json:"health"` // OK, or ATTENTION when a flow's health is not OK
	Flows          []flowView `json:"flows"`
	// Events: the newest first; null when the source keeps none.
	Events []eventView `json:"events"`
	// HasEvents: the source keeps events (the page then shows the section, even empty).
	HasEvents bool `json:"-"`
}

type kmmView struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	Worker  string `json:"worker_id"`
}

type flowView struct {
	Flow    string `json:"flow"`
	Source  string `json:"source"`
	Target  string `json:"target"`
	Enabled bool   `json:"enabled"` // false: a heartbeats-only flow (MM2 runs its herder for heartbeats)
	// State: REPLICATING, FAILING_OVER, FAILED_OVER, FAILING_BACK (the flow's DR state), or
	// STARTING, STOPPED (not running), HEARTBEATS (a heartbeats-only flow that runs).
	State string `json:"state"`
	// StateRecord is the flow's record in __kmm_state the state comes from (null: none known).
	StateRecord *stateView `json:"state_record"`
	// Health: OK, WARN (a cluster does not answer, not yet declared down), DOWN (a cluster the
	// flow needs is down), STALLED, FAILED, STOPPED, STARTING. Reasons say why when not OK.
	Health    string          `json:"health"`
	Reasons   []string        `json:"reasons"`
	Error     *string         `json:"error"`
	Pipelines int             `json:"pipelines"`
	Clusters  []clusterStatus `json:"clusters"`
	// The sections below are null when they do not apply (a heartbeats-only flow has no lag).
	Throughput   *throughputView  `json:"throughput"`
	Lag          *lagView         `json:"lag"`
	FailoverNow  *failoverView    `json:"failover_now"`
	Checkpoints  *checkpointsView `json:"checkpoints"`
	Transactions *txnView         `json:"transactions"`
	RateLimit    *rateLimitView   `json:"rate_limit"`
	Workers      *workersView     `json:"workers"`
}

type stateView struct {
	State string     `json:"state"`
	Epoch int64      `json:"epoch"`
	At    *time.Time `json:"marked_at"` // null: never marked
	By    string     `json:"by,omitempty"`
	RunID string     `json:"run_id,omitempty"`
	// From: "replicator" (read at start, or the mark that stopped the flow) or "__kmm_state"
	// (read in the background, ReadAgeSeconds ago).
	From           string   `json:"from"`
	ReadAgeSeconds *float64 `json:"read_age_seconds"`
}

type clusterStatus struct {
	Alias     string `json:"cluster"`
	Role      string `json:"role"` // source or target
	Bootstrap string `json:"bootstrap"`
	// Status: UP, DOWN (no usable connection for 10 s), or NO ANSWER (up, but failing for a few
	// seconds: declared DOWN after 10 s).
	Status       string     `json:"status"`
	Up           bool       `json:"up"`
	Since        *time.Time `json:"since"` // DOWN: the first failure of the outage; NO ANSWER: the first failure
	ForSeconds   *float64   `json:"for_seconds"`
	Cause        *string    `json:"cause"`
	RTTAvgMillis *float64   `json:"rtt_avg_ms"` // the link's round trip over the last minute (null: not measured)
	RTTP99Millis *float64   `json:"rtt_p99_ms"`
}

type throughputView struct {
	// Per second over WindowSeconds (about the last 30 s); null until two samples exist.
	RecordsPerSecond *float64 `json:"records_per_second"`
	BytesPerSecond   *float64 `json:"bytes_per_second"` // value bytes, as MM2's byte-count
	WindowSeconds    *float64 `json:"window_seconds"`
	RecordsTotal     int64    `json:"records_total"` // acknowledged by the target since start
	BytesTotal       int64    `json:"bytes_total"`
}

type lagView struct {
	// Records: the sum over the partitions whose lag is known (PartitionsUnknown are left
	// out); null when none is known. Source end offsets (read every second or so, SourceEndsAgeSeconds
	// ago) minus the next offset the target has not acknowledged: kmm_replication_lag_records.
	Records *int64 `json:"records"`
	// Seconds: the largest kmm_replication_lag_seconds of the partitions; null when unknown.
	Seconds            *float64   `json:"seconds"`
	SecondsApproximate bool       `json:"seconds_approximate"` // from the last acknowledgement, not the oldest record's timestamp
	Partitions         int        `json:"partitions"`
	PartitionsUnknown  int        `json:"partitions_unknown"`
	PartitionsBehind   int        `json:"partitions_behind"`
	SourceEndsAt       *time.Time `json:"source_ends_at"`
	SourceEndsAge      *float64   `json:"source_ends_age_seconds"`
	LostToRetention    int64      `json:"lost_to_retention_records"`
	Worst              []partLag  `json:"worst"` // up to 5 partitions with a lag (or an unknown one), largest first
}

type partLag struct {
	Topic       string   `json:"topic"`
	RemoteTopic string   `json:"remote_topic"`
	Partition   int32    `json:"partition"`
	Records     *int64   `json:"lag_records"`
	Seconds     *float64 `json:"lag_seconds"`
	SourceEnd   *int64   `json:"source_end_offset"`
	Acked       *int64   `json:"acked_offset"`
}

type failoverView struct {
	// Status: "ok" (computed AgeSeconds ago), "computing" (the first reading is under way),
	// "failed" (no reading succeeded: Error), "stale" (the last attempt failed: Error; the
	// numbers are from the last success, AgeSeconds ago), "off" (the source reads nothing).
	Status        string     `json:"status"`
	ComputedAt    *time.Time `json:"computed_at"`
	AgeSeconds    *float64   `json:"age_seconds"`
	TookSeconds   *float64   `json:"took_seconds"`
	EverySeconds  *float64   `json:"every_seconds"`
	LastAttemptAt *time.Time `json:"last_attempt_at"`
	Error         *string    `json:"error"`
	// RecordsNotOnTarget: source records not known to be on the target (kmm lag's LAG summed);
	// RecordsNotOnTargetMin the least it can be where positions are estimates.
	RecordsNotOnTarget    *int64 `json:"records_not_on_target"`
	RecordsNotOnTargetMin *int64 `json:"records_not_on_target_min"`
	// OldestNotOnTargetSeconds: the age of the oldest of them when computed (its timestamp);
	// null when every record is on the target or the age is unknown.
	OldestNotOnTargetSeconds *float64       `json:"oldest_not_on_target_seconds"`
	Exact                    *bool          `json:"exact"`
	PositionSources          map[string]int `json:"position_sources"`
	EvidenceAgeSeconds       *float64       `json:"evidence_age_seconds"` // the oldest position's age
	Partitions               *int           `json:"partitions"`
	Groups                   []groupCost    `json:"groups"`
}

type groupCost struct {
	Group            string `json:"group"`
	Partitions       int    `json:"partitions"`
	WouldReread      *int64 `json:"would_reread"` // summed over the partitions where known
	RereadUnknown    int    `json:"would_reread_unknown_partitions"`
	CouldMiss        *int64 `json:"could_miss"`
	CouldMissMin     *int64 `json:"could_miss_min"`
	CouldMissUnknown int    `json:"could_miss_unknown_partitions"`
	LagOnSource      *int64 `json:"lag_on_source"`
	LagOnTarget      *int64 `json:"lag_on_target"`
}

type checkpointsView struct {
	Running bool `json:"running"`
	// NewestAgeSeconds/OldestAgeSeconds: the groups' last checkpoints (null: none emitted yet).
	NewestAgeSeconds    *float64    `json:"newest_age_seconds"`
	OldestAgeSeconds    *float64    `json:"oldest_age_seconds"`
	Groups              []groupCkpt `json:"groups"`
	SkippedActiveGroups []string    `json:"skipped_active_groups"`
}

type groupCkpt struct {
	Group      string     `json:"group"`
	Last       *time.Time `json:"last_checkpoint"`
	AgeSeconds *float64   `json:"age_seconds"`
}

type txnView struct {
	Committed int64 `json:"committed"`
	Aborted   int64 `json:"aborted"`
}

type rateLimitView struct {
	BytesPerSecond   int64   `json:"bytes_per_second"` // 0: no limit
	ThrottledSeconds float64 `json:"throttled_seconds"`
}

type workersView struct {
	Group      string   `json:"group"`
	Leader     bool     `json:"leader"`
	Partitions []string `json:"partitions"` // what this process copies
	// All: every live worker of the flow from their leases in __kmm_state (null: not read yet),
	// read AllAgeSeconds ago.
	All           []workerView `json:"all"`
	AllAgeSeconds *float64     `json:"all_age_seconds"`
}

type workerView struct {
	Instance   string   `json:"instance"`
	Host       string   `json:"host"`
	Leader     bool     `json:"leader"`
	Partitions []string `json:"partitions"`
}

type eventView struct {
	Time    time.Time `json:"time"`
	Type    string    `json:"type"`
	Level   string    `json:"level"` // info, warn, error
	Flow    string    `json:"flow,omitempty"`
	Cluster string    `json:"cluster,omitempty"`
	Message string    `json:"message"`
}

// rateSampler keeps the flows' acknowledged totals over the last minute, for records/s and
// bytes/s over about 30 s.
type rateSampler struct {
	mu      sync.Mutex
	samples []rateSample
}

type rateSample struct {
	at     time.Time
	totals map[string][2]int64 // flow -> records, bytes
}

const (
	rateWindow   = 30 * time.Second
	rateMinSpan  = 2 * time.Second
	rateKeep     = 65 * time.Second
	sampleMinGap = time.Second
)

func flowTotals(flows []FlowStats) map[string][2]int64 {
	out := make(map[string][2]int64, len(flows))
	for _, f := range flows {
		var t [2]int64
		for _, p := range f.Partitions {
			t[0] += p.Records
			t[1] += p.Bytes
		}
		out[f.Name()] = t
	}
	return out
}

// observe adds a sample at now (at most one per second) and drops those older than rateKeep.
func (r *rateSampler) observe(now time.Time, totals map[string][2]int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.samples); n > 0 && now.Sub(r.samples[n-1].at) < sampleMinGap {
		return
	}
	r.samples = append(r.samples, rateSample{at: now, totals: totals})
	i := 0
	for i < len(r.samples) && now.Sub(r.samples[i].at) > rateKeep {
		i++
	}
	r.samples = r.samples[i:]
}

// rate is flow's records and bytes per second from the sample nearest to rateWindow ago (at
// least rateMinSpan old) to cur at now; ok false when there is none, or the totals went down
// (a worker gave partitions away).
func (r *rateSampler) rate(flow string, now time.Time, cur [2]int64) (recs, bytes, span float64, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var best *rateSample
	for i := range r.samples {
		s := &r.samples[i]
		age := now.Sub(s.at)
		if age < rateMinSpan {
			continue
		}
		if _, has := s.totals[flow]; !has {
			continue
		}
		if best == nil || absDur(age-rateWindow) < absDur(now.Sub(best.at)-rateWindow) {
			best = s
		}
	}
	if best == nil {
		return 0, 0, 0, false
	}
	prev := best.totals[flow]
	if cur[0] < prev[0] || cur[1] < prev[1] {
		return 0, 0, 0, false
	}
	span = now.Sub(best.at).Seconds()
	return float64(cur[0]-prev[0]) / span, float64(cur[1]-prev[1]) / span, span, true
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// status builds the document of one request.
func (s *Server) report() statusDoc {
	now := s.opts.Now()
	flows := s.src.Stats()
	totals := flowTotals(flows)
	s.rates.observe(now, totals)
	doc := statusDoc{SchemaVersion: StatusSchemaVersion, Kind: StatusKind, GeneratedAt: now.UTC(),
		KMM:            kmmView{Version: s.opts.Version, Commit: s.opts.Commit, Worker: s.workerID},
		RefreshSeconds: statusRefresh.Seconds(), Health: "OK", Flows: []flowView{}}
	readings := map[string]FlowReading{}
	ss, hasStatus := s.src.(StatusSource)
	if hasStatus {
		for _, r := range ss.Readings() {
			readings[r.Flow] = r
		}
	}
	for _, f := range flows {
		var rd *FlowReading
		if r, ok := readings[f.Name()]; ok {
			rd = &r
		}
		v := s.flowView(f, rd, hasStatus, now, totals[f.Name()])
		if v.Health != "OK" {
			doc.Health = "ATTENTION"
		}
		doc.Flows = append(doc.Flows, v)
	}
	if len(flows) == 0 {
		doc.Health = "ATTENTION"
	}
	if hasStatus {
		doc.Events, doc.HasEvents = []eventView{}, true
		for i, e := range ss.Events() {
			if i == eventsShown {
				break
			}
			doc.Events = append(doc.Events, eventView{Time: e.Time.UTC(), Type: e.Type, Level: eventLevel(e.Type), Flow: e.Flow, Cluster: e.Cluster, Message: e.Message})
		}
	}
	return doc
}

func eventLevel(typ string) string {
	switch typ {
	case "error", "retention_gap":
		return "error"
	case "warning", "cluster_down", "cluster_still_down":
		return "warn"
	}
	return "info"
}

func ptr[T any](v T) *T { return &v }

func secondsSince(now, t time.Time) *float64 {
	if t.IsZero() {
		return nil
	}
	return ptr(max(now.Sub(t).Seconds(), 0))
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return ptr(t.UTC())
}

func (s *Server) flowView(f FlowStats, rd *FlowReading, hasStatus bool, now time.Time, total [2]int64) flowView {
	v := flowView{Flow: f.Name(), Source: f.Source, Target: f.Target, Enabled: f.Enabled, Pipelines: f.Tasks, Reasons: []string{}, Clusters: []clusterStatus{}}
	if f.Err != "" {
		v.Error = ptr(f.Err)
	}
	// Clusters.
	anyDown, anyFailing := false, false
	for _, c := range f.Clusters {
		cv := clusterStatus{Alias: c.Alias, Role: c.Role, Bootstrap: c.Bootstrap, Status: "UP", Up: c.Up}
		switch {
		case !c.Up:
			cv.Status = "DOWN"
			anyDown = true
			cv.Since, cv.ForSeconds = timePtr(c.DownSince), secondsSince(now, c.DownSince)
		case !c.FailingSince.IsZero():
			cv.Status = "NO ANSWER"
			anyFailing = true
			cv.Since, cv.ForSeconds = timePtr(c.FailingSince), secondsSince(now, c.FailingSince)
		}
		if c.Cause != "" && cv.Status != "UP" {
			cv.Cause = ptr(c.Cause)
		}
		if c.RTTAvg > 0 {
			cv.RTTAvgMillis, cv.RTTP99Millis = ptr(float64(c.RTTAvg.Microseconds())/1000), ptr(float64(c.RTTP99.Microseconds())/1000)
		}
		v.Clusters = append(v.Clusters, cv)
		switch cv.Status {
		case "DOWN":
			why := fmt.Sprintf("cluster %s (%s, %s) is DOWN", c.Alias, c.Role, c.Bootstrap)
			if !c.DownSince.IsZero() {
				why += fmt.Sprintf(" since %s (for %s)", c.DownSince.UTC().Format(time.RFC3339), now.Sub(c.DownSince).Round(time.Second))
			}
			if c.Cause != "" {
				why += ": " + c.Cause
			}
			v.Reasons = append(v.Reasons, why+"; the flow waits and resumes by itself")
		case "NO ANSWER":
			why := fmt.Sprintf("cluster %s (%s) has not answered for %s", c.Alias, c.Role, now.Sub(c.FailingSince).Round(time.Second))
			if c.Cause != "" {
				why += ": " + c.Cause
			}
			v.Reasons = append(v.Reasons, why+" (declared DOWN after 10 s)")
		}
	}
	// State: the newest DR state known (the replicator's, or __kmm_state read in the
	// background), else whether the flow runs.
	var sv *stateView
	if st := f.State; st != nil {
		sv = &stateView{State: st.State, Epoch: st.Epoch, At: timePtr(st.At), By: st.By, RunID: st.RunID, From: "replicator"}
	}
	if rd != nil && rd.State != nil && !rd.At.IsZero() && (sv == nil || rd.State.Epoch > sv.Epoch ||
		(rd.State.Epoch == sv.Epoch && sv.From == "replicator")) {
		st := rd.State
		sv = &stateView{State: st.State, Epoch: st.Epoch, At: timePtr(st.At), By: st.By, RunID: st.RunID, From: "__kmm_state", ReadAgeSeconds: secondsSince(now, rd.At)}
	}
	v.StateRecord = sv
	dr := ""
	if sv != nil && sv.State != "REPLICATING" {
		dr = sv.State
	}
	switch {
	case dr != "":
		v.State = dr
	case f.Running && !f.Enabled:
		v.State = "HEARTBEATS"
	case f.Running:
		v.State = "REPLICATING"
	case f.Starting && f.Err == "":
		v.State = "STARTING"
	default:
		v.State = "STOPPED"
	}
	switch {
	case f.Err != "":
		v.Health = "FAILED"
		v.Reasons = append([]string{"the flow failed: " + f.Err}, v.Reasons...)
	case f.Paused != "":
		v.Health = "STOPPED"
		v.Reasons = append([]string{f.Paused}, v.Reasons...)
	case dr != "" && !f.Running:
		v.Health = "STOPPED"
		v.Reasons = append([]string{fmt.Sprintf("the flow is %s: it does not replicate", dr)}, v.Reasons...)
	case f.Starting:
		v.Health = "STARTING"
	case !f.Running:
		v.Health = "STOPPED"
		v.Reasons = append([]string{"the flow is not running (draining or stopped)"}, v.Reasons...)
	case anyDown:
		v.Health = "DOWN"
	case f.Stall != nil && f.Stall.Stalled:
		v.Health = "STALLED"
		v.Reasons = append(v.Reasons, stalled(f))
	case anyFailing:
		v.Health = "WARN"
	default:
		v.Health = "OK"
	}
	if f.Enabled {
		v.Throughput = &throughputView{RecordsTotal: total[0], BytesTotal: total[1]}
		if r, b, span, ok := s.rates.rate(f.Name(), now, total); ok {
			v.Throughput.RecordsPerSecond, v.Throughput.BytesPerSecond, v.Throughput.WindowSeconds = ptr(r), ptr(b), ptr(span)
		}
		v.Lag = lagOf(f, now)
	}
	if f.Enabled && hasStatus {
		v.FailoverNow = failoverOf(rd, now)
	}
	if cp := f.Checkpoints; cp != nil {
		c := &checkpointsView{Running: f.CheckpointsRunning, Groups: []groupCkpt{}, SkippedActiveGroups: cp.SkippedActiveGroups}
		if c.SkippedActiveGroups == nil {
			c.SkippedActiveGroups = []string{}
		}
		for _, g := range cp.Groups {
			gc := groupCkpt{Group: g.Group}
			if g.LastCheckpointMs > 0 {
				t := time.UnixMilli(g.LastCheckpointMs)
				gc.Last, gc.AgeSeconds = timePtr(t), secondsSince(now, t)
				if c.NewestAgeSeconds == nil || *gc.AgeSeconds < *c.NewestAgeSeconds {
					c.NewestAgeSeconds = gc.AgeSeconds
				}
				if c.OldestAgeSeconds == nil || *gc.AgeSeconds > *c.OldestAgeSeconds {
					c.OldestAgeSeconds = gc.AgeSeconds
				}
			}
			c.Groups = append(c.Groups, gc)
		}
		v.Checkpoints = c
	}
	if tx := f.Transactions; tx != nil {
		v.Transactions = &txnView{Committed: tx.Committed, Aborted: tx.Aborted}
	}
	if r := f.Rate; r != nil {
		v.RateLimit = &rateLimitView{BytesPerSecond: r.LimitBytesPerSecond, ThrottledSeconds: r.ThrottledSeconds}
	}
	if w := f.Workers; w != nil {
		wv := &workersView{Group: w.Group, Leader: w.Leader, Partitions: w.Partitions}
		if wv.Partitions == nil {
			wv.Partitions = []string{}
		}
		if rd != nil && !rd.At.IsZero() {
			wv.All, wv.AllAgeSeconds = []workerView{}, secondsSince(now, rd.At)
			for _, l := range rd.Workers {
				parts := l.Partitions
				if parts == nil {
					parts = []string{}
				}
				wv.All = append(wv.All, workerView{Instance: l.Instance, Host: l.Host, Leader: l.Leader, Partitions: parts})
			}
		}
		v.Workers = wv
	}
	return v
}

// lagOf is the flow's lag from the same numbers as /metrics (kmm_replication_lag_records and
// kmm_replication_lag_seconds).
func lagOf(f FlowStats, now time.Time) *lagView {
	l := &lagView{Partitions: len(f.Partitions), Worst: []partLag{}}
	nowMs := now.UnixMilli()
	var all []partLag
	for _, p := range f.Partitions {
		pl := partLag{Topic: p.Topic, RemoteTopic: p.RemoteTopic, Partition: p.Partition}
		l.LostToRetention += p.LostRecords
		if p.SourceEnd >= 0 {
			pl.SourceEnd = ptr(p.SourceEnd)
		}
		if p.Acked >= 0 {
			pl.Acked = ptr(p.Acked)
		}
		if p.Lag >= 0 {
			pl.Records = ptr(p.Lag)
			l.Records = ptr(deref(l.Records) + p.Lag)
			if p.Lag > 0 {
				l.PartitionsBehind++
			}
		} else {
			l.PartitionsUnknown++
		}
		if sec, ok := lagSeconds(p, nowMs); ok {
			pl.Seconds = ptr(sec)
			if l.Seconds == nil || sec > *l.Seconds {
				l.Seconds = ptr(sec)
			}
			if p.OldestUnreplicatedMs <= 0 && p.Lag > 0 {
				l.SecondsApproximate = true
			}
		}
		if pl.Records == nil || *pl.Records > 0 {
			all = append(all, pl)
		}
	}
	// Largest lag first; unknown ones after the known, then by age, then by name.
	slices.SortStableFunc(all, func(a, b partLag) int {
		if (a.Records == nil) != (b.Records == nil) {
			if a.Records == nil {
				return 1
			}
			return -1
		}
		if c := cmp.Compare(deref(b.Records), deref(a.Records)); c != 0 {
			return c
		}
		if c := cmp.Compare(derefF(b.Seconds), derefF(a.Seconds)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return cmp.Compare(a.Partition, b.Partition)
	})
	if len(all) > worstPartitions {
		all = all[:worstPartitions]
	}
	l.Worst = append(l.Worst, all...)
	if !f.SourceEndsAt.IsZero() {
		l.SourceEndsAt, l.SourceEndsAge = timePtr(f.SourceEndsAt), secondsSince(now, f.SourceEndsAt)
	}
	return l
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func derefF(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// failoverOf is the failover-now section from the source's background reading.
func failoverOf(rd *FlowReading, now time.Time) *failoverView {
	v := &failoverView{Groups: []groupCost{}}
	if rd == nil {
		v.Status = "off"
		return v
	}
	if rd.Every > 0 {
		v.EverySeconds = ptr(rd.Every.Seconds())
	}
	v.LastAttemptAt = timePtr(rd.Attempted)
	if rd.Err != "" {
		v.Error = ptr(rd.Err)
	}
	switch {
	case rd.At.IsZero() && rd.Err != "":
		v.Status = "failed"
	case rd.At.IsZero():
		v.Status = "computing"
	case rd.Err != "":
		v.Status = "stale"
	default:
		v.Status = "ok"
	}
	if rd.At.IsZero() || rd.Cost == nil {
		return v
	}
	c := rd.Cost
	v.ComputedAt, v.AgeSeconds, v.TookSeconds = timePtr(rd.At), secondsSince(now, rd.At), ptr(rd.Took.Seconds())
	v.RecordsNotOnTarget, v.RecordsNotOnTargetMin = ptr(c.NotOnTarget), ptr(c.NotOnTargetMin)
	if c.OldestSeconds > 0 {
		v.OldestNotOnTargetSeconds = ptr(c.OldestSeconds)
	}
	v.Exact, v.Partitions = ptr(c.Exact), ptr(c.Partitions)
	v.PositionSources = c.PositionSources
	v.EvidenceAgeSeconds = secondsSince(now, c.OldestAsOf)
	for _, g := range c.Groups {
		gc := groupCost{Group: g.Group, Partitions: g.Partitions, RereadUnknown: g.RereadUnknown, CouldMissUnknown: g.MissUnknown}
		if g.RereadUnknown < g.Partitions {
			gc.WouldReread = ptr(g.WouldReread)
		}
		if g.MissUnknown < g.Partitions {
			gc.CouldMiss, gc.CouldMissMin = ptr(g.CouldMiss), ptr(g.CouldMissMin)
		}
		if g.LagOnSource >= 0 {
			gc.LagOnSource = ptr(g.LagOnSource)
		}
		if g.LagOnTarget >= 0 {
			gc.LagOnTarget = ptr(g.LagOnTarget)
		}
		v.Groups = append(v.Groups, gc)
	}
	sort.SliceStable(v.Groups, func(i, j int) bool { return v.Groups[i].Group < v.Groups[j].Group })
	return v
}

// positionSourceText says in words how the failover-now positions are known.
func positionSourceText(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	var parts []string
	for _, k := range names {
		parts = append(parts, fmt.Sprintf("%s: %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
