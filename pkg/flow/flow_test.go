package flow

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/policy"
)

func load(t *testing.T, lines string) *mm2conf.Config {
	t.Helper()
	p := filepath.Join(t.TempDir(), "mm2.properties")
	if err := os.WriteFile(p, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := mm2conf.Load(mm2conf.LoadOptions{ConfigFile: p})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

const twoClusters = "clusters = A, B\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\n"

func TestFromMM2FiltersAndDefaults(t *testing.T) {
	flows, err := FromMM2(load(t, twoClusters+"A->B.enabled = true\nA->B.topics = orders.*\nA->B.groups = app-.*\n"))
	if err != nil {
		t.Fatal(err)
	}
	var f *Flow
	for _, x := range flows {
		if x.Name() == "A->B" {
			f = x
		}
	}
	if f == nil || !f.Enabled || !f.Validated() {
		t.Fatalf("flows %v", flows)
	}
	// MM2's default config.properties.exclude: these are never synced, others are.
	for name, excluded := range map[string]bool{"min.insync.replicas": true, "message.timestamp.type": true, "retention.ms": false, "cleanup.policy": false} {
		if got := f.ConfigExcluded(name); got != excluded {
			t.Errorf("ConfigExcluded(%s) = %v, want %v", name, got, excluded)
		}
	}
	if !f.TopicFilter("orders-1") || f.TopicFilter("payments") {
		t.Error("topic filter")
	}
	if !f.GroupFilter("app-1") || f.GroupFilter("console-consumer-1") {
		t.Error("group filter")
	}
	// kmm's defaults where they differ from MM2's, MM2's elsewhere.
	want := map[string]time.Duration{"refresh": 10 * time.Second, "flush": time.Second, "ckpt": 5 * time.Second, "groupsync": 5 * time.Second,
		"configs": 10 * time.Minute, "acls": 10 * time.Minute, "hb": time.Second, "admin": time.Minute, "promote": time.Second}
	got := map[string]time.Duration{"refresh": f.RefreshTopicsInterval, "flush": f.OffsetFlushInterval, "ckpt": f.CheckpointPollInterval,
		"groupsync": f.SyncGroupOffsetsInterval, "configs": f.SyncConfigsInterval, "acls": f.SyncACLsInterval, "hb": f.HeartbeatInterval,
		"admin": f.AdminTimeout, "promote": f.SyncPromoteInterval}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %s, want %s", k, got[k], w)
		}
	}
	if f.OffsetsTopic != "mm2-offsets.A.internal" || f.MM2Group != "A-mm2" || f.OffsetsTopicPartitions != 25 || f.OffsetsTopicRF != 3 || f.Tasks != 1 {
		t.Errorf("worker defaults: %+v", f)
	}
	if f.SourceBootstrap != "a:9092" || f.TargetBootstrap != "b:9092" || f.Settings(Target, Admin)["bootstrap.servers"] != "b:9092" {
		t.Errorf("bootstrap: %s %s", f.SourceBootstrap, f.TargetBootstrap)
	}
}

// A key the file sets wins over kmm's default, including the per-cluster worker keys.
func TestFromMM2FileWins(t *testing.T) {
	flows, err := FromMM2(load(t, twoClusters+"A->B.enabled = true\nrefresh.topics.interval.seconds = 42\nB.offset.flush.interval.ms = 1234\n"+
		"emit.checkpoints.interval.seconds = 7\n"))
	if err != nil {
		t.Fatal(err)
	}
	f := flows[0]
	if f.Name() != "A->B" {
		f = flows[1]
	}
	if f.RefreshTopicsInterval != 42*time.Second || f.OffsetFlushInterval != 1234*time.Millisecond || f.CheckpointPollInterval != 7*time.Second {
		t.Errorf("file values lost: refresh %s flush %s ckpt %s", f.RefreshTopicsInterval, f.OffsetFlushInterval, f.CheckpointPollInterval)
	}
}

