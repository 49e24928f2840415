package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// runResult is one measurement: a replicator run or one leg of the ceiling.
type runResult struct {
	Kind     string `json:"kind"` // kmm, mm2, ceiling-consume, ceiling-produce
	Workload string `json:"workload"`
	Rep      int    `json:"rep"`
	Order    int    `json:"order"` // position inside the repetition
	OK       bool   `json:"ok"`
	Error    string `json:"error,omitempty"`

	Records     int64   `json:"records"`
	Bytes       int64   `json:"payload_bytes"`
	StartupSec  float64 `json:"startup_s,omitempty"`   // process start -> first record on the target
	TotalSec    float64 `json:"total_s"`               // process start -> every record on the target
	TransferSec float64 `json:"transfer_s"`            // first record -> every record on the target
	RecPerSec   float64 `json:"records_per_s"`         // Records / TransferSec
	MBPerSec    float64 `json:"mb_per_s"`              // payload MB (1e6) / TransferSec
	CPUTotal    float64 `json:"cpu_s_total"`           // process user+sys at completion
	CPUTransfer float64 `json:"cpu_s_transfer"`        // user+sys between first record and completion
	CPUPerGB    float64 `json:"cpu_s_per_gb"`          // CPUTransfer per payload GB (1e9)
	CPUTotalGB  float64 `json:"cpu_s_total_per_gb"`    // CPUTotal per payload GB
	PeakRSSMB   float64 `json:"peak_rss_mb,omitempty"` // VmHWM (MiB) at completion
	RSSMB       float64 `json:"rss_mb,omitempty"`      // VmRSS (MiB) at completion
	// ResumeSec (kmm-workers-N-kill): the longest wait after the kill until an unfinished
	// partition moved again on the target (the killed worker's partitions taken over).
	ResumeSec float64 `json:"resume_after_kill_s,omitempty"`

	MachineBusy  float64            `json:"machine_busy_cores"` // all CPUs busy during transfer, in cores
	BrokerCores  map[string]float64 `json:"broker_cores,omitempty"`
	OtherCores   float64            `json:"other_cores"` // busy - measured process - brokers: other people's work
	LoadAvgStart string             `json:"loadavg_start"`
	LoadAvgEnd   string             `json:"loadavg_end"`
	LogDir       string             `json:"log_dir,omitempty"`
}

// cpuWindow samples machine, broker and process CPU to attribute a time window.
type cpuWindow struct {
	t       time.Time
	busy    float64
	brokers map[string]float64
	proc    float64
}

func sampleCPU(cfg *config, pid int) cpuWindow {
	w := cpuWindow{t: time.Now(), brokers: map[string]float64{}}
	w.busy, _ = machineBusy()
	for c, bp := range cfg.brokers {
		w.brokers[c], _ = procCPU(bp)
	}
	if pid > 0 {
		w.proc, _ = procCPU(pid)
	} else {
		w.proc = selfCPU()
	}
	return w
}

func (r *runResult) attribute(a, b cpuWindow) {
	dt := b.t.Sub(a.t).Seconds()
	if dt <= 0 {
		return
	}
	r.MachineBusy = (b.busy - a.busy) / dt
	r.BrokerCores = map[string]float64{}
	other := b.busy - a.busy - (b.proc - a.proc)
	for c := range b.brokers {
		d := b.brokers[c] - a.brokers[c]
		r.BrokerCores[c] = d / dt
		other -= d
	}
	if other < 0 {
		other = 0
	}
	r.OtherCores = other / dt
}

func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

func (r *runResult) finishRates() {
	defer func() {
		r.RecPerSec, r.MBPerSec, r.CPUPerGB, r.CPUTotalGB = finite(r.RecPerSec), finite(r.MBPerSec), finite(r.CPUPerGB), finite(r.CPUTotalGB)
	}()
	if r.TransferSec > 0 {
		r.RecPerSec = float64(r.Records) / r.TransferSec
		r.MBPerSec = float64(r.Bytes) / 1e6 / r.TransferSec
	}
	if r.Bytes > 0 {
		r.CPUPerGB = r.CPUTransfer / (float64(r.Bytes) / 1e9)
		r.CPUTotalGB = r.CPUTotal / (float64(r.Bytes) / 1e9)
	}
}

