// Package flow is kmm's one model of a replication flow S->T: cluster aliases, the replication
// policy, the topic/group/config filters, every interval, tasks.max, and the librdkafka settings
// of each client role as plain string maps. It owns every default (defaults.go, one table),
// validates a flow once (Validate, called by the loader FromMM2), converts a resolved MM2
// configuration (mm2conf) into flows, and picks flows the way the command-line flags do
// (select.go).
//
// It is a leaf of kmm's domain: it imports mm2conf, policy and kerr only; never a Kafka client,
// never the engine, never a command. The engine (pkg/replicator), the read commands, the HTTP
// API and the plan core all take *flow.Flow.
package flow

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/kmmproject/kmm/pkg/offsetmap"
	"github.com/kmmproject/kmm/pkg/policy"
)

// Side is one cluster of a flow.
type Side string

// The two sides of a flow.
const (
	Source Side = "source"
	Target Side = "target"
)

// Client is a client kind; with a Side it names one of MM2's six client roles
// ("source-consumer", "target-admin", ...).
type Client string

// Client kinds.
const (
	Consumer Client = "consumer"
	Admin    Client = "admin"
	Producer Client = "producer"
)

// Role is MM2's name of a client role, e.g. "target-producer".
func Role(s Side, c Client) string { return string(s) + "-" + string(c) }

// Flow is one resolved source->target flow: everything the engine and the commands need, already
// translated to librdkafka settings and compiled filters. Build it with FromMM2 (which validates
// it) or by hand followed by Validate.
type Flow struct {
	Source, Target                   string // cluster aliases (the herder's pair)
	SourceBootstrap, TargetBootstrap string // for messages only
	// SourceAlias and TargetAlias are the aliases MM2's connectors put in every name and record
	// they make (remote and internal topic names, heartbeat keys, the "cluster" of the Connect
	// source partitions, the cycle check): source.cluster.alias / target.cluster.alias, which
	// the file may override (even to ""). Empty here means Source / Target (set by Validate)
	// unless AliasesSet.
	SourceAlias, TargetAlias string
	// AliasesSet: SourceAlias/TargetAlias were given (an empty alias is then meant).
	AliasesSet bool

	// Enabled is false for a heartbeats-only herder (MM2 creates S->T herders for heartbeats
	// even when the flow is disabled).
	Enabled bool

	// librdkafka settings per client role (MM2's six roles), already translated from Java
	// names. Use Settings to get a copy for a side and client kind.
	SourceConsumer, SourceAdmin, SourceProducer map[string]string
	TargetProducer, TargetAdmin, TargetConsumer map[string]string

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
	// caught-up group translates exactly within about this time.
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
	// kmm refuses to start while it has members, unless forced.
	MM2Group string

	Tasks        int           // tasks.max: parallel pipelines, at least 1 after Validate
	AdminTimeout time.Duration // admin.timeout.ms
	// MemoryBudget is kmm.memory.budget.bytes: the bytes of records all pipelines of the flow
	// may hold in librdkafka's queues; 0 = DefaultMemoryBudget.
	MemoryBudget int64
	// MemoryBudgetSet: the file sets kmm.memory.budget.bytes (a budget chosen, not the default).
	MemoryBudgetSet bool
	// SourceRTT is the same for the source: a source WANRTT or further away gets prefetch
	// queues (and fetches) sized for the link (ReplicationConsumer).
	SourceRTT time.Duration
	// TargetRTT is the round trip to the target measured by the replicator before its pipelines
	// start (0: not measured). With the default memory budget, a target WANRTT or further away
	// gets producer queues sized for the link (ReplicationProducer).
	TargetRTT time.Duration
	// Workers is kmm.workers.enabled: every `kmm replicate` of the flow joins WorkersGroup on
	// the source and copies only the partitions the group assigns it (docs/workers.md).
	Workers bool
	// RateLimit is kmm.rate.limit.bytes.per.second (or `kmm replicate --rate-limit`): the bytes
	// per second (keys, values and headers of the records copied) all pipelines of the flow may
	// copy together; 0 = no limit.
	RateLimit int64
	// DataPlane is kmm.data.plane: "go" or "c" (mm2conf fills in the default, "c").
	DataPlane string
	// NoOffsetMap is kmm.offset.map.enabled = false: no offset map is kept (translation falls
	// back to the offset syncs) and maps stored earlier are tombstoned. The zero value keeps
	// the map, so flows built in code (tests) have it.
	NoOffsetMap bool
	// ExactlyOnce: exactly.once.source.support = enabled (docs/mm2-compat.md, "Exactly-once"):
	// each pipeline writes its records and their progress record in one transaction on the
	// target, committed every TransactionInterval (kmm.transaction.interval.ms).
	ExactlyOnce         bool
	TransactionInterval time.Duration

	validated bool
}

