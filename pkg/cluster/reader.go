package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrNoTopic is returned (wrapped) when the topic does not exist.
var ErrNoTopic = errors.New("topic does not exist")

// DefaultIdle is how long a read waits without any record, short of the end offset, before it
// concludes that the remaining offsets hold no readable record (transaction markers, or
// aborted records when reading committed data).
const DefaultIdle = 5 * time.Second

// PartitionReader reads one partition of a topic from its earliest offset up to the end offset
// seen when it was opened, as Kafka Connect's KafkaBasedLog read-to-end does: kmm's and MM2's
// internal topics (offset syncs, checkpoints, the kmm state journal).
type PartitionReader struct {
	c         Reader
	topic     string
	partition int32
	start     int64
	end       int64
	last      int64
	buf       []Record
	done      bool
	// Idle overrides DefaultIdle.
	Idle time.Duration
	// StoppedIdle is set when the read ended by the idle rule rather than at the end offset.
	StoppedIdle bool
}

// OpenPartition starts reading topic[partition] of cluster admin from its earliest offset. A
// missing topic is ErrNoTopic (wrapped).
func OpenPartition(ctx context.Context, admin Cluster, topic string, partition int32) (*PartitionReader, error) {
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
	tp := TP{Topic: topic, Partition: partition}
	ends, err := admin.ListOffsets(ctx, []TP{tp}, Latest)
	if err != nil {
		return nil, err
	}
	starts, err := admin.ListOffsets(ctx, []TP{tp}, Earliest)
	if err != nil {
		return nil, err
	}
	r := &PartitionReader{topic: topic, partition: partition, start: starts[tp].Offset, end: ends[tp].Offset, last: -1}
	if r.end <= r.start {
		r.done = true
		return r, nil
	}
	c, err := admin.NewReader()
	if err != nil {
		return nil, err
	}
	if err := c.Assign(map[TP]int64{tp: int64(Earliest)}); err != nil {
		c.Close()
		return nil, err
	}
	r.c = c
	return r, nil
}

// End is the end offset the read stops at.
func (r *PartitionReader) End() int64 { return r.end }

// Next returns the next record; ok is false at the end.
func (r *PartitionReader) Next(ctx context.Context) (Record, bool, error) {
	idle := r.Idle
	if idle <= 0 {
		idle = DefaultIdle
	}
	quietSince := time.Now()
	for len(r.buf) == 0 {
		if r.done {
			return Record{}, false, nil
		}
		recs, err := r.c.Poll(ctx, 2000, 200*time.Millisecond)
		if err != nil {
			return Record{}, false, fmt.Errorf("reading %s[%d]: %w", r.topic, r.partition, err)
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
	return rec, true, nil
}

// Close releases the consumer.
func (r *PartitionReader) Close() {
	if r.c != nil {
		r.c.Close()
		r.c = nil
	}
}

// Timestamps reads the first record at or after each given offset and returns its timestamp
// (ms since the epoch); partitions with nothing to read within 5 s are left out. Lag uses it
// for the age of the oldest record not yet replicated.
func Timestamps(ctx context.Context, c Cluster, at map[TP]int64) map[TP]int64 {
	out := map[TP]int64{}
	if len(at) == 0 {
		return out
	}
	r, err := c.NewReader()
	if err != nil {
		return out
	}
	defer r.Close()
	if err := r.Assign(at); err != nil {
		return out
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(out) < len(at) && time.Now().Before(deadline) {
		recs, err := r.Poll(ctx, 1000, 500*time.Millisecond)
		if err != nil {
			return out
		}
		for _, rec := range recs {
			tp := TP{Topic: rec.Topic, Partition: rec.Partition}
			if _, seen := out[tp]; !seen {
				out[tp] = rec.Timestamp.UnixMilli()
			}
		}
	}
	return out
}
