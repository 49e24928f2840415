// Package mm2read reads MirrorMaker 2's internal topics from a Kafka cluster into kmm's pure
// stores: the offset syncs (`mm2-offset-syncs.<C>.internal`) into an offsetsync.Store, the
// checkpoints (`<S>.checkpoints.internal`) into a checkpoint.Store, and the resume positions of
// MM2's Connect offsets topic (`mm2-offsets.<S>.internal`), and kmm's own offset maps
// (`kmm-offset-map.<S>.internal`, pkg/offsetmap). It reads one partition (0,
// where MM2 writes both) from its earliest offset up to the end offset seen when reading
// starts, as MM2's KafkaBasedLog read-to-end does, through the cluster seam (pkg/cluster).
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
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/offsetsync"
)

// ErrNoTopic is returned (wrapped) when the topic does not exist.
var ErrNoTopic = cluster.ErrNoTopic

// DefaultIdle is how long a read waits without any record, short of the end offset, before it
// concludes that the remaining offsets hold no readable record.
const DefaultIdle = cluster.DefaultIdle

// Reader is an offsetsync.Iterator over one partition of a topic, up to the end offset seen when
// it was opened (a cluster.PartitionReader yielding offsetsync records).
type Reader struct{ *cluster.PartitionReader }

// Open starts reading topic[partition] of cluster c from its earliest offset.
func Open(ctx context.Context, c cluster.Cluster, topic string, partition int32) (*Reader, error) {
	r, err := cluster.OpenPartition(ctx, c, topic, partition)
	if err != nil {
		return nil, err
	}
	return &Reader{r}, nil
}

// Next implements offsetsync.Iterator.
func (r *Reader) Next(ctx context.Context) (offsetsync.Record, bool, error) {
	rec, ok, err := r.PartitionReader.Next(ctx)
	if !ok || err != nil {
		return offsetsync.Record{}, ok, err
	}
	return offsetsync.Record{Offset: rec.Offset, Key: rec.Key, Value: rec.Value, Timestamp: rec.Timestamp}, true, nil
}

// LoadOffsetSyncs rebuilds s from the offset-syncs topic (partition 0) and marks it loaded.
func LoadOffsetSyncs(ctx context.Context, c cluster.Cluster, topic string, s *offsetsync.Store) (offsetsync.LoadStats, error) {
	r, err := Open(ctx, c, topic, 0)
	if err != nil {
		return offsetsync.LoadStats{LastOffset: -1}, err
	}
	defer r.Close()
	return offsetsync.Load(ctx, r, s)
}

// ErrSideDown is returned by LoadFlowOffsetSyncs when the cluster that keeps the flow's offset
// syncs was not given (it is down).
var ErrSideDown = errors.New("the cluster that keeps the offset syncs is not readable")

// LoadFlowOffsetSyncs rebuilds s from flow f's offset syncs, read where the flow keeps them
// (f.OffsetSyncs: its source, or its target with offset-syncs.topic.location = target). src or
// tgt may be nil when that side is down; if it is the side that keeps them: ErrSideDown. A
// missing topic is ErrNoTopic, as for LoadOffsetSyncs.
func LoadFlowOffsetSyncs(ctx context.Context, f *flow.Flow, src, tgt cluster.Cluster, s *offsetsync.Store) (offsetsync.LoadStats, error) {
	side, topic := f.OffsetSyncs()
	c := src
	if side == flow.Target {
		c = tgt
	}
	if c == nil {
		return offsetsync.LoadStats{LastOffset: -1}, fmt.Errorf("%w (%s, %s)", ErrSideDown, f.Alias(side), topic)
	}
	return LoadOffsetSyncs(ctx, c, topic, s)
}

