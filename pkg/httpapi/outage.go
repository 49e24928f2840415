package httpapi

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// clusterView is one cluster in the /readyz body: every flow's view of it merged.
type clusterView struct {
	Cluster               string   `json:"cluster"`
	Bootstrap             string   `json:"bootstrap"`
	Up                    bool     `json:"up"`
	UnreachableSince      string   `json:"unreachable_since,omitempty"` // RFC 3339, UTC
	UnreachableForSeconds int64    `json:"unreachable_for_seconds,omitempty"`
	Cause                 string   `json:"cause,omitempty"`
	Flows                 []string `json:"flows"` // "A->B (target)"
	since                 time.Time
}

// clustersOf merges the flows' cluster statuses by alias, sorted by alias.
func clustersOf(flows []FlowStats, now time.Time) []clusterView {
	by := map[string]*clusterView{}
	for _, f := range flows {
		for _, c := range f.Clusters {
			v, ok := by[c.Alias]
			if !ok {
				v = &clusterView{Cluster: c.Alias, Bootstrap: c.Bootstrap, Up: true, Flows: []string{}}
				by[c.Alias] = v
			}
			v.Flows = append(v.Flows, fmt.Sprintf("%s (%s)", f.Name(), c.Role))
			if !c.Up && v.Up {
				v.Up, v.Cause, v.since = false, c.Cause, c.DownSince
				if !c.DownSince.IsZero() {
					v.UnreachableSince = c.DownSince.UTC().Format(time.RFC3339)
					v.UnreachableForSeconds = max(int64(now.Sub(c.DownSince).Seconds()), 0)
				}
			}
		}
	}
	out := make([]clusterView, 0, len(by))
	for _, v := range by {
		out = append(out, *v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Cluster < out[j].Cluster })
	return out
}

// unreachable is the one-line reason for a cluster that is down.
func (v clusterView) unreachable(now time.Time) string {
	s := fmt.Sprintf("cluster %s (%s) is unreachable", v.Cluster, v.Bootstrap)
	if !v.since.IsZero() {
		s += fmt.Sprintf(" since %s (for %s)", v.since.UTC().Format(time.RFC3339), now.Sub(v.since).Round(time.Second))
	}
	if v.Cause != "" {
		s += ": " + v.Cause
	}
	return s
}

// stalled is the one-line reason for a flow whose records wait with none delivered.
func stalled(f FlowStats) string {
	s := fmt.Sprintf("flow %s is stalled: no record delivered for %s", f.Name(), (time.Duration(f.Stall.Seconds) * time.Second).Round(time.Second))
	if f.Stall.WaitingRecords > 0 {
		s += fmt.Sprintf(" while %d record(s) wait", f.Stall.WaitingRecords)
	}
	return s
}

// outageTrace is the trace of a RUNNING connector whose flow cannot move: the clusters it
// needs that are down, or the stall. "" when it moves.
func outageTrace(c connector, now time.Time) string {
	f := c.flow
	var why []string
	for _, cl := range f.Clusters {
		if cl.Up || (c.kind == HeartbeatConnector && cl.Role != "target") {
			continue
		}
		v := clustersOf([]FlowStats{{Source: f.Source, Target: f.Target, Clusters: []ClusterStatus{cl}}}, now)
		why = append(why, v[0].unreachable(now))
	}
	if len(why) == 0 && c.kind == SourceConnector && f.Stall != nil && f.Stall.Stalled {
		why = append(why, strings.TrimPrefix(stalled(*f), "flow "+f.Name()+" is stalled: "))
	}
	if len(why) == 0 {
		return ""
	}
	return "stalled: " + strings.Join(why, "; ") + " (retrying; the flow resumes by itself)"
}
