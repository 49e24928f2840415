//go:build cgo

package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/httpapi"
	"github.com/kmmproject/kmm/pkg/policy"
	"github.com/kmmproject/kmm/pkg/rdkafka"
	"github.com/kmmproject/kmm/pkg/replicator"
	"github.com/kmmproject/kmm/pkg/replicator/replsource"
)

func realFlow(src, tgt testbed.Cluster, topic string) *flow.Flow {
	rx := regexp.MustCompile("^" + regexp.QuoteMeta(topic) + "$")
	cfg := func(c testbed.Cluster) map[string]string { return map[string]string{"bootstrap.servers": c.Bootstrap} }
	f := &flow.Flow{
		Source: src.Name, Target: tgt.Name, SourceBootstrap: src.Bootstrap, TargetBootstrap: tgt.Bootstrap, Enabled: true,
		SourceConsumer: cfg(src), SourceAdmin: cfg(src), SourceProducer: cfg(src),
		TargetProducer: map[string]string{"bootstrap.servers": tgt.Bootstrap, "linger.ms": "5"},
		TargetAdmin:    cfg(tgt), TargetConsumer: cfg(tgt),
		Policy: policy.NewDefault(".", false, true), TopicFilter: rx.MatchString,
		ReplicationFactor: 1, RefreshTopics: true, RefreshTopicsInterval: time.Second,
		EmitOffsetSyncs: true, OffsetLagMax: 100, OffsetSyncsRF: 1,
		EmitHeartbeats: true, HeartbeatInterval: 500 * time.Millisecond, HeartbeatsRF: 1,
		OffsetsTopicRF: 1, OffsetFlushInterval: 500 * time.Millisecond, Tasks: 2,
	}
	if err := f.Validate(); err != nil {
		panic(err)
	}
	return f
}

func produce(t *testing.T, c testbed.Cluster, topic string, parts, from, n int) []int {
	t.Helper()
	counts := make([]int, parts)
	recs := make([]rdkafka.Record, n)
	for i := range recs {
		p := (from + i) % parts
		counts[p]++
		recs[i] = rdkafka.Record{Topic: topic, Partition: int32(p), Key: []byte(strconv.Itoa(from + i)), Value: []byte(fmt.Sprintf("value-%06d", from+i))}
	}
	c.Produce(t, recs)
	return counts
}

func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

