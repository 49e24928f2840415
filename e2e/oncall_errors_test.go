package e2e

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed/netfault"
)

// These tests need no test bed: they run the binary against clusters that refuse connections
// (free loopback ports, taken and closed) or accept them and never answer (a listener of the
// test's), as an on-call engineer meets them (issue 35 items 5, 6 and 9).

// pairProps is an MM2 file with A and B at the given addresses, A->B enabled, B->A disabled.
func pairProps(t *testing.T, a, b string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pair.properties")
	body := "clusters = A, B\nA.bootstrap.servers = " + a + "\nB.bootstrap.servers = " + b + "\nA->B.enabled = true\nA->B.topics = .*\nB->A.enabled = false\n"
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func errorLine(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "kmm: error: ") {
			return l
		}
	}
	return ""
}

// Every command that contacts clusters, both clusters refusing connections: exit 4 within 2 s
// (process start included), each cluster it needs named once as "cluster A (host:port):
// connection refused", never the 10 s wait or a repeated prefix. The commands run at once.
func TestRefusedClustersFast(t *testing.T) {
	a, b := netfault.RefusedAddr(t), netfault.RefusedAddr(t)
	props := pairProps(t, a, b)
	Bin(t) // built before the clocks start
	addr := map[string]string{"A": a, "B": b}
	cmds := []struct {
		args  []string
		names []string
	}{
		{[]string{"status", props}, []string{"A", "B"}},
		{[]string{"lag", props}, []string{"A", "B"}},
		{[]string{"verify", props}, []string{"A", "B"}},
		{[]string{"translate-offsets", props}, []string{"B"}},
		{[]string{"failover", props, "--dry-run"}, []string{"A", "B"}},
		{[]string{"failover", props, "--mode", "emergency", "--dry-run"}, []string{"B"}},
		{[]string{"failback", props, "--yes"}, []string{"A", "B"}},
		{[]string{"config", "explain", props, "--list-topics"}, []string{"A"}},
		{[]string{"replicate", props}, []string{"A", "B"}},
	}
	type res struct {
		r    Result
		took time.Duration
	}
	out := make([]res, len(cmds))
	var wg sync.WaitGroup
	for i, c := range cmds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			r := Run(t, c.args...)
			out[i] = res{r, time.Since(start)}
		}()
	}
	wg.Wait()
	for i, c := range cmds {
		r, took := out[i].r, out[i].took
		name := strings.Join(c.args[:1], " ")
		if r.Code != 4 || took > 2*time.Second {
			t.Errorf("%s: exit %d after %s, want 4 within 2s\n%s", name, r.Code, took, r.Stderr)
			continue
		}
		line := errorLine(r.Stderr)
		for _, n := range c.names {
			want := "cluster " + n + " (" + addr[n] + "): connection refused"
			if strings.Count(line, want) != 1 || strings.Count(line, "cluster "+n) != 1 {
				t.Errorf("%s: %q, want %q once", name, line, want)
			}
			if !strings.Contains(r.Stderr, n+".bootstrap.servers") {
				t.Errorf("%s: the hint does not name %s.bootstrap.servers:\n%s", name, n, r.Stderr)
			}
		}
		if strings.Contains(line, "no answer within") || strings.Contains(line, "(bootstrap ") {
			t.Errorf("%s: %q", name, line)
		}
	}
}

// A cluster that accepts connections and never answers keeps the 10 s bound: exit 4 after 10 s
// (not sooner: nothing refused), "no answer within 10s", both clusters named, one wait for both.
func TestSilentClustersTenSeconds(t *testing.T) {
	a, b := netfault.SilentAddr(t), netfault.SilentAddr(t)
	props := pairProps(t, a, b)
	Bin(t)
	start := time.Now()
	r := Run(t, "lag", props)
	took := time.Since(start)
	if r.Code != 4 || took < 10*time.Second || took > 14*time.Second {
		t.Fatalf("exit %d after %s, want 4 after 10-14s\n%s", r.Code, took, r.Stderr)
	}
	for _, want := range []string{"cluster A (" + a + "): no answer within 10s", "cluster B (" + b + "): no answer within 10s"} {
		if !strings.Contains(errorLine(r.Stderr), want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.Stderr)
		}
	}
}

