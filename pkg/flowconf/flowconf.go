// Package flowconf turns a resolved MM2 configuration (mm2conf) into the plain flow
// descriptions the engines take (replicator.Flow). It holds kmm's own defaults where they
// differ from MM2's, in one place. It must not talk to Kafka or print.
package flowconf

import (
	"strconv"
	"strings"
	"time"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/policy"
	"github.com/kmmproject/kmm/pkg/rdkafka"
	"github.com/kmmproject/kmm/pkg/replicator"
)

// kmm's defaults where MM2's default is too slow for a failover tool. Only used when the file
// does not set the key.
const (
	// DefaultRefreshTopicsInterval replaces MM2's 600 s refresh.topics.interval.seconds.
	DefaultRefreshTopicsInterval = 10 * time.Second
	// DefaultOffsetFlushInterval replaces Connect's 60 s offset.flush.interval.ms.
	DefaultOffsetFlushInterval = 5 * time.Second
	// DefaultCheckpointPollInterval replaces MM2's 60 s emit.checkpoints.interval.seconds where
	// kmm has to poll group offsets (it follows __consumer_offsets when it can).
	DefaultCheckpointPollInterval = 5 * time.Second
	// DefaultSyncGroupOffsetsInterval replaces MM2's 60 s sync.group.offsets.interval.seconds.
	DefaultSyncGroupOffsetsInterval = 5 * time.Second
)

// Policy builds the replication policy of a flow (mm2conf.Flow.Policy: MM2's configuration of
// it, an empty separator included).
func Policy(f *mm2conf.Flow) (policy.Policy, error) { return f.Policy() }

func client(f *mm2conf.Flow, role string) rdkafka.Config {
	cc := f.ClientConfig(role)
	out := rdkafka.Config{}
	if cc == nil {
		return out
	}
	for k, v := range cc.Librdkafka.Config {
		out[k] = v
	}
	return out
}

func isDefault(f *mm2conf.Flow, key string) bool {
	for _, s := range f.Effective {
		if s.Key == key {
			return s.Value.Origin.IsDefault()
		}
	}
	return true
}

func workerInt(f *mm2conf.Flow, key string, def int) int {
	if v, ok := f.Worker.Get(key); ok {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
			return n
		}
	}
	return def
}

// Replicator converts every flow of cfg into an engine flow.
func Replicator(cfg *mm2conf.Config) ([]*replicator.Flow, error) {
	var out []*replicator.Flow
	for _, f := range cfg.Flows {
		rf, err := ReplicatorFlow(f)
		if err != nil {
			return nil, err
		}
		out = append(out, rf)
	}
	return out, nil
}

// ReplicatorFlow converts one flow.
func ReplicatorFlow(f *mm2conf.Flow) (*replicator.Flow, error) {
	p, err := Policy(f)
	if err != nil {
		return nil, err
	}
	s := f.Settings
	r := &replicator.Flow{
		Source: f.Source, Target: f.Target, Enabled: f.Features.Data,
		SourceAlias: s.SourceClusterAlias, TargetAlias: s.TargetClusterAlias, AliasesSet: true,
		SourceConsumer: client(f, "source-consumer"), SourceAdmin: client(f, "source-admin"), SourceProducer: client(f, "source-producer"),
		TargetProducer: client(f, "target-producer"), TargetAdmin: client(f, "target-admin"), TargetConsumer: client(f, "target-consumer"),
		Policy:                   p,
		ReplicationFactor:        s.ReplicationFactor,
		HeartbeatsReplication:    s.HeartbeatsReplication,
		UseDefaultsFromSource:    s.UseDefaultsFrom == "source",
		RefreshTopics:            s.RefreshTopics,
		RefreshTopicsInterval:    s.RefreshTopicsInterval,
		SyncTopicConfigs:         f.Features.TopicConfigSync,
		SyncConfigsInterval:      s.SyncTopicConfigsInterval,
		SyncTopicACLs:            f.Features.ACLSync,
		SyncACLsInterval:         s.SyncTopicACLsInterval,
		EmitOffsetSyncs:          f.Features.OffsetSyncs,
		OffsetSyncsOnTarget:      s.OffsetSyncsTopicLocation == "target",
		OffsetLagMax:             s.OffsetLagMax,
		OffsetSyncsRF:            int(s.OffsetSyncsTopicReplicationFactor),
		EmitCheckpoints:          f.Features.Checkpoints,
		CheckpointsRF:            int(s.CheckpointsTopicReplicationFactor),
		CheckpointPollInterval:   s.EmitCheckpointsInterval,
		SyncGroupOffsets:         f.Features.GroupOffsetSync,
		SyncGroupOffsetsInterval: s.SyncGroupOffsetsInterval,
		EmitHeartbeats:           f.Features.Heartbeats,
		HeartbeatInterval:        s.EmitHeartbeatsInterval,
		HeartbeatsRF:             int(s.HeartbeatsTopicReplicationFactor),
		Tasks:                    s.TasksMax,
		AdminTimeout:             s.AdminTimeout,
	}
	r.SourceBootstrap = r.SourceAdmin["bootstrap.servers"]
	r.TargetBootstrap = r.TargetAdmin["bootstrap.servers"]
	if f.TopicFilter != nil {
		r.TopicFilter = f.TopicFilter.Match
	}
	if f.ConfigPropertyFilter != nil {
		cf := f.ConfigPropertyFilter
		r.ConfigExcluded = func(name string) bool { return !cf.Match(name) } // Match: "replicate this property"
	}
	if f.GroupFilter != nil {
		r.GroupFilter = f.GroupFilter.Match
	}
	if isDefault(f, "emit.checkpoints.interval.seconds") {
		r.CheckpointPollInterval = DefaultCheckpointPollInterval
	}
	if isDefault(f, "sync.group.offsets.interval.seconds") {
		r.SyncGroupOffsetsInterval = DefaultSyncGroupOffsetsInterval
	}
	if isDefault(f, "refresh.topics.interval.seconds") {
		r.RefreshTopicsInterval = DefaultRefreshTopicsInterval
	}
	r.OffsetsTopic, _ = f.Worker.Get("offset.storage.topic")
	r.MM2Group, _ = f.Worker.Get("group.id")
	r.OffsetsTopicPartitions = workerInt(f, "offset.storage.partitions", 25)
	r.OffsetsTopicRF = workerInt(f, "offset.storage.replication.factor", 3)
	r.OffsetFlushInterval = time.Duration(workerInt(f, "offset.flush.interval.ms", int(DefaultOffsetFlushInterval.Milliseconds()))) * time.Millisecond
	return r, nil
}
