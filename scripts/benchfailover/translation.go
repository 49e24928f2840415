package main

// "Translation error vs lag" (BENCH_FAILOVER_ONLY=translation, or after the timing rows): how far
// from the right place a group lands on the target when it is translated at different lags,
// kmm (the offset map, `kmm translate-offsets`; and MM2's RemoteClusterUtils over kmm's
// checkpoints) beside Apache MirrorMaker 2 (RemoteClusterUtils over MM2's own checkpoints), both
// replicating the same source topics at the same time (kmm A->B, MM2 A->C):
//
//   - "one": a topic copied 1:1 (BENCH_TE_RECORDS records, default 1,050,000);
//   - "twice": a topic holding a range copied twice: both replicators copy all but the last
//     BENCH_TE_TWICE records (default 20,000) and stop cleanly, restart with
//     offset.flush.interval.ms = 600000, copy the rest, and are killed -9 (their progress for
//     the rest never stored); restarted, both copy the rest again.
//
// Then one group per lag (BENCH_TE_LAGS, default 0,1000,10000,100000,1000000 records behind the
// end) commits on A, both replicators checkpoint it, and each translation is judged against the
// records on the target (every value starts with its source offset): re-reads (records at or
// after the translated offset the group has read, or reads twice), skips (records at or after
// the group's position that the group never meets), and the fewest re-reads any offset without a
// skip allows (a range copied twice can force some). Error = re-reads beyond that + skips.

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
	"syscall"
	"time"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/mm2read"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// TERow is one translation judged.
type TERow struct {
	Topic        string `json:"topic"` // one or twice
	Lag          int64  `json:"lag"`
	SourceOffset int64  `json:"source_offset"` // the group's committed offset on A
	Tool         string `json:"tool"`          // kmm translate-offsets, kmm checkpoints (RCU), MM2 (RCU)
	Target       int64  `json:"target_offset"` // -1: no translation
	Rereads      int64  `json:"rereads"`
	Skipped      int64  `json:"skipped"`
	Unavoidable  int64  `json:"unavoidable_rereads"`
	Error        int64  `json:"error"` // rereads - unavoidable + skipped; -1: no translation
	Note         string `json:"note,omitempty"`
}

// TEResult is the translation bench's output.
type TEResult struct {
	At          time.Time `json:"at"`
	Records     int64     `json:"records"`
	Twice       int64     `json:"twice_range"`
	Rows        []TERow   `json:"rows"`
	MapSegments int       `json:"map_segments"`
	MapBytes    int       `json:"map_bytes"`
	SetupSec    float64   `json:"setup_sec"`
	Load        string    `json:"loadavg"`
}

func teLags() []int64 {
	var out []int64
	for _, s := range strings.Split(envStr("BENCH_TE_LAGS", "0,1000,10000,100000,1000000"), ",") {
		if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil && n >= 0 {
			out = append(out, n)
		}
	}
	return out
}

func envStr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// teProc is a replicator run in the background.
type teProc struct {
	name string
	kill func(sig syscall.Signal)
	wait func(d time.Duration) error
}

