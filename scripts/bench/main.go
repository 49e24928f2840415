// Command bench compares `kmm replicate` with Apache MirrorMaker 2 (dedicated mode) on the local
// test bed (scripts/testbed.sh): throughput, CPU, memory and start-up on two bulk workloads,
// end-to-end latency at a steady rate, and the ceiling the same librdkafka clients reach when
// they only consume or only produce. It writes docs/benchmarks.{json,md,png}.
//
//	go run ./scripts/bench            (make bench)
//	BENCH_SMOKE=1 go run ./scripts/bench   (make bench-smoke: tiny sizes, asserts it all works)
//
// BENCH_MODE=render re-renders benchmarks.md and .png from $BENCH_OUT/benchmarks.json (after
// editing scripts/bench/notes.md); BENCH_MODE=engine is a profiling aid (see engine.go).
//
// Environment: BENCH_SCALE (float, default 1: 1M x 1 KB and 3M x 100 B records, latency 60 s),
// BENCH_REPEATS (default 3), BENCH_TASKS (tasks.max for both, default 2), BENCH_LATENCY_RATE
// (default 5000 rec/s), BENCH_LATENCY_SECONDS (default 60 x BENCH_SCALE, at least 10),
// BENCH_MM2_HEAP (default "-Xms256m -Xmx512m"), BENCH_OUT (output directory, default docs; smoke:
// .testbed/bench-smoke), KMM_BIN (default bin/kmm), KMM_TESTBED_DIR (default .testbed),
// BENCH_ONLY (rows, see config.Only), BENCH_WORKLOADS (1k,100b); the sustained rows'
// BENCH_SUSTAIN_* (sustain.go), the WAN rows' BENCH_WAN_* (wan.go) and the many-partitions rows'
// BENCH_PARTITIONS_SIZES, _TOPICS, _RECORDS, _TOOLS, _TIMEOUT, _RATE, _SUSTAIN and _GROUPS
// (partitions.go). The bulk workloads are loaded only for rows that copy them: BENCH_ONLY=partitions
// loads nothing but its own topics.
//
// The bed's clusters are shared: every topic this driver makes starts with bench-<run id>- (or is
// the remote copy A.bench-<run id>-... of one) and is deleted at the end; every kmm and MM2
// process it starts is stopped by pid.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/rdkafka"
	"github.com/kmmproject/kmm/scripts/wanlink"
)

type config struct {
	Root, Bed, KMMBin, OutDir, LogDir string
	A, B, C                           string
	ID                                string
	Scale                             float64
	Repeats, Tasks                    int
	Smoke                             bool
	LatencyRate                       int
	LatencySecs                       float64
	MM2Heap                           string
	Poll                              time.Duration
	Only                              map[string]bool // BENCH_ONLY: ceiling, kmm, mm2, sustained, latency, verify, workers, wan, eos, map, partitions (default all but partitions; verify needs kmm; smoke: all but wan, eos, map and partitions)
	Workloads                         map[string]bool // BENCH_WORKLOADS: 1k, 100b (default both)
	Perf                              bool            // BENCH_PERF=1: perf record every kmm run (profiling only)

	admins      map[string]*rdkafka.Admin
	brokers     map[string]int
	kmmConsumer rdkafka.Config
	kmmProducer rdkafka.Config
	kmmForce    bool        // kmm replicate has --force
	pending     []runResult // verify rows measured during a kmm run, recorded after it
}

// workloadRows are the BENCH_ONLY rows that copy the bulk workloads (1k, 100b).
var workloadRows = []string{"ceiling", "kmm", "mm2", "sustained", "workers", "wan", "eos", "map"}

// loadsWorkloads: some row of the run copies the bulk workloads (loading them takes a minute).
func (c *config) loadsWorkloads() bool {
	return os.Getenv("BENCH_MODE") == "engine" || slices.ContainsFunc(workloadRows, func(r string) bool { return c.Only[r] })
}

func (c *config) runTimeout(w *workload) time.Duration {
	return 180*time.Second + time.Duration(w.Records/4000)*time.Second
}

func logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "bench %s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
}

func envFloat(k string, def float64) float64 {
	if v := os.Getenv(k); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 {
			fatalf("%s=%q: want a positive number", k, v)
		}
		return f
	}
	return def
}

func envInt(k string, def int) int {
	if v := os.Getenv(k); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			fatalf("%s=%q: want a positive integer", k, v)
		}
		return n
	}
	return def
}

