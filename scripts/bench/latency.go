package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// latencyResult is one steady-rate latency run.
type latencyResult struct {
	Tool  string `json:"tool"`
	Rep   int    `json:"rep"`
	Order int    `json:"order"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`

	Records      int64   `json:"records"`
	TargetRate   float64 `json:"target_rate"`
	AchievedRate float64 `json:"achieved_rate"`
	DurationSec  float64 `json:"duration_s"`
	P50          float64 `json:"p50_ms"`
	P90          float64 `json:"p90_ms"`
	P99          float64 `json:"p99_ms"`
	P999         float64 `json:"p999_ms"`
	Max          float64 `json:"max_ms"`
	Mean         float64 `json:"mean_ms"`
	// The replicator's own share: target append time - source append time (both topics are
	// LogAppendTime), without the source producer's batching and the source broker's append.
	CopyP50 float64 `json:"copy_p50_ms,omitempty"`
	CopyP99 float64 `json:"copy_p99_ms,omitempty"`
	CopyMax float64 `json:"copy_max_ms,omitempty"`
	// The driver's producer: source append time - produce time.
	SourceP50    float64 `json:"source_p50_ms,omitempty"`
	SourceP99    float64 `json:"source_p99_ms,omitempty"`
	StartupSec   float64 `json:"startup_s"`          // process start -> warm-up records on the target
	Cores        float64 `json:"cores_steady"`       // replicator CPU during the steady phase, in cores
	PeakRSSMB    float64 `json:"peak_rss_mb"`        // VmHWM at the end
	TimestampOK  bool    `json:"log_append_time_ok"` // the remote topic kept message.timestamp.type=LogAppendTime
	LoadAvgStart string  `json:"loadavg_start"`
	LoadAvgEnd   string  `json:"loadavg_end"`
	MachineBusy  float64 `json:"machine_busy_cores"`
	OtherCores   float64 `json:"other_cores"`
}

const latencyValueSize = 1024

