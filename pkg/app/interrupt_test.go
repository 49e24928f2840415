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
// exits 4 (not 3) within one connection timeout, and names the cause librdkafka saw. The
// clusters' answer bound is 4 s here instead of kmm's 10 s (nothing answers: the test would
// only wait longer); checked one after the other, the two clusters would take 8 s.
func TestStatusAllUnreachable(t *testing.T) {
	f := unreachableFile(t)
	const bound = 4 * time.Second
	io, _, stdout, stderr := iostreams.Test()
	start := time.Now()
	code := runWith(context.Background(), []string{"kmm", "status", f}, io, kfakebed.PingWithin(bound))
	took := time.Since(start)
	out, errOut := stdout.String(), stderr.String()
	if code != 4 || took > bound+3*time.Second {
		t.Errorf("exit %d after %s, want 4 within %s\nstdout %s\nstderr %s", code, took, bound+3*time.Second, out, errOut)
	}
	if !strings.Contains(out, "Connection refused") {
		t.Errorf("the reasons do not name the cause librdkafka saw:\n%s", out)
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
