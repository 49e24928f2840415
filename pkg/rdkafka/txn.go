package rdkafka

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kmmproject/kmm/pkg/kerr"
)

// Exactly-once copying (exactly.once.source.support = enabled; docs/mm2-compat.md,
// "Exactly-once"). A transactional Copier writes the records it copies and, before each commit,
// one progress record per partition that moved (MM2's resume position, built by TxnConfig.Progress)
// with the same transactional producer, and commits them together every TxnConfig.Interval, as
// Connect's ExactlyOnceWorkerSourceTask does with its records and its offsets. A read_committed
// reader of the target sees a record if and only if the position past it is stored. On a failed
// transaction the copier aborts it and rewinds its consumer to the committed positions; a
// producer fenced by a newer one with the same transactional.id (a second kmm, or MM2) stops the
// copier with an error that says so. Only the Go data plane has it (NewCopier falls back to Go
// when the producer settings carry a transactional.id).

// ErrTxnAborted marks the warning a transactional Copier gives its handler (Warn) when it
// aborted a transaction and rewound.
var ErrTxnAborted = errors.New("transaction aborted")

// TxnConfig turns a Copier exactly-once (EnableTransactions).
type TxnConfig struct {
	// Interval is how often the open transaction is committed.
	Interval time.Duration
	// Progress returns the record storing last, the last source offset of p done (copied, or
	// skipped: an echo, a tail without records), in the target's resume-position topic.
	Progress func(p *CopyPart, last int64) (topic string, partition int32, key, value []byte)
}

// TxnHandler is the part of a CopyHandler a transactional Copier needs: both run on the delivery
// goroutine. Committed comes after every Acked of the committed records; pos[i] is the last
// source offset of parts[i] now committed. Aborted says that every record of parts[i] after pos[i]
// was aborted (its Acked, if any, does not count) and is copied again (pos[i] -1: none committed).
type TxnHandler interface {
	Committed(parts []*CopyPart, pos []int64)
	Aborted(parts []*CopyPart, pos []int64)
}

// txnState is a transactional Copier's own state; the consumer goroutine owns it except failed.
type txnState struct {
	id         string
	cfg        TxnConfig
	h          TxnHandler
	open       bool
	lastCommit time.Time
	// committing: a commit is in progress (timed out once); cParts and cPos are what it commits.
	committing bool
	cParts     []*CopyPart
	cPos       []int64
	// failed is the first delivery failure of a record of the open transaction (delivery
	// goroutine): the transaction is aborted at its commit, and nothing after it is acknowledged.
	failed atomic.Pointer[error]
	// commits and aborts count transactions (metrics, tests); abortsInARow those since the last
	// commit (consumer goroutine).
	commits, aborts atomic.Int64
	abortsInARow    int
}

// TransactionalID is the copier's transactional.id ("" for an at-least-once copier).
func (c *Copier) TransactionalID() string {
	if c.txn == nil {
		return ""
	}
	return c.txn.id
}

// Transactions returns how many transactions the copier committed and aborted.
func (c *Copier) Transactions() (commits, aborts int64) {
	if c.txn == nil {
		return 0, 0
	}
	return c.txn.commits.Load(), c.txn.aborts.Load()
}

// EnableTransactions makes the copier exactly-once: its producer (created with a
// transactional.id in its settings) registers with the target's transaction coordinator, which
// fences any older producer with the same id and aborts its open transaction, then the copier
// commits as TxnConfig says. Call after NewCopier, before Add and Start. h must implement
// TxnHandler.
func (c *Copier) EnableTransactions(ctx context.Context, cfg TxnConfig) error {
	id := c.pcfg["transactional.id"]
	th, ok := c.h.(TxnHandler)
	switch {
	case id == "":
		return fmt.Errorf("%s: exactly-once needs a transactional.id in the producer settings", c.name)
	case c.prod == nil:
		return fmt.Errorf("%s: exactly-once runs on the Go data plane only", c.name)
	case !ok:
		return fmt.Errorf("%s: exactly-once needs a TxnHandler", c.name)
	case cfg.Interval <= 0 || cfg.Progress == nil:
		return fmt.Errorf("%s: exactly-once needs a commit interval and a progress record", c.name)
	}
	if err := c.prod.InitTransactions(ctx); err != nil {
		return Classify(fmt.Errorf("%s: registering transactional.id %s with %s's transaction coordinator: %w", c.name, id, orName(c.TargetCluster, "the target"), err))
	}
	c.txn = &txnState{id: id, cfg: cfg, h: th, lastCommit: time.Now()}
	return nil
}

