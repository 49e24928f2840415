package lagcmd

import (
	"context"
	"encoding/json"
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
	"github.com/kmmproject/kmm/pkg/lag"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// lag from the clusters: nothing replicated yet, so every record of the selected topic is lag;
// --max-lag makes it a check (exit 3); --flow selects; JSON rows per partition.
func TestLagFromClusters(t *testing.T) {
	a, b := kfakebed.Start(t, "A"), kfakebed.Start(t, "B")
	a.CreateTopic(t, "orders", 2)
	a.CreateTopic(t, "other", 1)
	var recs []cluster.Record
	for i := 0; i < 30; i++ {
		recs = append(recs, cluster.Record{Topic: "orders", Partition: int32(i % 2), Value: []byte("x")}, cluster.Record{Topic: "other", Partition: 0, Value: []byte("y")})
	}
	a.Produce(t, recs)
	props := kfakebed.WriteProps(t, []kfakebed.Cluster{a, b}, "A->B.enabled = true", "A->B.topics = orders")
	run := func(o *Options) (string, string, error) {
		io, _, out, errOut := iostreams.Test()
		err := Run(context.Background(), o, cmdutil.NewTestFactory(io, rdkafka.Opener{}, time.Now))
		return out.String(), errOut.String(), err
	}
	o := &Options{File: mm2conf.LoadOptions{ConfigFile: props}, Output: "json", Flow: flow.Selector{Flow: "A->B"}, Interval: 5 * time.Second}
	out, errOut, err := run(o)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var env struct {
		Items []struct {
			Topic      string `json:"topic"`
			Partition  int32  `json:"partition"`
			LagRecords int64  `json:"lag_records"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &env); err != nil || len(env.Items) != 2 {
		t.Fatalf("%v: %s", err, out)
	}
	for _, r := range env.Items {
		if r.Topic != "orders" || r.LagRecords != 15 {
			t.Errorf("row %+v", r)
		}
	}
	o.Output, o.Thresholds = "table", lag.Thresholds{MaxRecords: 10}
	out, _, err = run(o)
	if kerr.KindOf(err) != kerr.CheckFailed || !strings.Contains(out, "over threshold") || !strings.Contains(out, "not replicated yet") {
		t.Fatalf("threshold: %v\n%s", err, out)
	}
	o.Flow = flow.Selector{Flow: "B->A"}
	if _, _, err := run(o); kerr.KindOf(err) != kerr.Usage {
		t.Fatalf("--flow B->A (heartbeats only at most): %v", err)
	}
}
