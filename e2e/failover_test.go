package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/e2e/testbed/app"
	"github.com/kmmproject/kmm/pkg/flowstate"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// Planned failover, with both replication policies: an application writes to A and two groups
// read it there (one caught up, one far behind) while kmm replicate copies A->B. The writers and
// the consumers stop, `kmm failover --mode planned` runs, and the same groups resume on B: every
// sequence number is seen exactly once across A then B (0 lost, 0 re-read); the running
// replicate stopped the flow; the flow is FAILED_OVER with the cut; a second failover refuses.
func TestFailoverPlanned(t *testing.T) {
	for _, pol := range []string{"default", "identity"} {
		t.Run(pol, func(t *testing.T) { failoverPlanned(t, pol) })
	}
}

func failoverPlanned(t *testing.T, pol string) {
	bed := testbed.Attach(t)
	al := newAliases()
	topic := testbed.Unique(t, "fo")
	const parts = 3
	bed.A.CreateTopic(t, topic, parts, nil)
	ab := al.A + "->" + al.B
	lines := []string{ab + ".enabled = true", ab + ".topics = " + regexp.QuoteMeta(topic)}
	remote := al.A + "." + topic
	if pol == "identity" {
		lines = append(lines, "replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy")
		remote = topic
	}
	props := interopProps(t, bed, al, 2, lines...)
	k := startKMM(t, "replicate", props)

	prod, err := app.StartProducer(bed.A.Bootstrap, topic, parts, 1500, 0)
	if err != nil {
		t.Fatal(err)
	}
	caught, behind := testbed.Unique(t, "caught"), testbed.Unique(t, "behind")
	cA, err := app.StartConsumer(bed.A.Bootstrap, caught, topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	bA, err := app.StartConsumer(bed.A.Bootstrap, behind, topic, 1000)
	if err != nil {
		t.Fatal(err)
	}
	testbed.Eventually(t, time.Minute, func() error {
		if n := prod.Produced(); n < 12000 || bA.Read() < 1000 {
			return fmt.Errorf("produced %d, behind group read %d", n, bA.Read())
		}
		return nil
	})
	// The cut-over: writers stop, then the consumers (the caught-up one after reading everything).
	n, err := prod.Stop()
	if err != nil {
		t.Fatal(err)
	}
	testbed.Eventually(t, time.Minute, func() error {
		if r := cA.Read(); r < n {
			return fmt.Errorf("caught-up group read %d of %d", r, n)
		}
		return nil
	})
	seenCA, err := cA.Stop()
	if err != nil {
		t.Fatal(err)
	}
	seenBA, err := bA.Stop()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d records written on A; caught-up group read %d, behind group read %d", pol, n, len(seenCA), len(seenBA))

	// Everything replicated before the rehearsal (planned mode drains; a rehearsal measures now).
	waitCount(t, bed.B, remote, parts, int(n), 2*time.Minute)
	dir := t.TempDir()
	rargs := []string{"--mode", "rehearse", "--flow", ab, "--group", caught, "--group", behind}
	rehearsalMD := filepath.Join(dir, "rehearsal.md")
	if pol == "identity" { // the rehearsal from a drill file, which names its report
		drill := filepath.Join(dir, "drill.toml")
		if err := os.WriteFile(drill, []byte(fmt.Sprintf("flow = %q\nmode = \"rehearse\"\ngroups = [%q, %q]\nreport = %q\n", ab, caught, behind, rehearsalMD)), 0o600); err != nil {
			t.Fatal(err)
		}
		rargs = []string{"--drill", drill}
	}
	rh := rehearseBeforePlanned(t, bed, al, props, []string{caught, behind}, pol == "default", rargs...)
	if pol == "identity" {
		md, err := os.ReadFile(rehearsalMD)
		if err != nil {
			t.Fatalf("the drill's report: %v", err)
		}
		if !strings.Contains(string(md), "# kmm failover report: "+ab+" (rehearse)") || strings.Count(string(md), "| kmm-rehearse.") != len(rh.Checks) {
			t.Errorf("the rehearsal's report:\n%s", md)
		}
	}
	plannedMD := filepath.Join(dir, "failover.md")

	// Config drift the preflight reports (not refuses): a retention set on A after replicate's
	// config sync (every 600 s) copied the topic's configs.
	if err := bed.A.Admin(t).IncrementalAlterTopicConfigs(context.Background(), map[string][]rdkafka.ConfigOp{
		topic: {{Name: "retention.ms", Value: "86400000"}}}); err != nil {
		t.Fatal(err)
	}
	r := Run(t, "failover", props, "--flow", ab, "--mode", "planned", "--group", caught, "--group", behind,
		"--fence", "none", "--quiet-for", "2s", "--timeout", "2m", "--report", plannedMD, "--yes", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("failover: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	var env struct {
		Items []translation `json:"items"`
		RTO   int64         `json:"rto_ms"`
		Run   struct {
			ID string `json:"run_id"`
		} `json:"report"`
		Plan struct {
			Notes []string `json:"notes"`
		} `json:"plan"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &env); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	drift := false
	for _, n := range env.Plan.Notes {
		drift = drift || (strings.HasPrefix(n, "drift (configs") && strings.Contains(n, "retention.ms=86400000 on the source"))
	}
	if !drift {
		t.Errorf("the plan's notes do not report the retention.ms drift: %q", env.Plan.Notes)
	}
	if len(env.Items) != 2*parts {
		t.Fatalf("translations: %+v", env.Items)
	}
	for _, it := range env.Items {
		if !it.Exact || it.Rereads != 0 {
			t.Errorf("not exact: %+v", it)
		}
	}
	t.Logf("%s: failover RTO %d ms\n%s", pol, env.RTO, tail(r.Stderr, 15))
	// The evidence report holds the JSON report's numbers.
	md, err := os.ReadFile(plannedMD)
	if err != nil {
		t.Fatalf("--report: %v", err)
	}
	want := []string{"# kmm failover report: " + ab + " (planned)", fmt.Sprintf("| RTO | %d ms", env.RTO), "| Run | " + env.Run.ID + " (done) |", "| RPO | 0 record(s)"}
	for _, it := range env.Items {
		want = append(want, fmt.Sprintf("| %s | %s | %d | %s | %d | %d | exact | 0 | 0 |", it.Group, it.Topic, it.Partition, it.RemoteTopic, it.SourceOffset, it.TargetOffset))
	}
	for _, w := range want {
		if !strings.Contains(string(md), w) {
			t.Errorf("the report lacks %q:\n%s", w, md)
		}
	}
	// The running replicate stopped the flow.
	if !strings.Contains(k.Stderr(), "stopped: flow "+ab+" marked FAILING_OVER") {
		t.Errorf("the running replicate did not stop the flow:\n%s", tail(k.Stderr(), 20))
	}
	st, err := flowstate.DecodeFlow(readState(t, bed.B)[flowstate.FlowKey(al.A, al.B)])
	if err != nil || st == nil || st.State != flowstate.FailedOver || st.Epoch != 2 || len(st.Cut) != parts || st.RunID == "" {
		t.Fatalf("flow state on B: %+v (%v)", st, err)
	}
	matchRehearsal(t, rh, env.Items, st.Cut)
	if stA, _ := flowstate.DecodeFlow(readState(t, bed.A)[flowstate.FlowKey(al.A, al.B)]); stA == nil || stA.Epoch != 2 {
		t.Errorf("flow state copy on A: %+v", stA)
	}

	// The groups resume on B: exactly once across A then B.
	cB, err := app.StartConsumer(bed.B.Bootstrap, caught, remote, 0)
	if err != nil {
		t.Fatal(err)
	}
	bB, err := app.StartConsumer(bed.B.Bootstrap, behind, remote, 0)
	if err != nil {
		t.Fatal(err)
	}
	testbed.Eventually(t, 2*time.Minute, func() error {
		if got := int64(len(seenBA)) + bB.Read(); got < n {
			return fmt.Errorf("behind group: %d of %d", got, n)
		}
		return nil
	})
	time.Sleep(2 * time.Second) // anything read twice would arrive now (bounded: one poll cycle)
	seenCB, err := cB.Stop()
	if err != nil {
		t.Fatal(err)
	}
	seenBB, err := bB.Stop()
	if err != nil {
		t.Fatal(err)
	}
	for name, obs := range map[string][]map[int64]int{caught: {seenCA, seenCB}, behind: {seenBA, seenBB}} {
		lost, dup := app.Check(n, obs...)
		if len(lost) > 0 || len(dup) > 0 {
			t.Errorf("group %s across A then B: %d lost (first %v), %d read twice (first %v)", name, len(lost), lost[:min(5, len(lost))], len(dup), dup[:min(5, len(dup))])
		}
	}
	t.Logf("%s: caught-up group read %d on B, behind group read %d on B", pol, len(seenCB), len(seenBB))

	// A second failover refuses: the flow is already failed over.
	if r := Run(t, "failover", props, "--flow", ab, "--mode", "planned", "--yes"); r.Code != 3 || !strings.Contains(r.Stderr, "already FAILED_OVER") {
		t.Errorf("second failover: exit %d\n%s", r.Code, r.Stderr)
	}
	if code := k.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Errorf("replicate exit %d", code)
	}
}
