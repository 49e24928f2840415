package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/pkg/rdkafka"
	"github.com/kmmproject/kmm/scripts/wanlink"
)

// wanLink starts the WAN profile's toxiproxy link in front of cluster c's PROXIED listener with
// oneWay latency each direction (scripts/testbed.sh, scripts/wanlink) and returns the address
// clients bootstrap on.
func wanLink(t *testing.T, c string, oneWay time.Duration) *wanlink.Link {
	t.Helper()
	testbed.Attach(t)
	l, err := wanlink.Start(c, oneWay)
	if err != nil {
		t.Fatalf("WAN link in front of %s: %v (is the bed's PROXIED listener there? restart the bed after updating scripts/testbed.sh)", c, err)
	}
	t.Cleanup(l.Close)
	conn, err := net.DialTimeout("tcp", l.Upstream, 5*time.Second)
	if err != nil {
		t.Fatalf("cluster %s has no PROXIED listener on %s (%v): the bed predates it; restart it (scripts/testbed.sh down && scripts/testbed.sh up)", c, l.Upstream, err)
	}
	_ = conn.Close()
	return l
}

// wanProps is writeProps with B reached through link only.
func wanProps(t *testing.T, link *wanlink.Link, lines ...string) string {
	t.Helper()
	props := writeProps(t, lines...)
	b, err := os.ReadFile(props)
	if err != nil {
		t.Fatal(err)
	}
	bed := testbed.Attach(t)
	text := strings.Replace(string(b), "B.bootstrap.servers = "+bed.B.Bootstrap, "B.bootstrap.servers = "+link.Listen, 1)
	if err := os.WriteFile(props, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return props
}

// waitSettled waits until topic on c holds at least n records and its total stopped growing
// for 3 s (a copy with duplicates reaches n before its last records arrive).
func waitSettled(t *testing.T, c testbed.Cluster, topic string, parts, n int, timeout time.Duration) {
	t.Helper()
	waitCount(t, c, topic, parts, n, timeout)
	a := c.Admin(t)
	var tps []rdkafka.TP
	for p := 0; p < parts; p++ {
		tps = append(tps, rdkafka.TP{Topic: topic, Partition: int32(p)})
	}
	last, since := -1, time.Now()
	testbed.Eventually(t, timeout, func() error {
		ends, err := a.ListOffsets(context.Background(), tps, rdkafka.Latest)
		if err != nil {
			return err
		}
		total := 0
		for _, e := range ends {
			total += int(e.Offset)
		}
		if total != last {
			last, since = total, time.Now()
		}
		if time.Since(since) < 3*time.Second {
			return fmt.Errorf("%s on %s still growing (%d records)", topic, c.Name, total)
		}
		return nil
	})
}

// TestWANLinkRTTShown: with 50 ms added each way in front of B, `kmm replicate`'s /metrics and
// `kmm lag --endpoint` show B's round trip at about 100 ms, and A's (no link) far below it.
func TestWANLinkRTTShown(t *testing.T) {
	bed := testbed.Attach(t)
	link := wanLink(t, "B", 50*time.Millisecond)
	topic := testbed.Unique(t, "wanrtt")
	bed.A.CreateTopic(t, topic, 2, nil)
	bed.A.Produce(t, seqRecords(topic, 2, 0, 1000))
	props := wanProps(t, link, "A->B.enabled = true", "A->B.topics = "+regexp.QuoteMeta(topic))
	p := startKMM(t, "replicate", props, "--listen", "127.0.0.1:0", "--progress-interval", "5s")
	base := listenBase(t, p)
	waitCount(t, bed.B, "A."+topic, 2, 1000, 90*time.Second)
	// The target measured 100+ ms away before the pipelines started: their producer queues are
	// sized for the link (flow.WANRTT; 12 MB with librdkafka's batch.size), not the budget's
	// 12 MiB, and the prefetch queue (24 MiB, 8 MiB fetches) spreads its fetches over the partitions.
	// (On a loaded machine the bed's A can measure 20+ ms away too: then A's note carries the
	// prefetch queues and B's the producer queues alone.)
	if m := regexp.MustCompile(`B is (\d+)ms away: producer queues of (\d+) KiB(?: and prefetch queues of (\d+) KiB)?`).FindStringSubmatch(p.Stderr()); m == nil || m[2] != "11718" ||
		(m[3] != "24576" && !regexp.MustCompile(`A is \d+ms away: prefetch queues of 24576 KiB`).MatchString(p.Stderr())) {
		t.Errorf("replicate does not say it sized the producer and prefetch queues for the link (want 11718 and 24576 KiB):\n%s", tail(p.Stderr(), 10))
	} else if ms, _ := strconv.Atoi(m[1]); ms < 95 {
		t.Errorf("B measured %s ms away at start; the link adds 100 ms", m[1])
	}

	var rttA, rttB, p99B float64
	testbed.Eventually(t, 60*time.Second, func() error {
		var err error
		if rttB, err = metricValue(base, `kmm_cluster_rtt_avg_seconds{cluster="B"}`); err != nil {
			return err
		}
		if p99B, err = metricValue(base, `kmm_cluster_rtt_p99_seconds{cluster="B"}`); err != nil {
			return err
		}
		if rttA, err = metricValue(base, `kmm_cluster_rtt_avg_seconds{cluster="A"}`); err != nil {
			return err
		}
		return nil
	})
	t.Logf("/metrics: A avg %.1f ms; B avg %.1f ms, p99 %.1f ms", rttA*1000, rttB*1000, p99B*1000)
	if rttB < 0.095 || p99B < rttB {
		t.Fatalf("B's round trip shown as avg %.1f ms, p99 %.1f ms; the link adds 100 ms", rttB*1000, p99B*1000)
	}
	if rttA >= rttB/2 {
		t.Fatalf("A's round trip %.1f ms is not far below B's %.1f ms: the figure is not per cluster", rttA*1000, rttB*1000)
	}

	r := Run(t, "lag", props, "--clusters", "B", "--endpoint", base, "-o", "json")
	if r.Code != 0 {
		t.Fatalf("kmm lag: exit %d\n%s", r.Code, r.Stderr)
	}
	var env struct {
		Links []struct {
			Cluster    string  `json:"cluster"`
			AvgMs      float64 `json:"rtt_avg_ms"`
			P99Ms      float64 `json:"rtt_p99_ms"`
			MeasuredBy string  `json:"measured_by"`
		} `json:"links"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &env); err != nil {
		t.Fatalf("kmm lag -o json: %v\n%s", err, r.Stdout)
	}
	got := map[string]float64{}
	for _, l := range env.Links {
		got[l.Cluster] = l.AvgMs
		if l.MeasuredBy != base {
			t.Errorf("link %s measured by %q, want %q", l.Cluster, l.MeasuredBy, base)
		}
	}
	if got["B"] < 95 || got["A"] >= got["B"]/2 {
		t.Fatalf("kmm lag links: %+v; want B >= 95 ms and A far below", env.Links)
	}
	r = Run(t, "lag", props, "--clusters", "B", "--endpoint", base)
	if r.Code != 0 || !strings.Contains(r.Stdout, "LINK RTT AVG") || !regexp.MustCompile(`(?m)^B\s+\d{3}\.\d ms`).MatchString(r.Stdout) {
		t.Fatalf("kmm lag table without B's link round trip (exit %d):\n%s", r.Code, r.Stdout)
	}
	if code := p.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// TestWANReplicateKill9: replicating to B across a 100 ms round trip (50 ms each way), kmm
// replicate is killed with SIGKILL mid-copy and restarted: every record arrives, in order.
func TestWANReplicateKill9(t *testing.T) {
	bed := testbed.Attach(t)
	link := wanLink(t, "B", 50*time.Millisecond)
	topic := testbed.Unique(t, "wank9")
	const parts, total = 4, 60_000
	bed.A.CreateTopic(t, topic, parts, nil)
	props := wanProps(t, link, "A->B.enabled = true", "A->B.topics = "+regexp.QuoteMeta(topic), "tasks.max = 2")
	remote := "A." + topic

	produced := make(chan struct{})
	go func() {
		defer close(produced)
		for i := 0; i < 6; i++ {
			bed.A.Produce(t, seqRecords(topic, parts, i*total/6, total/6))
			time.Sleep(300 * time.Millisecond)
		}
	}()
	p := startKMM(t, "replicate", props, "--progress-interval", "1s")
	waitCount(t, bed.B, remote, parts, total/10, 90*time.Second) // copying across the link
	if code := p.stop(t, syscall.SIGKILL, 10*time.Second); code != -1 {
		t.Fatalf("SIGKILL: exit %d", code)
	}
	<-produced
	p = startKMM(t, "replicate", props, "--progress-interval", "1s")
	// The restarted flow must be running before B's count can say it is done: the killed run
	// may have written every record already (unacknowledged: they are copied again).
	testbed.Eventually(t, 90*time.Second, func() error {
		for _, l := range strings.Split(p.Stderr(), "\n") {
			if strings.Contains(l, "flow started: ") && strings.Contains(l, "flow=A->B") && !strings.Contains(l, "heartbeats only") {
				return nil
			}
		}
		return fmt.Errorf("the restarted kmm has not started flow A->B yet")
	})
	waitSettled(t, bed.B, remote, parts, total, 2*time.Minute)
	if code := p.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Fatalf("graceful stop: exit %d", code)
	}
	lost, dups := audit(t, bed.B, remote, parts, total)
	t.Logf("WAN (+%s each way), kill -9 once: %d records, %d lost, %d duplicates", link.OneWay(), total, lost, dups)
	if lost != 0 {
		t.Fatalf("%d records lost", lost)
	}
}
