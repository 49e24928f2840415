package e2e

import (
	"strings"
	"testing"

	"github.com/kmmproject/kmm/e2e/testbed"
)

func TestBinaryVersionHelpAndExitCodes(t *testing.T) {
	r := Run(t, "--version")
	if r.Code != 0 || !strings.Contains(r.Stdout, "librdkafka 2.11.1") {
		t.Fatalf("--version: %+v", r)
	}
	r = Run(t, "--help")
	if r.Code != 0 || !strings.Contains(r.Stdout, "EXIT CODES") || !strings.Contains(r.Stdout, "translate-offsets") {
		t.Fatalf("--help: %+v", r)
	}
	// Every command exists; one that changes clusters wants confirmation before it reads anything.
	r = Run(t, "failback", "mm2.properties")
	if r.Code != 2 || r.Stdout != "" || !strings.Contains(r.Stderr, "needs confirmation") || !strings.Contains(r.Stderr, "--yes") {
		t.Fatalf("failback: %+v", r)
	}
	r = Run(t, "--bogus")
	if r.Code != 2 || !strings.Contains(r.Stderr, "bogus") {
		t.Fatalf("--bogus: %+v", r)
	}
}

// The bed's status command sees the three clusters this run started, and `up` on a running bed
// is a no-op that still reports every cluster ready.
func TestTestbedStatusAndIdempotentUp(t *testing.T) {
	bed := testbed.Attach(t)
	out := testbed.Script(t, "status")
	for _, c := range []string{"A running", "B running", "C running"} {
		if !strings.Contains(out, c) {
			t.Fatalf("status lacks %q:\n%s", c, out)
		}
	}
	out = testbed.Script(t, "up")
	for _, c := range []string{"A " + bed.A.Bootstrap + " cluster_id=", "B " + bed.B.Bootstrap, "C " + bed.C.Bootstrap, "already running"} {
		if !strings.Contains(out, c) {
			t.Fatalf("second up lacks %q:\n%s", c, out)
		}
	}
}
