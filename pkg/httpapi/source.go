package httpapi

import "time"

// Source is what the server reads: one snapshot per scrape or request, never anything per
// record. Implementations must be safe for concurrent use and return fresh slices the server
// may keep for the duration of one request. pkg/replicator/replsource adapts a running
// replicator.Replicator.
//
// A Source may also implement ClientStatsSource; the server checks on every scrape.
type Source interface {
	Stats() []FlowStats
}

// StatusSource is an optional capability of a Source: what the status page (GET / in a browser,
// GET /api/status) shows beyond Stats. replsource implements it.
type StatusSource interface {
	// Events returns the most recent events of the run, newest first (a bounded number).
	Events() []Event
	// Readings returns, per flow, what the source last read from the flow's clusters in the
	// background: the cost of failing over now, the flow's state and workers in __kmm_state.
	// A call says that someone is looking: an implementation may read the clusters only while
	// it is called (replsource: from the first call until 10 minutes without one).
	Readings() []FlowReading
}

// Event is one thing that happened in the run (replicator.Event, reduced to what a person
// reads).
type Event struct {
	Time    time.Time
	Type    string // the engine's event type: cluster_down, cluster_up, flow_started, flow_stopped, worker_assigned, warning, error, ...
	Flow    string // "" for a cluster's event
	Cluster string // the cluster of cluster_down/cluster_up
	Message string
}

// FlowReading is what a Source read from one flow's clusters in the background, and when.
type FlowReading struct {
	Flow  string        // "S->T"
	Every time.Duration // how often it is read again while wanted
	// Attempted is when the last reading started (zero: none yet); Err why it failed ("": it
	// succeeded, or none finished yet).
	Attempted time.Time
	Err       string
	// At is when the last successful reading finished (zero: none yet), Took how long it took.
	// The fields below are from it.
	At   time.Time
	Took time.Duration
	// Cost is what failing over now would cost, as `kmm lag --group` computes it; nil for a
	// heartbeats-only flow.
	Cost *FailoverCost
	// State is the flow's record in __kmm_state (the newest of T's and S's copies; REPLICATING
	// at epoch 0 when there is none); nil when it could not be read.
	State *FlowState
	// Workers are the live leases of the flow's replicators that run as workers
	// (kmm.workers.enabled), from __kmm_state on T.
	Workers []WorkerLease
}

// FlowState is a flow's DR state (pkg/flowstate).
type FlowState struct {
	State string    // REPLICATING, FAILING_OVER, FAILED_OVER, FAILING_BACK
	Epoch int64     // 0: never marked
	At    time.Time // when it was marked (zero: never)
	By    string    // who marked it
	RunID string    // the failover's or failback's run
}

// WorkerLease is one live worker of a flow, as its lease in __kmm_state says.
type WorkerLease struct {
	Instance, Host string
	Leader         bool
	Partitions     []string // "topic[partition]"
}

// FailoverCost is what failing a flow over now would cost: records of the source not known to
// be on the target, and per consumer group what it would read again and could miss.
type FailoverCost struct {
	Partitions int // source partitions of the flow
	// NotOnTarget is the sum over partitions of the records not known to be on the target;
	// NotOnTargetMin the least it can be (lower when a position is an estimate).
	NotOnTarget, NotOnTargetMin int64
	// Exact: every partition's replicated position is exact.
	Exact bool
	// OldestSeconds is the age of the oldest record not known to be on the target, as of the
	// reading (kmm lag's LAG TIME: the record's timestamp); 0 when none is missing or unknown.
	OldestSeconds float64
	// PositionSources counts partitions by the evidence of their position (pkg/lag's
	// FromLive, FromTargetEnd, FromProgress, FromNone).
	PositionSources map[string]int
	// OldestAsOf is the oldest of the positions' evidence times (zero: unknown).
	OldestAsOf time.Time
	// Groups are the consumer groups with checkpoints or offsets of the flow's topics.
	Groups []GroupCost
}

// GroupCost is one consumer group's share of a failover's cost: sums over its partitions of
// `kmm lag --group`'s numbers. A partition whose number is unknown is counted apart, never as 0.
type GroupCost struct {
	Group      string
	Partitions int
	// WouldReread: records the group would read again on the target (its translated offsets'
	// bounds), over the RereadUnknown partitions left out.
	WouldReread   int64
	RereadUnknown int
	// CouldMiss: records the group has not read yet that are not known to be on the target
	// (lost if the source is lost), CouldMissMin the least it can be; MissUnknown partitions
	// left out.
	CouldMiss, CouldMissMin int64
	MissUnknown             int
	// LagOnSource and LagOnTarget: the group's lag on each side; -1 when unknown for every
	// partition.
	LagOnSource, LagOnTarget int64
}

