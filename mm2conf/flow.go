package mm2conf

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Settings are a flow's typed effective connector settings (Kafka 4.1.1
// names and defaults).
type Settings struct {
	Enabled bool

	Topics                  []string
	TopicsExclude           []string
	Groups                  []string
	GroupsExclude           []string
	ConfigPropertiesExclude []string

	ReplicationPolicyClass string
	// ReplicationPolicySeparator is read raw (untrimmed), as
	// DefaultReplicationPolicy.configure does; "." unless set. It may be
	// empty: MM2 accepts that (see Flow.Names).
	ReplicationPolicySeparator string
	// ReplicationPolicySeparatorSet: the connector config has the key (the
	// policy only then reads it and the internal-separator flag).
	ReplicationPolicySeparatorSet bool
	// InternalTopicSeparatorEnabled is honoured only when the separator is
	// set (Boolean.parseBoolean, raw).
	InternalTopicSeparatorEnabled bool
	// InternalSeparator is the separator used in MM2's internal topic names
	// (checkpoints, offset syncs): the separator if it is set and the flag is
	// on, else ".".
	InternalSeparator string

	TasksMax                          int
	ReplicationFactor                 int
	OffsetSyncsTopicReplicationFactor int16
	CheckpointsTopicReplicationFactor int16
	HeartbeatsTopicReplicationFactor  int16
	OffsetSyncsTopicLocation          string // "source" or "target"
	OffsetLagMax                      int64
	EmitOffsetSyncs                   bool
	HeartbeatsReplication             bool

	RefreshTopics            bool
	RefreshTopicsInterval    time.Duration
	RefreshGroups            bool
	RefreshGroupsInterval    time.Duration
	SyncTopicConfigs         bool
	SyncTopicConfigsInterval time.Duration
	SyncTopicACLs            bool
	SyncTopicACLsInterval    time.Duration
	EmitCheckpoints          bool
	EmitCheckpointsInterval  time.Duration
	SyncGroupOffsets         bool
	SyncGroupOffsetsInterval time.Duration
	EmitHeartbeats           bool
	EmitHeartbeatsInterval   time.Duration
	ConsumerPollTimeout      time.Duration
	AdminTimeout             time.Duration

	// UseDefaultsFrom is "source" or "target" (any other value acts as target).
	UseDefaultsFrom string

	// MemoryBudgetBytes is kmm.memory.budget.bytes: the bytes of records the flow's pipelines
	// may hold in librdkafka's queues (pkg/flow splits it).
	MemoryBudgetBytes int64
	// MemoryBudgetSet: the file sets kmm.memory.budget.bytes (else MemoryBudgetBytes is the default).
	MemoryBudgetSet bool
	// WorkersEnabled is kmm.workers.enabled: the flow's partitions are shared by every running
	// `kmm replicate` of it through a consumer group on the source.
	WorkersEnabled bool
	// RateLimitBytesPerSecond is kmm.rate.limit.bytes.per.second: the bytes per second the
	// flow's pipelines may copy together (0: no limit).
	RateLimitBytesPerSecond int64

	// DataPlane is kmm.data.plane: "go" or "c" (lower case).
	DataPlane string

	// OffsetMap is kmm.offset.map.enabled: keep the offset map on the target (default true).
	OffsetMap bool

	// ExactlyOnce: exactly.once.source.support = enabled for the flow's target, as MM2 reads it
	// (<T>.exactly.once.source.support, a worker key), or at top level (kmm only: MM2 ignores
	// it there). ExactlyOnceKey is the key that set it, as written.
	ExactlyOnce    bool
	ExactlyOnceKey string
	// TransactionInterval is kmm.transaction.interval.ms: how often an exactly-once pipeline
	// commits its transaction (records and their progress record).
	TransactionInterval time.Duration

	// SourceClusterAlias and TargetClusterAlias are the aliases MM2's
	// connectors use in every name they make (remote topics, internal
	// topics, heartbeat keys, the Connect source partitions, the cycle
	// check): the connector config's source.cluster.alias and
	// target.cluster.alias (trimmed), which are the flow's own aliases unless
	// a top-level or flow-level key overrides them.
	SourceClusterAlias string
	TargetClusterAlias string
	// sourceAliasRaw is source.cluster.alias untrimmed, as
	// IdentityReplicationPolicy.configure reads it.
	sourceAliasRaw string
}

