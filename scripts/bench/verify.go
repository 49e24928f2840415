package main

// `kmm verify` rows: --level full over the copy kmm just made (A's workload topic against its
// remote topic on B), against the consume-only ceiling of both topics read in parallel in the
// same repetition; and --level metadata over a topic of many partitions.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// verifyRuns measures the verify rows for workload w while kmm's copy (remote on B) is complete;
// props is the run's properties file.
func verifyRuns(ctx context.Context, cfg *config, w *workload, rep, order int, props, remote string) []runResult {
	var out []runResult
	tgtEnd, err := endOffsets(ctx, cfg.admins["B"], remote, w.Partitions)
	if err != nil {
		return []runResult{{Kind: "verify-ceiling", Workload: w.Name, Rep: rep, Order: order, Error: err.Error()}}
	}
	// The ceiling: both topics read at once with the clients verify uses (kmm's consumer settings).
	{
		res := runResult{Kind: "verify-ceiling", Workload: w.Name, Rep: rep, Order: order, LoadAvgStart: loadAvg()}
		tgtCons := maps.Clone(cfg.kmmConsumer)
		tgtCons["bootstrap.servers"] = cfg.B
		cctx, cancel := context.WithTimeout(ctx, cfg.runTimeout(w))
		a := sampleCPU(cfg, 0)
		var wg sync.WaitGroup
		var src, tgt ceilingResult
		// Timed from the start, client creation and first fetch included: verify's full-scan
		// time (the report's seconds.full) includes opening its readers too.
		start := time.Now()
		wg.Add(2)
		go func() { defer wg.Done(); src = ceilingConsume(cctx, cfg.kmmConsumer, w.Topic, w.End, cfg.Tasks) }()
		go func() { defer wg.Done(); tgt = ceilingConsume(cctx, tgtCons, remote, tgtEnd, cfg.Tasks) }()
		wg.Wait()
		b := sampleCPU(cfg, 0)
		cancel()
		res.LoadAvgEnd = loadAvg()
		first, last := start, src.Last
		if tgt.Last.After(last) {
			last = tgt.Last
		}
		both := ceilingResult{Records: src.Records + tgt.Records, Bytes: src.Bytes + tgt.Bytes, First: first, Last: last, CPU: src.CPU + tgt.CPU, Err: src.Err}
		if both.Err == nil {
			both.Err = tgt.Err
		}
		fill(&res, both, append(append([]int64(nil), w.End...), tgtEnd...))
		res.attribute(a, b)
		out = append(out, res)
	}
	// kmm verify --level full over the same two topics.
	{
		res := runResult{Kind: "verify-full", Workload: w.Name, Rep: rep, Order: order + 1, LoadAvgStart: loadAvg()}
		cctx, cancel := context.WithTimeout(ctx, cfg.runTimeout(w))
		a := sampleCPU(cfg, 0)
		doc, wall, ru, err := runVerifyCmd(cctx, cfg, props, "--level", "full", "--topics", regexp.QuoteMeta(w.Topic))
		b := sampleCPU(cfg, 0)
		cancel()
		res.LoadAvgEnd = loadAvg()
		if err != nil {
			res.Error = err.Error()
			return append(out, res)
		}
		var read, matched int64
		for _, it := range doc.Items {
			for _, f := range it.Findings {
				if f.Check == "full" {
					read += f.Counts["source_records"] + f.Counts["target_records"]
					matched += f.Counts["matched"]
				}
			}
		}
		var scan float64
		for _, it := range doc.Items {
			scan += it.Seconds["full"]
		}
		res.Records, res.Bytes = read, 2*w.TotalBytes*read/max(1, 2*sum(w.End))
		// The rate is over the full scan (as the ceiling's is first to last record); the
		// command's wall time, start-up and metadata included, is the total.
		res.TransferSec, res.TotalSec = max(scan, 0.001), wall.Seconds()
		res.StartupSec = max(0, wall.Seconds()-scan)
		res.CPUTotal = ru.cpu
		res.CPUTransfer = ru.cpu
		res.PeakRSSMB = ru.maxRSSMB
		res.finishRates()
		b.proc += ru.cpu // the command is a child: its CPU is not "other cores"
		res.attribute(a, b)
		res.OK = matched == sum(w.End) && read == sum(w.End)+sum(tgtEnd)
		if !res.OK {
			res.Error = fmt.Sprintf("verify matched %d of %d records and read %d of %d", matched, sum(w.End), read, sum(w.End)+sum(tgtEnd))
		}
		out = append(out, res)
	}
	return out
}