func listEnv(k, def string) map[string]bool {
	v := os.Getenv(k)
	if v == "" {
		v = def
	}
	out := map[string]bool{}
	for _, x := range strings.Split(v, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out[x] = true
		}
	}
	return out
}

func fatalf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", a...)
	os.Exit(1)
}

func repoRoot() string {
	dir, _ := os.Getwd()
	for d := dir; d != "/"; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(d, "scripts", "mm2.sh")); err == nil {
				return d
			}
		}
	}
	return dir
}

func loadConfig() *config {
	root := repoRoot()
	off := envInt("KMM_TESTBED_PORT_OFFSET", 0) // the bed's port shift (scripts/testbed.sh)
	c := &config{Root: root, A: fmt.Sprintf("127.0.0.1:%d", wanlink.BasePort("A")+off), B: fmt.Sprintf("127.0.0.1:%d", wanlink.BasePort("B")+off), C: fmt.Sprintf("127.0.0.1:%d", wanlink.BasePort("C")+off), Poll: 100 * time.Millisecond}
	c.Smoke = os.Getenv("BENCH_SMOKE") == "1" || os.Getenv("BENCH_SMOKE") == "true"
	c.Bed = os.Getenv("KMM_TESTBED_DIR")
	if c.Bed == "" {
		c.Bed = filepath.Join(root, ".testbed")
	}
	c.KMMBin = os.Getenv("KMM_BIN")
	if c.KMMBin == "" {
		c.KMMBin = filepath.Join(root, "bin", "kmm")
	}
	defScale, defRepeats, defOut := 1.0, 3, filepath.Join(root, "docs")
	if c.Smoke {
		defScale, defRepeats, defOut = 0.002, 1, filepath.Join(c.Bed, "bench-smoke")
	}
	c.Scale = envFloat("BENCH_SCALE", defScale)
	c.Repeats = envInt("BENCH_REPEATS", defRepeats)
	c.Tasks = envInt("BENCH_TASKS", 2)
	c.LatencyRate = envInt("BENCH_LATENCY_RATE", 5000)
	defLat := math.Max(10, 60*c.Scale)
	if c.Smoke {
		defLat = 5
		if os.Getenv("BENCH_LATENCY_RATE") == "" {
			c.LatencyRate = 1000
		}
	}
	c.LatencySecs = envFloat("BENCH_LATENCY_SECONDS", defLat)
	c.MM2Heap = os.Getenv("BENCH_MM2_HEAP")
	if c.MM2Heap == "" {
		c.MM2Heap = "-Xms256m -Xmx512m"
	}
	c.OutDir = os.Getenv("BENCH_OUT")
	if c.OutDir == "" {
		c.OutDir = defOut
	}
	defOnly := "ceiling,kmm,mm2,sustained,latency,verify,workers,wan,eos,map"
	if c.Smoke {
		defOnly = "ceiling,kmm,mm2,sustained,latency,verify,workers" // the WAN rows take minutes: BENCH_ONLY=...,wan to include them
	}
	c.Only = listEnv("BENCH_ONLY", defOnly)
	c.Workloads = listEnv("BENCH_WORKLOADS", "1k,100b")
	c.Perf = os.Getenv("BENCH_PERF") == "1"
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	c.ID = hex.EncodeToString(b)
	c.LogDir = filepath.Join(c.Bed, "bench", c.ID)
	return c
}

// kmmClientSettings resolves, with kmm's own code (mm2conf + pkg/flow), the librdkafka settings
// `kmm replicate` gives its pipelines' source consumer and target producer for the benchmark's
// file; the ceiling adds the Copier's own with rdkafka.CopierSettings, so it uses the same clients.
func kmmClientSettings(cfg *config) (rdkafka.Config, rdkafka.Config, error) {
	file := filepath.Join(cfg.LogDir, "ceiling.properties")
	text := mm2Props(cfg, propsSpec{Target: "B", TargetBootstrap: cfg.B, Topic: "bench-" + cfg.ID + "-ceiling", RunName: "bench-" + cfg.ID + "-ceiling",
		Tasks: cfg.Tasks, Batching: true})
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		return nil, nil, err
	}
	mc, err := mm2conf.Load(mm2conf.LoadOptions{ConfigFile: file, Clusters: []string{"B"}})
	if err != nil {
		return nil, nil, err
	}
	flows, err := flow.FromMM2(mc)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range flows {
		if f.Name() == "A->B" && f.Enabled {
			return f.ReplicationConsumer(), f.ReplicationProducer(), nil
		}
	}
	return nil, nil, fmt.Errorf("no enabled flow A->B in %s", file)
}