// Features says what a flow does.
type Features struct {
	// Data: MirrorSourceConnector replicates records.
	Data bool
	// Checkpoints: MirrorCheckpointConnector emits checkpoints.
	Checkpoints bool
	// GroupOffsetSync: translated offsets are written to the target's groups.
	GroupOffsetSync bool
	// Heartbeats: MirrorHeartbeatConnector emits heartbeats into the target
	// (it has no `enabled` check, so heartbeats-only herders emit too).
	Heartbeats bool
	// TopicConfigSync, ACLSync, OffsetSyncs: as their keys say, for enabled flows.
	TopicConfigSync bool
	ACLSync         bool
	OffsetSyncs     bool
	// OffsetSyncsLocation is "source" or "target".
	OffsetSyncsLocation string
	RefreshTopics       bool
	RefreshGroups       bool
}

// MinMemoryBudget is the smallest kmm.memory.budget.bytes accepted: 4 MiB.
const MinMemoryBudget = 4 << 20

// flowExtraKeys are connector-level keys that are not in MM2's ConfigDefs
// but that kmm reports with their defaults.
var flowExtraKeys = []keyDef{
	{Name: "use.defaults.from", Type: "STRING", Default: "target"},
	{Name: "exactly.once.support", Type: "STRING", Default: "requested"},
}

