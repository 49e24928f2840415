// Command benchfailover is `make bench-failover`: the translate + commit part of a planned
// failover (no fence, no drain) of BENCH_GROUPS groups (default 500) × BENCH_PARTITIONS
// partitions (default 50) on the local test bed, then the same of kmm failback of those groups
// (reverse translation over the flow's offset syncs, commits on A), timed for kmm (pkg/switchover's exact
// translation and its commit steps through the plan executor, journaled in __kmm_state) and, in
// the same run on the same groups, for MirrorMaker 2's way: RemoteClusterUtils.translateOffsets
// per group plus the commit of kafka-consumer-groups --reset-offsets (FailoverBench.java against
// the bed's Kafka jars), and a sample of real kafka-consumer-groups --reset-offsets invocations
// (one JVM per group, as a runbook does) extrapolated to all groups.
//
// The data: a topic on A and its remote copy on B holding identical records at identical
// offsets (as a drained replication leaves them), each group committed on A at a different
// offset per partition, and MM2 checkpoints for every group partition on B. Everything it
// creates is named with a fresh id and deleted at the end. Results go to stdout and to
// .testbed/bench-failover/result.{json,md}.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/checkpoint"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/flowstate"
	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/plan"
	"github.com/kmmproject/kmm/pkg/rdkafka"
	"github.com/kmmproject/kmm/pkg/switchover"
)

func envInt(k string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(k)); err == nil && v > 0 {
		return v
	}
	return def
}

func must(err error, what string) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench-failover: %s: %v\n", what, err)
		os.Exit(1)
	}
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// Result is what the benchmark measured.
type Result struct {
	At                time.Time `json:"at"`
	Groups            int       `json:"groups"`
	Partitions        int       `json:"partitions_per_group"`
	RecordsPerPart    int       `json:"records_per_partition"`
	GroupPartitions   int       `json:"group_partitions"`
	KMMTranslateMs    int64     `json:"kmm_translate_ms"`
	KMMCommitMs       int64     `json:"kmm_commit_ms"`
	KMMTotalMs        int64     `json:"kmm_total_ms"`
	KMMExact          int       `json:"kmm_exact"`
	MM2TranslateMs    int64     `json:"mm2_translate_ms"`
	MM2CommitMs       int64     `json:"mm2_commit_ms"`
	MM2TotalMs        int64     `json:"mm2_total_ms"`
	MM2Partitions     int64     `json:"mm2_partitions"`
	MM2GroupsMeasured int       `json:"mm2_groups_measured"`
	MM2Note           string    `json:"mm2_note,omitempty"`
	CLISamples        int       `json:"cli_samples"`
	CLIPerGroupMs     int64     `json:"cli_per_group_ms"`
	CLIExtrapolatedMs int64     `json:"cli_extrapolated_ms"`
	LoadBefore        string    `json:"loadavg_before"`
	LoadAfter         string    `json:"loadavg_after"`
	CPUs              int       `json:"cpus"`
	KMMWithin5s       bool      `json:"kmm_within_5s"`
	// Failback of the same groups (translated back in reverse over the flow's offset syncs,
	// committed on A through the executor, one journaled step per group).
	FailbackTranslateMs int64  `json:"failback_translate_ms"`
	FailbackCommitMs    int64  `json:"failback_commit_ms"`
	FailbackTotalMs     int64  `json:"failback_total_ms"`
	FailbackExact       int    `json:"failback_exact"`
	FailbackPartitions  int    `json:"failback_group_partitions"`
	FailbackWithin5s    bool   `json:"failback_within_5s"`
	CLIExtrapolateNote  string `json:"cli_note"`
}