func translationBench(ctx context.Context, root, lib, bootA, bootB, bootC, out string) (int, error) {
	t0 := time.Now()
	n, d := int64(envInt("BENCH_TE_RECORDS", 1_050_000)), int64(envInt("BENCH_TE_TWICE", 20_000))
	lags := teLags()
	kmmBin := envStr("KMM_BIN", filepath.Join(root, "bin", "kmm"))
	if _, err := os.Stat(kmmBin); err != nil {
		return 0, fmt.Errorf("no kmm binary at %s (make build)", kmmBin)
	}
	bed := envStr("KMM_TESTBED_DIR", filepath.Join(root, ".testbed"))
	id := strconv.FormatInt(time.Now().UnixNano()%0xffffff, 16)
	s, k, m := "S"+id, "K"+id, "M"+id
	one, twice := "tebench-"+id+"-one", "tebench-"+id+"-twice"
	common := []string{"replication.factor = 1", "checkpoints.topic.replication.factor = 1", "offset-syncs.topic.replication.factor = 1",
		"heartbeats.topic.replication.factor = 1", "offset.storage.replication.factor = 1", "status.storage.replication.factor = 1",
		"config.storage.replication.factor = 1", "emit.checkpoints.interval.seconds = 1", "refresh.groups.interval.seconds = 5",
		"refresh.topics.interval.seconds = 5", "sync.group.offsets.enabled = false"}
	file := func(tgt, boot string, extra ...string) (string, error) {
		lines := append([]string{"clusters = " + s + ", " + tgt, s + ".bootstrap.servers = " + bootA, tgt + ".bootstrap.servers = " + boot,
			s + "->" + tgt + ".enabled = true", s + "->" + tgt + ".topics = tebench-" + id + "-.*", s + "->" + tgt + ".groups = tebench-" + id + "-.*"}, common...)
		p := filepath.Join(out, fmt.Sprintf("te-%s-%s-%d.properties", id, tgt, len(extra)))
		return p, os.WriteFile(p, []byte(strings.Join(append(lines, extra...), "\n")+"\n"), 0o600)
	}
	kmmFile, err := file(k, bootB)
	if err != nil {
		return 0, err
	}
	// A Connect worker setting: per target cluster (MM2 ignores it at top level).
	kmmSlow, _ := file(k, bootB, k+".offset.flush.interval.ms = 600000")
	mm2File, _ := file(m, bootC)
	mm2Slow, _ := file(m, bootC, m+".offset.flush.interval.ms = 600000")

	open := func(props string, side flow.Side) (cluster.Cluster, *flow.Flow, error) {
		cfg, err := cmdutil.Load(mm2conf.LoadOptions{ConfigFile: props}, io.Discard)
		if err != nil {
			return nil, nil, err
		}
		flows, err := flow.FromMM2(cfg)
		if err != nil {
			return nil, nil, err
		}
		f := flows[0]
		for _, x := range flows {
			if x.Enabled {
				f = x
			}
		}
		c, err := rdkafka.Opener{}.Open(f, side)
		return c, f, err
	}
	src, fk, err := open(kmmFile, flow.Source)
	if err != nil {
		return 0, err
	}
	defer src.Close()
	tgtB, _, err := open(kmmFile, flow.Target)
	if err != nil {
		return 0, err
	}
	defer tgtB.Close()
	tgtC, fm, err := open(mm2File, flow.Target)
	if err != nil {
		return 0, err
	}
	defer tgtC.Close()
	groups := map[int64]string{}
	var names []string
	for _, l := range lags {
		groups[l] = fmt.Sprintf("tebench-%s-lag%d", id, l)
		names = append(names, groups[l])
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		_ = src.DeleteGroups(dctx, names...)
		_ = src.DeleteTopics(dctx, one, twice)
		for _, side := range []struct {
			c cluster.Cluster
			f *flow.Flow
		}{{tgtB, fk}, {tgtC, fm}} {
			_, syncs := side.f.OffsetSyncs()
			_ = side.c.DeleteTopics(dctx, side.f.RemoteTopic(one), side.f.RemoteTopic(twice), side.f.CheckpointsTopic(), side.f.OffsetsTopic, side.f.OffsetMapTopic())
			_ = src.DeleteTopics(dctx, syncs)
		}
	}()

	if _, err := src.CreateTopics(ctx, []cluster.NewTopic{{Name: one, Partitions: 1, RF: 1}, {Name: twice, Partitions: 1, RF: 1}}); err != nil {
		return 0, err
	}
	produce := func(topic string, from, to int64) error {
		p, err := src.NewProducer(map[string]string{"acks": "all", "linger.ms": "20", "enable.idempotence": "true"})
		if err != nil {
			return err
		}
		defer p.Close()
		pad := strings.Repeat("x", 88)
		for lo := from; lo < to; lo += 50_000 {
			var batch []cluster.Record
			for i := lo; i < min(to, lo+50_000); i++ {
				batch = append(batch, cluster.Record{Topic: topic, Partition: 0, Value: []byte(fmt.Sprintf("%012d%s", i, pad))})
			}
			if _, err := p.ProduceSync(ctx, batch); err != nil {
				return err
			}
		}
		return nil
	}
	logf := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "bench-failover: translation: "+format+" (load %s)\n", append(a, loadavg())...)
	}
	logf("producing %d records to %s and %d to %s", n, one, n-d, twice)
	if err := produce(one, 0, n); err != nil {
		return 0, err
	}
	if err := produce(twice, 0, n-d); err != nil {
		return 0, err
	}
	startKMM := func(props, tag string) (*teProc, error) {
		lf, err := os.Create(filepath.Join(out, "te-kmm-"+id+"-"+tag+".log"))
		if err != nil {
			return nil, err
		}
		c := exec.Command(kmmBin, "replicate", props)
		c.Stdout, c.Stderr = lf, lf
		if err := c.Start(); err != nil {
			return nil, err
		}
		done := make(chan error, 1)
		go func() { done <- c.Wait(); lf.Close() }()
		return &teProc{name: "kmm", kill: func(sig syscall.Signal) { _ = c.Process.Signal(sig) }, wait: func(dd time.Duration) error {
			select {
			case err := <-done:
				return err
			case <-time.After(dd):
				_ = c.Process.Kill()
				return fmt.Errorf("kmm did not stop within %s", dd)
			}
		}}, nil
	}
	mm2sh := filepath.Join(root, "scripts", "mm2.sh")
	startMM2 := func(props, tag string) (*teProc, error) {
		name := "te-" + id + "-" + tag
		c := exec.Command(mm2sh, "start", name, props, "--clusters", m)
		c.Env = append(os.Environ(), "MM2_HEAP=-Xms256m -Xmx1g", "KMM_TESTBED_DIR="+bed)
		if b, err := c.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("mm2.sh start: %v: %s", err, b)
		}
		pid := 0
		if b, err := os.ReadFile(filepath.Join(bed, "mm2", name, "pid")); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		return &teProc{name: "mm2", kill: func(sig syscall.Signal) {
			if sig == syscall.SIGKILL && pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				return
			}
			c := exec.Command(mm2sh, "stop", name)
			c.Env = append(os.Environ(), "KMM_TESTBED_DIR="+bed)
			_ = c.Run()
		}, wait: func(time.Duration) error {
			for i := 0; i < 600 && pid > 0 && syscall.Kill(pid, 0) == nil; i++ {
				time.Sleep(100 * time.Millisecond)
			}
			return nil
		}}, nil
	}
	end := func(c cluster.Cluster, topic string) int64 {
		r, err := c.ListOffsets(ctx, []cluster.TP{{Topic: topic, Partition: 0}}, cluster.Latest)
		if err != nil {
			return -1
		}
		return r[cluster.TP{Topic: topic, Partition: 0}].Offset
	}
	waitEnds := func(what string, timeout time.Duration, want map[string]int64, c cluster.Cluster) error {
		deadline := time.Now().Add(timeout)
		for {
			ok := true
			for t, w := range want {
				if end(c, t) < w {
					ok = false
				}
			}
			if ok {
				return nil
			}
			if time.Now().After(deadline) {
				var got []string
				for t := range want {
					got = append(got, fmt.Sprintf("%s %d/%d", t, end(c, t), want[t]))
				}
				return fmt.Errorf("%s: not within %s: %s", what, timeout, strings.Join(got, ", "))
			}
			time.Sleep(time.Second)
		}
	}
	both := func(kf, mf, tag string) (*teProc, *teProc, error) {
		kp, err := startKMM(kf, tag)
		if err != nil {
			return nil, nil, err
		}
		mp, err := startMM2(mf, tag)
		if err != nil {
			kp.kill(syscall.SIGKILL)
			return nil, nil, err
		}
		return kp, mp, nil
	}
	rk, rm := fk.RemoteTopic, fm.RemoteTopic
	// Phase 1: everything but the last d records of "twice", a clean stop (progress stored).
	logf("phase 1: kmm and MM2 copy, then stop cleanly")
	kp, mp, err := both(kmmFile, mm2File, "1")
	if err != nil {
		return 0, err
	}
	stopBoth := func(sig syscall.Signal) {
		kp.kill(sig)
		mp.kill(sig)
		_ = kp.wait(90 * time.Second)
		_ = mp.wait(90 * time.Second)
	}
	if err := waitEnds("phase 1 kmm", 20*time.Minute, map[string]int64{rk(one): n, rk(twice): n - d}, tgtB); err != nil {
		stopBoth(syscall.SIGKILL)
		return 0, err
	}
	if err := waitEnds("phase 1 MM2", 20*time.Minute, map[string]int64{rm(one): n, rm(twice): n - d}, tgtC); err != nil {
		stopBoth(syscall.SIGKILL)
		return 0, err
	}
	time.Sleep(3 * time.Second) // both store their progress after the copy (kmm every second; MM2 at its stop)
	stopBoth(syscall.SIGTERM)
	// Phase 2: the last d records copied with progress stored every 10 minutes, then kill -9.
	logf("phase 2: the last %d records of %s copied, progress not stored, kill -9", d, twice)
	if kp, mp, err = both(kmmSlow, mm2Slow, "2"); err != nil {
		return 0, err
	}
	time.Sleep(5 * time.Second) // both started (MM2's JVM, kmm's flow) before the records come
	if err := produce(twice, n-d, n); err != nil {
		stopBoth(syscall.SIGKILL)
		return 0, err
	}
	if err := waitEnds("phase 2 kmm", 10*time.Minute, map[string]int64{rk(twice): n}, tgtB); err != nil {
		stopBoth(syscall.SIGKILL)
		return 0, err
	}
	if err := waitEnds("phase 2 MM2", 10*time.Minute, map[string]int64{rm(twice): n}, tgtC); err != nil {
		stopBoth(syscall.SIGKILL)
		return 0, err
	}
	stopBoth(syscall.SIGKILL)
	// Phase 3: restarted, both copy the range again; groups commit at their lags; checkpoints.
	logf("phase 3: restart (the range copied again), groups commit at lags %v", lags)
	if kp, mp, err = both(kmmFile, mm2File, "3"); err != nil {
		return 0, err
	}
	defer stopBoth(syscall.SIGTERM)
	if err := waitEnds("phase 3 kmm", 10*time.Minute, map[string]int64{rk(twice): n + d}, tgtB); err != nil {
		return 0, err
	}
	// MM2 copies the range again too (its committed position is phase 1's); wait until its copy
	// has stopped moving.
	prev := int64(-1)
	for i := 0; i < 120; i++ {
		e := end(tgtC, rm(twice))
		if e == prev && e >= n {
			break
		}
		prev = e
		time.Sleep(5 * time.Second)
	}
	for _, l := range lags {
		offs := map[cluster.TP]cluster.OffsetMeta{}
		for _, t := range []string{one, twice} {
			if g := n - l; g >= 0 {
				offs[cluster.TP{Topic: t, Partition: 0}] = cluster.OffsetMeta{Offset: g}
			}
		}
		if err := src.AlterGroupOffsets(ctx, groups[l], offs); err != nil {
			return 0, err
		}
	}
	res := TEResult{At: time.Now().UTC(), Records: n, Twice: d, SetupSec: time.Since(t0).Seconds(), Load: loadavg()}

	// The translations: kmm translate-offsets (its offset map), RemoteClusterUtils over kmm's
	// checkpoints on B and over MM2's on C; polled until every group partition has one (or 3 min).
	classes, err := os.MkdirTemp(out, "java-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(classes)
	cp := filepath.Join(lib, "*")
	if b, err := exec.Command("javac", "-cp", cp, "-d", classes, filepath.Join(root, "scripts", "benchfailover", "TranslateOffsets.java")).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("javac: %v\n%s", err, b)
	}
	type key struct {
		tool, topic string
		lag         int64
	}
	got := map[key]int64{}
	rcu := func(boot, tool string, remote func(string) string) error {
		args := append([]string{"-Xmx256m", "-cp", classes + string(os.PathListSeparator) + cp, "TranslateOffsets", boot, s}, names...)
		c := exec.Command("java", args...)
		var o, e bytes.Buffer
		c.Stdout, c.Stderr = &o, &e
		if err := c.Run(); err != nil {
			return fmt.Errorf("TranslateOffsets: %v: %s", err, tailLines(e.String(), 5))
		}
		for _, line := range strings.Split(o.String(), "\n") {
			var r struct {
				Group   string           `json:"group"`
				Offsets map[string]int64 `json:"offsets"`
			}
			if json.Unmarshal([]byte(line), &r) != nil {
				continue
			}
			for _, l := range lags {
				if groups[l] != r.Group {
					continue
				}
				for _, t := range []string{one, twice} {
					if v, ok := r.Offsets[remote(t)+":0"]; ok {
						got[key{tool, t, l}] = v
					}
				}
			}
		}
		return nil
	}
	kmmTranslate := func() error {
		c := exec.Command(kmmBin, "translate-offsets", kmmFile, "--groups", "tebench-"+id+"-.*", "-o", "json")
		var o, e bytes.Buffer
		c.Stdout, c.Stderr = &o, &e
		_ = c.Run() // exit 3 when a group is not translatable yet: the rows say which
		var doc any
		if err := json.Unmarshal(o.Bytes(), &doc); err != nil {
			return fmt.Errorf("kmm translate-offsets: %v: %s", err, tailLines(e.String(), 5))
		}
		var walk func(v any)
		walk = func(v any) {
			switch x := v.(type) {
			case map[string]any:
				g, _ := x["group"].(string)
				st, _ := x["source_topic"].(string)
				to, ok := x["target_offset"].(float64)
				if ok && g != "" && st != "" {
					for _, l := range lags {
						if groups[l] == g {
							got[key{"kmm translate-offsets", st, l}] = int64(to)
						}
					}
				}
				for _, y := range x {
					walk(y)
				}
			case []any:
				for _, y := range x {
					walk(y)
				}
			}
		}
		walk(doc)
		return nil
	}
	tools := []string{"kmm translate-offsets", "kmm checkpoints (RemoteClusterUtils)", "MM2 4.1 (RemoteClusterUtils)"}
	want := 0
	for _, l := range lags {
		if n-l >= 0 {
			want += 2
		}
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		clear(got)
		errs := []error{kmmTranslate(), rcu(bootB, tools[1], rk), rcu(bootC, tools[2], rm)}
		complete := true
		for _, tool := range tools {
			c := 0
			for kk := range got {
				if kk.tool == tool {
					c++
				}
			}
			complete = complete && c >= want
		}
		if complete || time.Now().After(deadline) {
			for _, e := range errs {
				if e != nil {
					logf("%v", e)
				}
			}
			break
		}
		time.Sleep(5 * time.Second)
	}

	// The truth: the source offset of every record on each target.
	truth := map[string][]int64{}
	for _, x := range []struct {
		c     cluster.Cluster
		topic string
	}{{tgtB, rk(one)}, {tgtB, rk(twice)}, {tgtC, rm(one)}, {tgtC, rm(twice)}} {
		srcs, err := readSources(ctx, x.c, x.topic)
		if err != nil {
			return 0, err
		}
		truth[x.topic] = srcs
	}
	for _, tool := range tools {
		remote := rk
		if strings.HasPrefix(tool, "MM2") {
			remote = rm
		}
		for _, t := range []string{one, twice} {
			recs := truth[remote(t)]
			for _, l := range lags {
				g := n - l
				if g < 0 {
					continue
				}
				row := TERow{Topic: strings.TrimPrefix(t, "tebench-"+id+"-"), Lag: l, SourceOffset: g, Tool: tool, Target: -1, Error: -1}
				row.Unavoidable = bestRereads(recs, g, n)
				if tgt, ok := got[key{tool, t, l}]; ok {
					row.Target = tgt
					row.Rereads, row.Skipped = judge(recs, g, n, tgt)
					row.Error = row.Rereads - row.Unavoidable + row.Skipped
				} else {
					row.Note = "no translation (no checkpoint for this group partition)"
				}
				res.Rows = append(res.Rows, row)
			}
		}
	}
	// The map's size: kmm's stored offset maps of the two topics.
	if maps, err := mm2read.ReadOffsetMaps(ctx, tgtB, fk.OffsetMapTopic()); err == nil {
		for tp, mp := range maps {
			if tp.Topic == one || tp.Topic == twice {
				res.MapSegments += len(mp.Segs)
				b, _ := json.Marshal(mp)
				res.MapBytes += len(b)
			}
		}
	}
	js, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(filepath.Join(out, "translation.json"), append(js, '\n'), 0o644); err != nil {
		return 0, err
	}
	md := teMarkdown(&res, tools, lags)
	if err := os.WriteFile(filepath.Join(out, "translation.md"), []byte(md), 0o644); err != nil {
		return 0, err
	}
	fmt.Fprint(os.Stderr, md)
	bad := 0
	for _, r := range res.Rows {
		if r.Tool == tools[0] && r.Error != 0 {
			bad++
		}
	}
	return bad, nil
}

