package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParsePartitionsSizes(t *testing.T) {
	got, err := parsePartitionsSizes("100x10, 100X40,4000", 100)
	if err != nil {
		t.Fatal(err)
	}
	want := []partitionsSize{{100, 10}, {100, 40}, {100, 40}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("size %d: got %v, want %v", i, got[i], want[i])
		}
	}
	for _, bad := range []string{"", "100x", "x10", "0x10", "150", "abc"} {
		if _, err := parsePartitionsSizes(bad, 100); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// Records go round robin over every partition of every topic, and a group's partition is the
// same mapping.
func TestPartitionSetPlacement(t *testing.T) {
	set := newPartitionSet(&config{ID: "abc123"}, partitionsSize{topics: 3, perTopic: 4}, 24)
	if set.prefix != "bench-abc123-p12-" || set.names[2] != "bench-abc123-p12-002" {
		t.Fatalf("names: prefix %q, %v", set.prefix, set.names)
	}
	per := map[[2]any]int{}
	for i := range int64(24) {
		topic, p := set.w.at(i)
		per[[2]any{topic, p}]++
	}
	if len(per) != 12 {
		t.Fatalf("records land on %d partitions, want 12", len(per))
	}
	for tp, n := range per {
		if n != 2 {
			t.Fatalf("%v holds %d records, want 2", tp, n)
		}
	}
	if tp := set.tp(5, "A."); tp.Topic != "A.bench-abc123-p12-001" || tp.Partition != 1 {
		t.Fatalf("partition 5 on the target: %+v", tp)
	}
	if set.w.TotalBytes != 24*set.w.RecordBytes || set.w.RecordBytes != 149 {
		t.Fatalf("payload accounting: %d B per record, %d B total", set.w.RecordBytes, set.w.TotalBytes)
	}
	if g := set.groups(&config{ID: "abc123"}, 2); g[1] != "bench-abc123-g12-0001" || !strings.HasPrefix(g[0], groupPrefix(&config{ID: "abc123"})) {
		t.Fatalf("groups: %v", g)
	}
}

func TestPropsTopicsRegexAndCheckpoints(t *testing.T) {
	cfg := &config{ID: "abc123", A: "a:1"}
	base := propsSpec{Target: "B", TargetBootstrap: "b:1", Topic: "bench-abc123-1k", RunName: "r", Tasks: 2, Batching: true}
	off := mm2Props(cfg, base)
	for _, line := range []string{"A->B.topics = bench-abc123-1k\n", "emit.checkpoints.enabled = false\nsync.group.offsets.enabled = false\n"} {
		if !strings.Contains(off, line) {
			t.Fatalf("default file lacks %q:\n%s", line, off)
		}
	}
	on := base
	on.TopicsRegex, on.Checkpoints = `bench-abc123-p1000-.*`, true
	text := mm2Props(cfg, on)
	for _, line := range []string{"A->B.topics = bench-abc123-p1000-.*\n", "emit.checkpoints.enabled = true\n", "emit.checkpoints.interval.seconds = 5\n",
		"refresh.groups.interval.seconds = 5\n", "groups = bench-abc123-g.*\n", "sync.group.offsets.enabled = false\n"} {
		if !strings.Contains(text, line) {
			t.Fatalf("checkpoint file lacks %q:\n%s", line, text)
		}
	}
	if strings.Contains(text, "emit.checkpoints.enabled = false") {
		t.Fatalf("checkpoints both on and off:\n%s", text)
	}
}

// A failed run renders "—" with its reason and never a 0; the JSON keeps unmeasured figures
// absent, so a re-render (BENCH_MODE=render) shows the same.
func TestPartitionsMarkdownUnknowns(t *testing.T) {
	ok := partitionsResult{Tool: "kmm", Partitions: 1000, Topics: 100, Records: 1000, Bytes: 149000, OK: true, Groups: 10,
		StartUpSec: ptr(1.5), TotalSec: ptr(9), RecPerSec: ptr(125000), CPUPerGB: ptr(20), PeakRSSMB: ptr(80),
		SustainRate: ptr(2000), SustainCores: ptr(0.1), SustainRSSMaxMB: ptr(90), CommitSec: ptr(0.4), CheckpointsP50Sec: ptr(6), GroupsCovered: 7,
		CheckpointsError: "7 of 10 groups covered within 2m0s"}
	failed := partitionsResult{Tool: "mm2", Partitions: 10000, Topics: 100, Records: 10000, Bytes: 1490000, Groups: 10,
		Error: "did not copy everything within 6m0s: 0 of 10000 records arrived; log: 3 x \"excessively large batch\"\nlog tail", KnownLimit: "MM2 one request"}
	b, err := json.Marshal(&report{Partitions: []partitionsResult{ok, failed}})
	if err != nil {
		t.Fatal(err)
	}
	var back report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Partitions[1].StartUpSec != nil || back.Partitions[0].SustainRSSMedianMB != nil {
		t.Fatalf("unmeasured figures came back from JSON: %s", b)
	}
	md := back.partitionsMarkdown()
	rows := map[string]string{}
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "| kmm |") || strings.HasPrefix(l, "| MM2 |") {
			rows[l[2:5]] = l
		}
	}
	k, m := rows["kmm"], rows["MM2"]
	if !strings.Contains(k, "| 90.0 / ? |") || !strings.Contains(k, "| 6.00 / — (7 of 10 groups covered within 2m0s) |") || !strings.HasSuffix(k, "| yes |") {
		t.Fatalf("kmm row: %s", k)
	}
	if !strings.Contains(m, "| — | — | — |") || strings.Contains(m, "| 0 |") || !strings.Contains(m, "excessively large batch") || !strings.Contains(m, "known limit") {
		t.Fatalf("MM2 row: %s", m)
	}
}

// BENCH_ONLY=partitions loads no bulk workload: the report (chart included) must still be
// written, and BENCH_MODE=render must give the same section back from the JSON.
func TestPartitionsOnlyReportWrites(t *testing.T) {
	cfg := &config{OutDir: t.TempDir(), Root: t.TempDir()}
	rep := &report{Partitions: []partitionsResult{{Tool: "kmm", Partitions: 20, Topics: 4, Records: 20, Bytes: 2980, OK: true, TotalSec: ptr(3)}}}
	rep.summarize()
	if err := rep.write(cfg); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(filepath.Join(cfg.OutDir, "benchmarks.md"))
	if code := render(cfg); code != 0 {
		t.Fatalf("render: exit %d", code)
	}
	again, _ := os.ReadFile(filepath.Join(cfg.OutDir, "benchmarks.md"))
	if !strings.Contains(string(first), "## Many partitions") || string(first) != string(again) {
		t.Fatalf("many-partitions section missing or not re-rendered the same:\n%s", again)
	}
}
