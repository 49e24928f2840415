// Package replsource adapts a running replicator.Replicator to httpapi.Source, so pkg/httpapi
// itself stays free of cgo (replicator links librdkafka). It owns the mapping from the
// replicator's snapshots to the HTTP API's, and nothing else: it never prints or reads
// configuration files.
package replsource

import (
	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/httpapi"
	"github.com/kmmproject/kmm/pkg/replicator"
	"sort"
)

// flowInfo is what the adapter copies from a flow.Flow at construction, so it never
// reads a Flow while Run validates it.
type flowInfo struct {
	name, source, target string
	enabled, heartbeats  bool
	tasks                int
}

// Source is an httpapi.Source over a replicator and the flows it runs.
type Source struct {
	r     *replicator.Replicator
	flows []flowInfo
}

var _ httpapi.Source = (*Source)(nil)

// New adapts r, which runs flows (the slice given to replicator.New). Call it before r.Run.
// Every flow is listed from the start, not running until r.Run has started it.
func New(r *replicator.Replicator, flows []*flow.Flow) *Source {
	s := &Source{r: r}
	for _, f := range flows {
		s.flows = append(s.flows, flowInfo{name: f.Name(), source: f.Source, target: f.Target,
			enabled: f.Enabled, heartbeats: f.EmitHeartbeats, tasks: f.Tasks})
	}
	return s
}

// Stats returns one snapshot per flow, in the order of the flows given to New.
//
// Not populated yet, because replicator.FlowStats does not carry them: OldestUnreplicatedMs,
// RecordAge and per-partition checkpoint latency.
// ReplicationLatency.Count is the record count: the replicator skips the latency of records
// without a timestamp (or with one in the future), so the average is slightly low then.
func (s *Source) Stats() []httpapi.FlowStats {
	byName := map[string]replicator.FlowStats{}
	for _, fs := range s.r.Stats() {
		byName[fs.Flow] = fs
	}
	out := make([]httpapi.FlowStats, 0, len(s.flows))
	for _, f := range s.flows {
		hs := httpapi.FlowStats{Source: f.source, Target: f.target, Enabled: f.enabled, Tasks: f.tasks, EmitHeartbeats: f.heartbeats}
		if fs, ok := byName[f.name]; ok {
			hs.Running, hs.Err, hs.Paused = fs.Running, fs.Err, fs.Paused
			for _, c := range fs.Clusters {
				hs.Clusters = append(hs.Clusters, httpapi.ClusterStatus{Alias: c.Alias, Bootstrap: c.Bootstrap, Role: c.Role,
					Up: c.Up, DownSince: c.DownSince, Cause: c.Cause, RTTAvg: c.RTTAvg, RTTP99: c.RTTP99})
			}
			if f.enabled {
				hs.Stall = &httpapi.StallStats{Seconds: float64(fs.StalledMs) / 1000, Stalled: fs.Stalled, WaitingRecords: fs.WaitingRecords}
				hs.Rate = &httpapi.RateStats{LimitBytesPerSecond: fs.RateLimit, ThrottledSeconds: float64(fs.ThrottledMs) / 1000}
			}
			hs.CheckpointsRunning = fs.CheckpointsRunning
			if tx := fs.Transactions; tx != nil {
				hs.Transactions = &httpapi.TxnStats{Committed: tx.Committed, Aborted: tx.Aborted}
			}
			if w := fs.Workers; w != nil {
				hs.Workers = &httpapi.WorkerShare{Group: w.Group, Leader: w.Leader, Partitions: w.Partitions}
			}
			if f.heartbeats {
				hs.Heartbeats = &httpapi.EmitterStats{Count: fs.HeartbeatCount, LastMs: fs.HeartbeatLastMs}
			}
			if f.enabled {
				hs.OffsetSyncs = &httpapi.EmitterStats{Count: fs.SyncCount, LastMs: fs.SyncLastMs}
			}
			if fs.CheckpointGroups != nil {
				cs := &httpapi.CheckpointStats{SkippedActiveGroups: fs.SkippedActiveGroups}
				groups := make([]string, 0, len(fs.CheckpointGroups))
				for g := range fs.CheckpointGroups {
					groups = append(groups, g)
				}
				sort.Strings(groups)
				for _, g := range groups {
					cs.Groups = append(cs.Groups, httpapi.GroupCheckpointStats{Group: g, LastCheckpointMs: fs.CheckpointGroups[g]})
				}
				hs.Checkpoints = cs
			}
			hs.Partitions = make([]httpapi.PartitionStats, len(fs.Partitions))
			for i, p := range fs.Partitions {
				hs.Partitions[i] = httpapi.PartitionStats{Topic: p.Topic, RemoteTopic: p.RemoteTopic, Partition: p.Partition,
					Records: p.Records, Bytes: p.Bytes, Acked: p.Acked, Stored: p.Stored, SourceEnd: p.SourceEnd, Lag: p.Lag,
					LostRecords: p.LostRecords, LastAckMs: p.LastAckMs,
					ReplicationLatency: httpapi.Latency{Count: p.Records, SumMs: p.LatencySum, MaxMs: p.LatencyMax}}
			}
		}
		out = append(out, hs)
	}
	return out
}

// Configs returns MM2's connector config of every flow of cfg, keyed "S->T", for
// httpapi.Options.Configs. Values are as written (config-provider references unresolved, as
// Kafka Connect's REST API shows them); httpapi hides the keys that hold secrets.
func Configs(cfg *mm2conf.Config) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, f := range cfg.Flows {
		m := make(map[string]string, len(f.Connector))
		for k, v := range f.Connector {
			m[k] = v.Raw
		}
		out[f.Name()] = m
	}
	return out
}

// ClientStats implements httpapi.ClientStatsSource with the pipelines' librdkafka statistics.
func (s *Source) ClientStats() []httpapi.ClientStats {
	var out []httpapi.ClientStats
	for _, fs := range s.r.Stats() {
		for _, c := range fs.Clients {
			cluster := fs.Source
			if c.Role == "target-producer" {
				cluster = fs.Target
			}
			cs := httpapi.ClientStats{Source: fs.Source, Target: fs.Target, Cluster: cluster, Client: c.Name, Role: c.Role,
				QueueMessages: -1, QueueBytes: -1}
			if c.Role == "target-producer" {
				cs.QueueMessages, cs.QueueBytes = c.QueueMessages, c.QueueBytes
			}
			for _, b := range c.Brokers {
				cs.Brokers = append(cs.Brokers, httpapi.BrokerStats{Broker: b.Name, RTTAvg: b.RTTAvg, RTTP99: b.RTTP99,
					OutbufRequests: b.OutbufRequests, WaitrespRequests: b.WaitrespRequests})
			}
			out = append(out, cs)
		}
	}
	return out
}
