package verifycmd

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed/kfakebed"
	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/rdkafka"
	"github.com/kmmproject/kmm/pkg/verify"
)

// The command over in-process kfake clusters: a copy made by hand (no replicator, so no
// positions or offset syncs: the sides are paired at their log starts) passes --level full;
// one flipped byte fails it (exit 3) naming topic, partition and offsets in the JSON, and the
// JUnit file holds the failure; bad flags are usage errors before any cluster is asked.
func TestRunFullOverKfake(t *testing.T) {
	a, b := kfakebed.Start(t, "A"), kfakebed.Start(t, "B")
	a.CreateTopic(t, "orders", 2)
	b.CreateTopic(t, "A.orders", 2)
	var src []cluster.Record
	ts := time.UnixMilli(1_700_000_000_000)
	for i := 0; i < 40; i++ {
		src = append(src, cluster.Record{Topic: "orders", Partition: int32(i % 2), Key: []byte{byte(i)}, Value: []byte("value"),
			Headers: []cluster.Header{{Key: "h", Value: []byte{byte(i)}}}, Timestamp: ts.Add(time.Duration(i) * time.Millisecond)})
	}
	a.Produce(t, src)
	cp := func(flip int) []cluster.Record {
		var out []cluster.Record
		for i, r := range src {
			r.Topic = "A.orders"
			if i == flip {
				r.Value = []byte("valuf")
			}
			out = append(out, r)
		}
		return out
	}
	props := kfakebed.WriteProps(t, []kfakebed.Cluster{a, b}, "A->B.enabled = true", "A->B.topics = orders", "replication.factor = 1")
	junit := filepath.Join(t.TempDir(), "v.xml")
	run := func(o *Options) (string, string, error) {
		io, _, out, errOut := iostreams.Test()
		err := Run(context.Background(), o, cmdutil.NewTestFactory(io, rdkafka.Opener{}, time.Now))
		return out.String(), errOut.String(), err
	}
	opts := func() *Options {
		return &Options{File: mm2conf.LoadOptions{ConfigFile: props}, Flow: flow.Selector{Flow: "A->B"}, Level: verify.LevelFull, Output: "json", JUnit: junit, Samples: 5, Parallel: 2}
	}
	b.Produce(t, cp(-1))
	out, errOut, err := run(opts())
	if err != nil {
		t.Fatalf("clean copy: %v\n%s\n%s", err, out, errOut)
	}
	b.Produce(t, cp(7)[7:8]) // record 7 again, altered: an extra record on partition 1
	out, _, err = run(opts())
	if kerr.KindOf(err) != kerr.CheckFailed {
		t.Fatalf("altered record: %v\n%s", err, out)
	}
	var env struct {
		Items []verify.Report `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &env); err != nil || len(env.Items) != 1 {
		t.Fatalf("%v\n%s", err, out)
	}
	var got *verify.Finding
	for i, f := range env.Items[0].Findings {
		if f.Status == verify.Fail {
			got = &env.Items[0].Findings[i]
		}
	}
	if got == nil || got.Check != verify.CheckFull || got.Topic != "orders" || *got.Partition != 1 || got.TargetOffset == nil || *got.TargetOffset != 20 ||
		!strings.Contains(got.Reason, "1 extra at target offset 20") {
		t.Fatalf("finding %+v\n%s", got, out)
	}
	if d := readJUnitFile(t, junit); !strings.Contains(d, `classname="kmm.verify.full"`) || !strings.Contains(d, "<failure message=\"0 missing, 1 extra") {
		t.Fatalf("junit:\n%s", d)
	}
	for _, o := range []*Options{{Level: "deep"}, {Level: "sample", From: "groups"}, {Level: "full", Topics: "("}} {
		o.File, o.Output = mm2conf.LoadOptions{ConfigFile: props}, "table"
		if _, _, err := run(o); kerr.KindOf(err) != kerr.Usage {
			t.Errorf("%+v: %v, want a usage error", o, err)
		}
	}
}
