package e2e

import (
	"encoding/json"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
)

// kmm lag reports records not yet replicated and their age, and its thresholds make a check.
func TestLag(t *testing.T) {
	bed := testbed.Attach(t)
	topic := testbed.Unique(t, "lag")
	bed.A.CreateTopic(t, topic, 2, nil)
	props := writeProps(t, "A->B.enabled = true", "A->B.topics = "+regexp.QuoteMeta(topic))
	bed.A.Produce(t, seqRecords(topic, 2, 0, 300))

	type row struct {
		Topic      string  `json:"topic"`
		Partition  int32   `json:"partition"`
		LagRecords int64   `json:"lag_records"`
		LagSeconds float64 `json:"lag_seconds"`
		Started    bool    `json:"started"`
	}
	lagOf := func(args ...string) (int, map[int32]row, string) {
		r := Run(t, append([]string{"lag", props, "-o", "json", "--topic", topic}, args...)...)
		var env struct {
			Kind  string `json:"kind"`
			Items []row  `json:"items"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &env); err != nil || env.Kind != "lag" {
			t.Fatalf("lag -o json: %v\n%s\n%s", err, r.Stdout, r.Stderr)
		}
		m := map[int32]row{}
		for _, it := range env.Items {
			m[it.Partition] = it
		}
		return r.Code, m, r.Stderr
	}
	time.Sleep(1100 * time.Millisecond) // so the oldest unreplicated record is measurably old
	code, rows, stderr := lagOf("--max-lag", "100", "--max-lag-time", "500ms")
	if code != 3 || rows[0].LagRecords != 150 || rows[1].LagRecords != 150 || rows[0].Started || rows[0].LagSeconds < 1 {
		t.Fatalf("before replication: exit %d rows %+v\n%s", code, rows, stderr)
	}
	if !strings.Contains(stderr, "records behind") || !strings.Contains(stderr, "old") {
		t.Fatalf("no violation text:\n%s", stderr)
	}

	p := startKMM(t, "replicate", props)
	waitCount(t, bed.B, "A."+topic, 2, 300, time.Minute)
	if code := p.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
	code, rows, stderr = lagOf("--max-lag", "0")
	if code != 0 || rows[0].LagRecords != 0 || rows[1].LagRecords != 0 || !rows[0].Started {
		t.Fatalf("after replication: exit %d rows %+v\n%s", code, rows, stderr)
	}
	// Table output names the columns a person reads.
	r := Run(t, "lag", props, "--topic", topic)
	if r.Code != 0 || !strings.Contains(r.Stdout, "LAG TIME") || !strings.Contains(r.Stdout, "A."+topic) {
		t.Fatalf("table: %+v", r)
	}
}