// ClientStatsSource is an optional capability of a Source: librdkafka statistics of the
// clients of each flow (the statistics.interval.ms JSON, reduced to what is worth alerting
// on). Not implemented by replsource yet.
type ClientStatsSource interface {
	ClientStats() []ClientStats
}

// FlowStats is a snapshot of one flow S->T (one MM2 herder). It mirrors
// replicator.FlowStats, plus what the Connect-style endpoints and later features need.
type FlowStats struct {
	Source, Target string // cluster aliases
	// Enabled: records are replicated (MM2 runs MirrorSourceConnector and
	// MirrorCheckpointConnector for the pair). False for a heartbeats-only herder.
	Enabled bool
	// Running: the flow started and has neither stopped nor failed.
	Running bool
	// Starting: the flow has not finished starting yet (not running, not failed).
	Starting bool
	// Err is the error that stopped the flow ("" none).
	Err string
	// Paused says why the flow was stopped by its DR state (a failover marked it), "" if not:
	// its connectors are PAUSED with this as their trace.
	Paused string
	// Tasks is the number of replication pipelines (tasks.max), at least 1 (flow.Validate clamps it).
	Tasks int
	// EmitHeartbeats: the flow writes heartbeats (MirrorHeartbeatConnector has a task).
	EmitHeartbeats bool
	// CheckpointsRunning: the flow emits checkpoints. MirrorCheckpointConnector is reported
	// RUNNING with one task when true, UNASSIGNED with none when false (kmm builds without
	// checkpoints).
	CheckpointsRunning bool

	Partitions []PartitionStats
	// SourceEndsAt is when the partitions' SourceEnd (hence Lag) was read (zero: unknown).
	SourceEndsAt time.Time
	// State is the flow's DR state as the replicator knows it: read at start, or the mark that
	// stopped it (nil: not known, or a heartbeats-only flow).
	State *FlowState

	// Optional sections: nil means "not measured by this build"; the matching metrics are then
	// not exported at all (rather than as zeros).
	//
	// Clusters the flow needs (source and target; the target only for a heartbeats-only flow)
	// and whether the process can reach them. A cluster down makes /readyz 503 and adds the
	// reason to the trace of the Connect-style statuses.
	Clusters []ClusterStatus
	// Stall: records waiting with none delivered (nil: not measured).
	Stall       *StallStats
	Rate        *RateStats       // the flow's rate limit (kmm.rate.limit.bytes.per.second)
	Heartbeats  *EmitterStats    // records written to T's heartbeats topic
	OffsetSyncs *EmitterStats    // records written to the offset-syncs topic
	Checkpoints *CheckpointStats // checkpoints and group offset sync
	// Transactions of an exactly-once flow's pipelines (nil: the flow is not exactly-once).
	Transactions *TxnStats
	// Workers is this process's share of the flow when it runs as one of the flow's workers
	// (kmm.workers.enabled); nil otherwise.
	Workers *WorkerShare
}

// TxnStats counts an exactly-once flow's transactions since start, summed over its pipelines.
type TxnStats struct {
	Committed, Aborted int64
}

// WorkerShare is what one worker of a flow copies and whether it leads (runs the singleton
// duties: checkpoints, heartbeats, config and ACL sync).
type WorkerShare struct {
	Group      string   `json:"group"`
	Leader     bool     `json:"leader"`
	Partitions []string `json:"partitions"`
}

// Name is "S->T", the flow name kmm uses everywhere.
func (f *FlowStats) Name() string { return f.Source + "->" + f.Target }

