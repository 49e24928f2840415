package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// `kmm replicate --listen` serves Prometheus metrics and the Connect-style status the tutorial
// curls; a non-loopback address is refused with exit 2.
func TestReplicateListen(t *testing.T) {
	bed := testbed.Attach(t)
	topic := testbed.Unique(t, "http")
	bed.A.CreateTopic(t, topic, 1, nil)
	bed.A.Produce(t, seqRecords(topic, 1, 0, 250))
	props := writeProps(t, "clusters = A, B", "A->B.enabled = true", "A->B.topics = "+regexp.QuoteMeta(topic))
	p := startKMM(t, "replicate", props, "--listen", "127.0.0.1:0")
	var base string
	addr := regexp.MustCompile(`serving http://(127\.0\.0\.1:\d+)`)
	testbed.Eventually(t, 30*time.Second, func() error {
		if m := addr.FindStringSubmatch(p.Stderr()); m != nil {
			base = "http://" + m[1]
			return nil
		}
		return io.EOF
	})
	waitCount(t, bed.B, "A."+topic, 1, 250, time.Minute)
	get := func(path string) string {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	testbed.Eventually(t, 20*time.Second, func() error {
		m := get("/metrics")
		want := `kmm_mirror_source_record_count_total{partition="0",source="A",target="B",topic="A.` + topic + `"} 250`
		if !strings.Contains(m, want) {
			return io.ErrUnexpectedEOF
		}
		return nil
	})
	// Checkpoint, heartbeat and offset-sync metrics.
	group := testbed.Unique(t, "g")
	if err := bed.A.Admin(t).AlterGroupOffsets(context.Background(), group, map[rdkafka.TP]rdkafka.OffsetMeta{{Topic: topic}: {Offset: 250}}); err != nil {
		t.Fatal(err)
	}
	testbed.Eventually(t, 20*time.Second, func() error {
		m := get("/metrics")
		for _, want := range []string{`kmm_checkpoint_age_seconds{group="` + group + `",source="A",target="B"}`, "kmm_mirror_heartbeat_count_total{",
			"kmm_mirror_offset_sync_count_total{", "kmm_rdkafka_broker_rtt_avg_seconds{", "kmm_rdkafka_producer_queue_messages{"} {
			if !strings.Contains(m, want) {
				return fmt.Errorf("no %s in /metrics", want)
			}
		}
		return nil
	})
	if s := get("/connectors/A->B.MirrorCheckpointConnector/status"); !strings.Contains(s, `"state":"RUNNING"`) {
		t.Fatalf("checkpoint connector status: %s", s)
	}
	if s := get("/connectors"); !strings.Contains(s, "A->B.MirrorSourceConnector") {
		t.Fatalf("/connectors: %s", s)
	}
	if s := get("/connectors/A->B.MirrorSourceConnector/status"); !strings.Contains(s, `"state":"RUNNING"`) {
		t.Fatalf("status: %s", s)
	}
	// kmm status asks the running replicate too.
	testbed.Eventually(t, 30*time.Second, func() error {
		r := Run(t, "status", props, "--endpoint", base)
		if r.Code != 0 || strings.Contains(r.Stdout, "DEGRADED") {
			return fmt.Errorf("status --endpoint: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
		return nil
	})
	if code := p.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if r := Run(t, "status", props, "--endpoint", base); r.Code != 3 || !strings.Contains(r.Stdout, "replicate endpoint "+base) {
		t.Fatalf("status with the endpoint gone: exit %d\n%s", r.Code, r.Stdout)
	}
	r := Run(t, "replicate", props, "--listen", "0.0.0.0:18083")
	if r.Code != 2 || !strings.Contains(r.Stderr, "--listen-allow-remote") {
		t.Fatalf("non-loopback listen: exit %d\n%s", r.Code, r.Stderr)
	}
}
