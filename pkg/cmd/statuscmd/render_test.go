package statuscmd

import (
	"testing"
	"time"

	"github.com/kmmproject/kmm/pkg/health"
	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/output/goldentest"
)

func reports() []health.Report {
	return []health.Report{
		{Flow: "A->B", State: health.OK, Reasons: []string{}, SourceReachable: true, TargetReachable: true, TopicsMatched: 3, Partitions: 12,
			HeartbeatAgeMs: 800, ProgressAgeMs: 2100, CheckpointAgeMs: 400},
		{Flow: "B->A", State: health.Degraded, Reasons: []string{"no heartbeat from B->A for 2m0s"}, SourceReachable: true, TargetReachable: true,
			HeartbeatAgeMs: 120000, ProgressAgeMs: -1, CheckpointAgeMs: -1},
		{Flow: "A->C", State: health.Down, Reasons: []string{"source cluster A (a:9092) is unreachable: timeout"}, TargetReachable: true,
			TopicsMatched: 0, HeartbeatAgeMs: -1, ProgressAgeMs: 61000, CheckpointAgeMs: -1, LagRecords: 17},
	}
}

func TestRenderGolden(t *testing.T) {
	now := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name, out string
		tty       bool
	}{{"status-piped.txt", "table", false}, {"status-tty.txt", "table", true}, {"status.json", "json", false}} {
		io, _, out, _ := iostreams.Test()
		if c.tty {
			io.SetTTY(true, true, true)
			io.SetColorMode("auto")
		}
		if err := render(io, c.out, reports(), now); err != nil {
			t.Fatal(err)
		}
		goldentest.Golden(t, c.name, out.Bytes())
	}
}
