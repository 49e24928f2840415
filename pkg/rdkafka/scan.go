package rdkafka

/*
#include <stdlib.h>
#include "scan.h"
*/
import "C"

import (
	"context"
	"fmt"
	"time"
	"unsafe"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kmmproject/kmm/pkg/cluster"
)

// scanHandle is a Consumer's digest scanner (scan.c), made at its first PollDigests.
type scanHandle = *C.kmm_scan

// PollDigests reads up to len(out) records of tp with offsets in (after, end) and writes their
// digests (kmm verify's RecordHash of key, value, headers and, with withTS, the timestamp) to
// out, waiting at most wait for the first record. The records are hashed in C on the
// consumer's queue and never reach the Go heap: the full-level comparison's reader. seen counts
// every record polled, of any partition. Errors are those Poll returns.
func (c *Consumer) PollDigests(ctx context.Context, tp cluster.TP, after, end int64, withTS bool, out []cluster.Digest, wait time.Duration) (n, seen int, err error) {
	if len(out) == 0 {
		return 0, 0, nil
	}
	if c.scan == nil {
		rk, err := consumerRK(c.c)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", c.name, err)
		}
		if c.scan = C.kmm_scan_new(rk); c.scan == nil {
			return 0, 0, fmt.Errorf("%s: out of memory", c.name)
		}
	}
	topic := C.CString(tp.Topic)
	defer C.free(unsafe.Pointer(topic))
	var errbuf [512]C.char
	deadline := time.Now().Add(wait)
	for {
		if err := ctx.Err(); err != nil {
			return 0, 0, err
		}
		ms := min(max(time.Until(deadline).Milliseconds(), 0), 100)
		var cseen, code, fatal C.int
		got := C.kmm_scan_poll(c.scan, topic, C.int32_t(tp.Partition), C.int64_t(after), C.int64_t(end), cBool(withTS), C.int(ms),
			(*C.kmm_digest)(unsafe.Pointer(&out[0])), C.int(len(out)), &cseen, &code, &fatal, &errbuf[0], C.size_t(len(errbuf)))
		if got < 0 {
			msg := C.GoString(&errbuf[0])
			if code == -1 {
				return 0, int(cseen), fmt.Errorf("%s: consume: %s", c.name, msg)
			}
			kerr := kafka.NewError(kafka.ErrorCode(code), msg, fatal != 0)
			if fatal != 0 {
				return 0, int(cseen), Classify(fmt.Errorf("%s: consumer: %w", c.name, kerr))
			}
			return 0, int(cseen), Classify(fmt.Errorf("%s: consume: %w", c.name, kerr))
		}
		if got > 0 || cseen > 0 || ms == 0 {
			return int(got), int(cseen), nil
		}
	}
}

func cBool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// closeScan frees the digest scanner (before the consumer is closed).
func (c *Consumer) closeScan() {
	if c.scan != nil {
		C.kmm_scan_destroy(c.scan)
		c.scan = nil
	}
}

// recordDigestC is RecordHash computed by scan.c from a record's fields (tests).
func recordDigestC(r *cluster.Record, withTS bool) uint64 {
	s := C.kmm_scan_new(nil)
	defer C.kmm_scan_destroy(s)
	var key, val unsafe.Pointer
	if r.Key != nil {
		key = C.CBytes(append(append([]byte{}, r.Key...), 0)) // never a NULL pointer for an empty key
		defer C.free(key)
	}
	if r.Value != nil {
		val = C.CBytes(append(append([]byte{}, r.Value...), 0))
		defer C.free(val)
	}
	n := len(r.Headers)
	names := C.malloc(C.size_t(max(n, 1)) * C.size_t(unsafe.Sizeof(uintptr(0))))
	vals := C.malloc(C.size_t(max(n, 1)) * C.size_t(unsafe.Sizeof(uintptr(0))))
	sizes := C.malloc(C.size_t(max(n, 1)) * C.size_t(unsafe.Sizeof(C.size_t(0))))
	defer C.free(names)
	defer C.free(vals)
	defer C.free(sizes)
	ns := unsafe.Slice((**C.char)(names), max(n, 1))
	vs := unsafe.Slice((*unsafe.Pointer)(vals), max(n, 1))
	ss := unsafe.Slice((*C.size_t)(sizes), max(n, 1))
	for i, h := range r.Headers {
		ns[i] = C.CString(h.Key)
		defer C.free(unsafe.Pointer(ns[i]))
		vs[i], ss[i] = nil, C.size_t(len(h.Value))
		if h.Value != nil {
			vs[i] = C.CBytes(append(append([]byte{}, h.Value...), 0))
			defer C.free(vs[i])
		}
	}
	ts := r.Timestamp.UnixMilli()
	return uint64(C.kmm_record_hash(s, key, C.size_t(len(r.Key)), val, C.size_t(len(r.Value)), C.size_t(n),
		(**C.char)(names), (*unsafe.Pointer)(vals), (*C.size_t)(sizes), C.int64_t(ts), cBool(withTS)))
}

// xxh64C is scan.c's XXH64 (tests).
func xxh64C(b []byte) uint64 {
	if len(b) == 0 {
		return uint64(C.kmm_xxh64(nil, 0))
	}
	p := C.CBytes(b)
	defer C.free(p)
	return uint64(C.kmm_xxh64(p, C.size_t(len(b))))
}
