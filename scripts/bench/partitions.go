package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// Many-partitions rows (BENCH_ONLY=partitions; in neither the default list nor bench-smoke unless
// BENCH_ONLY names it): for each size, a set of topics on A is loaded once, then kmm (A->B) and
// MM2 (A->C), one after the other, each replicate the whole set with one flow
// (`A->X.topics = bench-<id>-p<total>-.*`) and checkpoints on. A run measures the bulk copy
// (start-up, time to copy everything, records/s, CPU-s per GB, peak RSS), then a sustained low
// rate over every partition (cores, RSS), then how fresh the checkpoints of many groups are.
// MM2 4.1.1 asks the KRaft controller to create every remote topic in one request, which it
// refuses above 10,000 records ("Unable to perform excessively large batch operation"): at
// 10,000 partitions MM2 copies nothing, and its row fails with that reason.
//
//	BENCH_PARTITIONS_SIZES=100x10,100x40,100x100  topics x partitions per topic (1,000 / 4,000 / 10,000
//	                                 partitions); a plain number N is N partitions over BENCH_PARTITIONS_TOPICS topics
//	BENCH_PARTITIONS_TOPICS=100      topics of a size given as a plain number
//	BENCH_PARTITIONS_RECORDS         records loaded per size, 100 B values (default 1,000,000 x BENCH_SCALE;
//	                                 at least one per partition)
//	BENCH_PARTITIONS_TOOLS=kmm,mm2   the tools, run in this order
//	BENCH_PARTITIONS_TIMEOUT=6m      per run, to copy everything (a Go duration or seconds)
//	BENCH_PARTITIONS_RATE=2000       records/s of the sustained phase, over all partitions together
//	BENCH_PARTITIONS_SUSTAIN=30      seconds of the sustained phase
//	BENCH_PARTITIONS_GROUPS=1000     consumer groups whose checkpoints are timed
//
// Smoke (BENCH_SMOKE with BENCH_ONLY naming partitions): 4x5 partitions, 20 groups, 200 records/s
// for 5 s, a 3 minute timeout.

type partitionsSettings struct {
	sizes   []partitionsSize
	tools   []string
	records int64
	rate    float64
	sustain time.Duration
	groups  int
	timeout time.Duration
}

// partitionsSize is one size: topics topics of perTopic partitions each.
type partitionsSize struct{ topics, perTopic int }

func (z partitionsSize) total() int { return z.topics * z.perTopic }

// Waits after the sustained phase: for everything sent to reach the target, and for the
// checkpoints of every group after their commit.
const (
	sustainArrivalWait = 60 * time.Second
	checkpointWait     = 120 * time.Second
)

func partitionsConfig(cfg *config) (partitionsSettings, error) {
	defSizes, defGroups, defRate, defSustain, defTimeout := "100x10,100x40,100x100", 1000, 2000.0, 30.0, 6*time.Minute
	if cfg.Smoke {
		defSizes, defGroups, defRate, defSustain, defTimeout = "4x5", 20, 200, 5, 3*time.Minute
	}
	s := partitionsSettings{
		records: int64(envInt("BENCH_PARTITIONS_RECORDS", int(math.Round(1_000_000*cfg.Scale)))),
		rate:    envFloat("BENCH_PARTITIONS_RATE", defRate),
		sustain: time.Duration(envFloat("BENCH_PARTITIONS_SUSTAIN", defSustain) * float64(time.Second)),
		groups:  envInt("BENCH_PARTITIONS_GROUPS", defGroups),
		timeout: envDuration("BENCH_PARTITIONS_TIMEOUT", defTimeout),
	}
	var err error
	if s.sizes, err = parsePartitionsSizes(envStr("BENCH_PARTITIONS_SIZES", defSizes), envInt("BENCH_PARTITIONS_TOPICS", 100)); err != nil {
		return s, err
	}
	for _, v := range strings.Split(envStr("BENCH_PARTITIONS_TOOLS", "kmm,mm2"), ",") {
		if v = strings.TrimSpace(v); v != "kmm" && v != "mm2" {
			return s, fmt.Errorf("BENCH_PARTITIONS_TOOLS: %q is neither kmm nor mm2", v)
		}
		s.tools = append(s.tools, v)
	}
	return s, nil
}

// envDuration reads a Go duration ("6m") or a number of seconds.
func envDuration(k string, def time.Duration) time.Duration {
	v := os.Getenv(k)
	if v == "" {
		return def
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return d
	}
	return time.Duration(envFloat(k, 0) * float64(time.Second)) // exits on anything else
}