// verifyMetadata measures `kmm verify --level metadata` over a topic of n partitions on A and
// its remote topic on B (created empty: the cost is per partition, not per record).
func verifyMetadata(ctx context.Context, cfg *config, n, rep int) runResult {
	res := runResult{Kind: "verify-metadata", Workload: fmt.Sprintf("%dp", n), Rep: rep, LoadAvgStart: loadAvg()}
	topic := fmt.Sprintf("bench-%s-meta-%dp", cfg.ID, n)
	remote := "A." + topic
	defer func() {
		_ = deleteTopicsWait(context.Background(), cfg.admins["A"], topic)
		_ = deleteTopicsWait(context.Background(), cfg.admins["B"], remote)
	}()
	if err := createTopic(ctx, cfg.admins["A"], topic, n, nil); err != nil {
		res.Error = err.Error()
		return res
	}
	if err := createTopic(ctx, cfg.admins["B"], remote, n, nil); err != nil {
		res.Error = err.Error()
		return res
	}
	// CreateTopics returns, and the metadata lists every partition, well before a broker has
	// made itself leader of 1,000 new partitions: until then ListOffsets answers "not leader"
	// and verify retries. That is topic creation, not verify: wait for both topics to answer
	// (not timed).
	t0 := time.Now()
	for _, side := range []struct{ adm, name string }{{"A", topic}, {"B", remote}} {
		if err := waitLeaders(ctx, cfg.admins[side.adm], side.name, n, 3*time.Minute); err != nil {
			res.Error = err.Error()
			return res
		}
	}
	logf("verify metadata: %d new partitions on each side served offsets after %.1f s (not timed)", n, time.Since(t0).Seconds())
	dir := filepath.Join(cfg.LogDir, topic)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		res.Error = err.Error()
		return res
	}
	props := filepath.Join(dir, "mm2.properties")
	if err := os.WriteFile(props, []byte(mm2Props(cfg, propsSpec{Target: "B", TargetBootstrap: cfg.B, Topic: topic, RunName: topic, Tasks: cfg.Tasks})), 0o644); err != nil {
		res.Error = err.Error()
		return res
	}
	doc, wall, ru, err := runVerifyCmd(ctx, cfg, props, "--level", "metadata")
	res.LoadAvgEnd = loadAvg()
	if err != nil {
		res.Error = err.Error()
		return res
	}
	parts := 0
	for _, it := range doc.Items {
		for _, f := range it.Findings {
			if f.Check == "progress" && f.Topic == topic {
				parts++
			}
		}
	}
	res.Records, res.TransferSec, res.TotalSec, res.CPUTotal, res.PeakRSSMB = int64(parts), wall.Seconds(), wall.Seconds(), ru.cpu, ru.maxRSSMB
	res.finishRates()
	res.OK = parts == n
	if !res.OK {
		res.Error = fmt.Sprintf("metadata reported %d of %d partitions", parts, n)
	}
	return res
}

type verifyDoc struct {
	Items []struct {
		Seconds  map[string]float64 `json:"seconds"`
		Findings []struct {
			Check  string           `json:"check"`
			Status string           `json:"status"`
			Topic  string           `json:"topic"`
			Counts map[string]int64 `json:"counts"`
		} `json:"findings"`
	} `json:"items"`
}

type usage struct {
	cpu      float64
	maxRSSMB float64
}

// runVerifyCmd runs bin/kmm verify FILE args -o json and returns its document, wall time and
// resource use; exit 3 (findings failed) is an error unless the document shows why.
func runVerifyCmd(ctx context.Context, cfg *config, props string, args ...string) (verifyDoc, time.Duration, usage, error) {
	var doc verifyDoc
	cmd := exec.CommandContext(ctx, cfg.KMMBin, append([]string{"verify", props, "-o", "json"}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	var stdout strings.Builder
	cmd.Stdout = &stdout
	start := time.Now()
	var u usage
	if err := cmd.Start(); err != nil {
		return doc, 0, u, err
	}
	// Peak RSS: VmHWM of the process, sampled until it exits (ru_maxrss after exec also counts
	// the forking parent's high-water mark on Linux, so it is not used).
	stop := make(chan struct{})
	sampled := make(chan float64)
	go func() {
		var hwm float64
		for {
			if kb, err := procStatusKB(cmd.Process.Pid, "VmHWM"); err == nil {
				hwm = max(hwm, float64(kb)/1024)
			}
			select {
			case <-stop:
				sampled <- hwm
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	err := cmd.Wait()
	wall := time.Since(start)
	close(stop)
	u.maxRSSMB = <-sampled
	out := []byte(stdout.String())
	// Kept beside the run's other files (the last verify of a run overwrites the previous one).
	_ = os.WriteFile(filepath.Join(cfg.Bed, "bench", fmt.Sprintf("verify-%d.json", start.UnixNano())), out, 0o644)
	_ = os.WriteFile(filepath.Join(cfg.Bed, "bench", fmt.Sprintf("verify-%d.stderr", start.UnixNano())), []byte(stderr.String()), 0o644)
	if ps := cmd.ProcessState; ps != nil {
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			u.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
		}
	}
	if jerr := json.Unmarshal(out, &doc); jerr != nil {
		return doc, wall, u, fmt.Errorf("kmm verify: %v (%v); stderr:\n%s", err, jerr, stderr.String())
	}
	if err != nil {
		var failed []string
		for _, it := range doc.Items {
			for _, f := range it.Findings {
				if f.Status == "FAIL" {
					failed = append(failed, f.Check+" "+f.Topic)
				}
			}
		}
		return doc, wall, u, fmt.Errorf("kmm verify: %v: %s", err, strings.Join(failed, ", "))
	}
	return doc, wall, u, nil
}

// waitLeaders waits until ListOffsets answers for every partition of topic (its leaders serve).
func waitLeaders(ctx context.Context, a *rdkafka.Admin, topic string, n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		_, err := endOffsets(ctx, a, topic, n)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("topic %s on %s: partitions not served within %s: %w", topic, a.Name(), timeout, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}
