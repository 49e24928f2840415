package replicator

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// heartbeater emits MM2 heartbeats for the pair (S,T) into T's heartbeats topic, one record
// every emit.heartbeats.interval.seconds, keyed (S,T) so compaction keeps one per pair.
type heartbeater struct {
	e      *engine
	prod   *rdkafka.Producer
	topic  string
	cancel context.CancelFunc
	done   chan struct{}
	count  atomic.Int64
	lastMs atomic.Int64
}

func newHeartbeater(ctx context.Context, e *engine) (*heartbeater, error) {
	f := e.flow
	topic := f.Policy.HeartbeatsTopic()
	if _, err := cluster.EnsureTopic(ctx, e.tgt, cluster.NewTopic{Name: topic, Partitions: 1, RF: f.HeartbeatsRF, Configs: map[string]string{"cleanup.policy": "compact"}}, "heartbeats.topic.replication.factor"); err != nil {
		return nil, err
	}
	p, err := rdkafka.NewProducer("cluster "+f.Target, f.TargetProducer, e.clientOpts(e.tgtW))
	if err != nil {
		return nil, err
	}
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	h := &heartbeater{e: e, prod: p, topic: topic, cancel: cancel, done: make(chan struct{})}
	go h.run(hctx)
	return h, nil
}

func (h *heartbeater) run(ctx context.Context) {
	defer close(h.done)
	f := h.e.flow
	t := time.NewTicker(f.HeartbeatInterval)
	defer t.Stop()
	for {
		now := time.Now()
		hb := mm2wire.Heartbeat{SourceClusterAlias: f.SourceAlias, TargetClusterAlias: f.TargetAlias, Timestamp: now.UnixMilli()}
		key, err := hb.AppendKey(nil)
		// While the previous heartbeat is still queued (the target is slow or away), queue
		// nothing more behind it.
		// Workers: only the leader emits them.
		if err == nil && h.prod.Len() == 0 && h.e.leads() {
			sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			_, err = h.prod.ProduceSync(sctx, []rdkafka.Record{{Topic: h.topic, Partition: 0, Key: key, Value: hb.AppendValue(nil), Timestamp: time.UnixMilli(hb.Timestamp)}})
			cancel()
			if err == nil {
				h.count.Add(1)
				h.lastMs.Store(hb.Timestamp)
			}
		}
		if err != nil && ctx.Err() == nil {
			h.e.warnLimited("heartbeat", err, fmt.Sprintf("heartbeat to %s on %s: %v", h.topic, f.Target, err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (h *heartbeater) close() {
	h.cancel()
	<-h.done
	h.prod.CloseWithin(0)
}
