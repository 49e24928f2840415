package statuscmd

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kmmproject/kmm/pkg/health"
	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/output/goldentest"
)

func p[T any](v T) *T { return &v }

func reports() []health.Report {
	return []health.Report{
		{Flow: "A->B", State: health.OK, Reasons: []string{}, SourceReachable: true, TargetReachable: true, TopicsMatched: p(3), TopicsMissing: p(0),
			Partitions: p(12), LagRecords: p(int64(0)), MaxLagSeconds: p(0.0), LostToRetention: p(int64(0)), Replicators: p(1),
			HeartbeatAgeMs: p(int64(800)), ProgressAgeMs: p(int64(2100)), CheckpointAgeMs: p(int64(400))},
		{Flow: "B->A", State: health.Degraded, Reasons: []string{"no heartbeat from B->A for 2m0s"}, SourceReachable: true, TargetReachable: true,
			TopicsMatched: p(2), TopicsMissing: p(1), Partitions: p(4), LagRecords: p(int64(17)), MaxLagSeconds: p(3.5), LostToRetention: p(int64(0)), Replicators: p(0),
			HeartbeatAgeMs: p(int64(120000)), ProgressAgeMs: p(int64(-1)), CheckpointAgeMs: p(int64(-1))},
		// The source down: its topics and the lag are not known; the target's ages are.
		{Flow: "A->C", State: health.Down, Reasons: []string{"source cluster A (a:9092) is unreachable: connection refused"}, TargetReachable: true,
			Replicators: p(0), HeartbeatAgeMs: p(int64(-1)), ProgressAgeMs: p(int64(61000)), CheckpointAgeMs: p(int64(-1))},
		// Both down: nothing is known.
		{Flow: "C->D", State: health.Down, Reasons: []string{"target cluster D (d:9092) is unreachable: connection refused",
			"source cluster C (c:9092) is unreachable: connection refused"}},
		// A heartbeats-only flow copies nothing: no topics, lag or progress.
		{Flow: "C->A", State: health.OK, Reasons: []string{}, SourceReachable: true, TargetReachable: true, HeartbeatsOnly: true, Replicators: p(1),
			HeartbeatAgeMs: p(int64(900)), CheckpointAgeMs: p(int64(-1))},
	}
}

// A figure that is not known is "?" in the table and null in JSON, never 0 (issue 35 item 6):
// both clusters of C->D down, the source of A->C down.
func TestRenderUnknownIsNotZero(t *testing.T) {
	now := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	io, _, out, _ := iostreams.Test()
	if err := render(io, "table", reports(), now); err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) >= 8 && strings.Contains(f[0], "->") {
			rows[f[0]] = f
		}
	}
	// FLOW STATE TOPICS PARTITIONS LAG HEARTBEAT(2 words or never) ...
	if r := rows["C->D"]; len(r) != 8 || r[2] != "?" || r[3] != "?" || r[4] != "?" || r[5] != "?" || r[6] != "?" || r[7] != "?" {
		t.Errorf("both clusters down: %q, want ? in every figure", r)
	}
	if r := rows["A->C"]; len(r) < 5 || r[2] != "?" || r[3] != "?" || r[4] != "?" {
		t.Errorf("source down: %q, want ? for topics, partitions and lag", r)
	}
	if r := rows["B->A"]; len(r) < 5 || r[2] != "1/2" || r[4] != "17" {
		t.Errorf("known figures: %q", r)
	}
	if r := rows["C->A"]; len(r) < 5 || r[2] != "-" || r[3] != "-" || r[4] != "-" {
		t.Errorf("heartbeats-only: %q, want - (does not apply)", r)
	}
	io, _, out, _ = iostreams.Test()
	if err := render(io, "json", reports(), now); err != nil {
		t.Fatal(err)
	}
	var env struct {
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(out.Bytes(), &env); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"topics_matched", "topics_missing_on_target", "partitions", "lag_records", "max_lag_seconds", "lost_to_retention",
		"heartbeat_age_ms", "progress_age_ms", "checkpoint_age_ms", "replicators_alive"} {
		if v, ok := env.Items[3][k]; !ok || v != nil {
			t.Errorf("both down: %s = %v (present %v), want null", k, v, ok)
		}
	}
	if v := env.Items[0]["lag_records"]; v != float64(0) {
		t.Errorf("caught up: lag_records = %v, want 0", v)
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