// ConnectorName is MM2's name of the connector that replicates records; with the worker's
// group.id it makes the transactional ids of the exactly-once pipelines.
const ConnectorName = "MirrorSourceConnector"

// TransactionalProducer is ReplicationProducer for pipeline (task) i of an exactly-once flow:
// its transactional.id, and a delivery timeout within transaction.timeout.ms (librdkafka
// refuses a longer one; Connect's producer default is Integer.MAX_VALUE).
func (f *Flow) TransactionalProducer(i int) map[string]string {
	m := f.ReplicationProducer()
	m["transactional.id"] = f.TransactionalID(i)
	txn := DefaultTransactionTimeoutMs
	if n, err := strconv.Atoi(m["transaction.timeout.ms"]); err == nil && n > 0 {
		txn = n
	}
	d := txn
	for _, k := range []string{"message.timeout.ms", "delivery.timeout.ms"} {
		if n, err := strconv.Atoi(m[k]); err == nil && n > 0 && n < d {
			d = n
		}
		delete(m, k)
	}
	m["message.timeout.ms"] = strconv.Itoa(d)
	return m
}

// DefaultTransactionTimeoutMs is transaction.timeout.ms when the file does not set it (Java's
// and librdkafka's default).
const DefaultTransactionTimeoutMs = 60000

// TransactionalID is the transactional.id of pipeline (task) i in exactly-once mode: Connect's
// Worker.taskTransactionalId(group.id, connector, task), "<S>-mm2-MirrorSourceConnector-<i>"
// by default, so a kmm and an MM2 running the same flow fence each other.
func (f *Flow) TransactionalID(i int) string {
	return fmt.Sprintf("%s-%s-%d", f.MM2Group, ConnectorName, i)
}

// Name is "S->T".
func (f *Flow) Name() string { return f.Source + "->" + f.Target }

// RemoteTopic is the name of source topic t on the target: the flow's replication policy applied
// with its source alias (source.cluster.alias, which the file may set apart from the cluster's
// name). It is the one way kmm names a remote topic; UpstreamTopic is its reverse.
func (f *Flow) RemoteTopic(t string) string { return f.Policy.FormatRemoteTopic(f.SourceAlias, t) }

// UpstreamTopic is the reverse of RemoteTopic: the source topic whose copy on the target is named
// rt, and whether rt is a name this flow gives (a local topic of the target, or another flow's
// remote topic, is not).
func (f *Flow) UpstreamTopic(rt string) (string, bool) {
	u, ok := f.Policy.UpstreamTopic(rt)
	if !ok || f.RemoteTopic(u) != rt {
		return "", false
	}
	return u, true
}

// CheckpointsTopic is the flow's checkpoints topic on the target (<source alias>.checkpoints.internal
// under the default policy).
func (f *Flow) CheckpointsTopic() string { return f.Policy.CheckpointsTopic(f.SourceAlias) }

// OffsetMapTopic is the compacted topic on the target where kmm replicate keeps the flow's
// offset maps (pkg/offsetmap): where every copied record landed.
func (f *Flow) OffsetMapTopic() string { return offsetmap.Topic(f.SourceAlias) }

// OffsetSyncs is where the flow keeps its offset syncs: the side (offset-syncs.topic.location:
// the source by default) and the topic's name there (mm2-offset-syncs.<other side's alias>.internal).
func (f *Flow) OffsetSyncs() (Side, string) {
	if f.OffsetSyncsOnTarget {
		return Target, f.Policy.OffsetSyncsTopic(f.SourceAlias)
	}
	return Source, f.Policy.OffsetSyncsTopic(f.TargetAlias)
}

// Alias returns the cluster alias of side s.
func (f *Flow) Alias(s Side) string {
	if s == Target {
		return f.Target
	}
	return f.Source
}

