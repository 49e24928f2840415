package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/kmmproject/kmm/pkg/rdkafka"
)

type reportCfg struct {
	RunID        string         `json:"run_id"`
	Scale        float64        `json:"scale"`
	Repeats      int            `json:"repeats"`
	Tasks        int            `json:"tasks_max"`
	LatencyRate  int            `json:"latency_rate"`
	LatencySecs  float64        `json:"latency_seconds"`
	MM2Heap      string         `json:"mm2_heap"`
	Smoke        bool           `json:"smoke"`
	KMMConsumer  rdkafka.Config `json:"kmm_source_consumer"`
	KMMProducer  rdkafka.Config `json:"kmm_target_producer"`
	PropsExample string         `json:"properties_example"`
	// Sustained rows: the window and the warm-up excluded before it, seconds.
	SustainSeconds float64 `json:"sustain_seconds,omitempty"`
	SustainWarmup  float64 `json:"sustain_warmup_seconds,omitempty"`
}

type fact struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type report struct {
	StartedAt    time.Time       `json:"started_at"`
	FinishedAt   time.Time       `json:"finished_at"`
	Config       reportCfg       `json:"config"`
	Machine      []fact          `json:"machine"`
	LoadAvgStart string          `json:"loadavg_start"`
	LoadAvgEnd   string          `json:"loadavg_end"`
	Workloads    []workload      `json:"workloads"`
	Summary      summary         `json:"summary"`
	Runs         []runResult     `json:"runs"`
	Latency      []latencyResult `json:"latency_runs"`
	WAN          []wanRun        `json:"wan_runs,omitempty"`
	WANSummary   []wanSummary    `json:"wan_summary,omitempty"`
	// Sustained rows (sustain.go): Kind is the tool (kmm, kmm-c, mm2), Workload the workload
	// whose record size the backlog has.
	Sustained       []runResult      `json:"sustained_runs,omitempty"`
	SustainSummary  []sustainSummary `json:"sustained_summary,omitempty"`
	SustainBacklogs []workload       `json:"sustained_backlogs,omitempty"`
	// Many-partitions rows (partitions.go): one per tool and size.
	Partitions []partitionsResult `json:"partitions,omitempty"`
}

