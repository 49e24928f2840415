package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSustainBacklogSizing(t *testing.T) {
	w := &workload{ValueSize: 1024, Partitions: 12}
	w.computeSizes()
	s := sustainSettings{window: 60 * time.Second, warmup: 15 * time.Second, maxGB: 16, maxRecords: 30_000_000}
	// 3 x 10,000 rec/s over 15 + 60 + 10 s.
	if n, capped := sustainBacklog(s, w, 10_000); n != 2_550_000 || capped {
		t.Fatalf("ceiling 10k rec/s: %d records (capped %v), want 2,550,000 uncapped", n, capped)
	}
	// 3 x 200,000 x 85 s of 1 KB records is 51 GB: capped at 16 GB.
	n, capped := sustainBacklog(s, w, 200_000)
	if want := int64(16e9 / float64(w.RecordBytes)); n != want || !capped {
		t.Fatalf("ceiling 200k rec/s: %d records (capped %v), want %d capped", n, capped, want)
	}
	// 100 B records: the record cap binds before the byte cap.
	small := &workload{ValueSize: 100, Partitions: 12}
	small.computeSizes()
	if n, capped := sustainBacklog(s, small, 500_000); n != 30_000_000 || !capped {
		t.Fatalf("100 B at 500k rec/s: %d records (capped %v), want 30,000,000 capped", n, capped)
	}
	// BENCH_SUSTAIN_RATE replaces the ceiling.
	s.rate = 1000
	if n, _ := sustainBacklog(s, w, 200_000); n != 85_000 {
		t.Fatalf("rate 1000: %d records, want 85,000", n)
	}
}

func TestSustainSummaryPairsWithinRepetition(t *testing.T) {
	ceil := func(kind string, rep int, rate float64) runResult {
		return runResult{Kind: kind, Workload: "1k", Rep: rep, OK: true, RecPerSec: rate}
	}
	row := func(tool string, rep int, rate, cpu, peak float64) runResult {
		return runResult{Kind: tool, Workload: "1k", Rep: rep, OK: true, RecPerSec: rate, CPUPerGB: cpu, WindowPeakRSSMB: peak, SteadyRSSMB: peak - 10}
	}
	rep := &report{
		Config: reportCfg{Repeats: 2},
		Runs: []runResult{
			ceil("ceiling-consume", 1, 300), ceil("ceiling-produce", 1, 100),
			ceil("ceiling-consume", 2, 200), ceil("ceiling-produce", 2, 400),
		},
		Sustained: []runResult{
			row("kmm", 1, 50, 10, 200), row("kmm-c", 1, 90, 5, 150), row("mm2", 1, 45, 20, 800),
			row("kmm", 2, 100, 10, 200), row("kmm-c", 2, 160, 4, 160), row("mm2", 2, 80, 16, 800),
			{Kind: "kmm-c", Workload: "1k", Rep: 3, OK: false, Error: "copied the whole backlog"},
		},
	}
	rep.summarize()
	if len(rep.SustainSummary) != 1 {
		t.Fatalf("%d summaries, want 1", len(rep.SustainSummary))
	}
	ss := rep.SustainSummary[0]
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	// Ceiling of a repetition = the slower leg: 100 and 200.
	near("ceiling median", ss.Ceiling.Median, 150)
	// kmm-c / ceiling per repetition: 0.9 and 0.8.
	r := ss.Ratios["kmm-c/ceiling records_per_s"]
	if len(r.Pairs) != 2 {
		t.Fatalf("kmm-c/ceiling pairs %v, want 2 (the failed row is left out)", r.Pairs)
	}
	near("kmm-c/ceiling rep 1", r.Pairs[0], 0.9)
	near("kmm-c/ceiling rep 2", r.Pairs[1], 0.8)
	near("kmm-c/mm2 records_per_s", ss.Ratios["kmm-c/mm2 records_per_s"].Median, (2+90.0/45)/2)
	near("kmm/mm2 cpu_s_per_gb", ss.Ratios["kmm/mm2 cpu_s_per_gb"].Median, (0.5+10.0/16)/2)
	near("kmm-c/mm2 peak_rss_mb", ss.Ratios["kmm-c/mm2 peak_rss_mb"].Median, (150.0/800+160.0/800)/2)
	near("kmm-c/kmm records_per_s", ss.Ratios["kmm-c/kmm records_per_s"].Median, (1.8+1.6)/2)
	near("mm2 steady RSS median", ss.Metrics["mm2"]["steady_rss_mb"].Median, 790)
	var met, found bool
	for _, c := range rep.Summary.Targets {
		if c.What == "1k sustained: records/s kmm C plane / MM2" {
			found, met = true, c.Met
		}
	}
	if !found || !met {
		t.Errorf("target check for kmm C plane / MM2 found %v met %v, want a met check (median 2.0)", found, met)
	}
	md := rep.sustainMarkdown()
	for _, want := range []string{"## Sustained runs", "### Sustained: 1 KB records", "| records/s kmm C plane / ceiling | **0.85** | 0.90, 0.80 |", "**no**: copied the whole backlog"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestKMMPlaneFromStartLine(t *testing.T) {
	dir := t.TempDir()
	line := `{"level":"info","msg":"1 topics, 12 partitions (12 new), 2 pipelines (c data plane)"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "kmm.ndjson"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	if p := kmmPlane(dir); p != "c" {
		t.Fatalf("plane %q, want c", p)
	}
	if p := kmmPlane(t.TempDir()); p != "" {
		t.Fatalf("plane %q without a log, want empty", p)
	}
}