// txnAdded initialises the transaction bookkeeping of a partition added at start (-1: none).
func txnAdded(p *CopyPart, start int64) {
	p.txnStart = start
	p.txnCommitted, p.txnDone = -1, -1
	if start >= 0 {
		p.txnCommitted, p.txnDone = start-1, start-1
	}
}

// txnBegin opens a transaction before the first record of one (consumer goroutine).
func (c *Copier) txnBegin() error {
	if c.txn.open {
		return nil
	}
	if err := c.prod.BeginTransaction(); err != nil {
		return c.txnFatal(err)
	}
	c.txn.open = true
	return nil
}

// txnDue reports whether the open transaction (or moved positions) must be committed now.
func (c *Copier) txnDue() bool {
	return time.Since(c.txn.lastCommit) >= c.txn.cfg.Interval
}

// txnFenced says whether err means that a newer producer with the same transactional.id took over.
func txnFenced(err error) bool {
	return IsCode(err, kafka.ErrFenced) || IsCode(err, kafka.ErrProducerFenced) || IsCode(err, kafka.ErrInvalidProducerEpoch) ||
		IsCode(err, kafka.ErrTransactionalIDAuthorizationFailed)
}

// txnFatal is the error that stops a transactional copier: fencing explained, anything else as is.
func (c *Copier) txnFatal(err error) error {
	if txnFenced(err) && !IsCode(err, kafka.ErrTransactionalIDAuthorizationFailed) {
		return kerr.WithHint(kerr.New(kerr.CheckFailed, "%s: fenced: another producer registered this pipeline's transactional.id %s on %s (a second `kmm replicate` of the flow, or MirrorMaker 2 in exactly-once mode), or the coordinator aborted a transaction left open longer than transaction.timeout.ms; this one stops, and its open transaction is aborted (nothing it copied since its last commit is visible to read_committed readers): %v",
			c.name, c.txn.id, orName(c.TargetCluster, "the target"), err),
			"run one `kmm replicate` per exactly-once flow (and never MM2 beside it); if none other runs, raise "+orName(c.TargetCluster, "<T>")+".producer.transaction.timeout.ms")
	}
	if IsCode(err, kafka.ErrTransactionalIDAuthorizationFailed) {
		return Deny(fmt.Errorf("%s: transactional.id %s: %w", c.name, c.txn.id, err), orName(c.TargetCluster, c.name+" target"), c.pcfg, "Write", "transactional-id", c.txn.id)
	}
	return fmt.Errorf("%s: target producer (transactional.id %s): %w", c.name, c.txn.id, err)
}

// txnDeliveryFailed records a failed record of the open transaction (delivery goroutine): the
// transaction is aborted at its commit and the records rewound. A fenced producer stops.
func (c *Copier) txnDeliveryFailed(s *slot, err error) {
	if txnFenced(err) || IsFatalErr(err) {
		c.setFatal(c.txnFatal(err))
		return
	}
	e := fmt.Errorf("%s: the record from %s[%d] offset %d was not written: %w", c.name, s.p.SrcTopic, s.p.Partition, s.srcOff, err)
	if c.txn.failed.CompareAndSwap(nil, &e) || isPurge(err) {
		return
	}
	if f := c.txn.failed.Load(); f != nil && isPurge(*f) {
		c.txn.failed.Store(&e) // the cause, rather than the records librdkafka purged because of it
	}
}

func isPurge(err error) bool {
	return IsCode(err, kafka.ErrPurgeQueue) || IsCode(err, kafka.ErrPurgeInflight)
}

// IsFatalErr says whether err is a fatal librdkafka error.
func IsFatalErr(err error) bool {
	var ke kafka.Error
	return errors.As(err, &ke) && ke.IsFatal()
}

// txnMoved returns the copier's partitions whose done position is past the committed one.
func (c *Copier) txnMoved() ([]*CopyPart, []int64) {
	var parts []*CopyPart
	var pos []int64
	if l := c.byID.Load(); l != nil {
		for _, p := range *l {
			if p != nil && p.txnDone > p.txnCommitted {
				parts = append(parts, p)
				pos = append(pos, p.txnDone)
			}
		}
	}
	return parts, pos
}