type stat struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"n"`
}

type ratio struct {
	Median float64   `json:"median"`
	Pairs  []float64 `json:"pairs"` // one per repetition, in repetition order
}

type workloadSummary struct {
	Workload string                     `json:"workload"`
	Metrics  map[string]map[string]stat `json:"metrics"` // kind -> metric -> stat
	Ceiling  stat                       `json:"ceiling_records_per_s"`
	Ratios   map[string]ratio           `json:"ratios"`
}

type targetCheck struct {
	What   string  `json:"what"`
	Target string  `json:"target"`
	Value  float64 `json:"value"`
	Met    bool    `json:"met"`
}

type summary struct {
	Workloads     []workloadSummary          `json:"workloads"`
	Latency       map[string]map[string]stat `json:"latency"` // tool -> metric -> stat
	LatencyRatios map[string]ratio           `json:"latency_ratios"`
	Targets       []targetCheck              `json:"targets"`
}

func reportConfig(cfg *config) reportCfg {
	rc := reportCfg{RunID: cfg.ID, Scale: cfg.Scale, Repeats: cfg.Repeats, Tasks: cfg.Tasks, LatencyRate: cfg.LatencyRate,
		LatencySecs: cfg.LatencySecs, MM2Heap: cfg.MM2Heap, Smoke: cfg.Smoke}
	if s, err := sustainConfig(cfg); err == nil && cfg.Only["sustained"] {
		rc.SustainSeconds, rc.SustainWarmup = s.window.Seconds(), s.warmup.Seconds()
	}
	return rc
}

func cmdOut(name string, args ...string) string {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}

func machineFacts(cfg *config) []fact {
	var fs []fact
	add := func(n, v string) { fs = append(fs, fact{n, v}) }
	model := "?"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				_, model, _ = strings.Cut(l, ":")
				model = strings.TrimSpace(model)
				break
			}
		}
	}
	add("CPU", fmt.Sprintf("%s, %d logical CPUs", model, runtime.NumCPU()))
	if kb, err := procStatusLine("/proc/meminfo", "MemTotal"); err == nil {
		add("memory", fmt.Sprintf("%.1f GiB", float64(kb)/1024/1024))
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		add("kernel", "Linux "+strings.TrimSpace(string(b)))
	}
	add("clock ticks", cmdOut("getconf", "CLK_TCK"))
	add("Go", runtime.Version())
	java := cmdOut("java", "-version")
	java, _, _ = strings.Cut(java, "\n")
	add("Java", java)
	kafka := "?"
	if m, _ := filepath.Glob(filepath.Join(cfg.Bed, "kafka-*")); len(m) > 0 {
		kafka = strings.TrimPrefix(filepath.Base(m[0]), "kafka-")
	}
	add("Kafka (brokers and MM2)", kafka+", three single-node KRaft clusters on loopback (scripts/testbed.sh), broker heap 768 MB")
	_, lv := rdkafka.LibraryVersion()
	add("librdkafka (kmm)", lv)
	add("kmm", cmdOut(cfg.KMMBin, "--version"))
	return fs
}

func procStatusLine(file, field string) (int64, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, field+":") {
			var n int64
			_, err := fmt.Sscan(strings.TrimSpace(l[len(field)+1:]), &n)
			return n, err
		}
	}
	return 0, fmt.Errorf("%s: no %s", file, field)
}

func statOf(xs []float64) stat {
	if len(xs) == 0 {
		return stat{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return stat{Median: m, Min: s[0], Max: s[len(s)-1], N: len(s)}
}

func ratioOf(pairs []float64) ratio {
	return ratio{Median: statOf(pairs).Median, Pairs: pairs}
}

// div is a/b, 0 when b is 0 (JSON has no Inf/NaN).
func div(a, b float64) float64 { return finite(a / b) }

var runMetrics = map[string]func(r runResult) float64{
	"records_per_s":      func(r runResult) float64 { return r.RecPerSec },
	"mb_per_s":           func(r runResult) float64 { return r.MBPerSec },
	"cpu_s_per_gb":       func(r runResult) float64 { return r.CPUPerGB },
	"cpu_s_total_per_gb": func(r runResult) float64 { return r.CPUTotalGB },
	"cpu_s_transfer":     func(r runResult) float64 { return r.CPUTransfer },
	"cpu_cores":          func(r runResult) float64 { return div(r.CPUTransfer, r.TransferSec) },
	"peak_rss_mb":        func(r runResult) float64 { return r.PeakRSSMB },
	"startup_s":          func(r runResult) float64 { return r.StartupSec },
	"total_s":            func(r runResult) float64 { return r.TotalSec },
	"transfer_s":         func(r runResult) float64 { return r.TransferSec },
	"other_cores":        func(r runResult) float64 { return r.OtherCores },
	"broker_cores": func(r runResult) float64 {
		t := 0.0
		for _, v := range r.BrokerCores {
			t += v
		}
		return t
	},
}

var latMetrics = map[string]func(l latencyResult) float64{
	"p50_ms":        func(l latencyResult) float64 { return l.P50 },
	"p90_ms":        func(l latencyResult) float64 { return l.P90 },
	"p99_ms":        func(l latencyResult) float64 { return l.P99 },
	"p999_ms":       func(l latencyResult) float64 { return l.P999 },
	"max_ms":        func(l latencyResult) float64 { return l.Max },
	"mean_ms":       func(l latencyResult) float64 { return l.Mean },
	"copy_p50_ms":   func(l latencyResult) float64 { return l.CopyP50 },
	"copy_p99_ms":   func(l latencyResult) float64 { return l.CopyP99 },
	"copy_max_ms":   func(l latencyResult) float64 { return l.CopyMax },
	"source_p50_ms": func(l latencyResult) float64 { return l.SourceP50 },
	"source_p99_ms": func(l latencyResult) float64 { return l.SourceP99 },
	"cores_steady":  func(l latencyResult) float64 { return l.Cores },
	"peak_rss_mb":   func(l latencyResult) float64 { return l.PeakRSSMB },
	"startup_s":     func(l latencyResult) float64 { return l.StartupSec },
	"achieved_rate": func(l latencyResult) float64 { return l.AchievedRate },
	"other_cores":   func(l latencyResult) float64 { return l.OtherCores },
}

func (rep *report) find(kind, w string, i int) (runResult, bool) {
	for _, r := range rep.Runs {
		if r.Kind == kind && r.Workload == w && r.Rep == i && r.OK {
			return r, true
		}
	}
	return runResult{}, false
}

func (rep *report) ceilingRate(w string, i int) (float64, bool) {
	c, ok1 := rep.find("ceiling-consume", w, i)
	p, ok2 := rep.find("ceiling-produce", w, i)
	if !ok1 || !ok2 {
		return 0, false
	}
	return min(c.RecPerSec, p.RecPerSec), true
}

func (rep *report) summarize() {
	rep.summarizeWAN()
	rep.summarizeSustained()
	s := summary{Latency: map[string]map[string]stat{}, LatencyRatios: map[string]ratio{}}
	check := func(what, target string, v float64, met bool) {
		s.Targets = append(s.Targets, targetCheck{What: what, Target: target, Value: v, Met: met})
	}
	for _, w := range rep.Workloads {
		ws := workloadSummary{Workload: w.Name, Metrics: map[string]map[string]stat{}, Ratios: map[string]ratio{}}
		for _, kind := range []string{"ceiling-consume", "ceiling-produce", "kmm", "mm2", "verify-ceiling", "verify-full"} {
			ms := map[string]stat{}
			for name, f := range runMetrics {
				var xs []float64
				for _, r := range rep.Runs {
					if r.Kind == kind && r.Workload == w.Name && r.OK {
						xs = append(xs, f(r))
					}
				}
				if len(xs) > 0 {
					ms[name] = statOf(xs)
				}
			}
			if len(ms) > 0 {
				ws.Metrics[kind] = ms
			}
		}
		var ceil []float64
		pairs := map[string][]float64{}
		for i := 1; i <= rep.Config.Repeats; i++ {
			k, okK := rep.find("kmm", w.Name, i)
			m, okM := rep.find("mm2", w.Name, i)
			c, okC := rep.ceilingRate(w.Name, i)
			if okC {
				ceil = append(ceil, c)
			}
			if okK && okM {
				pairs["kmm/mm2 records_per_s"] = append(pairs["kmm/mm2 records_per_s"], div(k.RecPerSec, m.RecPerSec))
				pairs["kmm/mm2 cpu_s_per_gb"] = append(pairs["kmm/mm2 cpu_s_per_gb"], div(k.CPUPerGB, m.CPUPerGB))
				pairs["kmm/mm2 cpu_s_total_per_gb"] = append(pairs["kmm/mm2 cpu_s_total_per_gb"], div(k.CPUTotalGB, m.CPUTotalGB))
				pairs["kmm/mm2 peak_rss_mb"] = append(pairs["kmm/mm2 peak_rss_mb"], div(k.PeakRSSMB, m.PeakRSSMB))
				pairs["kmm/mm2 startup_s"] = append(pairs["kmm/mm2 startup_s"], div(k.StartupSec, m.StartupSec))
				pairs["kmm/mm2 total_s"] = append(pairs["kmm/mm2 total_s"], div(k.TotalSec, m.TotalSec))
			}
			if okK && okC {
				pairs["kmm/ceiling records_per_s"] = append(pairs["kmm/ceiling records_per_s"], div(k.RecPerSec, c))
			}
			if v, ok := rep.find("verify-full", w.Name, i); ok {
				if vc, ok := rep.find("verify-ceiling", w.Name, i); ok {
					pairs["verify/ceiling records_per_s"] = append(pairs["verify/ceiling records_per_s"], div(v.RecPerSec, vc.RecPerSec))
				}
			}
			if okM && okC {
				pairs["mm2/ceiling records_per_s"] = append(pairs["mm2/ceiling records_per_s"], div(m.RecPerSec, c))
			}
		}
		ws.Ceiling = statOf(ceil)
		for k, v := range pairs {
			ws.Ratios[k] = ratioOf(v)
		}
		s.Workloads = append(s.Workloads, ws)
		if r, ok := ws.Ratios["kmm/mm2 records_per_s"]; ok {
			check(w.Name+": records/s kmm / MM2", "≥ 2", r.Median, r.Median >= 2)
		}
		if r, ok := ws.Ratios["kmm/ceiling records_per_s"]; ok {
			check(w.Name+": records/s kmm / ceiling", "≥ 0.85", r.Median, r.Median >= 0.85)
		}
		if r, ok := ws.Ratios["kmm/mm2 cpu_s_per_gb"]; ok {
			check(w.Name+": CPU-seconds per GB kmm / MM2", "≤ 0.33", r.Median, r.Median <= 0.33)
		}
		if r, ok := ws.Ratios["kmm/mm2 peak_rss_mb"]; ok {
			check(w.Name+": peak RSS kmm / MM2", "≤ 0.2", r.Median, r.Median <= 0.2)
		}
		if m, ok := ws.Metrics["kmm"]["peak_rss_mb"]; ok {
			check(w.Name+": kmm peak RSS, MiB (issue 4)", "≤ 128", m.Median, m.Median <= 128)
		}
		if r, ok := ws.Ratios["verify/ceiling records_per_s"]; ok {
			check(w.Name+": kmm verify --level full, records/s read / ceiling of both topics read in parallel (issue 15)", "≥ 0.8", r.Median, r.Median >= 0.8)
		}
		if m, ok := ws.Metrics["verify-full"]["peak_rss_mb"]; ok {
			check(w.Name+": kmm verify --level full peak RSS, MiB (issue 15)", "≤ 128", m.Median, m.Median <= 128)
		}
	}
	var meta []float64
	metaName := ""
	for _, r := range rep.Runs {
		if r.Kind == "verify-metadata" && r.OK {
			meta, metaName = append(meta, r.TotalSec), r.Workload
		}
	}
	if len(meta) > 0 {
		m := statOf(meta)
		check(fmt.Sprintf("kmm verify --level metadata over %s partitions, seconds (issue 15)", strings.TrimSuffix(metaName, "p")), "< 3", m.Median, m.Median < 3)
	}
	for _, tool := range []string{"kmm", "mm2"} {
		ms := map[string]stat{}
		for name, f := range latMetrics {
			var xs []float64
			for _, l := range rep.Latency {
				if l.Tool == tool && l.OK {
					xs = append(xs, f(l))
				}
			}
			if len(xs) > 0 {
				ms[name] = statOf(xs)
			}
		}
		if len(ms) > 0 {
			s.Latency[tool] = ms
		}
	}
	for i := 1; i <= rep.Config.Repeats; i++ {
		var k, m *latencyResult
		for j := range rep.Latency {
			l := &rep.Latency[j]
			if l.Rep == i && l.OK && l.Tool == "kmm" {
				k = l
			}
			if l.Rep == i && l.OK && l.Tool == "mm2" {
				m = l
			}
		}
		if k == nil || m == nil {
			continue
		}
		for _, name := range []string{"p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms", "mean_ms", "cores_steady", "peak_rss_mb", "startup_s"} {
			r := s.LatencyRatios["kmm/mm2 "+name]
			r.Pairs = append(r.Pairs, div(latMetrics[name](*k), latMetrics[name](*m)))
			s.LatencyRatios["kmm/mm2 "+name] = r
		}
	}
	for k, r := range s.LatencyRatios {
		s.LatencyRatios[k] = ratioOf(r.Pairs)
	}
	for _, ss := range rep.SustainSummary {
		for _, t := range []struct{ key, label string }{{"kmm", "kmm"}, {"kmm-c", "kmm C plane"}} {
			if r, ok := ss.Ratios[t.key+"/mm2 records_per_s"]; ok {
				check(ss.Workload+" sustained: records/s "+t.label+" / MM2", "≥ 2", r.Median, r.Median >= 2)
			}
			if r, ok := ss.Ratios[t.key+"/ceiling records_per_s"]; ok {
				check(ss.Workload+" sustained: records/s "+t.label+" / ceiling", "≥ 0.9", r.Median, r.Median >= 0.9)
			}
			if r, ok := ss.Ratios[t.key+"/mm2 cpu_s_per_gb"]; ok {
				check(ss.Workload+" sustained: CPU-seconds per GB "+t.label+" / MM2", "≤ 0.33", r.Median, r.Median <= 0.33)
			}
			if m, ok := ss.Metrics[t.key]["peak_rss_mb"]; ok {
				check(ss.Workload+" sustained: "+t.label+" peak RSS in the window, MiB", "≤ 128", m.Median, m.Median <= 128)
			}
		}
	}
	if r, ok := s.LatencyRatios["kmm/mm2 p99_ms"]; ok {
		check("latency: p99 kmm / MM2", "≤ 0.5", r.Median, r.Median <= 0.5)
	}
	rep.Summary = s
}

func (rep *report) write(cfg *config) error {
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return err
	}
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(cfg.OutDir, "benchmarks.json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	if err := drawChart(rep, filepath.Join(cfg.OutDir, "benchmarks.png")); err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	notes, _ := os.ReadFile(filepath.Join(cfg.Root, "scripts", "bench", "notes.md"))
	return os.WriteFile(filepath.Join(cfg.OutDir, "benchmarks.md"), rep.markdown(string(notes)), 0o644)
}

func smokeCheck(cfg *config, rep *report) error {
	b, err := os.ReadFile(filepath.Join(cfg.OutDir, "benchmarks.json"))
	if err != nil {
		return err
	}
	var back report
	if err := json.Unmarshal(b, &back); err != nil {
		return fmt.Errorf("benchmarks.json does not decode: %w", err)
	}
	kinds := map[string]int{}
	for _, r := range back.Runs {
		if !r.OK || r.Records == 0 || r.RecPerSec <= 0 {
			return fmt.Errorf("run %s %s rep %d not usable: %+v", r.Kind, r.Workload, r.Rep, r)
		}
		if (r.Kind == "kmm" || r.Kind == "mm2") && (r.PeakRSSMB <= 0 || r.CPUTotal <= 0 || r.StartupSec <= 0) {
			return fmt.Errorf("run %s %s: missing process measurements: %+v", r.Kind, r.Workload, r)
		}
		kinds[r.Kind]++
	}
	want := []string{"ceiling-consume", "ceiling-produce"}
	for _, k := range []string{"kmm", "mm2"} {
		if cfg.Only[k] {
			want = append(want, k)
		}
	}
	if cfg.Only["verify"] {
		want = append(want, "verify-ceiling", "verify-full", "verify-metadata")
	}
	if cfg.Only["workers"] {
		want = append(want, "kmm-workers-1", "kmm-workers-2", "kmm-workers-3", "kmm-workers-3-kill")
	}
	for _, k := range want {
		if kinds[k] == 0 {
			return fmt.Errorf("no %s run in the report", k)
		}
	}
	if cfg.Only["sustained"] {
		seen := map[string]bool{}
		for _, r := range back.Sustained {
			if !r.OK || r.Records == 0 || r.RecPerSec <= 0 || r.CPUTransfer <= 0 || r.WindowPeakRSSMB <= 0 || r.SteadyRSSMB <= 0 {
				return fmt.Errorf("sustained run %s %s rep %d not usable: %+v", r.Kind, r.Workload, r.Rep, r)
			}
			seen[r.Kind] = true
		}
		s, _ := sustainConfig(cfg)
		for _, t := range s.tools {
			if !seen[t] {
				return fmt.Errorf("no sustained %s run in the report", t)
			}
		}
		if len(back.SustainSummary) == 0 || back.SustainSummary[0].Ceiling.N == 0 {
			return fmt.Errorf("sustained summary has no ceiling")
		}
		if md, _ := os.ReadFile(filepath.Join(cfg.OutDir, "benchmarks.md")); !bytes.Contains(md, []byte("## Sustained runs")) {
			return fmt.Errorf("benchmarks.md has no sustained section")
		}
	}
	if cfg.Only["partitions"] {
		md, _ := os.ReadFile(filepath.Join(cfg.OutDir, "benchmarks.md"))
		if err := partitionsSmokeCheck(back.Partitions, md); err != nil {
			return err
		}
	}
	if cfg.Only["latency"] && (len(back.Latency) == 0 || !back.Latency[0].OK || back.Latency[0].P99 <= 0) {
		return fmt.Errorf("no usable latency run")
	}
	if cfg.Only["kmm"] && cfg.Only["mm2"] && (len(back.Summary.Workloads) == 0 || len(back.Summary.Workloads[0].Ratios) == 0) {
		return fmt.Errorf("summary has no ratios")
	}
	png, err := os.ReadFile(filepath.Join(cfg.OutDir, "benchmarks.png"))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		return fmt.Errorf("benchmarks.png missing or not a PNG (%v)", err)
	}
	md, err := os.ReadFile(filepath.Join(cfg.OutDir, "benchmarks.md"))
	if err != nil || !bytes.Contains(md, []byte("kmm / MM2")) || !bytes.Contains(md, []byte("benchmarks.png")) {
		return fmt.Errorf("benchmarks.md incomplete (%v)", err)
	}
	return nil
}
