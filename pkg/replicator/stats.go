package replicator

import (
	"context"
	"sort"
	"sync/atomic"
	"time"

	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// coarseNow is the wall clock in epoch ms, updated every 5 ms, so the per-record path reads an
// atomic instead of the clock.
var coarseNow atomic.Int64

func init() {
	coarseNow.Store(time.Now().UnixMilli())
	go func() {
		for t := range time.Tick(5 * time.Millisecond) {
			coarseNow.Store(t.UnixMilli())
		}
	}()
}

// PartitionStats is a snapshot of one replicated partition.
type PartitionStats struct {
	Topic       string `json:"topic"`
	RemoteTopic string `json:"remote_topic"`
	Partition   int32  `json:"partition"`
	Records     int64  `json:"records"`      // acknowledged by the target since start
	Bytes       int64  `json:"bytes"`        // value bytes (MM2's byte-count)
	Acked       int64  `json:"acked_offset"` // last source offset acknowledged (-1 none)
	Stored      int64  `json:"stored_offset"`
	SourceEnd   int64  `json:"source_end_offset"` // -1 unknown
	Lag         int64  `json:"lag_records"`       // source end − next offset to replicate (-1 unknown)
	LostRecords int64  `json:"retention_gap_records"`
	LastAckMs   int64  `json:"last_ack_unix_ms"`
	LatencySum  int64  `json:"latency_sum_ms"`
	LatencyMax  int64  `json:"latency_max_ms"`
}

// FlowStats is a snapshot of one flow.
type FlowStats struct {
	Flow    string `json:"flow"`
	Source  string `json:"source"`
	Target  string `json:"target"`
	Enabled bool   `json:"enabled"`
	Running bool   `json:"running"`
	// Started: the flow finished starting (clients, state, pipelines); false while it starts.
	Started bool   `json:"started"`
	Err     string `json:"error,omitempty"`
	// Paused says why the flow was stopped by its state in __kmm_state (a failover), "" if not.
	Paused string `json:"paused,omitempty"`
	// State is the flow's DR state as this replicator knows it (flowstate: REPLICATING, or the
	// mark that stopped it, e.g. FAILING_OVER), with its epoch and when it was marked; "" before
	// the flow read __kmm_state at start, and for a heartbeats-only flow (which has no state).
	// The replicator stops following __kmm_state once a mark stopped the flow: later marks (the
	// failover's FAILED_OVER) are not seen here.
	State      string           `json:"state,omitempty"`
	StateEpoch int64            `json:"state_epoch,omitempty"`
	StateAt    time.Time        `json:"state_at,omitzero"`
	Partitions []PartitionStats `json:"partitions"`
	// EndsAtMs is when the source end offsets (SourceEnd, hence Lag) were last read (unix ms,
	// 0 never): every EndsEvery while the source is reachable.
	EndsAtMs int64 `json:"source_ends_unix_ms,omitempty"`

	HeartbeatCount  int64 `json:"heartbeats"`
	HeartbeatLastMs int64 `json:"last_heartbeat_unix_ms"`
	SyncCount       int64 `json:"offset_syncs"`
	SyncLastMs      int64 `json:"last_offset_sync_unix_ms"`

	CheckpointsRunning  bool             `json:"checkpoints_running"`
	CheckpointCount     int64            `json:"checkpoints"`
	CheckpointGroups    map[string]int64 `json:"checkpoint_groups,omitempty"` // group -> last checkpoint (unix ms)
	SkippedActiveGroups []string         `json:"skipped_active_groups,omitempty"`

	Clients []rdkafka.ClientStat `json:"clients,omitempty"` // librdkafka statistics of the pipelines

	// Clusters the flow needs (source, then target; a heartbeats-only flow needs its target
	// only), as the replicator sees them.
	Clusters []ClusterState `json:"clusters,omitempty"`
	// StalledMs is how long records have waited (fetched and not acknowledged, or on the
	// source and not fetched) with none delivered; 0 when nothing waits or records move.
	StalledMs int64 `json:"stalled_ms"`
	// Stalled is StalledMs past the stall threshold (Options.StallAfter).
	Stalled bool `json:"stalled"`
	// WaitingRecords is how many records wait (see StalledMs); -1 unknown.
	WaitingRecords int64 `json:"waiting_records"`
	// Workers is this process's share of the flow (kmm.workers.enabled); nil otherwise.
	Workers *WorkerStats `json:"workers,omitempty"`

	// RateLimit is the flow's limit in bytes per second (0: none); ThrottledMs how long its
	// pipelines waited for it since start, summed over pipelines.
	RateLimit   int64 `json:"rate_limit_bytes_per_second"`
	ThrottledMs int64 `json:"throttled_ms"`

	// Transactions counts the exactly-once pipelines' transactions since start, summed over
	// pipelines; nil unless the flow is exactly-once (B.exactly.once.source.support).
	Transactions *TxnStats `json:"transactions,omitempty"`
}

// TxnStats counts an exactly-once flow's transactions: committed, and aborted (a record the
// target refused, or a commit that failed; their records are copied again from the committed
// positions).
type TxnStats struct {
	Committed int64 `json:"committed"`
	Aborted   int64 `json:"aborted"`
}

func (e *engine) stats() FlowStats {
	fs := FlowStats{Flow: e.flow.Name(), Source: e.flow.Source, Target: e.flow.Target, Enabled: e.flow.Enabled, Running: e.running.Load(), WaitingRecords: -1,
		RateLimit: e.flow.RateLimit, ThrottledMs: e.limiter.throttledMs()}
	if e.flow.Enabled && e.srcW != nil {
		st := e.srcW.state()
		st.Role = "source"
		fs.Clusters = append(fs.Clusters, st)
	}
	if e.tgtW != nil {
		st := e.tgtW.state()
		st.Role = "target"
		fs.Clusters = append(fs.Clusters, st)
	}
	if err := e.failed.Load(); err != nil {
		fs.Err = (*err).Error()
	}
	if p := e.paused.Load(); p != nil {
		fs.Paused = *p
	}
	// hb, ckpt and copiers are set by start() and never changed after: read them only once
	// start() has finished (started is stored after them).
	if !e.started.Load() {
		return e.partitionStats(fs)
	}
	fs.Started = true
	if st := e.state.current(); st != nil {
		fs.State, fs.StateEpoch, fs.StateAt = string(st.State), st.Epoch, st.At
	}
	fs.EndsAtMs = e.endsAtMs.Load()
	if e.hb != nil {
		fs.HeartbeatCount, fs.HeartbeatLastMs = e.hb.count.Load(), e.hb.lastMs.Load()
	}
	fs.SyncCount, fs.SyncLastMs = e.syncCount.Load(), e.syncLastMs.Load()
	if c := e.ckpt; c != nil {
		fs.CheckpointsRunning = fs.Running && e.leads() // workers: the leader's
		fs.CheckpointCount = c.written.Load()
		fs.CheckpointGroups = map[string]int64{}
		c.lastByGroup.Range(func(k, v any) bool { fs.CheckpointGroups[k.(string)] = v.(int64); return true })
		c.skipped.Range(func(k, _ any) bool { fs.SkippedActiveGroups = append(fs.SkippedActiveGroups, k.(string)); return true })
		sort.Strings(fs.SkippedActiveGroups)
	}
	for _, c := range e.copiers {
		fs.Clients = append(fs.Clients, c.ClientStats()...)
	}
	if e.flow.ExactlyOnce {
		fs.Transactions = &TxnStats{}
		for _, c := range e.copiers {
			commits, aborts := c.Transactions()
			fs.Transactions.Committed += commits
			fs.Transactions.Aborted += aborts
		}
	}
	fs.Workers = e.workers.stats()
	if e.flow.Enabled {
		fs.StalledMs = e.stalledMs(time.Now().UnixMilli())
		fs.Stalled = fs.Running && fs.StalledMs >= e.opt.StallAfter.Milliseconds()
		fs.WaitingRecords = e.waitingRecords()
	}
	return e.partitionStats(fs)
}

func (e *engine) partitionStats(fs FlowStats) FlowStats {
	e.partsMu.RLock()
	parts := e.allParts()
	e.partsMu.RUnlock()
	for _, ps := range parts {
		st := PartitionStats{Topic: ps.p.SrcTopic, RemoteTopic: ps.p.DstTopic, Partition: ps.p.Partition,
			Records: ps.records.Load(), Bytes: ps.bytes.Load(), Acked: ps.acked.Load(), Stored: ps.stored.Load(),
			SourceEnd: ps.srcEnd.Load(), LostRecords: ps.gaps.Load(), LastAckMs: ps.lastAckMs.Load(),
			LatencySum: ps.latSumMs.Load(), LatencyMax: ps.latMaxMs.Load(), Lag: -1}
		if st.SourceEnd >= 0 {
			st.Lag = st.SourceEnd - (st.Acked + 1)
			if st.Lag < 0 {
				st.Lag = 0
			}
		}
		fs.Partitions = append(fs.Partitions, st)
	}
	sort.Slice(fs.Partitions, func(i, j int) bool {
		a, b := fs.Partitions[i], fs.Partitions[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		return a.Partition < b.Partition
	})
	return fs
}

// readEndsBeforeCopy reads the source end offsets of partitions about to be copied whose offset
// map was loaded from the target: target records after the stored map (a crash's copies never
// acknowledged) come from source offsets below it, which the first segment of the new copy
// records as its gap bound (pstate.mapAdd). Without it the bound waits for the next refresh, and
// a range copied again in less than that (an idle partition) keeps translating to before the
// gap. A failure leaves the ends unknown (the bound comes later, or never: conservative).
func (e *engine) readEndsBeforeCopy(ctx context.Context, parts []*pstate) {
	var tps []rdkafka.TP
	var which []*pstate
	for _, ps := range parts {
		if ps.omapLoaded && !ps.nomap {
			tps = append(tps, rdkafka.TP{Topic: ps.p.SrcTopic, Partition: ps.p.Partition})
			which = append(which, ps)
		}
	}
	if len(tps) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, err := e.src.ListOffsets(ctx, tps, rdkafka.Latest)
	if err != nil {
		return
	}
	now := time.Now().UnixMilli()
	for i, ps := range which {
		if r, ok := res[tps[i]]; ok && r.Offset > ps.srcEnd.Load() {
			ps.srcEnd.Store(r.Offset)
			ps.srcEndAtMs.Store(now)
		}
	}
}

// refreshEnds reads the source end offsets of every replicated partition (for lag).
func (e *engine) refreshEnds(ctx context.Context) {
	e.partsMu.RLock()
	parts := e.allParts()
	e.partsMu.RUnlock()
	if len(parts) == 0 {
		return
	}
	tps := make([]rdkafka.TP, len(parts))
	for i, ps := range parts {
		tps[i] = rdkafka.TP{Topic: ps.p.SrcTopic, Partition: ps.p.Partition}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, err := e.src.ListOffsets(ctx, tps, rdkafka.Latest)
	if err != nil && ctx.Err() == context.Canceled {
		return // stopping
	}
	if err != nil {
		e.warnLimited("ends", err, "reading source end offsets: "+err.Error())
		return
	}
	now := time.Now().UnixMilli()
	for i, ps := range parts {
		if r, ok := res[tps[i]]; ok {
			ps.srcEnd.Store(r.Offset)
			ps.srcEndAtMs.Store(now)
		}
	}
	e.endsAtMs.Store(now)
	e.foldHighWatermarks()
}

// foldHighWatermarks raises each partition's known source end to the high watermark the
// copier's consumer saw in its last fetch response, when that is higher (no request is made):
// between two reads of the end offsets, and while the source answers fetches but not admin
// requests, the freshest end kmm knows (what an emergency failover's RPO rests on).
func (e *engine) foldHighWatermarks() {
	now := time.Now().UnixMilli()
	for _, c := range e.copiers {
		parts := c.Parts()
		for i, hw := range c.HighWatermarks(parts) {
			ps, ok := parts[i].State.(*pstate)
			if !ok || hw < 0 {
				continue
			}
			if hw > ps.srcEnd.Load() {
				ps.srcEnd.Store(hw)
				ps.srcEndAtMs.Store(now)
				e.endsAtMs.Store(now)
			}
		}
	}
}
