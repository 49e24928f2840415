package failovercmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kmmproject/kmm/e2e/testbed/kfakebed"
	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/cmd/drshared"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/flowstate"
	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/plan"
	"github.com/kmmproject/kmm/pkg/rdkafka"
	"github.com/kmmproject/kmm/pkg/switchover"
)

// foBed is a flow A->B of topic orders (2 partitions of 10 records) on in-process clusters, as
// kmm replicate leaves it caught up: the remote topic A.orders holds the same records and the
// progress of both partitions is stored on B. Group g1 committed on A at orders[0]=4,
// orders[1]=10.
type foBed struct {
	a, b  kfakebed.Cluster
	props string
}

var committedG1 = map[int32]int64{0: 4, 1: 10}

func newFoBed(t *testing.T, lines ...string) *foBed {
	t.Helper()
	a, b := kfakebed.Start(t, "A"), kfakebed.Start(t, "B")
	a.CreateTopic(t, "orders", 2)
	b.CreateTopic(t, "A.orders", 2)
	base := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	for _, side := range []struct {
		c     kfakebed.Cluster
		topic string
	}{{a, "orders"}, {b, "A.orders"}} {
		var recs []cluster.Record
		for p := int32(0); p < 2; p++ {
			for i := 0; i < 10; i++ {
				recs = append(recs, cluster.Record{Topic: side.topic, Partition: p, Key: []byte(fmt.Sprintf("k%d-%d", p, i)), Value: []byte(fmt.Sprintf("v%d", i)),
					Timestamp: base.Add(time.Duration(i) * time.Millisecond)})
			}
		}
		side.c.Produce(t, recs)
	}
	props := kfakebed.WriteProps(t, []kfakebed.Cluster{a, b}, append([]string{"A->B.enabled = true", "A->B.topics = orders", "A->B.groups = g.*"}, lines...)...)
	fb := &foBed{a: a, b: b, props: props}
	fb.storeProgress(t, map[int32]int64{0: 9, 1: 9})
	fb.commit(t, a, "g1", "orders", committedG1)
	return fb
}

// storeProgress writes A->B's Connect source offsets (last replicated offset per partition of
// orders) on B, as kmm replicate and MM2 do.
func (fb *foBed) storeProgress(t *testing.T, last map[int32]int64) {
	t.Helper()
	const topic, parts = "mm2-offsets.A.internal", 5 // offset.storage.partitions in WriteProps
	fb.b.CreateTopic(t, topic, parts)
	var recs []cluster.Record
	for p, o := range last {
		key := mm2wire.SourceOffsetKey{Connector: mm2wire.SourceConnectorName, Cluster: "A", Topic: "orders", Partition: p}.AppendJSON(nil)
		recs = append(recs, cluster.Record{Topic: topic, Partition: mm2wire.PartitionForKey(key, parts), Key: key, Value: mm2wire.AppendOffsetValue(nil, o)})
	}
	fb.b.Produce(t, recs)
}

