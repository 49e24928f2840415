package e2e

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// Outage tests: the only broker of the target, then of the source, is killed with SIGKILL
// while records flow. They check what an on-call engineer relies on: /readyz says which
// cluster is unreachable, since when and why, within 30 s (and /healthz stays 200); the flow
// resumes by itself when the broker is back; a SIGTERM during the outage ends the process
// within --shutdown-timeout with a documented exit code and message; and no record of the
// source is missing on the target afterwards.

const (
	outageParts    = 3
	outageRate     = 2500 // records per second produced to each source topic throughout
	outageShutdown = 12 * time.Second
)

// outageKMM starts `kmm replicate --listen` for topic (A->B) and returns the process and the
// base URL of its endpoint.
func outageKMM(t *testing.T, props string) (*proc, string) {
	t.Helper()
	p := startKMM(t, "replicate", props, "--listen", "127.0.0.1:0", "--shutdown-timeout", outageShutdown.String(), "--progress-interval", "5s")
	return p, listenBase(t, p)
}

// listenBase waits for a kmm started with --listen 127.0.0.1:0 to say where it serves and
// returns that base URL.
func listenBase(t *testing.T, p *proc) string {
	t.Helper()
	var base string
	addr := regexp.MustCompile(`serving http://(127\.0\.0\.1:\d+)`)
	testbed.Eventually(t, 60*time.Second, func() error {
		if m := addr.FindStringSubmatch(p.Stderr()); m != nil {
			base = "http://" + m[1]
			return nil
		}
		return fmt.Errorf("no listen address on stderr yet")
	})
	return base
}

