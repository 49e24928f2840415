package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// These tests need no test bed: they are what an on-call engineer meets with clusters that
// refuse connections (nothing listens on 127.0.0.1:1) and with bad input.

// fmtKnown prints a figure that may be null (not known).
func fmtKnown(p *int64) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

func unreachableProps(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "base.properties")
	if err := os.WriteFile(p, []byte("clusters = A, B\nA.bootstrap.servers = 127.0.0.1:1\nB.bootstrap.servers = 127.0.0.1:1\nA->B.enabled = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// kmm status with every cluster refusing: exit 4 within one connection timeout, the cause
// librdkafka saw in the reasons, no raw librdkafka log lines on stderr.
func TestStatusUnreachableExit4(t *testing.T) {
	props := unreachableProps(t)
	Bin(t) // built before the clock starts
	start := time.Now()
	r := Run(t, "status", props)
	if took := time.Since(start); r.Code != 4 || took > 15*time.Second {
		t.Fatalf("exit %d after %s, want 4 within 15s\n%s\n%s", r.Code, took, r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stdout, "is unreachable: connection refused") {
		t.Errorf("reasons do not name the cause:\n%s", r.Stdout)
	}
	if strings.Contains(r.Stderr, "%3|") || strings.Contains(r.Stderr, "|FAIL|") {
		t.Errorf("raw librdkafka log lines on stderr:\n%s", r.Stderr)
	}
}

// Ctrl-C ends status, lag, translate-offsets, verify and failover within a second with exit
// 130, while they wait for clusters that do not answer.
func TestCtrlCEndsReadCommands(t *testing.T) {
	props := unreachableProps(t)
	for _, args := range [][]string{{"status", props}, {"lag", props}, {"translate-offsets", props}, {"lag", props, "--watch"}, {"verify", props}, {"failover", props, "--dry-run"}} {
		cmd := exec.Command(Bin(t), args...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		time.Sleep(700 * time.Millisecond) // let it start waiting for the clusters
		sent := time.Now()
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Errorf("%s: still running 5s after SIGINT", args[0])
			continue
		}
		took := time.Since(sent)
		if code := cmd.ProcessState.ExitCode(); code != 130 || took > time.Second {
			t.Errorf("%v: exit %d %s after SIGINT, want 130 within 1s\nstdout %s\nstderr %s", args[:1], code, took, out.String(), errOut.String())
		}
		if out.Len() != 0 {
			t.Errorf("%s: interrupted run printed results: %q", args[0], out.String())
		}
	}
}

// Bad flags and bad files: exit 2 at once with a message, before any connection.
func TestBadInputExit2Fast(t *testing.T) {
	props := unreachableProps(t)
	Bin(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"status", props, "--max-lag-records", "-1"}, "--max-lag-records must be 0 or more"},
		{[]string{"lag", props, "--watch", "--interval", "0s"}, "--interval must be more than 0"},
		{[]string{"replicate", props, "--shutdown-timeout", "-1s"}, "--shutdown-timeout must be 0 or more"},
		{[]string{"translate-offsets", props, "--dry-run"}, "--dry-run only goes with --apply"},
		{[]string{"translate-offsets", props, "--group", "a", "--groups", "a.*"}, "--group and --groups do not go together"},
		{[]string{"translate-offsets", props, "--apply", "--yes"}, "--all-groups"},
		{[]string{"status", props, "--endpoint", "localhost:8083"}, "--endpoint must be an http:// or https:// URL"},
		{[]string{"config", "check", "/dev/zero"}, "is not a regular file"},
		{[]string{"config", "chek", props}, "did you mean 'kmm config check'?"},
	} {
		start := time.Now()
		r := Run(t, c.args...)
		if took := time.Since(start); r.Code != 2 || !strings.Contains(r.Stderr, c.want) || took > 3*time.Second {
			t.Errorf("%v: exit %d after %s, stderr %q; want exit 2 with %q", c.args, r.Code, took, r.Stderr, c.want)
		}
	}
}
