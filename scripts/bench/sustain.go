package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Sustained rows (issue 16 item 3): each replicator copies a backlog large enough to keep it
// busy for the whole measurement, and throughput, CPU per GB and RSS are taken over a window of
// BENCH_SUSTAIN_SECONDS that starts BENCH_SUSTAIN_WARMUP_SECONDS after the first record reached
// the target, the same for every tool (MM2's JIT compiles the hot path during its first seconds;
// a run of a few seconds would count that against it).
//
//	BENCH_ONLY=sustained               only these rows (and the ceiling they are compared with)
//	BENCH_SUSTAIN_SECONDS=60           measurement window (smoke: 3)
//	BENCH_SUSTAIN_WARMUP_SECONDS=15    excluded after the first record (smoke: 1)
//	BENCH_SUSTAIN_TOOLS=kmm,mm2 (default; kmm-c: kmm with KMM_DATA_PLANE=c, the default plane since the C plane became it)
//	BENCH_SUSTAIN_REPEATS              repetitions (default BENCH_REPEATS)
//	BENCH_SUSTAIN_MAX_GB=24            cap on the backlog's payload per workload (smoke: 1, sized for SmokeSustainRate; smaller and the C plane copies it all within a few polls;
//	                                   at 16 GB / 30M, kmm copied the whole backlog before the window ended in 3 of 6 repetitions)
//	BENCH_SUSTAIN_MAX_RECORDS=50000000 cap on the backlog's records per workload (loading 100 B
//	                                   records is bound by records/s, not bytes)
//	BENCH_SUSTAIN_RATE                 records/s the backlog is sized for (default: 3 x the
//	                                   ceiling measured in the same run, see sustainBacklog)
//
// The backlog is a topic of its own on A (bench-<id>-sustain-<workload>), loaded once per
// workload before the first sustained row and deleted after the last one; every row copies it
// from offset 0 to a fresh remote topic. A row whose tool copies the whole backlog before its
// window ends fails (outside bench-smoke): the figure would include the tail.

type sustainSettings struct {
	window, warmup time.Duration
	tools          []string
	repeats        int
	maxGB          float64
	maxRecords     int64
	rate           float64 // 0: from the ceiling
}

// sustainFactor: the C data plane reached 1.6-2.5x the (Go-client) ceiling's records/s
// (notes.md; run 33bf5a emptied a backlog sized for 2x on 100 B in all three repetitions), so
// the backlog is sized for three times the ceiling (the record and byte caps still apply).
const sustainFactor = 3.0

func sustainConfig(cfg *config) (sustainSettings, error) {
	s := sustainSettings{repeats: envInt("BENCH_SUSTAIN_REPEATS", cfg.Repeats)}
	defWin, defWarm, defGB := 60.0, 15.0, 24.0
	if cfg.Smoke {
		// 1 GB, sized from a fixed rate: the smoke's ceilings (2,000 records) are too short
		// to size from, and a CI rehearsal measured 4,982 rec/s there, loaded 0.2 GB, and kmm
		// copied it all ~0.1 s into the window: too short to measure any CPU (smoke check
		// failed). 1 GB outlasts the 4 s of warm-up and window up to ~250 MB/s.
		defWin, defWarm, defGB = 3, 1, 1.0
		s.rate = SmokeSustainRate
	}
	s.window = time.Duration(envFloat("BENCH_SUSTAIN_SECONDS", defWin) * float64(time.Second))
	s.warmup = time.Duration(envFloat("BENCH_SUSTAIN_WARMUP_SECONDS", defWarm) * float64(time.Second))
	s.maxGB = envFloat("BENCH_SUSTAIN_MAX_GB", defGB)
	s.maxRecords = int64(envInt("BENCH_SUSTAIN_MAX_RECORDS", 50_000_000))
	if os.Getenv("BENCH_SUSTAIN_RATE") != "" {
		s.rate = envFloat("BENCH_SUSTAIN_RATE", 0)
	}
	for _, v := range strings.Split(envStr("BENCH_SUSTAIN_TOOLS", "kmm,mm2"), ",") {
		if v = strings.TrimSpace(v); v != "kmm" && v != "kmm-c" && v != "mm2" {
			return s, fmt.Errorf("BENCH_SUSTAIN_TOOLS: %q is none of kmm, kmm-c, mm2", v)
		}
		s.tools = append(s.tools, v)
	}
	return s, nil
}

// SmokeSustainRate is the rate the smoke's sustained backlog is sized for (then capped at 1 GB).
const SmokeSustainRate = 1_000_000

