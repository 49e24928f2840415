// Package cluster is the seam between kmm's commands and domain code and a Kafka cluster: small
// interfaces for what they need from one (an Admin, a Reader of partition ranges, a Producer of
// internal records), the plain value types those speak, and an Opener that hands out a Cluster
// for one side of a flow with that flow's client settings.
//
// It declares; it implements nothing and imports no Kafka client. pkg/rdkafka implements it
// with librdkafka; tests implement it with fakes or run pkg/rdkafka against in-process kfake
// clusters. Commands and read-only domain code (snapshot, mm2read, the plan core) take these
// interfaces and never open clients themselves.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kmmproject/kmm/pkg/flow"
)

// TP is a topic partition.
type TP struct {
	Topic     string
	Partition int32
}

// Header is a record header.
type Header struct {
	Key   string
	Value []byte
}

// HeaderOrigin is the provenance header kmm replicate adds, last, to every record it copies
// under a policy that keeps topic names (IdentityReplicationPolicy): the alias of the cluster
// the record was first written to. A copy is never written to the cluster its origin names.
const HeaderOrigin = "kmm.origin"

// WithoutOrigin returns hs without a trailing HeaderOrigin (what kmm added to a copy), for
// comparisons of a record with its copy.
func WithoutOrigin(hs []Header) []Header {
	if n := len(hs); n > 0 && hs[n-1].Key == HeaderOrigin {
		return hs[:n-1]
	}
	return hs
}

// Digest is one record as a content comparison sees it: its offset and the digest of its key,
// value, headers and (optionally) timestamp (kmm verify's RecordHash).
type Digest struct {
	Offset int64
	Hash   uint64
}

// Record is a record to produce or one that was read.
type Record struct {
	Topic     string
	Partition int32 // produce: -1 lets the partitioner choose
	Offset    int64 // records read only
	Key       []byte
	Value     []byte
	Headers   []Header
	Timestamp time.Time
}

// TopicInfo describes one topic.
type TopicInfo struct {
	Name       string
	Partitions int
	RF         int
	Internal   bool
}

// NewTopic is a topic to create.
type NewTopic struct {
	Name       string
	Partitions int
	RF         int // -1: broker default
	Configs    map[string]string
}

// ErrTopicExists is wrapped by the per-topic error of CreateTopics when the topic already exists.
var ErrTopicExists = errors.New("topic already exists")

// ConfigSource mirrors Kafka's config entry sources.
type ConfigSource string

// Config sources as Kafka names them.
const (
	SourceDynamicTopic         ConfigSource = "DYNAMIC_TOPIC_CONFIG"
	SourceDynamicBroker        ConfigSource = "DYNAMIC_BROKER_CONFIG"
	SourceDynamicDefaultBroker ConfigSource = "DYNAMIC_DEFAULT_BROKER_CONFIG"
	SourceStaticBroker         ConfigSource = "STATIC_BROKER_CONFIG"
	SourceDefault              ConfigSource = "DEFAULT_CONFIG"
	SourceUnknown              ConfigSource = "UNKNOWN"
)

// ConfigEntry is one described config value.
type ConfigEntry struct {
	Name      string
	Value     string
	Source    ConfigSource
	ReadOnly  bool
	Sensitive bool
}

// ConfigOp is one incremental config change: Delete=true removes the override.
type ConfigOp struct {
	Name   string
	Value  string
	Delete bool
}

// ACL is one access-control binding in Kafka's terms.
type ACL struct {
	ResourceType string // TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID
	ResourceName string
	PatternType  string // LITERAL, PREFIXED
	Principal    string // User:alice
	Host         string // *
	Operation    string // READ, WRITE, ALL, DESCRIBE, ...
	Permission   string // ALLOW, DENY
}

func (b ACL) String() string {
	return fmt.Sprintf("%s %s %s:%s %s %s@%s", b.Permission, b.Operation, b.ResourceType, b.ResourceName, b.PatternType, b.Principal, b.Host)
}

// GroupListing is one group from ListGroups.
type GroupListing struct {
	ID     string
	State  string // Empty, Stable, PreparingRebalance, CompletingRebalance, Dead, Unknown
	Simple bool
}

// GroupDescription describes one group.
type GroupDescription struct {
	ID      string
	State   string
	Members int
	// Who are the members (client id, host, member id), as DescribeGroups returns them.
	Who []GroupMember
	Err error
}

// GroupMember is one member of a consumer group.
type GroupMember struct {
	ClientID, Host, MemberID string
}

// OffsetMeta is a committed offset with its metadata.
type OffsetMeta struct {
	Offset   int64 // -1: none committed
	Metadata string
}

// OffsetSpec selects which offset ListOffsets returns (and where a Reader starts).
type OffsetSpec int64

// Offset specs; any value ≥ 0 is a timestamp in epoch milliseconds (ListOffsets) or an offset
// (Reader.Assign).
const (
	Earliest     OffsetSpec = -2
	Latest       OffsetSpec = -1
	MaxTimestamp OffsetSpec = -3
)

// OffsetResult is an offset with the timestamp the broker returned (-1 when none).
type OffsetResult struct {
	Offset    int64
	Timestamp int64
}

