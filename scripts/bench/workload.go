package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/kmmproject/kmm/pkg/rdkafka"
)

const (
	hdrSeq      = "bench-seq"  // 8-byte big-endian record number
	hdrSrc      = "bench-src"  // constant
	hdrSrcValue = "kmm-bench"  // value of hdrSrc
	hdrTime     = "bench-time" // latency records: produce time, unix microseconds, 8 bytes big-endian
)

// workload is one data set loaded into A.
type workload struct {
	Name       string `json:"name"`
	Topic      string `json:"topic"`
	Records    int64  `json:"records"`
	ValueSize  int    `json:"value_bytes"`
	Partitions int    `json:"partitions"`
	// RecordBytes is key + value + header keys and values of one record.
	RecordBytes int64   `json:"record_payload_bytes"`
	TotalBytes  int64   `json:"total_payload_bytes"`
	LoadSeconds float64 `json:"load_seconds"`
	End         []int64 `json:"end_offsets"`
	// place, when set, puts record i elsewhere than partition i % Partitions of Topic (the
	// many-partitions rows spread records over several topics: partitions.go).
	place func(i int64) (string, int32)
}

// at is the topic and partition record i is loaded into.
func (w *workload) at(i int64) (string, int32) {
	if w.place != nil {
		return w.place(i)
	}
	return w.Topic, int32(i % int64(w.Partitions))
}

func (w *workload) computeSizes() {
	key := int64(len(fmt.Sprintf("key-%010d", 0)))
	w.RecordBytes = key + int64(w.ValueSize) + int64(len(hdrSeq)+8+len(hdrSrc)+len(hdrSrcValue))
	w.TotalBytes = w.RecordBytes * w.Records
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// selfCPU returns this process's user+system CPU seconds.
func selfCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// loaderConfig is the tuned producer that fills A: large batches, a little linger, no
// compression (loading is not what is measured). Idempotent: a broker slow to take its first
// write to 10,000 partitions timed produce requests out, and the retries of a non-idempotent
// producer left 10 records twice on A (2026-12-07).
func loaderConfig(bootstrap string) rdkafka.Config {
	return rdkafka.Config{"bootstrap.servers": bootstrap, "linger.ms": "20", "batch.size": "1000000",
		"batch.num.messages": "10000", "compression.type": "none", "acks": "all", "enable.idempotence": "true",
		"queue.buffering.max.messages": "1000000", "queue.buffering.max.kbytes": "1048576",
		"go.delivery.report.fields": "none"}
}

// createTopic creates a topic and waits until it shows all partitions.
func createTopic(ctx context.Context, a *rdkafka.Admin, name string, parts int, configs map[string]string) error {
	return createTopics(ctx, a, []string{name}, parts, configs, 30*time.Second)
}

// createTopics creates topics of parts partitions each in one CreateTopics call (pkg/rdkafka
// splits it into requests the KRaft controller accepts) and waits up to timeout until every one
// shows all its partitions.
func createTopics(ctx context.Context, a *rdkafka.Admin, names []string, parts int, configs map[string]string, timeout time.Duration) error {
	specs := make([]rdkafka.NewTopic, len(names))
	for i, n := range names {
		specs[i] = rdkafka.NewTopic{Name: n, Partitions: parts, RF: 1, Configs: configs}
	}
	res, err := a.CreateTopics(ctx, specs)
	if err != nil {
		return err
	}
	var failed []string
	var first error
	for _, n := range names {
		if err := res[n]; err != nil {
			failed = append(failed, n)
			first = cmp.Or(first, err)
		}
	}
	if len(failed) == 1 && len(names) == 1 {
		return fmt.Errorf("create topic %s on %s: %w", failed[0], a.Name(), first)
	}
	if len(failed) > 0 {
		return fmt.Errorf("create topic %s on %s: %w (%d of %d topics failed)", failed[0], a.Name(), first, len(failed), len(names))
	}
	return waitTopics(ctx, a, names, parts, timeout)
}

// waitTopics waits until every topic of names shows at least parts partitions.
func waitTopics(ctx context.Context, a *rdkafka.Admin, names []string, parts int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		ts, err := a.ListTopics(ctx)
		missing := ""
		for _, n := range names {
			if ts[n].Partitions < parts {
				missing = n
				break
			}
		}
		if err == nil && missing == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("topic %s on %s did not show %d partitions within %s (last error %v)", cmp.Or(missing, names[0]), a.Name(), parts, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// load fills w.Topic on A: record i goes to partition i % partitions (or where w.place puts
// it), with key "key-<i>", a value of ValueSize bytes and two headers.
func load(ctx context.Context, bootstrap string, w *workload) error {
	start := time.Now()
	const writers = 2
	const chunk = 20000
	gen := newRecordGen(*w)
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for k := 0; k < writers; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			p, err := rdkafka.NewProducer("loader", loaderConfig(bootstrap))
			if err != nil {
				errs[k] = err
				return
			}
			defer p.Close()
			recs := make([]rdkafka.Record, 0, chunk)
			for base := int64(k) * chunk; base < w.Records; base += writers * chunk {
				recs = recs[:0]
				for i := base; i < base+chunk && i < w.Records; i++ {
					hs := gen.headers(i)
					topic, part := w.at(i)
					recs = append(recs, rdkafka.Record{Topic: topic, Partition: part,
						Key: gen.key(i), Value: gen.value(i),
						Headers: []rdkafka.Header{{Key: hs[0].Key, Value: hs[0].Value}, {Key: hs[1].Key, Value: hs[1].Value}}})
				}
				if _, err := p.ProduceSync(ctx, recs); err != nil {
					errs[k] = err
					return
				}
			}
		}(k)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	w.LoadSeconds = time.Since(start).Seconds()
	return nil
}

// endOffsets returns the latest offsets of partitions 0..n-1 of topic.
func endOffsets(ctx context.Context, a *rdkafka.Admin, topic string, n int) ([]int64, error) {
	tps := make([]rdkafka.TP, n)
	for p := range tps {
		tps[p] = rdkafka.TP{Topic: topic, Partition: int32(p)}
	}
	return listEnds(ctx, a, tps)
}

// listEnds returns the latest offsets of tps, in their order, with one ListOffsets call. The
// call may take 5 s plus 1 ms per partition (a broker answering for 10,000 partitions at once
// is slower than for 12).
func listEnds(ctx context.Context, a *rdkafka.Admin, tps []rdkafka.TP) ([]int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second+time.Duration(len(tps))*time.Millisecond)
	defer cancel()
	res, err := a.ListOffsets(ctx, tps, rdkafka.Latest)
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(tps))
	for i, tp := range tps {
		out[i] = res[tp].Offset
	}
	return out, nil
}

func sum(xs []int64) int64 {
	var s int64
	for _, x := range xs {
		s += x
	}
	return s
}
