// Package replsource adapts a running replicator.Replicator to httpapi.Source, so pkg/httpapi
// itself stays free of cgo (replicator links librdkafka). It owns the mapping from the
// replicator's snapshots to the HTTP API's, and nothing else: it never prints or reads
// configuration files.
package replsource

import (
	"sort"
	"time"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/httpapi"
	"github.com/kmmproject/kmm/pkg/replicator"
)

// flowInfo is what the adapter copies from a flow.Flow at construction, so it never
// reads a Flow while Run validates it.
type flowInfo struct {
	name, source, target string
	enabled, heartbeats  bool
	tasks                int
}

// Source is an httpapi.Source over a replicator and the flows it runs. It is also an
// httpapi.StatusSource: the replicator's recent events, and readings of the flows' clusters
// made in the background while someone looks at the status page (Options).
type Source struct {
	r       *replicator.Replicator
	flows   []flowInfo
	readers *reader
}

var (
	_ httpapi.Source       = (*Source)(nil)
	_ httpapi.StatusSource = (*Source)(nil)
)

// New adapts r, which runs flows (the slice given to replicator.New). Call it before r.Run.
// Every flow is listed from the start, not running until r.Run has started it. At most one
// Options is used. Close stops the background readings.
func New(r *replicator.Replicator, flows []*flow.Flow, opts ...Options) *Source {
	s := &Source{r: r}
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	for _, f := range flows {
		s.flows = append(s.flows, flowInfo{name: f.Name(), source: f.Source, target: f.Target,
			enabled: f.Enabled, heartbeats: f.EmitHeartbeats, tasks: f.Tasks})
	}
	s.readers = newReader(r, flows, o)
	return s
}

// Close stops the background readings and closes their clients (it waits for a reading under
// way, which its context ends at once).
func (s *Source) Close() { s.readers.close() }

// Readings implements httpapi.StatusSource: the last background reading of every enabled flow.
// The first call starts the readings (every Options.ReadEvery); they stop Options.ReadIdle after
// the last call.
func (s *Source) Readings() []httpapi.FlowReading { return s.readers.want() }

// Events implements httpapi.StatusSource: the replicator's recent events and the flow states
// the readings saw change in __kmm_state, newest first.
func (s *Source) Events() []httpapi.Event {
	var out []httpapi.Event
	for _, e := range s.r.RecentEvents() {
		out = append(out, httpapi.Event{Time: e.Time, Type: string(e.Type), Flow: e.Flow, Cluster: e.Cluster, Message: eventText(e)})
	}
	out = append(out, s.readers.stateEvents()...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.After(out[j].Time) })
	if len(out) > replicator.RecentEventsKept {
		out = out[:replicator.RecentEventsKept]
	}
	return out
}

// eventText is an event's message, or what it says in words when it has none.
func eventText(e replicator.Event) string {
	switch {
	case e.Message != "":
		return e.Message
	case e.Type == replicator.EvDraining:
		return "draining: stopped fetching, waiting for the target to acknowledge, storing progress"
	}
	return string(e.Type)
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
			hs.Starting = !fs.Started && !fs.Running && fs.Err == ""
			if fs.State != "" {
				hs.State = &httpapi.FlowState{State: fs.State, Epoch: fs.StateEpoch, At: fs.StateAt}
			}
			if fs.EndsAtMs > 0 {
				hs.SourceEndsAt = time.UnixMilli(fs.EndsAtMs)
			}
			for _, c := range fs.Clusters {
				hs.Clusters = append(hs.Clusters, httpapi.ClusterStatus{Alias: c.Alias, Bootstrap: c.Bootstrap, Role: c.Role,
					Up: c.Up, DownSince: c.DownSince, FailingSince: c.FailingSince, Cause: c.Cause, RTTAvg: c.RTTAvg, RTTP99: c.RTTP99})
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
		} else {
			hs.Starting = true // Run has not set the flow up yet
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
