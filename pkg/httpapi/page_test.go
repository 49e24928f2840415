package httpapi

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeStatus is a Source with the status page's capability.
type fakeStatus struct {
	*fakeSource
	mu       sync.Mutex
	events   []Event
	readings []FlowReading
	asked    int
}

func (f *fakeStatus) Events() []Event { return f.events }

func (f *fakeStatus) Readings() []FlowReading {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked++
	return f.readings
}

// pageFlows: A->B replicating with B down, lag on two partitions and one unknown, exactly-once,
// a rate limit, checkpoints and workers; B->A heartbeats only; C->B failed over.
func pageFlows() []FlowStats {
	fs := baseFlows()
	ab := &fs[0]
	ab.SourceEndsAt = testNow.Add(-3 * time.Second)
	ab.State = &FlowState{State: "REPLICATING"}
	ab.Clusters = []ClusterStatus{
		{Alias: "A", Bootstrap: "a1:9092", Role: "source", Up: true, RTTAvg: 1200 * time.Microsecond, RTTP99: 3 * time.Millisecond},
		{Alias: "B", Bootstrap: "b1:9092", Role: "target", Up: false, DownSince: testNow.Add(-41 * time.Second),
			Cause: "connection refused: Connect to ipv4#10.0.0.7:9092 failed: Connection refused"},
	}
	ab.Stall = &StallStats{Seconds: 41, Stalled: true, WaitingRecords: 5}
	ab.Rate = &RateStats{LimitBytesPerSecond: 10_000_000, ThrottledSeconds: 12.5}
	ab.Transactions = &TxnStats{Committed: 120, Aborted: 2}
	ab.CheckpointsRunning = true
	ab.Checkpoints = &CheckpointStats{Groups: []GroupCheckpointStats{{Group: "billing", LastCheckpointMs: testNow.Add(-2 * time.Second).UnixMilli()},
		{Group: "fresh"}}, SkippedActiveGroups: []string{"busy"}}
	ab.Workers = &WorkerShare{Group: "kmm-A->B-workers", Leader: true, Partitions: []string{"orders[0]", "orders[1]"}}
	fs[1].Running = true
	fs = append(fs, FlowStats{Source: "C", Target: "B", Enabled: true, Tasks: 1, Paused: "stopped: flow C->B marked FAILING_OVER (epoch 1) by ops@host, run r1",
		State: &FlowState{State: "FAILING_OVER", Epoch: 1, At: testNow.Add(-time.Minute), By: "ops@host", RunID: "r1"}})
	return fs
}

func pageReadings() []FlowReading {
	return []FlowReading{
		{Flow: "A->B", Every: 15 * time.Second, Attempted: testNow.Add(-2 * time.Second), Err: "cluster B is down: connection refused",
			At: testNow.Add(-20 * time.Second), Took: 1500 * time.Millisecond,
			Cost: &FailoverCost{Partitions: 3, NotOnTarget: 45, NotOnTargetMin: 40, OldestSeconds: 17.5, PositionSources: map[string]int{"live": 2, "stored-progress": 1},
				OldestAsOf: testNow.Add(-25 * time.Second),
				Groups: []GroupCost{{Group: "billing", Partitions: 3, WouldReread: 7, RereadUnknown: 1, CouldMiss: 5, CouldMissMin: 5, LagOnSource: 9, LagOnTarget: 14},
					{Group: "lost", Partitions: 1, RereadUnknown: 1, MissUnknown: 1, LagOnSource: -1, LagOnTarget: -1}}},
			State: &FlowState{State: "REPLICATING"},
			Workers: []WorkerLease{{Instance: "h1-1-2", Host: "ops@h1", Leader: true, Partitions: []string{"orders[0]", "orders[1]"}},
				{Instance: "h2-1-3", Host: "ops@h2", Partitions: []string{"orders[2]"}}}},
		{Flow: "C->B", Every: 15 * time.Second, Attempted: testNow.Add(-time.Second), At: testNow.Add(-time.Second),
			Cost:  &FailoverCost{Partitions: 1, Exact: true, PositionSources: map[string]int{"offset-sync+target-end": 1}},
			State: &FlowState{State: "FAILED_OVER", Epoch: 2, At: testNow.Add(-30 * time.Second), By: "ops@host", RunID: "r1"}},
	}
}