func httpGet(base, path string) (int, string, error) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(base + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// metricValue reads one sample (exact label set as printed) from /metrics.
func metricValue(base, series string) (float64, error) {
	_, body, err := httpGet(base, "/metrics")
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, fmt.Errorf("no %s in /metrics", series)
}

// assertOutageVisible checks, within 30 s of the kill, everything that must show that cluster
// down (needed by flow src->dst of the process at base) is unreachable, and returns the /readyz
// body.
func assertOutageVisible(t *testing.T, base, props, src, dst, down, bootstrap, cause string, killed time.Time) string {
	t.Helper()
	up := src
	if down == src {
		up = dst
	}
	var body string
	testbed.Eventually(t, 30*time.Second-time.Since(killed), func() error {
		code, b, err := httpGet(base, "/readyz")
		if err != nil {
			return err
		}
		body = b
		if code != 503 {
			return fmt.Errorf("/readyz = %d %s", code, b)
		}
		for _, want := range []string{fmt.Sprintf("cluster %s (%s) is unreachable since ", down, bootstrap), cause, `"up":false`} {
			if !strings.Contains(b, want) {
				return fmt.Errorf("/readyz body lacks %q: %s", want, b)
			}
		}
		return nil
	})
	t.Logf("%s->%s: /readyz 503 %s after the broker was killed or paused: %s", src, dst, time.Since(killed).Round(100*time.Millisecond), strings.TrimSpace(body))
	var rd struct {
		Clusters []struct {
			Cluster string `json:"cluster"`
			Up      bool   `json:"up"`
			Since   string `json:"unreachable_since"`
			Cause   string `json:"cause"`
		} `json:"clusters"`
	}
	if err := json.Unmarshal([]byte(body), &rd); err != nil {
		t.Fatal(err)
	}
	for _, c := range rd.Clusters {
		since, err := time.Parse(time.RFC3339, c.Since)
		switch {
		case c.Cluster == up && !c.Up:
			t.Errorf("cluster %s reported down: %+v", up, c)
		case c.Cluster == down && (err != nil || since.Before(killed.Add(-time.Second).Truncate(time.Second)) || since.After(killed.Add(15*time.Second))):
			t.Errorf("cluster %s: unreachable since %q, killed at %s", down, c.Since, killed.UTC().Format(time.RFC3339))
		}
	}
	if code, b, err := httpGet(base, "/healthz"); err != nil || code != 200 {
		t.Errorf("/healthz = %d %s %v during the outage, want 200 (the process is alive and retrying)", code, b, err)
	}
	for series, want := range map[string]float64{`kmm_cluster_up{cluster="` + down + `"}`: 0, `kmm_cluster_up{cluster="` + up + `"}`: 1} {
		if v, err := metricValue(base, series); err != nil || v != want {
			t.Errorf("%s = %v (%v), want %v", series, v, err, want)
		}
	}
	_, st, err := httpGet(base, "/connectors?expand=status")
	if err != nil {
		t.Fatal(err)
	}
	var conns map[string]struct {
		Status struct {
			Connector struct{ State, Trace string } `json:"connector"`
			Tasks     []struct {
				ID    int    `json:"id"`
				State string `json:"state"`
				Trace string `json:"trace"`
			} `json:"tasks"`
		} `json:"status"`
	}
	if err := json.Unmarshal([]byte(st), &conns); err != nil {
		t.Fatalf("%v: %s", err, st)
	}
	sc := conns[src+"->"+dst+".MirrorSourceConnector"].Status
	if sc.Connector.State != "RUNNING" || len(sc.Tasks) != 1 || sc.Tasks[0].State != "RUNNING" ||
		!strings.HasPrefix(sc.Tasks[0].Trace, "stalled: cluster "+down+" (") {
		t.Errorf("source connector status during the outage: %s", st)
	}
	r := Run(t, "status", props, "--endpoint", base)
	if r.Code != 3 || !strings.Contains(r.Stdout, "MirrorSourceConnector is stalled: cluster "+down) {
		t.Errorf("kmm status --endpoint during the outage: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	return body
}

// checkOutageLogs: one WARN when the cluster went down, reminders at most every 30 s, no
// line per retry, nothing of librdkafka's own format.
func checkOutageLogs(t *testing.T, stderr, down string, outage time.Duration) {
	t.Helper()
	var downs, reminders, other int
	for _, l := range strings.Split(stderr, "\n") {
		switch {
		case strings.HasPrefix(l, "%"):
			t.Errorf("raw librdkafka log line on stderr: %s", l)
		case strings.Contains(l, "cluster "+down+" (") && strings.Contains(l, "is unreachable since"):
			downs++
		case strings.Contains(l, "still unreachable"):
			reminders++
		case strings.Contains(l, "level=WARN") && !strings.Contains(l, "flow stopped"):
			other++
		}
	}
	if downs < 1 || reminders > int(outage/(30*time.Second))+1 || other > 0 {
		t.Errorf("outage logs: %d 'unreachable' WARN(s) (want one per outage), %d reminder(s) in %s, %d other WARN(s):\n%s",
			downs, reminders, outage.Round(time.Second), other, tail(stderr, 40))
	}
}

// compareCopy is a kcheck-style comparison of every partition of topic on src with remote on
// dst: each source record (by its sequence number) must be on dst in the same partition, first
// copies in source order. It returns missing and duplicate counts.
func compareCopy(t *testing.T, src testbed.Cluster, topic string, dst testbed.Cluster, remote string, parts int) (missing, dups, total int) {
	t.Helper()
	read := func(c testbed.Cluster, name string) [][]uint64 {
		var tps []rdkafka.TP
		for p := 0; p < parts; p++ {
			tps = append(tps, rdkafka.TP{Topic: name, Partition: int32(p)})
		}
		ends, err := c.Admin(t).ListOffsets(context.Background(), tps, rdkafka.Latest)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range ends {
			n += int(e.Offset)
		}
		out := make([][]uint64, parts)
		for _, r := range c.ConsumeN(t, name, parts, n, 3*time.Minute) {
			out[r.Partition] = append(out[r.Partition], binary.BigEndian.Uint64(r.Value))
		}
		return out
	}
	return compareSeqs(t, read(src, topic), read(dst, remote), dst.Name)
}

// compareSeqs compares, per partition, the sequence numbers of the source records (want) with
// those of their copies (got): source records without a copy, extra copies, and first copies
// out of source order (an error).
func compareSeqs(t *testing.T, want, got [][]uint64, dst string) (missing, dups, total int) {
	t.Helper()
	for p := range want {
		seen := map[uint64]int{}
		var firsts []uint64
		for _, s := range got[p] {
			if seen[s]++; seen[s] == 1 {
				firsts = append(firsts, s)
			} else {
				dups++
			}
		}
		total += len(want[p])
		i := 0
		for n, s := range want[p] {
			if seen[s] == 0 {
				if missing++; missing <= 10 {
					t.Logf("partition %d: record %d (the %d-th of %d on the source) is not on %s", p, s, n, len(want[p]), dst)
				}
				continue
			}
			for i < len(firsts) && firsts[i] != s {
				i++
			}
			if i == len(firsts) {
				t.Errorf("partition %d: record %d is on %s out of source order", p, s, dst)
				return
			}
		}
	}
	return missing, dups, total
}

// catchUp runs replicate until remote holds every record of topic, then stops it gracefully
// (exit 0) and compares: nothing may be missing.
func catchUp(t *testing.T, props string, src, dst testbed.Cluster, topic string) {
	t.Helper()
	remote := src.Name + "." + topic
	tps := func(name string) []rdkafka.TP {
		var out []rdkafka.TP
		for i := 0; i < outageParts; i++ {
			out = append(out, rdkafka.TP{Topic: name, Partition: int32(i)})
		}
		return out
	}
	// A record that reaches the source after the ends below were read (a load producer's
	// request still on the wire when it was closed) is not the catch-up run's to copy: the run
	// is repeated until the source ends it caught up to are still the ends after it stopped.
	for round := 1; ; round++ {
		ends, grew := catchUpRound(t, props, src, dst, topic, tps)
		if !grew {
			break
		}
		if round == 3 {
			t.Fatalf("the source %s kept growing during %d catch-up runs (ends before the last: %v)", topic, round, ends)
		}
		t.Logf("catch-up run %d: the source %s grew while it ran (ends it caught up to: %v); running it again", round, topic, ends)
	}
	missing, dups, total := compareCopy(t, src, topic, dst, remote, outageParts)
	t.Logf("compare %s:%s -> %s:%s: %d source records, %d missing, %d duplicates", src.Name, topic, dst.Name, remote, total, missing, dups)
	if missing != 0 {
		t.Fatalf("%d of %d source records missing on the target", missing, total)
	}
}

// catchUpRound is one catch-up run of catchUp: it reads the source ends, runs replicate until
// the target acknowledged every record below them, stops it (exit 0), and says whether the
// source ends moved meanwhile.
func catchUpRound(t *testing.T, props string, src, dst testbed.Cluster, topic string, tps func(string) []rdkafka.TP) (map[rdkafka.TP]rdkafka.OffsetResult, bool) {
	t.Helper()
	// A broker just restarted or resumed may take a while to lead its partitions again.
	remote := src.Name + "." + topic
	var ends map[rdkafka.TP]rdkafka.OffsetResult
	for _, c := range []struct {
		cl    testbed.Cluster
		topic string
	}{{dst, remote}, {src, topic}} {
		a := c.cl.Admin(t)
		testbed.Eventually(t, 2*time.Minute, func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			var err error
			ends, err = a.ListOffsets(ctx, tps(c.topic), rdkafka.Latest)
			return err
		})
	}
	// Done when the target acknowledged the last source record of every partition (a count
	// would be fooled by the duplicates an outage leaves).
	p, base := outageKMM(t, props)
	testbed.Eventually(t, 3*time.Minute, func() error {
		for tp, end := range ends {
			if end.Offset == 0 {
				continue
			}
			series := fmt.Sprintf(`kmm_replication_acked_offset{partition="%d",source="%s",target="%s",topic="%s"}`, tp.Partition, src.Name, dst.Name, remote)
			if v, err := metricValue(base, series); err != nil || int64(v) < end.Offset-1 {
				return fmt.Errorf("%s = %v (%v), source end %d", series, v, err, end.Offset)
			}
		}
		return nil
	})
	if code := p.stop(t, syscall.SIGTERM, outageShutdown+20*time.Second); code != 0 {
		t.Fatalf("catch-up run: exit %d\n%s", code, tail(p.Stderr(), 20))
	}
	after, err := src.Admin(t).ListOffsets(context.Background(), tps(topic), rdkafka.Latest)
	if err != nil {
		t.Fatal(err)
	}
	for tp, e := range after {
		if e.Offset != ends[tp].Offset {
			return ends, true
		}
	}
	return ends, false
}

// tailFrom returns s from the line holding marker on (the last 20 lines without one).
func tailFrom(s, marker string) string {
	if i := strings.Index(s, marker); i >= 0 {
		if j := strings.LastIndexByte(s[:i], '\n'); j >= 0 {
			return s[j+1:]
		}
		return s
	}
	return tail(s, 20)
}

// stopTimed sends SIGTERM and returns the exit code and how long the process took to end.
func stopTimed(t *testing.T, p *proc, within time.Duration) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	code := p.stop(t, syscall.SIGTERM, within)
	return code, time.Since(start)
}

// outageFlow is one replicate process of the outage tests, copying topic from src to dst
// under load.
type outageFlow struct {
	src, dst testbed.Cluster
	topic    string
	props    string
	load     *testbed.Load
	p        *proc
	base     string
}

func startOutageFlow(t *testing.T, src, dst testbed.Cluster, prefix string) *outageFlow {
	t.Helper()
	f := &outageFlow{src: src, dst: dst, topic: testbed.Unique(t, prefix)}
	src.CreateTopic(t, f.topic, outageParts, nil)
	flow := src.Name + "->" + dst.Name
	f.props = writeProps(t, "clusters = "+src.Name+", "+dst.Name, flow+".enabled = true", flow+".topics = "+regexp.QuoteMeta(f.topic))
	f.load = src.StartLoad(t, f.topic, outageParts, outageRate)
	f.p, f.base = outageKMM(t, f.props)
	return f
}

// TestReplicateTargetBrokerKilled: B, the target of A->B and C->B, is killed under load. Both
// processes show the outage; the A->B one is stopped during it (bounded, exit 5, message);
// the C->B one resumes by itself when B is back. Nothing is missing on B afterwards.
func TestReplicateTargetBrokerKilled(t *testing.T) {
	bed := testbed.Attach(t)
	stopped := startOutageFlow(t, bed.A, bed.B, "tkill")
	resumes := startOutageFlow(t, bed.C, bed.B, "tkill")
	waitCount(t, bed.B, "A."+stopped.topic, outageParts, 20_000, 2*time.Minute)
	waitCount(t, bed.B, "C."+resumes.topic, outageParts, 20_000, 2*time.Minute)

	killed := bed.KillBroker(t, "B")
	down := true
	defer func() {
		if down {
			bed.Restart(t, "B")
		}
	}()
	refused := "connection refused: Connect to ipv4#" + bed.B.Bootstrap + " failed: Connection refused"
	assertOutageVisible(t, stopped.base, stopped.props, "A", "B", "B", bed.B.Bootstrap, refused, killed)
	assertOutageVisible(t, resumes.base, resumes.props, "C", "B", "B", bed.B.Bootstrap, refused, killed)
	// Records keep arriving on A and none is delivered: the stall gauge grows.
	var stall float64
	testbed.Eventually(t, 30*time.Second, func() error {
		v, err := metricValue(stopped.base, `kmm_flow_stalled_seconds{source="A",target="B"}`)
		if stall = v; err != nil || v < 10 {
			return fmt.Errorf("kmm_flow_stalled_seconds = %v (%v)", v, err)
		}
		return nil
	})
	t.Logf("kmm_flow_stalled_seconds{A->B} = %v %s after the kill", stall, time.Since(killed).Round(100*time.Millisecond))

	code, took := stopTimed(t, stopped.p, outageShutdown+30*time.Second)
	t.Logf("target down: SIGTERM -> exit %d after %s (--shutdown-timeout %s)", code, took.Round(100*time.Millisecond), outageShutdown)
	stderr := stopped.p.Stderr()
	t.Logf("stderr of the stop:\n%s", tailFrom(stderr, "terminated: draining"))
	if code != 5 || took > outageShutdown+5*time.Second {
		t.Fatalf("SIGTERM with the target down: exit %d after %s, want exit 5 within %s + 5s:\n%s", code, took, outageShutdown, tail(stderr, 20))
	}
	for _, want := range []string{"in flight to B were not acknowledged", "copied again", "kmm: error: stopped after"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stop message lacks %q:\n%s", want, tail(stderr, 20))
		}
	}
	outage := time.Since(killed)
	checkOutageLogs(t, stderr, "B", outage)

	// Recovery by itself: B returns, C->B resumes without a restart and /readyz is 200 again.
	bed.Restart(t, "B")
	down = false
	restarted := time.Now()
	testbed.Eventually(t, 90*time.Second, func() error {
		code, b, err := httpGet(resumes.base, "/readyz")
		if err != nil || code != 200 {
			return fmt.Errorf("/readyz = %d %s %v", code, b, err)
		}
		return nil
	})
	t.Logf("C->B: /readyz 200 again %s after the broker restart", time.Since(restarted).Round(100*time.Millisecond))
	if !strings.Contains(resumes.p.Stderr(), "cluster B ("+bed.B.Bootstrap+") is reachable again after ") {
		t.Errorf("no INFO line saying B is back:\n%s", tail(resumes.p.Stderr(), 20))
	}
	sent := resumes.load.Sent()
	waitCount(t, bed.B, "C."+resumes.topic, outageParts, int(sent), 2*time.Minute)
	checkOutageLogs(t, resumes.p.Stderr(), "B", time.Since(killed))
	stopped.load.Stop()
	resumes.load.Stop()
	if code := resumes.p.stop(t, syscall.SIGTERM, outageShutdown+20*time.Second); code != 0 {
		t.Fatalf("C->B after the outage: exit %d\n%s", code, tail(resumes.p.Stderr(), 20))
	}
	catchUp(t, stopped.props, bed.A, bed.B, stopped.topic)
	catchUp(t, resumes.props, bed.C, bed.B, resumes.topic)
}