func (c *Config) buildFlow(f *FlowConfig, sink *diagSink) {
	f.Connector = c.b.connectorConfig(f.Source, f.Target)
	f.Worker = c.b.workerConfig(f.Source, f.Target)
	c.resolveProps(f.Connector, sink)
	c.resolveProps(f.Worker, sink)

	conn := f.Connector
	bad := false
	validated := map[string]bool{}
	typed := func(key string) (Value, keyDef, bool) {
		k := connectorKeyIndex[key]
		var def keyDef
		if k != nil {
			def = keyDef{Name: k.Name, Type: k.Type, Default: k.Default, NullDefault: !k.HasDefault}
		} else {
			for _, d := range append(flowExtraKeys, KMMKeys...) {
				if d.Name == key {
					def = d
				}
			}
		}
		v, ok := conn[key]
		if !ok {
			return defaultValue(def.Default, "default"), def, false
		}
		shown := v.Resolved()
		if v.FromProvider {
			shown = v.Raw
		}
		if err := checkTyped(def.Type, v.Resolved()); err != nil {
			sink.err("type", v.Origin.Pos, v.Origin.Key, typedError(key, shown, err), "")
			bad = true
			return defaultValue(def.Default, "default"), def, false
		}
		if val := connectorValidators[key]; val != nil && !validated[key] {
			validated[key] = true
			if msg := val(javaTrim(v.Resolved())); msg != "" {
				sink.err("invalid-value", v.Origin.Pos, v.Origin.Key, fmt.Sprintf("Invalid value %s for configuration %s: %s", javaTrim(shown), key, msg),
					"MM2's connectors reject the flow's configuration with this value, so the flow does not run")
				bad = true
				return defaultValue(def.Default, "default"), def, false
			}
		}
		return v, def, true
	}
	getBool := func(key string) bool {
		v, _, _ := typed(key)
		b, _ := ParseBool(v.Resolved())
		return b
	}
	getLong := func(key string) int64 {
		v, _, _ := typed(key)
		n, _ := ParseLong(v.Resolved())
		return n
	}
	getList := func(key string) []string {
		v, _, _ := typed(key)
		return ParseList(v.Resolved())
	}
	getString := func(key string) string {
		v, _, _ := typed(key)
		return javaTrim(v.Resolved())
	}
	secs := func(key string) time.Duration { return time.Duration(getLong(key)) * time.Second }
	ms := func(key string) time.Duration { return time.Duration(getLong(key)) * time.Millisecond }

	s := &f.Settings
	s.Enabled = getBool("enabled")
	f.Enabled = s.Enabled

	// Legacy *.blacklist aliases: applied when the .exclude key is absent.
	excl := func(key string) []string {
		alias := ""
		for a, k := range blacklistAliases {
			if k == key {
				alias = a
			}
		}
		if _, has := conn[key]; !has {
			if v, ok := c.legacyAlias(f, alias); ok {
				return ParseList(v.Resolved())
			}
		}
		return getList(key)
	}
	s.Topics = getList("topics")
	s.TopicsExclude = excl("topics.exclude")
	s.Groups = getList("groups")
	s.GroupsExclude = excl("groups.exclude")
	s.ConfigPropertiesExclude = excl("config.properties.exclude")

	s.ReplicationPolicyClass = getString("replication.policy.class")
	s.SourceClusterAlias = getString("source.cluster.alias")
	s.TargetClusterAlias = getString("target.cluster.alias")
	s.sourceAliasRaw = conn["source.cluster.alias"].Resolved()
	s.ReplicationPolicySeparator = "."
	s.InternalTopicSeparatorEnabled = true
	s.InternalSeparator = "."
	if v, ok := conn["replication.policy.separator"]; ok {
		s.ReplicationPolicySeparatorSet = true
		s.ReplicationPolicySeparator = v.Resolved()
		if iv, ok := conn["replication.policy.internal.topic.separator.enabled"]; ok {
			s.InternalTopicSeparatorEnabled = JavaParseBoolean(iv.Resolved())
		}
		if s.InternalTopicSeparatorEnabled {
			s.InternalSeparator = s.ReplicationPolicySeparator
		}
		if s.ReplicationPolicySeparator != javaTrim(s.ReplicationPolicySeparator) {
			sink.warn("separator-whitespace", v.Origin.Pos, v.Origin.Key, fmt.Sprintf("replication.policy.separator = %q contains whitespace, which MM2 keeps (it reads the separator untrimmed)", s.ReplicationPolicySeparator), "remove the whitespace unless you really want it in topic names")
		}
	}
	_, _, _ = typed("replication.policy.internal.topic.separator.enabled")

	s.TasksMax = int(getLong("tasks.max"))
	s.ReplicationFactor = int(getLong("replication.factor"))
	s.OffsetSyncsTopicReplicationFactor = int16(getLong("offset-syncs.topic.replication.factor"))
	s.CheckpointsTopicReplicationFactor = int16(getLong("checkpoints.topic.replication.factor"))
	s.HeartbeatsTopicReplicationFactor = int16(getLong("heartbeats.topic.replication.factor"))
	s.OffsetSyncsTopicLocation = getString("offset-syncs.topic.location")
	s.OffsetLagMax = getLong("offset.lag.max")
	s.EmitOffsetSyncs = getBool("emit.offset-syncs.enabled")
	s.HeartbeatsReplication = getBool("heartbeats.replication.enabled")
	s.RefreshTopics = getBool("refresh.topics.enabled")
	s.RefreshTopicsInterval = secs("refresh.topics.interval.seconds")
	s.RefreshGroups = getBool("refresh.groups.enabled")
	s.RefreshGroupsInterval = secs("refresh.groups.interval.seconds")
	s.SyncTopicConfigs = getBool("sync.topic.configs.enabled")
	s.SyncTopicConfigsInterval = secs("sync.topic.configs.interval.seconds")
	s.SyncTopicACLs = getBool("sync.topic.acls.enabled")
	s.SyncTopicACLsInterval = secs("sync.topic.acls.interval.seconds")
	s.EmitCheckpoints = getBool("emit.checkpoints.enabled")
	s.EmitCheckpointsInterval = secs("emit.checkpoints.interval.seconds")
	s.SyncGroupOffsets = getBool("sync.group.offsets.enabled")
	s.SyncGroupOffsetsInterval = secs("sync.group.offsets.interval.seconds")
	s.EmitHeartbeats = getBool("emit.heartbeats.enabled")
	s.EmitHeartbeatsInterval = secs("emit.heartbeats.interval.seconds")
	s.ConsumerPollTimeout = ms("consumer.poll.timeout.ms")
	s.AdminTimeout = ms("admin.timeout.ms")
	s.UseDefaultsFrom = getString("use.defaults.from")
	s.MemoryBudgetBytes = getLong("kmm.memory.budget.bytes")
	_, s.MemoryBudgetSet = conn["kmm.memory.budget.bytes"]
	s.WorkersEnabled = getBool("kmm.workers.enabled")
	s.OffsetMap = getBool("kmm.offset.map.enabled")
	if v, ok := conn["kmm.memory.budget.bytes"]; ok && s.MemoryBudgetBytes < MinMemoryBudget {
		if n, err := ParseLong(v.Resolved()); err == nil {
			sink.err("range", v.Origin.Pos, v.Origin.Key, fmt.Sprintf("kmm.memory.budget.bytes = %d is below kmm's minimum of %d (4 MiB)", n, MinMemoryBudget),
				fmt.Sprintf("set it to at least %d, or remove it for the default %s", MinMemoryBudget, KMMKeys[0].Default))
		}
		bad = true
	}
	s.RateLimitBytesPerSecond = getLong("kmm.rate.limit.bytes.per.second")
	if v, ok := conn["kmm.rate.limit.bytes.per.second"]; ok && s.RateLimitBytesPerSecond < 0 {
		if n, err := ParseLong(v.Resolved()); err == nil {
			sink.err("range", v.Origin.Pos, v.Origin.Key, fmt.Sprintf("kmm.rate.limit.bytes.per.second = %d is negative", n),
				"set the bytes per second the flow may copy (e.g. 10485760 for 10 MiB/s), or 0 (the default) for no limit")
		}
		bad = true
	}
	s.DataPlane = strings.ToLower(getString("kmm.data.plane"))
	if v, ok := conn["kmm.data.plane"]; ok && s.DataPlane != "go" && s.DataPlane != "c" {
		sink.err("range", v.Origin.Pos, v.Origin.Key, fmt.Sprintf("kmm.data.plane = %q is neither go nor c", v.Resolved()),
			"set it to c (records stay in librdkafka) or go, or remove it for the default go")
		bad = true
	}

	s.TransactionInterval = ms("kmm.transaction.interval.ms")
	if v, ok := conn["kmm.transaction.interval.ms"]; ok && s.TransactionInterval <= 0 {
		if n, err := ParseLong(v.Resolved()); err == nil {
			sink.err("range", v.Origin.Pos, v.Origin.Key, fmt.Sprintf("kmm.transaction.interval.ms = %d is not positive", n),
				"set how often an exactly-once pipeline commits, e.g. 1000, or remove it for the default 1000")
		}
		bad = true
	}
	c.exactlyOnce(f)

	// Type-check and validate every other known key that is present, client security keys
	// included: each connector's ConfigDef has them, so MM2 rejects the flow for a bad one even
	// where it reaches no client (flow level).
	for k := range conn {
		if ck := connectorKeyIndex[k]; ck != nil && ck.Type != "PASSWORD" {
			typed(k)
		}
	}
	c.checkFlowSecurityKeys(f, sink)

	// Effective listing: every non-security connector key + extras.
	for _, k := range connectorKeyNames {
		ck := connectorKeyIndex[k]
		if ck.Security {
			continue
		}
		v, ok := conn[k]
		if !ok {
			for a, key := range blacklistAliases {
				if key == k {
					if lv, found := c.legacyAlias(f, a); found {
						v, ok = derive(lv, lv.Origin.Rule+", legacy alias of "+k), true
					}
				}
			}
		}
		if !ok {
			rule := "default (" + strings.Join(ck.Connectors, ", ") + ")"
			if !ck.HasDefault {
				continue
			}
			v = defaultValue(ck.Default, rule)
		}
		f.Effective = append(f.Effective, Setting{Key: k, Value: v, Type: ck.Type})
	}
	for _, d := range append(flowExtraKeys, KMMKeys...) {
		v, ok := conn[d.Name]
		if !ok {
			v = defaultValue(d.Default, "default")
		}
		f.Effective = append(f.Effective, Setting{Key: d.Name, Value: v, Type: d.Type})
	}
	sortSettings(f.Effective)

	c.checkFlow(f, sink)
	c.compileFilters(f, sink)
	if bad {
		return
	}

	// Features. A negative interval disables its feature in MM2: the connectors' Scheduler does
	// not schedule a negative interval (scheduleRepeating/scheduleRepeatingDelayed return), and
	// MirrorCheckpointConnector and MirrorHeartbeatConnector create no task for one.
	ft := &f.Features
	on := func(enabled bool, key string, interval time.Duration, what string, kmm ...string) bool {
		if !enabled || interval >= 0 {
			return enabled
		}
		if f.Enabled || key == "emit.heartbeats.interval.seconds" {
			v := conn[key]
			same := "kmm does the same"
			if len(kmm) > 0 {
				same = kmm[0]
			}
			msg := fmt.Sprintf("%s = %d: MM2 treats a negative interval as off: %s; %s", key, interval/time.Second, what, same)
			for _, d := range sink.list { // a top-level key applies to every flow: say it once
				if d.Code == "negative-interval" && d.Pos == v.Origin.Pos && d.Msg == msg {
					return false
				}
			}
			sink.warn("negative-interval", v.Origin.Pos, v.Origin.Key, msg,
				"to turn it off, say so with its .enabled key; to keep it, give a positive interval")
		}
		return false
	}
	ft.Heartbeats = on(s.EmitHeartbeats, "emit.heartbeats.interval.seconds", s.EmitHeartbeatsInterval,
		"no heartbeats are emitted (MirrorHeartbeatConnector creates no task)")
	ft.OffsetSyncsLocation = s.OffsetSyncsTopicLocation
	if f.Enabled {
		ft.Data = true
		ft.TopicConfigSync = on(s.SyncTopicConfigs, "sync.topic.configs.interval.seconds", s.SyncTopicConfigsInterval,
			"topic configs are never synced")
		ft.ACLSync = on(s.SyncTopicACLs, "sync.topic.acls.interval.seconds", s.SyncTopicACLsInterval,
			"topic ACLs are never synced")
		ft.OffsetSyncs = s.EmitOffsetSyncs
		ft.RefreshTopics = on(s.RefreshTopics, "refresh.topics.interval.seconds", s.RefreshTopicsInterval,
			"the topics found at start are replicated, new topics and partitions are not picked up")
		ft.RefreshGroups = on(s.RefreshGroups, "refresh.groups.interval.seconds", s.RefreshGroupsInterval,
			"only the groups found at start are checkpointed, new groups are not picked up",
			"kmm differs: it finds groups as they commit offsets (it follows __consumer_offsets), new ones included")
		ft.Checkpoints = on(s.EmitCheckpoints && s.EmitOffsetSyncs, "emit.checkpoints.interval.seconds", s.EmitCheckpointsInterval,
			"no checkpoints are emitted and no group offsets synced (MirrorCheckpointConnector creates no task)")
		ft.GroupOffsetSync = ft.Checkpoints && on(s.SyncGroupOffsets, "sync.group.offsets.interval.seconds", s.SyncGroupOffsetsInterval,
			"group offsets are never synced to the target")
	}
	c.clientDiags(f, sink)
}