// readSources reads a target partition's records: the source offset each carries (its value's
// first 12 digits).
func readSources(ctx context.Context, c cluster.Cluster, topic string) ([]int64, error) {
	r, err := cluster.OpenPartition(ctx, c, topic, 0)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []int64
	for {
		rec, ok, err := r.Next(ctx)
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		if int64(len(out)) != rec.Offset {
			return nil, fmt.Errorf("%s: offset %d after %d records (the bench's topics have no gaps)", topic, rec.Offset, len(out))
		}
		v, err := strconv.ParseInt(string(rec.Value[:min(12, len(rec.Value))]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s offset %d: %v", topic, rec.Offset, err)
		}
		out = append(out, v)
	}
}

// judge: a group whose next source offset is g (of a source of n records) resumes at target
// offset t: the records it reads again (copies of records before g, or a second copy of one it
// has read) and the records at or after g it never meets (skips).
func judge(recs []int64, g, n, t int64) (rereads, skipped int64) {
	t = max(0, min(t, int64(len(recs))))
	seen := make(map[int64]bool, len(recs)-int(t))
	for _, s := range recs[t:] {
		if s < g || seen[s] {
			rereads++
		}
		seen[s] = true
	}
	for s := g; s < n; s++ {
		if !seen[s] {
			skipped++
		}
	}
	return rereads, skipped
}

// bestRereads is the fewest re-reads of any target offset without a skip: from the largest such
// offset (scanning back from the end until every source offset >= g has been met).
func bestRereads(recs []int64, g, n int64) int64 {
	need := n - g
	seen := map[int64]bool{}
	t := int64(len(recs))
	for need > 0 && t > 0 {
		t--
		if s := recs[t]; s >= g && !seen[s] {
			seen[s] = true
			need--
		}
	}
	r, _ := judge(recs, g, n, t)
	return r
}

func teMarkdown(r *TEResult, tools []string, lags []int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Translation error vs lag (%s)\n\n", r.At.Format(time.RFC3339))
	fmt.Fprintf(&b, "%d records of 100 B per topic; \"twice\": the last %d copied twice after a kill -9 (both replicators).\n", r.Records, r.Twice)
	fmt.Fprintf(&b, "Error = re-reads beyond the fewest any offset allows + skips (0 = exact); `–`: no translation.\n\n")
	fmt.Fprintf(&b, "| topic | lag | %s |\n|---|---|%s\n", strings.Join(tools, " | "), strings.Repeat("---|", len(tools)))
	sort.SliceStable(r.Rows, func(i, j int) bool {
		if r.Rows[i].Topic != r.Rows[j].Topic {
			return r.Rows[i].Topic < r.Rows[j].Topic
		}
		return r.Rows[i].Lag < r.Rows[j].Lag
	})
	for _, topic := range []string{"one", "twice"} {
		for _, l := range lags {
			cells := []string{}
			for _, tool := range tools {
				c := "–"
				for _, row := range r.Rows {
					if row.Topic == topic && row.Lag == l && row.Tool == tool && row.Target >= 0 {
						c = fmt.Sprintf("%d", row.Error)
						if row.Skipped > 0 {
							c += fmt.Sprintf(" (%d skipped)", row.Skipped)
						}
						if row.Unavoidable > 0 {
							c += fmt.Sprintf(" (+%d unavoidable)", row.Unavoidable)
						}
					}
				}
				cells = append(cells, c)
			}
			fmt.Fprintf(&b, "| %s | %d | %s |\n", topic, l, strings.Join(cells, " | "))
		}
	}
	fmt.Fprintf(&b, "\nkmm's offset maps of the two topics: %d segment(s), %d bytes. Setup %.0f s; load %s.\n", r.MapSegments, r.MapBytes, r.SetupSec, r.Load)
	return b.String()
}