// runLatency runs a steady producer on A at cfg.LatencyRate for cfg.LatencySecs while tool
// replicates to its target, and reads back every record's end-to-end latency: the target
// broker's append time (the remote topic is created beforehand with
// message.timestamp.type=LogAppendTime, a property MM2's default config.properties.exclude keeps
// both replicators from syncing) minus the produce time the producer wrote into a header just
// before handing the record to librdkafka. All clocks are this machine's.
func runLatency(ctx context.Context, cfg *config, tool string, rep, order int) latencyResult {
	res := latencyResult{Tool: tool, Rep: rep, Order: order, TargetRate: float64(cfg.LatencyRate), LoadAvgStart: loadAvg()}
	alias, bootstrap := targetOf(cfg, tool)
	adm := cfg.admins[alias]
	runName := fmt.Sprintf("bench-%s-%s-lat-r%d", cfg.ID, tool, rep)
	src := runName
	remote := "A." + src
	logDir := filepath.Join(cfg.LogDir, runName)
	_ = os.MkdirAll(logDir, 0o755)
	fail := func(format string, a ...any) latencyResult {
		res.Error = fmt.Sprintf(format, a...)
		return res
	}
	perRun := []string{remote, runName + "-offsets", runName + "-status", runName + "-configs"}
	if err := deleteTopicsWait(ctx, adm, perRun...); err != nil {
		return fail("%v", err)
	}
	defer func() {
		_ = deleteTopicsWait(context.Background(), adm, perRun...)
		_ = deleteTopicsWait(context.Background(), cfg.admins["A"], src)
	}()
	const parts = 12
	// LogAppendTime on the source too: then a replicator that syncs message.timestamp.type
	// anyway (kmm before the fix of its config.properties.exclude handling) keeps the target's
	// LogAppendTime instead of resetting it to the source's CreateTime.
	if err := createTopic(ctx, cfg.admins["A"], src, parts, map[string]string{"message.timestamp.type": "LogAppendTime"}); err != nil {
		return fail("%v", err)
	}
	if err := createTopic(ctx, adm, remote, parts, map[string]string{"message.timestamp.type": "LogAppendTime"}); err != nil {
		return fail("%v", err)
	}
	props := filepath.Join(logDir, "mm2.properties")
	if err := os.WriteFile(props, []byte(mm2Props(cfg, propsSpec{Target: alias, TargetBootstrap: bootstrap, Topic: src,
		RunName: runName, Tasks: cfg.Tasks, Batching: false})), 0o644); err != nil {
		return fail("%v", err)
	}
	var r *replicator
	var err error
	switch tool {
	case "kmm":
		r, err = startKMM(cfg, runName, props, alias, logDir)
	case "engine":
		r, err = startEngine(cfg, runName, props, logDir)
	default:
		r, err = startMM2(cfg, runName, props, alias, logDir)
	}
	if err != nil {
		return fail("%v", err)
	}
	defer r.stop(cfg)

	// Idempotent, as a Java producer is by default since Kafka 3.0: that also caps librdkafka's
	// in-flight requests at 5. With librdkafka's non-idempotent default of up to 1,000,000
	// pipelined requests, this producer alone kept whole partitions 0.6-18 s behind on a loaded
	// machine (measured as source append time - produce time), which the latency figure then
	// blamed on the replicator (scripts/bench/notes.md).
	pcfg := rdkafka.Config{"bootstrap.servers": cfg.A, "acks": "all", "linger.ms": "5", "compression.type": "none", "enable.idempotence": "true"}
	for k, v := range parseKV(os.Getenv("BENCH_LATENCY_PRODUCER")) { // experiments on the driver's own producer
		pcfg[k] = v
	}
	prod, err := newAsyncProducer(pcfg)
	if err != nil {
		return fail("%v", err)
	}
	value := randomBytes(latencyValueSize)
	mk := func(i int64, t time.Time) ([]byte, []kafka.Header) {
		ts := make([]byte, 8)
		if !t.IsZero() {
			binary.BigEndian.PutUint64(ts, uint64(t.UnixMicro()))
		}
		seq := make([]byte, 8)
		binary.BigEndian.PutUint64(seq, uint64(i))
		return []byte(fmt.Sprintf("key-%010d", i)), []kafka.Header{{Key: hdrTime, Value: ts}, {Key: hdrSeq, Value: seq}}
	}
	// Warm-up: one record per partition (produce time 0: not counted), until the replicator has
	// copied them; this is also its start-up time on an idle topic.
	for p := int32(0); p < parts; p++ {
		k, h := mk(-1, time.Time{})
		if err := prod.produce(src, p, k, value, h); err != nil {
			prod.close(5 * time.Second)
			return fail("warm-up produce: %v", err)
		}
	}
	prod.p.Flush(5000)
	waitFor := func(want int64, timeout time.Duration) error {
		deadline := time.Now().Add(timeout)
		for {
			if r.exited() {
				return fmt.Errorf("%s exited early; log tail:\n%s", tool, r.logTail(30))
			}
			ends, err := endOffsets(ctx, adm, remote, parts)
			if err == nil && sum(ends) >= want {
				return nil
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				return fmt.Errorf("%s: target has %d of %d records after %s (%v); log tail:\n%s", tool, sum(ends), want, timeout, err, r.logTail(30))
			}
			time.Sleep(cfg.Poll)
		}
	}
	if err := waitFor(parts, 240*time.Second); err != nil {
		prod.close(5 * time.Second)
		return fail("%v", err)
	}
	res.StartupSec = time.Since(r.start).Seconds()

	// Steady phase.
	total := int64(math.Round(float64(cfg.LatencyRate) * cfg.LatencySecs))
	a := sampleCPU(cfg, r.pid)
	sent, took, err := pace(ctx, float64(cfg.LatencyRate), total, func(i int64) error {
		k, h := mk(i, time.Now())
		return prod.produce(src, int32(i%parts), k, value, h)
	})
	if err != nil {
		prod.close(5 * time.Second)
		return fail("produce: %v", err)
	}
	res.DurationSec = took.Seconds()
	res.AchievedRate = float64(sent) / res.DurationSec
	prod.close(30 * time.Second)
	if prod.failed.Load() > 0 {
		return fail("%d records failed to produce to A", prod.failed.Load())
	}
	if err := waitFor(sent+parts, 120*time.Second); err != nil {
		return fail("%v", err)
	}
	b := sampleCPU(cfg, r.pid)
	res.Cores = (b.proc - a.proc) / b.t.Sub(a.t).Seconds()
	var rr runResult
	rr.attribute(a, b)
	res.MachineBusy, res.OtherCores = rr.MachineBusy, rr.OtherCores
	if hwm, err := procStatusKB(r.pid, "VmHWM"); err == nil {
		res.PeakRSSMB = float64(hwm) / 1024
	}
	res.LoadAvgEnd = loadAvg()

	cfgs, err := adm.DescribeTopicConfigs(ctx, remote)
	if err != nil {
		return fail("describe %s: %v", remote, err)
	}
	res.TimestampOK = cfgs[remote]["message.timestamp.type"].Value == "LogAppendTime"
	if !res.TimestampOK {
		return fail("%s on %s lost message.timestamp.type=LogAppendTime (now %q): latencies would be wrong", remote, alias, cfgs[remote]["message.timestamp.type"].Value)
	}
	lats, tgtAppend, err := readLatencies(ctx, bootstrap, remote, parts, sent+parts)
	if err != nil {
		return fail("%v", err)
	}
	srcLats, srcAppend, err := readLatencies(ctx, cfg.A, src, parts, sent+parts)
	if err != nil {
		return fail("%v", err)
	}
	sort.Float64s(srcLats)
	res.SourceP50, res.SourceP99 = pct(srcLats, 0.5), pct(srcLats, 0.99)
	var copyLats []float64
	for seq, ta := range tgtAppend {
		if sa, ok := srcAppend[seq]; ok {
			copyLats = append(copyLats, float64(ta-sa))
		}
	}
	if int64(len(copyLats)) < sent {
		return fail("matched %d source and target append times, produced %d", len(copyLats), sent)
	}
	sort.Float64s(copyLats)
	res.CopyP50, res.CopyP99, res.CopyMax = pct(copyLats, 0.50), pct(copyLats, 0.99), copyLats[len(copyLats)-1]
	res.Records = int64(len(lats))
	if res.Records < sent {
		return fail("read %d latencies, produced %d", res.Records, sent)
	}
	sort.Float64s(lats)
	res.P50, res.P90, res.P99, res.P999 = pct(lats, 0.50), pct(lats, 0.90), pct(lats, 0.99), pct(lats, 0.999)
	res.Max = lats[len(lats)-1]
	var s float64
	for _, l := range lats {
		s += l
	}
	res.Mean = s / float64(len(lats))
	res.OK = true
	return res
}