// TestReplicateSourceBrokerKilled: A, the source of A->B and A->C, is killed under load. The
// A->B process is stopped during the outage: B is up, so its drain completes (exit 0); the
// A->C one resumes by itself when A is back. Nothing is missing afterwards.
func TestReplicateSourceBrokerKilled(t *testing.T) {
	bed := testbed.Attach(t)
	stopped := startOutageFlow(t, bed.A, bed.B, "skill")
	resumes := startOutageFlow(t, bed.A, bed.C, "skill")
	waitCount(t, bed.B, "A."+stopped.topic, outageParts, 20_000, 2*time.Minute)
	waitCount(t, bed.C, "A."+resumes.topic, outageParts, 20_000, 2*time.Minute)

	killed := bed.KillBroker(t, "A")
	down := true
	defer func() {
		if down {
			bed.Restart(t, "A")
		}
	}()
	refused := "connection refused: Connect to ipv4#" + bed.A.Bootstrap + " failed: Connection refused"
	assertOutageVisible(t, stopped.base, stopped.props, "A", "B", "A", bed.A.Bootstrap, refused, killed)
	assertOutageVisible(t, resumes.base, resumes.props, "A", "C", "A", bed.A.Bootstrap, refused, killed)

	code, took := stopTimed(t, stopped.p, outageShutdown+30*time.Second)
	t.Logf("source down: SIGTERM -> exit %d after %s (--shutdown-timeout %s)", code, took.Round(100*time.Millisecond), outageShutdown)
	stderr := stopped.p.Stderr()
	t.Logf("stderr of the stop:\n%s", tailFrom(stderr, "terminated: draining"))
	if code != 0 || took > outageShutdown+5*time.Second || !strings.Contains(stderr, "drained in ") {
		t.Fatalf("SIGTERM with the source down: exit %d after %s, want 0 within %s + 5s:\n%s", code, took, outageShutdown, tail(stderr, 20))
	}
	checkOutageLogs(t, stderr, "A", time.Since(killed))

	bed.Restart(t, "A")
	down = false
	restarted := time.Now()
	testbed.Eventually(t, 90*time.Second, func() error {
		code, b, err := httpGet(resumes.base, "/readyz")
		if err != nil || code != 200 {
			return fmt.Errorf("/readyz = %d %s %v", code, b, err)
		}
		return nil
	})
	t.Logf("A->C: /readyz 200 again %s after the broker restart", time.Since(restarted).Round(100*time.Millisecond))
	if !strings.Contains(resumes.p.Stderr(), "cluster A ("+bed.A.Bootstrap+") is reachable again after ") {
		t.Errorf("no INFO line saying A is back:\n%s", tail(resumes.p.Stderr(), 20))
	}
	// Records produced after the restart reach C without a restart of kmm.
	after := resumes.load.Sent() + 5000
	testbed.Eventually(t, 2*time.Minute, func() error {
		if resumes.load.Sent() < after {
			return fmt.Errorf("load sent %d, waiting for %d", resumes.load.Sent(), after)
		}
		return nil
	})
	waitCount(t, bed.C, "A."+resumes.topic, outageParts, int(after), 2*time.Minute)
	checkOutageLogs(t, resumes.p.Stderr(), "A", time.Since(killed))
	stopped.load.Stop()
	resumes.load.Stop()
	if code := resumes.p.stop(t, syscall.SIGTERM, outageShutdown+20*time.Second); code != 0 {
		t.Fatalf("A->C after the outage: exit %d\n%s", code, tail(resumes.p.Stderr(), 20))
	}
	catchUp(t, stopped.props, bed.A, bed.B, stopped.topic)
	catchUp(t, resumes.props, bed.A, bed.C, resumes.topic)
}

