package replicator

import "time"

// EventType names what happened.
type EventType string

// Event types. The CLI renders them as log lines or NDJSON.
const (
	EvStarted        EventType = "flow_started"
	EvTopicCreated   EventType = "topic_created"
	EvPartitionsGrew EventType = "partitions_added"
	EvTopicAdded     EventType = "topic_added"
	EvConfigsSynced  EventType = "configs_synced"
	EvACLsSynced     EventType = "acls_synced"
	EvRetentionGap   EventType = "retention_gap"
	EvResumed        EventType = "resumed"
	EvProgress       EventType = "progress"
	EvWarning        EventType = "warning"
	EvError          EventType = "error"
	EvGroupSynced    EventType = "group_offsets_synced"
	EvDraining       EventType = "draining"
	EvStopped        EventType = "flow_stopped"
	// A cluster became unreachable (WARN), is still unreachable (WARN, every 30 s), or is
	// reachable again (INFO). Flow is empty: Cluster names the cluster.
	EvClusterDown      EventType = "cluster_down"
	EvClusterStillDown EventType = "cluster_still_down"
	EvClusterUp        EventType = "cluster_up"
	// Workers (kmm.workers.enabled): the group assigned partitions to this worker, revoked
	// some, or this worker became (or stopped being) the flow's leader.
	EvWorkerAssigned EventType = "worker_assigned"
	EvWorkerRevoked  EventType = "worker_revoked"
	EvWorkerLeader   EventType = "worker_leader"
)

// Event is one thing the engine reports. Fields unused by a type are zero.
type Event struct {
	Time      time.Time `json:"time"`
	Type      EventType `json:"type"`
	Flow      string    `json:"flow"`
	Cluster   string    `json:"cluster,omitempty"`
	Topic     string    `json:"topic,omitempty"`
	Remote    string    `json:"remote_topic,omitempty"`
	Partition *int32    `json:"partition,omitempty"`
	From      *int64    `json:"from_offset,omitempty"`
	To        *int64    `json:"to_offset,omitempty"`
	Count     int64     `json:"count,omitempty"`
	Message   string    `json:"message,omitempty"`

	Records   int64 `json:"records,omitempty"`
	Bytes     int64 `json:"bytes,omitempty"`
	Topics    int   `json:"topics,omitempty"`
	Parts     int   `json:"partitions,omitempty"`
	LagRecord int64 `json:"lag_records,omitempty"`
	// Undelivered (flow_stopped): records fetched but not acknowledged by the target when the
	// shutdown bound expired; they are copied again after a restart.
	Undelivered int64 `json:"undelivered_records,omitempty"`
	// Incomplete (flow_stopped): the stop bound expired with records not delivered or
	// positions not stored.
	Incomplete bool `json:"incomplete,omitempty"`
}

// Sink receives events. It must not block for long: the engine calls it from its control
// goroutines, never from the per-record path.
type Sink interface{ Emit(Event) }

// SinkFunc adapts a function to Sink.
type SinkFunc func(Event)

// Emit calls f.
func (f SinkFunc) Emit(e Event) { f(e) }

func i32(v int32) *int32 { return &v }
func i64(v int64) *int64 { return &v }