// parsePartitionsSizes reads "100x10,4000": topics x partitions per topic, or a total spread over
// topics topics.
func parsePartitionsSizes(v string, topics int) ([]partitionsSize, error) {
	var out []partitionsSize
	for _, f := range strings.Split(strings.ToLower(v), ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		var z partitionsSize
		var err error
		if t, p, ok := strings.Cut(f, "x"); ok {
			z.topics, err = strconv.Atoi(t)
			if err == nil {
				z.perTopic, err = strconv.Atoi(p)
			}
		} else if n, e := strconv.Atoi(f); e != nil || n%topics != 0 {
			err = fmt.Errorf("not a multiple of %d topics", topics)
		} else {
			z = partitionsSize{topics: topics, perTopic: n / topics}
		}
		if err != nil || z.topics <= 0 || z.perTopic <= 0 {
			return nil, fmt.Errorf("BENCH_PARTITIONS_SIZES: %q is neither <topics>x<partitions per topic> nor a multiple of BENCH_PARTITIONS_TOPICS (%d)", f, topics)
		}
		out = append(out, z)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("BENCH_PARTITIONS_SIZES: no size in %q", v)
	}
	return out, nil
}

// partitionSet is one size on A: topics bench-<id>-p<total>-NNN of perTopic partitions each.
// Partition g (0 ≤ g < total) of the set is partition g % perTopic of topic g / perTopic. Record
// i, of the load and of the sustained phase, goes to partition i % total (round robin over every
// partition of every topic); group i owns partition i % total.
type partitionSet struct {
	partitionsSize
	prefix string
	names  []string  // the topics on A
	w      *workload // what is loaded: records, payload bytes, A's end offsets by g
}

func newPartitionSet(cfg *config, z partitionsSize, records int64) *partitionSet {
	s := &partitionSet{partitionsSize: z, prefix: fmt.Sprintf("bench-%s-p%d-", cfg.ID, z.total())}
	for i := range z.topics {
		s.names = append(s.names, fmt.Sprintf("%s%03d", s.prefix, i))
	}
	s.w = &workload{Name: fmt.Sprintf("p%d", z.total()), Topic: s.prefix + "*", Records: records, ValueSize: 100, Partitions: z.total()}
	s.w.place = func(i int64) (string, int32) {
		tp := s.tp(int(i%int64(z.total())), "")
		return tp.Topic, tp.Partition
	}
	s.w.computeSizes()
	return s
}

// tp is partition g of the set, its topic name prefixed with prefix ("A." on the target).
func (s *partitionSet) tp(g int, prefix string) rdkafka.TP {
	return rdkafka.TP{Topic: prefix + s.names[g/s.perTopic], Partition: int32(g % s.perTopic)}
}

// tps is every partition of the set, by g.
func (s *partitionSet) tps(prefix string) []rdkafka.TP {
	out := make([]rdkafka.TP, s.total())
	for g := range out {
		out[g] = s.tp(g, prefix)
	}
	return out
}

func (s *partitionSet) remoteTopics() []string {
	out := make([]string, len(s.names))
	for i, t := range s.names {
		out[i] = "A." + t
	}
	return out
}

// groupPrefix starts the name of every group of the run (the properties' `groups` regex).
func groupPrefix(cfg *config) string { return "bench-" + cfg.ID + "-g" }

func (s *partitionSet) groups(cfg *config, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d-%04d", groupPrefix(cfg), s.total(), i)
	}
	return out
}

// load creates the set's topics on A in one CreateTopics call, loads its records with the
// workloads' loader and checks that A holds every one.
func (s *partitionSet) load(ctx context.Context, cfg *config) error {
	a := cfg.admins["A"]
	start := time.Now()
	cctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	err := createTopics(cctx, a, s.names, s.perTopic, nil, 2*time.Minute)
	cancel()
	if err != nil {
		return err
	}
	logf("partitions %d: created %d topics x %d partitions on A in %.1f s; loading %d x %d B records round robin", s.total(), s.topics, s.perTopic,
		time.Since(start).Seconds(), s.w.Records, s.w.ValueSize)
	if err := load(ctx, cfg.A, s.w); err != nil {
		return fmt.Errorf("loading %s*: %w", s.prefix, err)
	}
	end, err := listEnds(ctx, a, s.tps(""))
	if err != nil {
		return err
	}
	if sum(end) != s.w.Records {
		return fmt.Errorf("%s* holds %d records, want %d", s.prefix, sum(end), s.w.Records)
	}
	s.w.End = end
	logf("loaded %s* in %.1f s (%.0f records/s)", s.prefix, s.w.LoadSeconds, float64(s.w.Records)/s.w.LoadSeconds)
	return nil
}