func main() {
	ctx := context.Background()
	root, _ := os.Getwd()
	off := envInt("KMM_TESTBED_PORT_OFFSET", 0)
	bootA, bootB := fmt.Sprintf("127.0.0.1:%d", 19092+off), fmt.Sprintf("127.0.0.1:%d", 29092+off)
	groups, parts, recs := envInt("BENCH_GROUPS", 500), envInt("BENCH_PARTITIONS", 50), envInt("BENCH_RECORDS", 100)
	samples := envInt("BENCH_CLI_SAMPLES", 3)
	budget := envInt("BENCH_MM2_BUDGET", 600) // seconds for MM2's per-group loop; the rest is extrapolated
	libs, _ := filepath.Glob(filepath.Join(root, ".testbed", "kafka-*", "libs"))
	if len(libs) == 0 {
		must(fmt.Errorf("no .testbed/kafka-*/libs (run scripts/testbed.sh fetch)"), "kafka jars")
	}
	sort.Strings(libs)
	lib := libs[len(libs)-1]
	out := filepath.Join(root, ".testbed", "bench-failover")
	must(os.MkdirAll(out, 0o755), "output dir")
	// BENCH_FAILOVER_ONLY: timing (the translate + commit rows) or translation (translation
	// error vs lag, translation.go); default both, timing first.
	only := os.Getenv("BENCH_FAILOVER_ONLY")
	runTranslation := func() {
		bootC := fmt.Sprintf("127.0.0.1:%d", 14092+off)
		bad, err := translationBench(ctx, root, lib, bootA, bootB, bootC, out)
		must(err, "translation error vs lag")
		if bad > 0 {
			fmt.Fprintf(os.Stderr, "bench-failover: kmm translate-offsets is not exact in %d row(s) (goal: error 0 at every lag)\n", bad)
			os.Exit(1)
		}
	}
	if only == "translation" {
		runTranslation()
		return
	}
	res := Result{At: time.Now().UTC(), Groups: groups, Partitions: parts, RecordsPerPart: recs, LoadBefore: loadavg(), CPUs: cpus()}

	id := strconv.FormatInt(time.Now().UnixNano()%0xffffff, 16)
	alias, topic := "FB"+id, "fobench-"+id
	prefix := "fobench-" + id + "-g"
	props := filepath.Join(out, "mm2-"+id+".properties")
	must(os.WriteFile(props, []byte(strings.Join([]string{
		"clusters = " + alias + ", B",
		alias + ".bootstrap.servers = " + bootA,
		"B.bootstrap.servers = " + bootB,
		alias + "->B.enabled = true",
		alias + "->B.topics = " + topic,
		"B->" + alias + ".topics = " + topic, // failback's reverse flow (heartbeats only: nothing to copy back here)
		"replication.factor = 1", "checkpoints.topic.replication.factor = 1", "offset-syncs.topic.replication.factor = 1",
		"heartbeats.topic.replication.factor = 1", "offset.storage.replication.factor = 1", "status.storage.replication.factor = 1",
		"config.storage.replication.factor = 1", "",
	}, "\n")), 0o600), "props")
	defer os.Remove(props)
	cfg, err := cmdutil.Load(mm2conf.LoadOptions{ConfigFile: props}, io.Discard)
	must(err, "loading the flow")
	flows, err := flow.FromMM2(cfg)
	must(err, "flows")
	f, err := flow.One(flows, flow.Selector{Flow: alias + "->B"})
	must(err, "flow")
	src, err := rdkafka.Opener{}.Open(f, flow.Source)
	must(err, "opening A")
	defer src.Close()
	tgt, err := rdkafka.Opener{}.Open(f, flow.Target)
	must(err, "opening B")
	defer tgt.Close()
	remote := f.RemoteTopic(topic)
	ckTopic := f.CheckpointsTopic()
	_, syncsTopic := f.OffsetSyncs() // on A: failback's reverse translation reads it
	names := make([]string, groups)
	for i := range names {
		names[i] = prefix + strconv.Itoa(i)
	}
	defer func() { // leave nothing behind
		dctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		_ = src.DeleteGroups(dctx, names...)
		_ = tgt.DeleteGroups(dctx, names...)
		_ = src.DeleteTopics(dctx, topic)
		_ = tgt.DeleteTopics(dctx, remote, ckTopic)
		_ = src.DeleteTopics(dctx, syncsTopic)
	}()

	// Setup (not timed): identical records on both sides, group offsets on A, checkpoints on B.
	fmt.Fprintf(os.Stderr, "bench-failover: setup: %d groups × %d partitions, %d records per partition (load %s)\n", groups, parts, recs, res.LoadBefore)
	for _, side := range []struct {
		c    cluster.Cluster
		name string
	}{{src, topic}, {tgt, remote}} {
		_, err := side.c.CreateTopics(ctx, []cluster.NewTopic{{Name: side.name, Partitions: parts, RF: 1}})
		must(err, "creating "+side.name)
	}
	_, err = tgt.CreateTopics(ctx, []cluster.NewTopic{{Name: ckTopic, Partitions: 1, RF: 1, Configs: map[string]string{"cleanup.policy": "compact"}}})
	must(err, "creating "+ckTopic)
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	for _, side := range []struct {
		c    cluster.Cluster
		name string
	}{{src, topic}, {tgt, remote}} {
		p, err := side.c.NewProducer(map[string]string{"acks": "all", "linger.ms": "5"})
		must(err, "producer")
		var batch []cluster.Record
		for pt := 0; pt < parts; pt++ {
			for i := 0; i < recs; i++ {
				batch = append(batch, cluster.Record{Topic: side.name, Partition: int32(pt), Key: []byte(fmt.Sprintf("k-%d-%d", pt, i)),
					Value: []byte(fmt.Sprintf("v-%d-%d", pt, i)), Timestamp: base.Add(time.Duration(i) * time.Millisecond),
					Headers: []cluster.Header{{Key: "seq", Value: []byte(strconv.Itoa(i))}}})
			}
		}
		_, err = p.ProduceSync(ctx, batch)
		must(err, "producing to "+side.name)
		p.Close()
	}
	offset := func(g, pt int) int64 { return int64((g*7 + pt*13) % (recs + 1)) }
	var cks []cluster.Record
	for g, name := range names {
		offs := map[cluster.TP]cluster.OffsetMeta{}
		for pt := 0; pt < parts; pt++ {
			offs[cluster.TP{Topic: topic, Partition: int32(pt)}] = cluster.OffsetMeta{Offset: offset(g, pt)}
			k, v, err := checkpoint.Record(mm2wire.Checkpoint{Group: name, Topic: remote, Partition: int32(pt), UpstreamOffset: offset(g, pt), DownstreamOffset: offset(g, pt)})
			must(err, "checkpoint record")
			cks = append(cks, cluster.Record{Topic: ckTopic, Partition: 0, Key: k, Value: v, Timestamp: time.Now()})
		}
		must(src.AlterGroupOffsets(ctx, name, offs), "committing "+name+" on A")
	}
	p, err := tgt.NewProducer(map[string]string{"acks": "all", "linger.ms": "5"})
	must(err, "producer")
	_, err = p.ProduceSync(ctx, cks)
	must(err, "writing checkpoints")
	p.Close()
	tps := make([]cluster.TP, parts)
	for pt := range tps {
		tps[pt] = cluster.TP{Topic: topic, Partition: int32(pt)}
	}

	// kmm: translate exactly + one commit step per group through the executor (journaled).
	fmt.Fprintf(os.Stderr, "bench-failover: kmm translate + commit (load %s)\n", loadavg())
	fo := &switchover.Failover{F: f, Src: src, Tgt: tgt, Groups: names, TPs: tps,
		Opt: switchover.FailoverOptions{Mode: "planned", Timeout: 5 * time.Minute, By: "bench-failover"}}
	t0 := time.Now()
	tr, err := fo.Translate(ctx)
	must(err, "kmm translate")
	t1 := time.Now()
	pl := &plan.Plan{Command: "failover-bench", Flow: f.Name(), Journal: f.Target, Created: t1}
	for _, g := range names {
		pl.Steps = append(pl.Steps, fo.CommitStep(g))
	}
	journal := &plan.TopicJournal{C: tgt, RF: 1, RFKey: "checkpoints.topic.replication.factor"}
	defer journal.Close()
	ex := &plan.Executor{Journal: journal, Actions: fo.Actions(), Restart: true}
	run, _, err := ex.Begin(ctx, pl)
	must(err, "journal")
	_, err = ex.Execute(ctx, pl, run)
	must(err, "kmm commits")
	t2 := time.Now()
	res.KMMTranslateMs, res.KMMCommitMs, res.KMMTotalMs = t1.Sub(t0).Milliseconds(), t2.Sub(t1).Milliseconds(), t2.Sub(t0).Milliseconds()
	res.GroupPartitions = len(tr)
	for _, e := range tr {
		if e.Exact && e.TargetOffset == e.SourceOffset {
			res.KMMExact++
		}
	}
	res.KMMWithin5s = res.KMMTotalMs < 5000
	fmt.Fprintf(os.Stderr, "bench-failover: kmm: %d group partitions (%d exact) in %d ms (translate %d, commit %d)\n",
		len(tr), res.KMMExact, res.KMMTotalMs, res.KMMTranslateMs, res.KMMCommitMs)

	// MM2: RemoteClusterUtils.translateOffsets + the reset's commit, per group, in one JVM.
	fmt.Fprintf(os.Stderr, "bench-failover: MM2 RemoteClusterUtils per group (load %s)\n", loadavg())
	classes, err := os.MkdirTemp(out, "java-")
	must(err, "temp dir")
	defer os.RemoveAll(classes)
	cp := filepath.Join(lib, "*")
	javac := exec.Command("javac", "-cp", cp, "-d", classes, filepath.Join(root, "scripts", "benchfailover", "FailoverBench.java"))
	if b, err := javac.CombinedOutput(); err != nil {
		must(fmt.Errorf("%v\n%s", err, b), "javac")
	}
	java := exec.Command("java", "-Xmx512m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", classes+string(os.PathListSeparator)+cp, "FailoverBench", bootB, alias, prefix, strconv.Itoa(groups), strconv.Itoa(budget))
	var jout, jerr bytes.Buffer
	java.Stdout, java.Stderr = &jout, io.MultiWriter(&jerr, os.Stderr)
	must(java.Run(), "FailoverBench: "+tailLines(jerr.String(), 10))
	var jr struct {
		Groups     int64 `json:"groups"`
		Partitions int64 `json:"partitions"`
		Translate  int64 `json:"translate_ms"`
		Commit     int64 `json:"commit_ms"`
		Total      int64 `json:"total_ms"`
	}
	lines := strings.Split(strings.TrimSpace(jout.String()), "\n")
	must(json.Unmarshal([]byte(lines[len(lines)-1]), &jr), "FailoverBench output "+jout.String())
	res.MM2TranslateMs, res.MM2CommitMs, res.MM2TotalMs, res.MM2Partitions, res.MM2GroupsMeasured = jr.Translate, jr.Commit, jr.Total, jr.Partitions, int(jr.Groups)
	if jr.Groups > 0 && int(jr.Groups) < groups { // over the budget: the time per group is about constant
		k := float64(groups) / float64(jr.Groups)
		res.MM2TranslateMs, res.MM2CommitMs, res.MM2TotalMs = int64(float64(jr.Translate)*k), int64(float64(jr.Commit)*k), int64(float64(jr.Total)*k)
		res.MM2Note = fmt.Sprintf("MM2 measured on %d of %d groups within BENCH_MM2_BUDGET=%d s and extrapolated (each translateOffsets call reads the whole checkpoints topic: about the same time per group)", jr.Groups, groups, budget)
	}

	// kafka-consumer-groups --reset-offsets --from-file --execute: one JVM per group (a sample).
	var cliTotal time.Duration
	for s := 0; s < samples && s < groups; s++ {
		var csv strings.Builder
		for _, e := range tr {
			if e.Group == names[s] {
				fmt.Fprintf(&csv, "%s,%d,%d\n", e.RemoteTopic, e.Partition, e.TargetOffset)
			}
		}
		file := filepath.Join(classes, fmt.Sprintf("reset-%d.csv", s))
		must(os.WriteFile(file, []byte(csv.String()), 0o600), "csv")
		c := exec.Command("java", "-Xmx256m", "-cp", cp, "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
			"--bootstrap-server", bootB, "--group", names[s], "--reset-offsets", "--from-file", file, "--execute")
		st := time.Now()
		if b, err := c.CombinedOutput(); err != nil {
			must(fmt.Errorf("%v\n%s", err, tailLines(string(b), 10)), "kafka-consumer-groups --reset-offsets")
		}
		cliTotal += time.Since(st)
		res.CLISamples++
	}
	if res.CLISamples > 0 {
		res.CLIPerGroupMs = (cliTotal / time.Duration(res.CLISamples)).Milliseconds()
		res.CLIExtrapolatedMs = res.CLIPerGroupMs * int64(groups)
		res.CLIExtrapolateNote = fmt.Sprintf("kafka-consumer-groups --reset-offsets --from-file --execute run %d time(s) (one JVM each, ConsumerGroupCommand from the bed's jars); the mean × %d groups", res.CLISamples, groups)
	}
	must(failback(ctx, &res, flows, f, src, tgt, names, tps, topic, remote, syncsTopic, recs), "failback")
	res.LoadAfter = loadavg()

	md := fmt.Sprintf(`# bench-failover (%s)

Translate + commit of a planned failover, %d groups × %d partitions (%d group partitions), %d
records per partition; fence and drain excluded. Machine: %d CPU(s), load average %s before,
%s after (other work was running on it: the numbers are of a shared machine).

| | translate | commit | total |
|---|---|---|---|
| kmm (exact translation, one journaled commit step per group) | %d ms | %d ms | **%d ms** |
| MM2 RemoteClusterUtils.translateOffsets + reset commit per group (one JVM) | %d ms | %d ms | **%d ms** |
| MM2 runbook: kafka-consumer-groups --reset-offsets per group (extrapolated) | | %d ms per group | **%d ms** |
| kmm failback of the same groups (reverse translation, one journaled commit step per group) | %d ms | %d ms | **%d ms** |

kmm: %d of %d group partitions translated exactly (the record at the target offset equals the
source's). Under 5 s: %v. MM2 translated %d group partitions. %s. %s
Failback: %d of %d group partitions translated back exactly; under 5 s: %v (MM2 has no
failback translation: its checkpoints map A's groups to B only).
`, res.At.Format(time.RFC3339), groups, parts, res.GroupPartitions, recs, res.CPUs, res.LoadBefore, res.LoadAfter,
		res.KMMTranslateMs, res.KMMCommitMs, res.KMMTotalMs, res.MM2TranslateMs, res.MM2CommitMs, res.MM2TotalMs,
		res.CLIPerGroupMs, res.CLIExtrapolatedMs, res.FailbackTranslateMs, res.FailbackCommitMs, res.FailbackTotalMs,
		res.KMMExact, res.GroupPartitions, res.KMMWithin5s, res.MM2Partitions, res.CLIExtrapolateNote, res.MM2Note,
		res.FailbackExact, res.FailbackPartitions, res.FailbackWithin5s)
	js, _ := json.MarshalIndent(res, "", "  ")
	must(os.WriteFile(filepath.Join(out, "result.json"), append(js, '\n'), 0o644), "result.json")
	must(os.WriteFile(filepath.Join(out, "result.md"), []byte(md), 0o644), "result.md")
	if only == "" {
		runTranslation()
	}
	fmt.Print(md)
	if res.KMMExact != res.GroupPartitions || int(res.MM2Partitions) != res.MM2GroupsMeasured*parts || res.FailbackExact != res.GroupPartitions || res.FailbackPartitions != res.GroupPartitions {
		fmt.Fprintf(os.Stderr, "bench-failover: translations incomplete: kmm %d exact, MM2 %d, failback %d exact of %d, of %d\n",
			res.KMMExact, res.MM2Partitions, res.FailbackExact, res.FailbackPartitions, res.GroupPartitions)
		os.Exit(1)
	}
}