// LoadCheckpoints fills s// LoadCheckpoints fills s from the checkpoints topic (partition 0) and marks it loaded. keep,
// if not nil, limits the groups kept.
func LoadCheckpoints(ctx context.Context, c cluster.Cluster, topic string, s *checkpoint.Store, keep func(group string) bool) (checkpoint.LoadStats, error) {
	r, err := Open(ctx, c, topic, 0)
	if err != nil {
		return checkpoint.LoadStats{LastOffset: -1}, err
	}
	defer r.Close()
	return checkpoint.Load(ctx, r, s, keep)
}

// ReadSourcePositions reads MM2's Connect offsets topic on cluster a and returns, for source
// cluster alias, the last replicated offset per source topic-partition.
func ReadSourcePositions(ctx context.Context, a cluster.Cluster, topic, alias string) (map[cluster.TP]int64, error) {
	at, err := ReadSourcePositionsAt(ctx, a, topic, alias)
	if err != nil {
		return nil, err
	}
	out := make(map[cluster.TP]int64, len(at))
	for tp, p := range at {
		out[tp] = p.Offset
	}
	return out, nil
}

// StoredPosition is a last replicated offset and the timestamp of the record that stored it.
type StoredPosition struct {
	Offset int64
	At     time.Time
}

// ReadSourcePositionsAt is ReadSourcePositions with the time each position was stored.
func ReadSourcePositionsAt(ctx context.Context, a cluster.Cluster, topic, alias string) (map[cluster.TP]StoredPosition, error) {
	ts, err := a.ListTopics(ctx)
	if err != nil {
		return nil, err
	}
	n := ts[topic].Partitions
	out := map[cluster.TP]StoredPosition{}
	if n == 0 {
		return out, nil
	}
	var tps []cluster.TP
	for p := 0; p < n; p++ {
		tps = append(tps, cluster.TP{Topic: topic, Partition: int32(p)})
	}
	ends, err := a.ListOffsets(ctx, tps, cluster.Latest)
	if err != nil {
		return nil, err
	}
	starts, err := a.ListOffsets(ctx, tps, cluster.Earliest)
	if err != nil {
		return nil, err
	}
	start := map[cluster.TP]int64{}
	remaining := 0
	for _, tp := range tps {
		if ends[tp].Offset > starts[tp].Offset {
			start[tp] = int64(cluster.Earliest)
			remaining++
		}
	}
	if remaining == 0 {
		return out, nil
	}
	c, err := a.NewReader()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := c.Assign(start); err != nil {
		return nil, err
	}
	pos := map[cluster.TP]int64{}
	deadline := time.Now().Add(2 * time.Minute)
	quietSince := time.Now()
	for remaining > 0 {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("reading %s: not at the end after 2 minutes", topic)
		}
		recs, err := c.Poll(ctx, 5000, 500*time.Millisecond)
		if err != nil {
			return nil, err
		}
		// The last offsets of a partition written in transactions (exactly-once: kmm's or MM2's
		// pipelines) hold a commit marker, which no consumer receives: stop waiting for them
		// after cluster.DefaultIdle without any record (the PartitionReader's rule).
		if len(recs) > 0 {
			quietSince = time.Now()
		} else if time.Since(quietSince) >= cluster.DefaultIdle {
			break
		}
		for _, r := range recs {
			tp := cluster.TP{Topic: r.Topic, Partition: r.Partition}
			if r.Offset+1 >= ends[tp].Offset && pos[tp] < ends[tp].Offset {
				remaining--
			}
			pos[tp] = r.Offset + 1
			k, err := mm2wire.DecodeSourceOffsetKey(r.Key)
			if err != nil || k.Connector != mm2wire.SourceConnectorName || k.Cluster != alias {
				continue
			}
			src := cluster.TP{Topic: k.Topic, Partition: k.Partition}
			if r.Value == nil {
				delete(out, src)
				continue
			}
			off, ok, err := mm2wire.DecodeOffsetValue(r.Value)
			if err != nil || !ok {
				continue
			}
			out[src] = StoredPosition{Offset: off, At: r.Timestamp}
		}
	}
	return out, nil
}
