package translatecmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed/kfakebed"
	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/checkpoint"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

var now = time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)

// bed: A (source) and B (target) in process; B holds A.orders with 100 records per partition and
// MM2-format checkpoints for group "billing" (50 and 70) and "idle" (10 and 20).
func bed(t *testing.T) (props string, b kfakebed.Cluster) {
	t.Helper()
	a, b := kfakebed.Start(t, "A"), kfakebed.Start(t, "B")
	b.CreateTopic(t, "A.orders", 2)
	var recs []cluster.Record
	for i := 0; i < 200; i++ {
		recs = append(recs, cluster.Record{Topic: "A.orders", Partition: int32(i % 2), Value: []byte(fmt.Sprint(i))})
	}
	b.Produce(t, recs)
	b.CreateTopic(t, "A.checkpoints.internal", 1)
	var cps []cluster.Record
	for _, cp := range []mm2wire.Checkpoint{
		{Group: "billing", Topic: "A.orders", Partition: 0, UpstreamOffset: 50, DownstreamOffset: 50},
		{Group: "billing", Topic: "A.orders", Partition: 1, UpstreamOffset: 70, DownstreamOffset: 70},
		{Group: "idle", Topic: "A.orders", Partition: 0, UpstreamOffset: 10, DownstreamOffset: 10},
		{Group: "idle", Topic: "A.orders", Partition: 1, UpstreamOffset: 20, DownstreamOffset: 20},
	} {
		k, v, err := checkpoint.Record(cp)
		if err != nil {
			t.Fatal(err)
		}
		cps = append(cps, cluster.Record{Topic: "A.checkpoints.internal", Partition: 0, Key: k, Value: v, Timestamp: now.Add(-time.Minute)})
	}
	b.Produce(t, cps)
	return kfakebed.WriteProps(t, []kfakebed.Cluster{a, b}, "A->B.enabled = true", "A->B.topics = orders"), b
}

func runCmd(t *testing.T, o *Options, stdin string, tty bool) (string, string, error) {
	t.Helper()
	io, in, out, errOut := iostreams.Test()
	in.WriteString(stdin)
	if tty {
		io.SetTTY(true, false, false)
	}
	fac := cmdutil.NewTestFactory(io, rdkafka.Opener{}, func() time.Time { return now })
	err := run(context.Background(), o, fac)
	return out.String(), errOut.String(), err
}

func opts(props string, groups ...string) *Options {
	return &Options{File: mm2conf.LoadOptions{ConfigFile: props}, Output: "table", Groups: groups}
}

func TestTranslateFromCheckpoints(t *testing.T) {
	t.Parallel() // own in-process clusters: waits overlap with the other tests of the package
	props, _ := bed(t)
	o := opts(props, "billing")
	o.Output = "json"
	out, errOut, err := runCmd(t, o, "", false)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var env struct {
		Kind  string `json:"kind"`
		Items []struct {
			Group string `json:"group"`
			OK    bool   `json:"ok"`
			Rows  []struct {
				Partition    int32  `json:"partition"`
				TargetTopic  string `json:"target_topic"`
				TargetOffset int64  `json:"target_offset"`
				Derived      string `json:"derived"`
				AgeMs        int64  `json:"age_ms"`
			} `json:"rows"`
		} `json:"items"`
		Plan json.RawMessage `json:"plan"`
	}
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if env.Kind != "translate-offsets" || len(env.Items) != 1 || !env.Items[0].OK || len(env.Items[0].Rows) != 2 || env.Plan != nil {
		t.Fatalf("%s", out)
	}
	for _, r := range env.Items[0].Rows {
		want := map[int32]int64{0: 50, 1: 70}[r.Partition]
		if r.TargetTopic != "A.orders" || r.TargetOffset != want || r.Derived != "checkpoint" || r.AgeMs != 60000 {
			t.Errorf("row %+v", r)
		}
	}
	// A requested group without a checkpoint: exit 3 naming it.
	_, _, err = runCmd(t, opts(props, "nobody"), "", false)
	if kerr.KindOf(err) != kerr.CheckFailed || !strings.Contains(err.Error(), "nobody") {
		t.Fatalf("unknown group: %v", err)
	}
	// Flow selection errors are usage errors.
	o = opts(props, "billing")
	o.Flow = flow.Selector{Flow: "B->C"}
	if _, _, err := runCmd(t, o, "", false); kerr.KindOf(err) != kerr.Usage {
		t.Fatalf("--flow B->C: %v", err)
	}
}

