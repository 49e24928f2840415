package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed/kfakebed"
	"github.com/kmmproject/kmm/e2e/testbed/netfault"
	"github.com/kmmproject/kmm/pkg/iostreams"
)

// pairFile is an MM2 file with clusters A and B at the given addresses, A->B enabled and B->A
// (failback's reverse flow) disabled.
func pairFile(t *testing.T, a, b string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "pair.properties")
	body := "clusters = A, B\nA.bootstrap.servers = " + a + "\nB.bootstrap.servers = " + b + "\nA->B.enabled = true\nA->B.topics = .*\nB->A.enabled = false\n"
	if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// Every command that contacts clusters, with both clusters refusing connections (nothing
// listens on their ports): exit 4 within 2 s, every cluster the command needs named once in
// the error as "cluster A (host:port): connection refused", and its bootstrap.servers key in
// the hint; never librdkafka's "no answer within" wait or a cluster named twice.
func TestRefusedClustersExit4Fast(t *testing.T) {
	a, b := netfault.RefusedAddr(t), netfault.RefusedAddr(t)
	f := pairFile(t, a, b)
	both, onlyA, onlyB := []string{"A", "B"}, []string{"A"}, []string{"B"}
	addr := map[string]string{"A": a, "B": b}
	for _, c := range []struct {
		args  []string
		names []string
	}{
		{[]string{"status", f}, both},
		{[]string{"lag", f}, both},
		{[]string{"lag", f, "--group", "g"}, both},
		{[]string{"verify", f}, both},
		{[]string{"translate-offsets", f}, onlyB},
		{[]string{"failover", f, "--dry-run"}, both},
		{[]string{"failover", f, "--mode", "rehearse", "--dry-run"}, both},
		{[]string{"failover", f, "--mode", "emergency", "--dry-run"}, onlyB}, // the source down is what emergency is for
		{[]string{"failback", f, "--yes"}, both},
		{[]string{"config", "explain", f, "--list-topics"}, onlyA},
		{[]string{"replicate", f}, both},
	} {
		io, _, stdout, stderr := iostreams.Test()
		start := time.Now()
		code := Run(context.Background(), append([]string{"kmm"}, c.args...), io)
		took := time.Since(start)
		errOut := stderr.String()
		if code != 4 || took > 2*time.Second {
			t.Errorf("%v: exit %d after %s, want 4 within 2s\nstdout %s\nstderr %s", c.args[:2], code, took, stdout, errOut)
			continue
		}
		errLine := ""
		for _, l := range strings.Split(errOut, "\n") {
			if strings.HasPrefix(l, "kmm: error: ") {
				errLine = l
			}
		}
		for _, n := range c.names {
			want := "cluster " + n + " (" + addr[n] + "): connection refused"
			if strings.Count(errLine, want) != 1 || strings.Count(errLine, "cluster "+n) != 1 {
				t.Errorf("%v: error %q, want %q in it once (and cluster %s no other time)", c.args[:2], errLine, want, n)
			}
			if !strings.Contains(errOut, n+".bootstrap.servers") {
				t.Errorf("%v: the hint does not name %s.bootstrap.servers:\n%s", c.args[:2], n, errOut)
			}
		}
		for _, bad := range []string{"no answer within", "(bootstrap ", "Connection refused (after"} {
			if strings.Contains(errLine, bad) {
				t.Errorf("%v: error %q says %q", c.args[:2], errLine, bad)
			}
		}
	}
}

// A cluster that accepts connections and never answers is waited for up to its bound (kmm's
// 10 s, shortened here to 3 s through the opener): the refusal shortcut does not apply. Both
// clusters are waited for at once and both are named.
func TestSilentClustersKeepTheBound(t *testing.T) {
	a, b := netfault.SilentAddr(t), netfault.SilentAddr(t)
	f := pairFile(t, a, b)
	const bound = 3 * time.Second
	for _, args := range [][]string{{"lag", f}, {"verify", f}, {"failover", f, "--dry-run"}} {
		io, _, stdout, stderr := iostreams.Test()
		start := time.Now()
		code := runWith(context.Background(), append([]string{"kmm"}, args...), io, kfakebed.PingWithin(bound))
		took := time.Since(start)
		errOut := stderr.String()
		if code != 4 || took < bound || took > bound+2*time.Second {
			t.Errorf("%v: exit %d after %s, want 4 after the %s bound (not sooner, one wait for both)\nstdout %s\nstderr %s", args[:1], code, took, bound, stdout, errOut)
		}
		for _, want := range []string{"cluster A (" + a + "): no answer within 3s", "cluster B (" + b + "): no answer within 3s"} {
			if !strings.Contains(errOut, want) {
				t.Errorf("%v: stderr lacks %q:\n%s", args[:1], want, errOut)
			}
		}
	}
}

// kmm status with both clusters down knows no figure of the flow: the table shows "?" where it
// showed 0 (LAG, PARTITIONS, TOPICS ON TARGET) or "never" (the ages), and JSON null (issue 35
// item 6).
func TestStatusUnknownWhenClustersDown(t *testing.T) {
	f := pairFile(t, netfault.RefusedAddr(t), netfault.RefusedAddr(t))
	io, _, stdout, _ := iostreams.Test()
	if code := Run(context.Background(), []string{"kmm", "status", f, "--flow", "A->B"}, io); code != 4 {
		t.Fatalf("exit %d, want 4", code)
	}
	lines := strings.Split(stdout.String(), "\n")
	if f := strings.Fields(lines[1]); len(f) != 8 || f[0] != "A->B" || f[2] != "?" || f[3] != "?" || f[4] != "?" || f[5] != "?" || f[6] != "?" || f[7] != "?" {
		t.Errorf("row %q, want ? for every figure\n%s", lines[1], stdout)
	}
	io, _, stdout, _ = iostreams.Test()
	Run(context.Background(), []string{"kmm", "status", f, "--flow", "A->B", "-o", "json"}, io)
	var env struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &env); err != nil || len(env.Items) != 1 {
		t.Fatalf("%v\n%s", err, stdout)
	}
	for _, k := range []string{"lag_records", "partitions", "topics_matched", "heartbeat_age_ms", "progress_age_ms", "checkpoint_age_ms", "replicators_alive"} {
		if v, ok := env.Items[0][k]; !ok || v != nil {
			t.Errorf("%s = %v (present %v), want null", k, v, ok)
		}
	}
}