// txnCommit commits the open transaction with the progress records of every partition that
// moved, or aborts it and rewinds when a record of it failed or the commit failed (consumer
// goroutine, or Drain once it has ended). It returns a non-nil error only when the copier must
// stop (fenced, fatal). It gives up waiting at until, or when the copier stops (stop, with
// stopping) or gives up (Abandon): the commit then stays in progress (t.committing) and the
// next call resumes it, as librdkafka allows after a timed-out commit.
func (c *Copier) txnCommit(until time.Time, stopping bool) error {
	t := c.txn
	t.lastCommit = time.Now()
	if !t.committing {
		parts, pos := c.txnMoved()
		if len(parts) == 0 && !t.open {
			return nil
		}
		if f := t.failed.Load(); f != nil {
			return c.txnAbort(until, *f)
		}
		if err := c.txnBegin(); err != nil {
			return err
		}
		for i, p := range parts {
			topic, part, key, value := t.cfg.Progress(p, pos[i])
			m := &kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: part}, Key: key, Value: value}
			for {
				err := c.prod.Produce(m, nil)
				if err == nil {
					break
				}
				if IsCode(err, kafka.ErrQueueFull) && time.Now().Before(until) && !c.giveUp.Load() {
					c.prod.Flush(10)
					continue
				}
				if IsFatalErr(err) || txnFenced(err) {
					return c.txnFatal(err)
				}
				return c.txnAbort(until, fmt.Errorf("%s: writing the progress of %s[%d]: %w", c.name, p.SrcTopic, p.Partition, err))
			}
		}
		t.committing, t.cParts, t.cPos = true, parts, pos
	}
	for {
		ctx, cancel := context.WithTimeout(context.Background(), min(time.Until(until), time.Second))
		err := c.prod.CommitTransaction(ctx)
		cancel()
		if err == nil {
			break
		}
		var ke kafka.Error
		switch {
		case IsFatalErr(err) || txnFenced(err):
			return c.txnFatal(err)
		case errors.As(err, &ke) && ke.TxnRequiresAbort():
			t.committing = false
			return c.txnAbort(until, fmt.Errorf("%s: commit: %w", c.name, err))
		case time.Now().Before(until) && !c.giveUp.Load() && !(stopping && c.stop.Load()):
			continue // retriable (a timeout: the target is slow or away): resume the commit
		default:
			return nil // still in progress: resumed by the next call, or aborted by Abandon
		}
	}
	parts, pos := t.cParts, t.cPos
	t.open, t.committing, t.cParts, t.cPos = false, false, nil, nil
	t.commits.Add(1)
	t.abortsInARow = 0
	if f := t.failed.Load(); f != nil {
		// librdkafka fails the commit when a record of the transaction failed; be safe anyway.
		return c.setFatalErr(fmt.Errorf("%s: a transaction committed although a record of it failed: %w", c.name, *f))
	}
	// Every record of the transaction has its delivery report; let the delivery goroutine
	// handle them (Acked) before Committed.
	c.awaitReports(until)
	for i, p := range parts {
		p.txnCommitted = pos[i]
	}
	if len(parts) > 0 {
		c.OnDeliveryGoroutine(func() { t.h.Committed(parts, pos) })
	}
	return nil
}

func (c *Copier) setFatalErr(err error) error { c.setFatal(err); return err }

// awaitReports waits until the delivery goroutine has handled every delivery report of the
// records produced so far (or until).
func (c *Copier) awaitReports(until time.Time) {
	for c.reported.Load() < c.produced.Load() && time.Now().Before(until) {
		if c.prod.Flush(10) == 0 {
			time.Sleep(time.Millisecond)
		}
	}
}

// txnMaxAborts is how many transactions in a row may fail before the copier stops: a record the
// target refuses for good (too large, say) would otherwise be copied and aborted forever. Each
// abort waits a little longer before copying again (txnAbort), about 40 s for all of them.
const txnMaxAborts = 20

