package main

// BENCH_MODE=engine: profiling aid. Runs kmm's replicator engine (pkg/replicator, the code
// behind `kmm replicate`) inside this process on the bench workloads, A->B, so that
//   - a Go CPU profile can be taken (BENCH_CPUPROFILE=file.pprof; `go tool pprof`), and
//   - librdkafka settings the MM2 file cannot express can be tried before changing kmm:
//     BENCH_ENGINE_CONSUMER / BENCH_ENGINE_PRODUCER = "name=value,name=value" are applied on
//     top of what pkg/flow resolves (e.g. queued.max.messages.kbytes=16384).
// It prints one line per workload: records/s, CPU-s/GB and the growth of this process's peak RSS
// during the run (VmHWM is reset through /proc/self/clear_refs first).

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/flow"
	kmmreplicator "github.com/kmmproject/kmm/pkg/replicator"
)

func parseKV(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if ok {
			out[k] = v
		}
	}
	return out
}

func runEngine(ctx context.Context, cfg *config, ws []*workload) int {
	consOver := parseKV(os.Getenv("BENCH_ENGINE_CONSUMER"))
	prodOver := parseKV(os.Getenv("BENCH_ENGINE_PRODUCER"))
	for _, w := range ws {
		runName := fmt.Sprintf("bench-%s-engine-%s", cfg.ID, w.Name)
		logDir := filepath.Join(cfg.LogDir, runName)
		_ = os.MkdirAll(logDir, 0o755)
		props := filepath.Join(logDir, "mm2.properties")
		_ = os.WriteFile(props, []byte(mm2Props(cfg, propsSpec{Target: "B", TargetBootstrap: cfg.B, Topic: w.Topic, RunName: runName, Tasks: cfg.Tasks, Batching: true})), 0o644)
		mc, err := mm2conf.Load(mm2conf.LoadOptions{ConfigFile: props, Clusters: []string{"B"}})
		if err != nil {
			logf("%v", err)
			return 1
		}
		flows, err := flow.FromMM2(mc)
		if err != nil {
			logf("%v", err)
			return 1
		}
		for _, f := range flows {
			for k, v := range consOver {
				f.SourceConsumer[k] = v
			}
			for k, v := range prodOver {
				f.TargetProducer[k] = v
			}
		}
		adm := cfg.admins["B"]
		remote := "A." + w.Topic
		perRun := []string{remote, runName + "-offsets"}
		_ = deleteTopicsWait(ctx, adm, perRun...)

		runtime.GC()
		debug.FreeOSMemory()
		_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
		base, _ := procStatusKB(os.Getpid(), "VmHWM")
		var prof *os.File
		if p := os.Getenv("BENCH_CPUPROFILE"); p != "" {
			prof, _ = os.Create(strings.ReplaceAll(p, "WORKLOAD", w.Name))
			_ = pprof.StartCPUProfile(prof)
		}
		cpu0 := selfCPU()
		start := time.Now()
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- kmmreplicator.Run(rctx, flows, kmmreplicator.Options{Force: true, ProgressEvery: -1}) }()
		var first, end time.Time
		var cpuFirst float64
		for end.IsZero() {
			select {
			case err := <-done:
				logf("engine stopped early: %v", err)
				cancel()
				return 1
			case <-time.After(cfg.Poll):
			}
			ends, err := endOffsets(ctx, adm, remote, w.Partitions)
			if err != nil {
				continue
			}
			if first.IsZero() && sum(ends) > 0 {
				first, cpuFirst = time.Now(), selfCPU()
			}
			complete := true
			for p := range ends {
				if ends[p] < w.End[p] {
					complete = false
				}
			}
			if complete {
				end = time.Now()
			}
		}
		cpu := selfCPU() - cpuFirst
		hwm, _ := procStatusKB(os.Getpid(), "VmHWM")
		cancel()
		<-done
		if prof != nil {
			pprof.StopCPUProfile()
			prof.Close()
		}
		dt := max(end.Sub(first).Seconds(), cfg.Poll.Seconds())
		logf("engine %-4s: %d records in %.1f s: %.0f rec/s, %.1f MB/s, CPU %.1f s (%.1f s/GB, %.1f s total), peak RSS +%.0f MiB (base %.0f MiB), start-up %.1f s; consumer %v producer %v",
			w.Name, w.Records, dt, float64(w.Records)/dt, float64(w.TotalBytes)/1e6/dt, cpu, cpu/(float64(w.TotalBytes)/1e9), selfCPU()-cpu0,
			float64(hwm-base)/1024, float64(base)/1024, first.Sub(start).Seconds(), consOver, prodOver)
		_ = deleteTopicsWait(context.Background(), adm, perRun...)
	}
	return 0
}

// startEngine runs kmm's engine in this process as a latency-run "replicator" (tool "engine",
// target B), with the BENCH_ENGINE_* overrides: for trying librdkafka settings on latency. Its
// CPU and RSS figures include the driver.
func startEngine(cfg *config, name, props, logDir string) (*replicator, error) {
	mc, err := mm2conf.Load(mm2conf.LoadOptions{ConfigFile: props, Clusters: []string{"B"}})
	if err != nil {
		return nil, err
	}
	flows, err := flow.FromMM2(mc)
	if err != nil {
		return nil, err
	}
	consOver := parseKV(os.Getenv("BENCH_ENGINE_CONSUMER"))
	prodOver := parseKV(os.Getenv("BENCH_ENGINE_PRODUCER"))
	for _, f := range flows {
		for k, v := range consOver {
			f.SourceConsumer[k] = v
		}
		for k, v := range prodOver {
			f.TargetProducer[k] = v
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &replicator{tool: "engine", name: name, pid: os.Getpid(), start: time.Now(), waited: make(chan struct{}), logDir: logDir,
		live: filepath.Join(logDir, "engine.log"), cancel: cancel}
	go func() {
		err := kmmreplicator.Run(ctx, flows, kmmreplicator.Options{Force: true, ProgressEvery: -1})
		if err != nil {
			_ = os.WriteFile(r.live, []byte(err.Error()+"\n"), 0o644)
		}
		close(r.waited)
	}()
	register(r)
	return r, nil
}
