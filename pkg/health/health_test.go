package health

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kmmproject/kmm/pkg/lag"
)

func TestEvaluate(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	base := FlowStatus{Flow: "A->B", Source: "A", Target: "B", SourceBoot: "a:9092", TargetBoot: "b:9092", Enabled: true, Heartbeats: true,
		HeartbeatInterval: time.Second, FlushInterval: 5 * time.Second, SelectedTopics: []string{"t"},
		Lag: []lag.PartitionLag{{Topic: "t", Partition: 0}}, StoredParts: 1,
		LastProgress: now.Add(-3 * time.Second), LastHeartbeat: now.Add(-time.Second)}
	if r := Evaluate(base, now, Limits{}); r.State != OK || len(r.Reasons) != 0 {
		t.Fatalf("healthy: %+v", r)
	}
	cases := []struct {
		name  string
		edit  func(*FlowStatus)
		state State
		want  string
	}{
		{"target down", func(s *FlowStatus) { s.TargetErr = errors.New("timeout") }, Down, "target cluster B (b:9092) is unreachable"},
		{"source down", func(s *FlowStatus) { s.SourceErr = errors.New("timeout") }, Down, "B last stored progress 3s ago"},
		{"old heartbeat", func(s *FlowStatus) { s.LastHeartbeat = now.Add(-2 * time.Minute) }, Degraded, "no heartbeat from A->B for 2m0s"},
		{"no heartbeat", func(s *FlowStatus) { s.LastHeartbeat = time.Time{} }, Degraded, "no heartbeat from A->B on B yet"},
		{"missing topic", func(s *FlowStatus) { s.MissingOnT = []string{"t"} }, Degraded, "1 topic(s) not yet on B: t"},
		{"retention", func(s *FlowStatus) { s.Lag = []lag.PartitionLag{{LostToRetention: 7}} }, Degraded, "lost 7 record(s) to retention on A"},
		{"stalled", func(s *FlowStatus) {
			s.Lag = []lag.PartitionLag{{LagRecords: 10}}
			s.LastProgress = now.Add(-5 * time.Minute)
		}, Degraded, "no progress for 5m0s while 10 record(s) wait"},
		{"stale checkpoints", func(s *FlowStatus) {
			s.Checkpoints = true
			s.Groups = []GroupStatus{{Group: "payments", LastCheckpoint: now.Add(-14 * time.Minute), Behind: true}}
		}, Degraded, "checkpoints for group payments are 14m0s old"},
		{"active on target", func(s *FlowStatus) {
			s.Checkpoints, s.GroupSync = true, true
			s.Groups = []GroupStatus{{Group: "billing", LastCheckpoint: now, ActiveOnTarget: 2}}
		}, Degraded, "group billing is active on B (2 member(s)), so its offsets are not synced"},
		{"endpoint failed", func(s *FlowStatus) {
			s.Endpoint = &EndpointStatus{URL: "http://x", State: map[string]string{"MirrorSourceConnector": "FAILED"}, Trace: map[string]string{"MirrorSourceConnector": "boom\nstack"}}
		}, Down, "replicate at http://x reports MirrorSourceConnector FAILED: boom"},
		{"endpoint stalled", func(s *FlowStatus) {
			tr := "stalled: cluster B (b:9092) is unreachable since 2023-11-14T22:13:20Z (for 42s): connection refused"
			s.Endpoint = &EndpointStatus{URL: "http://x", State: map[string]string{"MirrorSourceConnector": "RUNNING", "MirrorHeartbeatConnector": "RUNNING"},
				Trace: map[string]string{"MirrorSourceConnector": tr, "MirrorHeartbeatConnector": tr}}
		}, Down, "replicate at http://x: MirrorSourceConnector is stalled: cluster B (b:9092) is unreachable since 2023-11-14T22:13:20Z (for 42s): connection refused"},
		{"endpoint down", func(s *FlowStatus) { s.Endpoint = &EndpointStatus{URL: "http://x", Err: "connection refused"} }, Degraded, "replicate endpoint http://x: connection refused"},
		{"endpoint without flow", func(s *FlowStatus) { s.Endpoint = &EndpointStatus{URL: "http://x", State: map[string]string{}} }, Degraded, "does not run this flow"},
		{"never ran", func(s *FlowStatus) {
			s.Lag = []lag.PartitionLag{{LagRecords: 10}}
			s.LastProgress = time.Time{}
		}, Degraded, "no progress is stored on B"},
	}
	for _, c := range cases {
		s := base
		c.edit(&s)
		r := Evaluate(s, now, Limits{})
		if r.State != c.state || !strings.Contains(strings.Join(r.Reasons, "|"), c.want) {
			t.Errorf("%s: %s %q", c.name, r.State, r.Reasons)
		}
		if n := strings.Count(strings.Join(r.Reasons, "|"), "is stalled"); n > 1 {
			t.Errorf("%s: the stall is said %d times: %q", c.name, n, r.Reasons)
		}
	}
}

// The rate limit a report shows: the file's, or the one the running replicator reports (its
// --rate-limit wins over the file), with the throttled time; none is omitted.
func TestEvaluateRateLimit(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s := FlowStatus{Flow: "A->B", Source: "A", Target: "B", Enabled: true, RateLimit: 2_000_000}
	if r := Evaluate(s, now, Limits{}); r.RateLimit != 2_000_000 || r.RateLimitFrom != "file" || r.ThrottledSeconds != nil {
		t.Errorf("from the file: %d %q %v", r.RateLimit, r.RateLimitFrom, r.ThrottledSeconds)
	}
	live, waited := int64(500_000), 3.5
	s.Endpoint = &EndpointStatus{RateLimit: &live, Throttled: &waited}
	if r := Evaluate(s, now, Limits{}); r.RateLimit != 500_000 || r.RateLimitFrom != "endpoint" || r.ThrottledSeconds == nil || *r.ThrottledSeconds != 3.5 {
		t.Errorf("from the endpoint: %d %q %v", r.RateLimit, r.RateLimitFrom, r.ThrottledSeconds)
	}
	none := int64(0)
	s.Endpoint = &EndpointStatus{RateLimit: &none}
	if r := Evaluate(s, now, Limits{}); r.RateLimit != 0 || r.RateLimitFrom != "" {
		t.Errorf("lifted by the running replicator: %d %q", r.RateLimit, r.RateLimitFrom)
	}
	s.Endpoint = &EndpointStatus{Err: "connection refused", RateLimit: &live}
	if r := Evaluate(s, now, Limits{}); r.RateLimit != 2_000_000 || r.RateLimitFrom != "file" {
		t.Errorf("endpoint down: %d %q, want the file's", r.RateLimit, r.RateLimitFrom)
	}
}
