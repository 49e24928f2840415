package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
)

// unitFile reads deploy/systemd/kmm@.service: its [Service] settings (the last assignment wins,
// as in systemd, except Environment which accumulates).
func unitFile(t *testing.T) (map[string]string, []string, string) {
	t.Helper()
	path := filepath.Join(testbed.Root(), "deploy", "systemd", "kmm@.service")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	set, env := map[string]string{}, []string(nil)
	section := ""
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "[") {
			section = line
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || section != "[Service]" {
			continue
		}
		if k == "Environment" {
			env = append(env, v)
		}
		set[k] = v
	}
	return set, env, string(raw)
}

// dashboardMetrics are the metric names the Grafana dashboard's queries use.
func dashboardMetrics(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testbed.Root(), "deploy", "grafana", "kmm-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	name := regexp.MustCompile(`\b(kmm_[a-z0-9_]+|process_[a-z0-9_]+|go_[a-z0-9_]+)\b`)
	var out []string
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			ms := name.FindAllString(q.Expr, -1)
			if len(ms) == 0 {
				t.Errorf("panel %q: query %q names no metric", p.Title, q.Expr)
			}
			for _, m := range ms {
				if !slices.Contains(out, m) {
					out = append(out, m)
				}
			}
		}
	}
	if len(out) < 10 {
		t.Fatalf("the dashboard uses only %d metrics: %v", len(out), out)
	}
	return out
}

// The systemd unit in deploy/ does what it says: systemd-analyze accepts it; its ExecStart, run
// as systemd would (instance name, environment, the instance's .env file), replicates a real
// flow and serves every metric the Grafana dashboard queries; its KillSignal drains with exit 0
// well within TimeoutStopSec; the exit codes it does not restart are the ones kmm gives for a bad
// file (2) and a failed-over flow (3).
func TestDeployUnitAndDashboard(t *testing.T) {
	bed := testbed.Attach(t)
	svc, env, raw := unitFile(t)
	etc := t.TempDir()
	bin := Bin(t)
	if path, err := exec.LookPath("systemd-analyze"); err == nil {
		unit := strings.NewReplacer("/usr/local/bin/kmm", bin, "/etc/kmm", etc).Replace(raw)
		unit = regexp.MustCompile(`(?m)^(User|Group)=.*\n`).ReplaceAllString(unit, "") // no kmm user here
		p := filepath.Join(t.TempDir(), "kmm@drill.service")
		if err := os.WriteFile(p, []byte(unit), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(path, "verify", p).CombinedOutput()
		if err != nil || len(strings.TrimSpace(string(out))) > 0 {
			t.Errorf("systemd-analyze verify: %v\n%s", err, out)
		}
	} else {
		t.Log("systemd-analyze not installed: the unit's syntax is not checked here")
	}

	// The instance "drill": /etc/kmm/drill.properties and drill.env.
	topic := testbed.Unique(t, "unit")
	group := testbed.Unique(t, "unitgrp")
	const parts, n = 2, 2000
	bed.A.CreateTopic(t, topic, parts, nil)
	bed.A.Produce(t, seqRecords(topic, parts, 0, n))
	props := writeProps(t, "A->B.enabled = true", "A->B.topics = "+regexp.QuoteMeta(topic), "groups = "+regexp.QuoteMeta(group),
		"emit.checkpoints.interval.seconds = 1", "B->A.emit.heartbeats.enabled = false")
	raw2, err := os.ReadFile(props)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(etc, "drill.properties"), raw2, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(etc, "drill.env"), []byte("KMM_LISTEN=127.0.0.1:0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, e := range env {
		k, v, _ := strings.Cut(strings.Trim(e, `"`), "=")
		vars[k] = v
	}
	if vars["KMM_LISTEN"] == "" || !strings.HasPrefix(svc["EnvironmentFile"], "-/etc/kmm/%i.env") {
		t.Fatalf("the unit sets no default KMM_LISTEN or no optional per-instance env file: %v %q", vars, svc["EnvironmentFile"])
	}
	vars["KMM_LISTEN"] = "127.0.0.1:0" // from drill.env: a free port here
	exe := svc["ExecStart"]
	exe = strings.NewReplacer("%i", "drill", "/etc/kmm", etc, "/usr/local/bin/kmm", bin).Replace(exe)
	exe = os.Expand(exe, func(k string) string { return vars[k] })
	args := strings.Fields(exe)
	if args[0] != bin {
		t.Fatalf("ExecStart does not run /usr/local/bin/kmm: %q", svc["ExecStart"])
	}
	p := startKMM(t, args[1:]...)
	base := listenBase(t, p)
	for _, line := range strings.Split(strings.TrimSpace(p.Stderr()), "\n") {
		if !strings.HasPrefix(line, "{") {
			t.Errorf("--log-format json from the unit, yet a stderr line is not JSON: %q", line)
			break
		}
	}
	waitCount(t, bed.B, "A."+topic, parts, n, 2*time.Minute)
	setOffsets(t, bed.A, group, topic, 700, 500)

	// Every metric the dashboard queries is in a real scrape (checkpoint metrics once the
	// group's checkpoint is emitted).
	want := dashboardMetrics(t)
	testbed.Eventually(t, 60*time.Second, func() error {
		code, body, err := httpGet(base, "/metrics")
		if err != nil || code != 200 {
			return fmt.Errorf("GET /metrics: %d %v", code, err)
		}
		var missing []string
		for _, m := range want {
			if !regexp.MustCompile(`(?m)^` + m + `[{ ]`).MatchString(body) {
				missing = append(missing, m)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("metrics the dashboard queries but /metrics does not serve: %v", missing)
		}
		return nil
	})

	// systemctl stop: KillSignal, then SIGKILL after TimeoutStopSec.
	sig := map[string]syscall.Signal{"SIGTERM": syscall.SIGTERM, "SIGINT": syscall.SIGINT}[svc["KillSignal"]]
	stopSec, err := strconv.Atoi(svc["TimeoutStopSec"])
	if sig == 0 || err != nil {
		t.Fatalf("KillSignal %q / TimeoutStopSec %q", svc["KillSignal"], svc["TimeoutStopSec"])
	}
	start := time.Now()
	if code := p.stop(t, sig, time.Duration(stopSec)*time.Second); code != 0 {
		t.Fatalf("stop by %s: exit %d, want 0 (a non-zero exit would make systemd restart it)", svc["KillSignal"], code)
	}
	if took := time.Since(start); took > time.Duration(stopSec)*time.Second/2 {
		t.Errorf("the drain took %s, more than half of TimeoutStopSec=%ds", took, stopSec)
	}
	if lost, _ := audit(t, bed.B, "A."+topic, parts, n); lost != 0 {
		t.Fatalf("%d records lost", lost)
	}

	// Not restarted in a loop: a bad file's exit code and a failed-over flow's.
	noRestart := strings.Fields(svc["RestartPreventExitStatus"])
	bad := filepath.Join(etc, "bad.properties")
	if err := os.WriteFile(bad, []byte("clusters = A, B\nA->B.enabled = maybe\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := Run(t, "replicate", bad)
	if r.Code != 2 || !slices.Contains(noRestart, "2") || !slices.Contains(noRestart, "3") || svc["Restart"] != "on-failure" {
		t.Errorf("bad file exit %d; RestartPreventExitStatus %v; Restart=%s\n%s", r.Code, noRestart, svc["Restart"], r.Stderr)
	}
}
