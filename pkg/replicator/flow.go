// Package replicator is the engine behind `kmm replicate`: for each MM2 flow S->T it discovers
// and creates remote topics, copies records partition by partition (at-least-once, in order),
// stores resume positions in MM2's Connect offsets topic, writes offset-syncs and heartbeats in
// MM2's byte formats, and keeps topic configs and ACLs in sync. It reports through Events and
// counters; it never prints, parses flags or reads configuration files.
package replicator

import (
	"fmt"
	"strconv"
	"time"

	"github.com/kmmproject/kmm/pkg/policy"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// Flow is one resolved source->target flow with everything the engine needs, already translated
// to librdkafka settings and compiled filters.
type Flow struct {
	Source, Target                   string // cluster aliases (the herder's pair)
	SourceBootstrap, TargetBootstrap string // for messages only
	// SourceAlias and TargetAlias are the aliases MM2's connectors put in every name and record
	// they make (remote and internal topic names, heartbeat keys, the "cluster" of the Connect
	// source partitions, the cycle check): source.cluster.alias / target.cluster.alias, which
	// the file may override (even to ""). Empty here means Source / Target (set by Validate).
	SourceAlias, TargetAlias string
	// aliasesSet: SourceAlias/TargetAlias were given (an empty alias is then meant).
	AliasesSet bool

	// Enabled is false for a heartbeats-only herder (MM2 creates S->T herders for heartbeats
	// even when the flow is disabled).
	Enabled bool

	SourceConsumer, SourceAdmin, SourceProducer rdkafka.Config
	TargetProducer, TargetAdmin, TargetConsumer rdkafka.Config

	Policy      policy.Policy
	TopicFilter func(topic string) bool // `topics` / `topics.exclude`
	// ConfigExcluded reports whether a topic config property must never be synced.
	ConfigExcluded        func(name string) bool
	UseDefaultsFromSource bool

	ReplicationFactor     int // remote topics; -1 = broker default
	HeartbeatsReplication bool

	RefreshTopics         bool
	RefreshTopicsInterval time.Duration
	SyncTopicConfigs      bool
	SyncConfigsInterval   time.Duration
	SyncTopicACLs         bool
	SyncACLsInterval      time.Duration

	EmitOffsetSyncs     bool
	OffsetSyncsOnTarget bool // offset-syncs.topic.location=target
	OffsetLagMax        int64
	OffsetSyncsRF       int

	// Checkpoints (MirrorCheckpointConnector): group offsets of S translated into
	// <S>.checkpoints.internal on T, followed as they are committed.
	EmitCheckpoints          bool
	GroupFilter              func(group string) bool
	CheckpointsRF            int
	CheckpointPollInterval   time.Duration // fallback polling when __consumer_offsets cannot be read
	SyncGroupOffsets         bool
	SyncGroupOffsetsInterval time.Duration
	// SyncPromoteInterval promotes delayed offset syncs this often (MM2: at every commit), so a
	// caught-up group translates exactly within about this time. Default 1 s.
	SyncPromoteInterval time.Duration

	EmitHeartbeats    bool
	HeartbeatInterval time.Duration
	HeartbeatsRF      int

	// Connect offsets topic on T (resume positions), MM2's worker settings.
	OffsetsTopic           string // mm2-offsets.<S>.internal
	OffsetsTopicPartitions int    // 25
	OffsetsTopicRF         int    // 3
	OffsetFlushInterval    time.Duration

	// MM2Group is the Connect group MM2 uses for this flow on T (worker group.id, "<S>-mm2").
	// kmm refuses to start while it has members, unless Options.Force.
	MM2Group string

	Tasks        int           // tasks.max: parallel pipelines
	AdminTimeout time.Duration // admin.timeout.ms
}

// IdempotentMaxInFlight is librdkafka's limit of requests in flight for an idempotent producer.
const IdempotentMaxInFlight = 5

// CopierConfigs returns the client settings of the record pipelines: MM2's replication consumer
// (auto.offset.reset=earliest unless configured) and the target producer, idempotent with
// acks=all so records arrive once and in order per partition. Idempotence needs at most 5
// requests in flight and retries: larger or zero values from the file are replaced (mm2conf
// warns about them with their line).
func (f *Flow) CopierConfigs() (consumer, producer rdkafka.Config) {
	consumer = rdkafka.Config{"auto.offset.reset": "earliest"}
	for k, v := range f.SourceConsumer {
		consumer[k] = v
	}
	producer = rdkafka.Config{}
	for k, v := range f.TargetProducer {
		producer[k] = v
	}
	producer["enable.idempotence"] = "true"
	producer["acks"] = "all"
	if n, err := strconv.Atoi(producer["max.in.flight.requests.per.connection"]); err == nil && n > IdempotentMaxInFlight {
		producer["max.in.flight.requests.per.connection"] = strconv.Itoa(IdempotentMaxInFlight)
	}
	if producer["retries"] == "0" {
		delete(producer, "retries")
	}
	return consumer, producer
}

// Name is "S->T".
func (f *Flow) Name() string { return f.Source + "->" + f.Target }

// Validate checks what the engine relies on.
func (f *Flow) Validate() error {
	switch {
	case f.Source == "" || f.Target == "" || f.Source == f.Target:
		return fmt.Errorf("flow %q: source and target must be two different aliases", f.Name())
	case f.Policy == nil:
		return fmt.Errorf("flow %s: no replication policy", f.Name())
	case f.Enabled && f.TopicFilter == nil:
		return fmt.Errorf("flow %s: no topic filter", f.Name())
	}
	if !f.AliasesSet {
		f.SourceAlias, f.TargetAlias, f.AliasesSet = f.Source, f.Target, true
	}
	if f.Tasks < 1 {
		f.Tasks = 1
	}
	if f.OffsetsTopic == "" {
		f.OffsetsTopic = "mm2-offsets." + f.Source + ".internal"
	}
	if f.OffsetsTopicPartitions <= 0 {
		f.OffsetsTopicPartitions = 25
	}
	if f.OffsetsTopicRF == 0 {
		f.OffsetsTopicRF = 3
	}
	if f.OffsetFlushInterval <= 0 {
		f.OffsetFlushInterval = 5 * time.Second
	}
	if f.HeartbeatInterval <= 0 {
		f.HeartbeatInterval = time.Second
	}
	if f.CheckpointPollInterval <= 0 {
		f.CheckpointPollInterval = 5 * time.Second
	}
	if f.SyncGroupOffsetsInterval <= 0 {
		f.SyncGroupOffsetsInterval = 5 * time.Second
	}
	if f.SyncPromoteInterval <= 0 {
		f.SyncPromoteInterval = time.Second
	}
	if f.GroupFilter == nil {
		f.GroupFilter = func(string) bool { return true }
	}
	if f.RefreshTopicsInterval <= 0 {
		f.RefreshTopicsInterval = 30 * time.Second
	}
	if f.SyncConfigsInterval <= 0 {
		f.SyncConfigsInterval = 10 * time.Minute
	}
	if f.SyncACLsInterval <= 0 {
		f.SyncACLsInterval = 10 * time.Minute
	}
	if f.AdminTimeout <= 0 {
		f.AdminTimeout = time.Minute
	}
	if f.OffsetLagMax < 0 {
		f.OffsetLagMax = 100
	}
	if f.ConfigExcluded == nil {
		f.ConfigExcluded = func(string) bool { return false }
	}
	return nil
}

// Selected reports whether source topic t is replicated by this flow: it passes the topic
// filter (or is a heartbeats topic and heartbeats replication is on), is not internal, and is
// not a cycle (it did not come from the target).
func (f *Flow) Selected(t string) bool {
	if !f.TopicFilter(t) && !(f.HeartbeatsReplication && f.Policy.IsHeartbeatsTopic(t)) {
		return false
	}
	if f.Policy.IsInternalTopic(t) {
		return false
	}
	return !policy.IsCycle(f.Policy, t, f.TargetAlias)
}
