package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// runWorkers replicates workload w with n `kmm replicate` processes sharing the flow
// (kmm.workers.enabled) and measures the total records/s and the CPU of all of them per GB.
// With kill, one of the n is killed (SIGKILL) once a third of the records are on the target,
// and ResumeSec is the longest time any unfinished partition's end on the target stood still
// after the kill (the killed worker's partitions wait for the session timeout and a rebalance).
func runWorkers(ctx context.Context, cfg *config, w *workload, n int, kill bool, rep, order int) runResult {
	kind := fmt.Sprintf("kmm-workers-%d", n)
	if kill {
		kind += "-kill"
	}
	res := runResult{Kind: kind, Workload: w.Name, Rep: rep, Order: order, LoadAvgStart: loadAvg()}
	adm := cfg.admins["B"]
	runName := fmt.Sprintf("bench-%s-%s-%s-r%d", cfg.ID, kind, w.Name, rep)
	logDir := filepath.Join(cfg.LogDir, runName)
	res.LogDir = logDir
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		res.Error = err.Error()
		return res
	}
	props := filepath.Join(logDir, "mm2.properties")
	body := mm2Props(cfg, propsSpec{Target: "B", TargetBootstrap: cfg.B, Topic: w.Topic, RunName: runName, Tasks: cfg.Tasks, Batching: true}) +
		"kmm.workers.enabled = true\n"
	if err := os.WriteFile(props, []byte(body), 0o644); err != nil {
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
			logf("warning: cleanup of %s on B: %v", strings.Join(perRun, ", "), err)
		}
	}()
	var rs []*replicator
	defer func() {
		for _, r := range rs {
			if !r.exited() {
				r.stop(cfg)
			}
		}
	}()
	start := time.Now()
	for i := 0; i < n; i++ {
		dir := filepath.Join(logDir, fmt.Sprintf("w%d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			res.Error = err.Error()
			return res
		}
		r, err := startKMM(cfg, fmt.Sprintf("%s-w%d", runName, i), props, "B", dir)
		if err != nil {
			res.Error = err.Error()
			return res
		}
		rs = append(rs, r)
	}
	var killedCPU float64 // the killed worker's CPU, sampled just before the kill
	cpu := func() float64 {
		s := killedCPU
		for i, r := range rs {
			if kill && i == 0 && killedCPU > 0 {
				continue
			}
			c, _ := procCPU(r.pid)
			s += c
		}
		return s
	}
	deadline := start.Add(cfg.runTimeout(w) + time.Minute)
	var first, done, killedAt time.Time
	var firstCPU float64
	var lastEnds []int64
	lastMove := make([]time.Time, w.Partitions)
	for {
		if ctx.Err() != nil {
			res.Error = ctx.Err().Error()
			return res
		}
		for i, r := range rs {
			if r.exited() && !(kill && i == 0) {
				res.Error = fmt.Sprintf("worker %d exited early; log tail:\n%s", i, r.logTail(30))
				return res
			}
		}
		if time.Now().After(deadline) {
			res.Error = fmt.Sprintf("%d workers did not replicate %d records within %s", n, sum(w.End), cfg.runTimeout(w)+time.Minute)
			return res
		}
		next := time.Now().Add(cfg.Poll)
		ends, err := endOffsets(ctx, adm, remote, w.Partitions)
		if err == nil {
			now := time.Now()
			if first.IsZero() && sum(ends) > 0 {
				first, firstCPU = now, cpu()
			}
			complete := true
			for p := range ends {
				if lastEnds != nil && ends[p] != lastEnds[p] {
					if !killedAt.IsZero() && lastMove[p].Before(killedAt) {
						// the first move after the kill: the wait is since the kill
						res.ResumeSec = max(res.ResumeSec, now.Sub(killedAt).Seconds())
					}
					lastMove[p] = now
				}
				if ends[p] < w.End[p] {
					complete = false
				}
			}
			lastEnds = ends
			if kill && killedAt.IsZero() && sum(ends)*3 >= sum(w.End) {
				killedCPU, _ = procCPU(rs[0].pid)
				_ = syscall.Kill(rs[0].pid, syscall.SIGKILL)
				killedAt = time.Now()
				for p := range lastMove {
					lastMove[p] = killedAt.Add(-time.Nanosecond)
				}
			}
			if complete && (!kill || !killedAt.IsZero()) {
				done = now
				break
			}
		}
		time.Sleep(time.Until(next))
	}
	doneCPU := cpu()
	res.LoadAvgEnd = loadAvg()
	res.Records = sum(w.End)
	res.Bytes = w.TotalBytes
	res.StartupSec = first.Sub(start).Seconds()
	res.TotalSec = done.Sub(start).Seconds()
	res.TransferSec = max(done.Sub(first).Seconds(), cfg.Poll.Seconds())
	res.CPUTotal = doneCPU
	res.CPUTransfer = doneCPU - firstCPU
	res.finishRates()
	res.OK = true
	return res
}

// workersMarkdown writes the workers rows: each run's records/s as a ratio of one worker's in
// the same repetition and workload, and the CPU of all workers per GB.
func (rep *report) workersMarkdown(p func(string, ...any)) {
	var rows []runResult
	for _, r := range rep.Runs {
		if strings.HasPrefix(r.Kind, "kmm-workers-") {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return
	}
	p("## Workers (kmm.workers.enabled): one flow shared by 1, 2 and 3 `kmm replicate` processes\n\n")
	p("On one machine the limit is its cores: more workers add no cores, so records/s is expected near one worker's (differences are the machine's noise, see the load average); the CPU per GB of all workers together shows the cost of coordination. The kill row kills one of 3 workers a third of the way (docs/workers.md).\n\n")
	p("| run | workload | rep | records/s | vs 1 worker | CPU-s/GB (all workers) | resumed after kill (s) | load average at start |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		ratio := "–"
		for _, b := range rows {
			if b.Kind == "kmm-workers-1" && b.Workload == r.Workload && b.Rep == r.Rep && b.OK && b.RecPerSec > 0 && r.OK {
				ratio = fmt.Sprintf("%.2fx", r.RecPerSec/b.RecPerSec)
			}
		}
		resume := "–"
		if strings.HasSuffix(r.Kind, "-kill") && r.OK {
			resume = fmt.Sprintf("%.1f", r.ResumeSec)
		}
		if !r.OK {
			p("| %s | %s | %d | failed: %s | | | | |\n", r.Kind, r.Workload, r.Rep, strings.SplitN(r.Error, "\n", 2)[0])
			continue
		}
		p("| %s | %s | %d | %.0f | %s | %.1f | %s | %s |\n", r.Kind, r.Workload, r.Rep, r.RecPerSec, ratio, r.CPUPerGB, resume, r.LoadAvgStart)
	}
	p("\n")
}