func targetOf(cfg *config, tool string) (alias, bootstrap string) {
	if tool == "kmm" || tool == "kmm-wan" || tool == "engine" || strings.HasPrefix(tool, "kmm-eos") {
		return "B", cfg.B
	}
	return "C", cfg.C
}

// runReplication replicates workload w with kmm (A->B) or MM2 (A->C) from scratch and measures
// it; the remote topic and the run's Connect topics are deleted afterwards.
func runReplication(ctx context.Context, cfg *config, tool string, w *workload, rep, order int) runResult {
	return runReplicationWith(ctx, cfg, tool, w, rep, order, runOpts{})
}

// runOpts are the WAN rows' changes to a replication run.
type runOpts struct {
	SourceBootstrap, TargetBootstrap string        // "" = the bed's own listeners
	Window                           time.Duration // > 0: measure only this long after the first record (after Warmup)
	Warmup                           time.Duration // with Window: excluded after the first record (JIT, connection set-up)
	Defaults                         bool          // each tool's default client settings
	Name                             string        // run name suffix
	Tasks                            int           // > 0: tasks.max instead of BENCH_TASKS
	Extra                            []string      // lines appended to the file
}

func runReplicationWith(ctx context.Context, cfg *config, tool string, w *workload, rep, order int, o runOpts) runResult {
	res := runResult{Kind: tool, Workload: w.Name, Rep: rep, Order: order, LoadAvgStart: loadAvg()}
	alias, bootstrap := targetOf(cfg, tool)
	if o.TargetBootstrap != "" {
		bootstrap = o.TargetBootstrap
	}
	adm := cfg.admins[alias]
	runName := fmt.Sprintf("bench-%s-%s-%s%s-r%d", cfg.ID, tool, w.Name, o.Name, rep)
	logDir := filepath.Join(cfg.LogDir, runName)
	res.LogDir = logDir
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		res.Error = err.Error()
		return res
	}
	props := filepath.Join(logDir, "mm2.properties")
	if err := os.WriteFile(props, []byte(mm2Props(cfg, propsSpec{Target: alias, TargetBootstrap: bootstrap, Topic: w.Topic,
		RunName: runName, Tasks: cmp.Or(o.Tasks, cfg.Tasks), Batching: true, SourceBootstrap: o.SourceBootstrap, Defaults: o.Defaults, Extra: o.Extra})), 0o644); err != nil {
		res.Error = err.Error()
		return res
	}
	remote := "A." + w.Topic
	perRun := []string{remote, runName + "-offsets", runName + "-status", runName + "-configs"}
	if err := deleteTopicsWait(ctx, adm, perRun...); err != nil {
		res.Error = err.Error()
		return res
	}
	defer func() {
		if err := deleteTopicsWait(context.Background(), adm, perRun...); err != nil {
			logf("warning: cleanup of %s on %s: %v", strings.Join(perRun, ", "), alias, err)
		}
	}()

	var r *replicator
	var err error
	if tool == "kmm" || tool == "kmm-wan" || strings.HasPrefix(tool, "kmm-eos") {
		r, err = startKMM(cfg, runName, props, alias, logDir)
	} else {
		r, err = startMM2(cfg, runName, props, alias, logDir)
	}
	if err != nil {
		res.Error = err.Error()
		return res
	}
	var stopOnce sync.Once
	stop := func() { stopOnce.Do(func() { r.stop(cfg) }) }
	defer stop()
	if cfg.Perf && tool == "kmm" {
		stopPerf := perfRecord(r.pid, filepath.Join(logDir, "perf.data"))
		defer stopPerf()
	}

	deadline := r.start.Add(cfg.runTimeout(w))
	var first, done time.Time
	var firstCPU cpuWindow
	var atFirst, copied int64 // records on the target at the first poll that saw any; at done
	var warmT time.Time       // Window: the first poll at least Warmup after the first record
	var atWarm int64
	var warmCPU cpuWindow
	topicSeen := false
	for {
		if ctx.Err() != nil {
			res.Error = ctx.Err().Error()
			return res
		}
		if r.exited() {
			res.Error = fmt.Sprintf("%s exited early; log tail:\n%s", tool, r.logTail(30))
			return res
		}
		if time.Now().After(deadline) {
			res.Error = fmt.Sprintf("%s did not replicate %d records within %s; log tail:\n%s", tool, sum(w.End), cfg.runTimeout(w), r.logTail(30))
			return res
		}
		next := time.Now().Add(cfg.Poll)
		if !topicSeen {
			tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			ts, err := adm.ListTopics(tctx)
			cancel()
			topicSeen = err == nil && ts[remote].Partitions >= w.Partitions
		}
		if topicSeen {
			ends, err := endOffsets(ctx, adm, remote, w.Partitions)
			if err == nil {
				now := time.Now()
				if first.IsZero() && sum(ends) > 0 {
					first = now
					firstCPU = sampleCPU(cfg, r.pid)
					atFirst = sum(ends)
				}
				copied = sum(ends)
				if o.Window > 0 && warmT.IsZero() && !first.IsZero() && now.Sub(first) >= o.Warmup {
					warmT, atWarm = now, copied
					warmCPU = sampleCPU(cfg, r.pid)
				}
				complete := true
				for p := range ends {
					if ends[p] < w.End[p] {
						complete = false
						break
					}
				}
				if complete || (o.Window > 0 && !warmT.IsZero() && now.Sub(warmT) >= o.Window) {
					done = now
					break
				}
			}
		}
		time.Sleep(time.Until(next))
	}
	doneCPU := sampleCPU(cfg, r.pid)
	hwm, _ := procStatusKB(r.pid, "VmHWM")
	rss, _ := procStatusKB(r.pid, "VmRSS")
	res.LoadAvgEnd = loadAvg()
	res.Records = sum(w.End)
	res.Bytes = w.TotalBytes
	from, fromCPU := first, firstCPU
	if o.Window > 0 {
		// Records that arrived after the warm-up mark (or, when everything arrived before it,
		// after the first poll that saw any), over the time since then.
		n := atFirst
		if !warmT.IsZero() && done.Sub(warmT) >= cfg.Poll {
			from, n, fromCPU = warmT, atWarm, warmCPU
		}
		res.Records = copied - n
		res.Bytes = int64(float64(w.TotalBytes) / float64(sum(w.End)) * float64(res.Records))
	}
	res.StartupSec = first.Sub(r.start).Seconds()
	res.TotalSec = done.Sub(r.start).Seconds()
	// At least one poll interval: everything may arrive between two polls at tiny sizes.
	res.TransferSec = max(done.Sub(from).Seconds(), cfg.Poll.Seconds())
	res.CPUTotal = doneCPU.proc
	res.CPUTransfer = doneCPU.proc - fromCPU.proc
	res.PeakRSSMB = float64(hwm) / 1024
	res.RSSMB = float64(rss) / 1024
	res.attribute(fromCPU, doneCPU)
	res.finishRates()
	res.OK = true
	if tool == "kmm" && cfg.Only["verify"] && o.Window == 0 && o.Name == "" {
		// Stopped first: its drain stores every position, so verify compares the whole copy
		// (with kmm replicate alive, verify compares up to the replicated position it reads,
		// which may trail the target's end by one progress interval), and nothing else runs.
		stop()
		logf("verify %s rep %d ...", w.Name, rep)
		cfg.pending = append(cfg.pending, verifyRuns(ctx, cfg, w, rep, order+1, props, remote)...)
	}
	return res
}