// Bootstrap returns the bootstrap servers of side s (for messages).
func (f *Flow) Bootstrap(s Side) string {
	if s == Target {
		return f.TargetBootstrap
	}
	return f.SourceBootstrap
}

// Settings returns a copy of the librdkafka settings of role (s, c).
func (f *Flow) Settings(s Side, c Client) map[string]string {
	var m map[string]string
	switch {
	case s == Source && c == Consumer:
		m = f.SourceConsumer
	case s == Source && c == Admin:
		m = f.SourceAdmin
	case s == Source && c == Producer:
		m = f.SourceProducer
	case s == Target && c == Consumer:
		m = f.TargetConsumer
	case s == Target && c == Admin:
		m = f.TargetAdmin
	case s == Target && c == Producer:
		m = f.TargetProducer
	}
	out := make(map[string]string, len(m)+2)
	maps.Copy(out, m)
	return out
}

// ReplicationConsumer is the source consumer of the record pipelines: the flow's source-consumer
// settings with MM2's auto.offset.reset=earliest unless the file sets it.
func (f *Flow) ReplicationConsumer() map[string]string {
	m := f.Settings(Source, Consumer)
	if _, set := m["auto.offset.reset"]; !set {
		m["auto.offset.reset"] = "earliest"
	}
	q := f.queueBytes()
	if !f.MemoryBudgetSet { // the default budget: sized for a long link instead (WANRTT)
		if f.SourceRTT >= WANRTT || f.TargetRTT >= WANRTT {
			q = max(q, WANConsumerQueue)
		}
		if f.SourceRTT >= WANRTT {
			// librdkafka has one fetch in flight per broker: across a long round trip a pipeline
			// reads at most one fetch per round trip, and with the default 1 MiB per partition a
			// fetch of a pipeline's 6 partitions brought 6 MiB, not 8 (docs/benchmarks.md, "Long
			// round trips").
			setIfAbsent(m, "max.partition.fetch.bytes", strconv.Itoa(WANPartitionFetch))
		}
	}
	setIfAbsent(m, "queued.max.messages.kbytes", strconv.FormatInt(max(q/1024, 1), 10))
	setIfAbsent(m, "queued.min.messages", strconv.FormatInt(queueMessages(q), 10))
	// One fetch response is parsed into queued records at once, so a fetch larger than the
	// queue overruns the budget: capped whatever the file says (MM2's high-volume guides set
	// fetch.max.bytes = 52428800, Java's default; librdkafka caps an unset one to the queue).
	if limit := fetchBytes(q, m["message.max.bytes"]); atoiOr(m["fetch.max.bytes"], limit+1) > limit {
		m["fetch.max.bytes"] = strconv.FormatInt(limit, 10)
	}
	return m
}

// FetchDivisor: a replication consumer's fetch brings at most 1/FetchDivisor of its prefetch
// queue (fetchBytes).
const FetchDivisor = 3

// MinFetchBytes is the least fetch.max.bytes fetchBytes gives: 1 MiB.
const MinFetchBytes = 1 << 20

// fetchBytes is the most a replication consumer's fetch may bring: a third of its prefetch
// queue q, at least MinFetchBytes and the consumer's message.max.bytes (librdkafka refuses
// less). With the default budget and two pipelines, 1 MiB (docs/benchmarks.md, "Memory on the
// C plane"). Across a long round trip a pipeline then reads at most this per round trip from
// each source broker: raise the budget (docs/replicate.md: long round trips).
func fetchBytes(q int64, msgMax string) int64 {
	return max(q/FetchDivisor, MinFetchBytes, atoiOr(msgMax, 1000000))
}

// atoiOr is s as a positive number, else def.
func atoiOr(s string, def int64) int64 {
	if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil && n > 0 {
		return n
	}
	return def
}

// DefaultMemoryBudget is kmm.memory.budget.bytes when the file does not set it: 16 MiB per flow
// (32 MiB before the C data plane became the default; docs/benchmarks.md, "Memory on the C
// plane").
const DefaultMemoryBudget = 16 << 20

