package rdkafka

/*
// The package's C (dataplane.c, scan.c, the preambles) compiles with every warning of -Wall
// -Wextra as an error, in every build (make build, go test, go vet): cgo applies a package's
// CFLAGS to all its C. make test-sanitize runs the C plane's tests under ASan and UBSan.
#cgo CFLAGS: -Wall -Wextra -Werror
#include <stdlib.h>
#include "dataplane.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"
	"unsafe"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// The data planes of a Copier (kmm.data.plane).
const (
	// PlaneGo: the original plane, every record is polled into the Go heap as a *kafka.Message and produced from Go;
	// one delivery report per record comes back through the Go client's Events channel.
	PlaneGo = "go"
	// PlaneC: records go from the source consumer's queue to the target producer in C
	// (dataplane.c) and their delivery reports are folded into per-partition runs there; Go
	// makes one call per batch of up to 10,000 records each way.
	PlaneC = "c"
)

// DefaultPlane is the data plane when neither kmm.data.plane nor KMM_DATA_PLANE says.
const DefaultPlane = PlaneC

// PlaneEnv overrides every flow's kmm.data.plane (tests and benchmarks run one plane or the other
// without editing their files).
const PlaneEnv = "KMM_DATA_PLANE"

// dpHandle is the C plane's state (dataplane.c), for the Copier's field; dpPart one partition's
// (CopyPart's field).
type (
	dpHandle = C.kmm_dp
	dpPart   = C.kmm_part
)

// dpRemove takes p out of the C plane (consumer goroutine): true when the record waiting for
// room in the producer queue was p's and was dropped.
func dpRemove(c *Copier, p *CopyPart) bool {
	return p.dpp != nil && C.kmm_dp_remove_part(c.dp, p.dpp) != 0
}

// dpInFlight is the number of p's records produced whose delivery report was not handled yet.
func dpInFlight(p *CopyPart) int64 {
	if p.dpp == nil {
		return 0
	}
	return int64(C.kmm_dp_part_inflight(p.dpp))
}

// dpWakeConsumer, dpPurge and dpOutqLen are the C plane's calls that copier.go makes (a file
// without cgo).
func dpWakeConsumer(c *Copier) { C.kmm_dp_wake_consumer(c.dp) }
func dpPurge(c *Copier)        { C.kmm_dp_purge(c.dp) }
func dpSetOrigin(c *Copier, source, target string) {
	cs, ct := C.CString(source), C.CString(target)
	defer C.free(unsafe.Pointer(cs))
	defer C.free(unsafe.Pointer(ct))
	C.kmm_dp_set_origin(c.dp, cs, ct)
}
func dpOutqLen(c *Copier) int { return int(C.kmm_dp_outq_len(c.dp)) }

// ChoosePlane is the plane a copier runs: KMM_DATA_PLANE when set, else the flow's key, else
// DefaultPlane.
func ChoosePlane(key string) string {
	if v := strings.ToLower(strings.TrimSpace(os.Getenv(PlaneEnv))); v == PlaneC || v == PlaneGo {
		return v
	}
	if key == PlaneC || key == PlaneGo {
		return key
	}
	return DefaultPlane
}

// AckRun is a run of acknowledged records of one partition whose source and target offsets both
// advance by one from (FirstSrc, FirstDst) to (LastSrc, LastDst): what the C plane reports per
// batch instead of one Acked call per record. LatSumMs and LatMaxMs are over the N records'
// timestamps (those with one).
type AckRun struct {
	FirstSrc, FirstDst, LastSrc, LastDst int64
	N, Bytes, LatSumMs, LatMaxMs         int64
}

// CopierOption configures a Copier.
type CopierOption func(*copierOpts)

type copierOpts struct{ plane string }

// WithDataPlane picks the copier's data plane (PlaneGo or PlaneC; see ChoosePlane).
func WithDataPlane(plane string) CopierOption { return func(o *copierOpts) { o.plane = plane } }

// cPlaneUnsupported says why settings need the Go plane ("" when the C plane can run them): an
// OAUTHBEARER login without OIDC needs the Go client's token refresh events.
func cPlaneUnsupported(consumer, producer Config) string {
	for _, c := range []Config{consumer, producer} {
		if strings.EqualFold(c["sasl.mechanism"], "OAUTHBEARER") && !strings.EqualFold(c["sasl.oauthbearer.method"], "oidc") {
			return "sasl.mechanism=OAUTHBEARER without sasl.oauthbearer.method=oidc"
		}
	}
	return ""
}

// consumerRK returns the rd_kafka_t* of a confluent-kafka-go Consumer. The field is unexported:
// this reads it with reflect, pinned to confluent-kafka-go v2.11.1's layout (handle.rk), and
// checks it by the instance name librdkafka gives that pointer (TestDataPlaneHandle).
func consumerRK(cons *kafka.Consumer) (*C.rd_kafka_t, error) {
	v := reflect.ValueOf(cons).Elem().FieldByName("handle")
	if !v.IsValid() || v.Kind() != reflect.Struct {
		return nil, errors.New("confluent-kafka-go's Consumer has no handle field")
	}
	f := v.FieldByName("rk")
	if !f.IsValid() || f.Kind() != reflect.Pointer {
		return nil, errors.New("confluent-kafka-go's consumer handle has no rk pointer")
	}
	rk := *(**C.rd_kafka_t)(unsafe.Pointer(f.UnsafeAddr()))
	if rk == nil {
		return nil, errors.New("the consumer has no librdkafka handle")
	}
	if name := C.GoString(C.kmm_dp_rk_name(rk)); name != cons.String() {
		return nil, fmt.Errorf("the consumer's librdkafka handle is named %q, not %q", name, cons.String())
	}
	return rk, nil
}

// newCPlane creates the C plane of c: the target producer is librdkafka's own (created here from
// the producer settings), the source consumer is c's Go consumer, read from C.
func (c *Copier) newCPlane(producer Config) error {
	rk, err := consumerRK(c.cons)
	if err != nil {
		return err
	}
	conf := C.rd_kafka_conf_new()
	errbuf := (*C.char)(C.malloc(512))
	defer C.free(unsafe.Pointer(errbuf))
	keys := make([]string, 0, len(producer))
	for k := range producer {
		if !strings.HasPrefix(k, "go.") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	set := func(k, v string) error {
		ck, cv := C.CString(k), C.CString(v)
		defer C.free(unsafe.Pointer(ck))
		defer C.free(unsafe.Pointer(cv))
		if C.rd_kafka_conf_set(conf, ck, cv, errbuf, 512) != 0 {
			return fmt.Errorf("%s: invalid target producer configuration: %s", c.name, hideSecrets(C.GoString(errbuf), secretValues(producer)))
		}
		return nil
	}
	for _, k := range keys {
		if err := set(k, producer[k]); err != nil {
			C.rd_kafka_conf_destroy(conf)
			return err
		}
	}
	if err := set("log.queue", "true"); err != nil {
		C.rd_kafka_conf_destroy(conf)
		return err
	}
	dp := C.kmm_dp_new(rk, conf, errbuf, 512) // owns conf
	if dp == nil {
		return fmt.Errorf("%s: target producer: %s", c.name, hideSecrets(C.GoString(errbuf), secretValues(producer)))
	}
	c.dp = dp
	c.plogs = make(chan kafka.LogEvent, 1000)
	return nil
}

func (c *Copier) partByID(id int32) *CopyPart {
	l := c.byID.Load()
	if l == nil || id < 0 || int(id) >= len(*l) {
		return nil
	}
	return (*l)[id]
}

// addC registers parts with the C plane before they are assigned.
func (c *Copier) addC(p *CopyPart) error {
	src, dst := C.CString(p.SrcTopic), C.CString(p.DstTopic)
	defer C.free(unsafe.Pointer(src))
	defer C.free(unsafe.Pointer(dst))
	switch C.kmm_dp_add_part(c.dp, C.int32_t(p.id), src, dst, C.int32_t(p.Partition), C.int64_t(p.nextExpected), &p.dpp) {
	case 0:
		return nil
	case -2:
		return fmt.Errorf("%s: %s has two source topics: the C data plane needs one (kmm.data.plane = go)", c.name, p.DstTopic)
	default:
		return fmt.Errorf("%s: no producer topic handle for %s", c.name, p.DstTopic)
	}
}

func freeEvent(ev *C.kmm_event) {
	if ev.text != nil {
		C.free(unsafe.Pointer(ev.text))
		ev.text = nil
	}
	if ev.topic != nil {
		C.free(unsafe.Pointer(ev.topic))
		ev.topic = nil
	}
}

// runConsumerC is the consumer goroutine of the C plane: one cgo call per batch of records.
func (c *Copier) runConsumerC(ctx context.Context) {
	defer close(c.cdone)
	var (
		ev                               C.kmm_event
		produced, echoes, nbytes, weight C.int64_t
	)
	defer c.serveRemovals() // Remove never waits on a goroutine that has ended
	max := C.int(10000)
	// A rate limit takes the bytes of each batch from the flow's bucket after producing it, and
	// a batch stops at the bucket's burst (50 ms of the limit), so the wait that pays the debt
	// comes before the next batch, as the Go plane waits before each record.
	var maxWeight C.int64_t
	if c.throttle != nil {
		maxWeight = 64 << 10
		if b, ok := c.throttle.(interface{ Burst() int }); ok {
			maxWeight = C.int64_t(b.Burst())
		}
	}
	for {
		if c.pendingRm.Load() > 0 {
			c.serveRemovals()
		}
		stopping := c.stop.Load() || ctx.Err() != nil
		if stopping {
			// A record already taken from the queue waits for room: hand it over (as the Go
			// plane does) unless the caller gave up.
			if C.kmm_dp_pending_part(c.dp) < 0 {
				return
			}
			if c.giveUp.Load() {
				C.kmm_dp_drop_pending(c.dp)
				c.dropped.Add(1)
				return
			}
			max = 0
		}
		r := C.kmm_dp_consume(c.dp, 100, max, maxWeight, &ev, &produced, &echoes, &nbytes, &weight)
		c.produced.Add(int64(produced))
		c.echoes.Add(int64(echoes))
		c.readBytes.Add(int64(nbytes))
		if c.throttle != nil && weight > 0 {
			if d := c.throttle.Take(int(weight)); d > 0 && !stopping && !c.pause(ctx, d) {
				// stopping while paced: what was produced drains as usual; a record waiting
				// for room is handed over or dropped above on the next round
				continue
			}
		}
		var ng C.int
		gaps := C.kmm_dp_gaps(c.dp, &ng)
		for _, g := range unsafe.Slice(gaps, int(ng)) {
			if p := c.partByID(int32(g.part)); p != nil {
				c.h.Gap(p, int64(g.expected), int64(g.got))
			}
		}
		switch r {
		case C.KMM_C_IDLE, C.KMM_C_GAPS:
		case C.KMM_C_FULL:
			if c.giveUp.Load() {
				C.kmm_dp_drop_pending(c.dp)
				c.dropped.Add(1)
				return
			}
		case C.KMM_C_NOPART:
			p := c.partByID(int32(C.kmm_dp_pending_part(c.dp)))
			if p != nil && c.awaitPartition(ctx, p.DstTopic, p.Partition) {
				continue
			}
			off := int64(C.kmm_dp_pending_offset(c.dp))
			C.kmm_dp_drop_pending(c.dp)
			c.dropped.Add(1)
			if c.stop.Load() || ctx.Err() != nil || p == nil {
				return
			}
			if gone := c.gone(p, off, kafka.NewError(kafka.ErrUnknownPartition, "", false)); gone != nil {
				c.setFatal(gone)
				return
			}
			c.setFatal(Deny(fmt.Errorf("%s: produce to %s[%d]: %w", c.name, p.DstTopic, p.Partition, kafka.NewError(kafka.ErrUnknownPartition, "", false)),
				orName(c.TargetCluster, c.name+" target"), c.pcfg, "Write", "topic", p.DstTopic))
			return
		case C.KMM_C_PRODUCE_ERR:
			p := c.partByID(int32(ev.part))
			code := kafka.ErrorCode(ev.code)
			freeEvent(&ev)
			off := int64(C.kmm_dp_pending_offset(c.dp))
			C.kmm_dp_drop_pending(c.dp)
			c.dropped.Add(1)
			if c.stop.Load() || ctx.Err() != nil || p == nil {
				return
			}
			if gone := c.gone(p, off, kafka.NewError(code, "", false)); gone != nil {
				c.setFatal(gone)
				return
			}
			c.setFatal(Deny(fmt.Errorf("%s: produce to %s[%d]: %w", c.name, p.DstTopic, p.Partition, kafka.NewError(code, "", false)),
				orName(c.TargetCluster, c.name+" target"), c.pcfg, "Write", "topic", p.DstTopic))
			return
		case C.KMM_C_EVENT:
			if c.consumerEvent(&ev) {
				return
			}
		}
	}
}

// consumerEvent handles what the C plane hands back from the consumer queue, as runConsumer
// handles the same events; true when the copier must stop.
func (c *Copier) consumerEvent(ev *C.kmm_event) bool {
	defer freeEvent(ev)
	text := C.GoString(ev.text)
	switch ev.kind {
	case C.KMM_EV_STATS:
		c.consStats.set(text, "source-consumer")
	case C.KMM_EV_ERROR:
		e := kafka.NewError(kafka.ErrorCode(ev.code), text, ev.fatal != 0)
		if e.IsFatal() {
			c.setFatal(fmt.Errorf("%s: source consumer: %w", c.name, e))
			return true
		}
		if e.Code() == kafka.ErrMaxPollExceeded {
			return false
		}
		if IsAuthorization(e) {
			c.setFatal(Deny(fmt.Errorf("%s: source consumer: %w", c.name, e), orName(c.SourceCluster, c.name+" source"), c.ccfg, "Read", "topic", c.unreadable()))
			return true
		}
		c.h.Warn("source", e)
	case C.KMM_EV_EOF:
		// The tail past the last record holds nothing to copy (the C plane filtered the EOFs
		// that are not past it): Idle once every record produced before it is acknowledged.
		p := c.partByID(int32(ev.part))
		if c.idle == nil || p == nil {
			return false
		}
		end, after := int64(ev.offset), int64(ev.after)
		c.OnDeliveryGoroutine(func() {
			p.idleAt, p.idleAfter = end, after
			if p.ackedTo >= after {
				c.fireIdle(p)
			}
		})
	case C.KMM_EV_RECORD_ERROR:
		topic := C.GoString(ev.topic)
		e := kafka.NewError(kafka.ErrorCode(ev.code), text, false)
		err := fmt.Errorf("consume %s[%d]: %w", topic, int32(ev.partition), e)
		if IsAuthorization(e) {
			c.setFatal(Deny(fmt.Errorf("%s: %w", c.name, err), orName(c.SourceCluster, c.name+" source"), c.ccfg, "Read", "topic", topic))
			return true
		}
		c.h.Warn("source", err)
	}
	return false
}

// runDeliveriesC is the delivery goroutine of the C plane.
func (c *Copier) runDeliveriesC() {
	defer close(c.done)
	for {
		select {
		case f := <-c.calls:
			f()
			continue
		default:
		}
		if c.dpStop.Load() {
			return
		}
		c.deliverOnce(100)
	}
}

// deliverOnce hands one batch of delivery runs to the handler (delivery goroutine only).
func (c *Copier) deliverOnce(timeoutMs int) {
	var (
		ev               C.kmm_event
		nruns            C.int
		reported, purged C.int64_t
	)
	r := C.kmm_dp_deliveries(c.dp, C.int(timeoutMs), &ev, &nruns, &reported, &purged)
	if nruns > 0 {
		runs := unsafe.Slice(C.kmm_dp_runs(c.dp), int(nruns))
		for i := range runs {
			run := &runs[i]
			p := c.partByID(int32(run.part))
			if p == nil || c.fatal.Load() != nil {
				continue // never acknowledge past a failed record
			}
			if run.n == 0 {
				c.h.Acked(p, int64(run.last_src), -1, 0, 0) // echoes: the position moves, nothing was written
				continue
			}
			c.h.AckedRun(p, AckRun{FirstSrc: int64(run.first_src), FirstDst: int64(run.first_dst), LastSrc: int64(run.last_src), LastDst: int64(run.last_dst),
				N: int64(run.n), Bytes: int64(run.bytes), LatSumMs: int64(run.lat_sum), LatMaxMs: int64(run.lat_max)})
			p.ackedTo = int64(run.last_src)
			if p.idleAt >= 0 && p.ackedTo >= p.idleAfter {
				c.fireIdle(p)
			}
		}
	}
	c.purged.Add(int64(purged))
	c.reported.Add(int64(reported))
	if r == C.KMM_EV_NONE {
		return
	}
	defer freeEvent(&ev)
	text := C.GoString(ev.text)
	switch r {
	case C.KMM_EV_STATS:
		c.prodStats.set(text, "target-producer")
	case C.KMM_EV_ERROR:
		e := kafka.NewError(kafka.ErrorCode(ev.code), text, ev.fatal != 0)
		if e.IsFatal() {
			c.setFatal(fmt.Errorf("%s: target producer: %w", c.name, e))
			return
		}
		c.h.Warn("target", e)
	case C.KMM_EV_LOG:
		select {
		case c.plogs <- kafka.LogEvent{Name: c.name + " target", Tag: C.GoString(ev.topic), Message: text, Level: int(ev.level), Timestamp: time.Now()}:
		default:
		}
	case C.KMM_EV_REJECTED:
		p := c.partByID(int32(ev.part))
		if p == nil {
			c.setFatal(fmt.Errorf("%s: target rejected a record: %s", c.name, text))
			return
		}
		e := kafka.NewError(kafka.ErrorCode(ev.code), text, false)
		if gone := c.gone(p, int64(ev.offset), e); gone != nil {
			c.setFatal(gone)
			return
		}
		c.setFatal(Deny(fmt.Errorf("%s: target rejected the record from %s[%d] offset %d: %w",
			c.name, p.SrcTopic, p.Partition, int64(ev.offset), e), orName(c.TargetCluster, c.name+" target"), c.pcfg, "Write", "topic", p.DstTopic))
	}
}

// partitionCountC asks the target for topic's partition count (-1: unknown).
func (c *Copier) partitionCountC(topic string) int {
	ct := C.CString(topic)
	defer C.free(unsafe.Pointer(ct))
	return int(C.kmm_dp_partition_count(c.dp, ct, 5000))
}

func (c *Copier) wakeC() {
	c.handleMu.RLock()
	if !c.destroyed && !c.dpStop.Load() {
		C.kmm_dp_wake_deliveries(c.dp)
	}
	c.handleMu.RUnlock()
}

// waitReportedC waits until every produced record's delivery report was handled, or deadline.
func (c *Copier) waitReportedC(deadline time.Time) bool {
	for c.reported.Load() < c.produced.Load() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// flushEchoesC runs one delivery batch without waiting: echo acknowledgements the consumer left
// for the delivery goroutine reach the handler (Drain).
func (c *Copier) flushEchoesC() { c.deliverOnce(0) }

func (c *Copier) closeC() {
	deadline := time.Now().Add(5 * time.Second)
	C.kmm_dp_wake_consumer(c.dp)
	<-c.cdone
	if C.kmm_dp_outq_len(c.dp) > 0 || c.reported.Load() < c.produced.Load() {
		c.purging.Store(true)
		C.kmm_dp_purge(c.dp)
	}
	// Every consumed record held by the producer must be released before the consumer closes.
	c.waitReportedC(deadline)
	c.dpStop.Store(true)
	C.kmm_dp_wake_deliveries(c.dp)
	<-c.done
	c.handleMu.Lock()
	c.destroyed = true
	C.kmm_dp_destroy_producer(c.dp)
	_ = c.cons.Close()
	C.kmm_dp_free(c.dp)
	c.dp = nil
	c.handleMu.Unlock()
	close(c.plogs)
}
