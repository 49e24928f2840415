package rdkafka

import (
	"errors"
	"slices"
	"strings"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// ControllerRecordLimit is the most records a KRaft controller writes for one admin request
// (Kafka's QuorumController bounds a request's records at 10,000): a request that needs more
// is refused whole, POLICY_VIOLATION "Unable to perform excessively large batch operation.",
// and nothing of it is done. Creating a topic writes one record for the topic, one per
// partition and one per config; growing a topic one per new partition; an incremental config
// change one per entry; an ACL one.
const ControllerRecordLimit = 10000

// RecordsPerRequest is the most records kmm's CreateTopics, CreatePartitions and
// IncrementalAlterTopicConfigs make the controller write per request: half the limit. A
// request above it is cut in several (a topic with more partitions than that is created with
// fewer and then grown). A refused request also held the broker's forwarding channel to the
// controller until the 30 s request timeout on Kafka 4.1 (aclsPerRequest), so the margin costs
// a few requests and buys never being near the limit.
const RecordsPerRequest = 5000

// BatchTooLargeHint names the real cause of an excessively-large-batch refusal.
const BatchTooLargeHint = "the target's KRaft controller refuses one request that writes more than 10,000 records " +
	"(creating a topic writes one per partition and one per config); kmm splits its own requests at 5,000, " +
	"so this came from a request too large for this cluster: report it with the command line, or create the remote topics " +
	"beforehand with kafka-topics.sh --create, at most a few thousand partitions per command"

// IsBatchTooLarge reports whether err is a KRaft controller's refusal of a request that would
// write more than ControllerRecordLimit records.
func IsBatchTooLarge(err error) bool {
	if err == nil {
		return false
	}
	var ke kafka.Error
	if errors.As(err, &ke) && ke.Code() != kafka.ErrPolicyViolation {
		return false
	}
	return strings.Contains(strings.ToLower(err.Error()), "excessively large batch")
}

// topicRecords is the records the controller writes to create t: one for the topic, one per
// partition (the broker default, -1, counted as one) and one per config.
func topicRecords(t NewTopic) int {
	return 1 + max(t.Partitions, 1) + len(t.Configs)
}

// firstPartitions is how many partitions t is created with so that its creation stays within
// RecordsPerRequest: all of them, or fewer, the rest added by growPartitions steps.
func firstPartitions(t NewTopic) int {
	if topicRecords(t) <= RecordsPerRequest {
		return t.Partitions
	}
	return max(RecordsPerRequest-1-len(t.Configs), 1)
}

// topicBatches cuts topics into CreateTopics requests of at most RecordsPerRequest records each,
// in order; a topic too large for one request alone (with firstPartitions) makes its own.
func topicBatches(topics []NewTopic) [][]NewTopic {
	var out [][]NewTopic
	var cur []NewTopic
	n := 0
	for _, t := range topics {
		if p := firstPartitions(t); p != t.Partitions {
			t.Partitions = p
		}
		r := topicRecords(t)
		if len(cur) > 0 && n+r > RecordsPerRequest {
			out, cur, n = append(out, cur), nil, 0
		}
		cur = append(cur, t)
		n += r
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// growSteps is the partition counts a topic of have partitions passes through on its way to
// total, each step adding at most RecordsPerRequest partitions (the last step is total).
func growSteps(have, total int) []int {
	var out []int
	for have < total {
		have = min(have+RecordsPerRequest, total)
		out = append(out, have)
	}
	return out
}

// configBatches cuts incremental config changes into requests of at most RecordsPerRequest
// entries (one controller record each); one topic's entries may span requests (each entry is
// applied on its own, SET or DELETE, so order across requests does not matter).
func configBatches(ops map[string][]ConfigOp) []map[string][]ConfigOp {
	topics := make([]string, 0, len(ops))
	for t := range ops {
		topics = append(topics, t)
	}
	slices.Sort(topics)
	var out []map[string][]ConfigOp
	cur, n := map[string][]ConfigOp{}, 0
	for _, t := range topics {
		list := ops[t]
		for len(list) > 0 {
			if n == RecordsPerRequest {
				out, cur, n = append(out, cur), map[string][]ConfigOp{}, 0
			}
			k := min(len(list), RecordsPerRequest-n)
			cur[t] = append(cur[t], list[:k]...)
			list, n = list[k:], n+k
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}
