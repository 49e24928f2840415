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

// Real situations behind `kmm status` reasons: a group active on the target (with group offset
// sync on), records deleted by retention before they were replicated, and the source cluster
// down. Each shows in the text and JSON outputs with exit 3.
func TestStatusReasons(t *testing.T) {
	bed := testbed.Attach(t)
	ctx := context.Background()
	topic, group := testbed.Unique(t, "sr"), testbed.Unique(t, "g")
	bed.A.CreateTopic(t, topic, 1, nil)
	bed.A.Produce(t, seqRecords(topic, 1, 0, 100))
	props := writeProps(t, "clusters = A, B", "A->B.enabled = true", "A->B.topics = "+regexp.QuoteMeta(topic),
		"A->B.groups = "+regexp.QuoteMeta(group), "A->B.sync.group.offsets.enabled = true", "A->B.sync.group.offsets.interval.seconds = 1")
	p := startKMM(t, "replicate", props)
	remote := "A." + topic
	waitCount(t, bed.B, remote, 1, 100, time.Minute)
	if err := bed.A.Admin(t).AlterGroupOffsets(ctx, group, map[rdkafka.TP]rdkafka.OffsetMeta{{Topic: topic}: {Offset: 100}}); err != nil {
		t.Fatal(err)
	}
	status := func(wantIn string) (string, string) {
		t.Helper()
		var text, js string
		testbed.Eventually(t, 40*time.Second, func() error {
			r := Run(t, "status", props, "-o", "json")
			js = r.Stdout
			var env struct {
				Items []struct {
					Flow    string   `json:"flow"`
					State   string   `json:"state"`
					Reasons []string `json:"reasons"`
				} `json:"items"`
			}
			if err := json.Unmarshal([]byte(r.Stdout), &env); err != nil {
				return err
			}
			for _, it := range env.Items {
				if it.Flow == "A->B" && it.State != "OK" && strings.Contains(strings.Join(it.Reasons, "|"), wantIn) && r.Code == 3 {
					tr := Run(t, "status", props)
					text = tr.Stdout
					if tr.Code != 3 || !strings.Contains(text, wantIn) {
						return fmt.Errorf("text output (exit %d) lacks %q:\n%s", tr.Code, wantIn, text)
					}
					return nil
				}
			}
			return fmt.Errorf("no A->B reason %q yet (exit %d): %s", wantIn, r.Code, r.Stdout)
		})
		return text, js
	}

	// A consumer of the group on B: its offsets cannot be synced, and status says so.
	cons, err := rdkafka.NewConsumer("B", rdkafka.Config{"bootstrap.servers": bed.B.Bootstrap, "group.id": group, "session.timeout.ms": "10000"})
	if err != nil {
		t.Fatal(err)
	}
	if err := cons.Subscribe(remote); err != nil {
		t.Fatal(err)
	}
	stopPolling, polled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(polled)
		for {
			select {
			case <-stopPolling:
				return
			default:
				_, _ = cons.Poll(ctx, 10, 100*time.Millisecond)
			}
		}
	}()
	status("group " + group + " is active on B")
	close(stopPolling)
	<-polled // never Close a librdkafka consumer while another goroutine is inside Poll
	cons.Close()

	// Records deleted on A before kmm copied them.
	if code := p.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
	bed.A.Produce(t, seqRecords(topic, 1, 100, 100))
	if err := bed.A.Admin(t).DeleteRecords(ctx, rdkafka.TP{Topic: topic}, 150); err != nil {
		t.Fatal(err)
	}
	status("lost 50 record(s) to retention on A")

	// The source cluster down: status answers from what B knows.
	testbed.Script(t, "down", "A")
	defer testbed.Script(t, "up", "A")
	r := Run(t, "status", props, "-o", "json")
	if r.Code != 3 || !strings.Contains(r.Stdout, `"state": "DOWN"`) || !strings.Contains(r.Stdout, "source cluster A ("+bed.A.Bootstrap+") is unreachable") ||
		!strings.Contains(r.Stdout, "B last stored progress") {
		t.Fatalf("source down: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
}
