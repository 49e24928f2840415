package rdkafka

import (
	"errors"
	"fmt"
	"testing"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

func TestTopicBatchesStayUnderTheControllerLimit(t *testing.T) {
	cfg := map[string]string{"cleanup.policy": "compact", "retention.ms": "1"}
	cases := []struct {
		name   string
		topics []NewTopic
	}{
		{"100 x 100", manyTopics(100, 100, nil)},
		{"100 x 100 with configs", manyTopics(100, 100, cfg)},
		{"1000 x 10", manyTopics(1000, 10, cfg)},
		{"one of 30000", []NewTopic{{Name: "big", Partitions: 30000, Configs: cfg}}},
		{"small, huge, small", append(append(manyTopics(3, 4000, nil), NewTopic{Name: "huge", Partitions: 12000}), NewTopic{Name: "x1", Partitions: 1}, NewTopic{Name: "x2", Partitions: 1})},
		{"broker default", []NewTopic{{Name: "d", Partitions: -1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			batches := topicBatches(c.topics)
			seen := map[string]int{}
			order := 0
			for _, b := range batches {
				records := 0
				for _, tp := range b {
					records += topicRecords(tp)
					if c.topics[order].Name != tp.Name {
						t.Fatalf("topic %s out of order (want %s)", tp.Name, c.topics[order].Name)
					}
					order++
					seen[tp.Name] = tp.Partitions
				}
				if records > RecordsPerRequest {
					t.Fatalf("a request writes %d records (> %d): %d topics", records, RecordsPerRequest, len(b))
				}
			}
			if len(seen) != len(c.topics) {
				t.Fatalf("%d topics in the requests, want %d", len(seen), len(c.topics))
			}
			for _, tp := range c.topics {
				got := seen[tp.Name]
				if got != tp.Partitions && got != firstPartitions(tp) {
					t.Fatalf("%s created with %d partitions, want %d or a first part", tp.Name, got, tp.Partitions)
				}
				if got != tp.Partitions {
					steps := growSteps(got, tp.Partitions)
					prev := got
					for _, s := range steps {
						if s-prev > RecordsPerRequest || s <= prev {
							t.Fatalf("%s: step %d -> %d", tp.Name, prev, s)
						}
						prev = s
					}
					if prev != tp.Partitions {
						t.Fatalf("%s grown to %d, want %d", tp.Name, prev, tp.Partitions)
					}
				}
			}
		})
	}
	// The case: 100 topics x 100 partitions is 10,100 records, refused in one request.
	if n := len(topicBatches(manyTopics(100, 100, nil))); n < 3 {
		t.Fatalf("100 x 100 in %d requests, want >= 3", n)
	}
	if n := len(topicBatches(manyTopics(10, 12, nil))); n != 1 {
		t.Fatalf("10 x 12 in %d requests, want 1", n)
	}
}

func manyTopics(n, parts int, cfg map[string]string) []NewTopic {
	out := make([]NewTopic, n)
	for i := range out {
		out[i] = NewTopic{Name: fmt.Sprintf("t-%04d", i), Partitions: parts, RF: -1, Configs: cfg}
	}
	return out
}

func TestConfigBatches(t *testing.T) {
	ops := map[string][]ConfigOp{}
	total := 0
	for i := range 3000 {
		name := fmt.Sprintf("t-%04d", i)
		for j := range 1 + i%5 {
			ops[name] = append(ops[name], ConfigOp{Name: fmt.Sprintf("k%d", j), Value: "v"})
			total++
		}
	}
	ops["wide"] = make([]ConfigOp, 7000)
	for j := range ops["wide"] {
		ops["wide"][j] = ConfigOp{Name: fmt.Sprintf("w%d", j)}
	}
	total += 7000
	got := map[string][]ConfigOp{}
	n := 0
	for _, b := range configBatches(ops) {
		in := 0
		for tp, list := range b {
			in += len(list)
			got[tp] = append(got[tp], list...)
		}
		if in > RecordsPerRequest || in == 0 {
			t.Fatalf("a request with %d entries", in)
		}
		n += in
	}
	if n != total {
		t.Fatalf("%d entries sent, want %d", n, total)
	}
	for tp, list := range ops {
		if fmt.Sprint(got[tp]) != fmt.Sprint(list) {
			t.Fatalf("%s: entries changed", tp)
		}
	}
	if len(configBatches(nil)) != 0 {
		t.Fatal("no ops, yet a request")
	}
}

func TestIsBatchTooLarge(t *testing.T) {
	refused := kafka.NewError(kafka.ErrPolicyViolation, "Unable to perform excessively large batch operation.", false)
	if !IsBatchTooLarge(refused) || !IsBatchTooLarge(fmt.Errorf("creating x: %w", refused)) {
		t.Fatal("the controller's refusal not recognised")
	}
	for _, err := range []error{nil, errors.New("boom"), kafka.NewError(kafka.ErrPolicyViolation, "Topic replication factor must be 3", false),
		kafka.NewError(kafka.ErrInvalidReplicationFactor, "excessively large batch", false)} {
		if IsBatchTooLarge(err) {
			t.Fatalf("%v taken for the controller's refusal", err)
		}
	}
}