func (fb *foBed) commit(t *testing.T, c kfakebed.Cluster, group, topic string, offs map[int32]int64) {
	t.Helper()
	m := map[cluster.TP]cluster.OffsetMeta{}
	for p, o := range offs {
		m[cluster.TP{Topic: topic, Partition: p}] = cluster.OffsetMeta{Offset: o}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Open(t).AlterGroupOffsets(ctx, group, m); err != nil {
		t.Fatal(err)
	}
}

// writeState writes a record of __kmm_state on c.
func writeState(t *testing.T, c kfakebed.Cluster, key string, v any) {
	t.Helper()
	b, err := flowstate.Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	c.CreateTopic(t, plan.StateTopic, 1)
	c.Produce(t, []cluster.Record{{Topic: plan.StateTopic, Partition: 0, Key: []byte(key), Value: b}})
}

func (fb *foBed) flowState(t *testing.T) *flowstate.FlowRecord {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	recs, err := plan.ReadState(ctx, fb.b.Open(t))
	if err != nil {
		t.Fatal(err)
	}
	st, err := flowstate.DecodeFlow(recs[flowstate.FlowKey("A", "B")])
	if err != nil {
		t.Fatal(err)
	}
	return flowstate.Newest("A->B", st)
}

func (fb *foBed) offsetsOnB(t *testing.T, group string) map[cluster.TP]cluster.OffsetMeta {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := fb.b.Open(t).ListGroupOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// prober is a cluster.GroupProber saying whether MM2's Connect group has members.
type prober struct{ members int }

func (p prober) DescribeAnyGroup(context.Context, *flow.Flow, flow.Side, string) (cluster.AnyGroup, error) {
	return cluster.AnyGroup{State: "Stable", ProtocolType: "connect", Members: p.members}, nil
}

// options are failover's defaults, as its flags leave them, for the bed's file.
func (fb *foBed) options(mode string, mods ...func(*Options)) *Options {
	o := &Options{Common: drshared.Common{File: mm2conf.LoadOptions{ConfigFile: fb.props}, Flow: flow.Selector{Flow: "A->B"}, Output: "json",
		Fence: switchover.FenceNone, Timeout: 30 * time.Second, ApplyOpts: cmdutil.ApplyOptions{Yes: true, JSON: true}}, Mode: mode, MaxRPO: -1}
	for _, m := range mods {
		m(o)
	}
	o.ApplyOpts.JSON = o.Output == "json"
	return o
}

type result struct {
	out, errOut string
	err         error
}

func runFailover(t *testing.T, o *Options, mm2Members int, opener cluster.Opener) result {
	t.Helper()
	io, _, out, errOut := iostreams.Test()
	fac := cmdutil.NewTestFactory(io, opener, time.Now)
	fac.Groups = prober{members: mm2Members}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := Run(ctx, o, fac)
	return result{out.String(), errOut.String(), err}
}

type runJSON struct {
	Items []switchover.ExactOffset `json:"items"`
	Gates switchover.Gates         `json:"gates"`
	Plan  *plan.Plan               `json:"plan"`
	Run   *plan.Run                `json:"report"`
}

func decode(t *testing.T, r result) runJSON {
	t.Helper()
	var j runJSON
	if err := json.Unmarshal([]byte(r.out), &j); err != nil {
		t.Fatalf("JSON: %v\n%s\n%s", err, r.out, r.errOut)
	}
	return j
}

func rawDoc(t *testing.T, r result) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.out), &m); err != nil {
		t.Fatalf("JSON: %v\n%s", err, r.out)
	}
	return m
}

func gateVerdicts(gs switchover.Gates) map[string]switchover.Verdict {
	m := map[string]switchover.Verdict{}
	for _, g := range gs {
		m[g.Name] = g.Verdict
	}
	return m
}

// A planned failover's Run end to end on in-process clusters: the dry run prints the plan with
// every gate passed and writes nothing; the real run commits g1's exact translation on B and
// marks the flow FAILED_OVER; a second run is refused by the flow-state gate.
func TestRunPlannedDryRunThenApply(t *testing.T) {
	t.Parallel()
	fb := newFoBed(t)
	r := runFailover(t, fb.options("planned", func(o *Options) { o.ApplyOpts.DryRun = true }), 0, kfakebed.Opener())
	if r.err != nil {
		t.Fatalf("dry run: %v\n%s", r.err, r.errOut)
	}
	j := decode(t, r)
	if j.Plan == nil || j.Run != nil || len(j.Plan.Steps) == 0 {
		t.Fatalf("dry run's document: %s", r.out)
	}
	// The dry run measured no RPO: null, never 0 (issue 35 item 6).
	if v, ok := rawDoc(t, r)["rpo_records"]; !ok || v != nil {
		t.Errorf("dry run: rpo_records %v (present %v), want null", v, ok)
	}
	for _, name := range []string{"flow-state", "remote-topics", "groups", "groups-inactive", "no-mm2", "drift"} {
		if v := gateVerdicts(j.Gates)[name]; v != switchover.Pass {
			t.Errorf("dry run: gate %s: %q, want pass (gates %v)", name, v, j.Gates)
		}
	}
	if !strings.Contains(r.errOut, "--dry-run: nothing changed") {
		t.Errorf("dry run's stderr: %s", r.errOut)
	}
	if got := fb.offsetsOnB(t, "g1"); len(got) != 0 {
		t.Fatalf("the dry run committed g1 on B: %v", got)
	}
	if st := fb.flowState(t); st.State != flowstate.Replicating {
		t.Fatalf("the dry run changed the flow state: %+v", st)
	}

	r = runFailover(t, fb.options("planned"), 0, kfakebed.Opener())
	if r.err != nil {
		t.Fatalf("failover: %v\n%s", r.err, r.errOut)
	}
	if v := rawDoc(t, r)["rpo_records"]; v != float64(0) {
		t.Errorf("drained: rpo_records %v, want 0", v)
	}
	j = decode(t, r)
	if len(j.Items) != 2 {
		t.Fatalf("translations %+v", j.Items)
	}
	for _, e := range j.Items {
		if !e.Exact || e.TargetOffset != committedG1[e.Partition] || e.Rereads != 0 {
			t.Errorf("translation %+v", e)
		}
	}
	got := fb.offsetsOnB(t, "g1")
	for p, o := range committedG1 {
		if got[cluster.TP{Topic: "A.orders", Partition: p}].Offset != o {
			t.Errorf("g1 on B: %v, want %v", got, committedG1)
		}
	}
	if st := fb.flowState(t); st.State != flowstate.FailedOver || len(st.Cut) != 2 {
		t.Fatalf("flow state %+v", st)
	}
	r = runFailover(t, fb.options("planned"), 0, kfakebed.Opener())
	if kerr.KindOf(r.err) != kerr.CheckFailed || !strings.Contains(r.err.Error(), "already FAILED_OVER") {
		t.Fatalf("second failover: %v", r.err)
	}
}

