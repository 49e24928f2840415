package httpapi

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kmmproject/kmm/pkg/kerr"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// multiFlows: A->B replicating and running, B->A heartbeats only, C->B failed.
func multiFlows() []FlowStats {
	fs := baseFlows()
	fs[1].Running = true
	return append(fs, FlowStats{Source: "C", Target: "B", Enabled: true, Running: false, Tasks: 1,
		Err: "flow C->B: topic orders partition 3: Broker: Topic authorization failed"})
}

func startServer(t *testing.T, src Source, opts Options) *Server {
	t.Helper()
	if opts.WorkerID == "" {
		opts.WorkerID = "kmm-host:8083"
	}
	if opts.Now == nil {
		opts.Now = fixedNow
	}
	s, err := New("127.0.0.1:0", src, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

// rawGet sends a request line exactly as given (curl sends "->" unescaped) and returns the
// status code and body.
func rawGet(t *testing.T, addr, target string) (int, string) {
	t.Helper()
	return rawDo(t, addr, "GET", target)
}

func rawDo(t *testing.T, addr, method, target string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", method, target)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 && ct != "application/json" && method != "HEAD" {
		t.Errorf("%s %s: Content-Type %q", method, target, ct)
	}
	return resp.StatusCode, string(body)
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file:\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

func TestConnectGolden(t *testing.T) {
	src := &fakeSource{}
	src.set(multiFlows()...)
	cfg := map[string]map[string]string{"A->B": {
		"name": "MirrorSourceConnector", "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
		"source.cluster.alias": "A", "target.cluster.alias": "B", "enabled": "true", "tasks.max": "2", "topics": "orders.*",
		"source.cluster.bootstrap.servers":     "a1:9093",
		"source.cluster.sasl.jaas.config":      `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";`,
		"target.cluster.ssl.keystore.password": "changeit",
		"target.cluster.ssl.keystore.location": "/etc/kafka/target.keystore.jks",
	}}
	s := startServer(t, src, Options{Configs: cfg, Version: "1.2.3", Commit: "abc"})
	for _, tc := range []struct{ golden, target string }{
		{"root", "/"},
		{"connectors", "/connectors"},
		{"connectors_expand_status", "/connectors?expand=status"},
		{"connectors_expand_info_status", "/connectors?expand=info&expand=status"},
		{"connectors_expand_unknown", "/connectors?expand=nope"},
		{"source_status", "/connectors/A->B.MirrorSourceConnector/status"},
		{"source_status_encoded", "/connectors/A-%3EB.MirrorSourceConnector/status"},
		{"source_info", "/connectors/A->B.MirrorSourceConnector"},
		{"source_config", "/connectors/A->B.MirrorSourceConnector/config"},
		{"checkpoint_status", "/connectors/A->B.MirrorCheckpointConnector/status"},
		{"heartbeat_only_status", "/connectors/B->A.MirrorHeartbeatConnector/status"},
		{"failed_status", "/connectors/C->B.MirrorSourceConnector/status"},
		{"failed_info_minimal_config", "/connectors/C->B.MirrorSourceConnector"},
		{"task_status", "/connectors/A->B.MirrorSourceConnector/tasks/1/status"},
		{"task_not_found", "/connectors/A->B.MirrorSourceConnector/tasks/2/status"},
		{"bare_ambiguous", "/connectors/MirrorHeartbeatConnector/status"},
		{"unknown_connector", "/connectors/your-mm2-connector/status"},
		{"no_source_connector_for_heartbeat_flow", "/connectors/B->A.MirrorSourceConnector/status"},
		{"flow_connectors", "/A/B/connectors"},
		{"flow_source_status", "/A/B/connectors/MirrorSourceConnector/status"},
		{"flow_heartbeat_only_connectors", "/B/A/connectors?expand=status"},
		{"flow_unknown", "/X/Y/connectors"},
		{"source_offsets", "/connectors/A->B.MirrorSourceConnector/offsets"},
		{"source_offsets_acknowledged", "/connectors/A->B.MirrorSourceConnector/offsets?acknowledged=true"},
		{"heartbeat_offsets", "/connectors/A->B.MirrorHeartbeatConnector/offsets"},
		{"unknown_path", "/connectors/A->B.MirrorSourceConnector/topics"},
	} {
		code, body := rawGet(t, s.Addr(), tc.target)
		checkGolden(t, tc.golden, fmt.Sprintf("GET %s\nHTTP %d\n%s", tc.target, code, body))
	}
	// Read-only: no create, update, delete, pause or restart.
	for _, m := range []string{"POST", "PUT", "DELETE"} {
		code, body := rawDo(t, s.Addr(), m, "/connectors/A->B.MirrorSourceConnector")
		if code != http.StatusMethodNotAllowed || !strings.Contains(body, `"error_code":405`) {
			t.Errorf("%s: %d %s", m, code, body)
		}
	}
}

// The seed tutorial's commands against a single-flow kmm.
func TestConnectTutorialSingleFlow(t *testing.T) {
	src := &fakeSource{}
	src.set(FlowStats{Source: "SOURCE", Target: "TARGET", Enabled: true, Running: true, Tasks: 4, EmitHeartbeats: true})
	s := startServer(t, src, Options{})
	code, body := rawGet(t, s.Addr(), "/connectors")
	if want := `["SOURCE->TARGET.MirrorCheckpointConnector","SOURCE->TARGET.MirrorHeartbeatConnector","SOURCE->TARGET.MirrorSourceConnector"]` + "\n"; code != 200 || body != want {
		t.Errorf("/connectors: %d %s", code, body)
	}
	code, body = rawGet(t, s.Addr(), "/connectors/MirrorSourceConnector/status")
	want := `{"name":"SOURCE->TARGET.MirrorSourceConnector","connector":{"state":"RUNNING","worker_id":"kmm-host:8083"},"tasks":[` +
		`{"id":0,"state":"RUNNING","worker_id":"kmm-host:8083"},{"id":1,"state":"RUNNING","worker_id":"kmm-host:8083"},` +
		`{"id":2,"state":"RUNNING","worker_id":"kmm-host:8083"},{"id":3,"state":"RUNNING","worker_id":"kmm-host:8083"}],"type":"source"}` + "\n"
	if code != 200 || body != want {
		t.Errorf("bare status: %d %s", code, body)
	}
	code, body = rawGet(t, s.Addr(), "/connectors/your-mm2-connector/status")
	if want := `{"error_code":404,"message":"Connector your-mm2-connector not found"}` + "\n"; code != 404 || body != want {
		t.Errorf("unknown: %d %s", code, body)
	}
}

func TestReadyz(t *testing.T) {
	src := &fakeSource{}
	s := startServer(t, src, Options{})
	check := func(wantCode int, wantBody string) {
		t.Helper()
		code, body := rawGet(t, s.Addr(), "/readyz")
		if code != wantCode || body != wantBody+"\n" {
			t.Errorf("/readyz = %d %s, want %d %s", code, body, wantCode, wantBody)
		}
	}
	check(503, `{"status":"not ready","flows":0,"reasons":["no flows: replication has not started"]}`)
	src.set(multiFlows()...)
	check(503, `{"status":"not ready","flows":3,"reasons":["flow C->B failed: flow C->B: topic orders partition 3: Broker: Topic authorization failed"]}`)
	fs := multiFlows()
	fs[2].Err = ""
	src.set(fs...)
	check(503, `{"status":"not ready","flows":3,"reasons":["flow C->B is not running (starting, draining or stopped)"]}`)
	fs[2].Running = true
	src.set(fs...)
	check(200, `{"status":"ready","flows":3}`)

	code, body := rawGet(t, s.Addr(), "/healthz")
	if code != 200 || body != `{"status":"ok"}`+"\n" {
		t.Errorf("/healthz = %d %s", code, body)
	}
}

// /metrics over HTTP parses with the Prometheus text parser and carries kmm's, Go's and the
// process's metrics.
func TestMetricsEndpoint(t *testing.T) {
	src := &fakeSource{}
	src.set(baseFlows()...)
	s := startServer(t, src, Options{Version: "1.2.3", Commit: "abc"})
	resp, err := http.Get("http://" + s.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"kmm_flow_up", "kmm_mirror_source_record_count_total", "kmm_build_info", "go_goroutines", "process_cpu_seconds_total"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("%s missing", name)
		}
	}
	var total float64
	for _, m := range fams["kmm_mirror_source_record_count_total"].GetMetric() {
		total += m.GetCounter().GetValue()
	}
	if total != 1040 {
		t.Errorf("record count total %v, want 1040", total)
	}
}

func TestNewBinding(t *testing.T) {
	src := &fakeSource{}
	for _, addr := range []string{":0", "0.0.0.0:0", "[::]:0", "192.0.2.10:0", "127.0.0.1"} {
		s, err := New(addr, src, Options{})
		if err == nil {
			s.Close(context.Background())
			t.Errorf("%s: accepted without AllowRemote", addr)
			continue
		}
		if kerr.KindOf(err) != kerr.Usage {
			t.Errorf("%s: kind %v, want usage: %v", addr, kerr.KindOf(err), err)
		}
		if errors.Is(err, ErrNotLoopback) != (addr != "127.0.0.1") {
			t.Errorf("%s: errors.Is(ErrNotLoopback) = %v: %v", addr, errors.Is(err, ErrNotLoopback), err)
		}
		t.Logf("%s: %v (hint: %s)", addr, err, kerr.HintOf(err))
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0", "127.0.0.2:0"} {
		s, err := New(addr, src, Options{})
		if err != nil {
			t.Errorf("%s: %v", addr, err)
			continue
		}
		if !strings.HasPrefix(s.Addr(), "127.") {
			t.Errorf("%s: bound %s", addr, s.Addr())
		}
		s.Close(context.Background())
	}
	// Remote binding when allowed explicitly.
	s, err := New(":0", src, Options{AllowRemote: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s.WorkerID(), ":") {
		t.Errorf("worker id %q", s.WorkerID())
	}
	// Port in use: a usage error naming the address.
	_, err = New(strings.Replace(s.Addr(), "[::]", "127.0.0.1", 1), src, Options{})
	if err == nil || kerr.KindOf(err) != kerr.Usage || !strings.Contains(err.Error(), "cannot listen on") || !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("port in use: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatalf("second close: %v", err)
	}
}