// txnAbort aborts the open transaction, whose records failed for cause, and rewinds every
// partition to its committed position: the consumer reads again from the offset after it, and
// the handler forgets the aborted acknowledgements. After txnMaxAborts in a row without a commit
// it returns the error that stops the copier.
func (c *Copier) txnAbort(until time.Time, cause error) error {
	t := c.txn
	t.abortsInARow++

	if t.open {
		for {
			ctx, cancel := context.WithDeadline(context.Background(), until)
			err := c.prod.AbortTransaction(ctx)
			cancel()
			if err == nil {
				break
			}
			if IsFatalErr(err) || txnFenced(err) {
				return c.txnFatal(err)
			}
			if !time.Now().Before(until) || c.giveUp.Load() {
				return nil // the next try, or the next run's registration, aborts it
			}
		}
		t.open, t.committing, t.cParts, t.cPos = false, false, nil, nil
	}
	t.aborts.Add(1)
	c.awaitReports(until)
	if f := t.failed.Load(); f != nil {
		cause = *f // the record that failed first says more than the producer's state
	}
	if t.abortsInARow >= txnMaxAborts {
		return fmt.Errorf("%s: %d transactions in a row failed and were aborted (nothing of them is visible to read_committed readers); the last: %w", c.name, t.abortsInARow, cause)
	}
	c.h.Warn("target", fmt.Errorf("%s: %w (%d in a row), copying again from the last committed positions: %w", c.name, ErrTxnAborted, t.abortsInARow, cause))
	var parts []*CopyPart
	var pos []int64
	if l := c.byID.Load(); l != nil {
		for _, p := range *l {
			if p == nil {
				continue
			}
			parts = append(parts, p)
			pos = append(pos, p.txnCommitted)
			p.txnDone = p.txnCommitted
			p.lastProduced, p.echoTail, p.idleAt = p.txnCommitted, -1, -1
			off := kafka.Offset(p.txnCommitted + 1)
			if p.txnCommitted < 0 {
				off = c.reset
				if p.txnStart >= 0 {
					off = kafka.Offset(p.txnStart)
				}
			}
			p.nextExpected = int64(off)
			if off < 0 {
				p.nextExpected = -1
			}
			topic := p.SrcTopic
			if err := c.cons.Seek(kafka.TopicPartition{Topic: &topic, Partition: p.Partition, Offset: off}, 0); err != nil {
				return c.setFatalErr(fmt.Errorf("%s: rewinding %s[%d] to offset %d after an aborted transaction: %w", c.name, p.SrcTopic, p.Partition, off, err))
			}
		}
	}
	c.OnDeliveryGoroutine(func() {
		for i, p := range parts {
			p.ackedTo = pos[i]
		}
		t.failed.Store(nil)
		t.h.Aborted(parts, pos)
	})
	// Back off before copying again: 200 ms more per abort in a row, at most 4 s.
	for end := time.Now().Add(min(time.Duration(t.abortsInARow)*200*time.Millisecond, 4*time.Second)); time.Now().Before(end) && !c.stop.Load() && !c.giveUp.Load(); {
		time.Sleep(50 * time.Millisecond)
	}
	t.lastCommit = time.Now()
	return nil
}

// txnDrain commits the last transaction once the consumer goroutine has ended (Drain). It
// reports whether everything copied is committed.
func (c *Copier) txnDrain(deadline time.Time) bool {
	aborts := c.txn.aborts.Load()
	if err := c.txnCommit(deadline, false); err != nil {
		c.setFatal(err)
		return false
	}
	if c.txn.aborts.Load() != aborts {
		c.txnDrainAborted = true // copied again by the next run, from the committed positions
	}
	parts, _ := c.txnMoved()
	return !c.txnDrainAborted && !c.txn.open && len(parts) == 0 && c.txn.failed.Load() == nil
}

// txnAbandon aborts the open transaction at stop (Abandon): nothing of it becomes visible, and
// the next run copies it again from the committed positions.
func (c *Copier) txnAbandon(deadline time.Time) {
	if c.txn.open {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		if err := c.prod.AbortTransaction(ctx); err == nil {
			c.txn.open, c.txn.committing = false, false
		}
		cancel()
	}
	var parts []*CopyPart
	var pos []int64
	if l := c.byID.Load(); l != nil {
		for _, p := range *l {
			if p != nil {
				parts = append(parts, p)
				pos = append(pos, p.txnCommitted)
			}
		}
	}
	c.OnDeliveryGoroutine(func() { c.txn.h.Aborted(parts, pos) })
}

