package flow

import (
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/policy"
)

// FromMM2 converts every flow of a resolved MM2 configuration (heartbeats-only herders included:
// callers select) and validates each once. MM2's resolved values are kept; where the file does not
// set a key whose kmm default differs from MM2's, the Defaults table's kmm value applies.
func FromMM2(cfg *mm2conf.Config) ([]*Flow, error) {
	out := make([]*Flow, 0, len(cfg.Flows))
	for _, mf := range cfg.Flows {
		f, err := fromMM2Flow(mf)
		if err != nil {
			return nil, err
		}
		if err := f.Validate(); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// PolicyOf builds the replication policy of an MM2 flow (mm2conf.FlowConfig.Policy: MM2's
// configuration of it, an empty separator included).
func PolicyOf(f *mm2conf.FlowConfig) (policy.Policy, error) { return f.Policy() }

func clientSettings(f *mm2conf.FlowConfig, s Side, c Client) map[string]string {
	out := map[string]string{}
	if cc := f.ClientConfig(Role(s, c)); cc != nil {
		maps.Copy(out, cc.Librdkafka.Config)
	}
	return out
}

const workerPrefix = "<T>."

// setInFile reports whether the file sets key (a connector key, or a <T>. worker key).
func setInFile(f *mm2conf.FlowConfig, key string) bool {
	if w, ok := strings.CutPrefix(key, workerPrefix); ok {
		_, set := f.Worker.Get(w)
		return set
	}
	for _, s := range f.Effective {
		if s.Key == key {
			return !s.Value.Origin.IsDefault()
		}
	}
	return false
}

func workerInt(f *mm2conf.FlowConfig, key string) int {
	if v, ok := f.Worker.Get(key); ok {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
			return n
		}
	}
	return 0 // unset: Validate fills the default
}

func fromMM2Flow(mf *mm2conf.FlowConfig) (*Flow, error) {
	p, err := PolicyOf(mf)
	if err != nil {
		return nil, err
	}
	s := mf.Settings
	f := &Flow{
		Source: mf.Source, Target: mf.Target, Enabled: mf.Features.Data,
		SourceAlias: s.SourceClusterAlias, TargetAlias: s.TargetClusterAlias, AliasesSet: true,
		SourceConsumer: clientSettings(mf, Source, Consumer), SourceAdmin: clientSettings(mf, Source, Admin), SourceProducer: clientSettings(mf, Source, Producer),
		TargetProducer: clientSettings(mf, Target, Producer), TargetAdmin: clientSettings(mf, Target, Admin), TargetConsumer: clientSettings(mf, Target, Consumer),
		Policy:                   p,
		ReplicationFactor:        s.ReplicationFactor,
		HeartbeatsReplication:    s.HeartbeatsReplication,
		UseDefaultsFromSource:    s.UseDefaultsFrom == "source",
		RefreshTopics:            mf.Features.RefreshTopics, // off for a negative interval, as in MM2
		RefreshTopicsInterval:    s.RefreshTopicsInterval,
		SyncTopicConfigs:         mf.Features.TopicConfigSync,
		SyncConfigsInterval:      s.SyncTopicConfigsInterval,
		SyncTopicACLs:            mf.Features.ACLSync,
		SyncACLsInterval:         s.SyncTopicACLsInterval,
		EmitOffsetSyncs:          mf.Features.OffsetSyncs,
		OffsetSyncsOnTarget:      s.OffsetSyncsTopicLocation == "target",
		OffsetLagMax:             s.OffsetLagMax,
		OffsetSyncsRF:            int(s.OffsetSyncsTopicReplicationFactor),
		EmitCheckpoints:          mf.Features.Checkpoints,
		CheckpointsRF:            int(s.CheckpointsTopicReplicationFactor),
		CheckpointPollInterval:   s.EmitCheckpointsInterval,
		SyncGroupOffsets:         mf.Features.GroupOffsetSync,
		SyncGroupOffsetsInterval: s.SyncGroupOffsetsInterval,
		EmitHeartbeats:           mf.Features.Heartbeats,
		HeartbeatInterval:        s.EmitHeartbeatsInterval,
		HeartbeatsRF:             int(s.HeartbeatsTopicReplicationFactor),
		Tasks:                    s.TasksMax,
		MemoryBudget:             s.MemoryBudgetBytes,
		MemoryBudgetSet:          s.MemoryBudgetSet,
		Workers:                  s.WorkersEnabled,
		RateLimit:                s.RateLimitBytesPerSecond,
		DataPlane:                s.DataPlane,
		NoOffsetMap:              !s.OffsetMap,
		ExactlyOnce:              s.ExactlyOnce,
		TransactionInterval:      s.TransactionInterval,
		AdminTimeout:             s.AdminTimeout,
	}
	if cc := mf.ClientConfig(Role(Target, Producer)); cc != nil {
		if v, ok := cc.Java[MaxInFlightKey]; (!ok || v.Origin.IsDefault()) && f.TargetProducer != nil {
			f.TargetProducer[MaxInFlightKey] = strconv.Itoa(IdempotentMaxInFlight) // see WANMaxInFlight
		}
	}
	f.SourceBootstrap = f.SourceAdmin["bootstrap.servers"]
	f.TargetBootstrap = f.TargetAdmin["bootstrap.servers"]
	if mf.TopicFilter != nil {
		f.TopicFilter = mf.TopicFilter.Match
	}
	if mf.ConfigPropertyFilter != nil {
		cf := mf.ConfigPropertyFilter
		f.ConfigExcluded = func(name string) bool { return !cf.Match(name) } // Match: "replicate this property"
	}
	if mf.GroupFilter != nil {
		f.GroupFilter = mf.GroupFilter.Match
	}
	f.OffsetsTopic, _ = mf.Worker.Get("offset.storage.topic")
	f.MM2Group, _ = mf.Worker.Get("group.id")
	f.OffsetsTopicPartitions = workerInt(mf, "offset.storage.partitions")
	f.OffsetsTopicRF = workerInt(mf, "offset.storage.replication.factor")
	if ms := workerInt(mf, "offset.flush.interval.ms"); ms > 0 {
		f.OffsetFlushInterval = time.Duration(ms) * time.Millisecond
	}
	for _, d := range Defaults {
		if d.override != nil && d.InFile() && !setInFile(mf, d.Key) {
			d.override(f)
		}
	}
	return f, nil
}
