package snapshot

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/health"
	"github.com/kmmproject/kmm/pkg/lag"
)

// Endpoint reads GET <url>/connectors?expand=status of a running `kmm replicate --listen` (Kafka
// Connect's shape) and returns, per flow "S->T", its connectors' states.
func Endpoint(ctx context.Context, url string, flows []string) map[string]*health.EndpointStatus {
	out := map[string]*health.EndpointStatus{}
	for _, f := range flows {
		out[f] = &health.EndpointStatus{URL: url, State: map[string]string{}, Trace: map[string]string{}}
	}
	fail := func(err error) map[string]*health.EndpointStatus {
		for _, e := range out {
			e.Err = err.Error()
		}
		return out
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(url, "/")+"/connectors?expand=status", nil)
	if err != nil {
		return fail(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fail(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fail(fmt.Errorf("HTTP %d", resp.StatusCode))
	}
	var body map[string]struct {
		Status struct {
			Connector struct {
				State string `json:"state"`
				Trace string `json:"trace"`
			} `json:"connector"`
		} `json:"status"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return fail(fmt.Errorf("not a Connect-style /connectors answer: %w", err))
	}
	for name, c := range body {
		flow, simple, ok := strings.Cut(name, ".") // kmm names them S->T.MirrorSourceConnector
		if !ok {
			continue
		}
		if e, want := out[flow]; want {
			e.State[simple] = c.Status.Connector.State
			if c.Status.Connector.Trace != "" {
				e.Trace[simple] = c.Status.Connector.Trace
			}
		}
	}
	rateMetrics(ctx, url, out)
	return out
}

// rateMetrics reads each flow's rate limit and throttled time from the endpoint's /metrics
// (kmm_flow_rate_limit_bytes_per_second, kmm_flow_throttled_seconds_total); a Connect REST API
// or an older kmm has none: the fields stay nil.
func rateMetrics(ctx context.Context, url string, out map[string]*health.EndpointStatus) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(url, "/")+"/metrics", nil)
	if err != nil {
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		name, rest, ok := strings.Cut(l, "{")
		if !ok || (name != "kmm_flow_rate_limit_bytes_per_second" && name != "kmm_flow_throttled_seconds_total") {
			continue
		}
		labels, val, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			continue
		}
		for flow, e := range out {
			src, tgt, _ := strings.Cut(flow, "->")
			if labels != fmt.Sprintf("source=%q,target=%q", src, tgt) {
				continue
			}
			if name == "kmm_flow_throttled_seconds_total" {
				e.Throttled = &v
			} else {
				n := int64(v)
				e.RateLimit = &n
			}
		}
	}
}

// LivePositions asks a running `kmm replicate --listen` at url for the positions it has
// acknowledged on flow f's target (GET /connectors/<S->T>.MirrorSourceConnector/offsets?acknowledged=true)
// and returns them as next offsets observed now. It returns nil when the endpoint does not answer
// or does not run the flow: the caller falls back to what is stored on the target.
func LivePositions(ctx context.Context, url string, f *flow.Flow, now time.Time) map[cluster.TP]lag.Observed {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	u := strings.TrimRight(url, "/") + "/connectors/" + f.Name() + ".MirrorSourceConnector/offsets?acknowledged=true"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	var body struct {
		Offsets []struct {
			Partition struct {
				Cluster   string `json:"cluster"`
				Topic     string `json:"topic"`
				Partition int32  `json:"partition"`
			} `json:"partition"`
			Offset struct {
				Offset int64 `json:"offset"`
			} `json:"offset"`
		} `json:"offsets"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil
	}
	out := map[cluster.TP]lag.Observed{}
	for _, o := range body.Offsets {
		if o.Partition.Cluster != f.Source {
			continue
		}
		out[cluster.TP{Topic: o.Partition.Topic, Partition: o.Partition.Partition}] = lag.Observed{Next: o.Offset.Offset + 1, At: now}
	}
	return out
}

// LinkRTTs asks a running `kmm replicate --listen` at url for the round trips it measures to
// each cluster (kmm_cluster_rtt_avg_seconds and _p99_seconds of GET <url>/metrics), for the
// clusters named (all when none). It returns nil when the endpoint does not answer.
func LinkRTTs(ctx context.Context, url string, clusters ...string) []lag.LinkRTT {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(url, "/")+"/metrics", nil)
	if err != nil {
		return nil
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil
	}
	return parseLinkRTTs(string(b), url, clusters)
}

// parseLinkRTTs reads the kmm_cluster_rtt_* samples of a Prometheus text exposition.
func parseLinkRTTs(text, url string, clusters []string) []lag.LinkRTT {
	byCluster := map[string]*lag.LinkRTT{}
	var order []string
	for _, line := range strings.Split(text, "\n") {
		var p99 bool
		switch {
		case strings.HasPrefix(line, "kmm_cluster_rtt_avg_seconds{"):
		case strings.HasPrefix(line, "kmm_cluster_rtt_p99_seconds{"):
			p99 = true
		default:
			continue
		}
		_, rest, _ := strings.Cut(line, `cluster="`)
		alias, rest, ok := strings.Cut(rest, `"`)
		if !ok || (len(clusters) > 0 && !slices.Contains(clusters, alias)) {
			continue
		}
		_, val, _ := strings.Cut(rest, "} ")
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			continue
		}
		l := byCluster[alias]
		if l == nil {
			l = &lag.LinkRTT{Cluster: alias, MeasuredBy: url}
			byCluster[alias] = l
			order = append(order, alias)
		}
		if p99 {
			l.P99Ms = v * 1000
		} else {
			l.AvgMs = v * 1000
		}
	}
	sort.Strings(order)
	out := make([]lag.LinkRTT, 0, len(order))
	for _, a := range order {
		out = append(out, *byCluster[a])
	}
	return out
}
