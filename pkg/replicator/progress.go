package replicator

import (
	"context"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/mm2read"
	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/offsetmap"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// SourceConnectorName is the connector name MM2's dedicated mode uses in Connect offset keys.
const SourceConnectorName = mm2wire.SourceConnectorName

// progressWriter keeps the flow's resume positions in MM2's Connect offsets topic on the
// target (mm2-offsets.<S>.internal), byte-compatible with MM2 so either tool can resume the
// other's work. Records are partitioned with Java's murmur2, as Connect's producer does.
type progressWriter struct {
	e          *engine
	prod       *rdkafka.Producer
	partitions int32
	// created: the offsets topic did not exist and this writer created it (a first start):
	// nothing to load.
	created bool
	// mapCreated: the same for the offset-map topic.
	mapCreated bool
	// mapOff: kmm.offset.map.enabled = false: no map is written, and the maps an earlier run
	// stored (mapTopic: the topic exists) are deleted at start, so no stale map translates.
	mapOff, mapTopic bool
}

func newProgressWriter(ctx context.Context, e *engine) (*progressWriter, error) {
	f := e.flow
	created, err := cluster.EnsureTopic(ctx, e.tgt, cluster.NewTopic{Name: f.OffsetsTopic, Partitions: f.OffsetsTopicPartitions, RF: f.OffsetsTopicRF,
		Configs: map[string]string{"cleanup.policy": "compact"}}, f.Target+".offset.storage.replication.factor")
	if err != nil {
		return nil, err
	}
	// The offset maps live beside the progress, on the target, with the same replication factor.
	mapCreated := false
	if !f.NoOffsetMap {
		if mapCreated, err = cluster.EnsureTopic(ctx, e.tgt, cluster.NewTopic{Name: f.OffsetMapTopic(), Partitions: 1, RF: f.OffsetsTopicRF,
			Configs: map[string]string{"cleanup.policy": "compact"}}, f.Target+".offset.storage.replication.factor"); err != nil {
			return nil, err
		}
	}
	ts, err := e.tgt.ListTopics(ctx)
	if err != nil {
		return nil, err
	}
	p, err := rdkafka.NewProducer("cluster "+f.Target, f.ReplicationProducer(), e.clientOpts(e.tgtW))
	if err != nil {
		return nil, err
	}
	_, mapTopic := ts[f.OffsetMapTopic()]
	return &progressWriter{e: e, prod: p, partitions: int32(ts[f.OffsetsTopic].Partitions), created: created, mapCreated: mapCreated,
		mapOff: f.NoOffsetMap, mapTopic: mapTopic}, nil
}

// close discards what is still queued (the drain stored what it could) and closes.
func (w *progressWriter) close() { w.prod.CloseWithin(0) }

// busy reports whether an earlier store's records are still queued (the target did not
// acknowledge them in time); a new store then waits, so an outage queues nothing more.
func (w *progressWriter) busy() bool { return w.prod.Len() > 0 }

// load reads the whole offsets topic and returns the stored last-replicated offset per source
// partition of this flow (records of other connectors and clusters are ignored; a null value
// deletes a position; later records win).
func (w *progressWriter) load(ctx context.Context) (map[rdkafka.TP]int64, error) {
	f := w.e.flow
	if w.created {
		// Just created: empty. (Reading it would wait for its new partitions' leaders: 0.4-1 s
		// of a first start.)
		return map[rdkafka.TP]int64{}, nil
	}
	return mm2read.ReadSourcePositions(ctx, w.e.tgt, f.OffsetsTopic, f.SourceAlias)
}

// loadMaps reads the flow's offset maps stored on the target (pkg/offsetmap).
// With the map off, the maps an earlier run stored for this flow are deleted (tombstones):
// a map that stopped growing would translate later positions as if nothing had been copied
// since, and the readers (translate-offsets, failover) prefer a map to the offset syncs.
func (w *progressWriter) loadMaps(ctx context.Context) (map[rdkafka.TP]*offsetmap.Map, error) {
	if w.mapCreated || (w.mapOff && !w.mapTopic) {
		return map[rdkafka.TP]*offsetmap.Map{}, nil
	}
	maps, err := mm2read.ReadOffsetMaps(ctx, w.e.tgt, w.e.flow.OffsetMapTopic())
	if err != nil || !w.mapOff {
		return maps, err
	}
	var tombs []rdkafka.Record
	for tp := range maps {
		tombs = append(tombs, rdkafka.Record{Topic: w.e.flow.OffsetMapTopic(), Partition: 0, Key: offsetmap.Key(tp.Topic, tp.Partition)})
	}
	if len(tombs) > 0 {
		if _, err := w.prod.ProduceSync(ctx, tombs); err != nil {
			return nil, err
		}
	}
	return map[rdkafka.TP]*offsetmap.Map{}, nil
}

// mapRecords are the offset-map records of the partitions whose map grew since it was last
// written, and the positions they are written at (for mapsStored).
func (w *progressWriter) mapRecords(parts []*pstate) ([]rdkafka.Record, []*pstate, []int64) {
	if w.mapOff {
		return nil, nil, nil
	}
	topic := w.e.flow.OffsetMapTopic()
	var recs []rdkafka.Record
	var moved []*pstate
	var at []int64
	for _, ps := range parts {
		m, last := ps.mapNow()
		if last < 0 || last == ps.omapStored.Load() {
			continue
		}
		recs = append(recs, rdkafka.Record{Topic: topic, Partition: 0, Key: offsetmap.Key(ps.p.SrcTopic, ps.p.Partition), Value: offsetmap.Encode(m)})
		moved = append(moved, ps)
		at = append(at, last)
	}
	return recs, moved, at
}

// storeMaps writes the offset maps that grew (exactly-once flows, whose progress the
// pipelines write in their transactions; the other flows write both in store).
func (w *progressWriter) storeMaps(ctx context.Context, parts []*pstate) error {
	recs, moved, at := w.mapRecords(parts)
	if len(recs) == 0 {
		return nil
	}
	if _, err := w.prod.ProduceSync(ctx, recs); err != nil {
		return err
	}
	for i, ps := range moved {
		ps.omapStored.Store(at[i])
	}
	return nil
}

// store writes the acknowledged position of every partition that moved since the last store,
// and the offset maps that grew, in one batch: a map record covers at least the position stored
// with it (were one of the two refused, translation meets target records the stored map does
// not account for, and counts them: it never skips).
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
	// The maps are read after the positions: each covers at least the position stored with it
	// (a record is mapped before its acknowledgement moves acked).
	mapRecs, mapMoved, mapAt := w.mapRecords(parts)
	recs = append(mapRecs, recs...)
	if len(recs) == 0 {
		return nil
	}
	if _, err := w.prod.ProduceSync(ctx, recs); err != nil {
		return err
	}
	for i, ps := range moved {
		ps.stored.Store(acked[i])
	}
	for i, ps := range mapMoved {
		ps.omapStored.Store(mapAt[i])
	}
	return nil
}
