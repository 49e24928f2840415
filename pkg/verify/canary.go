package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
)

// CanaryTopic is the source topic the canary writes to. It has no "__" prefix and no internal
// suffix, so MM2's default filters (topics=.*) replicate it; a flow whose `topics` filter does
// not select it fails the canary with a hint.
const CanaryTopic = "kmm-canary"

// canaryRetention keeps the canary topic small: an hour of probes.
const canaryRetention = "3600000"

// CanaryOptions tune the canary.
type CanaryOptions struct {
	Duration time.Duration // how long to produce probes
	Interval time.Duration // between probes (default 100 ms)
	Grace    time.Duration // how long to wait for the last probes on the target (default 30 s)
	Now      func() time.Time
	Progress Progress
}

type probe struct {
	Run  string `json:"run"`
	Seq  int64  `json:"seq"`
	Sent int64  `json:"sent_ms"`
}

// Canary produces sequence-numbered probes to CanaryTopic on the source for o.Duration and
// reads them back from its remote topic on the target: gaps (probes never seen) fail, and the
// end-to-end latency percentiles are reported. The topic is created on first use (1 partition,
// retention one hour). It is the one part of verify that writes, and only to its own topic.
func Canary(ctx context.Context, open cluster.Opener, f *flow.Flow, o CanaryOptions) (Finding, error) {
	if o.Interval <= 0 {
		o.Interval = 100 * time.Millisecond
	}
	if o.Grace <= 0 {
		o.Grace = 30 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Progress == nil {
		o.Progress = noProgress{}
	}
	fd := Finding{Check: CheckCanary, Topic: CanaryTopic, RemoteTopic: f.RemoteTopic(CanaryTopic), Partition: P(int32(0))}
	if !f.Selected(CanaryTopic) {
		fd.Status = Fail
		fd.Reason = fmt.Sprintf("the flow %s does not replicate %s: add it to %s->%s.topics (e.g. `topics = ...|%s`) so the canary can flow through the replicator", f.Name(), CanaryTopic, f.Source, f.Target, CanaryTopic)
		return fd, nil
	}
	src, tgt, err := openBoth(ctx, open, f)
	if err != nil {
		return fd, err
	}
	defer src.Close()
	defer tgt.Close()
	if _, err := cluster.EnsureTopic(ctx, src, cluster.NewTopic{Name: CanaryTopic, Partitions: 1, RF: -1,
		Configs: map[string]string{"retention.ms": canaryRetention, "segment.ms": canaryRetention}}, ""); err != nil {
		return fd, err
	}
	// The remote topic appears once the replicator saw the canary topic (refresh interval).
	remote := cluster.TP{Topic: fd.RemoteTopic}
	var start int64 = -1
	appear := time.Now().Add(o.Grace + f.RefreshTopicsInterval)
	for start < 0 {
		ts, err := tgt.ListTopics(ctx)
		if err != nil {
			return fd, err
		}
		if ts[remote.Topic].Partitions > 0 {
			ends, err := tgt.ListOffsets(ctx, []cluster.TP{remote}, cluster.Latest)
			if err != nil {
				return fd, err
			}
			start = ends[remote].Offset
			break
		}
		if time.Now().After(appear) {
			break
		}
		select {
		case <-ctx.Done():
			return fd, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	prod, err := src.NewProducer(map[string]string{"linger.ms": "0"})
	if err != nil {
		return fd, err
	}
	defer prod.Close()
	run := strconv.FormatInt(o.Now().UnixNano(), 36)
	sent := map[int64]time.Time{}
	var reader cluster.Reader
	seen := map[int64]time.Duration{}
	poll := func(wait time.Duration) error {
		if reader == nil {
			if start < 0 {
				ts, err := tgt.ListTopics(ctx)
				if err != nil || ts[remote.Topic].Partitions == 0 {
					time.Sleep(wait)
					return nil
				}
				start = 0
			}
			r, err := tgt.NewReader()
			if err != nil {
				return err
			}
			if err := r.Assign(map[cluster.TP]int64{remote: start}); err != nil {
				r.Close()
				return err
			}
			reader = r
		}
		recs, err := reader.Poll(ctx, 1000, wait)
		if err != nil {
			return err
		}
		now := time.Now()
		for _, r := range recs {
			var p probe
			if json.Unmarshal(r.Value, &p) != nil || p.Run != run {
				continue
			}
			if _, dup := seen[p.Seq]; !dup {
				seen[p.Seq] = now.Sub(time.UnixMilli(p.Sent))
			}
		}
		return nil
	}
	defer func() {
		if reader != nil {
			reader.Close()
		}
	}()
	o.Progress.Start("canary: probes", int64(o.Duration/o.Interval))
	end := time.Now().Add(o.Duration)
	var seq int64
	for time.Now().Before(end) {
		if ctx.Err() != nil {
			return fd, ctx.Err()
		}
		now := time.Now()
		v, _ := json.Marshal(probe{Run: run, Seq: seq, Sent: now.UnixMilli()})
		if _, err := prod.ProduceSync(ctx, []cluster.Record{{Topic: CanaryTopic, Partition: 0, Key: []byte(run), Value: v, Timestamp: now}}); err != nil {
			return fd, err
		}
		sent[seq] = now
		seq++
		o.Progress.Add(1)
		for next := now.Add(o.Interval); time.Now().Before(next); {
			if err := poll(max(time.Millisecond, time.Until(next))); err != nil {
				return fd, err
			}
		}
	}
	o.Progress.Done()
	deadline := time.Now().Add(o.Grace)
	for int64(len(seen)) < seq && time.Now().Before(deadline) {
		if err := poll(200 * time.Millisecond); err != nil {
			return fd, err
		}
	}
	var lat []time.Duration
	var gaps []int64
	for i := int64(0); i < seq; i++ {
		if d, ok := seen[i]; ok {
			lat = append(lat, d)
		} else {
			gaps = append(gaps, i)
		}
	}
	slices.Sort(lat)
	pct := func(q float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(q*float64(len(lat))))]
	}
	fd.Counts = map[string]int64{"sent": seq, "received": int64(len(lat)), "gaps": int64(len(gaps)),
		"p50_ms": pct(0.50).Milliseconds(), "p95_ms": pct(0.95).Milliseconds(), "p99_ms": pct(0.99).Milliseconds(), "max_ms": pct(1).Milliseconds()}
	if len(gaps) > 0 {
		fd.Status = Fail
		fd.Reason = fmt.Sprintf("%d of %d probe(s) never reached %s within %s (first missing seq %d)", len(gaps), seq, fd.RemoteTopic, o.Grace, gaps[0])
		if len(lat) == 0 {
			fd.Reason += ": is the flow replicating?"
		}
		return fd, nil
	}
	fd.Status = OK
	fd.Reason = fmt.Sprintf("%d probe(s), no gap; latency p50 %s p95 %s p99 %s max %s", seq, pct(0.5).Round(time.Millisecond), pct(0.95).Round(time.Millisecond),
		pct(0.99).Round(time.Millisecond), pct(1).Round(time.Millisecond))
	return fd, nil
}