// txnEOF: the consumer reached the end of a partition past its last record (transaction
// markers, aborted records): the offsets before the end are done, and the position stored at
// the next commit covers them (consumer goroutine).
func (c *Copier) txnEOF(eof kafka.PartitionEOF) {
	p := c.eofPart(eof)
	if end := int64(eof.Offset); p != nil && end > 0 && end-1 > p.txnDone && (p.nextExpected < 0 || end >= p.nextExpected) {
		p.txnDone = end - 1
	}
}

// ReadCommittedToEnd reads every partition of topic from its earliest offset to its end with
// read_committed, calling fn for each record, in offset order per partition. The end is where
// the consumer reports the partition's end (its last stable offset): unlike a read up to the
// high watermark, it does not wait for a record at the last offset, which a transaction's
// commit marker takes. within bounds the whole read.
func (c *Cluster) ReadCommittedToEnd(ctx context.Context, topic string, within time.Duration, fn func(Record)) error {
	ts, err := c.ListTopics(ctx)
	if err != nil {
		return err
	}
	n := ts[topic].Partitions
	if n == 0 {
		return nil
	}
	cfg := merge(Config{"isolation.level": "read_committed", "enable.partition.eof": "true"}, c.consumer)
	cfg["isolation.level"], cfg["enable.partition.eof"] = "read_committed", "true"
	cm := withLogChannel(merge(cfg, map[string]string{"group.id": "kmm-assign", "enable.auto.commit": "false", "enable.auto.offset.store": "false"}, failFast))
	kc, err := kafka.NewConsumer(cm.configMap(nil))
	if err != nil {
		return kerr.Wrap(kerr.Usage, fmt.Errorf("%s: invalid consumer configuration: %w", c.Name(), err))
	}
	startDrain(c.Name()+" offsets reader", kc.Logs(), cm, nil)
	defer kc.Close()
	var tps []kafka.TopicPartition
	for p := 0; p < n; p++ {
		t := topic
		tps = append(tps, kafka.TopicPartition{Topic: &t, Partition: int32(p), Offset: kafka.OffsetBeginning})
	}
	knowLeaders(kc, tps)
	if err := kc.Assign(tps); err != nil {
		return Classify(fmt.Errorf("%s: assign %s: %w", c.Name(), topic, err))
	}
	left := map[int32]bool{}
	for p := 0; p < n; p++ {
		left[int32(p)] = true
	}
	deadline := time.Now().Add(within)
	for len(left) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %s: not at the end after %s (%d partition(s) left; an open transaction on it?)", c.Name(), topic, within, len(left))
		}
		switch e := kc.Poll(100).(type) {
		case *kafka.Message:
			if e.TopicPartition.Error != nil {
				return Classify(fmt.Errorf("%s: reading %s: %w", c.Name(), topic, e.TopicPartition.Error))
			}
			r := Record{Topic: *e.TopicPartition.Topic, Partition: e.TopicPartition.Partition, Offset: int64(e.TopicPartition.Offset),
				Key: e.Key, Value: e.Value, Timestamp: e.Timestamp}
			fn(r)
		case kafka.PartitionEOF:
			delete(left, e.Partition)
		case kafka.Error:
			if e.IsFatal() {
				return Classify(fmt.Errorf("%s: reading %s: %w", c.Name(), topic, e))
			}
		}
	}
	return nil
}

// txnProduceFailed handles a record the producer refused in a transaction (consumer goroutine):
// a fenced or fatal producer stops the copier (the error returned); otherwise the transaction is
// aborted and every partition rewound, so the record is read and produced again.
func (c *Copier) txnProduceFailed(p *CopyPart, off int64, err error) error {
	if IsFatalErr(err) || txnFenced(err) {
		return c.txnFatal(err)
	}
	cause := fmt.Errorf("%s: produce the record from %s[%d] offset %d to %s: %w", c.name, p.SrcTopic, p.Partition, off, p.DstTopic, err)
	if f := c.txn.failed.Load(); f != nil {
		cause = *f // the failure that put the transaction in this state
	}
	c.txn.committing = false
	return c.txnAbort(time.Now().Add(time.Minute), cause)
}