func TestApplyContract(t *testing.T) {
	t.Parallel() // own in-process clusters: waits overlap with the other tests of the package
	props, b := bed(t)
	ctx := context.Background()
	offsets := func(g string) map[cluster.TP]cluster.OffsetMeta {
		m, err := b.Open(t).ListGroupOffsets(ctx, g)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	apply := func(mod func(*Options)) *Options {
		o := opts(props, "billing", "idle")
		o.Apply = true
		mod(o)
		return o
	}
	// Off a terminal without --yes: usage error before anything is read.
	_, _, err := runCmd(t, apply(func(*Options) {}), "", false)
	if kerr.KindOf(err) != kerr.Usage || !strings.Contains(kerr.HintOf(err), "--yes") {
		t.Fatalf("no --yes: %v", err)
	}
	// --dry-run -o json: translations and the plan, no report, nothing committed.
	out, errOut, err := runCmd(t, apply(func(o *Options) {
		o.Output, o.ApplyOpts = "json", cmdutil.ApplyOptions{DryRun: true, JSON: true, Verb: "committed"}
	}), "", false)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var env struct {
		Items []json.RawMessage `json:"items"`
		Plan  *struct {
			Command string `json:"command"`
			Flow    string `json:"flow"`
			Journal string `json:"journal"`
			Steps   []struct {
				ID     string           `json:"id"`
				Expect map[string]int64 `json:"expect"`
				Params json.RawMessage  `json:"params"`
			} `json:"steps"`
		} `json:"plan"`
		Report json.RawMessage `json:"report"`
	}
	if err := json.Unmarshal([]byte(out), &env); err != nil || env.Plan == nil || env.Report != nil || len(env.Items) != 2 {
		t.Fatalf("%v: %s", err, out)
	}
	if len(env.Plan.Steps) != 2 || env.Plan.Steps[0].ID != "commit-offsets/billing" || env.Plan.Steps[0].Expect["partitions"] != 2 ||
		!strings.Contains(strings.ReplaceAll(string(env.Plan.Steps[0].Params), " ", ""), `"offset":70`) || env.Plan.Journal != "B" || env.Plan.Flow != "A->B" {
		t.Fatalf("plan: %s", out)
	}
	if !strings.Contains(errOut, "2 step(s) to apply on B; --dry-run: nothing committed") || len(offsets("billing")) != 0 {
		t.Fatalf("dry run: %s, offsets %v", errOut, offsets("billing"))
	}
	// On a terminal, "n": refused (exit 3), nothing committed.
	_, errOut, err = runCmd(t, apply(func(*Options) {}), "n\n", true)
	if kerr.KindOf(err) != kerr.CheckFailed || !strings.Contains(errOut, "apply 2 step(s) to cluster B") || len(offsets("billing")) != 0 {
		t.Fatalf("not confirmed: %v\n%s", err, errOut)
	}
	// "y": the plan is applied; tables on stdout (translation, plan, report), progress on stderr.
	out, errOut, err = runCmd(t, apply(func(*Options) {}), "y\n", true)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	for _, want := range []string{"PLAN translate-offsets A->B", "REPORT run", "commit-offsets/billing", "applied"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "step 1/2 commit-offsets/billing: applied (partitions=2)") || !strings.Contains(errOut, "done: 2 applied") {
		t.Fatalf("stderr:\n%s", errOut)
	}
	if o := offsets("billing"); o[cluster.TP{Topic: "A.orders", Partition: 1}].Offset != 70 || o[cluster.TP{Topic: "A.orders", Partition: 0}].Offset != 50 {
		t.Fatalf("billing on B: %v", o)
	}
	// Again with --yes -o json: a new run finds both groups in effect; the report says so.
	out, _, err = runCmd(t, apply(func(o *Options) { o.Output, o.ApplyOpts = "json", cmdutil.ApplyOptions{Yes: true, JSON: true} }), "", false)
	var env2 struct {
		Report struct {
			State string `json:"state"`
			Steps []struct {
				Outcome string `json:"outcome"`
			} `json:"steps"`
		} `json:"report"`
	}
	if err != nil || json.Unmarshal([]byte(out), &env2) != nil || env2.Report.State != "done" || len(env2.Report.Steps) != 2 ||
		env2.Report.Steps[0].Outcome != "already-done" || env2.Report.Steps[1].Outcome != "already-done" {
		t.Fatalf("second apply: %v\n%s", err, out)
	}
}

// A row whose age and bound are not known is "?" / "bound unknown" in the table and null in
// JSON, never 0 (issue 35 item 6; an unknown age, -1 ns inside, was written as age_ms 0).
func TestUnknownAgeAndBoundAreNull(t *testing.T) {
	res := []checkpoint.GroupTranslation{{Group: "g", Rows: []checkpoint.Row{
		{Group: "g", SourceTopic: "orders", TargetTopic: "A.orders", SourceOffset: 5, TargetOffset: 5, Derived: checkpoint.FromCheckpoint, Age: -1, Bound: -1, Checkpoint: 5},
		{Group: "g", SourceTopic: "orders", Partition: 1, TargetTopic: "A.orders", SourceOffset: 7, TargetOffset: 7, Derived: checkpoint.FromCheckpoint, Age: 1500 * time.Millisecond, Exact: true, Checkpoint: 7},
	}}}
	b, err := json.Marshal(jsonItems(res))
	if err != nil {
		t.Fatal(err)
	}
	var items []struct {
		Rows []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal(b, &items); err != nil {
		t.Fatal(err)
	}
	if r := items[0].Rows[0]; r["age_ms"] != nil || r["bound"] != nil {
		t.Errorf("unknown row: %v, want age_ms and bound null", r)
	}
	if r := items[0].Rows[1]; r["age_ms"] != float64(1500) || r["bound"] != float64(0) {
		t.Errorf("known row: %v", r)
	}
	var out strings.Builder
	if err := render(&out, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "?    bound unknown") {
		t.Errorf("table:\n%s", out.String())
	}
}