func pageSource() *fakeStatus {
	src := &fakeStatus{fakeSource: &fakeSource{}, readings: pageReadings(), events: []Event{
		{Time: testNow.Add(-31 * time.Second), Type: "cluster_down", Cluster: "B", Message: "cluster B (b1:9092) is unreachable since …"},
		{Time: testNow.Add(-90 * time.Second), Type: "flow_stopped", Flow: "C->B", Message: "stopped: flow C->B marked FAILING_OVER (epoch 1) by ops@host, run r1; drained"},
		{Time: testNow.Add(-2 * time.Minute), Type: "flow_started", Flow: "A->B", Message: "1 topics, 3 partitions <script>alert(1)</script>"},
	}}
	src.set(pageFlows()...)
	return src
}

func get(t *testing.T, url, accept string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

// The page is complete without any script: the server renders every number, and unknown ones
// as "?".
func TestStatusPageWithoutScript(t *testing.T) {
	src := pageSource()
	s := startServer(t, src, Options{Version: "1.2.3", Commit: "abc"})
	resp, page := get(t, "http://"+s.Addr()+"/", browserAccept)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET / (browser): %d %s\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), page)
	}
	if os.Getenv("KMM_PAGE_DUMP") != "" {
		_ = os.WriteFile(os.Getenv("KMM_PAGE_DUMP"), []byte(page), 0o644)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
	for _, want := range []string{
		`data-flow="A-&gt;B"`, `data-flow="B-&gt;A"`, `data-flow="C-&gt;B"`,
		// lag: 5 + 0 known, partition 2 unknown; worst partitions: orders/0 (5) and orders/2 (?)
		`<span data-k="lag-records" data-value="5">5</span> records`,
		`<tr data-partition="orders/0">`, `data-k="lag-records" data-value="5">5</td>`,
		`<tr data-partition="orders/2">`, `data-k="lag-records" data-value="">?</td>`,
		"1 of 3 partitions behind, 1 unknown", "source ends read 3 s ago",
		// clusters: words, not only colours
		`data-cluster="B" data-status="DOWN"`, ">DOWN</span>", "since ", "(41 s): connection refused: Connect to ipv4#10.0.0.7:9092 failed: Connection refused",
		">UP</span>", "link RTT 1.2 ms",
		// state and health
		`data-k="state">REPLICATING</span>`, `data-k="health">DOWN</span>`, `data-k="state">HEARTBEATS</span>`,
		`data-k="state">FAILED_OVER</span>`, "epoch 2", "read from __kmm_state 1 s ago",
		// fail over now: the numbers, their range, how old, how known, and the last attempt's error
		`data-k="not-on-target" data-value="45">40..45</span> records not on B, the oldest 18 s old`, "computed 20 s ago in 1.5 s, every 15 s",
		"≈ time since the last progress, not the oldest record's age;",
		"live: 2, stored-progress: 1", "last attempt: <span class=\"err\">cluster B is down: connection refused</span>",
		`<tr data-group="billing">`, `data-k="would-reread" data-value="7">7 <small>(+1 unknown)</small>`, `data-k="could-miss" data-value="5">5</td>`,
		`<tr data-group="lost">`, `data-k="would-reread" data-value="">? <small>(+1 unknown)</small>`,
		// checkpoints, exactly-once, rate limit, workers
		"newest 2 s ago, oldest 2 s ago", "not synced, active on the target: busy",
		`data-k="txn-committed">120</span> committed`, `data-k="txn-aborted">2</span> aborted`,
		`data-k="rate-limit">10.0 MB/s</div>`, "waited 13 s for it",
		"orders[0], orders[1]", "ops@h2", "orders[2]",
		// events, newest first, escaped
		"cluster_down", "flow_stopped", "&lt;script&gt;alert(1)&lt;/script&gt;",
		// the refresh link for scripts off, the JSON documented
		`<a href="./">Refresh</a>`, `href="api/status"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script>alert") {
		t.Error("an event's message is not escaped")
	}
	if i, j := strings.Index(page, "cluster_down"), strings.Index(page, "flow_started"); i > j {
		t.Error("events are not newest first")
	}
	// Nothing from elsewhere: no absolute URL to another host, no inline script.
	if m := regexp.MustCompile(`(?i)(src|href)="(https?:)?//`).FindString(page); m != "" {
		t.Errorf("the page loads something from elsewhere: %s", m)
	}
	if strings.Contains(page, "<script>") {
		t.Error("inline script (the CSP allows only static/status.js)")
	}
	if src.asked == 0 {
		t.Error("the page did not ask the source for its readings")
	}
	// The fragment the script fetches is the live part only.
	resp, frag := get(t, "http://"+s.Addr()+"/?fragment=1", "")
	if resp.StatusCode != 200 || strings.Contains(frag, "<html") || !strings.Contains(frag, `data-flow="A-&gt;B"`) {
		t.Errorf("fragment: %d\n%s", resp.StatusCode, frag)
	}
	// The embedded files.
	for _, f := range []string{"status.css", "status.js"} {
		resp, body := get(t, "http://"+s.Addr()+"/static/"+f, "")
		if resp.StatusCode != 200 || len(body) < 500 {
			t.Errorf("/static/%s: %d, %d bytes", f, resp.StatusCode, len(body))
		}
	}
	if resp, _ := get(t, "http://"+s.Addr()+"/static/../server.go", ""); resp.StatusCode != 404 {
		t.Errorf("/static/../server.go: %d", resp.StatusCode)
	}
	// curl and Connect clients still get the root resource's JSON.
	if resp, body := get(t, "http://"+s.Addr()+"/", ""); body != `{"commit":"abc","version":"1.2.3"}`+"\n" || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("GET / without Accept: %s", body)
	}
}

