package snapshot

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
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
