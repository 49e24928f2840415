// Package mm2read reads MirrorMaker 2's internal topics from a Kafka cluster into kmm's pure
// stores: the offset syncs (`mm2-offset-syncs.<C>.internal`) into an offsetsync.Store, the
// checkpoints (`<S>.checkpoints.internal`) into a checkpoint.Store, and the resume positions of
// MM2's Connect offsets topic (`mm2-offsets.<S>.internal`). It reads one partition (0,
// where MM2 writes both) from its earliest offset up to the end offset seen when reading
// starts, as MM2's KafkaBasedLog read-to-end does, through pkg/rdkafka.
//
// It owns only the reading: records are interpreted by packages offsetsync and checkpoint. It
// must not write to Kafka, log, or decide what to do with a missing topic (it returns
// ErrNoTopic).
package mm2read

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kmmproject/kmm/pkg/checkpoint"
	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/offsetsync"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// ErrNoTopic is returned (wrapped) when the topic does not exist.
var ErrNoTopic = errors.New("topic does not exist")

// DefaultIdle is how long a read waits without any record, short of the end offset, before it
// concludes that the remaining offsets hold no readable record (transaction markers, or
// aborted records when reading committed data).
const DefaultIdle = 5 * time.Second

// Reader is an offsetsync.Iterator over one partition of a topic, up to the end offset seen when
// it was opened.
type Reader struct {
	c         *rdkafka.Consumer
	topic     string
	partition int32
	start     int64
	end       int64
	last      int64
	buf       []rdkafka.Record
	done      bool
	// Idle overrides DefaultIdle.
	Idle time.Duration
	// StoppedIdle is set when the read ended by the idle rule rather than at the end offset.
	StoppedIdle bool
}

// Open starts reading topic[partition] from its earliest offset. admin is a client of the
// cluster holding the topic; consumer is the librdkafka configuration for reading it (the
// same cluster).
func Open(ctx context.Context, admin *rdkafka.Admin, consumer rdkafka.Config, topic string, partition int32) (*Reader, error) {
	ts, err := admin.ListTopics(ctx)
	if err != nil {
		return nil, err
	}
	info, ok := ts[topic]
	if !ok {
		return nil, fmt.Errorf("%s: %s: %w", admin.Name(), topic, ErrNoTopic)
	}
	if int(partition) >= info.Partitions {
		return nil, fmt.Errorf("%s: %s has %d partition(s), no partition %d", admin.Name(), topic, info.Partitions, partition)
	}
	tp := rdkafka.TP{Topic: topic, Partition: partition}
	ends, err := admin.ListOffsets(ctx, []rdkafka.TP{tp}, rdkafka.Latest)
	if err != nil {
		return nil, err
	}
	starts, err := admin.ListOffsets(ctx, []rdkafka.TP{tp}, rdkafka.Earliest)
	if err != nil {
		return nil, err
	}
	r := &Reader{topic: topic, partition: partition, start: starts[tp].Offset, end: ends[tp].Offset, last: -1}
	if r.end <= r.start {
		r.done = true
		return r, nil
	}
	cfg := rdkafka.Config{}
	for k, v := range consumer {
		cfg[k] = v
	}
	c, err := rdkafka.NewConsumer(admin.Name(), cfg)
	if err != nil {
		return nil, err
	}
	if err := c.Assign(map[rdkafka.TP]int64{tp: int64(rdkafka.Earliest)}); err != nil {
		c.Close()
		return nil, err
	}
	r.c = c
	return r, nil
}

// End is the end offset the read stops at.
func (r *Reader) End() int64 { return r.end }

// Next implements offsetsync.Iterator.
func (r *Reader) Next(ctx context.Context) (offsetsync.Record, bool, error) {
	idle := r.Idle
	if idle <= 0 {
		idle = DefaultIdle
	}
	quietSince := time.Now()
	for len(r.buf) == 0 {
		if r.done {
			return offsetsync.Record{}, false, nil
		}
		recs, err := r.c.Poll(ctx, 2000, 200*time.Millisecond)
		if err != nil {
			return offsetsync.Record{}, false, fmt.Errorf("reading %s[%d]: %w", r.topic, r.partition, err)
		}
		for _, rec := range recs {
			if rec.Topic != r.topic || rec.Partition != r.partition || rec.Offset >= r.end || rec.Offset <= r.last {
				continue
			}
			r.buf = append(r.buf, rec)
			r.last = rec.Offset
		}
		if r.last >= r.end-1 {
			r.done = true
		}
		if len(recs) > 0 {
			quietSince = time.Now()
		} else if time.Since(quietSince) >= idle {
			r.done, r.StoppedIdle = true, true
		}
	}
	rec := r.buf[0]
	r.buf = r.buf[1:]
	return offsetsync.Record{Offset: rec.Offset, Key: rec.Key, Value: rec.Value, Timestamp: rec.Timestamp}, true, nil
}

