package statuscmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed/kfakebed"
	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/kerr"
)

type statusJSON struct {
	Items []struct {
		Flow    string   `json:"flow"`
		State   string   `json:"state"`
		Reasons []string `json:"reasons"`
	} `json:"items"`
}

func runStatus(t *testing.T, o *Options) (statusJSON, string, error) {
	t.Helper()
	io, _, out, errOut := iostreams.Test()
	// A cluster that does not answer is given 2 s (kmm waits 10 s): it answers nothing either way.
	fac := cmdutil.NewTestFactory(io, kfakebed.PingWithin(2*time.Second), time.Now)
	err := Run(context.Background(), o, fac)
	var st statusJSON
	if o.Output == "json" && kerr.KindOf(err) != kerr.Usage {
		if jerr := json.Unmarshal(out.Bytes(), &st); jerr != nil {
			t.Fatalf("%v: %s\n%s", jerr, out, errOut)
		}
	}
	return st, out.String() + errOut.String(), err
}

// status from the clusters: a flow whose target does not answer is DOWN, with the reason in
// words; --flow picks one flow; exit 3 when a flow is not OK.
func TestStatusFlowSelectionAndDown(t *testing.T) {
	a, b, c := kfakebed.Start(t, "A"), kfakebed.Start(t, "B"), kfakebed.Down(t, "C")
	props := kfakebed.WriteProps(t, []kfakebed.Cluster{a, b, c}, "A->B.enabled = true", "A->C.enabled = true", "A->B.topics = orders", "A->C.topics = orders",
		"emit.heartbeats.enabled = false")
	o := &Options{File: mm2conf.LoadOptions{ConfigFile: props}, Output: "json"}

	// Every flow (one DOWN run: a cluster that does not answer costs the ping bound).
	st, text, err := runStatus(t, o)
	if kerr.KindOf(err) != kerr.CheckFailed || len(st.Items) < 2 {
		t.Fatalf("all flows: %v %+v\n%s", err, st, text)
	}
	states := map[string]string{}
	for _, it := range st.Items {
		states[it.Flow] = it.State
		if it.Flow == "A->C" && !strings.Contains(strings.Join(it.Reasons, "\n"), "C") {
			t.Fatalf("reasons do not name the target: %v", it.Reasons)
		}
	}
	if states["A->C"] != "DOWN" || states["A->B"] == "DOWN" || states["A->B"] == "" {
		t.Fatalf("states %v\n%s", states, text)
	}
	o.Flow, o.Output = flow.Selector{Flow: "A->B"}, "table"
	_, text, _ = runStatus(t, o)
	if !strings.Contains(text, "A->B") || strings.Contains(text, "A->C") {
		t.Fatalf("--flow A->B:\n%s", text)
	}
	o.Flow = flow.Selector{Flow: "B->C"}
	if _, _, err := runStatus(t, o); kerr.KindOf(err) != kerr.Usage {
		t.Fatalf("--flow B->C: %v", err)
	}
}