func main() {
	cfg := loadConfig()
	if err := os.MkdirAll(cfg.LogDir, 0o755); err != nil {
		fatalf("%v", err)
	}
	if _, err := os.Stat(cfg.KMMBin); err != nil {
		fatalf("%s not found: run `make build` first", cfg.KMMBin)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		logf("%s: stopping (kmm/MM2 processes and bench topics are cleaned up)", s)
		cancel()
		<-sigs
		logf("second signal: exiting now")
		stopAll(cfg)
		os.Exit(130)
	}()
	if os.Getenv("BENCH_MODE") == "render" {
		os.Exit(render(cfg))
	}
	code := run(ctx, cfg)
	stopAll(cfg)
	os.Exit(code)
}

func run(ctx context.Context, cfg *config) int {
	logf("run id %s, scale %g, %d repeat(s), tasks.max %d, MM2 heap %q, logs in %s", cfg.ID, cfg.Scale, cfg.Repeats, cfg.Tasks, cfg.MM2Heap, cfg.LogDir)
	cfg.admins = map[string]*rdkafka.Admin{}
	for alias, boot := range map[string]string{"A": cfg.A, "B": cfg.B, "C": cfg.C} {
		a, err := rdkafka.NewAdmin("cluster "+alias, rdkafka.Config{"bootstrap.servers": boot, "log_level": "4"}) // no PARTCNT notices when bench topics are deleted
		if err != nil {
			logf("%v", err)
			return 1
		}
		defer a.Close()
		if _, err := a.Ping(ctx, 10*time.Second); err != nil {
			logf("test bed cluster %s (%s) not reachable: %v (start it with `make testbed-up`)", alias, boot, err)
			return 1
		}
		cfg.admins[alias] = a
	}
	cfg.brokers = brokerPIDs(cfg.Bed)
	cfg.kmmForce = strings.Contains(cmdOut(cfg.KMMBin, "replicate", "--help"), "--force")
	var err error
	if cfg.kmmConsumer, cfg.kmmProducer, err = kmmClientSettings(cfg); err != nil {
		logf("resolving kmm's client settings: %v", err)
		return 1
	}
	rep := &report{Config: reportConfig(cfg), Machine: machineFacts(cfg)}
	rep.Config.KMMConsumer, rep.Config.KMMProducer = cfg.kmmConsumer, cfg.kmmProducer
	rep.Config.PropsExample = mm2Props(cfg, propsSpec{Target: "B", TargetBootstrap: cfg.B, Topic: "bench-<id>-1k", RunName: "bench-<id>-kmm-1k-r1", Tasks: cfg.Tasks, Batching: true})
	rep.StartedAt = time.Now()
	rep.LoadAvgStart = loadAvg()

	var ws []*workload
	for _, w := range []*workload{
		{Name: "1k", ValueSize: 1024, Records: int64(math.Round(1_000_000 * cfg.Scale))},
		{Name: "100b", ValueSize: 100, Records: int64(math.Round(3_000_000 * cfg.Scale))},
	} {
		if cfg.Workloads[w.Name] && cfg.loadsWorkloads() {
			ws = append(ws, w)
		}
	}
	defer func() {
		var topics []string
		for _, w := range ws {
			topics = append(topics, w.Topic)
		}
		if err := deleteTopicsWait(context.Background(), cfg.admins["A"], topics...); err != nil {
			logf("warning: deleting the workload topics on A: %v", err)
		}
	}()
	for _, w := range ws {
		w.Partitions = 12
		w.Topic = fmt.Sprintf("bench-%s-%s", cfg.ID, w.Name)
		w.computeSizes()
		if err := createTopic(ctx, cfg.admins["A"], w.Topic, w.Partitions, nil); err != nil {
			logf("%v", err)
			return 1
		}
		logf("loading %d x %d B records into A %s", w.Records, w.ValueSize, w.Topic)
		if err := load(ctx, cfg.A, w); err != nil {
			logf("loading %s: %v", w.Topic, err)
			return 1
		}
		end, err := endOffsets(ctx, cfg.admins["A"], w.Topic, w.Partitions)
		if err != nil {
			logf("%v", err)
			return 1
		}
		w.End = end
		if sum(end) != w.Records {
			logf("%s holds %d records, want %d", w.Topic, sum(end), w.Records)
			return 1
		}
		logf("loaded %s in %.1f s (%.0f records/s)", w.Topic, w.LoadSeconds, float64(w.Records)/w.LoadSeconds)
		rep.Workloads = append(rep.Workloads, *w)
	}

	if os.Getenv("BENCH_MODE") == "engine" {
		return runEngine(ctx, cfg, ws)
	}

	failed := 0
	record := func(r runResult) {
		rep.Runs = append(rep.Runs, r)
		if !r.OK {
			failed++
			logf("FAILED %s %s rep %d: %s", r.Kind, r.Workload, r.Rep, r.Error)
			return
		}
		extra := ""
		if r.PeakRSSMB > 0 {
			extra = fmt.Sprintf(", start-up %.1f s, CPU %.1f s (%.1f s/GB), peak RSS %.0f MiB", r.StartupSec, r.CPUTransfer, r.CPUPerGB, r.PeakRSSMB)
		}
		logf("%-15s %-4s rep %d: %d records in %.1f s: %.0f rec/s, %.1f MB/s%s; others used %.2f cores",
			r.Kind, r.Workload, r.Rep, r.Records, r.TransferSec, r.RecPerSec, r.MBPerSec, extra, r.OtherCores)
	}
	for i := 1; i <= cfg.Repeats && ctx.Err() == nil; i++ {
		for wi, w := range ws {
			order := 0
			if cfg.Only["ceiling"] {
				for _, r := range runCeiling(ctx, cfg, w, i, order) {
					record(r)
				}
				order += 2
			}
			tools := []string{"kmm", "mm2"}
			if (i+wi)%2 == 0 {
				tools = []string{"mm2", "kmm"}
			}
			for _, tool := range tools {
				if (tool == "mm2" && cfg.Smoke && wi > 0) || !cfg.Only[tool] {
					continue // smoke: one MM2 start only
				}
				if ctx.Err() != nil {
					break
				}
				logf("%s %s rep %d ...", tool, w.Name, i)
				record(runReplication(ctx, cfg, tool, w, i, order))
				order++
				for _, r := range cfg.pending {
					record(r)
					order++
				}
				cfg.pending = nil
			}
		}
	}
	// Sustained rows: a backlog copied for a warm-up plus a window by each tool (sustain.go).
	if cfg.Only["sustained"] && ctx.Err() == nil {
		if err := runSustained(ctx, cfg, rep, ws, record, func(r runResult) {
			rep.Sustained = append(rep.Sustained, r)
			if !r.OK {
				failed++
				logf("FAILED sustained %s %s rep %d: %s", r.Kind, r.Workload, r.Rep, r.Error)
				return
			}
			plane := ""
			if r.Plane != "" {
				plane = " (" + r.Plane + " plane)"
			}
			logf("sustained %-5s %-4s rep %d%s: %d records in a %.1f s window: %.0f rec/s, %.1f MB/s, CPU %.1f s/GB (%.2f cores), RSS peak %.0f / steady %.0f MiB (%d samples), start-up %.1f s; others used %.2f cores",
				r.Kind, r.Workload, r.Rep, plane, r.Records, r.TransferSec, r.RecPerSec, r.MBPerSec, r.CPUPerGB, div(r.CPUTransfer, r.TransferSec),
				r.WindowPeakRSSMB, r.SteadyRSSMB, r.RSSSamples, r.StartupSec, r.OtherCores)
		}); err != nil && ctx.Err() == nil {
			logf("sustained rows: %v", err)
			failed++
		}
	}
	// Paired rows: kmm with one setting changed beside kmm without it, one after the other in
	// the same run, order alternating, so the ratio holds whatever the machine's load does.
	//
	// Exactly-once (BENCH_ONLY=eos): kmm in exactly-once mode (exactly.once.source.support =
	// enabled) and kmm at least once ("kmm-eos-baseline"). A run ends when the target's end
	// offsets reach the source's: in exactly-once mode they include one commit marker per
	// partition per transaction (a few per second), so the run may end that many records early
	// (< 0.01 % of a workload).
	pairedRuns(ctx, cfg, ws, record, "eos", "exactly-once", "kmm-eos-baseline", "kmm-eos", []string{"B.exactly.once.source.support = enabled"})
	// The offset map (BENCH_ONLY=map): kmm keeping the map (the default, "kmm-map") beside kmm
	// with kmm.offset.map.enabled = false ("kmm-nomap"): the map's cost on the copy path.
	pairedRuns(ctx, cfg, ws, record, "map", "offset map", "kmm-nomap", "kmm-map", nil, "kmm.offset.map.enabled = false")
	// Workers: 1, 2 and 3 `kmm replicate` processes sharing the flow (kmm.workers.enabled), then
	// 3 with one killed a third of the way (docs/workers.md).
	for i := 1; i <= cfg.Repeats && ctx.Err() == nil && cfg.Only["workers"]; i++ {
		for wi, w := range ws {
			if cfg.Smoke && wi > 0 {
				break // smoke: the harness once
			}
			for order, n := range []int{1, 2, 3, 3} {
				if ctx.Err() != nil {
					break
				}
				kill := order == 3
				logf("workers %d%s %s rep %d ...", n, map[bool]string{true: " (one killed)"}[kill], w.Name, i)
				r := runWorkers(ctx, cfg, w, n, kill, i, order)
				record(r)
				if r.OK {
					logf("  %d worker(s): %.0f rec/s, CPU of all workers together %.1f s per GB copied%s", n, r.RecPerSec, r.CPUPerGB,
						map[bool]string{true: fmt.Sprintf(", resumed %.1f s after the kill", r.ResumeSec)}[kill])
				}
			}
		}
	}
	for i := 1; i <= min(cfg.Repeats, envInt("BENCH_WAN_REPEATS", 1)) && ctx.Err() == nil && cfg.Only["wan"] && len(ws) > 0; i++ {
		if err := runWAN(ctx, cfg, ws[0], i, func(r wanRun) {
			rep.WAN = append(rep.WAN, r)
			if !r.OK {
				failed++
				logf("FAILED wan %s %s %d ms rep %d: %s", r.Kind, r.Side, r.OneWayMs, r.Rep, r.Error)
				return
			}
			logf("wan %-3s %-6s +%2d ms rep %d: %.1f MB/s (%d records in %.1f s), start-up %.1f s", r.Kind, r.Side, r.OneWayMs, r.Rep, r.MBPerSec, r.Records, r.TransferSec, r.StartupSec)
		}); err != nil {
			logf("wan rows: %v", err)
			failed++
			break
		}
	}
	for i := 1; i <= cfg.Repeats && ctx.Err() == nil && cfg.Only["verify"]; i++ {
		n := envInt("BENCH_VERIFY_PARTITIONS", 1000)
		if cfg.Smoke && os.Getenv("BENCH_VERIFY_PARTITIONS") == "" {
			n = 24
		}
		logf("verify metadata over %d partitions rep %d ...", n, i)
		r := verifyMetadata(ctx, cfg, n, i)
		record(r)
	}
	for i := 1; i <= cfg.Repeats && ctx.Err() == nil && cfg.Only["latency"]; i++ {
		tools := []string{"kmm", "mm2"}
		if i%2 == 0 {
			tools = []string{"mm2", "kmm"}
		}
		if v := os.Getenv("BENCH_LATENCY_TOOLS"); v != "" {
			tools = strings.Split(v, ",") // experiments, e.g. "kmm,engine" (engine: see engine.go)
		}
		for order, tool := range tools {
			if (tool == "mm2" && cfg.Smoke) || (!cfg.Only[tool] && tool != "engine") {
				continue
			}
			if ctx.Err() != nil {
				break
			}
			logf("latency %s rep %d: %d rec/s for %.0f s ...", tool, i, cfg.LatencyRate, cfg.LatencySecs)
			l := runLatency(ctx, cfg, tool, i, order)
			rep.Latency = append(rep.Latency, l)
			if !l.OK {
				failed++
				logf("FAILED latency %s rep %d: %s", tool, i, l.Error)
				continue
			}
			logf("latency %s rep %d: %d records at %.0f rec/s: p50 %.1f ms, p99 %.1f ms, max %.1f ms (copy leg, source append -> target append: p50 %.0f ms, p99 %.0f ms, max %.0f ms; source leg, produce -> source append: p50 %.0f ms, p99 %.0f ms); %.2f cores, start-up %.1f s",
				tool, i, l.Records, l.AchievedRate, l.P50, l.P99, l.Max, l.CopyP50, l.CopyP99, l.CopyMax, l.SourceP50, l.SourceP99, l.Cores, l.StartupSec)
		}
	}
	// Many partitions (BENCH_ONLY=partitions only: partitions.go). MM2's known limit (no remote
	// topics at 10,000 partitions) shows as a failed row but does not fail the benchmark.
	if cfg.Only["partitions"] && ctx.Err() == nil {
		if err := runPartitions(ctx, cfg, func(r partitionsResult) {
			rep.Partitions = append(rep.Partitions, r)
			if !r.OK && r.KnownLimit == "" {
				failed++
			}
		}); err != nil && ctx.Err() == nil {
			logf("partitions rows: %v", err)
			failed++
		}
	}
	if ctx.Err() != nil {
		logf("interrupted: no report written")
		return 130
	}
	rep.FinishedAt = time.Now()
	rep.LoadAvgEnd = loadAvg()
	rep.summarize()
	if err := rep.write(cfg); err != nil {
		logf("writing the report: %v", err)
		return 1
	}
	if failed > 0 {
		logf("%d measurement(s) failed; see the report and %s", failed, cfg.LogDir)
		return 1
	}
	if cfg.Smoke {
		if err := smokeCheck(cfg, rep); err != nil {
			logf("smoke check failed: %v", err)
			return 1
		}
		logf("smoke OK: %s", strings.Join([]string{filepath.Join(cfg.OutDir, "benchmarks.json"), filepath.Join(cfg.OutDir, "benchmarks.md"), filepath.Join(cfg.OutDir, "benchmarks.png")}, ", "))
	}
	logf("done: %s (per-run files and logs kept in %s)", cfg.OutDir, cfg.LogDir)
	return 0
}

