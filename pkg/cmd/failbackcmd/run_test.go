package failbackcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
	"github.com/kmmproject/kmm/pkg/plan"
	"github.com/kmmproject/kmm/pkg/switchover"
)

// fbBed is flow A->B failed over on in-process clusters: orders (2 partitions of 10 records)
// on A and the same records in A.orders on B, the flow FAILED_OVER with its cut at the ends,
// and group g1 committed on B at A.orders[0]=4, [1]=10.
type fbBed struct {
	a, b  kfakebed.Cluster
	props string
}

var onB = map[int32]int64{0: 4, 1: 10}

func newFbBed(t *testing.T, state flowstate.State) *fbBed {
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
	fb := &fbBed{a: a, b: b, props: kfakebed.WriteProps(t, []kfakebed.Cluster{a, b}, "A->B.enabled = true", "A->B.topics = orders", "A->B.groups = g.*",
		"B->A.enabled = true", "B->A.topics = orders")}
	if state != flowstate.Replicating {
		st := &flowstate.FlowRecord{Version: 1, Type: "flow", Flow: "A->B", State: state, Epoch: 2, At: time.Now(), Mode: "planned", By: "test",
			Cut: []flowstate.PartitionCut{{Topic: "orders", Partition: 0, SourceEnd: 10, Replicated: 10, ReplicatedSource: "drained (exact)", TargetEnd: 10},
				{Topic: "orders", Partition: 1, SourceEnd: 10, Replicated: 10, ReplicatedSource: "drained (exact)", TargetEnd: 10}}}
		for _, c := range []kfakebed.Cluster{a, b} {
			writeState(t, c, flowstate.FlowKey("A", "B"), st)
		}
	}
	commit(t, b, "g1", "A.orders", onB)
	return fb
}

func writeState(t *testing.T, c kfakebed.Cluster, key string, v any) {
	t.Helper()
	b, err := flowstate.Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	c.CreateTopic(t, plan.StateTopic, 1)
	c.Produce(t, []cluster.Record{{Topic: plan.StateTopic, Partition: 0, Key: []byte(key), Value: b}})
}

