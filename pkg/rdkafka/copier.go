package rdkafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/kerr"
)

// CopyPart is one partition a Copier replicates: records of SrcTopic[Partition] are produced to
// DstTopic[Partition] in order. State is the caller's per-partition state, handed back on every
// acknowledgement without any lookup.
type CopyPart struct {
	SrcTopic  string
	DstTopic  string
	Partition int32
	State     any

	id           int32 // index in Copier.byID
	nextExpected int64 // consumer goroutine only; -1 unknown
	echoTail     int64 // consumer goroutine only: the last echo skipped after the last record produced; -1 none
	echoListed   bool  // consumer goroutine only: in Copier.echoTailsP
	produced     int64 // consumer goroutine only: records handed to the producer (Remove waits on it)
	reported     int64 // delivery goroutine only: their delivery reports handled

	// The end-of-partition hook (IdleHandler): lastProduced is the source offset of the last
	// record produced (consumer goroutine; -1 none); ackedTo the source offset of the last record
	// acknowledged (delivery goroutine; -1 none); idleAt an end offset waiting for the
	// acknowledgement of idleAfter before Idle is called (delivery goroutine; -1 none).
	lastProduced, ackedTo, idleAt, idleAfter int64

	// Exactly-once (txn.go; consumer goroutine): the last source offset done in the open
	// transaction and the last committed (-1 none), and the start offset Add was given.
	txnDone, txnCommitted, txnStart int64

	dpp *dpPart // the C plane's state of the partition (dataplane.c), nil on the Go plane
}

// HeaderOrigin is the provenance header a Copier with SetOrigin adds to every record it copies:
// the alias of the cluster the record was first written to (kept as is by later hops: A->B->C
// leaves "A"). Such a Copier never writes a record to the cluster its origin names (the echo
// guard, a second guard behind the cut-over positions under IdentityReplicationPolicy). MM2
// copies it through as an ordinary header and does not read it.
const HeaderOrigin = cluster.HeaderOrigin

// stampOrigin returns the headers a copied record is produced with: hs with HeaderOrigin =
// origin added when absent (shared, a one-header slice to reuse when hs is empty: no
// allocation per record), and whether the record is an echo (its origin is target).
func stampOrigin(hs []kafka.Header, shared []kafka.Header, target string) ([]kafka.Header, bool) {
	if len(hs) == 0 {
		return shared, false
	}
	for i := range hs {
		if hs[i].Key == HeaderOrigin {
			return hs, string(hs[i].Value) == target
		}
	}
	return append(hs, shared[0]), false
}

// CopyHandler receives a Copier's per-record outcomes. Acked is called on the Copier's single
// delivery goroutine, in offset order per partition; it must be cheap (no I/O, no locks per
// call if avoidable). dst is -1 for a record the echo guard did not copy (SetOrigin): the
// position may move past it, but it has no copy.
type CopyHandler interface {
	// Acked: the target acknowledged the record from source offset src at target offset dst;
	// ts is the record's timestamp (epoch ms).
	Acked(p *CopyPart, src, dst int64, valueBytes int, ts int64)
	// AckedRun: the C data plane's acknowledgements, one call per run of records of one
	// partition (AckRun), on the delivery goroutine, in offset order per partition. Its echo
	// acknowledgements still come through Acked with dst -1.
	AckedRun(p *CopyPart, r AckRun)
	// Gap: the consumer skipped from offset expected to got (compaction, transaction markers,
	// or records deleted by retention: the handler decides which). Consumer goroutine.
	Gap(p *CopyPart, expected, got int64)
	// Warn: a transient client-level problem on "source" or "target".
	Warn(side string, err error)
}

// IdleHandler is an optional method of a CopyHandler. Idle is called on the delivery goroutine
// when the source consumer reached the end of partition p at offset next, past the offset after
// the last record it delivered (the tail holds no record to copy: transaction markers, and
// aborted records under read_committed, which no consumer ever receives), and every record copied
// from p is acknowledged: nothing before next remains to be copied. It comes after every Acked of
// p for offsets before next, at most once per end offset, never after a failed record.
type IdleHandler interface {
	Idle(p *CopyPart, next int64)
}

// Throttle paces a Copier (SetThrottle): Take is called on the consumer goroutine with the
// size of each record about to be produced (key, value and headers) and returns how long the
// copier must wait before producing it. One Throttle may pace several copiers.
type Throttle interface {
	Take(n int) time.Duration
}

// slot travels with one record through the producer (Message.Opaque) so its delivery report
// finds its partition and source offset. Slots come in chunks: one allocation per 1024 records.
type slot struct {
	p      *CopyPart
	srcOff int64
	ts     int64
	vlen   int
}

const slotChunk = 1024

