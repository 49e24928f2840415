package snapshot

import (
	"testing"

	"github.com/kmmproject/kmm/pkg/lag"
)

func TestParseLinkRTTs(t *testing.T) {
	text := `# HELP kmm_cluster_rtt_avg_seconds Round trip
# TYPE kmm_cluster_rtt_avg_seconds gauge
kmm_cluster_rtt_avg_seconds{cluster="B"} 0.1012
kmm_cluster_rtt_avg_seconds{cluster="A"} 0.0008
kmm_cluster_rtt_avg_seconds{cluster="C"} 0.5
kmm_cluster_rtt_p99_seconds{cluster="A"} 0.0019
kmm_cluster_rtt_p99_seconds{cluster="B"} 0.1125
kmm_cluster_up{cluster="B"} 1
kmm_rdkafka_broker_rtt_avg_seconds{broker="x",client="c",cluster="B",role="target-producer",source="A",target="B"} 9
`
	got := parseLinkRTTs(text, "http://h:1", []string{"A", "B"})
	want := []lag.LinkRTT{{Cluster: "A", AvgMs: 0.8, P99Ms: 1.9, MeasuredBy: "http://h:1"}, {Cluster: "B", AvgMs: 101.2, P99Ms: 112.5, MeasuredBy: "http://h:1"}}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Cluster != w.Cluster || g.MeasuredBy != w.MeasuredBy || abs(g.AvgMs-w.AvgMs) > 1e-9 || abs(g.P99Ms-w.P99Ms) > 1e-9 {
			t.Errorf("row %d: got %+v, want %+v", i, g, w)
		}
	}
	if all := parseLinkRTTs(text, "u", nil); len(all) != 3 {
		t.Errorf("without a cluster list: %d rows, want 3", len(all))
	}
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}