// render rewrites benchmarks.md and benchmarks.png from an existing benchmarks.json.
func render(cfg *config) int {
	b, err := os.ReadFile(filepath.Join(cfg.OutDir, "benchmarks.json"))
	if err != nil {
		logf("%v", err)
		return 1
	}
	var rep report
	if err := json.Unmarshal(b, &rep); err != nil {
		logf("%v", err)
		return 1
	}
	rep.summarize()
	if err := rep.write(cfg); err != nil {
		logf("%v", err)
		return 1
	}
	logf("rendered %s", cfg.OutDir)
	return 0
}

// medianOf is the median of xs (not empty).
func medianOf(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// pairedRuns runs, when BENCH_ONLY has only, kmm as base (with baseExtra in its file) and as
// variant (variantExtra) for every workload and repeat, order alternating, records each run and
// logs the variant's records/s and CPU per GB as a ratio of the base's (medians).
func pairedRuns(ctx context.Context, cfg *config, ws []*workload, record func(runResult), only, what, base, variant string, variantExtra []string, baseExtra ...string) {
	if !cfg.Only[only] {
		return
	}
	rates, cpu := map[string][]float64{}, map[string][]float64{}
	for i := 1; i <= cfg.Repeats && ctx.Err() == nil; i++ {
		for wi, w := range ws {
			kinds := []string{base, variant}
			if (i+wi)%2 == 0 {
				kinds = []string{variant, base}
			}
			for oi, k := range kinds {
				var o runOpts
				if k == variant {
					o.Extra = variantExtra
				} else {
					o.Extra = baseExtra
				}
				logf("%s %s rep %d ...", k, w.Name, i)
				r := runReplicationWith(ctx, cfg, k, w, i, oi, o)
				record(r)
				if r.OK {
					rates[k+" "+w.Name] = append(rates[k+" "+w.Name], r.RecPerSec)
					cpu[k+" "+w.Name] = append(cpu[k+" "+w.Name], r.CPUPerGB)
				}
			}
		}
	}
	for _, w := range ws {
		b, v := rates[base+" "+w.Name], rates[variant+" "+w.Name]
		if len(b) > 0 && len(v) > 0 && medianOf(b) > 0 {
			cb, cv := medianOf(cpu[base+" "+w.Name]), medianOf(cpu[variant+" "+w.Name])
			logf("%s %s: %.0f rec/s against %.0f without (median of %d): ratio %.3f; CPU %.1f s/GB against %.1f: ratio %.3f",
				what, w.Name, medianOf(v), medianOf(b), len(v), medianOf(v)/medianOf(b), cv, cb, div(cv, cb))
		}
	}
}
