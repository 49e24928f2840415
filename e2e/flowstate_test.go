package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/pkg/flowstate"
	"github.com/kmmproject/kmm/pkg/plan"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// readState reads __kmm_state on c: key -> newest value (nil: tombstone).
func readState(t *testing.T, c testbed.Cluster) map[string][]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := plan.ReadState(ctx, c.Open(t))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// markFlow writes a flow state record to c's __kmm_state, as failover does.
func markFlow(t *testing.T, c testbed.Cluster, f *flowstate.FlowRecord) {
	t.Helper()
	v, err := flowstate.Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	src, tgt, _ := strings.Cut(f.Flow, "->")
	c.Produce(t, []rdkafka.Record{{Topic: plan.StateTopic, Partition: 0, Key: []byte(flowstate.FlowKey(src, tgt)), Value: v}})
}

// kmm replicate honours the flow state in __kmm_state: a running process stops a flow within
// 5 s of a mark (final progress stored, lease released, connectors PAUSED with the reason)
// while its other flow goes on; while running it keeps a lease and a source-ends snapshot on
// the target; a new process refuses the marked flow (exit 3, naming kmm failback) unless --force.
func TestReplicateHonoursFlowState(t *testing.T) {
	bed := testbed.Attach(t)
	al := newAliases()
	topic := testbed.Unique(t, "fstate")
	const parts = 2
	bed.A.CreateTopic(t, topic, parts, nil)
	ab, ac := al.A+"->"+al.B, al.A+"->"+al.C
	props := interopProps(t, bed, al, 3, ab+".enabled = true", ab+".topics = "+regexp.QuoteMeta(topic),
		ac+".enabled = true", ac+".topics = "+regexp.QuoteMeta(topic), "emit.checkpoints.enabled = true")
	remote := al.A + "." + topic
	bed.A.Produce(t, seqRecords(topic, parts, 0, 1000))
	k := startKMM(t, "replicate", props, "--listen", "127.0.0.1:0")
	var base string
	addr := regexp.MustCompile(`serving http://(127\.0\.0\.1:\d+)`)
	testbed.Eventually(t, 30*time.Second, func() error {
		if m := addr.FindStringSubmatch(k.Stderr()); m != nil {
			base = "http://" + m[1]
			return nil
		}
		return io.EOF
	})
	waitCount(t, bed.B, remote, parts, 1000, 2*time.Minute)
	waitCount(t, bed.C, remote, parts, 1000, 2*time.Minute)

	// The lease and the source ends snapshot are on B.
	var lease *flowstate.Lease
	testbed.Eventually(t, 20*time.Second, func() error {
		st := readState(t, bed.B)
		ls := flowstate.Leases(st, al.A, al.B)
		ends, err := flowstate.DecodeEnds(st[flowstate.EndsKey(al.A, al.B)])
		if len(ls) != 1 || err != nil || ends == nil {
			return fmt.Errorf("leases %d, ends %v (%v)", len(ls), ends, err)
		}
		if e0, _ := ends.End(topic, 0); e0 != 500 {
			return fmt.Errorf("ends snapshot %v", ends.Ends)
		}
		lease = ls[0]
		return nil
	})
	if !lease.Alive(time.Now()) || lease.Listen != base || lease.PID == 0 {
		t.Fatalf("lease %+v (listen %s)", lease, base)
	}

	// Mark A->B failing over, as failover does: the flow stops within 5 s.
	marked := time.Now()
	markFlow(t, bed.B, &flowstate.FlowRecord{Flow: ab, State: flowstate.FailingOver, Epoch: 1, At: marked, Mode: "planned", By: "test@e2e", RunID: "r-test"})
	stopLine := "stopped: flow " + ab + " marked FAILING_OVER (epoch 1) by test@e2e, run r-test"
	testbed.Eventually(t, 5*time.Second, func() error {
		if !strings.Contains(k.Stderr(), stopLine) {
			return fmt.Errorf("no stop line yet")
		}
		return nil
	})
	t.Logf("flow stopped %s after the mark", time.Since(marked).Round(time.Millisecond))
	// Final progress equals what is on B; the lease is gone; the connectors say PAUSED.
	got := sourcePositions(t, bed.B, al.A, topic)
	ends := endOffsets(t, bed.B, remote, parts)
	for p := 0; p < parts; p++ {
		if got[int32(p)]+1 != ends[p] {
			t.Errorf("partition %d: stored progress %d, target end %d", p, got[int32(p)], ends[p])
		}
	}
	if ls := flowstate.Leases(readState(t, bed.B), al.A, al.B); len(ls) != 0 {
		t.Errorf("lease not released: %+v", ls)
	}
	resp, err := http.Get(base + "/connectors?expand=status")
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]struct {
		Status struct {
			Connector struct{ State, Trace string } `json:"connector"`
		} `json:"status"`
	}
	err = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if c := body[ab+".MirrorSourceConnector"].Status.Connector; c.State != "PAUSED" || !strings.Contains(c.Trace, "FAILING_OVER") {
		t.Errorf("A->B source connector: %+v", c)
	}
	if c := body[ac+".MirrorSourceConnector"].Status.Connector; c.State != "RUNNING" {
		t.Errorf("A->C source connector: %+v", c)
	}
	// New records go to C, not to B.
	bed.A.Produce(t, seqRecords(topic, parts, 1000, 200))
	waitCount(t, bed.C, remote, parts, 1200, time.Minute)
	if now := endOffsets(t, bed.B, remote, parts); now[0] != ends[0] || now[1] != ends[1] {
		t.Errorf("B got records after the mark: %v -> %v", ends, now)
	}
	// kmm status shows the state.
	if r := Run(t, "status", props, "--flow", ab, "-o", "json"); r.Code != 3 || !strings.Contains(r.Stdout, `"dr_state": "FAILING_OVER"`) ||
		!strings.Contains(r.Stdout, "flow is FAILING_OVER") {
		t.Errorf("status of a marked flow: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if code := k.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Fatalf("exit %d\n%s", code, tail(k.Stderr(), 20))
	}

	// A new process refuses the marked flow.
	p := startKMM(t, "replicate", props, "--clusters", al.B)
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("replicate of a marked flow did not refuse within 60 s:\n%s", tail(p.Stderr(), 20))
	}
	// The hint names the commands that work (the reverse copy, failback) and does not offer
	// --force (it would copy A's old records into B, the new primary).
	if code, e := p.cmd.ProcessState.ExitCode(), p.Stderr(); code != 3 || !strings.Contains(e, "FAILING_OVER") ||
		!strings.Contains(e, "kmm failback FILE --flow '"+ab+"'") || !strings.Contains(e, "kmm replicate FILE --flow '"+al.B+"->"+al.A+"'") ||
		!strings.Contains(e, "do not --force") {
		t.Fatalf("replicate of a marked flow: exit %d\n%s", code, e)
	}

	// kmm replicate FILE --flow 'B->A', as the hint says: the file leaves B->A disabled (its
	// topics set); it runs that flow alone, enabled, and copies B's topic to A.
	ba := al.B + "->" + al.A
	props2 := interopProps(t, bed, al, 3, ab+".enabled = true", ab+".topics = "+regexp.QuoteMeta(topic), ba+".topics = "+regexp.QuoteMeta(topic))
	bed.B.CreateTopic(t, topic, 1, nil)
	bed.B.Produce(t, seqRecords(topic, 1, 0, 50))
	rb := startKMM(t, "replicate", props2, "--flow", ba)
	waitCount(t, bed.A, al.B+"."+topic, 1, 50, time.Minute)
	if code := rb.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Fatalf("replicate --flow %s: exit %d\n%s", ba, code, tail(rb.Stderr(), 20))
	}
	if e := rb.Stderr(); !strings.Contains(e, "--flow "+ba+": the file leaves it disabled") || strings.Contains(e, "flow "+ab+" (") {
		t.Fatalf("replicate --flow %s ran what it was not asked to, or did not say it enabled the flow:\n%s", ba, tail(e, 20))
	}
}