// queueBytes is the size of one pipeline's consumer prefetch queue and of its producer queue:
// the flow's memory budget split over its pipelines, half per side, of which three quarters go
// to the queue and a quarter is left for what librdkafka holds besides (the fetch response
// being parsed, the batches in flight). With the default budget and tasks.max = 2: 3 MiB each,
// ~20-30 ms of records at the 100-150 MB/s one C-plane pipeline reaches on loopback, several
// times the producer's linger (5 ms) and a LAN round trip; a link with a long round trip needs a
// larger budget (docs/replicate.md: memory).
func (f *Flow) queueBytes() int64 {
	b := f.MemoryBudget
	if b <= 0 {
		b = DefaultMemoryBudget
	}
	return b / int64(max(f.Tasks, 1)) / 2 * 3 / 4
}

// queueMessages bounds a queue by count too: librdkafka keeps a few hundred bytes per queued
// record besides the record, so small records hit the byte bound late; one record per 512 B of
// the queue's bytes, between 1,000 and 100,000 (librdkafka's default).
func queueMessages(q int64) int64 { return min(max(q/512, 1000), 100000) }

func setIfAbsent(m map[string]string, k, v string) {
	if _, set := m[k]; !set {
		m[k] = v
	}
}

// WANRTT is the round trip to the target from which a flow with the default memory budget
// sizes its pipelines' producer queues for a long link (wanProducerQueue) instead of from the
// budget: loopback and a data center answer in well under a millisecond to a few.
const WANRTT = 20 * time.Millisecond

// WANPartitionFetch is a replication consumer's max.partition.fetch.bytes when the source is
// WANRTT or further away and the budget is the default (librdkafka's default: 1 MiB).
const WANPartitionFetch = 4 << 20

// WANConsumerQueue is a pipeline's source prefetch queue when the source or the target is
// WANRTT or further away and the budget is the default. Source: librdkafka has one fetch in
// flight per broker, and the fetch is capped at a third of the queue (fetchBytes), so a
// pipeline reads at most that much per round trip and source broker: 8 MiB here, ~80 MB/s at
// 100 ms, where the default budget's 1 MiB fetch would allow ~10 MB/s. Target: librdkafka's
// idempotent producer keeps one produce request (one batch of one partition) in flight per
// partition, so across a long round trip each partition moves at most one batch per round trip
// and the producer queue must hold records of every partition. A 1 MiB fetch holds one
// partition's records (max.partition.fetch.bytes), so the queue filled with one or two
// partitions at a time: 25 MB/s through a 100 ms link; 8 MiB fetches spread over partitions,
// 84. Smaller per-partition fetches (256 KiB, 8 MiB queue) do the same only when the source's
// batches are small: with the 1 MB batches of a high-volume producer the broker returns a
// partition's whole first batch, a fetch held two or three partitions, and the link carried
// 25-34 MB/s (2026-12-03).
const WANConsumerQueue = 24 << 20

// wanProducerQueue is a pipeline's producer queue across a long link: the IdempotentMaxInFlight
// requests one broker connection can have in flight (librdkafka sends one partition's batch of
// at most batch.size per request) and about one batch waiting for each of the others, so that
// every request leaves full: WANProducerBatches batches, 12 MB with librdkafka's default
// batch.size. Measured through a 100 ms round trip (2026-12-03, 12 partitions, tasks.max = 2):
// 12 MB copied 0.96-0.98x what 20 MB (the previous size) did at 27-70 MiB less peak RSS; a
// 6 MiB queue had left ~600 KB per request.
func wanProducerQueue(producer map[string]string) int64 {
	batch := int64(1_000_000) // librdkafka's batch.size
	if v, err := strconv.ParseInt(producer["batch.size"], 10, 64); err == nil && v > 0 {
		batch = v
	}
	return min(WANProducerBatches*batch, 256<<20)
}

// WANProducerBatches is the producer queue across a long link in batches (wanProducerQueue).
const WANProducerBatches = 12

// IdempotentMaxInFlight is librdkafka's limit of requests in flight for an idempotent producer.
const IdempotentMaxInFlight = 5

// MaxInFlightKey is the producer setting of the requests in flight per broker connection.
const MaxInFlightKey = "max.in.flight.requests.per.connection"