func commit(t *testing.T, c kfakebed.Cluster, group, topic string, offs map[int32]int64) {
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

func (fb *fbBed) state(t *testing.T) *flowstate.FlowRecord {
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

func (fb *fbBed) offsetsOnA(t *testing.T, group string) map[cluster.TP]cluster.OffsetMeta {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := fb.a.Open(t).ListGroupOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func (fb *fbBed) options(mods ...func(*Options)) *Options {
	o := &Options{Common: drshared.Common{File: mm2conf.LoadOptions{ConfigFile: fb.props}, Flow: flow.Selector{Flow: "A->B"}, Output: "json",
		Fence: switchover.FenceNone, Timeout: 30 * time.Second, ApplyOpts: cmdutil.ApplyOptions{Yes: true, JSON: true}}, Stranded: switchover.StrandedQuarantine, MaxRevLag: -1}
	for _, m := range mods {
		m(o)
	}
	return o
}

type prober struct{ members int }

func (p prober) DescribeAnyGroup(context.Context, *flow.Flow, flow.Side, string) (cluster.AnyGroup, error) {
	return cluster.AnyGroup{State: "Stable", ProtocolType: "connect", Members: p.members}, nil
}

type result struct {
	out, errOut string
	err         error
}

func runFailback(t *testing.T, o *Options, mm2 int) result {
	t.Helper()
	io, _, out, errOut := iostreams.Test()
	fac := cmdutil.NewTestFactory(io, kfakebed.Opener(), time.Now)
	fac.Groups = prober{members: mm2}
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

// Failback's Run on in-process clusters: the dry run writes nothing and every gate passes; the
// run commits g1's exact translation back on A and marks the flow REPLICATING at a new epoch.
func TestRunFailbackDryRunThenApply(t *testing.T) {
	t.Parallel()
	fb := newFbBed(t, flowstate.FailedOver)
	r := runFailback(t, fb.options(func(o *Options) { o.ApplyOpts.DryRun = true }), 0)
	if r.err != nil {
		t.Fatalf("dry run: %v\n%s", r.err, r.errOut)
	}
	j := decode(t, r)
	for _, g := range j.Gates {
		if g.Verdict != switchover.Pass {
			t.Errorf("dry run: gate %s", g)
		}
	}
	if j.Run != nil || len(fb.offsetsOnA(t, "g1")) != 0 || fb.state(t).State != flowstate.FailedOver {
		t.Fatalf("the dry run changed something: run %v, g1 on A %v, state %s", j.Run, fb.offsetsOnA(t, "g1"), fb.state(t).State)
	}
	r = runFailback(t, fb.options(), 0)
	if r.err != nil {
		t.Fatalf("failback: %v\n%s", r.err, r.errOut)
	}
	j = decode(t, r)
	if len(j.Items) != 2 {
		t.Fatalf("translations %+v", j.Items)
	}
	for _, e := range j.Items {
		if !e.Exact || e.TargetOffset != onB[e.Partition] || e.RemoteTopic != "orders" {
			t.Errorf("translation %+v", e)
		}
	}
	got := fb.offsetsOnA(t, "g1")
	for p, o := range onB {
		if got[cluster.TP{Topic: "orders", Partition: p}].Offset != o {
			t.Fatalf("g1 on A %v, want %v", got, onB)
		}
	}
	if st := fb.state(t); st.State != flowstate.Replicating || st.Epoch <= 2 {
		t.Fatalf("flow state %+v", st)
	}
}

// Failback's gates refuse with nothing written: a flow that is not failed over, an unknown
// group (usage), a running MM2 (--force passes), two live replicators of the reverse flow,
// more reverse lag than --max-reverse-lag.
func TestRunFailbackGatesRefuse(t *testing.T) {
	t.Parallel()
	lease := func(t *testing.T, fb *fbBed, id string) {
		writeState(t, fb.a, flowstate.LeaseKey("B", "A", id), &flowstate.Lease{Version: 1, Type: "lease", Flow: "B->A", Instance: id, Host: "h", PID: 1,
			Started: time.Now(), Refreshed: time.Now(), TTL: flowstate.Duration(time.Hour)})
	}
	for _, c := range []struct {
		name   string
		state  flowstate.State
		setup  func(t *testing.T, fb *fbBed)
		mods   func(*Options)
		mm2    int
		kind   kerr.Kind
		want   string
		passes bool
	}{
		{name: "not failed over", state: flowstate.Replicating, kind: kerr.CheckFailed, want: "is REPLICATING (epoch 0), not FAILED_OVER"},
		{name: "unknown group", mods: func(o *Options) { o.Groups = []string{"nope"} }, kind: kerr.Usage, want: "group nope has no committed offset on B"},
		{name: "MM2 running", mm2: 1, kind: kerr.CheckFailed, want: "Apache MirrorMaker 2 is running flow A->B"},
		{name: "MM2 running, --force", mm2: 1, mods: func(o *Options) { o.Force = true }, passes: true},
		{name: "two reverse replicators", setup: func(t *testing.T, fb *fbBed) { lease(t, fb, "one"); lease(t, fb, "two") }, kind: kerr.CheckFailed, want: "2 kmm replicate processes run B->A: keep one (or --force)"},
		{name: "reverse lag", setup: func(t *testing.T, fb *fbBed) {
			fb.b.CreateTopic(t, "orders", 1)
			fb.b.Produce(t, []cluster.Record{{Topic: "orders", Partition: 0, Value: []byte("new on B")}, {Topic: "orders", Partition: 0, Value: []byte("and another")}})
		}, mods: func(o *Options) { o.MaxRevLag = 1 }, kind: kerr.CheckFailed, want: "reverse flow B->A has 2 record(s) left to copy, more than --max-reverse-lag 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			state := c.state
			if state == "" {
				state = flowstate.FailedOver
			}
			fb := newFbBed(t, state)
			if c.setup != nil {
				c.setup(t, fb)
			}
			o := fb.options(func(o *Options) { o.ApplyOpts.DryRun = c.passes })
			if c.mods != nil {
				c.mods(o)
			}
			r := runFailback(t, o, c.mm2)
			if c.passes {
				if r.err != nil {
					t.Fatalf("refused: %v\n%s", r.err, r.errOut)
				}
				return
			}
			if kerr.KindOf(r.err) != c.kind || r.err == nil || !strings.Contains(r.err.Error(), c.want) {
				t.Fatalf("got %v (kind %v), want %v with %q\n%s", r.err, kerr.KindOf(r.err), c.kind, c.want, r.errOut)
			}
			if got := fb.offsetsOnA(t, "g1"); len(got) != 0 {
				t.Errorf("g1 committed on A: %v", got)
			}
			if st := fb.state(t); st.State != state {
				t.Errorf("flow state %s, was %s", st.State, state)
			}
		})
	}
}

// A failback whose commit of g1 on A fails stops with the flow FAILING_BACK; the next run
// resumes: the steps done before are not repeated, and it ends REPLICATING.
func TestRunFailbackResumesAfterAFailedStep(t *testing.T) {
	t.Parallel()
	fb := newFbBed(t, flowstate.FailedOver)
	refuse := true
	fb.a.ControlKey(int16(kmsg.OffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		fb.a.KeepControl()
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
	r := runFailback(t, fb.options(), 0)
	if r.err == nil || !strings.Contains(r.err.Error(), "commit-offsets/g1") {
		t.Fatalf("first run: %v\n%s", r.err, r.errOut)
	}
	if st := fb.state(t); st.State != flowstate.FailingBack {
		t.Fatalf("after the failed step: %s, want FAILING_BACK", st.State)
	}
	refuse = false
	r = runFailback(t, fb.options(), 0)
	if r.err != nil || !strings.Contains(r.errOut, "resuming run") {
		t.Fatalf("second run: %v\n%s", r.err, r.errOut)
	}
	out := map[string]plan.Outcome{}
	for _, s := range decode(t, r).Run.Steps {
		out[s.ID] = s.Outcome
	}
	if out["mark/FAILING_BACK"] != plan.DoneBefore || out["commit-offsets/g1"] != plan.Applied || out["mark/REPLICATING"] != plan.Applied {
		t.Fatalf("resumed run's outcomes %v", out)
	}
	if st := fb.state(t); st.State != flowstate.Replicating {
		t.Fatalf("flow state %s", st.State)
	}
}

// --report FILE.md writes failback's evidence report, the same kind as failover's: with
// --dry-run the plan and the records stranded on A per partition (3 written on A after the cut),
// after the run the steps, the RTO and the groups' translations back, in the columns of
// failback's direction.
func TestRunFailbackEvidenceReport(t *testing.T) {
	t.Parallel()
	fb := newFbBed(t, flowstate.FailedOver)
	fb.a.Produce(t, []cluster.Record{{Topic: "orders", Partition: 0, Value: []byte("s1")}, {Topic: "orders", Partition: 0, Value: []byte("s2")},
		{Topic: "orders", Partition: 0, Value: []byte("s3")}})
	report := filepath.Join(t.TempDir(), "failback.md")
	r := runFailback(t, fb.options(func(o *Options) { o.ApplyOpts.DryRun, o.Report = true, report }), 0)
	if r.err != nil {
		t.Fatalf("dry run: %v\n%s", r.err, r.errOut)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("no report after the dry run: %v\n%s", err, r.errOut)
	}
	md := string(b)
	for _, want := range []string{"# kmm failback report: A->B (--stranded quarantine)", "| Confirmation | --dry-run: nothing was applied |",
		"| Outcome | plan only |", "## The plan that was confirmed", "Command `failback`, flow A->B",
		"## Records stranded on A per partition (written after the last record that reached B)",
		"| orders | 0 | 13 | 10 | stranded: copied to kmm.stranded.<topic> on A, the groups moved past them | 3 |",
		"| RPO | 3 record(s) (stranded: written on A after the last record that reached B before the cut; --stranded quarantine:"} {
		if !strings.Contains(md, want) {
			t.Errorf("dry-run report lacks %q:\n%s", want, md)
		}
	}
	if !strings.Contains(r.errOut, "evidence report written to "+report) {
		t.Errorf("stderr does not name the report:\n%s", r.errOut)
	}
	r = runFailback(t, fb.options(func(o *Options) { o.Report = report }), 0)
	if r.err != nil {
		t.Fatalf("failback: %v\n%s", r.err, r.errOut)
	}
	b, err = os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	md = string(b)
	for _, want := range []string{"| Confirmation | --yes |", "| Outcome | done |", "## Steps", "consumers may resume on A",
		"| Group | Topic on B | Partition | Topic on A | Offset on B | Offset on A | Translation |", "| g1 | A.orders | 1 | orders | 10 | 10 | exact |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}