// commitGroups commits on A group i of groups at offset off(p) of its partition p = i % total,
// eight groups at a time.
func (s *partitionSet) commitGroups(ctx context.Context, a *rdkafka.Admin, groups []string, off func(p int) int64) error {
	sem := make(chan struct{}, 8)
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for i, g := range groups {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			p := i % s.total()
			if err := a.AlterGroupOffsets(ctx, g, map[rdkafka.TP]rdkafka.OffsetMeta{s.tp(p, ""): {Offset: off(p)}}); err != nil {
				mu.Lock()
				first = cmp.Or(first, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return first
}

// partitionsResult is one tool's run over one size. A figure that was not measured is absent
// (null in the JSON), never 0.
type partitionsResult struct {
	Tool       string  `json:"tool"`
	Partitions int     `json:"partitions"`
	Topics     int     `json:"topics"`
	Records    int64   `json:"records"`
	Bytes      int64   `json:"payload_bytes"`
	LoadSec    float64 `json:"load_s"` // loading the size into A, once for every tool
	TimeoutSec float64 `json:"timeout_s"`
	OK         bool    `json:"ok"`
	Error      string  `json:"error,omitempty"`
	// KnownLimit: the failure is a known limit of the tool (MM2 creating every remote topic in
	// one request), not of the harness; it does not fail the benchmark.
	KnownLimit string         `json:"known_limit,omitempty"`
	LogMatches map[string]int `json:"log_matches,omitempty"` // failed copy: lines of the tool's log with each of logSigns

	Copied       int64    `json:"copied"`        // records on the target when everything arrived, or when the run gave up
	RemoteTopics int      `json:"remote_topics"` // remote topics with all their partitions on the target, then
	StartUpSec   *float64 `json:"start_up_s,omitempty"`
	TotalSec     *float64 `json:"total_s,omitempty"`
	RecPerSec    *float64 `json:"rec_per_s,omitempty"`
	CPUPerGB     *float64 `json:"cpu_s_per_gb,omitempty"`
	PeakRSSMB    *float64 `json:"peak_rss_mb,omitempty"`
	OtherCores   *float64 `json:"other_cores,omitempty"` // noise: other processes during the copy

	SustainTargetRate  float64  `json:"sustain_target_rate"`
	SustainSeconds     float64  `json:"sustain_seconds"`
	SustainRate        *float64 `json:"sustain_rate,omitempty"` // achieved
	SustainCores       *float64 `json:"sustain_cores,omitempty"`
	SustainRSSMaxMB    *float64 `json:"sustain_rss_max_mb,omitempty"`
	SustainRSSMedianMB *float64 `json:"sustain_rss_median_mb,omitempty"`
	SustainArrivedSec  *float64 `json:"sustain_arrived_s,omitempty"` // phase end -> everything sent on the target
	SustainError       string   `json:"sustain_error,omitempty"`

	Groups            int      `json:"groups"`
	CommitSec         *float64 `json:"checkpoints_commit_s,omitempty"` // committing every group at T0
	CheckpointsP50Sec *float64 `json:"checkpoints_p50_s,omitempty"`
	CheckpointsAllSec *float64 `json:"checkpoints_all_s,omitempty"`
	GroupsCovered     int      `json:"groups_covered"`
	CheckpointsError  string   `json:"checkpoints_error,omitempty"`

	LoadAvgStart string `json:"loadavg_start"`
	LoadAvgEnd   string `json:"loadavg_end"`
	LogDir       string `json:"log_dir,omitempty"`
}

// ptr is a measured figure (JSON has no Inf/NaN).
func ptr(v float64) *float64 { return new(finite(v)) }

// logSigns are the log lines that explain a copy that never started: MM2 4.1.1 asks the KRaft
// controller for every remote topic in one request, which it refuses above 10,000 records.
var logSigns = []string{"excessively large batch", "Could not create topic"}

// checkpointsTopic is where both tools write the flow's checkpoints on the target (the default
// replication policy's <source alias>.checkpoints.internal).
const checkpointsTopic = "A.checkpoints.internal"

func offsetSyncsTopic(target string) string { return "mm2-offset-syncs." + target + ".internal" }

// runPartitions measures every size with every tool; a size whose topics cannot be loaded ends
// the rows with an error.
func runPartitions(ctx context.Context, cfg *config, record func(partitionsResult)) error {
	s, err := partitionsConfig(cfg)
	if err != nil {
		return err
	}
	for _, z := range s.sizes {
		if ctx.Err() != nil {
			break
		}
		if err := runPartitionsSize(ctx, cfg, s, z, record); err != nil {
			return err
		}
	}
	return ctx.Err()
}

func runPartitionsSize(ctx context.Context, cfg *config, s partitionsSettings, z partitionsSize, record func(partitionsResult)) error {
	records := s.records
	if records < int64(z.total()) {
		logf("partitions %d: %d records would leave partitions empty: loading %d", z.total(), records, z.total())
		records = int64(z.total())
	}
	set := newPartitionSet(cfg, z, records)
	defer func() {
		if err := deleteTopicsWait(context.Background(), cfg.admins["A"], set.names...); err != nil {
			logf("warning: deleting %s* on A: %v", set.prefix, err)
		}
	}()
	if err := set.load(ctx, cfg); err != nil {
		return err
	}
	for _, tool := range s.tools {
		if ctx.Err() != nil {
			break
		}
		logf("partitions %s %d (%d x %d) ...", tool, z.total(), z.topics, z.perTopic)
		r := runPartitionsTool(ctx, cfg, s, set, tool)
		logPartitions(r)
		record(r)
	}
	return nil
}

// runPartitionsTool runs tool over set from scratch: copy, sustained phase, checkpoints; then
// stops it and deletes what it made on the target (and its groups).
func runPartitionsTool(ctx context.Context, cfg *config, s partitionsSettings, set *partitionSet, tool string) (res partitionsResult) {
	res = partitionsResult{Tool: tool, Partitions: set.total(), Topics: set.topics, Records: set.w.Records, Bytes: set.w.TotalBytes,
		LoadSec: set.w.LoadSeconds, TimeoutSec: s.timeout.Seconds(), SustainTargetRate: s.rate, SustainSeconds: s.sustain.Seconds(),
		Groups: s.groups, LoadAvgStart: loadAvg()}
	defer func() { res.LoadAvgEnd = loadAvg() }()
	alias, bootstrap := targetOf(cfg, tool)
	adm := cfg.admins[alias]
	runName := fmt.Sprintf("bench-%s-%s-p%d", cfg.ID, tool, set.total())
	res.LogDir = filepath.Join(cfg.LogDir, runName)
	props, err := writePartitionsProps(cfg, set, alias, bootstrap, runName, res.LogDir)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	perRun := append(set.remoteTopics(), runName+"-offsets", runName+"-status", runName+"-configs")
	if err := deleteTopicsWait(ctx, adm, perRun...); err != nil {
		res.Error = err.Error()
		return res
	}
	fresh, err := absentInternalTopics(ctx, cfg, alias)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	groups := set.groups(cfg, s.groups)
	defer cleanupPartitionsRun(cfg, alias, perRun, fresh, groups)
	// Every group exists before the tool starts: MM2 looks for new groups only every
	// refresh.groups.interval, and the freshness measured is that of checkpoints, not discovery.
	if err := set.commitGroups(ctx, cfg.admins["A"], groups, func(int) int64 { return 0 }); err != nil {
		res.Error = fmt.Sprintf("committing the groups at 0 on A: %v", err)
		return res
	}
	var r *replicator
	if isKMM(tool) {
		r, err = startKMM(cfg, runName, props, alias, res.LogDir)
	} else {
		r, err = startMM2(cfg, runName, props, alias, res.LogDir)
	}
	if err != nil {
		res.Error = err.Error()
		return res
	}
	defer r.stop(cfg) // before the cleanup: a running tool would make its topics again
	tr := &remoteTracker{adm: adm, set: set, ready: make([]bool, set.topics)}
	if !measureCopy(ctx, cfg, s, tr, r, &res) {
		return res
	}
	srcEnds, ok := measureSustained(ctx, cfg, s, tr, r, &res)
	if ok {
		measureCheckpoints(ctx, cfg, set, adm, bootstrap, srcEnds, groups, &res)
	}
	return res
}

// writePartitionsProps writes the run's properties file: the bulk rows' file for the whole set,
// with checkpoints on.
func writePartitionsProps(cfg *config, set *partitionSet, alias, bootstrap, runName, logDir string) (string, error) {
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return "", err
	}
	file := filepath.Join(logDir, "mm2.properties")
	text := mm2Props(cfg, propsSpec{Target: alias, TargetBootstrap: bootstrap, TopicsRegex: regexp.QuoteMeta(set.prefix) + ".*",
		RunName: runName, Tasks: cfg.Tasks, Batching: true, Checkpoints: true})
	return file, os.WriteFile(file, []byte(text), 0o644)
}

// absentInternalTopics lists, by cluster, the checkpoint and offset-sync topics of the flow
// A->alias that do not exist yet: the run creates them and deletes them after it. Ones that
// exist already are not per run (other tests on the bed may use them) and are left alone.
func absentInternalTopics(ctx context.Context, cfg *config, alias string) (map[string][]string, error) {
	out := map[string][]string{}
	for c, names := range map[string][]string{"A": {offsetSyncsTopic(alias)}, alias: {checkpointsTopic, offsetSyncsTopic(alias)}} {
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		ts, err := cfg.admins[c].ListTopics(lctx)
		cancel()
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			if _, ok := ts[n]; !ok {
				out[c] = append(out[c], n)
			}
		}
	}
	return out, nil
}

// cleanupPartitionsRun deletes what a run leaves: its groups on A and on the target, its remote
// and Connect topics on the target, and the internal topics it created.
func cleanupPartitionsRun(cfg *config, alias string, perRun []string, fresh map[string][]string, groups []string) {
	ctx := context.Background()
	for _, c := range []string{"A", alias} {
		if err := cfg.admins[c].DeleteGroups(ctx, groups...); err != nil {
			logf("warning: deleting the groups %s* on %s: %v", groups[0], c, err)
		}
	}
	if err := deleteTopicsWait(ctx, cfg.admins[alias], append(perRun, fresh[alias]...)...); err != nil {
		logf("warning: cleanup of the run's topics on %s: %v", alias, err)
	}
	if err := deleteTopicsWait(ctx, cfg.admins["A"], fresh["A"]...); err != nil {
		logf("warning: cleanup of %v on A: %v", fresh["A"], err)
	}
}

// remoteTracker reads the end offsets of a set's remote partitions on the target. A remote topic
// counts once it shows all its partitions; until every one does, each read first lists the
// target's topics.
type remoteTracker struct {
	adm    *rdkafka.Admin
	set    *partitionSet
	ready  []bool // by topic index
	nReady int
}

// ends returns the target's end offset of every partition of the set, by g (0 for a topic that
// is not complete there yet), with one ListOffsets call.
func (t *remoteTracker) ends(ctx context.Context) ([]int64, error) {
	if t.nReady < len(t.ready) {
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		ts, err := t.adm.ListTopics(lctx)
		cancel()
		if err != nil {
			return nil, err
		}
		for i, name := range t.set.names {
			if !t.ready[i] && ts["A."+name].Partitions >= t.set.perTopic {
				t.ready[i] = true
				t.nReady++
			}
		}
	}
	out := make([]int64, t.set.total())
	var tps []rdkafka.TP
	var at []int
	for g := range out {
		if t.ready[g/t.set.perTopic] {
			tps = append(tps, t.set.tp(g, "A."))
			at = append(at, g)
		}
	}
	if len(tps) == 0 {
		return out, nil
	}
	got, err := listEnds(ctx, t.adm, tps)
	if err != nil {
		return nil, err
	}
	for k, g := range at {
		out[g] = got[k]
	}
	return out, nil
}

// copyWatch is what waitFor saw: the first poll with a record on the target, the poll that found
// everything (onePoll: the same poll), the records there at the last poll and its error.
type copyWatch struct {
	first, done       time.Time
	firstCPU, doneCPU cpuWindow
	onePoll           bool
	copied            int64
	lastErr           error
}

var errTimedOut = errors.New("timed out")

// waitFor polls the target every cfg.Poll until every partition reaches want, the replicator
// exits, ctx ends or deadline passes (errTimedOut).
func (t *remoteTracker) waitFor(ctx context.Context, cfg *config, r *replicator, want []int64, deadline time.Time) (copyWatch, error) {
	var w copyWatch
	for {
		switch {
		case ctx.Err() != nil:
			return w, ctx.Err()
		case r.exited():
			return w, fmt.Errorf("%s exited early", r.tool)
		case time.Now().After(deadline):
			return w, errTimedOut
		}
		next := time.Now().Add(cfg.Poll)
		ends, err := t.ends(ctx)
		w.lastErr = err
		if err == nil {
			w.copied = sum(ends)
			if w.first.IsZero() && w.copied > 0 {
				w.first, w.firstCPU = time.Now(), sampleCPU(cfg, r.pid)
				w.onePoll = true
			} else {
				w.onePoll = false
			}
			if reached(ends, want) {
				w.done, w.doneCPU = time.Now(), sampleCPU(cfg, r.pid)
				return w, nil
			}
		}
		time.Sleep(time.Until(next))
	}
}

// reached: every partition's offset is at least want's.
func reached(ends, want []int64) bool {
	for g := range want {
		if ends[g] < want[g] {
			return false
		}
	}
	return true
}

// measureCopy waits until the target holds every record of the set and fills in the copy's
// figures; false: it did not within the timeout (res.Error says how far it got and why).
func measureCopy(ctx context.Context, cfg *config, s partitionsSettings, tr *remoteTracker, r *replicator, res *partitionsResult) bool {
	set := tr.set
	w, err := tr.waitFor(ctx, cfg, r, set.w.End, r.start.Add(s.timeout))
	res.Copied, res.RemoteTopics = w.copied, tr.nReady
	if !w.first.IsZero() {
		res.StartUpSec = ptr(w.first.Sub(r.start).Seconds())
	}
	if err != nil {
		res.LogMatches = countInLog(r.logFile(), logSigns...)
		what := err.Error()
		if errors.Is(err, errTimedOut) {
			what = fmt.Sprintf("did not copy everything within %s", s.timeout)
		}
		if w.lastErr != nil {
			what += fmt.Sprintf(" (last poll: %v)", w.lastErr)
		}
		res.Error = fmt.Sprintf("%s: %d of %d records arrived, %d of %d remote topics complete; log: %s; log tail:\n%s",
			what, w.copied, set.w.Records, tr.nReady, set.topics, matchesNote(res.LogMatches), r.logTail(30))
		if r.tool == "mm2" && res.LogMatches[logSigns[0]] > 0 {
			res.KnownLimit = "MM2 creates every remote topic in one request, which the KRaft controller refuses above 10,000 records"
		}
		return false
	}
	hwm, _ := procStatusKB(r.pid, "VmHWM")
	res.TotalSec = ptr(w.done.Sub(r.start).Seconds())
	// At least one poll interval: everything may arrive between two polls at small sizes.
	res.RecPerSec = ptr(float64(set.w.Records) / max(w.done.Sub(w.first).Seconds(), cfg.Poll.Seconds()))
	if hwm > 0 {
		res.PeakRSSMB = ptr(float64(hwm) / 1024)
	}
	// Everything found by the poll that saw the first record (small sizes): no CPU window.
	if !w.onePoll {
		res.CPUPerGB = ptr((w.doneCPU.proc - w.firstCPU.proc) / (float64(set.w.TotalBytes) / 1e9))
		var rr runResult
		rr.attribute(w.firstCPU, w.doneCPU)
		res.OtherCores = ptr(rr.OtherCores)
	}
	res.OK = true
	return true
}

// countInLog counts, in file, the occurrences of each of needles.
func countInLog(file string, needles ...string) map[string]int {
	b, _ := os.ReadFile(file)
	out := map[string]int{}
	for _, n := range needles {
		out[n] = bytes.Count(b, []byte(n))
	}
	return out
}

func matchesNote(m map[string]int) string {
	parts := make([]string, 0, len(logSigns))
	for _, n := range logSigns {
		parts = append(parts, fmt.Sprintf("%d x %q", m[n], n))
	}
	return strings.Join(parts, ", ")
}

// measureSustained sends s.rate records/s round robin over every partition for s.sustain while
// it samples the replicator's CPU and VmRSS (every cfg.Poll), then waits for everything sent to
// reach the target. It returns A's end offsets after the phase; false: the phase failed (then
// the run does: what was sent did not all arrive).
func measureSustained(ctx context.Context, cfg *config, s partitionsSettings, tr *remoteTracker, r *replicator, res *partitionsResult) ([]int64, bool) {
	set := tr.set
	fail := func(format string, a ...any) ([]int64, bool) {
		res.SustainError = fmt.Sprintf(format, a...)
		res.OK, res.Error = false, "sustained phase: "+res.SustainError
		return nil, false
	}
	prod, err := newAsyncProducer(loaderConfig(cfg.A))
	if err != nil {
		return fail("%v", err)
	}
	gen := newRecordGen(*set.w)
	stopRSS := sampleRSS(r.pid, cfg.Poll)
	a := sampleCPU(cfg, r.pid)
	sent, took, err := pace(ctx, s.rate, int64(math.Round(s.rate*s.sustain.Seconds())), func(j int64) error {
		i := set.w.Records + j // numbered after the load: keys and bench-seq stay unique
		topic, part := set.w.at(i)
		return prod.produce(topic, part, gen.key(i), gen.value(i), gen.headers(i))
	})
	b := sampleCPU(cfg, r.pid)
	rss := stopRSS()
	prod.close(30 * time.Second)
	if err != nil {
		return fail("produce: %v", err)
	}
	if n := prod.failed.Load(); n > 0 {
		return fail("%d records failed to produce to A", n)
	}
	res.SustainRate = ptr(float64(sent) / took.Seconds())
	res.SustainCores = ptr((b.proc - a.proc) / b.t.Sub(a.t).Seconds())
	if len(rss) > 0 {
		res.SustainRSSMaxMB, res.SustainRSSMedianMB = ptr(slices.Max(rss)), ptr(medianOf(rss))
	}
	srcEnds, err := listEnds(ctx, cfg.admins["A"], set.tps(""))
	if err != nil {
		return fail("end offsets on A: %v", err)
	}
	w, err := tr.waitFor(ctx, cfg, r, srcEnds, time.Now().Add(sustainArrivalWait))
	if err != nil {
		return fail("%d of %d records sent arrived within %s (%v)", w.copied-res.Copied, sum(srcEnds)-res.Copied, sustainArrivalWait, err)
	}
	res.SustainArrivedSec = ptr(w.done.Sub(b.t).Seconds())
	return srcEnds, true
}

// sampleRSS samples pid's VmRSS every d until the returned function is called, which returns
// the samples in MiB.
func sampleRSS(pid int, d time.Duration) func() []float64 {
	stop, out := make(chan struct{}), make(chan []float64, 1)
	go func() {
		var xs []float64
		tick := time.NewTicker(d)
		defer tick.Stop()
		for {
			if kb, err := procStatusKB(pid, "VmRSS"); err == nil {
				xs = append(xs, float64(kb)/1024)
			}
			select {
			case <-stop:
				out <- xs
				return
			case <-tick.C:
			}
		}
	}()
	return func() []float64 { close(stop); return <-out }
}

// measureCheckpoints commits, at T0, every group on A at its partition's end (srcEnds), and times
// how long the tool takes to write checkpoints at or past those commits for half and for all of
// the groups (at most checkpointWait).
func measureCheckpoints(ctx context.Context, cfg *config, set *partitionSet, adm *rdkafka.Admin, bootstrap string, srcEnds []int64, groups []string, res *partitionsResult) {
	want := make(map[string]int64, len(groups))
	for i, g := range groups {
		want[g] = srcEnds[i%set.total()]
	}
	t0 := time.Now()
	if err := set.commitGroups(ctx, cfg.admins["A"], groups, func(p int) int64 { return srcEnds[p] }); err != nil {
		res.CheckpointsError = fmt.Sprintf("committing the groups on A: %v", err)
		return
	}
	res.CommitSec = ptr(time.Since(t0).Seconds())
	c, err := awaitCheckpoints(ctx, adm, bootstrap, want, t0)
	res.GroupsCovered = c.covered
	if c.half > 0 {
		res.CheckpointsP50Sec = ptr(c.half.Seconds())
	}
	if c.all > 0 {
		res.CheckpointsAllSec = ptr(c.all.Seconds())
	}
	switch {
	case err != nil:
		res.CheckpointsError = fmt.Sprintf("%d of %d groups covered: %v", c.covered, len(groups), err)
	case c.all == 0:
		res.CheckpointsError = fmt.Sprintf("%d of %d groups covered within %s", c.covered, len(groups), checkpointWait)
	}
}

// coverage is how long after T0 half and all of the groups had a checkpoint at or past their
// commit (0: not within the wait), and how many did.
type coverage struct {
	half, all time.Duration
	covered   int
}

// awaitCheckpoints reads the target's checkpoints topic from the beginning until every group of
// want has a checkpoint whose upstream offset is at least want's, or checkpointWait after t0. A
// group counts as covered from the first such checkpoint.
func awaitCheckpoints(ctx context.Context, adm *rdkafka.Admin, bootstrap string, want map[string]int64, t0 time.Time) (coverage, error) {
	var c coverage
	deadline := t0.Add(checkpointWait)
	parts, err := waitCheckpointsTopic(ctx, adm, deadline)
	if err != nil {
		return c, err
	}
	cons, err := rdkafka.NewConsumer("checkpoint-reader", rdkafka.Config{"bootstrap.servers": bootstrap})
	if err != nil {
		return c, err
	}
	defer cons.Close()
	start := make(map[rdkafka.TP]int64, parts)
	for p := range parts {
		start[rdkafka.TP{Topic: checkpointsTopic, Partition: int32(p)}] = int64(rdkafka.Earliest)
	}
	if err := cons.Assign(start); err != nil {
		return c, err
	}
	covered := make(map[string]bool, len(want))
	for time.Now().Before(deadline) {
		recs, err := cons.Poll(ctx, 10000, 200*time.Millisecond)
		if err != nil {
			return c, err
		}
		for _, rec := range recs {
			cp, err := mm2wire.DecodeCheckpoint(rec.Key, rec.Value)
			if up, ok := want[cp.Group]; err == nil && ok && cp.UpstreamOffset >= up {
				covered[cp.Group] = true
			}
		}
		c.covered = len(covered)
		if c.half == 0 && 2*c.covered >= len(want) {
			c.half = time.Since(t0)
		}
		if c.covered == len(want) {
			c.all = time.Since(t0)
			return c, nil
		}
	}
	return c, ctx.Err()
}

// waitCheckpointsTopic waits until the target has the checkpoints topic and returns its
// partition count.
func waitCheckpointsTopic(ctx context.Context, adm *rdkafka.Admin, deadline time.Time) (int, error) {
	for {
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		ts, err := adm.ListTopics(lctx)
		cancel()
		if n := ts[checkpointsTopic].Partitions; err == nil && n > 0 {
			return n, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return 0, fmt.Errorf("no %s on %s (last error %v)", checkpointsTopic, adm.Name(), err)
		}
		time.Sleep(time.Second)
	}
}

// logPartitions logs a run's line (and, failed, why).
func logPartitions(r partitionsResult) {
	f := func(v *float64) string { return figure(v, true, num) }
	if r.TotalSec == nil { // nothing measured but how far the copy got: that is in the error
		logf("FAILED partitions %s %d%s: %s", r.Tool, r.Partitions, map[bool]string{true: " (known limit: " + r.KnownLimit + ")"}[r.KnownLimit != ""], r.Error)
		return
	}
	logf("partitions %-3s %5d (%d x %d): start-up %s s, all copied in %s s, %s rec/s, CPU %s s/GB, peak RSS %s MiB; sustained %s rec/s: %s cores, RSS max %s / median %s MiB; checkpoints of %d groups: 50 %% in %s s, all in %s s (%d covered)",
		r.Tool, r.Partitions, r.Topics, r.Partitions/max(r.Topics, 1), f(r.StartUpSec), f(r.TotalSec), figure(r.RecPerSec, true, thousands), f(r.CPUPerGB), f(r.PeakRSSMB),
		figure(r.SustainRate, true, thousands), f(r.SustainCores), f(r.SustainRSSMaxMB), f(r.SustainRSSMedianMB), r.Groups, f(r.CheckpointsP50Sec), f(r.CheckpointsAllSec), r.GroupsCovered)
	switch {
	case !r.OK:
		logf("FAILED partitions %s %d: %s", r.Tool, r.Partitions, r.Error)
	case r.CheckpointsError != "":
		logf("partitions %s %d: checkpoints: %s", r.Tool, r.Partitions, r.CheckpointsError)
	}
}

// figure renders a measured value; one that is absent is "?" where the run got that far (not
// measured) and "—" where it did not (the result column says why).
func figure(v *float64, gotThere bool, f func(float64) string) string {
	switch {
	case v != nil:
		return f(*v)
	case gotThere:
		return "?"
	default:
		return "—"
	}
}

// partitionsMarkdown renders the many-partitions section ("" without its rows).
func (rep *report) partitionsMarkdown() string {
	if len(rep.Partitions) == 0 {
		return ""
	}
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	r0 := rep.Partitions[0]
	p("## Many partitions\n\n")
	p("Each size is a set of topics on A (`bench-<id>-p<N>-NNN`, RF 1, created with one CreateTopics call) loaded once with 100 B records ")
	p("round robin over every partition (%d B payload per record with key and headers). kmm (A->B), then MM2 (A->C), each replicate the whole set from scratch ", r0.Bytes/max(r0.Records, 1))
	p("with one flow, `A->X.topics = bench-<id>-p<N>-.*`, the same generated file as the bulk rows (`tasks.max = %d`) plus checkpoints every 5 s for the run's groups ", rep.Config.Tasks)
	p("(`emit.checkpoints.interval.seconds = 5`, `refresh.groups.interval.seconds = 5`). One run per tool and size.\n\n")
	p("- **Copy**: *start-up* = process start -> first record on the target; *time to copy all* = process start -> every partition at the source's end ")
	p("(one ListOffsets call for every remote partition each 100 ms); *records/s* = records / (done - first record); *CPU-s per GB* = the process's CPU between ")
	p("the first record and done / payload GB; *peak RSS* = `VmHWM` at done. A run that has not copied everything within %s fails with how many records arrived ", time.Duration(r0.TimeoutSec*float64(time.Second)))
	p("and the count of its log's `excessively large batch` and `Could not create topic` lines (MM2 4.1.1 asks the KRaft controller for every remote topic in one request, which it refuses above 10,000 records).\n")
	p("- **Sustained**: then a producer sends %s records/s round robin over every partition for %s s; *cores* = the process's CPU over the phase / its length, ", thousands(r0.SustainTargetRate), num(r0.SustainSeconds))
	p("*RSS* = `VmRSS` sampled every 100 ms (max / median); everything sent must reach the target within %s.\n", sustainArrivalWait)
	p("- **Checkpoints**: %s groups (group *i* owns partition *i* mod N) are committed at offset 0 on A before the tool starts; after the sustained phase each is ", thousands(float64(r0.Groups)))
	p("committed at its partition's end (T0, a few groups at a time); the driver reads `%s` on the target from the beginning and times T0 -> half and all of the groups ", checkpointsTopic)
	p("having a checkpoint at or past that commit (at most %s).\n\n", checkpointWait)
	p("| tool | partitions | start-up s | time to copy all s | records/s | CPU-s per GB | peak RSS MiB | sustained cores | sustained RSS max / median MiB | checkpoints 50 %% / 100 %% s | result |\n")
	p("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rep.Partitions {
		copied, sustained := r.TotalSec != nil, r.SustainRate != nil
		p("| %s | %s (%d × %d) | %s | %s | %s | %s | %s | %s | %s / %s | %s | %s |\n", map[string]string{"kmm": "kmm", "mm2": "MM2"}[r.Tool],
			thousands(float64(r.Partitions)), r.Topics, r.Partitions/max(r.Topics, 1), figure(r.StartUpSec, copied, num), figure(r.TotalSec, false, num),
			figure(r.RecPerSec, copied, thousands), figure(r.CPUPerGB, copied, num), figure(r.PeakRSSMB, copied, num), figure(r.SustainCores, sustained, num),
			figure(r.SustainRSSMaxMB, sustained, num), figure(r.SustainRSSMedianMB, sustained, num), checkpointsCell(r), resultCell(r))
	}
	p("\nLoads into A: ")
	var loads []string
	for _, r := range rep.Partitions {
		l := fmt.Sprintf("%s partitions: %s records in %s s", thousands(float64(r.Partitions)), thousands(float64(r.Records)), num(r.LoadSec))
		if !slices.Contains(loads, l) {
			loads = append(loads, l)
		}
	}
	p("%s.\n\n", strings.Join(loads, "; "))
	return b.String()
}

// checkpointsCell is "50 % / 100 %" in seconds, or how many groups were covered when not all.
func checkpointsCell(r partitionsResult) string {
	if r.CommitSec == nil {
		if r.CheckpointsError != "" {
			return "— (" + mdCell(r.CheckpointsError) + ")"
		}
		return "—"
	}
	all := figure(r.CheckpointsAllSec, true, num)
	if r.CheckpointsAllSec == nil {
		all = "— (" + mdCell(r.CheckpointsError) + ")"
	}
	return figure(r.CheckpointsP50Sec, false, num) + " / " + all
}

func resultCell(r partitionsResult) string {
	if r.OK {
		return "yes"
	}
	s := "**no**: " + mdCell(r.Error)
	if r.KnownLimit != "" {
		s += " (known limit: " + mdCell(r.KnownLimit) + ")"
	}
	return s
}

// mdCell is the first line of s, fit for a table cell.
func mdCell(s string) string { return strings.ReplaceAll(firstLine(s), "|", "/") }

// partitionsSmokeCheck: bench-smoke with BENCH_ONLY naming partitions needs every run usable.
func partitionsSmokeCheck(rows []partitionsResult, md []byte) error {
	if len(rows) == 0 {
		return fmt.Errorf("no many-partitions run in the report")
	}
	for _, r := range rows {
		if !r.OK || r.StartUpSec == nil || r.PeakRSSMB == nil || r.SustainCores == nil || r.CheckpointsAllSec == nil {
			return fmt.Errorf("many-partitions run %s %d not usable: %s%s", r.Tool, r.Partitions, r.Error, r.CheckpointsError)
		}
	}
	if !bytes.Contains(md, []byte("## Many partitions")) {
		return fmt.Errorf("benchmarks.md has no many-partitions section")
	}
	return nil
}