// With -o json, a failure is one JSON error document on stdout (the human message stays on
// stderr); verify --junit writes a failing test case naming the cause. The case:
// `verify … --junit verify.xml -o json` with a cluster unreachable left stdout empty and
// verify.xml 0 bytes.
func TestJSONErrorDocumentAndJUnit(t *testing.T) {
	a, b := netfault.RefusedAddr(t), netfault.RefusedAddr(t)
	props := pairProps(t, a, b)
	junit := filepath.Join(t.TempDir(), "verify.xml")
	type doc struct {
		SchemaVersion int     `json:"schema_version"`
		Kind          string  `json:"kind"`
		Command       string  `json:"command"`
		ExitCode      int     `json:"exit_code"`
		Class         string  `json:"class"`
		Cause         string  `json:"cause"`
		Hint          *string `json:"hint"`
	}
	for _, c := range []struct {
		args    []string
		command string
		code    int
		class   string
	}{
		{[]string{"verify", props, "--junit", junit, "-o", "json"}, "kmm verify", 4, "unreachable"},
		{[]string{"lag", props, "-o", "json"}, "kmm lag", 4, "unreachable"},
		{[]string{"failover", props, "--dry-run", "-o", "json"}, "kmm failover", 4, "unreachable"},
		{[]string{"translate-offsets", props, "-o", "json"}, "kmm translate-offsets", 4, "unreachable"},
		{[]string{"lag", props, "-o", "json", "--max-lag-records", "-1"}, "kmm lag", 2, "usage"},
	} {
		r := Run(t, c.args...)
		var d doc
		lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
		if r.Code != c.code || len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &d) != nil || d.Kind != "error" || d.SchemaVersion != 1 ||
			d.ExitCode != c.code || d.Class != c.class || d.Command != c.command || d.Cause == "" || (c.class == "unreachable" && d.Hint == nil) {
			t.Errorf("%v: exit %d, stdout %q; want exit %d and one JSON error document (class %s)", c.args, r.Code, r.Stdout, c.code, c.class)
		}
		if c.class == "unreachable" && !strings.Contains(d.Cause, "connection refused") {
			t.Errorf("%v: cause %q", c.args, d.Cause)
		}
		if errorLine(r.Stderr) == "" {
			t.Errorf("%v: no message on stderr: %q", c.args, r.Stderr)
		}
	}
	body, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Failure *struct {
					Message string `xml:"message,attr"`
					Type    string `xml:"type,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(body, &j); err != nil || j.Failures != 1 || len(j.Suites) != 1 || len(j.Suites[0].Cases) != 1 || j.Suites[0].Cases[0].Failure == nil ||
		j.Suites[0].Cases[0].Failure.Type != "unreachable" || !strings.Contains(j.Suites[0].Cases[0].Failure.Message, "cluster A ("+a+"): connection refused") {
		t.Errorf("verify.xml (%v):\n%s", err, body)
	}
}

// kmm status with both clusters down: every figure of the flow is "?" in the table and null in
// JSON, never 0 ("LAG 0", "lag_records": 0 before).
func TestStatusUnknownNotZero(t *testing.T) {
	props := pairProps(t, netfault.RefusedAddr(t), netfault.RefusedAddr(t))
	r := Run(t, "status", props, "--flow", "A->B")
	lines := strings.Split(r.Stdout, "\n")
	if f := strings.Fields(lines[0]); r.Code != 4 || len(f) < 7 || f[6] != "LAG" {
		t.Fatalf("exit %d:\n%s", r.Code, r.Stdout)
	}
	if f := strings.Fields(lines[1]); len(f) != 8 || f[2] != "?" || f[3] != "?" || f[4] != "?" || f[5] != "?" {
		t.Errorf("row %q, want ? for topics, partitions, lag and the heartbeat's age\n%s", lines[1], r.Stdout)
	}
	r = Run(t, "status", props, "--flow", "A->B", "-o", "json")
	var env struct {
		Items []struct {
			Lag        *int64 `json:"lag_records"`
			Partitions *int64 `json:"partitions"`
			Heartbeat  *int64 `json:"heartbeat_age_ms"`
			Alive      *int64 `json:"replicators_alive"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &env); err != nil || r.Code != 4 || len(env.Items) != 1 {
		t.Fatalf("exit %d (%v):\n%s", r.Code, err, r.Stdout)
	}
	if it := env.Items[0]; it.Lag != nil || it.Partitions != nil || it.Heartbeat != nil || it.Alive != nil {
		t.Errorf("lag_records %s, partitions %s, heartbeat_age_ms %s, replicators_alive %s: want null", fmtKnown(it.Lag), fmtKnown(it.Partitions), fmtKnown(it.Heartbeat), fmtKnown(it.Alive))
	}
}