// Copier is one consumer→producer pipeline (an MM2 "task"). Consumer and producer settings are
// the caller's; the Copier adds what correctness needs (assign mode, no commits, no
// delivery-report payload copies).
type Copier struct {
	name    string
	cons    *kafka.Consumer
	prod    *kafka.Producer
	h       CopyHandler
	mu      sync.Mutex
	byTopic map[string][]*CopyPart
	stop    atomic.Bool
	fatal   atomic.Pointer[error]
	closed  atomic.Bool
	// handleMu guards the handles against InFlight callers (metrics) during Close.
	handleMu  sync.RWMutex
	destroyed bool
	giveUp    atomic.Bool // stop waiting for room in the producer queue (Abandon, Close)

	purging atomic.Bool // Abandon purged the producer: purge reports are not failures
	// produced counts records handed to the producer, reported their delivery reports once
	// handled (Acked called, or the failure recorded): Drain waits for the two to meet. The Go
	// client's Len() can read 0 while a batch of delivery reports is between librdkafka and
	// its Events channel, which let Drain return before the last acknowledgements.
	produced, reported atomic.Int64
	purged             atomic.Int64 // records whose delivery report said purged
	dropped            atomic.Int64 // records polled but never produced because the copier stopped
	calls              chan func()
	// removals are Remove's requests, served by the consumer goroutine between two records
	// (pendingRm counts them: one atomic load per record).
	removals  chan *removal
	pendingRm atomic.Int32
	done      chan struct{} // delivery goroutine ended
	cdone     chan struct{} // consumer goroutine ended

	consStats, prodStats statsHolder
	reset                kafka.Offset // where a partition without a start offset begins

	// The clusters' aliases and client settings, for errors that name a missing ACL (Deny).
	SourceCluster, TargetCluster string
	ccfg, pcfg                   Config

	// Provenance (SetOrigin): the header added to records without one, the target's alias.
	origin     []kafka.Header
	target     string
	echoes     atomic.Int64 // records not copied: their origin is the target
	echoTailsP []*CopyPart  // consumer goroutine (then Drain): partitions with an echoTail

	idle IdleHandler // h's Idle, when it has one

	throttle Throttle // nil: no rate limit
	// The data plane (kmm.data.plane): PlaneGo, or PlaneC with dp set (dataplane.go).
	plane     string
	dp        *dpHandle
	dpStop    atomic.Bool                 // the C plane's delivery goroutine must end (Close)
	plogs     chan kafka.LogEvent         // the C plane producer's log lines
	byID      atomic.Pointer[[]*CopyPart] // parts by CopyPart.id
	readBytes atomic.Int64                // value bytes handed to the producer (C plane)

	txn             *txnState // exactly-once (EnableTransactions; txn.go); nil: at least once
	txnDrainAborted bool      // Drain's last transaction was aborted (not everything is committed)
}

// Plane is the data plane the copier runs (PlaneGo or PlaneC).
func (c *Copier) Plane() string { return c.plane }

// topicAuthzText is librdkafka's text of TOPIC_AUTHORIZATION_FAILED (rd_kafka_err2str).
var topicAuthzText = kafka.ErrTopicAuthorizationFailed.String()