// scrape reads /metrics with the Prometheus text parser and returns the series of one metric
// for remote topic, by partition.
func scrape(t *testing.T, base, metric, remote string) (map[int]float64, error) {
	code, body := get(t, base+"/metrics")
	if code != 200 {
		return nil, fmt.Errorf("/metrics: HTTP %d", code)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	out := map[int]float64{}
	fam, ok := fams[metric]
	if !ok {
		return out, nil
	}
	for _, m := range fam.GetMetric() {
		ls := labels(m)
		if ls["topic"] != remote {
			continue
		}
		p, _ := strconv.Atoi(ls["partition"])
		switch {
		case m.Counter != nil:
			out[p] = m.GetCounter().GetValue()
		case m.Gauge != nil:
			out[p] = m.GetGauge().GetValue()
		}
	}
	return out, nil
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// A->B on the test bed: the record counter on /metrics equals the records replicated (checked
// against the target's end offsets), the Connect-style status says RUNNING, and readiness
// follows the flow's life.
func TestRealMetricsAndStatus(t *testing.T) {
	bed := testbed.Attach(t)
	topic := testbed.Unique(t, "http")
	remote := "A." + topic
	const parts = 3
	bed.A.CreateTopic(t, topic, parts, nil)
	t.Cleanup(func() { _ = bed.B.Admin(t).DeleteTopics(context.Background(), remote) })
	before := produce(t, bed.A, topic, parts, 0, 900)

	flows := []*flow.Flow{realFlow(bed.A, bed.B, topic)}
	r := replicator.New(flows, replicator.Options{ShutdownTimeout: 20 * time.Second, ProgressEvery: -1,
		Sink: replicator.SinkFunc(func(e replicator.Event) {
			if e.Type == replicator.EvWarning || e.Type == replicator.EvError {
				t.Logf("event: %s %s", e.Type, e.Message)
			}
		})})
	srv, err := httpapi.New("127.0.0.1:0", replsource.New(r, flows), httpapi.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	base := "http://" + srv.Addr()

	// Before Run: the flow is listed, not ready.
	if code, body := get(t, base+"/readyz"); code != 503 {
		t.Fatalf("/readyz before start: %d %s", code, body)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("replicator returned %v", err)
			}
		case <-time.After(60 * time.Second):
			t.Error("replicator did not stop within 60s")
		}
	}
	defer stop()

	testbed.Eventually(t, 90*time.Second, func() error {
		select {
		case err := <-done:
			t.Fatalf("replicator stopped during start: %v", err)
		default:
		}
		if code, body := get(t, base+"/readyz"); code != 200 {
			return fmt.Errorf("/readyz %d %s", code, body)
		}
		return nil
	})
	// More records while it runs.
	after := produce(t, bed.A, topic, parts, 900, 600)
	want := make([]int, parts)
	total := 0
	for p := range want {
		want[p] = before[p] + after[p]
		total += want[p]
	}

	// The counters reach the produced counts...
	testbed.Eventually(t, 2*time.Minute, func() error {
		got, err := scrape(t, base, "kmm_mirror_source_record_count_total", remote)
		if err != nil {
			return err
		}
		for p := range want {
			if int(got[p]) != want[p] {
				return fmt.Errorf("record count %v, want %v", got, want)
			}
		}
		return nil
	})
	// ...which is exactly what the target holds (no duplicates in a clean run).
	tps := make([]rdkafka.TP, parts)
	for p := range tps {
		tps[p] = rdkafka.TP{Topic: remote, Partition: int32(p)}
	}
	ends, err := bed.B.Admin(t).ListOffsets(context.Background(), tps, rdkafka.Latest)
	if err != nil {
		t.Fatal(err)
	}
	got, err := scrape(t, base, "kmm_mirror_source_record_count_total", remote)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for p, tp := range tps {
		if int64(got[p]) != ends[tp].Offset {
			t.Errorf("%s[%d]: record_count_total %v, target end offset %d", remote, p, got[p], ends[tp].Offset)
		}
		sum += got[p]
	}
	if int(sum) != total {
		t.Errorf("record_count_total sums to %v, produced %d", sum, total)
	}
	bytes, _ := scrape(t, base, "kmm_mirror_source_byte_count_total", remote)
	for p := range want {
		if int(bytes[p]) != want[p]*len("value-000000") {
			t.Errorf("byte count[%d] = %v, want %d", p, bytes[p], want[p]*len("value-000000"))
		}
	}
	// Lag drains to 0 once the end offsets are refreshed (every 5 s).
	testbed.Eventually(t, 30*time.Second, func() error {
		lag, err := scrape(t, base, "kmm_replication_lag_records", remote)
		if err != nil {
			return err
		}
		secs, err := scrape(t, base, "kmm_replication_lag_seconds", remote)
		if err != nil {
			return err
		}
		for p := range want {
			if v, ok := lag[p]; !ok || v != 0 {
				return fmt.Errorf("lag records %v", lag)
			}
			if v, ok := secs[p]; !ok || v != 0 {
				return fmt.Errorf("lag seconds %v", secs)
			}
		}
		return nil
	})

	// Connect-style reads.
	code, body := get(t, base+"/connectors")
	if wantList := `["A->B.MirrorCheckpointConnector","A->B.MirrorHeartbeatConnector","A->B.MirrorSourceConnector"]` + "\n"; code != 200 || string(body) != wantList {
		t.Errorf("/connectors: %d %s", code, body)
	}
	for _, name := range []string{"A->B.MirrorSourceConnector", "MirrorSourceConnector"} {
		code, body := get(t, base+"/connectors/"+name+"/status")
		var st struct {
			Name      string `json:"name"`
			Connector struct {
				State    string `json:"state"`
				WorkerID string `json:"worker_id"`
			} `json:"connector"`
			Tasks []struct {
				ID    int    `json:"id"`
				State string `json:"state"`
			} `json:"tasks"`
			Type string `json:"type"`
		}
		if err := json.Unmarshal(body, &st); err != nil || code != 200 {
			t.Fatalf("%s status: %d %s (%v)", name, code, body, err)
		}
		if st.Name != "A->B.MirrorSourceConnector" || st.Connector.State != "RUNNING" || st.Connector.WorkerID != srv.WorkerID() ||
			len(st.Tasks) != 2 || st.Tasks[0].State != "RUNNING" || st.Tasks[1].State != "RUNNING" || st.Type != "source" {
			t.Errorf("%s status: %s", name, body)
		}
	}
	// Resume positions, as Connect's offsets endpoint shows them.
	testbed.Eventually(t, 30*time.Second, func() error {
		_, body := get(t, base+"/connectors/A->B.MirrorSourceConnector/offsets")
		var offs struct {
			Offsets []struct {
				Partition struct {
					Cluster   string `json:"cluster"`
					Partition int    `json:"partition"`
					Topic     string `json:"topic"`
				} `json:"partition"`
				Offset struct {
					Offset int `json:"offset"`
				} `json:"offset"`
			} `json:"offsets"`
		}
		if err := json.Unmarshal(body, &offs); err != nil {
			return err
		}
		if len(offs.Offsets) != parts {
			return fmt.Errorf("offsets %s", body)
		}
		for _, o := range offs.Offsets {
			if o.Partition.Cluster != "A" || o.Partition.Topic != topic || o.Offset.Offset != want[o.Partition.Partition]-1 {
				return fmt.Errorf("offsets %s", body)
			}
		}
		return nil
	})

	// After a drain the flow is no longer ready, and statuses say so.
	stop()
	code, body = get(t, base+"/readyz")
	if code != 503 || !strings.Contains(string(body), "flow A->B is not running") {
		t.Errorf("/readyz after stop: %d %s", code, body)
	}
	code, body = get(t, base+"/connectors/MirrorSourceConnector/status")
	if code != 200 || !strings.Contains(string(body), `"connector":{"state":"UNASSIGNED"`) {
		t.Errorf("status after stop: %d %s", code, body)
	}
	// The counters keep their final values after the drain.
	got, _ = scrape(t, base, "kmm_mirror_source_record_count_total", remote)
	for p := range want {
		if int(got[p]) != want[p] {
			t.Errorf("after stop: record count %v, want %v", got, want)
			break
		}
	}
}
