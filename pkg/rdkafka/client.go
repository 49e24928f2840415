package rdkafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kmmproject/kmm/pkg/kerr"
)

// Producer wraps a librdkafka producer and always drains its delivery reports.
type Producer struct {
	p    *kafka.Producer
	name string
}

// NewProducer creates a producer for one cluster.
func NewProducer(name string, cfg Config, opts ...Option) (*Producer, error) {
	o := collect(opts)
	cfg = withLogChannel(merge(cfg, failFast, producerChannels))
	p, err := kafka.NewProducer(cfg.configMap(nil))
	if err != nil {
		return nil, kerr.Wrap(kerr.Usage, fmt.Errorf("%s: invalid producer configuration: %w", name, err))
	}
	pr := &Producer{p: p, name: name}
	go func() {
		// Drain events that carry no per-message channel (client-level errors, logs) so Flush
		// never waits on an unread queue (librdkafka-notes gotcha 1).
		for ev := range p.Events() {
			if e, ok := ev.(kafka.Error); ok && o.problems != nil {
				o.problems(e)
			}
		}
	}()
	startDrain(name, p.Logs(), cfg, o.problems)
	return pr, nil
}

// Close flushes (up to 10 s) and closes the producer.
func (p *Producer) Close() { p.CloseWithin(10 * time.Second) }

// CloseWithin waits up to d for queued records to be delivered, discards (purges) what is
// still queued or in flight after that, and closes the producer. Purged records get a failed
// delivery report (ProduceSync callers have given up on them already). It returns how many
// records were discarded. With nothing left to wait for, closing takes milliseconds even when
// the cluster is unreachable.
func (p *Producer) CloseWithin(d time.Duration) int {
	if d > 0 && p.p.Len() > 0 {
		p.p.Flush(int(d.Milliseconds()))
	}
	n := p.p.Len()
	if n > 0 {
		_ = p.p.Purge(kafka.PurgeQueue | kafka.PurgeInFlight | kafka.PurgeNonBlocking)
	}
	p.p.Close()
	return n
}

// Len is the number of records queued, in flight, or whose delivery report is not yet read.
func (p *Producer) Len() int { return p.p.Len() }

func toMessage(r *Record) *kafka.Message {
	t := r.Topic
	m := &kafka.Message{
		TopicPartition: kafka.TopicPartition{Topic: &t, Partition: r.Partition},
		Key:            r.Key,
		Value:          r.Value,
		Timestamp:      r.Timestamp,
	}
	if len(r.Headers) > 0 {
		m.Headers = make([]kafka.Header, len(r.Headers))
		for i, h := range r.Headers {
			m.Headers[i] = kafka.Header{Key: h.Key, Value: h.Value}
		}
	}
	return m
}

// ProduceSync sends recs and waits until every one is acknowledged or failed. It retries on a
// full local queue instead of dropping. It returns the assigned offsets in input order.
func (p *Producer) ProduceSync(ctx context.Context, recs []Record) ([]int64, error) {
	deliveries := make(chan kafka.Event, 4096)
	offsets := make([]int64, len(recs))
	pending := 0
	var firstErr error
	collect := func(ev kafka.Event) {
		m, ok := ev.(*kafka.Message)
		if !ok {
			return
		}
		pending--
		idx := m.Opaque.(int)
		if m.TopicPartition.Error != nil {
			if firstErr == nil {
				firstErr = Classify(fmt.Errorf("%s: produce to %s[%d]: %w", p.name, *m.TopicPartition.Topic, m.TopicPartition.Partition, m.TopicPartition.Error))
			}
			offsets[idx] = -1
			return
		}
		offsets[idx] = int64(m.TopicPartition.Offset)
	}
	for i := range recs {
		m := toMessage(&recs[i])
		m.Opaque = i
		for {
			err := p.p.Produce(m, deliveries)
			if err == nil {
				pending++
				break
			}
			var ke kafka.Error
			if errors.As(err, &ke) && ke.Code() == kafka.ErrQueueFull {
				select {
				case ev := <-deliveries:
					collect(ev)
				case <-time.After(50 * time.Millisecond):
				case <-ctx.Done():
					return offsets, ctx.Err()
				}
				continue
			}
			return offsets, fmt.Errorf("%s: produce: %w", p.name, err)
		}
		// Keep the delivery channel from filling up.
		for len(deliveries) > 0 {
			collect(<-deliveries)
		}
	}
	for pending > 0 {
		select {
		case ev := <-deliveries:
			collect(ev)
		case <-ctx.Done():
			return offsets, ctx.Err()
		}
	}
	return offsets, firstErr
}

// Consumer wraps a librdkafka consumer used in assign mode (no group management).
type Consumer struct {
	c        *kafka.Consumer
	name     string
	problems func(error)
	logs     chan kafka.LogEvent // the log channel kmm made (withLogBuffer), closed by Close
	scan     scanHandle          // the digest scanner of PollDigests (scan.go), nil until used
}