// failback times kmm failback's translate + commit of the same groups: the flow marked FAILED_OVER
// with a cut at the records' end (the copy complete), one offset sync per partition on A (record
// 0 of A at 0 on B, as kmm replicate's first sync), the groups' offsets on B as the failover
// committed them, their offsets on A moved to 0 first (so every commit step commits). Translated
// back in reverse over the syncs, each result proved by comparing the records; committed on A
// through the executor, one journaled step per group.
func failback(ctx context.Context, res *Result, flows []*flow.Flow, f *flow.Flow, src, tgt cluster.Cluster, names []string, tps []cluster.TP, topic, remote, syncsTopic string, recs int) error {
	rev, err := flow.One(flows, flow.Selector{Flow: f.Target + "->" + f.Source})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bench-failover: failback setup (load %s)\n", loadavg())
	if _, err := src.CreateTopics(ctx, []cluster.NewTopic{{Name: syncsTopic, Partitions: 1, RF: 1, Configs: map[string]string{"cleanup.policy": "compact"}}}); err != nil {
		return err
	}
	var syncs []cluster.Record
	cut := make([]flowstate.PartitionCut, len(tps))
	for i, tp := range tps {
		o := mm2wire.OffsetSync{Topic: topic, Partition: tp.Partition, UpstreamOffset: 0, DownstreamOffset: 0}
		k, err := o.AppendKey(nil)
		if err != nil {
			return err
		}
		syncs = append(syncs, cluster.Record{Topic: syncsTopic, Partition: 0, Key: k, Value: o.AppendValue(nil), Timestamp: time.Now()})
		cut[i] = flowstate.PartitionCut{Topic: topic, Partition: tp.Partition, SourceEnd: int64(recs), Replicated: int64(recs), TargetEnd: int64(recs)}
	}
	p, err := src.NewProducer(map[string]string{"acks": "all"})
	if err != nil {
		return err
	}
	_, err = p.ProduceSync(ctx, syncs)
	p.Close()
	if err != nil {
		return err
	}
	zero := map[cluster.TP]cluster.OffsetMeta{}
	for _, tp := range tps {
		zero[tp] = cluster.OffsetMeta{Offset: 0}
	}
	for _, g := range names {
		if err := src.AlterGroupOffsets(ctx, g, zero); err != nil {
			return fmt.Errorf("moving %s on A to 0: %w", g, err)
		}
	}
	fmt.Fprintf(os.Stderr, "bench-failover: kmm failback translate + commit (load %s)\n", loadavg())
	fb := &switchover.Failback{F: f, Rev: rev, S: src, T: tgt, Groups: names, Opt: switchover.FailbackOptions{Stranded: switchover.StrandedQuarantine, Timeout: 5 * time.Minute, By: "bench-failover"},
		State: &flowstate.FlowRecord{Flow: f.Name(), State: flowstate.FailedOver, Epoch: 2, Cut: cut}}
	t0 := time.Now()
	tr, err := fb.Translate(ctx)
	if err != nil {
		return err
	}
	t1 := time.Now()
	full, err := fb.Plan()
	if err != nil {
		return err
	}
	pl := &plan.Plan{Command: "failback-bench", Flow: f.Name(), Journal: f.Target, Created: t1}
	for _, s := range full.Steps {
		if s.Kind == switchover.KindCommitBack {
			pl.Steps = append(pl.Steps, s)
		}
	}
	journal := &plan.TopicJournal{C: tgt, RF: 1, RFKey: "checkpoints.topic.replication.factor"}
	defer journal.Close()
	ex := &plan.Executor{Journal: journal, Actions: fb.Actions(), Restart: true}
	run, _, err := ex.Begin(ctx, pl)
	if err != nil {
		return err
	}
	rep, err := ex.Execute(ctx, pl, run)
	if err != nil {
		return err
	}
	t2 := time.Now()
	res.FailbackTranslateMs, res.FailbackCommitMs, res.FailbackTotalMs = t1.Sub(t0).Milliseconds(), t2.Sub(t1).Milliseconds(), t2.Sub(t0).Milliseconds()
	res.FailbackPartitions = len(tr)
	for _, e := range tr {
		if e.Exact && e.TargetOffset == e.SourceOffset {
			res.FailbackExact++
		}
	}
	applied := 0
	for _, s := range rep.Steps {
		if s.Outcome == plan.Applied {
			applied++
		}
	}
	if applied != len(names) {
		return fmt.Errorf("%d of %d failback commit steps applied", applied, len(names))
	}
	res.FailbackWithin5s = res.FailbackTotalMs < 5000
	fmt.Fprintf(os.Stderr, "bench-failover: kmm failback: %d group partitions (%d exact) in %d ms (translate %d, commit %d)\n",
		len(tr), res.FailbackExact, res.FailbackTotalMs, res.FailbackTranslateMs, res.FailbackCommitMs)
	return nil
}

func cpus() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return max(1, strings.Count(string(b), "processor\t:"))
}

func tailLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}