// unreadable names the copier's source topics its principal may not READ, asking the cluster for
// the authorized operations of each (KIP-430); every topic the copier reads when it cannot tell.
func (c *Copier) unreadable() string {
	c.mu.Lock()
	all := make([]string, 0, len(c.byTopic))
	for t := range c.byTopic {
		all = append(all, t)
	}
	c.mu.Unlock()
	sort.Strings(all)
	c.handleMu.RLock()
	defer c.handleMu.RUnlock()
	if c.destroyed || len(all) == 0 {
		return strings.Join(all, ",")
	}
	adm, err := kafka.NewAdminClientFromConsumer(c.cons)
	if err != nil {
		return strings.Join(all, ",")
	}
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := adm.DescribeTopics(ctx, kafka.NewTopicCollectionOfTopicNames(all), kafka.SetAdminOptionIncludeAuthorizedOperations(true))
	if err != nil {
		return strings.Join(all, ",")
	}
	var out []string
	for _, d := range res.TopicDescriptions {
		if d.Error.Code() == kafka.ErrTopicAuthorizationFailed {
			out = append(out, d.Name)
			continue
		}
		if d.Error.Code() != kafka.ErrNoError || d.AuthorizedOperations == nil {
			continue
		}
		if !slices.Contains(d.AuthorizedOperations, kafka.ACLOperationRead) && !slices.Contains(d.AuthorizedOperations, kafka.ACLOperationAll) {
			out = append(out, d.Name)
		}
	}
	if len(out) == 0 {
		return strings.Join(all, ",")
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func orName(alias, name string) string {
	if alias != "" {
		return alias
	}
	return name
}

// SetOrigin makes the copier stamp HeaderOrigin = source on every record without one and
// skip every record whose origin is target. Call before Start.
func (c *Copier) SetOrigin(source, target string) {
	c.origin, c.target = []kafka.Header{{Key: HeaderOrigin, Value: []byte(source)}}, target
	if c.dp != nil {
		dpSetOrigin(c, source, target)
	}
}

// SetThrottle makes the copier wait as long as t says before producing each record. Call
// before Start.
func (c *Copier) SetThrottle(t Throttle) { c.throttle = t }

// recordBytes is what a record weighs for a Throttle: key, value and headers.
func recordBytes(m *kafka.Message) int {
	n := len(m.Key) + len(m.Value)
	for _, h := range m.Headers {
		n += len(h.Key) + len(h.Value)
	}
	return n
}

// pause waits d on the consumer goroutine, in slices so a stop is not delayed; false when the
// copier stops (or ctx ends) meanwhile.
func (c *Copier) pause(ctx context.Context, d time.Duration) bool {
	end := time.Now().Add(d)
	for {
		if c.stop.Load() || ctx.Err() != nil {
			return false
		}
		left := time.Until(end)
		if left <= 0 {
			return true
		}
		time.Sleep(min(left, 50*time.Millisecond))
	}
}

// Echoes is the number of records the echo guard did not copy.
func (c *Copier) Echoes() int64 { return c.echoes.Load() }

// ackEchoTails acknowledges, on the delivery goroutine, the echoes skipped after the last
// record produced in their partition (a position past them may be stored). Only when nothing
// is in flight: an acknowledgement never overtakes a record not yet acknowledged.
func (c *Copier) ackEchoTails() {
	if len(c.echoTailsP) == 0 || c.prod.Len() > 0 {
		return
	}
	tails := c.echoTailsP
	c.echoTailsP = nil
	c.OnDeliveryGoroutine(func() {
		for _, p := range tails {
			p.echoListed = false
			if p.echoTail >= 0 {
				c.h.Acked(p, p.echoTail, -1, 0, 0)
				p.echoTail = -1
			}
		}
	})
}

// CopierSettings returns the librdkafka settings a Copier named name runs its source consumer
// and target producer with: the caller's, plus what correctness needs (assign mode without
// commits, delivery reports without payload copies), fail-fast connection timeouts, statistics
// and the bounded queues measured in docs/benchmarks.md, each only where the caller did not set
// it. It is the one place these are decided: NewCopier and the benchmark's ceiling use it.
func CopierSettings(name string, consumer, producer Config) (Config, Config) {
	cc := map[string]string{"group.id": "kmm-" + name, "enable.auto.commit": "false", "enable.auto.offset.store": "false",
		"fetch.queue.backoff.ms": "10", "go.logs.channel.enable": "true", "statistics.interval.ms": "5000",
		// Bounded prefetch (librdkafka's defaults queue up to 64 MiB and 100k messages) and no
		// Nagle delay; measured in docs/benchmarks.md. Settings from the file win.
		"queued.max.messages.kbytes": "16384", "queued.min.messages": "10000", "socket.nagle.disable": "true"}
	pc := map[string]string{"go.delivery.report.fields": "none", "go.logs.channel.enable": "true", "statistics.interval.ms": "5000",
		// The Events channel (delivery reports) keeps the Go client's default: bounded, the
		// final positions stored at drain lagged the acknowledged records in 3 of 18 runs of
		// TestRealReplicate300k (0 of 15 unbounded); not understood yet. ProduceChannel is
		// never used: bounded like every producer's (producerChannels).
		"go.produce.channel.size":      producerChannels["go.produce.channel.size"],
		"queue.buffering.max.messages": "20000", "queue.buffering.max.kbytes": "32768", "socket.nagle.disable": "true"}
	cons := merge(consumer, cc, failFast)
	// Forced: the end-of-partition events move a partition's position past a tail without a
	// record to copy (transaction markers), so an idle flow shows no lag (IdleHandler).
	cons["enable.partition.eof"] = "true"
	return cons, merge(producer, pc, failFast)
}

// merge returns base with every key of the extras that base does not set.
func merge(base Config, extras ...map[string]string) Config {
	out := Config{}
	for k, v := range base {
		out[k] = v
	}
	for _, e := range extras {
		for k, v := range e {
			if _, set := out[k]; !set {
				out[k] = v
			}
		}
	}
	return out
}

// NewCopier creates a pipeline. consumer and producer are librdkafka settings for the source
// and target clusters (CopierSettings adds the Copier's own).
//
// The data plane is what WithDataPlane says, else ChoosePlane("") (KMM_DATA_PLANE, else
// DefaultPlane); settings the C plane cannot run (cPlaneUnsupported) and a Go client whose
// internals do not match what the C plane reads fall back to PlaneGo, with a log line.
func NewCopier(name string, consumer, producer Config, h CopyHandler, opts ...CopierOption) (*Copier, error) {
	var o copierOpts
	for _, f := range opts {
		f(&o)
	}
	plane := o.plane
	if plane != PlaneC && plane != PlaneGo {
		plane = ChoosePlane("")
	}
	if plane == PlaneC && producer["transactional.id"] != "" {
		logger().Warn("exactly-once runs on the Go data plane only; using the Go data plane", "copier", name)
		plane = PlaneGo
	} else if plane == PlaneC {
		plane = PlaneC
		if why := cPlaneUnsupported(consumer, producer); why != "" {
			logger().Warn("kmm.data.plane = c is not available for these settings; using the Go data plane", "copier", name, "reason", why)
			plane = PlaneGo
		}
	}
	consumer, producer = CopierSettings(name, consumer, producer)
	consumer, producer = withLogChannel(consumer), withLogChannel(producer)
	cons, err := kafka.NewConsumer(consumer.configMap(nil))
	if err != nil {
		return nil, fmt.Errorf("%s: invalid source consumer configuration: %w", name, err)
	}
	c := &Copier{name: name, cons: cons, h: h, byTopic: map[string][]*CopyPart{}, ccfg: consumer, pcfg: producer, plane: plane,
		calls: make(chan func(), 16), removals: make(chan *removal, 16), done: make(chan struct{}), cdone: make(chan struct{})}
	if plane == PlaneC {
		if _, err := consumerRK(cons); err != nil {
			logger().Warn("the C data plane cannot read this confluent-kafka-go consumer; using the Go data plane", "copier", name, "error", err.Error())
			c.plane = PlaneGo
		} else if err := c.newCPlane(producer); err != nil {
			startDrain(name+" source", cons.Logs(), consumer, nil)
			cons.Close()
			return nil, err
		}
	}
	if c.plane == PlaneGo {
		prod, err := kafka.NewProducer(producer.configMap(nil))
		if err != nil {
			startDrain(name+" source", cons.Logs(), consumer, nil)
			cons.Close()
			return nil, fmt.Errorf("%s: invalid target producer configuration: %w", name, err)
		}
		c.prod = prod
	}
	reset := kafka.OffsetBeginning
	switch strings.ToLower(consumer["auto.offset.reset"]) {
	case "latest", "largest", "end":
		reset = kafka.OffsetEnd
	case "error":
		reset = kafka.OffsetInvalid
	}
	c.reset = reset
	c.idle, _ = h.(IdleHandler)
	startDrain(name+" source", cons.Logs(), consumer, func(err error) {
		// A fetch refused for lack of READ shows only in librdkafka's log ("Fetch from broker 1
		// failed: Broker: Topic authorization failed"), and librdkafka retries it forever: stop,
		// naming the ACL, as MM2's task fails on the consumer's TopicAuthorizationException.
		if strings.Contains(err.Error(), topicAuthzText) && strings.Contains(err.Error(), "Fetch") {
			c.setFatal(Deny(fmt.Errorf("%s: source consumer: %w", name, kafka.NewError(kafka.ErrTopicAuthorizationFailed, err.Error(), false)),
				orName(c.SourceCluster, name+" source"), c.ccfg, "Read", "topic", c.unreadable()))
			return
		}
		h.Warn("source", err)
	})
	plogs := c.plogs
	if c.prod != nil {
		plogs = c.prod.Logs()
	}
	startDrain(name+" target", plogs, producer, func(err error) { h.Warn("target", err) })
	return c, nil
}

// Err returns the first fatal error (a record the target rejected, a fatal client error).
func (c *Copier) Err() error {
	if e := c.fatal.Load(); e != nil {
		return *e
	}
	return nil
}

func (c *Copier) setFatal(err error) { c.fatal.CompareAndSwap(nil, &err) }

// Add starts copying parts; start[i] is the first source offset to copy, or -1 to let the
// consumer's auto.offset.reset decide.
func (c *Copier) Add(parts []*CopyPart, start []int64) error {
	tps := make([]kafka.TopicPartition, 0, len(parts))
	c.mu.Lock()
	var byID []*CopyPart
	if l := c.byID.Load(); l != nil {
		byID = *l
	}
	for i, p := range parts {
		list := c.byTopic[p.SrcTopic]
		for int(p.Partition) >= len(list) {
			list = append(list, nil)
		}
		list[p.Partition] = p
		c.byTopic[p.SrcTopic] = list
		// No stored position: start where auto.offset.reset says, explicitly. (OffsetInvalid
		// would make librdkafka fetch the group's committed offset first, which needs the group
		// coordinator: on a fresh cluster without __consumer_offsets that retries for minutes.)
		off := c.reset
		p.nextExpected, p.echoTail = -1, -1
		p.lastProduced, p.ackedTo, p.idleAt, p.idleAfter = -1, -1, -1, -1
		txnAdded(p, start[i])
		if start[i] >= 0 {
			off = kafka.Offset(start[i])
			p.nextExpected = start[i]
		}
		p.id = int32(len(byID))
		byID = append(byID, p)
		t := p.SrcTopic
		tps = append(tps, kafka.TopicPartition{Topic: &t, Partition: p.Partition, Offset: off})
	}
	cp := slices.Clone(byID)
	c.byID.Store(&cp)
	if c.dp != nil {
		for _, p := range parts {
			if err := c.addC(p); err != nil {
				c.mu.Unlock()
				return err
			}
		}
	}
	c.mu.Unlock()
	knowLeaders(c.cons, tps)
	if err := c.cons.IncrementalAssign(tps); err != nil {
		return Classify(fmt.Errorf("%s: assign: %w", c.name, err))
	}
	return nil
}

// Parts returns the partitions this copier owns.
func (c *Copier) Parts() []*CopyPart {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*CopyPart
	for _, l := range c.byTopic {
		for _, p := range l {
			if p != nil {
				out = append(out, p)
			}
		}
	}
	return out
}

// OnDeliveryGoroutine runs f on the delivery goroutine, serialised with Acked calls, and waits
// until it has run (or the delivery goroutine has ended).
func (c *Copier) OnDeliveryGoroutine(f func()) {
	ran := make(chan struct{})
	select {
	case c.calls <- func() { f(); close(ran) }:
	case <-c.done:
		return
	}
	if c.plane == PlaneC {
		c.wakeC()
	}
	select {
	case <-ran:
	case <-c.done:
	}
}

// Start runs the consumer and delivery goroutines until Drain or ctx ends.
func (c *Copier) Start(ctx context.Context) {
	if c.plane == PlaneC {
		go c.runDeliveriesC()
		go c.runConsumerC(ctx)
		return
	}
	go c.runDeliveries()
	go c.runConsumer(ctx)
}

func (c *Copier) runConsumer(ctx context.Context) {
	defer close(c.cdone)
	var (
		chunk    []slot
		lastTopc string
		lastList []*CopyPart
	)
	defer c.serveRemovals() // Remove never waits on a goroutine that has ended
	for !c.stop.Load() && ctx.Err() == nil {
		if c.pendingRm.Load() > 0 {
			c.serveRemovals()
			lastTopc, lastList = "", nil
		}
		if c.txn != nil && c.txnDue() {
			if err := c.txnCommit(time.Now().Add(time.Hour), true); err != nil {
				c.setFatal(err)
				return
			}
			if c.txn.committing {
				return // stopping in the middle of a commit: Drain resumes it
			}
		}
		ev := c.cons.Poll(100)
		if ev == nil {
			c.ackEchoTails()
			continue
		}
		m, ok := ev.(*kafka.Message)
		if !ok {
			if eof, isEOF := ev.(kafka.PartitionEOF); isEOF {
				c.partitionEOF(eof)
				continue
			}
			if st, isStats := ev.(*kafka.Stats); isStats {
				c.consStats.set(st.String(), "source-consumer")
				continue
			}
			if e, isErr := ev.(kafka.Error); isErr {
				if e.IsFatal() {
					c.setFatal(fmt.Errorf("%s: source consumer: %w", c.name, e))
					return
				}
				if e.Code() == kafka.ErrMaxPollExceeded {
					continue // assign mode has no group membership to lose; the target was slow or away
				}
				if IsAuthorization(e) {
					c.setFatal(Deny(fmt.Errorf("%s: source consumer: %w", c.name, e), orName(c.SourceCluster, c.name+" source"), c.ccfg, "Read", "topic", c.unreadable()))
					return
				}
				c.h.Warn("source", e)
			}
			continue
		}
		if m.TopicPartition.Error != nil {
			err := fmt.Errorf("consume %s[%d]: %w", *m.TopicPartition.Topic, m.TopicPartition.Partition, m.TopicPartition.Error)
			if IsAuthorization(m.TopicPartition.Error) { // it will not heal by itself: stop, naming the ACL
				c.setFatal(Deny(fmt.Errorf("%s: %w", c.name, err), orName(c.SourceCluster, c.name+" source"), c.ccfg, "Read", "topic", *m.TopicPartition.Topic))
				return
			}
			c.h.Warn("source", err)
			continue
		}
		part := m.TopicPartition.Partition
		var p *CopyPart
		if *m.TopicPartition.Topic == lastTopc && int(part) < len(lastList) {
			p = lastList[part]
		}
		if p == nil {
			lastTopc = *m.TopicPartition.Topic
			c.mu.Lock()
			lastList = c.byTopic[lastTopc]
			c.mu.Unlock()
			if int(part) < len(lastList) {
				p = lastList[part]
			}
			if p == nil {
				continue
			}
		}
		off := int64(m.TopicPartition.Offset)
		if off != p.nextExpected && p.nextExpected >= 0 && off > p.nextExpected {
			c.h.Gap(p, p.nextExpected, off)
		}
		p.nextExpected = off + 1
		if c.origin != nil {
			var echo bool
			if m.Headers, echo = stampOrigin(m.Headers, c.origin, c.target); echo {
				c.echoes.Add(1)
				if !p.echoListed {
					p.echoListed = true
					c.echoTailsP = append(c.echoTailsP, p)
				}
				p.echoTail = off
				p.txnDone = off
				c.ackEchoTails()
				continue
			}
			p.echoTail = -1 // a record produced after the echoes: its acknowledgement covers them
		}
		if c.throttle != nil {
			if d := c.throttle.Take(recordBytes(m)); d > 0 && !c.pause(ctx, d) {
				c.dropped.Add(1) // stopping while paced: never produced, copied after a restart
				return
			}
		}
		if len(chunk) == 0 {
			chunk = make([]slot, slotChunk)
		}
		s := &chunk[0]
		chunk = chunk[1:]
		s.p, s.srcOff, s.vlen, s.ts = p, off, len(m.Value), m.Timestamp.UnixMilli()
		m.TopicPartition = kafka.TopicPartition{Topic: &p.DstTopic, Partition: part}
		m.Opaque = s
		if c.txn != nil {
			if err := c.txnBegin(); err != nil {
				c.setFatal(err)
				return
			}
		}
		for {
			err := c.prod.Produce(m, nil)
			if err == nil {
				c.produced.Add(1)
				p.produced++
				p.lastProduced = off
				p.txnDone = off
				break
			}
			var ke kafka.Error
			if errors.As(err, &ke) && ke.Code() == kafka.ErrQueueFull {
				// Target slower than source (or unreachable): wait for room, never drop. Once
				// the caller gives up (Abandon, Close), give the record up too: it was never
				// produced, so no position past it can be stored, and it is copied again after
				// a restart.
				if c.giveUp.Load() {
					c.dropped.Add(1)
					return
				}
				c.prod.Flush(10)
				continue
			}
			if errors.As(err, &ke) && ke.Code() == kafka.ErrUnknownPartition && c.awaitPartition(ctx, p.DstTopic, part) {
				continue // the partition was just created: the producer's metadata now knows it
			}
			if c.stop.Load() || ctx.Err() != nil {
				c.dropped.Add(1) // stopping while waiting for a new partition: copied after restart
				return
			}
			if gone := c.gone(p, off, err); gone != nil {
				c.setFatal(gone)
				return
			}
			if c.txn != nil && !IsAuthorization(err) {
				// The transaction failed (librdkafka refuses records until it is aborted):
				// abort, rewind, and read this record again.
				if ferr := c.txnProduceFailed(p, off, err); ferr != nil {
					c.setFatal(ferr)
					return
				}
				break
			}
			c.setFatal(Deny(fmt.Errorf("%s: produce to %s[%d]: %w", c.name, p.DstTopic, part, err), orName(c.TargetCluster, c.name+" target"), c.pcfg, "Write", "topic", p.DstTopic))
			return
		}
	}
}

// awaitPartition refreshes the producer's metadata until topic has partition part (a partition
// the control loop has just created), for up to a minute.
func (c *Copier) awaitPartition(ctx context.Context, topic string, part int32) bool {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) && ctx.Err() == nil && !c.stop.Load() {
		if c.plane == PlaneC {
			if c.partitionCountC(topic) > int(part) {
				return true
			}
			time.Sleep(100 * time.Millisecond)
			continue
		}
		md, err := c.prod.GetMetadata(&topic, false, 5000)
		if err == nil {
			if t, ok := md.Topics[topic]; ok && len(t.Partitions) > int(part) {
				return true
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

func (c *Copier) runDeliveries() {
	defer close(c.done)
	events := c.prod.Events()
	for {
		select {
		case f := <-c.calls:
			f()
		case ev, ok := <-events:
			if !ok {
				return
			}
			switch m := ev.(type) {
			case *kafka.Message:
				s, ok := m.Opaque.(*slot)
				if !ok {
					continue
				}
				c.deliver(m, s)
				c.reported.Add(1)
			case *kafka.Stats:
				c.prodStats.set(m.String(), "target-producer")
			case kafka.Error:
				if m.IsFatal() && c.txn != nil {
					c.setFatal(c.txnFatal(m))
					continue
				}
				if m.IsFatal() {
					c.setFatal(fmt.Errorf("%s: target producer: %w", c.name, m))
					continue
				}
				c.h.Warn("target", m)
			}
		}
	}
}

// gone returns the error that stops the copy when err says the target no longer has the
// remote topic or partition p writes to (deleted and not recreated within librdkafka's
// topic.metadata.propagation.max.ms): stop rather than guess. It returns nil for any other err.
func (c *Copier) gone(p *CopyPart, srcOff int64, err error) error {
	if !IsCode(err, kafka.ErrUnknownPartition) && !IsCode(err, kafka.ErrUnknownTopic) && !IsCode(err, kafka.ErrUnknownTopicOrPart) {
		return nil
	}
	return kerr.WithHint(fmt.Errorf("%s: the target topic %s[%d] is gone from %s (deleted?): the record from %s[%d] offset %d was not written: %w",
		c.name, p.DstTopic, p.Partition, orName(c.TargetCluster, "the target"), p.SrcTopic, p.Partition, srcOff, err),
		"kmm recreates a deleted remote topic at its next topic refresh when that comes within topic.metadata.propagation.max.ms (30 s): keep refresh.topics.interval.seconds below it (kmm's default is 10), or start kmm again: it creates the topic and resumes from its stored progress (what the deleted topic held is not copied again)")
}

// deliver handles one record's delivery report on the delivery goroutine.
func (c *Copier) deliver(m *kafka.Message, s *slot) {
	s.p.reported++
	if m.TopicPartition.Error != nil {
		if c.purging.Load() && (IsCode(m.TopicPartition.Error, kafka.ErrPurgeQueue) || IsCode(m.TopicPartition.Error, kafka.ErrPurgeInflight)) {
			// Given up on at stop (Abandon): never acknowledged, so never stored.
			c.purged.Add(1)
			return
		}
		if err := c.gone(s.p, s.srcOff, m.TopicPartition.Error); err != nil {
			c.setFatal(err)
			return
		}
		if c.txn != nil && !IsAuthorization(m.TopicPartition.Error) {
			c.txnDeliveryFailed(s, m.TopicPartition.Error) // aborted and copied again at the commit
			return
		}
		c.setFatal(Deny(fmt.Errorf("%s: target rejected the record from %s[%d] offset %d: %w",
			c.name, s.p.SrcTopic, s.p.Partition, s.srcOff, m.TopicPartition.Error), orName(c.TargetCluster, c.name+" target"), c.pcfg, "Write", "topic", s.p.DstTopic))
		return
	}
	if c.fatal.Load() != nil || (c.txn != nil && c.txn.failed.Load() != nil) {
		return // never acknowledge past a failed record
	}
	c.h.Acked(s.p, s.srcOff, int64(m.TopicPartition.Offset), s.vlen, s.ts)
	s.p.ackedTo = s.srcOff
	if s.p.idleAt >= 0 && s.srcOff >= s.p.idleAfter {
		c.fireIdle(s.p)
	}
}

// eofPart is the part an end-of-partition event is about (nil if none).
func (c *Copier) eofPart(eof kafka.PartitionEOF) *CopyPart {
	if eof.Topic == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if l := c.byTopic[*eof.Topic]; int(eof.Partition) < len(l) {
		return l[eof.Partition]
	}
	return nil
}

// partitionEOF runs on the consumer goroutine when the source consumer reached the end of a
// partition: when the end is past the offset after the last record delivered, Idle is called
// for it once every record produced from the partition so far is acknowledged (at once, or by
// deliver on the last acknowledgement).
func (c *Copier) partitionEOF(eof kafka.PartitionEOF) {
	if c.txn != nil {
		c.txnEOF(eof)
	}
	if c.idle == nil {
		return
	}
	p := c.eofPart(eof)
	end := int64(eof.Offset)
	if p == nil || end <= 0 || (p.nextExpected >= 0 && end <= p.nextExpected) {
		return // nothing at the tail without a record (or already reported at this end)
	}
	p.nextExpected = end // once per end offset; a later record at or after end is no gap
	// The end covers the echoes skipped at the tail too: their acknowledgement (ackEchoTails)
	// must not come after Idle's and move the position back.
	p.echoTail = -1
	after := p.lastProduced
	c.OnDeliveryGoroutine(func() {
		p.idleAt, p.idleAfter = end, after
		if p.ackedTo >= after {
			c.fireIdle(p)
		}
	})
}

// fireIdle calls Idle for p's waiting end offset (delivery goroutine).
func (c *Copier) fireIdle(p *CopyPart) {
	at := p.idleAt
	p.idleAt = -1
	if c.fatal.Load() != nil {
		return // never move past a failed record
	}
	c.idle.Idle(p, at)
}

// Drain stops fetching and waits up to timeout until every produced record is acknowledged.
// It reports whether everything was acknowledged.
func (c *Copier) Drain(timeout time.Duration) bool {
	c.stop.Store(true)
	deadline := time.Now().Add(timeout)
	if c.plane == PlaneC {
		dpWakeConsumer(c)
		select {
		case <-c.cdone:
		case <-time.After(time.Until(deadline)):
			return false
		}
		if !c.waitReportedC(deadline) {
			return false
		}
		c.OnDeliveryGoroutine(c.flushEchoesC)
		return true
	}
	// The consumer goroutine may hold a record it polled before stop was set: wait until it has
	// produced it (or given it up) and returned, or that record reaches the target after the
	// caller stored its positions (and is copied again on restart).
	select {
	case <-c.cdone:
	case <-time.After(time.Until(deadline)):
		return false
	}
	if c.txn != nil {
		// The consumer goroutine has ended: commit the last transaction (records and progress).
		if !c.txnDrain(deadline) {
			return false
		}
		c.OnDeliveryGoroutine(func() {})
		return true
	}
	// Every produced record's delivery report handled (reported counts after Acked returns).
	for c.reported.Load() < c.produced.Load() {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		if c.prod.Flush(int(min(left, 100*time.Millisecond).Milliseconds())+1) == 0 {
			time.Sleep(time.Millisecond) // reports between librdkafka and the delivery goroutine
		}
	}
	c.OnDeliveryGoroutine(func() {})
	c.ackEchoTails() // the consumer goroutine has ended: its echo tails are Drain's now
	return true
}

// StopFetching stops the consumer goroutine without waiting for the target: it returns once
// the goroutine has ended, or after timeout.
func (c *Copier) StopFetching(timeout time.Duration) bool {
	c.stop.Store(true)
	select {
	case <-c.cdone:
		return true
	case <-time.After(timeout):
		return false
	}
}

// Abandon gives up on every record not yet acknowledged: it stops fetching, purges the
// producer's queue and in-flight requests, and waits up to timeout for their (failed) delivery
// reports, so that no acknowledgement can arrive afterwards. It returns how many records were
// given up (purged, or polled and never produced). Nothing is lost: the caller stores
// positions only for acknowledged records, so these are copied again after a restart.
func (c *Copier) Abandon(timeout time.Duration) int64 {
	deadline := time.Now().Add(timeout)
	c.giveUp.Store(true)
	c.StopFetching(timeout)
	c.purging.Store(true)
	if c.plane == PlaneC {
		dpPurge(c)
		c.waitReportedC(deadline)
		c.OnDeliveryGoroutine(func() {})
		return c.purged.Load() + c.dropped.Load()
	}
	if c.prod.Len() > 0 {
		_ = c.prod.Purge(kafka.PurgeQueue | kafka.PurgeInFlight | kafka.PurgeNonBlocking)
	}
	for (c.prod.Len() > 0 || c.reported.Load() < c.produced.Load()) && time.Now().Before(deadline) {
		if c.prod.Flush(20) == 0 { // serves the purge reports
			time.Sleep(time.Millisecond)
		}
	}
	if c.txn != nil {
		c.txnAbandon(deadline)
	}
	c.OnDeliveryGoroutine(func() {})
	return c.purged.Load() + c.dropped.Load()
}

// InFlight is the number of records produced and not yet acknowledged (or reported failed);
// 0 once the copier is closed.
func (c *Copier) InFlight() int {
	c.handleMu.RLock()
	defer c.handleMu.RUnlock()
	if c.destroyed {
		return 0
	}
	if c.plane == PlaneC {
		return dpOutqLen(c)
	}
	return c.prod.Len()
}

// Close closes both clients. Call after Start (and normally after Drain or Abandon). Records
// still queued are purged first, so closing does not wait for an unreachable target.
func (c *Copier) Close() {
	if !c.closed.CompareAndSwap(false, true) {
		return
	}
	c.stop.Store(true)
	c.giveUp.Store(true)
	if c.plane == PlaneC {
		c.closeC()
		return
	}
	<-c.cdone
	c.purging.Store(true)
	if c.prod.Len() > 0 {
		_ = c.prod.Purge(kafka.PurgeQueue | kafka.PurgeInFlight | kafka.PurgeNonBlocking)
	}
	c.handleMu.Lock()
	c.destroyed = true
	_ = c.cons.Close()
	c.prod.Close()
	c.handleMu.Unlock()
	<-c.done
}

// HighWatermarks returns, per given partition, the source's high watermark as the consumer last
// saw it in a fetch response (librdkafka's cached value: no request is made; -1 when none was
// seen). Fetch responses come while the consumer fetches the partition, every
// fetch.wait.max.ms at most when nothing new is there; a partition whose prefetch queue is full
// is not fetched, and its value ages.
func (c *Copier) HighWatermarks(parts []*CopyPart) []int64 {
	out := make([]int64, len(parts))
	c.handleMu.RLock()
	defer c.handleMu.RUnlock()
	for i, p := range parts {
		out[i] = -1
		if c.destroyed {
			continue
		}
		if _, hi, err := c.cons.GetWatermarkOffsets(p.SrcTopic, p.Partition); err == nil && hi >= 0 {
			out[i] = hi
		}
	}
	return out
}

// ClientStats returns the newest librdkafka statistics of the copier's consumer and producer
// (empty until the first statistics interval has passed).
func (c *Copier) ClientStats() []ClientStat {
	var out []ClientStat
	for _, h := range []*statsHolder{&c.consStats, &c.prodStats} {
		if cs := h.p.Load(); cs != nil {
			out = append(out, *cs)
		}
	}
	return out
}

// removal is one Remove request: the consumer goroutine takes the partitions out, stops
// fetching them, and says how many records of each it had handed to the producer.
type removal struct {
	tps   []TP
	parts []*CopyPart
	upto  []int64
	done  chan struct{}
}

// serveRemovals runs on the consumer goroutine (or once it has ended): no record of a removed
// partition is produced after it returns.
func (c *Copier) serveRemovals() {
	for {
		select {
		case r := <-c.removals:
			c.pendingRm.Add(-1)
			c.removeNow(r)
		default:
			return
		}
	}
}

func (c *Copier) removeNow(r *removal) {
	defer close(r.done)
	var tps []kafka.TopicPartition
	c.mu.Lock()
	for _, tp := range r.tps {
		list := c.byTopic[tp.Topic]
		if int(tp.Partition) >= len(list) || list[tp.Partition] == nil {
			continue
		}
		p := list[tp.Partition]
		// A fresh list: the consumer goroutine may hold the old one (lastList).
		nl := slices.Clone(list)
		nl[tp.Partition] = nil
		c.byTopic[tp.Topic] = nl
		r.parts = append(r.parts, p)
		r.upto = append(r.upto, p.produced)
		if c.dp != nil && dpRemove(c, p) {
			c.dropped.Add(1) // polled, never produced: copied by the partition's next owner
		}
		t := tp.Topic
		tps = append(tps, kafka.TopicPartition{Topic: &t, Partition: tp.Partition})
	}
	c.mu.Unlock()
	if len(tps) > 0 && !c.closed.Load() {
		if err := c.cons.IncrementalUnassign(tps); err != nil {
			c.h.Warn("source", fmt.Errorf("%s: unassign: %w", c.name, err))
		}
	}
}

// Remove stops copying the given partitions (those the copier does not copy are ignored): no
// record of them is produced once it has taken them out, and it then waits up to timeout until
// every record of them already produced has its delivery report handled (Acked called), so
// that the caller may store their positions and let another process copy them. It returns the
// partitions removed and whether every one of their records was acknowledged in time. A
// partition's skipped echoes after its last copied record are acknowledged too.
func (c *Copier) Remove(tps []TP, timeout time.Duration) ([]*CopyPart, bool) {
	r := &removal{tps: tps, done: make(chan struct{})}
	c.pendingRm.Add(1)
	c.removals <- r
	select {
	case <-c.cdone:
		c.serveRemovals() // the consumer goroutine has ended (or never served it)
	case <-r.done:
	}
	<-r.done
	if len(r.parts) == 0 {
		return nil, true
	}
	deadline := time.Now().Add(timeout)
	for {
		all := true
		c.OnDeliveryGoroutine(func() {
			for i, p := range r.parts {
				if (c.dp == nil && p.reported < r.upto[i]) || (c.dp != nil && dpInFlight(p) > 0) {
					all = false
					return
				}
			}
			if c.dp != nil {
				// Every report of the parts is handled: their skipped echoes' acknowledgements
				// (queued in C) reach the handler now.
				c.deliverOnce(0)
				return
			}
			for _, p := range r.parts {
				if p.echoTail >= 0 && c.fatal.Load() == nil {
					c.h.Acked(p, p.echoTail, -1, 0, 0)
					p.echoTail = -1
				}
			}
		})
		select {
		case <-c.done:
			return r.parts, false
		default:
		}
		if all {
			return r.parts, true
		}
		if time.Now().After(deadline) {
			return r.parts, false
		}
		time.Sleep(5 * time.Millisecond)
	}
}