func TestValidateFillsAndRejects(t *testing.T) {
	f := &Flow{Source: "A", Target: "B", Enabled: true, Policy: policy.NewDefault(".", false, true), TopicFilter: func(string) bool { return true }}
	if f.Validated() {
		t.Fatal("validated before Validate")
	}
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []time.Duration{f.RefreshTopicsInterval, f.OffsetFlushInterval, f.CheckpointPollInterval, f.SyncGroupOffsetsInterval,
		f.SyncConfigsInterval, f.SyncACLsInterval, f.HeartbeatInterval, f.AdminTimeout, f.SyncPromoteInterval} {
		if d <= 0 {
			t.Fatalf("unfilled interval in %+v", f)
		}
	}
	if f.RefreshTopicsInterval != 10*time.Second || f.Tasks != 1 || f.OffsetLagMax != 0 || f.GroupFilter == nil || f.SourceConsumer == nil {
		t.Fatalf("fill: %+v", f)
	}
	for _, bad := range []*Flow{
		{Source: "A", Target: "A", Policy: policy.NewDefault(".", false, true)},
		{Source: "A", Target: "B"},
		{Source: "A", Target: "B", Enabled: true, Policy: policy.NewDefault(".", false, true)},
	} {
		if err := bad.Validate(); err == nil || bad.Validated() {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestReplicationClientSettings(t *testing.T) {
	f := &Flow{SourceConsumer: map[string]string{"bootstrap.servers": "a"}, TargetProducer: map[string]string{"acks": "1", "linger.ms": "5"}}
	c := f.ReplicationConsumer()
	if c["auto.offset.reset"] != "earliest" || c["bootstrap.servers"] != "a" {
		t.Errorf("consumer %v", c)
	}
	f.SourceConsumer["auto.offset.reset"] = "latest"
	if f.ReplicationConsumer()["auto.offset.reset"] != "latest" {
		t.Error("the file's auto.offset.reset must win")
	}
	p := f.ReplicationProducer()
	if p["acks"] != "all" || p["enable.idempotence"] != "true" || p["linger.ms"] != "5" {
		t.Errorf("producer %v", p)
	}
	if f.TargetProducer["acks"] != "1" {
		t.Error("ReplicationProducer changed the flow's own settings")
	}
}

func flows3() []*Flow {
	return []*Flow{
		{Source: "A", Target: "B", Enabled: true},
		{Source: "B", Target: "A", Enabled: false}, // heartbeats only
		{Source: "A", Target: "C", Enabled: true},
	}
}

func TestOne(t *testing.T) {
	fs := flows3()
	for _, c := range []struct {
		sel  Selector
		want string // "" = usage error
	}{
		{Selector{Flow: "A->B"}, "A->B"},
		{Selector{Flow: " A -> C "}, "A->C"},
		{Selector{Source: "A", Target: "C"}, "A->C"},
		{Selector{Target: "B"}, "A->B"},
		{Selector{Flow: "B->A"}, "B->A"}, // heartbeats-only, named in full
		{Selector{Target: "A"}, ""},      // only a heartbeats-only flow: not picked without both names
		{Selector{}, ""},                 // two enabled flows
		{Selector{Source: "A"}, ""},
		{Selector{Flow: "A->B", Target: "C"}, ""}, // disagreement
		{Selector{Flow: "A-B"}, ""},
		{Selector{Flow: "A->X"}, ""},
	} {
		f, err := One(fs, c.sel)
		if c.want == "" {
			if err == nil || kerr.KindOf(err) != kerr.Usage {
				t.Errorf("%+v: got %v, %v; want a usage error", c.sel, f, err)
			}
			continue
		}
		if err != nil || f.Name() != c.want {
			t.Errorf("%+v: got %v, %v; want %s", c.sel, f, err, c.want)
		}
	}
	if f, err := One(fs[:1], Selector{}); err != nil || f.Name() != "A->B" {
		t.Errorf("the only enabled flow: %v %v", f, err)
	}
}

func TestAll(t *testing.T) {
	fs := flows3()
	got := func(sel Selector, enabledOnly bool) string {
		l, err := All(fs, sel, enabledOnly)
		if err != nil {
			return "error"
		}
		var n []string
		for _, f := range l {
			n = append(n, f.Name())
		}
		return strings.Join(n, ",")
	}
	for _, c := range []struct {
		sel         Selector
		enabledOnly bool
		want        string
	}{
		{Selector{}, true, "A->B,A->C"},
		{Selector{}, false, "A->B,B->A,A->C"},
		{Selector{Flow: "A->C"}, true, "A->C"},
		{Selector{Flow: "B->A"}, true, "error"},
		{Selector{Flow: "B->A"}, false, "B->A"},
		{Selector{Source: "A"}, true, "A->B,A->C"},
		{Selector{Flow: "C->A"}, false, "error"},
	} {
		if g := got(c.sel, c.enabledOnly); g != c.want {
			t.Errorf("All(%+v, %v) = %s, want %s", c.sel, c.enabledOnly, g, c.want)
		}
	}
}

// docs/replicate.md's table of kmm defaults that differ from MM2's is exactly the Defaults rows
// that differ and can be set in a file.
func TestDocDefaults(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "docs", "replicate.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "| key | MM2 default | kmm default | why |") {
			in = true
			continue
		}
		if in && strings.HasPrefix(line, "|---") {
			continue
		}
		if in && !strings.HasPrefix(line, "|") {
			break
		}
		if in {
			rows = append(rows, line)
		}
	}
	var want []string
	for _, d := range Defaults {
		if d.Differs() && d.InFile() {
			want = append(want, DocRow(d))
		}
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Fatalf("docs/replicate.md's defaults table is out of date; it should read:\n%s\n\nit reads:\n%s", strings.Join(want, "\n"), strings.Join(rows, "\n"))
	}
}

// tasks.max beyond what kmm runs is capped (config check warns, tasks-max-capped), not turned
// into 2147483647 pipelines.
func TestTasksMaxCapped(t *testing.T) {
	for _, c := range []struct{ tasks, want int }{{2147483647, mm2conf.MaxPipelines}, {65, mm2conf.MaxPipelines}, {64, 64}, {8, 8}} {
		flows, err := FromMM2(load(t, twoClusters+"A->B.enabled = true\ntasks.max = "+strconv.Itoa(c.tasks)+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range flows {
			if f.Name() == "A->B" && f.Tasks != c.want {
				t.Errorf("tasks.max = %d: %d pipelines, want %d", c.tasks, f.Tasks, c.want)
			}
		}
	}
}

// Negative intervals turn the feature off in kmm as in MM2 (they used to be replaced by kmm's
// defaults, so kmm refreshed topics every 10 s and emitted checkpoints where MM2 does not).
func TestNegativeIntervalsDisable(t *testing.T) {
	flows, err := FromMM2(load(t, twoClusters+"A->B.enabled = true\nrefresh.topics.interval.seconds = -1\nemit.checkpoints.interval.seconds = -1\nsync.topic.configs.enabled = true\nsync.topic.configs.interval.seconds = -1\nemit.heartbeats.interval.seconds = -1\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range flows {
		if f.Name() == "A->B" && (f.RefreshTopics || f.EmitCheckpoints || f.SyncGroupOffsets || f.SyncTopicConfigs || f.EmitHeartbeats) {
			t.Errorf("A->B: refresh %v, checkpoints %v, group sync %v, config sync %v, heartbeats %v; want all off", f.RefreshTopics, f.EmitCheckpoints, f.SyncGroupOffsets, f.SyncTopicConfigs, f.EmitHeartbeats)
		}
	}
}

// kmm.memory.budget.bytes sizes the pipelines' librdkafka queues: top level for every flow,
// A->B.kmm.memory.budget.bytes for one, split over tasks.max pipelines and the two sides.
func TestMemoryBudget(t *testing.T) {
	queues := func(f *Flow) (string, string, string, string) {
		c, p := f.ReplicationConsumer(), f.ReplicationProducer()
		return c["queued.max.messages.kbytes"], c["queued.min.messages"], p["queue.buffering.max.kbytes"], p["queue.buffering.max.messages"]
	}
	flows, err := FromMM2(load(t, twoClusters+"clusters = A, B, C\nC.bootstrap.servers = c:9092\nA->B.enabled = true\nA->C.enabled = true\ntasks.max = 2\n"+
		"kmm.memory.budget.bytes = 268435456\nA->C.kmm.memory.budget.bytes = 16777216\n"))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*Flow{}
	for _, f := range flows {
		byName[f.Name()] = f
	}
	// 256 MiB / 2 pipelines / 2 sides * 3/4 = 48 MiB per queue; 98304 records of 512 B.
	if ck, cm, pk, pm := queues(byName["A->B"]); ck != "49152" || cm != "98304" || pk != "49152" || pm != "98304" {
		t.Errorf("A->B (top-level 256 MiB): consumer %s KiB / %s msgs, producer %s KiB / %s msgs", ck, cm, pk, pm)
	}
	// 16 MiB -> 3 MiB per queue, 6144 records.
	if ck, cm, pk, pm := queues(byName["A->C"]); ck != "3072" || cm != "6144" || pk != "3072" || pm != "6144" {
		t.Errorf("A->C (per-flow 16 MiB): consumer %s KiB / %s msgs, producer %s KiB / %s msgs", ck, cm, pk, pm)
	}
	// Unset: the default, 16 MiB per flow -> 3 MiB per queue with two pipelines.
	flows, err = FromMM2(load(t, twoClusters+"A->B.enabled = true\ntasks.max = 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if ck, _, pk, _ := queues(flows[0]); ck != "3072" || pk != "3072" {
		t.Errorf("default budget: consumer %s KiB, producer %s KiB, want 3072 each", ck, pk)
	}
	// A fetch brings a third of the prefetch queue, at least 1 MiB and message.max.bytes,
	// whatever the file says (a larger fetch overruns the queue); a smaller value is kept.
	if got := flows[0].ReplicationConsumer()["fetch.max.bytes"]; got != "1048576" {
		t.Errorf("default budget: fetch.max.bytes %s, want 1048576", got)
	}
	if got := byName["A->B"].ReplicationConsumer()["fetch.max.bytes"]; got != "16777216" {
		t.Errorf("256 MiB: fetch.max.bytes %s, want 16777216 (48 MiB / 3)", got)
	}
	for _, c := range []struct{ lines, want string }{
		{"A.consumer.fetch.max.bytes = 52428800\n", "1048576"},
		{"A.consumer.fetch.max.bytes = 1000000\n", "1000000"},
	} {
		fs, err := FromMM2(load(t, twoClusters+"A->B.enabled = true\ntasks.max = 2\n"+c.lines))
		if err != nil {
			t.Fatal(err)
		}
		if got := fs[0].ReplicationConsumer()["fetch.max.bytes"]; got != c.want {
			t.Errorf("%q: fetch.max.bytes %s, want %s", c.lines, got, c.want)
		}
	}
	// A target 20 ms or more away, default budget: the producer queue holds 12 batches
	// (12 MB = 11718 KiB; 2 MB batches: 23437) and the consumer's is the WAN one (its 8 MiB
	// fetches spread over partitions) with librdkafka's per-partition fetch; closer, or with a
	// budget the file sets, the budget's (3 MiB each here).
	wan := flows[0]
	for _, c := range []struct {
		rtt   time.Duration
		batch string
		want  string
		cons  string
	}{{100 * time.Millisecond, "", "11718", "24576"}, {20 * time.Millisecond, "2000000", "23437", "24576"}, {19 * time.Millisecond, "", "3072", "3072"}} {
		wan.TargetRTT = c.rtt
		if c.batch != "" {
			wan.TargetProducer["batch.size"] = c.batch
		}
		if ck, _, pk, _ := queues(wan); ck != c.cons || pk != c.want {
			t.Errorf("target %s away, batch.size %q: consumer %s KiB, producer %s KiB, want %s / %s", c.rtt, c.batch, ck, pk, c.cons, c.want)
		}
		if got, set := wan.ReplicationConsumer()["max.partition.fetch.bytes"]; set {
			t.Errorf("target %s away: max.partition.fetch.bytes set to %q (only a far source gets it)", c.rtt, got)
		}
	}
	delete(wan.TargetProducer, "batch.size")
	// A source as far: a 24 MiB prefetch queue and fetches of a third of it; the producer's
	// queue as the target's distance says.
	wan.TargetRTT, wan.SourceRTT = 0, 100*time.Millisecond
	if ck, _, pk, _ := queues(wan); ck != "24576" || pk != "3072" || wan.ReplicationConsumer()["fetch.max.bytes"] != "8388608" {
		t.Errorf("source 100 ms away: consumer %s KiB (fetch %s), producer %s KiB, want 24576 (8388608) / 3072", ck, wan.ReplicationConsumer()["fetch.max.bytes"], pk)
	}
	// and 4 MiB per partition (librdkafka's 1 MiB left a pipeline's fetch at 6 MiB); not for a
	// near source, not over the file's own value.
	if got := wan.ReplicationConsumer()["max.partition.fetch.bytes"]; got != "4194304" {
		t.Errorf("source 100 ms away: max.partition.fetch.bytes %q, want 4194304", got)
	}
	wan.SourceConsumer["max.partition.fetch.bytes"] = "2097152"
	if got := wan.ReplicationConsumer()["max.partition.fetch.bytes"]; got != "2097152" {
		t.Errorf("the file's max.partition.fetch.bytes replaced: %q", got)
	}
	delete(wan.SourceConsumer, "max.partition.fetch.bytes")
	wan.SourceRTT = 19 * time.Millisecond
	if got, set := wan.ReplicationConsumer()["max.partition.fetch.bytes"]; set {
		t.Errorf("source 19 ms away: max.partition.fetch.bytes set to %q", got)
	}
	byName["A->C"].TargetRTT, byName["A->C"].SourceRTT = 100*time.Millisecond, 100*time.Millisecond
	if _, set := byName["A->C"].ReplicationConsumer()["max.partition.fetch.bytes"]; set {
		t.Errorf("a budget set in the file: max.partition.fetch.bytes set for the link")
	}
	if ck, _, pk, _ := queues(byName["A->C"]); ck != "3072" || pk != "3072" {
		t.Errorf("a budget set in the file is kept across a long link: consumer %s, producer %s KiB", ck, pk)
	}
	// A flow built without a file (tests, replbed) gets the default too.
	if ck, _, _, _ := queues(&Flow{Tasks: 1, SourceConsumer: map[string]string{}, TargetProducer: map[string]string{}}); ck != "6144" {
		t.Errorf("no budget, one pipeline: consumer %s KiB, want 6144", ck)
	}
}

// kmm.data.plane reaches the flow, per flow or top level, in any case.
func TestDataPlaneKey(t *testing.T) {
	flows, err := FromMM2(load(t, twoClusters+"A->B.enabled = true\nB->A.enabled = true\nkmm.data.plane = go\nA->B.kmm.data.plane = C\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range flows {
		got[f.Name()] = f.DataPlane
	}
	if got["A->B"] != "c" || got["B->A"] != "go" {
		t.Fatalf("data planes %v, want A->B c and B->A go", got)
	}
}

func TestMemoryBudgetRejected(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"kmm.memory.budget.bytes = 1000\n", "mm2.properties:5: error: kmm.memory.budget.bytes = 1000 is below kmm's minimum of 4194304"},
		{"A->B.kmm.memory.budget.bytes = lots\n", "mm2.properties:5: error:"},
		{"A->B.kmm.data.plane = rust\n", `mm2.properties:5: error: kmm.data.plane = "rust" is neither go nor c`},
	} {
		p := filepath.Join(t.TempDir(), "mm2.properties")
		if err := os.WriteFile(p, []byte(twoClusters+"A->B.enabled = true\n"+tc.line), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := mm2conf.Load(mm2conf.LoadOptions{ConfigFile: p})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want an error containing %q", tc.line, err, tc.want)
		}
	}
}

// kmm.workers.enabled: off by default, on per flow or for every flow; the groups' names.
func TestWorkersKey(t *testing.T) {
	flows, err := FromMM2(load(t, twoClusters+"clusters = A, B, C\nC.bootstrap.servers = c:9092\nA->B.enabled = true\nA->C.enabled = true\nA->C.kmm.workers.enabled = true\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range flows {
		if want := f.Name() == "A->C"; f.Workers != want {
			t.Errorf("%s: Workers %v, want %v", f.Name(), f.Workers, want)
		}
	}
	flows, err = FromMM2(load(t, twoClusters+"A->B.enabled = true\nkmm.workers.enabled = true\n"))
	if err != nil {
		t.Fatal(err)
	}
	f := flows[0]
	if !f.Workers || f.WorkersGroup() != "kmm-A->B-workers" || f.LeaderGroup() != "kmm-A->B-leader" {
		t.Errorf("top-level key: Workers %v, groups %q %q", f.Workers, f.WorkersGroup(), f.LeaderGroup())
	}
}

// kmm.rate.limit.bytes.per.second: top level for every flow, A->B.kmm.rate.limit.bytes.per.second
// for one (the flow's key wins), 0 (no limit) by default; a negative or non-numeric value is an
// error at its line; a cluster-prefixed one does not apply (config check warns).
func TestRateLimit(t *testing.T) {
	flows, err := FromMM2(load(t, twoClusters+"clusters = A, B, C\nC.bootstrap.servers = c:9092\nA->B.enabled = true\nA->C.enabled = true\nB->C.enabled = true\n"+
		"kmm.rate.limit.bytes.per.second = 2000000\nA->C.kmm.rate.limit.bytes.per.second = 500000\nB.bootstrap.servers = b:9092\nC.kmm.rate.limit.bytes.per.second = 7\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, f := range flows {
		got[f.Name()] = f.RateLimit
	}
	if got["A->B"] != 2000000 || got["A->C"] != 500000 || got["B->C"] != 2000000 {
		t.Errorf("rate limits %v, want A->B 2000000 (top level), A->C 500000 (its own), B->C 2000000 (C.kmm… does not apply)", got)
	}
	flows, err = FromMM2(load(t, twoClusters+"A->B.enabled = true\n"))
	if err != nil || flows[0].RateLimit != 0 {
		t.Fatalf("default: %v %v, want 0 (no limit)", flows, err)
	}
	for _, tc := range []struct{ line, want string }{
		{"kmm.rate.limit.bytes.per.second = -1\n", "mm2.properties:5: error: kmm.rate.limit.bytes.per.second = -1 is negative"},
		{"A->B.kmm.rate.limit.bytes.per.second = 10MB\n", "mm2.properties:5: error:"},
	} {
		p := filepath.Join(t.TempDir(), "mm2.properties")
		if err := os.WriteFile(p, []byte(twoClusters+"A->B.enabled = true\n"+tc.line), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := mm2conf.Load(mm2conf.LoadOptions{ConfigFile: p})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want an error containing %q", tc.line, err, tc.want)
		}
	}
}

// TestRemoteNamesFollowAliases: with source.cluster.alias / target.cluster.alias set apart
// from the clusters' names (MM2 allows it), every name kmm derives uses the aliases: remote
// topics and their reverse, the checkpoints and offset-syncs topics (issue 36: verify once
// compared A.orders where replicate wrote primary.orders).
func TestRemoteNamesFollowAliases(t *testing.T) {
	for _, c := range []struct {
		lines, remote, checkpoints, syncs string
		side                              Side
	}{
		{"", "A.orders", "A.checkpoints.internal", "mm2-offset-syncs.B.internal", Source},
		{"A->B.source.cluster.alias = primary\nA->B.target.cluster.alias = backup\n", "primary.orders", "primary.checkpoints.internal", "mm2-offset-syncs.backup.internal", Source},
		{"A->B.source.cluster.alias = primary\nA->B.target.cluster.alias = backup\nA->B.offset-syncs.topic.location = target\n", "primary.orders", "primary.checkpoints.internal", "mm2-offset-syncs.primary.internal", Target},
		{"A->B.source.cluster.alias = primary\nreplication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy\n", "orders", "primary.checkpoints.internal", "mm2-offset-syncs.B.internal", Source},
	} {
		flows, err := FromMM2(load(t, twoClusters+"A->B.enabled = true\n"+c.lines))
		if err != nil {
			t.Fatal(err)
		}
		f, err := One(flows, Selector{Flow: "A->B"})
		if err != nil {
			t.Fatal(err)
		}
		if got := f.RemoteTopic("orders"); got != c.remote {
			t.Errorf("%q: RemoteTopic(orders) = %q, want %q", c.lines, got, c.remote)
		}
		if up, ok := f.UpstreamTopic(c.remote); !ok || up != "orders" {
			t.Errorf("%q: UpstreamTopic(%q) = %q, %v; want orders, true", c.lines, c.remote, up, ok)
		}
		if c.remote != "orders" { // a local name, or another flow's remote topic, is not this flow's
			for _, other := range []string{"orders", "C.orders", "B.orders"} {
				if up, ok := f.UpstreamTopic(other); ok {
					t.Errorf("%q: UpstreamTopic(%q) = %q, true; want false", c.lines, other, up)
				}
			}
		}
		if got := f.CheckpointsTopic(); got != c.checkpoints {
			t.Errorf("%q: CheckpointsTopic() = %q, want %q", c.lines, got, c.checkpoints)
		}
		if side, topic := f.OffsetSyncs(); side != c.side || topic != c.syncs {
			t.Errorf("%q: OffsetSyncs() = %s, %q; want %s, %q", c.lines, side, topic, c.side, c.syncs)
		}
	}
}