// Topics are the topic operations of a cluster.
type Topics interface {
	// ListTopics returns every topic of the cluster (metadata request).
	ListTopics(ctx context.Context) (map[string]TopicInfo, error)
	// CreateTopics creates topics; per-topic errors are in the map (nil = created).
	CreateTopics(ctx context.Context, topics []NewTopic) (map[string]error, error)
	// ValidateTopics asks the cluster whether it would create topics (CreateTopics with
	// validate-only: replication factor against the brokers, authorization, policies), creating
	// nothing; per-topic errors in the map (nil = it would).
	ValidateTopics(ctx context.Context, topics []NewTopic) (map[string]error, error)
	CreatePartitions(ctx context.Context, topic string, total int) error
	DeleteTopics(ctx context.Context, topics ...string) error
	DescribeTopicConfigs(ctx context.Context, topics ...string) (map[string]map[string]ConfigEntry, error)
	IncrementalAlterTopicConfigs(ctx context.Context, ops map[string][]ConfigOp) error
}

// ACLs are the ACL operations of a cluster.
type ACLs interface {
	CreateACLs(ctx context.Context, acls []ACL) error
	// DescribeTopicACLs returns the ACLs that apply to the named topics (per topic: LITERAL on
	// its name, the LITERAL wildcard, PREFIXED on a prefix of it), each once. Never every ACL of
	// the cluster at once: librdkafka's parse of a very large DescribeAcls response overflows
	// its thread's stack (rdkafka.Admin.DescribeTopicACLs).
	DescribeTopicACLs(ctx context.Context, topics []string) ([]ACL, error)
	// DeleteACLs deletes exactly the given bindings (failback removes failover's fence).
	DeleteACLs(ctx context.Context, acls ...ACL) error
}

// Offsets are the partition offset operations of a cluster.
type Offsets interface {
	// ListOffsets returns, per partition, the offset for spec (earliest, latest, or the first
	// offset whose timestamp ≥ spec).
	ListOffsets(ctx context.Context, tps []TP, spec OffsetSpec) (map[TP]OffsetResult, error)
	// DeleteRecords deletes the records of tp before offset `before`.
	DeleteRecords(ctx context.Context, tp TP, before int64) error
}

// Groups are the consumer group operations of a cluster.
type Groups interface {
	ListGroups(ctx context.Context) ([]GroupListing, error)
	DescribeGroups(ctx context.Context, ids ...string) ([]GroupDescription, error)
	// ListGroupOffsets returns the committed offsets of a group (all partitions it has).
	ListGroupOffsets(ctx context.Context, group string) (map[TP]OffsetMeta, error)
	// AlterGroupOffsets commits offsets for a group that has no active members.
	AlterGroupOffsets(ctx context.Context, group string, offsets map[TP]OffsetMeta) error
	// DeleteGroups deletes groups that have no active members; a group that does not exist is
	// not an error (already deleted).
	DeleteGroups(ctx context.Context, ids ...string) error
}

// Admin is every admin operation kmm uses on one cluster.
type Admin interface {
	// Name labels errors ("cluster A").
	Name() string
	// Ping asks for cluster metadata and returns the cluster id; an unreachable cluster gives a
	// kerr.Unreachable error within timeout.
	Ping(ctx context.Context, timeout time.Duration) (string, error)
	Topics
	ACLs
	Offsets
	Groups
	Close()
}

// Reader reads partitions from given start offsets (or Earliest/Latest) without a consumer
// group: the partition-range reads of kmm's internal topics and of records to inspect.
type Reader interface {
	// Assign starts reading the given partitions at the given offsets.
	Assign(start map[TP]int64) error
	// Poll returns up to max records, waiting at most wait for the first one.
	Poll(ctx context.Context, max int, wait time.Duration) ([]Record, error)
	Close()
}

// Producer writes records (kmm's internal records) and waits for their acknowledgement.
type Producer interface {
	// ProduceSync sends recs and waits until each is acknowledged or failed; it returns the
	// offsets in input order.
	ProduceSync(ctx context.Context, recs []Record) ([]int64, error)
	Close()
}

// Cluster is one side of a flow, opened: its Admin, and readers and producers made with that
// side's client settings.
type Cluster interface {
	Admin
	// Alias is the cluster alias of the MM2 file; Bootstrap its bootstrap servers (messages).
	Alias() string
	Bootstrap() string
	// NewReader opens a reader with the side's consumer settings.
	NewReader() (Reader, error)
	// NewProducer opens a producer with the side's producer settings and the given overrides.
	NewProducer(overrides map[string]string) (Producer, error)
}

// Opener opens a side of a flow.
type Opener interface {
	Open(f *flow.Flow, side flow.Side) (Cluster, error)
}

// OpenerFunc adapts a function to Opener.
type OpenerFunc func(f *flow.Flow, side flow.Side) (Cluster, error)

// Open calls o.
func (o OpenerFunc) Open(f *flow.Flow, side flow.Side) (Cluster, error) { return o(f, side) }

// AnyGroup is a group of any protocol type, Kafka Connect's worker groups included.
type AnyGroup struct {
	State        string // "Dead": no such group
	ProtocolType string // "connect" for Kafka Connect / MM2 workers
	Members      int
}

// GroupProber describes groups of any protocol type on a side of a flow, which
// Admin.DescribeGroups (consumer groups only) cannot: the question "does Apache MM2 run this flow
// now" (its Connect group <S>-mm2 on T has members). pkg/groupprobe implements it; commands get
// it from their factory.
type GroupProber interface {
	DescribeAnyGroup(ctx context.Context, f *flow.Flow, side flow.Side, group string) (AnyGroup, error)
}