// runCeiling measures consume-only from A and produce-only to B for workload w.
func runCeiling(ctx context.Context, cfg *config, w *workload, rep, order int) []runResult {
	var out []runResult
	// consume-only
	{
		res := runResult{Kind: "ceiling-consume", Workload: w.Name, Rep: rep, Order: order, LoadAvgStart: loadAvg()}
		cctx, cancel := context.WithTimeout(ctx, cfg.runTimeout(w))
		a := sampleCPU(cfg, 0)
		c := ceilingConsume(cctx, cfg.kmmConsumer, w.Topic, w.End, cfg.Tasks)
		b := sampleCPU(cfg, 0)
		cancel()
		res.LoadAvgEnd = loadAvg()
		fill(&res, c, w.End)
		res.attribute(a, b)
		out = append(out, res)
	}
	// produce-only, to a fresh topic on B
	{
		res := runResult{Kind: "ceiling-produce", Workload: w.Name, Rep: rep, Order: order + 1, LoadAvgStart: loadAvg()}
		topic := fmt.Sprintf("bench-%s-ceiling-%s-r%d", cfg.ID, w.Name, rep)
		adm := cfg.admins["B"]
		if err := createTopic(ctx, adm, topic, w.Partitions, nil); err != nil {
			res.Error = err.Error()
			return append(out, res)
		}
		cctx, cancel := context.WithTimeout(ctx, cfg.runTimeout(w))
		a := sampleCPU(cfg, 0)
		c := ceilingProduce(cctx, cfg.kmmProducer, topic, *w, cfg.Tasks)
		b := sampleCPU(cfg, 0)
		cancel()
		res.LoadAvgEnd = loadAvg()
		want := make([]int64, 0)
		fill(&res, c, want)
		if res.OK && c.Records != w.Records {
			res.OK, res.Error = false, fmt.Sprintf("produced %d of %d records", c.Records, w.Records)
		}
		res.attribute(a, b)
		if err := deleteTopicsWait(context.Background(), adm, topic); err != nil {
			logf("warning: deleting %s: %v", topic, err)
		}
		out = append(out, res)
	}
	return out
}

