package replicator

import (
	"context"
	"fmt"
	"time"

	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// Exactly-once mode (flow.ExactlyOnce; docs/mm2-compat.md, "Exactly-once"). Each pipeline's
// transactional producer writes the records and their progress records in
// mm2-offsets.<S>.internal in one transaction (rdkafka's txn.go); the engine then:
//   - never stores progress itself (the progress writer only makes sure the topic exists);
//   - loads the resume positions with read_committed, after every pipeline registered its
//     transactional.id (which aborts what a killed predecessor left open);
//   - writes offset syncs only for committed records: the acknowledgements of the open
//     transaction wait in pstate.txnAcks until Committed, and are dropped by Aborted.

// txnAck is an acknowledged record of the open transaction: source and target offsets.
type txnAck struct{ up, down int64 }

// progressRecord is the record that stores last (the last source offset done) of p in the
// flow's offsets topic: MM2's key and value, murmur2-partitioned, as progressWriter.store writes.
func (e *engine) progressRecord(p *rdkafka.CopyPart, last int64) (string, int32, []byte, []byte) {
	f := e.flow
	key := mm2wire.SourceOffsetKey{Connector: SourceConnectorName, Cluster: f.SourceAlias, Topic: p.SrcTopic, Partition: p.Partition}.AppendJSON(nil)
	return f.OffsetsTopic, mm2wire.PartitionForKey(key, e.progress.partitions), key, mm2wire.AppendOffsetValue(nil, last)
}

// enableTransactions registers copier i's transactional.id (registerTimeout at most).
func (e *engine) enableTransactions(ctx context.Context, c *rdkafka.Copier) error {
	ctx, cancel := context.WithTimeout(ctx, registerTimeout)
	defer cancel()
	return c.EnableTransactions(ctx, rdkafka.TxnConfig{Interval: e.flow.TransactionInterval, Progress: e.progressRecord})
}

// registerTimeout bounds InitTransactions: it waits for the coordinator to abort the open
// transaction of the fenced producer.
const registerTimeout = 2 * time.Minute

// loadCommitted reads the committed resume positions of the flow (read_committed), after the
// pipelines fenced their predecessors: what a killed kmm or MM2 left uncommitted is aborted by
// then, so the read reaches the end.
func (e *engine) loadCommitted(ctx context.Context) (map[rdkafka.TP]int64, error) {
	f := e.flow
	out := map[rdkafka.TP]int64{}
	err := e.tgt.ReadCommittedToEnd(ctx, f.OffsetsTopic, registerTimeout, func(r rdkafka.Record) {
		k, err := mm2wire.DecodeSourceOffsetKey(r.Key)
		if err != nil || k.Connector != mm2wire.SourceConnectorName || k.Cluster != f.SourceAlias {
			return
		}
		tp := rdkafka.TP{Topic: k.Topic, Partition: k.Partition}
		if r.Value == nil {
			delete(out, tp)
			return
		}
		if off, ok, err := mm2wire.DecodeOffsetValue(r.Value); err == nil && ok {
			out[tp] = off
		}
	})
	if err != nil {
		return nil, fmt.Errorf("reading the committed positions in %s on %s: %w", f.OffsetsTopic, f.Target, err)
	}
	return out, nil
}

// Committed (rdkafka.TxnHandler) runs on a copier's delivery goroutine after a commit: the
// committed records get their offset syncs (MM2 writes them in commitRecord, which Connect calls
// for an exactly-once task only once the transaction is committed) and the positions count as
// stored.
func (e *engine) Committed(parts []*rdkafka.CopyPart, pos []int64) {
	for i, p := range parts {
		ps := p.State.(*pstate)
		keep := ps.txnAcks[:0]
		for _, a := range ps.txnAcks {
			if a.up > pos[i] {
				keep = append(keep, a)
				continue
			}
			ps.mapAdd(a.up, a.down, 1)
			if e.syncs != nil {
				e.syncs.onAck(ps, a.up, a.down)
			}
		}
		ps.txnAcks = keep
		if pos[i] > ps.stored.Load() {
			ps.stored.Store(pos[i])
		}
	}
}

// Aborted (rdkafka.TxnHandler) runs on a copier's delivery goroutine after an abort: the
// acknowledgements past the committed positions are void (those records are copied again).
func (e *engine) Aborted(parts []*rdkafka.CopyPart, pos []int64) {
	for i, p := range parts {
		ps := p.State.(*pstate)
		keep := ps.txnAcks[:0]
		var void int64
		for _, a := range ps.txnAcks {
			if a.up > pos[i] {
				void++
				continue
			}
			keep = append(keep, a)
		}
		ps.txnAcks = keep
		ps.records.Add(-void)
		if ps.acked.Load() > pos[i] {
			ps.acked.Store(pos[i])
		}
	}
}
