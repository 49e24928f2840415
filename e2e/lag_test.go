package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/pkg/rdkafka"
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
	code, rows, stderr := lagOf("--max-lag-records", "100", "--max-lag-time", "500ms")
	if code != 3 || rows[0].LagRecords != 150 || rows[1].LagRecords != 150 || rows[0].Started || rows[0].LagSeconds < 1 {
		t.Fatalf("before replication: exit %d rows %+v\n%s", code, rows, stderr)
	}
	if !strings.Contains(stderr, "records behind") || !strings.Contains(stderr, "old") {
		t.Fatalf("no violation text:\n%s", stderr)
	}

	group := testbed.Unique(t, "g")
	if err := bed.A.Admin(t).AlterGroupOffsets(context.Background(), group, map[rdkafka.TP]rdkafka.OffsetMeta{{Topic: topic}: {Offset: 100}}); err != nil {
		t.Fatal(err)
	}
	p := startKMM(t, "replicate", props)
	waitCount(t, bed.B, "A."+topic, 2, 300, time.Minute)
	if code := p.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
	code, rows, stderr = lagOf("--max-lag-records", "0")
	if code != 0 || rows[0].LagRecords != 0 || rows[1].LagRecords != 0 || !rows[0].Started {
		t.Fatalf("after replication: exit %d rows %+v\n%s", code, rows, stderr)
	}
	// Per group: lag on both sides and what a failover now would cost.
	type grow struct { // the figures are null when not known
		Group       string `json:"group"`
		Partition   int32  `json:"partition"`
		LagOnSource *int64 `json:"lag_on_source"`
		LagOnTarget *int64 `json:"lag_on_target"`
		Reread      *int64 `json:"failover_would_reread"`
		Miss        *int64 `json:"failover_could_miss"`
	}
	val := func(p *int64) int64 {
		if p == nil {
			return -1
		}
		return *p
	}
	var g0 grow
	testbed.Eventually(t, 30*time.Second, func() error {
		r := Run(t, "lag", props, "-o", "json", "--topic", topic, "--group", group)
		var env struct {
			Groups []grow `json:"groups"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &env); err != nil {
			return err
		}
		for _, g := range env.Groups {
			if g.Group == group && g.Partition == 0 && g.LagOnTarget != nil {
				g0 = g
				return nil
			}
		}
		return fmt.Errorf("no translated row for %s yet: %s", group, r.Stdout)
	})
	if val(g0.LagOnSource) != 50 || val(g0.Miss) != 0 || g0.Reread == nil || val(g0.LagOnTarget) != 50+*g0.Reread {
		t.Fatalf("group row: lag on source %d, on target %d, re-read %d, could miss %d (-1: null)", val(g0.LagOnSource), val(g0.LagOnTarget), val(g0.Reread), val(g0.Miss))
	}
	// Table output names the columns a person reads.
	r := Run(t, "lag", props, "--topic", topic)
	if r.Code != 0 || !strings.Contains(r.Stdout, "LAG TIME") || !strings.Contains(r.Stdout, "A."+topic) {
		t.Fatalf("table: %+v", r)
	}
}