func fill(res *runResult, c ceilingResult, end []int64) {
	res.Records, res.Bytes = c.Records, c.Bytes
	res.TransferSec = max(c.Last.Sub(c.First).Seconds(), 0.001) // tiny sizes: one batch may carry everything
	res.TotalSec = res.TransferSec
	res.CPUTotal, res.CPUTransfer = c.CPU, c.CPU
	res.finishRates()
	res.OK = c.Err == nil
	if c.Err != nil {
		res.Error = c.Err.Error()
	}
	if len(end) > 0 && c.Records != sum(end) {
		res.OK = false
		res.Error = fmt.Sprintf("consumed %d of %d records (%v)", c.Records, sum(end), c.Err)
	}
}

// deleteTopicsWait deletes topics (missing ones are fine) and waits until they are gone.
func deleteTopicsWait(ctx context.Context, a *rdkafka.Admin, topics ...string) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	ts, err := a.ListTopics(ctx)
	if err != nil {
		return err
	}
	var del []string
	for _, t := range topics {
		if _, ok := ts[t]; ok {
			del = append(del, t)
		}
	}
	if len(del) == 0 {
		return nil
	}
	if err := a.DeleteTopics(ctx, del...); err != nil {
		return err
	}
	for {
		ts, err := a.ListTopics(ctx)
		if err == nil {
			left := 0
			for _, t := range del {
				if _, ok := ts[t]; ok {
					left++
				}
			}
			if left == 0 {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topics %v still listed after deletion: %w", del, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// perfRecord samples pid with `perf record -g` into file until the returned func is called.
func perfRecord(pid int, file string) func() {
	cmd := exec.Command("perf", "record", "-F", "499", "-g", "-o", file, "-p", strconv.Itoa(pid))
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		logf("perf record: %v", err)
		return func() {}
	}
	logf("perf record -p %d -> %s", pid, file)
	return func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		_ = cmd.Wait()
	}
}