// pace calls send(0), send(1), ... at rate calls per second (checked every millisecond) until
// total were sent, send fails or ctx ends; it returns how many were sent and the time taken.
func pace(ctx context.Context, rate float64, total int64, send func(i int64) error) (int64, time.Duration, error) {
	start := time.Now()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	var sent int64
	for sent < total && ctx.Err() == nil {
		<-tick.C
		due := min(int64(time.Since(start).Seconds()*rate), total)
		for ; sent < due; sent++ {
			if err := send(sent); err != nil {
				return sent, time.Since(start), err
			}
		}
	}
	return sent, time.Since(start), nil
}

// readLatencies consumes topic from the beginning and returns, for every record with a produce
// time, its timestamp (LogAppendTime) minus the produce time, in milliseconds, and its timestamp
// (epoch ms) by sequence number.
func readLatencies(ctx context.Context, bootstrap, topic string, parts int, want int64) ([]float64, map[int64]int64, error) {
	c, err := rdkafka.NewConsumer("latency-reader", rdkafka.Config{"bootstrap.servers": bootstrap, "group.id": "bench-latency-reader"})
	if err != nil {
		return nil, nil, err
	}
	defer c.Close()
	start := map[rdkafka.TP]int64{}
	for p := 0; p < parts; p++ {
		start[rdkafka.TP{Topic: topic, Partition: int32(p)}] = int64(rdkafka.Earliest)
	}
	if err := c.Assign(start); err != nil {
		return nil, nil, err
	}
	var out []float64
	appended := map[int64]int64{}
	var got int64
	deadline := time.Now().Add(120 * time.Second)
	for got < want {
		if time.Now().After(deadline) {
			return nil, nil, fmt.Errorf("read %d of %d records of %s", got, want, topic)
		}
		recs, err := c.Poll(ctx, 10000, time.Second)
		if err != nil {
			return nil, nil, err
		}
		for _, r := range recs {
			got++
			var us int64
			seq := int64(-1)
			for _, h := range r.Headers {
				if h.Key == hdrTime && len(h.Value) == 8 {
					us = int64(binary.BigEndian.Uint64(h.Value))
				}
				if h.Key == hdrSeq && len(h.Value) == 8 {
					seq = int64(binary.BigEndian.Uint64(h.Value))
				}
			}
			if us > 0 {
				out = append(out, float64(r.Timestamp.UnixMicro()-us)/1000)
				appended[seq] = r.Timestamp.UnixMilli()
			}
		}
	}
	return out, appended, nil
}

// pct returns the q-quantile of sorted xs (nearest rank).
func pct(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(xs) {
		i = len(xs) - 1
	}
	return xs[i]
}
