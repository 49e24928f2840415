package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/e2e/testbed/app"
)

// TestOutageTruth (issue 34): the emergency path tells the truth. An application writes to A
// while its group reads there and commits after every poll; kmm replicate copies A->B below the
// application's rate (a rate limit, as on a degraded link), so B falls behind. A's broker is
// killed with SIGKILL and `kmm failover --mode emergency` runs. Then:
//   - the RPO it reports is never above the true loss (counted when A returns: A's end minus what
//     B holds) and at least 0.96 of it; its estimate of the most holds the true loss;
//   - on every partition the group lands exactly at min(its committed offset on A, B's end): no
//     needless re-read (the topic is copied 1:1);
//   - after A returns, failback never moves the group on A below its position before the crash,
//     and the stranded records it counts are the true loss.
//
// Both replication policies.
func TestOutageTruth(t *testing.T) {
	for _, pol := range []string{"default", "identity"} {
		t.Run(pol, func(t *testing.T) { outageTruth(t, pol) })
	}
}

func outageTruth(t *testing.T, pol string) {
	bed := testbed.Attach(t)
	al := newAliases()
	topic := testbed.Unique(t, "truth")
	const parts = 2
	bed.A.CreateTopic(t, topic, parts, nil)
	ab, ba := al.A+"->"+al.B, al.B+"->"+al.A
	group := testbed.Unique(t, "tg")
	q := regexp.QuoteMeta(topic)
	lines := []string{ab + ".enabled = true", ab + ".topics = " + q, ba + ".topics = " + q}
	remote := al.A + "." + topic
	if pol == "identity" {
		lines = append(lines, "replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy")
		remote = topic
	}
	props := interopProps(t, bed, al, 2, lines...)
	data, err := os.ReadFile(props)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(props, []byte(strings.Replace(string(data), "groups = "+al.A+"-nogroup", "groups = "+regexp.QuoteMeta(group), 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	// ~25 bytes a record: 100 records/s written, about 20/s copied.
	k := startKMM(t, "replicate", props, "--rate-limit", "500B")
	// The rate limit is the flow's, and A's heartbeats topic (every earlier test's heartbeats:
	// MM2 copies it with every flow) would take it first: wait until that backlog is across.
	hbEnd := endOffsets(t, bed.A, "heartbeats", 1)[0]
	testbed.Eventually(t, 3*time.Minute, func() error {
		if got := endOffsets(t, bed.B, al.A+".heartbeats", 1)[0]; got < hbEnd {
			return fmt.Errorf("%d of A's %d heartbeats copied", got, hbEnd)
		}
		return nil
	})
	prod, err := app.StartProducer(bed.A.Bootstrap, topic, parts, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := app.StartConsumer(bed.A.Bootstrap, group, topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Let the loss grow to thousands of records, so that what the source received in its last
	// second (not known on B) is a small part of it.
	testbed.Eventually(t, 3*time.Minute, func() error {
		a := endOffsets(t, bed.A, topic, parts)
		b := endOffsets(t, bed.B, remote, parts)
		if behind := a[0] + a[1] - b[0] - b[1]; behind < 5000 {
			return fmt.Errorf("B is %d record(s) behind A", behind)
		}
		return nil
	})
	// A's broker dies under load: the producer is writing. (The consumer, which committed after
	// every poll, leaves just before: a member left behind would hold the group on A after A
	// returns, and closing it with A gone can block for minutes.)
	if _, err := cons.Stop(); err != nil {
		t.Fatal(err)
	}
	bed.KillBroker(t, "A")
	restarted := false
	defer func() {
		if !restarted {
			bed.Restart(t, "A")
		}
	}()
	if _, err := prod.Stop(); err != nil {
		t.Logf("producer: %v (A is down)", err)
	}
	r := Run(t, "failover", props, "--flow", ab, "--mode", "emergency", "--group", group, "--timeout", "2m", "--yes", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("emergency failover: exit %d\n%s\n%s\nreplicate:\n%s", r.Code, r.Stdout, r.Stderr, tail(k.Stderr(), 30))
	}
	var env struct {
		Items []struct {
			Partition    int32  `json:"partition"`
			SourceOffset int64  `json:"source_offset"`
			TargetOffset int64  `json:"target_offset"`
			Exact        bool   `json:"exact"`
			Rereads      *int64 `json:"rereads"` // null: not known
			Why          string `json:"why"`
		} `json:"items"`
		RPOMin   int64 `json:"rpo_records_min"`
		RPOMax   int64 `json:"rpo_records_max"`
		RPOAgeMs int64 `json:"rpo_age_ms"`
		RPO      []struct {
			Partition  int32  `json:"partition"`
			SourceEnd  int64  `json:"source_end"`
			How        string `json:"source_end_source"`
			Replicated int64  `json:"replicated"`
		} `json:"rpo"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &env); err != nil || len(env.Items) != parts || len(env.RPO) != parts {
		t.Fatalf("%v\n%s\n%s", err, r.Stdout, r.Stderr)
	}
	if code := k.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Logf("replicate exit %d (it stopped the flow at the mark)", code)
	}
	bEnds := endOffsets(t, bed.B, remote, parts)
	onB := groupOffsetsOn(t, bed.B, group)

	// A returns: its ends and the group's own positions there are the truth.
	bed.Restart(t, "A")
	restarted = true
	aEnds := endOffsets(t, bed.A, topic, parts)
	onA := groupOffsetsOn(t, bed.A, group)
	var trueLoss int64
	for p := 0; p < parts; p++ {
		trueLoss += aEnds[p] - bEnds[p]
	}
	t.Logf("%s: true loss %d (A ends %v, B ends %v); reported RPO %d, at most %d, known as of %d ms; rows %+v", pol, trueLoss, aEnds, bEnds, env.RPOMin, env.RPOMax, env.RPOAgeMs, env.RPO)
	if env.RPOMin > trueLoss || float64(env.RPOMin) < 0.96*float64(trueLoss) {
		t.Errorf("reported RPO %d, true loss %d: must be in [0.96x, 1x] of it", env.RPOMin, trueLoss)
	}
	if env.RPOMax < trueLoss {
		t.Errorf("the estimate of the most, %d, is below the true loss %d", env.RPOMax, trueLoss)
	}
	// No needless re-read: exactly min(the group's position on A, B's end).
	for _, it := range env.Items {
		p := it.Partition
		ca := onA[fmt.Sprintf("%s %s[%d]", group, topic, p)]
		want := min(ca, bEnds[p])
		got := onB[fmt.Sprintf("%s %s[%d]", group, remote, p)]
		if got != want || it.TargetOffset != want {
			t.Errorf("partition %d: committed %d on B (row %+v); the group was at %d on A and B ends at %d: want %d", p, got, it, ca, bEnds[p], want)
		}
		if it.Rereads == nil || *it.Rereads != 0 {
			t.Errorf("partition %d: %s re-read(s) stated, want 0: %s", p, fmtKnown(it.Rereads), it.Why)
		}
	}

	// Failback: the group never goes below its own position on A; the stranded records are
	// the true loss.
	fb := startKMM(t, "failback", props, "--flow", ab, "--group", group, "--stranded", "quarantine", "--quiet-for", "1s", "--timeout", "2m", "--start-reverse", "--yes", "-o", "json")
	select {
	case <-fb.done:
	case <-time.After(4 * time.Minute):
		t.Fatalf("failback did not finish:\n%s", fb.Stderr())
	}
	if code := fb.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("failback: exit %d\n%s\n%s", code, fb.stdout.String(), fb.Stderr())
	}
	var fenv struct {
		Stranded int64 `json:"stranded_records"`
	}
	if err := json.Unmarshal(fb.stdout.Bytes(), &fenv); err != nil {
		t.Fatalf("failback JSON: %v\n%s", err, fb.stdout.String())
	}
	if fenv.Stranded != trueLoss {
		t.Errorf("failback counted %d stranded record(s), the true loss is %d", fenv.Stranded, trueLoss)
	}
	after := groupOffsetsOn(t, bed.A, group)
	for p := 0; p < parts; p++ {
		key := fmt.Sprintf("%s %s[%d]", group, topic, p)
		if after[key] < onA[key] {
			t.Errorf("partition %d: failback moved the group on A from %d back to %d", p, onA[key], after[key])
		}
	}
	t.Logf("%s: group on A before the crash %v, after failback %v", pol, onA, after)
}
