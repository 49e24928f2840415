package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// unreachableFile is a valid MM2 file whose clusters do not answer (nothing listens on port 1).
func unreachableFile(t *testing.T) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "base.properties")
	if err := os.WriteFile(f, []byte("clusters = A, B\nA.bootstrap.servers = 127.0.0.1:1\nB.bootstrap.servers = 127.0.0.1:1\nA->B.enabled = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestFlagsValidatedBeforeConnecting: each bad flag exits 2 with a message naming it, at once
// (the clusters of the file are unreachable: any connection attempt would take seconds).
func TestFlagsValidatedBeforeConnecting(t *testing.T) {
	f := unreachableFile(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"status", f, "--max-lag", "-1"}, "--max-lag-records must be 0 or more"},
		{[]string{"status", f, "--max-heartbeat-age", "-5s"}, "--max-heartbeat-age must be 0 or more"},
		{[]string{"status", f, "--endpoint", "127.0.0.1:8083"}, "--endpoint must be an http:// or https:// URL"},
		{[]string{"lag", f, "--max-lag", "-1"}, "--max-lag-records must be 0 or more"},
		{[]string{"lag", f, "--interval", "0s", "--watch"}, "--interval must be more than 0"},
		{[]string{"replicate", f, "--shutdown-timeout", "-1s"}, "--shutdown-timeout must be 0 or more"},
		{[]string{"replicate", f, "--rate-limit", "10XB"}, `--rate-limit "10XB" is not a rate`},
		{[]string{"translate-offsets", f, "--dry-run"}, "--dry-run only goes with --apply"},
		{[]string{"translate-offsets", f, "--yes", "--group", "g"}, "--yes only goes with --apply"},
		{[]string{"translate-offsets", f, "--group", "g", "--groups", "g.*"}, "--group and --groups do not go together"},
		{[]string{"translate-offsets", f, "--apply", "--yes"}, "add --all-groups"},
		{[]string{"translate-offsets", f, "--all-groups"}, "--all-groups only goes with --apply"},
		{[]string{"status", f, "-o", "yaml"}, "-o must be table or json"},
	} {
		start := time.Now()
		code, out, errOut := run(c.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args[1:], code, out, errOut, c.want)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%v took %s: something connected before validating", c.args, d)
		}
	}
}
