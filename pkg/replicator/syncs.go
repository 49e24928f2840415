package replicator

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// syncWriter emits offset syncs with MM2's rules (3.7+ OffsetSyncWriter): a sync is due for the
// first record of a partition, when translation would lag by offset.lag.max or more, on a gap
// in source offsets, or when the target offset went backwards; other acknowledged positions are
// kept as "delayed" and promoted at every commit so quiet topics reach exact translation.
// Every due sync is written, in order (MM2 keeps only the newest pending one per partition,
// which can leave a restarted partition without its first sync), in batches of up to 64.
type syncWriter struct {
	e     *engine
	prod  *rdkafka.Producer
	topic string

	mu       sync.Mutex
	pending  map[*pstate][][2]int64 // every due sync is kept, in order (MM2 keeps only the newest)
	wake     chan struct{}
	stop     chan struct{}
	stopOnce sync.Once
	cancel   context.CancelFunc
	done     chan struct{}
}

func newSyncWriter(ctx context.Context, e *engine) (*syncWriter, error) {
	f := e.flow
	admin, pcfg := e.src, f.SourceProducer
	side, topic := f.OffsetSyncs()
	if side == flow.Target {
		admin, pcfg = e.tgt, f.TargetProducer
	}
	if _, err := cluster.EnsureTopic(ctx, admin, cluster.NewTopic{Name: topic, Partitions: 1, RF: f.OffsetSyncsRF, Configs: map[string]string{"cleanup.policy": "compact"}}, "offset-syncs.topic.replication.factor"); err != nil {
		return nil, err
	}
	cfg := rdkafka.Config{}
	for k, v := range pcfg {
		cfg[k] = v
	}
	cfg["acks"] = "all"
	p, err := rdkafka.NewProducer(admin.Name(), cfg, e.clientOpts(e.syncsWatch()))
	if err != nil {
		return nil, err
	}
	// The writer runs until the drain stops it (stopRun), not until ctx ends: records
	// acknowledged during the drain still get their syncs.
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w := &syncWriter{e: e, prod: p, topic: topic, pending: map[*pstate][][2]int64{}, cancel: cancel,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go w.run(rctx)
	return w, nil
}

// onAck runs on the delivery goroutine that owns ps.
func (w *syncWriter) onAck(ps *pstate, up, down int64) {
	lagMax := w.e.flow.OffsetLagMax
	// down <= prevDown also catches a target truncated by exactly its last record.
	due := !ps.syncStarted || down-(ps.lastSyncDown+1) >= lagMax || up-ps.prevUp != 1 || down <= ps.prevDown
	ps.syncStarted = true
	ps.prevUp, ps.prevDown = up, down
	if !due {
		ps.delayedUp, ps.delayedDown, ps.hasDelayed = up, down, true
		return
	}
	ps.lastSyncDown = down
	ps.hasDelayed = false
	w.queue(ps, up, down)
}

// onAckRun is onAck for a run of records whose offsets both advance by one from (up0, down0) to
// (up1, down1): the syncs N calls of onAck would queue, computed without visiting every record.
func (w *syncWriter) onAckRun(ps *pstate, up0, down0, up1, down1 int64) {
	w.onAck(ps, up0, down0)
	if up1 == up0 {
		return
	}
	lagMax := w.e.flow.OffsetLagMax
	for {
		// the first record after the previous one whose down-(lastSyncDown+1) >= lagMax
		next := ps.prevDown + 1
		if lagMax > 0 {
			if lagMax > down1-(ps.lastSyncDown+1) {
				break
			}
			next = max(next, ps.lastSyncDown+1+lagMax)
		}
		if next > down1 {
			break
		}
		up := up0 + (next - down0)
		ps.prevUp, ps.prevDown = up, next
		ps.lastSyncDown = next
		w.queue(ps, up, next)
	}
	ps.prevUp, ps.prevDown = up1, down1
	if ps.lastSyncDown == down1 {
		ps.hasDelayed = false
		return
	}
	ps.delayedUp, ps.delayedDown, ps.hasDelayed = up1, down1, true
}

// promote runs on the delivery goroutine that owns ps.
func (w *syncWriter) promote(ps *pstate) {
	if !ps.hasDelayed {
		return
	}
	ps.hasDelayed = false
	w.queue(ps, ps.delayedUp, ps.delayedDown)
}

func (w *syncWriter) queue(ps *pstate, up, down int64) {
	w.mu.Lock()
	w.pending[ps] = append(w.pending[ps], [2]int64{up, down})
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *syncWriter) run(ctx context.Context) {
	defer close(w.done)
	for {
		select {
		case <-w.stop:
			return
		case <-w.wake:
			w.flush(ctx)
		}
	}
}

// flush writes every pending sync.
func (w *syncWriter) flush(ctx context.Context) {
	w.mu.Lock()
	pend := w.pending
	w.pending = map[*pstate][][2]int64{}
	w.mu.Unlock()
	batch := make([]rdkafka.Record, 0, 1000) // a write per 1,000 syncs: 10,000 partitions start with 10,000 syncs
	var written []mm2wire.OffsetSync
	send := func() {
		if len(batch) == 0 {
			return
		}
		if _, err := w.prod.ProduceSync(ctx, batch); err != nil {
			if ctx.Err() == nil {
				w.e.warnLimited("offsetsync", err, fmt.Sprintf("writing offset syncs to %s: %v", w.topic, err))
			}
			written = written[:0]
		} else if w.e.ckpt != nil && !w.e.ckptStopped.Load() {
			w.e.ckpt.onSyncs(ctx, written)
		}
		w.e.syncCount.Add(int64(len(batch)))
		w.e.syncLastMs.Store(time.Now().UnixMilli())
		batch, written = batch[:0], written[:0]
	}
	for ps, list := range pend {
		for _, s := range list {
			os := mm2wire.OffsetSync{Topic: ps.p.SrcTopic, Partition: ps.p.Partition, UpstreamOffset: s[0], DownstreamOffset: s[1]}
			k, err := os.AppendKey(nil)
			if err != nil {
				w.e.warnLimited("offsetsync-key", err, fmt.Sprintf("offset sync for %s: %v", ps.p.SrcTopic, err))
				continue
			}
			batch = append(batch, rdkafka.Record{Topic: w.topic, Partition: 0, Key: k, Value: os.AppendValue(nil)})
			written = append(written, os)
			if len(batch) == cap(batch) {
				send()
			}
		}
	}
	send()
}

// stopRun ends the writer goroutine (a write in progress is cancelled: its records stay
// queued in the producer). Flushes after it are the caller's.
func (w *syncWriter) stopRun() {
	w.stopOnce.Do(func() {
		w.cancel()
		close(w.stop)
	})
	<-w.done
}

// pendingCount is the number of syncs due and not written (after a failed final flush).
func (w *syncWriter) pendingCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, l := range w.pending {
		n += len(l)
	}
	return n + w.prod.Len()
}

func (w *syncWriter) close() {
	w.stopRun()
	w.prod.CloseWithin(0)
}
