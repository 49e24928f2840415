package replicator

import (
	"context"
	"fmt"
	"time"

	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// SourceConnectorName is the connector name MM2's dedicated mode uses in Connect offset keys.
const SourceConnectorName = "MirrorSourceConnector"

// progressWriter keeps the flow's resume positions in MM2's Connect offsets topic on the
// target (mm2-offsets.<S>.internal), byte-compatible with MM2 so either tool can resume the
// other's work. Records are partitioned with Java's murmur2, as Connect's producer does.
type progressWriter struct {
	e          *engine
	prod       *rdkafka.Producer
	partitions int32
}

func newProgressWriter(ctx context.Context, e *engine) (*progressWriter, error) {
	f := e.flow
	if _, err := ensureTopic(ctx, e.tgt, f.OffsetsTopic, f.OffsetsTopicPartitions, f.OffsetsTopicRF,
		map[string]string{"cleanup.policy": "compact"}, f.Target+".offset.storage.replication.factor"); err != nil {
		return nil, err
	}
	ts, err := e.tgt.ListTopics(ctx)
	if err != nil {
		return nil, err
	}
	cfg := rdkafka.Config{}
	for k, v := range f.TargetProducer {
		cfg[k] = v
	}
	cfg["enable.idempotence"] = "true"
	cfg["acks"] = "all"
	p, err := rdkafka.NewProducer("cluster "+f.Target, cfg)
	if err != nil {
		return nil, err
	}
	return &progressWriter{e: e, prod: p, partitions: int32(ts[f.OffsetsTopic].Partitions)}, nil
}

func (w *progressWriter) close() { w.prod.Close() }

// load reads the whole offsets topic and returns the stored last-replicated offset per source
// partition of this flow (records of other connectors and clusters are ignored; a null value
// deletes a position; later records win).
func (w *progressWriter) load(ctx context.Context) (map[rdkafka.TP]int64, error) {
	f := w.e.flow
	return ReadSourcePositions(ctx, w.e.tgt, f.TargetConsumer, f.OffsetsTopic, f.SourceAlias)
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
			if err != nil || k.Connector != SourceConnectorName || k.Cluster != cluster {
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

// store writes the acknowledged position of every partition that moved since the last store.
func (w *progressWriter) store(ctx context.Context, parts []*pstate) error {
	f := w.e.flow
	var recs []rdkafka.Record
	var moved []*pstate
	var acked []int64
	for _, ps := range parts {
		a := ps.acked.Load()
		if a < 0 || a == ps.stored.Load() {
			continue
		}
		key := mm2wire.SourceOffsetKey{Connector: SourceConnectorName, Cluster: f.SourceAlias, Topic: ps.p.SrcTopic, Partition: ps.p.Partition}.AppendJSON(nil)
		recs = append(recs, rdkafka.Record{Topic: f.OffsetsTopic, Partition: mm2wire.PartitionForKey(key, w.partitions),
			Key: key, Value: mm2wire.AppendOffsetValue(nil, a)})
		moved = append(moved, ps)
		acked = append(acked, a)
	}
	if len(recs) == 0 {
		return nil
	}
	if _, err := w.prod.ProduceSync(ctx, recs); err != nil {
		return err
	}
	for i, ps := range moved {
		ps.stored.Store(acked[i])
	}
	return nil
}
