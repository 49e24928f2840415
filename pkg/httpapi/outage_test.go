package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// outageFlows: A->B running while B has been unreachable for 42 s and its records stalled for
// 40 s; B->A, heartbeats only, needs only its target A.
func outageFlows() []FlowStats {
	down := ClusterStatus{Alias: "B", Bootstrap: "127.0.0.1:29092", Up: false, DownSince: testNow.Add(-42 * time.Second),
		Cause: "connection refused: Connect to ipv4#127.0.0.1:29092 failed: Connection refused"}
	up := ClusterStatus{Alias: "A", Bootstrap: "127.0.0.1:19092", Up: true}
	fs := baseFlows()
	a, b := up, down
	a.Role, b.Role = "source", "target"
	fs[0].Clusters = []ClusterStatus{a, b}
	fs[0].Stall = &StallStats{Seconds: 40, Stalled: true, WaitingRecords: 1234}
	fs[1].Running = true
	a2 := up
	a2.Role = "target"
	fs[1].Clusters = []ClusterStatus{a2}
	return fs
}

func TestReadyzDuringOutage(t *testing.T) {
	src := &fakeSource{}
	src.set(outageFlows()...)
	s := startServer(t, src, Options{})
	code, body := rawGet(t, s.Addr(), "/readyz")
	if code != 503 {
		t.Fatalf("/readyz = %d %s, want 503", code, body)
	}
	var rd struct {
		Status   string   `json:"status"`
		Reasons  []string `json:"reasons"`
		Clusters []struct {
			Cluster, Bootstrap, Cause string
			Up                        bool
			Since                     string   `json:"unreachable_since"`
			For                       int64    `json:"unreachable_for_seconds"`
			Flows                     []string `json:"flows"`
		} `json:"clusters"`
	}
	if err := json.Unmarshal([]byte(body), &rd); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"cluster B (127.0.0.1:29092) is unreachable since 2023-11-14T22:14:18Z (for 42s): connection refused: Connect to ipv4#127.0.0.1:29092 failed: Connection refused; needed by A->B (target)",
		"flow A->B is stalled: no record delivered for 40s while 1234 record(s) wait",
	}
	if rd.Status != "not ready" || strings.Join(rd.Reasons, "\n") != strings.Join(want, "\n") {
		t.Errorf("reasons:\n%s\nwant:\n%s", strings.Join(rd.Reasons, "\n"), strings.Join(want, "\n"))
	}
	if len(rd.Clusters) != 2 || rd.Clusters[0].Cluster != "A" || !rd.Clusters[0].Up || rd.Clusters[1].Cluster != "B" || rd.Clusters[1].Up ||
		rd.Clusters[1].Since != "2023-11-14T22:14:18Z" || rd.Clusters[1].For != 42 || !strings.HasPrefix(rd.Clusters[1].Cause, "connection refused") {
		t.Errorf("clusters %+v", rd.Clusters)
	}
	if code, body := rawGet(t, s.Addr(), "/healthz"); code != 200 {
		t.Errorf("/healthz = %d %s during an outage, want 200", code, body)
	}

	// Connect schema kept: RUNNING, the reason as the trace of connector and tasks.
	code, body = rawGet(t, s.Addr(), "/connectors?expand=status")
	var st map[string]struct {
		Status connectorStatus `json:"status"`
	}
	if err := json.Unmarshal([]byte(body), &st); code != 200 || err != nil {
		t.Fatalf("%d %s %v", code, body, err)
	}
	src1 := st["A->B.MirrorSourceConnector"].Status
	wantTrace := "stalled: cluster B (127.0.0.1:29092) is unreachable since 2023-11-14T22:14:18Z (for 42s): connection refused: Connect to ipv4#127.0.0.1:29092 failed: Connection refused (retrying; the flow resumes by itself)"
	if src1.Connector.State != "RUNNING" || src1.Connector.Trace != wantTrace || len(src1.Tasks) != 2 || src1.Tasks[1].State != "RUNNING" || src1.Tasks[1].Trace != wantTrace {
		t.Errorf("source connector status %+v", src1)
	}
	if hb := st["B->A.MirrorHeartbeatConnector"].Status; hb.Connector.State != "RUNNING" || hb.Connector.Trace != "" {
		t.Errorf("B->A heartbeats need only A (up): %+v", hb)
	}

	// Stalled while every cluster is up: the stall is the reason.
	fs := outageFlows()
	fs[0].Clusters[1].Up, fs[0].Clusters[1].Cause = true, ""
	src.set(fs...)
	code, body = rawGet(t, s.Addr(), "/readyz")
	if code != 503 || !strings.Contains(body, `"reasons":["flow A->B is stalled: no record delivered for 40s while 1234 record(s) wait"]`) {
		t.Errorf("stalled only: /readyz = %d %s", code, body)
	}
	_, body = rawGet(t, s.Addr(), "/connectors/A->B.MirrorSourceConnector/status")
	if !strings.Contains(body, `"trace":"stalled: no record delivered for 40s while 1234 record(s) wait (retrying; the flow resumes by itself)"`) {
		t.Errorf("stalled only: status %s", body)
	}
	// Back to normal.
	fs[0].Stall = &StallStats{Seconds: 0, WaitingRecords: 10}
	src.set(fs...)
	if code, body = rawGet(t, s.Addr(), "/readyz"); code != 200 {
		t.Errorf("recovered: /readyz = %d %s", code, body)
	}
}

func TestOutageMetrics(t *testing.T) {
	src := &fakeSource{}
	src.set(outageFlows()...)
	c := NewCollector(src, fixedNow)
	want := `
# HELP kmm_cluster_up 1 while the cluster is reachable, 0 after 10 s without a usable connection to it (see /readyz for since when and why).
# TYPE kmm_cluster_up gauge
kmm_cluster_up{cluster="A"} 1
kmm_cluster_up{cluster="B"} 0
# HELP kmm_flow_stalled_seconds Seconds since the flow last delivered a record while records waited (fetched and not acknowledged by the target, or on the source and not fetched); 0 while records move or nothing waits.
# TYPE kmm_flow_stalled_seconds gauge
kmm_flow_stalled_seconds{source="A",target="B"} 40
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "kmm_cluster_up", "kmm_flow_stalled_seconds"); err != nil {
		t.Error(err)
	}
}
