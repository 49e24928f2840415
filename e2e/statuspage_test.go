package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// chromium starts a headless Chromium for the test (Debian's package, /usr/bin/chromium; .ci/run
// installs it) and returns a browser tab's context. Without chromium the test skips, or fails
// under KMM_REQUIRE_TOOLS=1 (CI). KMM_CHROMIUM names another binary.
func chromium(t *testing.T) context.Context {
	t.Helper()
	path := os.Getenv("KMM_CHROMIUM")
	if path == "" {
		var err error
		if path, err = exec.LookPath("chromium"); err != nil {
			if os.Getenv("KMM_REQUIRE_TOOLS") == "1" {
				t.Fatalf("chromium is required (KMM_REQUIRE_TOOLS=1) but not found in PATH: apt-get install -y chromium (.ci/run installs it when missing)")
			}
			t.Skip("chromium not found in PATH; skipping the browser test (apt-get install -y chromium; KMM_REQUIRE_TOOLS=1 makes this a failure)")
		}
	}
	// Without the background-networking flags Chromium's own connections (updates, sync,
	// field trials) are refused on a closed network and the page loads slowly or not at all.
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1200, 1800),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx
}

// artifactDir is where tests save what a person looks at afterwards (screenshots):
// $KMM_TEST_ARTIFACTS, else <test bed>/artifacts.
func artifactDir(t *testing.T, bed *testbed.Bed) string {
	t.Helper()
	dir := os.Getenv("KMM_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(bed.Dir, "artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// pageFlow is what the test reads of one flow's section of the status page (the data-value
// attributes, which hold the plain numbers, and the visible words).
type pageFlow struct {
	Found      bool              `json:"found"`
	State      string            `json:"state"`
	Health     string            `json:"health"`
	Clusters   map[string]string `json:"clusters"` // alias -> UP, DOWN, NO ANSWER
	Lag        string            `json:"lag"`      // data-value ("" unknown)
	LagText    string            `json:"lag_text"`
	Total      string            `json:"total"`
	Parts      map[string]string `json:"parts"` // worst partitions: "topic/p" -> lag
	Failover   string            `json:"failover"`
	NotOnT     string            `json:"not_on_target"`
	Groups     map[string]string `json:"groups"` // group -> would re-read
	Freshness  string            `json:"freshness"`
	Scripted   bool              `json:"scripted"`
	EventTypes []string          `json:"events"`
}

const readFlowJS = `(() => {
  const f = document.querySelector('section.flow[data-flow=%q]');
  const out = {found: !!f, scripted: document.documentElement.classList.contains('js'), freshness: (document.getElementById('freshness') || {}).textContent || '',
    events: [...document.querySelectorAll('#events li[data-type]')].map(e => e.dataset.type)};
  if (!f) return out;
  const q = s => f.querySelector(s);
  const v = (s, a) => { const e = q(s); return e ? ((a ? e.dataset[a] : e.textContent) ?? '') : ''; };
  out.state = v('[data-k=state]'); out.health = v('[data-k=health]');
  out.clusters = Object.fromEntries([...f.querySelectorAll('.cluster')].map(c => [c.dataset.cluster, c.querySelector('[data-k=cluster-status]').textContent]));
  out.lag = v('.cell span[data-k=lag-records]', 'value'); out.lag_text = v('.cell span[data-k=lag-records]');
  out.total = v('[data-k=records-total]', 'value');
  out.parts = Object.fromEntries([...f.querySelectorAll('tr[data-partition]')].map(r => [r.dataset.partition, r.querySelector('[data-k=lag-records]').dataset.value]));
  out.failover = v('.failover', 'status'); out.not_on_target = v('[data-k=not-on-target]', 'value');
  out.groups = Object.fromEntries([...f.querySelectorAll('tr[data-group]')].map(r => [r.dataset.group, r.querySelector('[data-k=would-reread]').dataset.value]));
  return out;
})()`

func readPage(t *testing.T, ctx context.Context, flow string) pageFlow {
	t.Helper()
	pf, err := chromedp.Run(ctx, chromedp.Evaluate[pageFlow](fmt.Sprintf(readFlowJS, flow)))
	if err != nil {
		t.Fatalf("reading the page: %v", err)
	}
	return pf
}

// metricSeries returns the samples of metric name whose labels contain every one of match,
// keyed by their partition label.
func metricSeries(t *testing.T, base, name string, match ...string) map[string]int64 {
	t.Helper()
	_, body, err := httpGet(base, "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	part := regexp.MustCompile(`partition="(\d+)"`)
	out := map[string]int64{}
	for _, l := range strings.Split(body, "\n") {
		labels, val, ok := strings.Cut(strings.TrimPrefix(l, name+"{"), "} ")
		if !ok || !strings.HasPrefix(l, name+"{") {
			continue
		}
		all := true
		for _, m := range match {
			all = all && strings.Contains(labels, m)
		}
		if !all {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		p := ""
		if m := part.FindStringSubmatch(labels); m != nil {
			p = m[1]
		}
		out[p] = int64(v)
	}
	return out
}

// metricTotal is the sum of the samples of metric name whose labels contain every one of match.
func metricTotal(t *testing.T, base, name string, match ...string) int64 {
	t.Helper()
	_, body, err := httpGet(base, "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	var total float64
	for _, l := range strings.Split(body, "\n") {
		labels, val, ok := strings.Cut(strings.TrimPrefix(l, name+"{"), "} ")
		if !ok || !strings.HasPrefix(l, name+"{") {
			continue
		}
		all := true
		for _, m := range match {
			all = all && strings.Contains(labels, m)
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil && all {
			total += v
		}
	}
	return int64(total)
}

func sumOf(m map[string]int64) int64 {
	var s int64
	for _, v := range m {
		s += v
	}
	return s
}

// bedSecret is the test bed's SCRAM password of User:admin (scripts/testbed.sh).
const bedSecret = "admin-secret"

// noSecretOnPage fails when the page in the browser, its live part or its JSON shows the bed's
// secret or a JAAS configuration.
func noSecretOnPage(t *testing.T, ctx context.Context, base string) {
	t.Helper()
	html, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	if err != nil {
		t.Fatal(err)
	}
	bodies := map[string]string{"the page in the browser": html}
	for _, path := range []string{"/api/status", "/?fragment=1"} {
		_, b, err := httpGet(base, path)
		if err != nil {
			t.Fatal(err)
		}
		bodies[path] = b
	}
	for what, b := range bodies {
		if strings.Contains(b, bedSecret) || strings.Contains(b, "jaas") {
			t.Errorf("%s shows a secret:\n%s", what, b)
		}
	}
}

func screenshot(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// TestStatusPageInBrowser loads `kmm replicate --listen`'s status page in headless Chromium: the
// flow, its clusters and its lag as /metrics has them, the cost of failing over now as `kmm lag
// --group` computes it; then the target's broker is killed and the page says DOWN within 15 s,
// still readable, its lag numbers still those of /metrics; with scripts off the page is a
// complete snapshot. Screenshots go to $KMM_TEST_ARTIFACTS (else <bed>/artifacts).
func TestStatusPageInBrowser(t *testing.T) {
	bed := testbed.Attach(t)
	ctx := chromium(t)
	ctx, cancel := context.WithTimeout(ctx, 6*time.Minute)
	defer cancel()
	dir := artifactDir(t, bed)

	topic := testbed.Unique(t, "page")
	group := testbed.Unique(t, "g")
	const parts = 3
	bed.A.CreateTopic(t, topic, parts, nil)
	bed.A.Produce(t, seqRecords(topic, parts, 0, 300))
	offs := map[rdkafka.TP]rdkafka.OffsetMeta{}
	for p := 0; p < parts; p++ {
		offs[rdkafka.TP{Topic: topic, Partition: int32(p)}] = rdkafka.OffsetMeta{Offset: 60}
	}
	if err := bed.A.Admin(t).AlterGroupOffsets(context.Background(), group, offs); err != nil {
		t.Fatal(err)
	}
	// B through its SASL listener with the bed's SCRAM secret: the page and its JSON must never
	// show it (the replicator and the page's background readings log in with it).
	props := writeProps(t, "clusters = A, B", "A->B.enabled = true", "A->B.topics = "+regexp.QuoteMeta(topic), "groups = "+regexp.QuoteMeta(group),
		"B.bootstrap.servers = "+bed.B.SASL, "B.security.protocol = SASL_PLAINTEXT", "B.sasl.mechanism = SCRAM-SHA-512",
		`B.sasl.jaas.config = org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="`+bedSecret+`";`)
	p := startKMM(t, "replicate", props, "--listen", "127.0.0.1:0")
	base := listenBase(t, p)
	remote := "A." + topic
	waitCount(t, bed.B, remote, parts, 300, time.Minute)
	flowLabels := []string{`source="A"`, `target="B"`}       // the flow: the page sums its partitions (heartbeats topics too)
	labels := append(flowLabels[:2:2], `topic="`+remote+`"`) // the test's topic

	// A running flow: its name, state, clusters; lag and records equal to /metrics.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(`section.flow`))); err != nil {
		t.Fatalf("loading %s/ in chromium: %v", base, err)
	}
	var pf pageFlow
	testbed.Eventually(t, 60*time.Second, func() error {
		pf = readPage(t, ctx, "A->B")
		lag, recs := metricTotal(t, base, "kmm_replication_lag_records", flowLabels...), metricTotal(t, base, "kmm_mirror_source_record_count_total", flowLabels...)
		mine := metricSeries(t, base, "kmm_mirror_source_record_count_total", labels...)
		switch {
		case !pf.Found || pf.State != "REPLICATING" || pf.Health != "OK" || pf.Clusters["A"] != "UP" || pf.Clusters["B"] != "UP":
			return fmt.Errorf("page: %+v", pf)
		case pf.Lag != fmt.Sprint(lag) || pf.Total != fmt.Sprint(recs) || sumOf(mine) != 300:
			return fmt.Errorf("page lag %q, records %q; /metrics lag %d, records %d (%v of the test's topic)", pf.Lag, pf.Total, lag, recs, mine)
		case strings.ReplaceAll(pf.LagText, ",", "") != pf.Lag:
			return fmt.Errorf("the lag shown (%q) is not its value (%q)", pf.LagText, pf.Lag)
		case !strings.HasPrefix(pf.Freshness, "Live: updated every 2 s"):
			return fmt.Errorf("freshness line: %q", pf.Freshness)
		}
		return nil
	})
	t.Logf("page: %s %s, clusters %v, lag %s records (= /metrics), %s records copied", pf.State, pf.Health, pf.Clusters, pf.Lag, pf.Total)

	// Fail over now: the numbers `kmm lag --group` prints, computed in the background.
	testbed.Eventually(t, 90*time.Second, func() error {
		pf = readPage(t, ctx, "A->B")
		if pf.Failover != "ok" || pf.Groups[group] == "" {
			return fmt.Errorf("failover-now section: %s, groups %v", pf.Failover, pf.Groups)
		}
		r := Run(t, "lag", props, "--group", group, "-o", "json")
		if r.Code != 0 {
			return fmt.Errorf("kmm lag --group: exit %d\n%s", r.Code, r.Stderr)
		}
		var lg struct {
			Items []struct {
				LagRecords int64 `json:"lag_records"`
			} `json:"items"`
			Groups []struct {
				Group       string `json:"group"`
				WouldReread *int64 `json:"failover_would_reread"` // null: not known
			} `json:"groups"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &lg); err != nil {
			return err
		}
		var notOnT, reread int64
		for _, it := range lg.Items {
			notOnT += it.LagRecords
		}
		for _, g := range lg.Groups {
			if g.Group == group && g.WouldReread != nil {
				reread += *g.WouldReread
			}
		}
		pf = readPage(t, ctx, "A->B")
		if pf.NotOnT != fmt.Sprint(notOnT) || pf.Groups[group] != fmt.Sprint(reread) || len(lg.Groups) != parts {
			return fmt.Errorf("page: %s records not on B, group re-reads %v; kmm lag --group: %d, %d (%d rows)", pf.NotOnT, pf.Groups, notOnT, reread, len(lg.Groups))
		}
		return nil
	})
	t.Logf("fail over now: %s records not on B, group %s would re-read %s (= kmm lag --group)", pf.NotOnT, group, pf.Groups[group])
	noSecretOnPage(t, ctx, base)
	screenshot(t, ctx, filepath.Join(dir, "status-page-running.png"))

	// The target's broker dies: the page says so within 15 s, by itself.
	killed := bed.KillBroker(t, "B")
	down := true
	defer func() {
		if down {
			bed.Restart(t, "B")
		}
	}()
	// Within 15 s the page says B is not answering (NO ANSWER, with the cause, after a few
	// seconds), and DOWN once the replicator declares it (10 s without a usable connection).
	var noAnswer time.Duration
	testbed.Eventually(t, 15*time.Second-time.Since(killed), func() error {
		pf = readPage(t, ctx, "A->B")
		if pf.Clusters["B"] != "NO ANSWER" && pf.Clusters["B"] != "DOWN" {
			return fmt.Errorf("%s after the kill the page says B %s, flow %s", time.Since(killed).Round(100*time.Millisecond), pf.Clusters["B"], pf.Health)
		}
		noAnswer = time.Since(killed)
		return nil
	})
	testbed.Eventually(t, 25*time.Second-time.Since(killed), func() error {
		pf = readPage(t, ctx, "A->B")
		if pf.Clusters["B"] != "DOWN" || pf.Health != "DOWN" {
			return fmt.Errorf("%s after the kill the page says B %s, flow %s", time.Since(killed).Round(100*time.Millisecond), pf.Clusters["B"], pf.Health)
		}
		return nil
	})
	t.Logf("the page said B was not answering %s and DOWN %s after the kill", noAnswer.Round(100*time.Millisecond), time.Since(killed).Round(100*time.Millisecond))

	// Still readable, with numbers: records keep arriving on A and wait; the page's lag is
	// /metrics' lag, partition by partition. (The replicator's control loop, which reads the
	// source ends, may wait out a progress store to the dead target first: up to 30 s,
	// commitTimeout; the page says how old the ends are meanwhile.)
	bed.A.Produce(t, seqRecords(topic, parts, 300, 60))
	testbed.Eventually(t, 90*time.Second, func() error {
		lag := metricSeries(t, base, "kmm_replication_lag_records", labels...)
		pf = readPage(t, ctx, "A->B")
		if total := metricTotal(t, base, "kmm_replication_lag_records", flowLabels...); sumOf(lag) != 60 || pf.Lag != fmt.Sprint(total) {
			return fmt.Errorf("page lag %q, /metrics %d (%v of the test's topic)", pf.Lag, total, lag)
		}
		for p, v := range lag {
			if pf.Parts[topic+"/"+p] != fmt.Sprint(v) {
				return fmt.Errorf("partition %s: page %q, /metrics %d", p, pf.Parts[topic+"/"+p], v)
			}
		}
		if pf.Failover != "stale" || !strings.Contains(pf.Freshness, "Live") {
			return fmt.Errorf("failover-now %q, freshness %q", pf.Failover, pf.Freshness)
		}
		if len(pf.EventTypes) == 0 || pf.EventTypes[0] != "cluster_down" {
			return fmt.Errorf("events: %v", pf.EventTypes)
		}
		return nil
	})
	t.Logf("during the outage: lag %s records (= /metrics, per partition too), events %v", pf.Lag, pf.EventTypes)
	noSecretOnPage(t, ctx, base)
	screenshot(t, ctx, filepath.Join(dir, "status-page-target-down.png"))

	// Scripts off: the page is a complete snapshot with a refresh link.
	nctx, ncancel := chromedp.NewContext(ctx)
	defer ncancel()
	if _, err := chromedp.Call(nctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(nctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(`section.flow`))); err != nil {
		t.Fatal(err)
	}
	href, err := chromedp.Run(nctx, chromedp.AttributeValue(chromedp.CSS(`#freshness a`), "href"))
	if err != nil {
		t.Fatal(err)
	}
	refresh := href.Value
	// Scripts on again to read the DOM; the page's own script did not run (it was not loaded).
	if _, err := chromedp.Call(nctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false}); err != nil {
		t.Fatal(err)
	}
	st := readPage(t, nctx, "A->B")
	lag := metricTotal(t, base, "kmm_replication_lag_records", flowLabels...)
	if st.Scripted || !strings.HasPrefix(st.Freshness, "Snapshot of") || refresh != "./" || st.Lag != fmt.Sprint(lag) || st.Clusters["B"] != "DOWN" {
		t.Errorf("with scripts off: %+v (refresh link %q), /metrics lag %v", st, refresh, lag)
	}
	ncancel()

	// B returns: the page says UP again and the lag goes back to 0.
	bed.Restart(t, "B")
	down = false
	testbed.Eventually(t, 90*time.Second, func() error {
		pf = readPage(t, ctx, "A->B")
		if pf.Clusters["B"] != "UP" || pf.Health != "OK" || pf.Lag != "0" {
			return fmt.Errorf("after the restart: %+v", pf)
		}
		return nil
	})
	if code := p.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Fatalf("exit %d\n%s", code, tail(p.Stderr(), 20))
	}
	// kmm gone: the open page says it is not updating (and keeps the last state readable).
	testbed.Eventually(t, 15*time.Second, func() error {
		if pf = readPage(t, ctx, "A->B"); !strings.HasPrefix(pf.Freshness, "NOT UPDATING: kmm does not answer") || !pf.Found {
			return fmt.Errorf("after kmm stopped: %q", pf.Freshness)
		}
		return nil
	})
	t.Logf("kmm stopped: %s", pf.Freshness)
}
