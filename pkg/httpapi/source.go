package httpapi

import "time"

// Source is what the server reads: one snapshot per scrape or request, never anything per
// record. Implementations must be safe for concurrent use and return fresh slices the server
// may keep for the duration of one request. pkg/httpapi/replsource adapts a running
// replicator.Replicator.
//
// A Source may also implement ClientStatsSource; the server checks on every scrape.
type Source interface {
	Stats() []FlowStats
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
	Cause     string    // why it is unreachable: "connection refused: …", "DNS: …", "TLS: …", "SASL: …", "timeout: …"
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