// WANMaxInFlight documents kmm's default for the replication producer's
// max.in.flight.requests.per.connection when the file leaves it to the Connect worker's default
// of 1: IdempotentMaxInFlight. Connect needs 1 to keep order with its non-idempotent producer;
// kmm's producer is always idempotent, which keeps order with up to 5. With 1, a pipeline sends
// one produce request (one ~1 MB batch) per round trip to each broker: about 8 MB/s per pipeline
// across a 100 ms round trip (issue 20: 16 MB/s with tasks.max = 2); with 5, five times that
// (docs/benchmarks.md, "Long round trips"). A value the file sets is kept (capped at 5).
const WANMaxInFlight = IdempotentMaxInFlight

// ReplicationProducer is the target producer of the record pipelines and of the resume
// positions: the flow's target-producer settings, always idempotent with acks=all, so records
// arrive once and in order per partition whatever the file says. Idempotence needs at most 5
// requests in flight and retries: larger or zero values from the file are replaced (mm2conf
// warns about them with their line).
func (f *Flow) ReplicationProducer() map[string]string {
	m := f.Settings(Target, Producer)
	m["enable.idempotence"] = "true"
	m["acks"] = "all"
	if n, err := strconv.Atoi(m["max.in.flight.requests.per.connection"]); err == nil && n > IdempotentMaxInFlight {
		m["max.in.flight.requests.per.connection"] = strconv.Itoa(IdempotentMaxInFlight)
	}
	if m["retries"] == "0" {
		delete(m, "retries")
	}
	q := f.queueBytes()
	if w := wanProducerQueue(m); f.TargetRTT >= WANRTT && !f.MemoryBudgetSet && w > q {
		q = w
	}
	setIfAbsent(m, "queue.buffering.max.kbytes", strconv.FormatInt(max(q/1024, 1), 10))
	setIfAbsent(m, "queue.buffering.max.messages", strconv.FormatInt(queueMessages(q), 10))
	return m
}

// StateTopicRF is the replication factor for kmm's state topic (__kmm_state) on the target:
// that of the flow's other internal topic there, checkpoints.topic.replication.factor.
func (f *Flow) StateTopicRF() int {
	if f.CheckpointsRF == 0 {
		return -1
	}
	return f.CheckpointsRF
}

// Selected reports whether source topic t is replicated by this flow: it passes the topic
// filter (or is a heartbeats topic and heartbeats replication is on), is not internal, and is
// not a cycle (it did not come from the target).
func (f *Flow) Selected(t string) bool {
	if (f.TopicFilter == nil || !f.TopicFilter(t)) && !(f.HeartbeatsReplication && f.Policy.IsHeartbeatsTopic(t)) {
		return false
	}
	if f.Policy.IsInternalTopic(t) {
		return false
	}
	return !policy.IsCycle(f.Policy, t, f.TargetAlias)
}

// Validate checks what the engine and the commands rely on, fills every unset value from the
// defaults table and clamps tasks.max to 1..mm2conf.MaxPipelines. The loader (FromMM2) calls it once; a flow
// built by hand must call it before use. Calling it again changes nothing.
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
	for _, d := range Defaults {
		if d.fill != nil {
			d.fill(f)
		}
	}
	if f.GroupFilter == nil {
		f.GroupFilter = func(string) bool { return true }
	}
	if f.ConfigExcluded == nil {
		f.ConfigExcluded = func(string) bool { return false }
	}
	for _, m := range []*map[string]string{&f.SourceConsumer, &f.SourceAdmin, &f.SourceProducer, &f.TargetProducer, &f.TargetAdmin, &f.TargetConsumer} {
		if *m == nil {
			*m = map[string]string{}
		}
	}
	f.validated = true
	return nil
}

// Validated reports whether Validate has accepted the flow.
func (f *Flow) Validated() bool { return f.validated }

// WorkersGroup is the consumer group on the source through which the workers of the flow share
// its partitions (kmm.workers.enabled). The "kmm-" prefix and the "->" keep it apart from
// users' groups and from MM2's (MM2's Connect group is <S>-mm2 or the Connect group.id).
func (f *Flow) WorkersGroup() string { return "kmm-" + f.Source + "->" + f.Target + "-workers" }

// LeaderGroup is the consumer group on the target, subscribed to the one-partition state topic,
// whose holder of partition 0 runs the flow's singleton duties (kmm.workers.enabled).
func (f *Flow) LeaderGroup() string { return "kmm-" + f.Source + "->" + f.Target + "-leader" }