// NewConsumer creates a consumer. group.id defaults to a throwaway id since librdkafka
// requires one even in assign mode; commits are off unless the caller enables them.
func NewConsumer(name string, cfg Config, opts ...Option) (*Consumer, error) {
	o := collect(opts)
	extra := map[string]string{"group.id": "kmm-assign", "enable.auto.commit": "false", "enable.auto.offset.store": "false",
		"enable.partition.eof": "false"}
	cfg = withLogChannel(merge(cfg, extra, failFast))
	cm := cfg.configMap(nil)
	var logs chan kafka.LogEvent
	if o.logBuffer > 0 {
		logs = make(chan kafka.LogEvent, o.logBuffer)
		(*cm)["go.logs.channel"] = logs
	}
	c, err := kafka.NewConsumer(cm)
	if err != nil {
		return nil, kerr.Wrap(kerr.Usage, fmt.Errorf("%s: invalid consumer configuration: %w", name, err))
	}
	startDrain(name, c.Logs(), cfg, o.problems)
	return &Consumer{c: c, name: name, problems: o.problems, logs: logs}, nil
}

// Close closes the consumer.
func (c *Consumer) Close() {
	c.closeScan()
	_ = c.c.Close()
	if c.logs != nil {
		// The Go client closes only a log channel it made; its log goroutine has returned.
		close(c.logs)
		c.logs = nil
	}
}

// Assign starts reading the given partitions at the given offsets (or Earliest/Latest).
func (c *Consumer) Assign(start map[TP]int64) error {
	parts := make([]kafka.TopicPartition, 0, len(start))
	for tp, off := range start {
		t := tp.Topic
		o := kafka.Offset(off)
		switch OffsetSpec(off) {
		case Earliest:
			o = kafka.OffsetBeginning
		case Latest:
			o = kafka.OffsetEnd
		}
		parts = append(parts, kafka.TopicPartition{Topic: &t, Partition: tp.Partition, Offset: o})
	}
	knowLeaders(c.c, parts)
	if err := c.c.Assign(parts); err != nil {
		return fmt.Errorf("%s: assign: %w", c.name, err)
	}
	return nil
}

// LeaderWait bounds knowLeaders' metadata request: what a logical offset would cost otherwise.
const LeaderWait = 500 * time.Millisecond

// knowLeaders asks for the metadata of the topics of tps when one of them starts at a logical
// offset (beginning, end, stored): librdkafka looks a logical offset up at the partition's
// leader and, when the client does not know the leader yet (a new client), schedules that
// lookup 500 ms later instead (rd_kafka_toppar_offset_request), which was most of a fresh
// flow's time to its first record and of each state and progress topic read at start
// (measured: 500-510 ms to the first record, 5-20 ms with the leader known). One metadata
// request first, bounded by LeaderWait, lets the lookup go out at once. Best effort: an error
// leaves librdkafka's own retry.
func knowLeaders(c *kafka.Consumer, tps []kafka.TopicPartition) {
	var topic *string
	seen := map[string]bool{}
	logical := false
	for _, tp := range tps {
		logical = logical || tp.Offset < 0
		if tp.Topic != nil && !seen[*tp.Topic] {
			seen[*tp.Topic] = true
			topic = tp.Topic
		}
	}
	if !logical || len(seen) == 0 {
		return
	}
	if len(seen) > 1 {
		topic = nil // one request for all topics rather than one per topic
	}
	_, _ = c.GetMetadata(topic, len(seen) > 1, int(LeaderWait.Milliseconds()))
}

// Poll returns up to max records, waiting at most wait for the first one.
func (c *Consumer) Poll(ctx context.Context, max int, wait time.Duration) ([]Record, error) {
	var out []Record
	deadline := time.Now().Add(wait)
	for len(out) < max {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		ms := 0
		if len(out) == 0 {
			ms = int(time.Until(deadline).Milliseconds())
			if ms <= 0 {
				return out, nil
			}
			if ms > 100 {
				ms = 100
			}
		}
		ev := c.c.Poll(ms)
		switch e := ev.(type) {
		case nil:
			if len(out) > 0 {
				return out, nil
			}
		case *kafka.Message:
			if e.TopicPartition.Error != nil {
				return out, Classify(fmt.Errorf("%s: consume: %w", c.name, e.TopicPartition.Error))
			}
			r := Record{Topic: *e.TopicPartition.Topic, Partition: e.TopicPartition.Partition, Offset: int64(e.TopicPartition.Offset),
				Key: e.Key, Value: e.Value, Timestamp: e.Timestamp}
			if out == nil {
				out = make([]Record, 0, min(max, 256)) // not one allocation per doubling
			}
			if len(e.Headers) > 0 {
				r.Headers = make([]Header, len(e.Headers))
				for i, h := range e.Headers {
					r.Headers[i] = Header{Key: h.Key, Value: h.Value}
				}
			}
			out = append(out, r)
		case kafka.Error:
			if e.IsFatal() {
				return out, Classify(fmt.Errorf("%s: consumer: %w", c.name, e))
			}
			if c.problems != nil {
				c.problems(e)
			}
		}
	}
	return out, nil
}

// Subscribe joins the consumer group set by group.id and subscribes to topics.
func (c *Consumer) Subscribe(topics ...string) error {
	if err := c.c.SubscribeTopics(topics, nil); err != nil {
		return fmt.Errorf("%s: subscribe: %w", c.name, err)
	}
	return nil
}

// Commit commits the given offsets for the consumer's group.
func (c *Consumer) Commit(offsets map[TP]int64) error {
	parts := make([]kafka.TopicPartition, 0, len(offsets))
	for tp, off := range offsets {
		t := tp.Topic
		parts = append(parts, kafka.TopicPartition{Topic: &t, Partition: tp.Partition, Offset: kafka.Offset(off)})
	}
	if _, err := c.c.CommitOffsets(parts); err != nil {
		return Classify(fmt.Errorf("%s: commit: %w", c.name, err))
	}
	return nil
}