// GET /api/status: versioned, unknown numbers null, the same numbers as the page.
func TestStatusJSON(t *testing.T) {
	s := startServer(t, pageSource(), Options{Version: "1.2.3", Commit: "abc"})
	resp, body := get(t, "http://"+s.Addr()+"/api/status", "")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	checkGolden(t, "api_status", body)
	var doc map[string]any
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["schema_version"] != float64(1) || doc["kind"] != "replicate-status" || doc["health"] != "ATTENTION" {
		t.Errorf("envelope: %v %v %v", doc["schema_version"], doc["kind"], doc["health"])
	}
	ab := doc["flows"].([]any)[0].(map[string]any)
	lag := ab["lag"].(map[string]any)
	if lag["records"] != float64(5) || lag["partitions_unknown"] != float64(1) {
		t.Errorf("lag %v", lag)
	}
	worst := lag["worst"].([]any)
	if len(worst) != 2 || worst[1].(map[string]any)["lag_records"] != nil {
		t.Errorf("worst %v", worst)
	}
	// Throughput is unknown (null) before two samples, never 0.
	tp := ab["throughput"].(map[string]any)
	if tp["records_per_second"] != nil || tp["records_total"] != float64(1040) {
		t.Errorf("throughput %v", tp)
	}
}

// Records/s and bytes/s come from samples about 30 s apart.
func TestStatusRates(t *testing.T) {
	src := &fakeSource{}
	now := testNow
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	flows := baseFlows()
	src.set(flows...)
	s := newServer(src, Options{Now: clock}, nil)
	doc := s.report()
	if doc.Flows[0].Throughput.RecordsPerSecond != nil {
		t.Fatal("a rate from one sample")
	}
	for i := 1; i <= 8; i++ {
		mu.Lock()
		now = testNow.Add(time.Duration(i) * 5 * time.Second)
		mu.Unlock()
		flows[0].Partitions[0].Records += 500
		flows[0].Partitions[0].Bytes += 5000
		src.set(flows...)
		doc = s.report()
	}
	tp := doc.Flows[0].Throughput
	if tp.RecordsPerSecond == nil || *tp.RecordsPerSecond != 100 || *tp.BytesPerSecond != 1000 || *tp.WindowSeconds != 30 {
		t.Errorf("rate %v/s, %v B/s over %v s", deref2(tp.RecordsPerSecond), deref2(tp.BytesPerSecond), deref2(tp.WindowSeconds))
	}
	// A total that went down (a worker gave partitions away) is no rate.
	flows[0].Partitions[0].Records = 0
	src.set(flows...)
	mu.Lock()
	now = now.Add(5 * time.Second)
	mu.Unlock()
	if r := s.report().Flows[0].Throughput.RecordsPerSecond; r != nil {
		t.Errorf("rate %v after the total went down", *r)
	}
}

func deref2(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// Nothing secret reaches the page or its JSON: connector configs are not shown at all.
func TestStatusNoSecrets(t *testing.T) {
	src := pageSource()
	s := startServer(t, src, Options{Configs: map[string]map[string]string{"A->B": {
		"source.cluster.sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="pageS3cret";`,
		"target.cluster.ssl.key.password": "pageS3cret2"}}})
	for _, path := range []string{"/", "/?fragment=1", "/api/status"} {
		_, body := get(t, "http://"+s.Addr()+path, browserAccept)
		if strings.Contains(body, "pageS3cret") || strings.Contains(body, "jaas") {
			t.Errorf("%s shows a secret", path)
		}
	}
}