// Every gate of the planned and rehearse preflights refuses what it must, with nothing written:
// the flow's state, missing or different remote topics, no topic at all, an unknown group or a
// regex matching none (usage errors), active consumers, a running MM2 (both overridden by
// --force, and not checked by a rehearsal), stale checkpoints.
func TestRunPreflightGatesRefuse(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		setup  func(t *testing.T, fb *foBed)
		mods   func(*Options)
		lines  []string
		mm2    int
		kind   kerr.Kind
		want   string
		passes bool // the gate is overridden/not judged: the command goes through
	}{
		{name: "flow already failed over", setup: func(t *testing.T, fb *foBed) {
			writeState(t, fb.b, flowstate.FlowKey("A", "B"), &flowstate.FlowRecord{Version: 1, Type: "flow", Flow: "A->B", State: flowstate.FailedOver, Epoch: 2, At: time.Now()})
		}, kind: kerr.CheckFailed, want: "already FAILED_OVER"},
		{name: "failing back", setup: func(t *testing.T, fb *foBed) {
			writeState(t, fb.b, flowstate.FlowKey("A", "B"), &flowstate.FlowRecord{Version: 1, Type: "flow", Flow: "A->B", State: flowstate.FailingBack, Epoch: 3, At: time.Now()})
		}, kind: kerr.CheckFailed, want: "is FAILING_BACK"},
		{name: "no remote topic", setup: func(t *testing.T, fb *foBed) { fb.a.CreateTopic(t, "orders2", 1) },
			lines: []string{"A->B.topics = orders.*"}, kind: kerr.CheckFailed, want: "topic orders2 has no remote topic A.orders2 on B"},
		{name: "partitions differ", setup: func(t *testing.T, fb *foBed) { fb.a.CreateTopic(t, "orders3", 2); fb.b.CreateTopic(t, "A.orders3", 1) },
			lines: []string{"A->B.topics = orders.*"}, kind: kerr.CheckFailed, want: "topic orders3 has 2 partition(s) on A, A.orders3 has 1 on B"},
		{name: "no topic", lines: []string{"A->B.topics = nothing"}, kind: kerr.CheckFailed, want: "replicates no topic of A"},
		{name: "unknown group", mods: func(o *Options) { o.Groups = []string{"nope"} }, kind: kerr.Usage, want: "group nope has no committed offset on A"},
		{name: "regex matching no group", mods: func(o *Options) { o.GroupsRegex = "x.*" }, kind: kerr.Usage, want: `--groups "x.*" matches no group`},
		{name: "MM2 running", mm2: 2, kind: kerr.CheckFailed, want: "Apache MirrorMaker 2 is running flow A->B"},
		{name: "MM2 running, --force", mm2: 2, mods: func(o *Options) { o.Force = true }, passes: true},
		{name: "MM2 running, rehearse", mm2: 2, mods: func(o *Options) { o.Mode = "rehearse" }, passes: true},
		{name: "no checkpoint", mods: func(o *Options) { o.MaxCkAge = time.Minute }, kind: kerr.CheckFailed, want: "group g1 has no checkpoint on B (--max-checkpoint-age 1m0s)"},
		// The reverse progress step would create mm2-offsets.B.internal on A with replication
		// factor 3 on a one-broker cluster: refused before anything changes, dry run included.
		{name: "a topic the plan creates is refused", lines: []string{"A.offset.storage.replication.factor = 3"}, mods: func(o *Options) { o.ApplyOpts.DryRun = true },
			kind: kerr.CheckFailed, want: "the plan creates topic mm2-offsets.B.internal on A (replication factor 3), which A refuses"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fb := newFoBed(t, c.lines...)
			if c.setup != nil {
				c.setup(t, fb)
			}
			o := fb.options("planned")
			if c.mods != nil {
				c.mods(o)
			}
			before := fb.flowState(t)
			r := runFailover(t, o, c.mm2, kfakebed.Opener())
			if c.passes {
				if r.err != nil {
					t.Fatalf("refused: %v\n%s", r.err, r.errOut)
				}
				return
			}
			if kerr.KindOf(r.err) != c.kind || r.err == nil || !strings.Contains(r.err.Error(), c.want) {
				t.Fatalf("got %v (kind %v), want %v with %q\n%s", r.err, kerr.KindOf(r.err), c.kind, c.want, r.errOut)
			}
			if got := fb.offsetsOnB(t, "g1"); len(got) != 0 {
				t.Errorf("g1 committed on B: %v", got)
			}
			if after := fb.flowState(t); after.State != before.State || after.Epoch != before.Epoch {
				t.Errorf("flow state changed: %+v -> %+v", before, after)
			}
		})
	}
}