// TestReplicateTargetBrokerHung: a hung target broker (SIGSTOP: connections stay open,
// nothing answers) is the harder case for a stop bound, since requests hang instead of
// failing. SIGTERM 2 s into the second pause, before B is known to be down, waits for it up to
// the bound and exits 5 within it; a second signal to another process aborts it at once.
func TestReplicateTargetBrokerHung(t *testing.T) {
	bed := testbed.Attach(t)
	f := startOutageFlow(t, bed.A, bed.B, "thung")
	g := startOutageFlow(t, bed.C, bed.B, "thung")
	waitCount(t, bed.B, "A."+f.topic, outageParts, 20_000, 2*time.Minute)
	waitCount(t, bed.B, "C."+g.topic, outageParts, 20_000, 2*time.Minute)

	resume := bed.PauseBroker(t, "B")
	defer resume()
	paused := time.Now()
	assertOutageVisible(t, f.base, f.props, "A", "B", "B", bed.B.Bootstrap, "timeout: no answer to a metadata request within 5s", paused)
	resume()
	testbed.Eventually(t, 60*time.Second, func() error {
		code, b, err := httpGet(f.base, "/readyz")
		if err != nil || code != 200 {
			return fmt.Errorf("/readyz = %d %s %v", code, b, err)
		}
		return nil
	})
	checkOutageLogs(t, f.p.Stderr(), "B", time.Since(paused))

	resume = bed.PauseBroker(t, "B")
	defer resume()
	time.Sleep(2 * time.Second)
	// C->B: two signals, one second apart: the second aborts the drain at once.
	abortStart := time.Now()
	_ = g.p.cmd.Process.Signal(syscall.SIGTERM)
	abortEnd := make(chan time.Time, 1)
	go func() {
		time.Sleep(time.Second)
		_ = g.p.cmd.Process.Signal(syscall.SIGTERM)
		<-g.p.done
		abortEnd <- time.Now()
	}()
	code, took := stopTimed(t, f.p, outageShutdown+30*time.Second)
	t.Logf("target hung: SIGTERM -> exit %d after %s (--shutdown-timeout %s)", code, took.Round(100*time.Millisecond), outageShutdown)
	stderr := f.p.Stderr()
	t.Logf("stderr of the stop:\n%s", tailFrom(stderr, "terminated: draining"))
	if code != 5 || took > outageShutdown+5*time.Second || !strings.Contains(stderr, "in flight to B were not acknowledged") {
		t.Fatalf("SIGTERM with the target hung: exit %d after %s, want exit 5 within %s + 5s:\n%s", code, took, outageShutdown, tail(stderr, 20))
	}
	select {
	case end := <-abortEnd:
		abortCode, abortTook := g.p.cmd.ProcessState.ExitCode(), end.Sub(abortStart)
		t.Logf("target hung: SIGTERM, SIGTERM 1 s later -> exit %d after %s", abortCode, abortTook.Round(100*time.Millisecond))
		if abortCode != 130 || abortTook > 4*time.Second || !strings.Contains(g.p.Stderr(), "aborted by a second terminated") {
			t.Errorf("second signal: exit %d after %s, want 130 at once:\n%s", abortCode, abortTook, tail(g.p.Stderr(), 10))
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("a second SIGTERM did not end the process:\n%s", tail(g.p.Stderr(), 10))
	}
	resume()
	f.load.Stop()
	g.load.Stop()
	catchUp(t, f.props, bed.A, bed.B, f.topic)
	catchUp(t, g.props, bed.C, bed.B, g.topic)
}
