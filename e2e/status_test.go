package e2e

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// kmm status says OK while replicate runs, and DEGRADED with the reason once it stopped.
func TestStatus(t *testing.T) {
	bed := testbed.Attach(t)
	topic := testbed.Unique(t, "st")
	bed.A.CreateTopic(t, topic, 2, nil)
	bed.A.Produce(t, seqRecords(topic, 2, 0, 200))
	props := writeProps(t, "clusters = A, B", "A->B.enabled = true", "A->B.topics = "+regexp.QuoteMeta(topic))
	p := startKMM(t, "replicate", props)
	waitCount(t, bed.B, "A."+topic, 2, 200, time.Minute)
	type rep struct {
		Flow    string   `json:"flow"`
		State   string   `json:"state"`
		Reasons []string `json:"reasons"`
		Matched int      `json:"topics_matched"`
		Lag     int64    `json:"lag_records"`
		// CheckpointAge is the age of the newest checkpoint (-1 none).
		CheckpointAge int64 `json:"checkpoint_age_ms"`
	}
	status := func(args ...string) (int, map[string]rep, string) {
		r := Run(t, append([]string{"status", props, "-o", "json"}, args...)...)
		var env struct {
			Items []rep `json:"items"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &env); err != nil {
			t.Fatalf("status -o json: %v\n%s\n%s", err, r.Stdout, r.Stderr)
		}
		m := map[string]rep{}
		for _, it := range env.Items {
			m[it.Flow] = it
		}
		return r.Code, m, r.Stdout
	}
	testbed.Eventually(t, 30*time.Second, func() error {
		code, m, out := status()
		if code != 0 || m["A->B"].State != "OK" || m["B->A"].State != "OK" || m["A->B"].Matched < 2 /* the topic and the heartbeats topic (and any X.heartbeats other tests left on A, which MM2 copies too) */ || m["A->B"].Lag != 0 {
			return &statusErr{out}
		}
		return nil
	})
	// A group with a checkpoint on B.
	group := testbed.Unique(t, "g")
	commitA := func(off int64) {
		if err := bed.A.Admin(t).AlterGroupOffsets(context.Background(), group, map[rdkafka.TP]rdkafka.OffsetMeta{{Topic: topic}: {Offset: off}}); err != nil {
			t.Fatal(err)
		}
	}
	commitA(100)
	testbed.Eventually(t, 30*time.Second, func() error {
		_, m, out := status()
		if m["A->B"].CheckpointAge < 0 {
			return &statusErr{out}
		}
		return nil
	})
	if code := p.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
	commitA(150) // the group moves on while nothing checkpoints it
	bed.A.Produce(t, seqRecords(topic, 2, 200, 50))
	time.Sleep(2 * time.Second)
	code, m, out := status("--max-heartbeat-age", "1s", "--max-progress-age", "1s", "--max-checkpoint-age", "1s")
	if code != 3 || m["A->B"].State != "DEGRADED" || m["A->B"].Lag < 50 {
		t.Fatalf("after stop: exit %d %s", code, out)
	}
	joined := strings.Join(m["A->B"].Reasons, "|")
	if !strings.Contains(joined, "no heartbeat from A->B") || !strings.Contains(joined, "record(s) wait") || !strings.Contains(joined, "checkpoints for group "+group) {
		t.Fatalf("reasons: %q", m["A->B"].Reasons)
	}
	r := Run(t, "status", props, "--max-heartbeat-age", "1s")
	if r.Code != 3 || !strings.Contains(r.Stdout, "DEGRADED") || !strings.Contains(r.Stdout, "A->B: no heartbeat") {
		t.Fatalf("table: %+v", r)
	}
}

type statusErr struct{ out string }

func (e *statusErr) Error() string { return "status not OK yet: " + e.out }
