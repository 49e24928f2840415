package rdkafka_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/rdkafka"
	"github.com/kmmproject/kmm/pkg/verify"
)

// scan.c's XXH64 is xxhash's Sum64 on every length around its stripe and tail boundaries.
func TestScanXXH64(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 300; n++ {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		if got, want := rdkafka.XXH64C(b), xxhash.Sum64(b); got != want {
			t.Fatalf("length %d: C %016x, Go %016x", n, got, want)
		}
	}
}

// The C digest of a record is verify's RecordHash for null and empty keys, values and header
// values, many headers, a trailing provenance header (not hashed), timestamps or none.
func TestScanDigestMatchesRecordHash(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	bytesOr := func(null bool, n int) []byte {
		if null {
			return nil
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return b
	}
	for i := 0; i < 2000; i++ {
		rec := cluster.Record{Key: bytesOr(r.IntN(4) == 0, r.IntN(3)*r.IntN(40)), Value: bytesOr(r.IntN(5) == 0, r.IntN(2)*r.IntN(3000)),
			Timestamp: time.UnixMilli(r.Int64N(2e12))}
		if i%7 == 0 {
			rec.Timestamp = time.Time{} // a record without a timestamp
		}
		for h := r.IntN(40) - 2; h > 0; h-- {
			rec.Headers = append(rec.Headers, cluster.Header{Key: fmt.Sprintf("h%d", r.IntN(1000)), Value: bytesOr(r.IntN(4) == 0, r.IntN(20))})
		}
		if i%5 == 0 {
			rec.Headers = append(rec.Headers, cluster.Header{Key: cluster.HeaderOrigin, Value: []byte("A")})
		}
		for _, withTS := range []bool{false, true} {
			if got, want := rdkafka.RecordDigestC(&rec, withTS), verify.RecordHash(&rec, withTS); got != want {
				t.Fatalf("record %d (withTS %v, %d headers): C %016x, Go %016x", i, withTS, len(rec.Headers), got, want)
			}
		}
	}
	// The digest depends on every field.
	base := cluster.Record{Key: []byte("k"), Value: []byte("v"), Headers: []cluster.Header{{Key: "h", Value: []byte("x")}}, Timestamp: time.UnixMilli(5)}
	h0 := rdkafka.RecordDigestC(&base, true)
	for name, m := range map[string]func(*cluster.Record){
		"key null": func(c *cluster.Record) { c.Key = nil }, "key empty": func(c *cluster.Record) { c.Key = []byte{} },
		"value": func(c *cluster.Record) { c.Value = []byte("w") }, "header value null": func(c *cluster.Record) { c.Headers = []cluster.Header{{Key: "h"}} },
		"no header": func(c *cluster.Record) { c.Headers = nil }, "timestamp": func(c *cluster.Record) { c.Timestamp = time.UnixMilli(6) },
	} {
		c := base
		m(&c)
		if rdkafka.RecordDigestC(&c, true) == h0 {
			t.Errorf("%s: same digest", name)
		}
	}
}

// On the real bed: a scan reader's PollDigests yields, for a range of a partition, exactly the
// offsets and digests that Poll + RecordHash give (records with and without keys, headers,
// a LogAppendTime topic), and nothing outside (after, end).
func TestRealPollDigests(t *testing.T) {
	bed := testbed.Attach(t)
	topic := testbed.Unique(t, "scan")
	bed.A.CreateTopic(t, topic, 2, map[string]string{"message.timestamp.type": "LogAppendTime"})
	const n = 20_000
	recs := make([]rdkafka.Record, n)
	for i := range recs {
		recs[i] = rdkafka.Record{Topic: topic, Partition: int32(i % 2), Value: []byte(strings.Repeat("v", i%700))}
		if i%3 != 0 {
			recs[i].Key = []byte(fmt.Sprint("k", i))
		}
		if i%4 == 0 {
			recs[i].Headers = []rdkafka.Header{{Key: "seq", Value: []byte(fmt.Sprint(i))}, {Key: "nil"}}
		}
	}
	bed.A.Produce(t, recs)
	cl := bed.A.Open(t)
	tp := cluster.TP{Topic: topic, Partition: 1}
	const after, end = 99, 9_000 // offsets 100..8999 of partition 1
	want := map[int64]uint64{}
	for _, r := range bed.A.ConsumeN(t, topic, 2, n, time.Minute) {
		if r.Partition == 1 && r.Offset > after && r.Offset < end {
			want[r.Offset] = verify.RecordHash(&r, true)
		}
	}
	rd, err := cl.NewScanReader(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if err := rd.Assign(map[cluster.TP]int64{tp: after + 1}); err != nil {
		t.Fatal(err)
	}
	c := rd.(*rdkafka.Consumer)
	out := make([]cluster.Digest, 1000)
	got, last := 0, int64(after)
	ctx := context.Background()
	for deadline := time.Now().Add(time.Minute); last < end-1 && time.Now().Before(deadline); {
		k, _, err := c.PollDigests(ctx, tp, last, end, true, out, 200*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range out[:k] {
			if d.Offset != last+1 {
				t.Fatalf("offset %d after %d: not in order or not contiguous", d.Offset, last)
			}
			if w, ok := want[d.Offset]; !ok || w != d.Hash {
				t.Fatalf("offset %d: digest %016x, RecordHash %016x (known %v)", d.Offset, d.Hash, w, ok)
			}
			last = d.Offset
			got++
		}
	}
	if got != len(want) || got != end-after-1 {
		t.Fatalf("%d digests, want %d", got, len(want))
	}
}