// PartitionStats is a snapshot of one replicated partition.
type PartitionStats struct {
	Topic       string // source topic
	RemoteTopic string // topic on the target (the `topic` label, as in MM2's metrics)
	Partition   int32
	Records     int64 // acknowledged by the target since start (MM2 record-count)
	Bytes       int64 // value bytes of those records (MM2 byte-count)
	Acked       int64 // last source offset acknowledged by the target (-1 none)
	Stored      int64 // last source offset stored in mm2-offsets.<S>.internal (-1 none)
	SourceEnd   int64 // source end offset (-1 unknown)
	Lag         int64 // source end − next offset to replicate (-1 unknown)
	LostRecords int64 // deleted by retention on S before they were replicated
	LastAckMs   int64 // wall clock of the last acknowledgement, epoch ms (0 none)
	// OldestUnreplicatedMs is the timestamp (epoch ms) of the oldest record of the partition
	// not replicated yet, 0 when unknown. When set, kmm_replication_lag_seconds is exact;
	// otherwise it is approximated from LastAckMs (see the package documentation).
	OldestUnreplicatedMs int64
	// ReplicationLatency is MM2's replication-latency-ms: ack time − record timestamp.
	ReplicationLatency Latency
	// RecordAge is MM2's record-age-ms: poll time − record timestamp (nil: not measured).
	RecordAge *Latency
}

// ClusterStatus is whether the process can reach one cluster a flow needs.
type ClusterStatus struct {
	Alias     string
	Bootstrap string
	Role      string // "source" or "target"
	Up        bool
	DownSince time.Time // first failure of the current outage (zero while up)
	// FailingSince: still up, but no usable connection for a few seconds, with failures since
	// then (zero otherwise); it is declared down after 10 s.
	FailingSince time.Time
	Cause        string // why it is unreachable (or failing): "connection refused: …", "DNS: …", "TLS: …", "SASL: …", "timeout: …"
	// RTTAvg and RTTP99: the link's round trip measured by the replicator (its probe's metadata
	// requests over the last minute); 0 unknown.
	RTTAvg, RTTP99 time.Duration
}

// StallStats says whether a flow moves.
type StallStats struct {
	// Seconds since a record was last delivered while records waited (fetched and not
	// acknowledged, or on the source and not fetched); 0 when nothing waits or records move.
	Seconds float64
	// Stalled: Seconds is past the replicator's stall threshold.
	Stalled bool
	// WaitingRecords is how many records wait (-1 unknown).
	WaitingRecords int64
}

// RateStats is a flow's rate limit and what it cost.
type RateStats struct {
	// LimitBytesPerSecond is the limit in force (0: none).
	LimitBytesPerSecond int64
	// ThrottledSeconds is how long the flow's pipelines waited for the limit since start,
	// summed over pipelines.
	ThrottledSeconds float64
}

// Latency accumulates millisecond samples since start.
type Latency struct {
	Count int64 // samples
	SumMs int64
	MaxMs int64 // maximum since start
}

// EmitterStats counts records a flow writes to one of MM2's internal topics.
type EmitterStats struct {
	Count  int64 // acknowledged since start
	LastMs int64 // wall clock of the last one, epoch ms (0 none)
}

// CheckpointStats describes the flow's checkpoints (MirrorCheckpointConnector).
type CheckpointStats struct {
	Groups []GroupCheckpointStats
	// SkippedActiveGroups are groups whose offsets are not synced to T because the group has
	// active members there (MM2 skips them too).
	SkippedActiveGroups []string
}

// GroupCheckpointStats is one consumer group's checkpoints.
type GroupCheckpointStats struct {
	Group            string
	LastCheckpointMs int64 // wall clock of the newest checkpoint emitted, epoch ms (0 none)
	Partitions       []CheckpointPartitionStats
}

// CheckpointPartitionStats is one group's checkpoints for one downstream partition.
type CheckpointPartitionStats struct {
	Topic     string // downstream (remote) topic, as in MM2's checkpoint metrics
	Partition int32
	// Latency is MM2's checkpoint-latency-ms: from computing a checkpoint to its ack.
	Latency Latency
}

// ClientStats is one librdkafka client's statistics.
type ClientStats struct {
	Source, Target string // the flow
	Cluster        string // alias of the cluster the client talks to
	Client         string // client name (librdkafka "name")
	Role           string // "source-consumer", "target-producer", ...
	// QueueMessages and QueueBytes are librdkafka's msg_cnt and msg_size: messages waiting in
	// the producer queue (-1: not a producer).
	QueueMessages, QueueBytes int64
	Brokers                   []BrokerStats
}

// BrokerStats is one client's view of one broker.
type BrokerStats struct {
	Broker           string        // librdkafka broker name, "host:port/id"
	RTTAvg, RTTP99   time.Duration // request round-trip time over the last statistics window
	OutbufRequests   int64         // requests waiting to be sent (outbuf_cnt)
	WaitrespRequests int64         // requests sent, waiting for a response (waitresp_cnt)
}