// Close releases the consumer.
func (r *Reader) Close() {
	if r.c != nil {
		r.c.Close()
		r.c = nil
	}
}

// LoadOffsetSyncs rebuilds s from the offset-syncs topic (partition 0) and marks it loaded.
func LoadOffsetSyncs(ctx context.Context, admin *rdkafka.Admin, consumer rdkafka.Config, topic string, s *offsetsync.Store) (offsetsync.LoadStats, error) {
	r, err := Open(ctx, admin, consumer, topic, 0)
	if err != nil {
		return offsetsync.LoadStats{LastOffset: -1}, err
	}
	defer r.Close()
	return offsetsync.Load(ctx, r, s)
}

// LoadCheckpoints fills s from the checkpoints topic (partition 0) and marks it loaded. keep,
// if not nil, limits the groups kept.
func LoadCheckpoints(ctx context.Context, admin *rdkafka.Admin, consumer rdkafka.Config, topic string, s *checkpoint.Store, keep func(group string) bool) (checkpoint.LoadStats, error) {
	r, err := Open(ctx, admin, consumer, topic, 0)
	if err != nil {
		return checkpoint.LoadStats{LastOffset: -1}, err
	}
	defer r.Close()
	return checkpoint.Load(ctx, r, s, keep)
}

// ReadSourcePositions reads MM2's Connect offsets topic and returns, for source cluster alias
// cluster, the last replicated offset per source topic-partition.
func ReadSourcePositions(ctx context.Context, a *rdkafka.Admin, consumer rdkafka.Config, topic, cluster string) (map[rdkafka.TP]int64, error) {
	ts, err := a.ListTopics(ctx)
	if err != nil {
		return nil, err
	}
	n := ts[topic].Partitions
	out := map[rdkafka.TP]int64{}
	if n == 0 {
		return out, nil
	}
	var tps []rdkafka.TP
	for p := 0; p < n; p++ {
		tps = append(tps, rdkafka.TP{Topic: topic, Partition: int32(p)})
	}
	ends, err := a.ListOffsets(ctx, tps, rdkafka.Latest)
	if err != nil {
		return nil, err
	}
	starts, err := a.ListOffsets(ctx, tps, rdkafka.Earliest)
	if err != nil {
		return nil, err
	}
	start := map[rdkafka.TP]int64{}
	remaining := 0
	for _, tp := range tps {
		if ends[tp].Offset > starts[tp].Offset {
			start[tp] = int64(rdkafka.Earliest)
			remaining++
		}
	}
	if remaining == 0 {
		return out, nil
	}
	c, err := rdkafka.NewConsumer("cluster "+a.Name(), consumer)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := c.Assign(start); err != nil {
		return nil, err
	}
	pos := map[rdkafka.TP]int64{}
	deadline := time.Now().Add(2 * time.Minute)
	for remaining > 0 {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("reading %s: not at the end after 2 minutes", topic)
		}
		recs, err := c.Poll(ctx, 5000, 500*time.Millisecond)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			tp := rdkafka.TP{Topic: r.Topic, Partition: r.Partition}
			if r.Offset+1 >= ends[tp].Offset && pos[tp] < ends[tp].Offset {
				remaining--
			}
			pos[tp] = r.Offset + 1
			k, err := mm2wire.DecodeSourceOffsetKey(r.Key)
			if err != nil || k.Connector != mm2wire.SourceConnectorName || k.Cluster != cluster {
				continue
			}
			src := rdkafka.TP{Topic: k.Topic, Partition: k.Partition}
			if r.Value == nil {
				delete(out, src)
				continue
			}
			off, ok, err := mm2wire.DecodeOffsetValue(r.Value)
			if err != nil || !ok {
				continue
			}
			out[src] = off
		}
	}
	return out, nil
}