// A group with a live member on B refuses a planned failover; --force passes it (the gate says
// overridden).
func TestRunActiveGroupGate(t *testing.T) {
	t.Parallel()
	fb := newFoBed(t)
	c, err := rdkafkaMember(t, fb.b, "g1", "A.orders")
	if err != nil {
		t.Fatal(err)
	}
	defer c()
	r := runFailover(t, fb.options("planned"), 0, kfakebed.Opener())
	if kerr.KindOf(r.err) != kerr.CheckFailed || !strings.Contains(r.err.Error(), "group g1 has 1 member(s) on B (client id rdkafka on host 127.0.0.1:") ||
		!strings.Contains(r.err.Error(), "until its session times out (session.timeout.ms after its last heartbeat: 45 s by default), then run again (or --force)") {
		t.Fatalf("active group: %v\n%s", r.err, r.errOut)
	}
	r = runFailover(t, fb.options("planned", func(o *Options) { o.Force = true; o.ApplyOpts.DryRun = true }), 0, kfakebed.Opener())
	if r.err != nil {
		t.Fatalf("--force: %v\n%s", r.err, r.errOut)
	}
	if v := gateVerdicts(decode(t, r).Gates)["groups-inactive"]; v != switchover.Overridden {
		t.Fatalf("groups-inactive with --force: %q", v)
	}
}

