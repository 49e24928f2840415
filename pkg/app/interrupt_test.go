package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed/kfakebed"
	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/kerr"
)

// TestInterruptExits130 cancels the context (what SIGINT does through app.Main) while the
// command waits for unreachable clusters: it ends within a second with exit 130.
func TestInterruptExits130(t *testing.T) {
	f := unreachableFile(t)
	for _, args := range [][]string{
		{"status", f},
		{"lag", f},
		{"translate-offsets", f},
		{"lag", f, "--watch", "--interval", "1h"},
	} {
		io, _, out, errOut := iostreams.Test()
		ctx, cancel := context.WithCancel(context.Background())
		timer := time.AfterFunc(500*time.Millisecond, cancel)
		start := time.Now()
		code := Run(ctx, append([]string{"kmm"}, args...), io)
		took := time.Since(start)
		timer.Stop()
		cancel()
		if code != 130 || took > 1500*time.Millisecond {
			t.Errorf("%v: exit %d after %s (want 130 within 1s of the interrupt)\nstdout %q\nstderr %q", args[:1], code, took, out, errOut)
		}
	}
}

// TestStatusAllUnreachable: every cluster refuses connections: status checks them in parallel,
// exits 4 (not 3) within 2 s (a refusal on every bootstrap address is not waited out), names
// the cause in the reasons and every cluster in the error, once each. The clusters' answer
// bound is 4 s here instead of kmm's 10 s (the test would only wait longer if the refusal were
// not seen).
func TestStatusAllUnreachable(t *testing.T) {
	f := unreachableFile(t)
	const bound = 4 * time.Second
	io, _, stdout, stderr := iostreams.Test()
	start := time.Now()
	code := runWith(context.Background(), []string{"kmm", "status", f}, io, kfakebed.PingWithin(bound))
	took := time.Since(start)
	out, errOut := stdout.String(), stderr.String()
	if code != 4 || took > 2*time.Second {
		t.Errorf("exit %d after %s, want 4 within 2s\nstdout %s\nstderr %s", code, took, out, errOut)
	}
	if !strings.Contains(out, "is unreachable: connection refused") {
		t.Errorf("the reasons do not name the cause:\n%s", out)
	}
	want := "kmm: error: no cluster of the file answered: cluster A (127.0.0.1:1): connection refused; cluster B (127.0.0.1:1): connection refused\n" +
		"  hint: check A.bootstrap.servers and B.bootstrap.servers, the network path"
	if !strings.Contains(errOut, want) {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
}

// After an interrupt, failures become 130, but a command's own outcome of the stop stays.
func TestInterruptedKeepsOwnOutcomes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for err, want := range map[error]int{
		kerr.New(kerr.Failure, "x"): 130, kerr.New(kerr.Unreachable, "x"): 130, kerr.New(kerr.CheckFailed, "x"): 130,
		kerr.New(kerr.Usage, "x"): 2, kerr.New(kerr.Incomplete, "x"): 5, kerr.New(kerr.Interrupted, "x"): 130,
	} {
		if got := ExitCode(interrupted(ctx, err)); got != want {
			t.Errorf("%v (%v): exit %d, want %d", err, kerr.KindOf(err), got, want)
		}
	}
	if got := ExitCode(interrupted(context.Background(), kerr.New(kerr.Failure, "x"))); got != 1 {
		t.Errorf("no interrupt: exit %d, want 1", got)
	}
}