// sustainBacklog is the number of records of w to load: enough for rate records/s over the
// warm-up, the window and 10 s of start-up, at most maxGB of payload and maxRecords records.
func sustainBacklog(s sustainSettings, w *workload, ceiling float64) (int64, bool) {
	rate := s.rate
	if rate == 0 {
		rate = sustainFactor * ceiling
	}
	n := int64(math.Ceil(rate * (s.warmup + s.window + 10*time.Second).Seconds()))
	capN := min(int64(s.maxGB*1e9/float64(w.RecordBytes)), s.maxRecords)
	if n > capN {
		return capN, true
	}
	return max(n, int64(w.Partitions)), false
}

var planeRE = regexp.MustCompile(`\((\w+) data plane\)`)

// kmmPlane is the data plane kmm's start line names ("" when not found).
func kmmPlane(logDir string) string {
	for _, f := range []string{"kmm.ndjson", "kmm.stderr"} {
		b, _ := os.ReadFile(logDir + "/" + f)
		if m := planeRE.FindSubmatch(b); m != nil {
			return string(m[1])
		}
	}
	return ""
}

// runSustained measures the sustained rows of every workload in ws; ceiling rows it has to add
// (BENCH_ONLY without ceiling) go to recordRun, the sustained rows to record.
func runSustained(ctx context.Context, cfg *config, rep *report, ws []*workload, recordRun, record func(runResult)) error {
	s, err := sustainConfig(cfg)
	if err != nil {
		return err
	}
	for wi, w := range ws {
		if cfg.Smoke && wi > 0 {
			break // smoke: one workload
		}
		// The ceiling of every repetition, measured now if the run has none.
		for i := 1; i <= s.repeats && ctx.Err() == nil; i++ {
			if _, ok := rep.ceilingRate(w.Name, i); !ok {
				logf("ceiling %s rep %d (for the sustained rows) ...", w.Name, i)
				for _, r := range runCeiling(ctx, cfg, w, i, 100) {
					recordRun(r)
				}
			}
		}
		ceil, ok := rep.ceilingRate(w.Name, 1)
		if !ok && s.rate == 0 {
			return fmt.Errorf("%s: no ceiling to size the sustained backlog from (set BENCH_SUSTAIN_RATE)", w.Name)
		}
		n, capped := sustainBacklog(s, w, ceil)
		bw := &workload{Name: w.Name, Topic: fmt.Sprintf("bench-%s-sustain-%s", cfg.ID, w.Name), Records: n, ValueSize: w.ValueSize, Partitions: w.Partitions}
		bw.computeSizes()
		if err := createTopic(ctx, cfg.admins["A"], bw.Topic, bw.Partitions, nil); err != nil {
			return err
		}
		err := func() error {
			defer func() {
				if err := deleteTopicsWait(context.Background(), cfg.admins["A"], bw.Topic); err != nil {
					logf("warning: deleting %s on A: %v", bw.Topic, err)
				}
			}()
			note := ""
			if capped {
				note = fmt.Sprintf(" (capped by BENCH_SUSTAIN_MAX_GB=%g or BENCH_SUSTAIN_MAX_RECORDS=%d)", s.maxGB, s.maxRecords)
			}
			logf("sustained %s: loading a backlog of %d x %d B records (%.1f GB)%s into A %s", w.Name, n, w.ValueSize, float64(bw.TotalBytes)/1e9, note, bw.Topic)
			if err := load(ctx, cfg.A, bw); err != nil {
				return fmt.Errorf("loading %s: %w", bw.Topic, err)
			}
			end, err := endOffsets(ctx, cfg.admins["A"], bw.Topic, bw.Partitions)
			if err != nil {
				return err
			}
			if sum(end) != n {
				return fmt.Errorf("%s holds %d records, want %d", bw.Topic, sum(end), n)
			}
			bw.End = end
			logf("loaded %s in %.1f s (%.0f records/s)", bw.Topic, bw.LoadSeconds, float64(n)/bw.LoadSeconds)
			rep.SustainBacklogs = append(rep.SustainBacklogs, *bw)
			for i := 1; i <= s.repeats && ctx.Err() == nil; i++ {
				tools := slices.Clone(s.tools)
				if (i+wi)%2 == 0 {
					slices.Reverse(tools)
				}
				for order, tool := range tools {
					if ctx.Err() != nil {
						break
					}
					logf("sustained %s %s rep %d: %.0f s window after %.0f s warm-up ...", tool, w.Name, i, s.window.Seconds(), s.warmup.Seconds())
					o := runOpts{Window: s.window, Warmup: s.warmup, Name: "-sustain", SampleRSS: true}
					if tool == "kmm-c" {
						o.Env = []string{"KMM_DATA_PLANE=c"}
					}
					r := runReplicationWith(ctx, cfg, tool, bw, i, order, o)
					if strings.HasPrefix(tool, "kmm") && r.OK {
						r.Plane = kmmPlane(r.LogDir)
						if tool == "kmm-c" && r.Plane != "c" {
							r.OK, r.Error = false, fmt.Sprintf("kmm ran the %q data plane, not c (see %s)", r.Plane, r.LogDir)
						}
					}
					if r.OK && r.Exhausted && !cfg.Smoke {
						r.OK, r.Error = false, fmt.Sprintf("copied the whole backlog (%d records) %.1f s into the %.0f s window: raise BENCH_SUSTAIN_RATE, BENCH_SUSTAIN_MAX_GB or BENCH_SUSTAIN_MAX_RECORDS",
							n, r.TransferSec, s.window.Seconds())
					}
					record(r)
				}
			}
			return nil
		}()
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}

// sustainSummary is one workload's sustained figures: medians per tool, ratios pair by pair
// within a repetition.
type sustainSummary struct {
	Workload string                     `json:"workload"`
	Metrics  map[string]map[string]stat `json:"metrics"` // tool -> metric -> stat
	Ceiling  stat                       `json:"ceiling_records_per_s"`
	Ratios   map[string]ratio           `json:"ratios"`
	Planes   map[string]string          `json:"planes,omitempty"` // kmm tool -> data plane it ran
}

var sustainMetrics = map[string]func(r runResult) float64{
	"records_per_s":   func(r runResult) float64 { return r.RecPerSec },
	"mb_per_s":        func(r runResult) float64 { return r.MBPerSec },
	"cpu_s_per_gb":    func(r runResult) float64 { return r.CPUPerGB },
	"cpu_cores":       func(r runResult) float64 { return div(r.CPUTransfer, r.TransferSec) },
	"window_s":        func(r runResult) float64 { return r.TransferSec },
	"peak_rss_mb":     func(r runResult) float64 { return r.WindowPeakRSSMB },
	"steady_rss_mb":   func(r runResult) float64 { return r.SteadyRSSMB },
	"lifetime_hwm_mb": func(r runResult) float64 { return r.PeakRSSMB },
	"startup_s":       func(r runResult) float64 { return r.StartupSec },
	"other_cores":     func(r runResult) float64 { return r.OtherCores },
	// The brokers' share (issue 16: on 2 cores they bound the ratio): their CPU over the same
	// window per GB the tool copied (kmm writes to B, MM2 to C: targetOf).
	"source_broker_cpu_s_per_gb": func(r runResult) float64 { return brokerPerGB(r, "A") },
	"target_broker_cpu_s_per_gb": func(r runResult) float64 { a, _ := targetOf(&config{}, r.Kind); return brokerPerGB(r, a) },
	"machine_cores":              func(r runResult) float64 { return r.MachineBusy },
}

// brokerPerGB is cluster c's broker CPU-seconds per GB of payload copied in r's window.
func brokerPerGB(r runResult, c string) float64 {
	return div(r.BrokerCores[c], r.MBPerSec/1000)
}

func (rep *report) summarizeSustained() {
	rep.SustainSummary = nil
	find := func(tool, w string, i int) (runResult, bool) {
		for _, r := range rep.Sustained {
			if r.Kind == tool && r.Workload == w && r.Rep == i && r.OK {
				return r, true
			}
		}
		return runResult{}, false
	}
	var names []string
	maxRep := 0
	for _, r := range rep.Sustained {
		if !slices.Contains(names, r.Workload) {
			names = append(names, r.Workload)
		}
		maxRep = max(maxRep, r.Rep)
	}
	for _, w := range names {
		ss := sustainSummary{Workload: w, Metrics: map[string]map[string]stat{}, Ratios: map[string]ratio{}, Planes: map[string]string{}}
		for _, tool := range []string{"kmm", "kmm-c", "mm2"} {
			ms := map[string]stat{}
			for name, f := range sustainMetrics {
				var xs []float64
				for _, r := range rep.Sustained {
					if r.Kind == tool && r.Workload == w && r.OK {
						xs = append(xs, f(r))
						if r.Plane != "" {
							ss.Planes[tool] = r.Plane
						}
					}
				}
				if len(xs) > 0 {
					ms[name] = statOf(xs)
				}
			}
			if len(ms) > 0 {
				ss.Metrics[tool] = ms
			}
		}
		var ceil []float64
		pairs := map[string][]float64{}
		add := func(k string, v float64) { pairs[k] = append(pairs[k], v) }
		for i := 1; i <= maxRep; i++ {
			c, okC := rep.ceilingRate(w, i)
			if okC {
				ceil = append(ceil, c)
			}
			m, okM := find("mm2", w, i)
			for _, tool := range []string{"kmm", "kmm-c", "mm2"} {
				k, okK := find(tool, w, i)
				if okK && okC {
					add(tool+"/ceiling records_per_s", div(k.RecPerSec, c))
				}
				if tool == "mm2" || !okK || !okM {
					continue
				}
				add(tool+"/mm2 records_per_s", div(k.RecPerSec, m.RecPerSec))
				add(tool+"/mm2 cpu_s_per_gb", div(k.CPUPerGB, m.CPUPerGB))
				add(tool+"/mm2 peak_rss_mb", div(k.WindowPeakRSSMB, m.WindowPeakRSSMB))
				add(tool+"/mm2 steady_rss_mb", div(k.SteadyRSSMB, m.SteadyRSSMB))
			}
			if g, ok := find("kmm", w, i); ok {
				if c, ok := find("kmm-c", w, i); ok {
					add("kmm-c/kmm records_per_s", div(c.RecPerSec, g.RecPerSec))
					add("kmm-c/kmm cpu_s_per_gb", div(c.CPUPerGB, g.CPUPerGB))
				}
			}
		}
		ss.Ceiling = statOf(ceil)
		for k, v := range pairs {
			ss.Ratios[k] = ratioOf(v)
		}
		rep.SustainSummary = append(rep.SustainSummary, ss)
	}
}

// sustainMarkdown renders the sustained section ("" without sustained rows).
func (rep *report) sustainMarkdown() string {
	if len(rep.Sustained) == 0 {
		return ""
	}
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("## Sustained runs\n\n")
	p("Each replicator copies a backlog large enough to keep it busy well past the measurement (loaded into A once per workload before the first row, %s), ", backlogList(rep.SustainBacklogs))
	p("from offset 0 to a fresh remote topic, with the same generated properties file as the backlog rows above (kmm A->B, MM2 A->C). ")
	p("**Window**: the measurement starts at the first poll at least *warm-up* seconds after the first record reached the target and lasts *window* seconds (window %s s, warm-up %s s, the same for every tool). ",
		num(rep.Config.SustainSeconds), num(rep.Config.SustainWarmup))
	p("**Why**: MM2 runs on a JVM that interprets, then compiles, its hot path during its first seconds, and librdkafka and the Connect worker both ramp up their batches; a run of a few seconds counts that against the slower starter. ")
	p("Excluding the same first seconds for every tool and measuring a minute of steady copying compares the tools as they run in production; start-up is reported on its own.\n\n")
	p("- **Throughput** = records on the target at the window's end minus at its start, from the target's end offsets (ListOffsets every 100 ms), not the tools' own metrics; MB/s = those records x payload per record (10^6 B) / the window.\n")
	p("- **CPU-s per GB** = the process's user+sys CPU (all threads, `/proc/<pid>/stat`; MM2: the JVM) over the window / payload GB copied in the window; *cores* = that CPU / the window.\n")
	p("- **RSS**: `VmRSS` from `/proc/<pid>/status` sampled at every poll during the window: *peak* = the highest sample, *steady* = the median sample; *lifetime HWM* = `VmHWM` at the window's end (start-up included).\n")
	p("- **Ceiling**: the consume-only and produce-only ceiling of the backlog rows, measured in the same run (the slower leg per repetition); ratios are taken pair by pair within a repetition. ")
	p("It is a confluent-kafka-go ceiling (per-record Go path): kmm's C data plane can exceed it.\n")
	p("- *kmm* runs kmm's default settings (data plane: %s); *kmm C plane* the same with `KMM_DATA_PLANE=c`; MM2 its defaults plus the high-volume tuning in the file (as in the backlog rows). A row whose tool copied the whole backlog before its window ended fails.\n\n",
		planeOf(rep.SustainSummary, "kmm"))
	tools := []struct{ key, label string }{{"kmm", "kmm"}, {"kmm-c", "kmm C plane"}, {"mm2", "MM2"}}
	for _, ss := range rep.SustainSummary {
		p("### Sustained: %s\n\n", workloadTitle[ss.Workload])
		p("| median (min–max) | ceiling | kmm | kmm C plane | MM2 |\n|---|---|---|---|---|\n")
		ceilCell := "–"
		if ss.Ceiling.N > 0 {
			ceilCell = cell(map[string]map[string]stat{"c": {"r": ss.Ceiling}}, "c", "r", thousands)
		}
		for _, r := range []struct{ label, metric string }{
			{"records/s", "records_per_s"}, {"MB/s", "mb_per_s"}, {"CPU-s per GB", "cpu_s_per_gb"}, {"cores used", "cpu_cores"},
			{"peak RSS in the window (MiB)", "peak_rss_mb"}, {"steady RSS, median sample (MiB)", "steady_rss_mb"}, {"lifetime HWM (MiB)", "lifetime_hwm_mb"},
			{"window (s)", "window_s"}, {"start-up to first record (s)", "startup_s"},
			{"source broker (A) CPU-s per GB", "source_broker_cpu_s_per_gb"}, {"target broker CPU-s per GB", "target_broker_cpu_s_per_gb"},
			{"machine busy (cores, all processes)", "machine_cores"}, {"other cores (noise)", "other_cores"},
		} {
			f := num
			if r.metric == "records_per_s" {
				f = thousands
			}
			c := "–"
			if r.metric == "records_per_s" {
				c = ceilCell
			}
			p("| %s | %s | %s | %s | %s |\n", r.label, c, cell(ss.Metrics, "kmm", r.metric, f), cell(ss.Metrics, "kmm-c", r.metric, f), cell(ss.Metrics, "mm2", r.metric, f))
		}
		p("\n| ratio | median | per repetition |\n|---|---|---|\n")
		for _, t := range tools {
			r, ok := ss.Ratios[t.key+"/ceiling records_per_s"]
			m, pairs := ratioCell(r, ok)
			p("| records/s %s / ceiling | %s | %s |\n", t.label, m, pairs)
		}
		for _, t := range tools[:2] {
			for _, k := range []struct{ metric, label string }{{"records_per_s", "records/s"}, {"cpu_s_per_gb", "CPU-s per GB"}, {"peak_rss_mb", "peak RSS"}, {"steady_rss_mb", "steady RSS"}} {
				r, ok := ss.Ratios[t.key+"/mm2 "+k.metric]
				m, pairs := ratioCell(r, ok)
				p("| %s %s / MM2 | %s | %s |\n", k.label, t.label, m, pairs)
			}
		}
		for _, k := range []struct{ metric, label string }{{"records_per_s", "records/s"}, {"cpu_s_per_gb", "CPU-s per GB"}} {
			r, ok := ss.Ratios["kmm-c/kmm "+k.metric]
			m, pairs := ratioCell(r, ok)
			p("| %s kmm C plane / kmm | %s | %s |\n", k.label, m, pairs)
		}
		p("\n")
	}
	p("| sustained run | workload | rep | order | plane | records/s | MB/s | window s | CPU-s/GB | cores | peak / steady RSS MiB | start-up s | other cores | load avg (start) | ok |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rep.Sustained {
		ok := "yes"
		if !r.OK {
			ok = "**no**: " + strings.ReplaceAll(firstLine(r.Error), "|", "/")
		}
		plane := r.Plane
		if plane == "" {
			plane = "–"
		}
		p("| %s | %s | %d | %d | %s | %s | %s | %s | %s | %s | %.0f / %.0f | %s | %s | %s | %s |\n", r.Kind, r.Workload, r.Rep, r.Order, plane, thousands(r.RecPerSec), num(r.MBPerSec),
			num(r.TransferSec), num(r.CPUPerGB), num(div(r.CPUTransfer, r.TransferSec)), r.WindowPeakRSSMB, r.SteadyRSSMB, num(r.StartupSec), num(r.OtherCores), r.LoadAvgStart, ok)
	}
	p("\n")
	return b.String()
}

func backlogList(ws []workload) string {
	var parts []string
	for _, w := range ws {
		parts = append(parts, fmt.Sprintf("%s: %s records, %.1f GB, loaded in %.0f s", w.Name, thousands(float64(w.Records)), float64(w.TotalBytes)/1e9, w.LoadSeconds))
	}
	if len(parts) == 0 {
		return "–"
	}
	return strings.Join(parts, "; ")
}

func planeOf(ss []sustainSummary, tool string) string {
	for _, s := range ss {
		if p := s.Planes[tool]; p != "" {
			return "`" + p + "`"
		}
	}
	return "as reported by its start line"
}