// legacyAlias finds a legacy *.blacklist key for a flow: flow-level (it is
// in the connector config) or top-level (MM2 2.7-3.9 read it there too;
// 4.x drops it, kmm still honours it).
func (c *Config) legacyAlias(f *FlowConfig, alias string) (Value, bool) {
	if v, ok := f.Connector[alias]; ok {
		return v, true
	}
	if e, ok := c.raw.get(alias); ok {
		v := e.value("top-level legacy key (MM2 2.7-3.9 read it; 4.x ignores it)")
		if out, changed, _ := c.providers.resolve(v.Raw); changed {
			v.resolved, v.hasResolved, v.FromProvider = out, true, true
		}
		return v, true
	}
	return Value{}, false
}

func sortSettings(s []Setting) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].Key < s[j-1].Key; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// compileFilters builds the three filters, reporting bad regexes at the
// line of the key that supplied the list.
func (c *Config) compileFilters(f *FlowConfig, sink *diagSink) {
	conn := f.Connector
	origin := func(key string) (Pos, string) {
		if v, ok := conn[key]; ok {
			return v.Origin.Pos, v.Origin.Key
		}
		for a, k := range blacklistAliases {
			if k == key {
				if v, ok := c.legacyAlias(f, a); ok {
					return v.Origin.Pos, v.Origin.Key
				}
			}
		}
		return Pos{}, key
	}
	build := func(incKey, excKey string, inc, exc []string) *Filter {
		flt, err := CompileFilter(inc, exc)
		if err == nil {
			return flt
		}
		var fe *FilterError
		if errors.As(err, &fe) {
			key := incKey
			if fe.List == "exclude" {
				key = excKey
			}
			pos, wkey := origin(key)
			hint := fe.Err.Hint
			if hint == "" {
				hint = "MM2 joins the list entries with '|' and needs the whole name to match (Java regex syntax)"
			}
			sink.err("regex", pos, wkey, fmt.Sprintf("%s: %s", key, fe.Err.Error()), hint)
		}
		return nil
	}
	s := f.Settings
	f.TopicFilter = build("topics", "topics.exclude", s.Topics, s.TopicsExclude)
	f.GroupFilter = build("groups", "groups.exclude", s.Groups, s.GroupsExclude)
	f.ConfigPropertyFilter = build("config.properties.include", "config.properties.exclude", []string{".*"}, s.ConfigPropertiesExclude)
}