// A second kmm replicate of a flow a live process already replicates (no workers mode) exits 3
// naming the first (host, pid, --listen) and kmm.workers.enabled, instead of copying every record
// a second time (issue 35: three processes on one file left 3.5 M duplicates on 3 M records). A
// process of this host killed with SIGKILL leaves a lease that does not hold its successor back.
func TestSecondReplicatorRefused(t *testing.T) {
	bed := testbed.Attach(t)
	al := newAliases()
	topic := testbed.Unique(t, "second")
	bed.A.CreateTopic(t, topic, 2, nil)
	ab := al.A + "->" + al.B
	props := interopProps(t, bed, al, 2, ab+".enabled = true", ab+".topics = "+regexp.QuoteMeta(topic))
	bed.A.Produce(t, seqRecords(topic, 2, 0, 200))
	first := startKMM(t, "replicate", props, "--listen", "127.0.0.1:0")
	waitCount(t, bed.B, al.A+"."+topic, 2, 200, time.Minute)
	testbed.Eventually(t, 20*time.Second, func() error { // its lease is on B
		if len(flowstate.Leases(readState(t, bed.B), al.A, al.B)) == 0 {
			return fmt.Errorf("no lease yet")
		}
		return nil
	})
	began := time.Now()
	second := startKMM(t, "replicate", props)
	select {
	case <-second.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the second replicator did not refuse within 60 s:\n%s", tail(second.Stderr(), 20))
	}
	e := second.Stderr()
	if code := second.cmd.ProcessState.ExitCode(); code != 3 || !strings.Contains(e, "is already replicated by a running kmm replicate") ||
		!strings.Contains(e, fmt.Sprintf("pid %d", first.cmd.Process.Pid)) || !strings.Contains(e, "--listen http://127.0.0.1:") || !strings.Contains(e, "kmm.workers.enabled = true") {
		t.Fatalf("second replicator: exit %d after %s\n%s", code, time.Since(began).Round(time.Second), tail(e, 20))
	}
	t.Logf("the second replicator refused after %s", time.Since(began).Round(100*time.Millisecond))
	// A crash: the first one's lease is still alive, but its process is gone.
	if code := first.stop(t, syscall.SIGKILL, 10*time.Second); code != -1 {
		t.Fatalf("SIGKILL: exit %d", code)
	}
	bed.A.Produce(t, seqRecords(topic, 2, 200, 100))
	third := startKMM(t, "replicate", props)
	waitCount(t, bed.B, al.A+"."+topic, 2, 300, time.Minute)
	if code := third.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Fatalf("the replicator after the crash: exit %d\n%s", code, tail(third.Stderr(), 20))
	}
}