// A planned failover whose commit of g1 fails (the broker refuses it) stops with the run
// recorded as failed; the next run resumes it: the steps done before are not repeated, g1 is
// committed, the flow is FAILED_OVER.
func TestRunResumesAfterAFailedStep(t *testing.T) {
	t.Parallel()
	fb := newFoBed(t)
	refuse := true
	fb.b.ControlKey(int16(kmsg.OffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		fb.b.KeepControl()
		r := req.(*kmsg.OffsetCommitRequest)
		if !refuse || r.Group != "g1" {
			return nil, nil, false
		}
		resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
		for _, tp := range r.Topics {
			rt := kmsg.NewOffsetCommitResponseTopic()
			rt.Topic = tp.Topic
			for _, pp := range tp.Partitions {
				rp := kmsg.NewOffsetCommitResponseTopicPartition()
				rp.Partition = pp.Partition
				rp.ErrorCode = 30 // GROUP_AUTHORIZATION_FAILED
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil, true
	})
	r := runFailover(t, fb.options("planned"), 0, kfakebed.Opener())
	if r.err == nil || !strings.Contains(r.err.Error(), "commit-offsets/g1") {
		t.Fatalf("first run: %v\n%s", r.err, r.errOut)
	}
	if st := fb.flowState(t); st.State != flowstate.FailingOver {
		t.Fatalf("after the failed step the flow is %s, want FAILING_OVER", st.State)
	}
	refuse = false
	r = runFailover(t, fb.options("planned"), 0, kfakebed.Opener())
	if r.err != nil {
		t.Fatalf("second run: %v\n%s", r.err, r.errOut)
	}
	if !strings.Contains(r.errOut, "resuming run") {
		t.Errorf("the second run did not say it resumed:\n%s", r.errOut)
	}
	done := map[string]plan.Outcome{}
	for _, s := range decode(t, r).Run.Steps {
		done[s.ID] = s.Outcome
	}
	if done["drain"] != plan.DoneBefore || done["mark/FAILING_OVER"] != plan.DoneBefore || done["commit-offsets/g1"] != plan.Applied || done["mark/FAILED_OVER"] != plan.Applied {
		t.Fatalf("resumed run's outcomes %v", done)
	}
	if st := fb.flowState(t); st.State != flowstate.FailedOver {
		t.Fatalf("flow state %s", st.State)
	}
}

// The emergency preflight's gates, with the source down: no end-offset snapshot (refused;
// --accept-loss passes), more records lost than --max-rpo-records (refused; --accept-loss
// passes), a group without checkpoint (usage error), stale checkpoints (refused; --accept-loss
// passes); with the source up, "is reachable" (refused; --force passes).
func TestRunEmergencyGates(t *testing.T) {
	t.Parallel()
	ends := func(fb *foBed, e0, e1 int64) {
		writeState(t, fb.b, flowstate.EndsKey("A", "B"), &flowstate.Ends{Version: 1, Type: "ends", Flow: "A->B", At: time.Now().Add(-3 * time.Second),
			Ends: map[string][]int64{"orders": {e0, e1}}})
	}
	ckpt := func(t *testing.T, fb *foBed, at time.Time) {
		fb.b.CreateTopic(t, "A.checkpoints.internal", 1)
		var recs []cluster.Record
		for p, o := range committedG1 {
			c := mm2wire.Checkpoint{Group: "g1", Topic: "A.orders", Partition: p, UpstreamOffset: o, DownstreamOffset: o}
			k, _ := c.AppendKey(nil)
			v, _ := c.AppendValue(nil)
			recs = append(recs, cluster.Record{Topic: "A.checkpoints.internal", Partition: 0, Key: k, Value: v, Timestamp: at})
		}
		fb.b.Produce(t, recs)
	}
	for _, c := range []struct {
		name   string
		setup  func(t *testing.T, fb *foBed)
		mods   func(*Options)
		srcUp  bool
		kind   kerr.Kind
		want   string
		passes bool
	}{
		{name: "source up", srcUp: true, kind: kerr.CheckFailed, want: "is reachable: emergency failover is for a source that is down"},
		{name: "no snapshot", kind: kerr.CheckFailed, want: "no source end-offset snapshot of A->B on B"},
		{name: "no snapshot, --accept-loss", setup: func(t *testing.T, fb *foBed) { ckpt(t, fb, time.Now()) }, mods: func(o *Options) { o.AcceptLoss = true }, passes: true},
		{name: "RPO over the gate", setup: func(t *testing.T, fb *foBed) { ends(fb, 15, 10) }, mods: func(o *Options) { o.MaxRPO = 2 },
			kind: kerr.CheckFailed, want: "5 record(s) written on A are not on B (more than --max-rpo-records 2); nothing was changed"},
		{name: "RPO over the gate, --accept-loss", setup: func(t *testing.T, fb *foBed) { ends(fb, 15, 10); ckpt(t, fb, time.Now()) },
			mods: func(o *Options) { o.MaxRPO = 2; o.AcceptLoss = true }, passes: true},
		{name: "group without checkpoint", setup: func(t *testing.T, fb *foBed) { ends(fb, 10, 10) }, mods: func(o *Options) { o.Groups = []string{"g1"} },
			kind: kerr.Usage, want: "group g1 has no checkpoint on B"},
		{name: "stale checkpoints", setup: func(t *testing.T, fb *foBed) { ends(fb, 10, 10); ckpt(t, fb, time.Now().Add(-time.Hour)) },
			mods: func(o *Options) { o.MaxCkAge = time.Minute }, kind: kerr.CheckFailed, want: "stale checkpoints"},
		{name: "stale checkpoints, --accept-loss", setup: func(t *testing.T, fb *foBed) { ends(fb, 10, 10); ckpt(t, fb, time.Now().Add(-time.Hour)) },
			mods: func(o *Options) { o.MaxCkAge = time.Minute; o.AcceptLoss = true }, passes: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fb := newFoBed(t)
			if c.setup != nil {
				c.setup(t, fb)
			}
			props := fb.props
			if !c.srcUp { // A's address: a closed port
				props = kfakebed.WriteProps(t, []kfakebed.Cluster{kfakebed.Down(t, "A"), fb.b}, "A->B.enabled = true", "A->B.topics = orders", "A->B.groups = g.*")
			}
			o := fb.options("emergency", func(o *Options) { o.File.ConfigFile = props })
			if c.mods != nil {
				c.mods(o)
			}
			r := runFailover(t, o, 0, kfakebed.PingWithin(2*time.Second))
			if c.passes {
				if r.err != nil {
					t.Fatalf("refused: %v\n%s", r.err, r.errOut)
				}
				if st := fb.flowState(t); st.State != flowstate.FailedOver || st.Mode != "emergency" {
					t.Fatalf("flow state %+v", st)
				}
				return
			}
			if kerr.KindOf(r.err) != c.kind || r.err == nil || !strings.Contains(r.err.Error(), c.want) {
				t.Fatalf("got %v (kind %v), want %v with %q\n%s", r.err, kerr.KindOf(r.err), c.kind, c.want, r.errOut)
			}
			if got := fb.offsetsOnB(t, "g1"); len(got) != 0 {
				t.Errorf("g1 committed on B: %v", got)
			}
			if st := fb.flowState(t); st.State != flowstate.Replicating {
				t.Errorf("flow state %+v", st)
			}
		})
	}
}

// rdkafkaMember joins group on c with a consumer subscribed to topic and returns once the group
// has it as a member; the returned function closes it.
func rdkafkaMember(t *testing.T, c kfakebed.Cluster, group, topic string) (func(), error) {
	t.Helper()
	cfg := rdkafka.Config{}
	for k, v := range c.Config() {
		cfg[k] = v
	}
	cfg["group.id"] = group
	cons, err := rdkafka.NewConsumer("member "+group, cfg)
	if err != nil {
		return nil, err
	}
	if err := cons.Subscribe(topic); err != nil {
		cons.Close()
		return nil, err
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // keep the membership alive (polls serve the heartbeats and the rebalance)
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			_, _ = cons.Poll(context.Background(), 10, 100*time.Millisecond)
		}
	}()
	closeIt := func() { close(stop); <-done; cons.Close() }
	cl := c.Open(t)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		ds, err := cl.DescribeGroups(ctx, group)
		cancel()
		if err == nil && len(ds) == 1 && ds[0].Members > 0 {
			return closeIt, nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	closeIt()
	return nil, fmt.Errorf("group %s has no member after 30 s", group)
}

// With a cluster down, each mode's refusal (exit 4) says what that mode needs: emergency mode
// needs only the target (it is for a source that is down), planned mode both, a rehearsal reads
// both.
func TestRunHintsPerMode(t *testing.T) {
	t.Parallel()
	a := kfakebed.Start(t, "A")
	downA, downB := kfakebed.Down(t, "A"), kfakebed.Down(t, "B")
	for _, c := range []struct {
		mode     string
		clusters []kfakebed.Cluster
		want     string
	}{
		{"emergency", []kfakebed.Cluster{a, downB}, "emergency failover needs the target cluster B"},
		{"planned", []kfakebed.Cluster{downA, downB}, "planned failover needs both clusters"},
		{"rehearse", []kfakebed.Cluster{downA, downB}, "a rehearsal reads both clusters"},
	} {
		props := kfakebed.WriteProps(t, c.clusters, "A->B.enabled = true", "A->B.topics = orders")
		o := &Options{Common: drshared.Common{File: mm2conf.LoadOptions{ConfigFile: props}, Flow: flow.Selector{Flow: "A->B"}, Output: "table",
			Fence: switchover.FenceNone, Timeout: time.Minute, ApplyOpts: cmdutil.ApplyOptions{Yes: true, DryRun: true}}, Mode: c.mode, MaxRPO: -1}
		r := runFailover(t, o, 0, kfakebed.PingWithin(time.Second))
		if kerr.KindOf(r.err) != kerr.Unreachable || !strings.Contains(kerr.HintOf(r.err), c.want) {
			t.Errorf("%s: %v (hint %q), want exit 4 with %q", c.mode, r.err, kerr.HintOf(r.err), c.want)
		}
	}
}
