package httpapi

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Label sets. Per-partition series carry MM2's tags in MM2's order: source, target, topic (the
// remote topic), partition.
var (
	flowLabels      = []string{"source", "target"}
	partLabels      = []string{"source", "target", "topic", "partition"}
	groupLabels     = []string{"source", "target", "group"}
	groupPartLabels = []string{"source", "target", "group", "topic", "partition"}
	clientLabels    = []string{"source", "target", "cluster", "client", "role"}
	brokerLabels    = []string{"source", "target", "cluster", "client", "role", "broker"}
)

// descs are the metric descriptions of the collector. They are immutable once built.
type descs struct {
	flowUp, flowStalled, clusterUp *prometheus.Desc
	clusterRTTAvg, clusterRTTP99   *prometheus.Desc
	rateLimit, throttled           *prometheus.Desc
	txnCommitted, txnAborted       *prometheus.Desc

	recordCount, byteCount        *prometheus.Desc
	replLatency, replLatencyMax   *prometheus.Desc
	recordAge, recordAgeMax       *prometheus.Desc
	lagRecords, lagSeconds        *prometheus.Desc
	gapRecords                    *prometheus.Desc
	endOffset, ackedOffset        *prometheus.Desc
	storedOffset, lastAck         *prometheus.Desc
	heartbeats, heartbeatLast     *prometheus.Desc
	offsetSyncs, offsetSyncLast   *prometheus.Desc
	cpLatency, cpLatencyMax       *prometheus.Desc
	cpAge, cpSkippedActive        *prometheus.Desc
	queueMessages, queueBytes     *prometheus.Desc
	rttAvg, rttP99                *prometheus.Desc
	outbufRequests, waitrespCount *prometheus.Desc
}

func newDescs() *descs {
	d := func(name, help string, labels []string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &descs{
		flowUp:        d("kmm_flow_up", "1 while the flow S->T runs, 0 when it is starting, stopped or failed.", flowLabels),
		flowStalled:   d("kmm_flow_stalled_seconds", "Seconds since the flow last delivered a record while records waited (fetched and not acknowledged by the target, or on the source and not fetched); 0 while records move or nothing waits.", flowLabels),
		clusterUp:     d("kmm_cluster_up", "1 while the cluster is reachable, 0 after 10 s without a usable connection to it (see /readyz for since when and why).", []string{"cluster"}),
		clusterRTTAvg: d("kmm_cluster_rtt_avg_seconds", "Round trip to the cluster measured by the replicator: mean time of its metadata probe (one request every 2 s on an open connection) over the last minute. A slow flow with a high value is a slow link.", []string{"cluster"}),
		clusterRTTP99: d("kmm_cluster_rtt_p99_seconds", "99th percentile of the same round trips over the last minute.", []string{"cluster"}),
		rateLimit:     d("kmm_flow_rate_limit_bytes_per_second", "The flow's rate limit (kmm.rate.limit.bytes.per.second, or kmm replicate --rate-limit): bytes of keys, values and headers per second its pipelines may copy together; 0 when there is none.", flowLabels),
		throttled:     d("kmm_flow_throttled_seconds_total", "Seconds the flow's pipelines waited for its rate limit since start, summed over pipelines.", flowLabels),
		txnCommitted:  d("kmm_flow_transactions_committed_total", "Transactions an exactly-once flow's pipelines committed since start (records and their resume positions together), summed over pipelines.", flowLabels),
		txnAborted:    d("kmm_flow_transactions_aborted_total", "Transactions an exactly-once flow's pipelines aborted since start (a record the target refused, or a failed commit: their records are copied again from the committed positions), summed over pipelines.", flowLabels),

		recordCount:    d("kmm_mirror_source_record_count_total", "Records acknowledged by the target since start (MM2 MirrorSourceConnector record-count).", partLabels),
		byteCount:      d("kmm_mirror_source_byte_count_total", "Value bytes (not keys or headers) of the records acknowledged by the target since start (MM2 byte-count).", partLabels),
		replLatency:    d("kmm_mirror_source_replication_latency_ms", "Acknowledgement time minus record timestamp, in milliseconds (MM2 replication-latency-ms); sum and count since start.", partLabels),
		replLatencyMax: d("kmm_mirror_source_replication_latency_ms_max", "Largest replication latency since start, in milliseconds (MM2's -max is over a 2x30 s window instead).", partLabels),
		recordAge:      d("kmm_mirror_source_record_age_ms", "Poll time minus record timestamp, in milliseconds (MM2 record-age-ms); sum and count since start.", partLabels),
		recordAgeMax:   d("kmm_mirror_source_record_age_ms_max", "Largest record age at poll time since start, in milliseconds.", partLabels),
		lagRecords:     d("kmm_replication_lag_records", "Source end offset minus the next offset to replicate (the end offset is refreshed every few seconds).", partLabels),
		lagSeconds:     d("kmm_replication_lag_seconds", "Age of the oldest record not replicated yet; 0 when caught up. Approximated as the time since the last acknowledgement while records wait, unless the source reports the oldest record's timestamp.", partLabels),
		gapRecords:     d("kmm_retention_gap_records_total", "Records deleted by retention on the source before they were replicated (lost to the target).", partLabels),
		endOffset:      d("kmm_replication_source_end_offset", "End offset of the source partition, as last read.", partLabels),
		ackedOffset:    d("kmm_replication_acked_offset", "Last source offset whose record the target acknowledged.", partLabels),
		storedOffset:   d("kmm_replication_stored_offset", "Last source offset stored as the resume position in mm2-offsets.<source>.internal on the target.", partLabels),
		lastAck:        d("kmm_replication_last_ack_timestamp_seconds", "Unix time of the last record the target acknowledged.", partLabels),

		heartbeats:     d("kmm_mirror_heartbeat_count_total", "Heartbeat records written to the target's heartbeats topic since start.", flowLabels),
		heartbeatLast:  d("kmm_mirror_heartbeat_last_timestamp_seconds", "Unix time of the last heartbeat written.", flowLabels),
		offsetSyncs:    d("kmm_mirror_offset_sync_count_total", "Offset-sync records written since start.", flowLabels),
		offsetSyncLast: d("kmm_mirror_offset_sync_last_timestamp_seconds", "Unix time of the last offset sync written.", flowLabels),

		cpLatency:       d("kmm_mirror_checkpoint_latency_ms", "Time from computing a checkpoint to the acknowledgement of its record, in milliseconds (MM2 MirrorCheckpointConnector checkpoint-latency-ms); sum and count since start.", groupPartLabels),
		cpLatencyMax:    d("kmm_mirror_checkpoint_latency_ms_max", "Largest checkpoint latency since start, in milliseconds.", groupPartLabels),
		cpAge:           d("kmm_checkpoint_age_seconds", "Seconds since the newest checkpoint of the group was emitted.", groupLabels),
		cpSkippedActive: d("kmm_checkpoint_skipped_active_groups", "Groups whose offsets are not synced to the target because they have active members there.", flowLabels),

		queueMessages:  d("kmm_rdkafka_producer_queue_messages", "Messages waiting in the librdkafka producer queue (msg_cnt).", clientLabels),
		queueBytes:     d("kmm_rdkafka_producer_queue_bytes", "Bytes waiting in the librdkafka producer queue (msg_size).", clientLabels),
		rttAvg:         d("kmm_rdkafka_broker_rtt_avg_seconds", "Average request round-trip time to the broker over the last librdkafka statistics window.", brokerLabels),
		rttP99:         d("kmm_rdkafka_broker_rtt_p99_seconds", "99th percentile request round-trip time to the broker over the last librdkafka statistics window.", brokerLabels),
		outbufRequests: d("kmm_rdkafka_broker_outbuf_requests", "Requests waiting to be sent to the broker (outbuf_cnt).", brokerLabels),
		waitrespCount:  d("kmm_rdkafka_broker_waitresp_requests", "Requests sent to the broker and waiting for a response (waitresp_cnt).", brokerLabels),
	}
}

func (d *descs) all() []*prometheus.Desc {
	return []*prometheus.Desc{d.flowUp, d.flowStalled, d.rateLimit, d.throttled, d.txnCommitted, d.txnAborted, d.clusterUp, d.clusterRTTAvg, d.clusterRTTP99,
		d.recordCount, d.byteCount, d.replLatency, d.replLatencyMax, d.recordAge, d.recordAgeMax,
		d.lagRecords, d.lagSeconds, d.gapRecords, d.endOffset, d.ackedOffset, d.storedOffset, d.lastAck,
		d.heartbeats, d.heartbeatLast, d.offsetSyncs, d.offsetSyncLast,
		d.cpLatency, d.cpLatencyMax, d.cpAge, d.cpSkippedActive,
		d.queueMessages, d.queueBytes, d.rttAvg, d.rttP99, d.outbufRequests, d.waitrespCount}
}

// collector turns Source snapshots into const metrics on every scrape. It keeps no state
// between scrapes, so concurrent scrapes are safe and the replication path pays nothing.
type collector struct {
	src Source
	now func() time.Time
	d   *descs
}

// NewCollector returns the prometheus.Collector of kmm's replication metrics over src. now is
// the clock for the age metrics (nil: time.Now). Server registers one; it is exported for
// programs that serve their own registry.
func NewCollector(src Source, now func() time.Time) prometheus.Collector {
	if now == nil {
		now = time.Now
	}
	return &collector{src: src, now: now, d: newDescs()}
}

// Describe sends every description, populated or not: the set is fixed.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.d.all() {
		ch <- d
	}
}

// Collect reads one snapshot of the source.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	nowMs := c.now().UnixMilli()
	d := c.d
	emit := func(desc *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
		m, err := prometheus.NewConstMetric(desc, t, v, labels...)
		if err != nil {
			m = prometheus.NewInvalidMetric(desc, err)
		}
		ch <- m
	}
	summary := func(desc, maxDesc *prometheus.Desc, l Latency, labels ...string) {
		m, err := prometheus.NewConstSummary(desc, uint64(max(l.Count, 0)), float64(l.SumMs), nil, labels...)
		if err != nil {
			m = prometheus.NewInvalidMetric(desc, err)
		}
		ch <- m
		emit(maxDesc, prometheus.GaugeValue, float64(l.MaxMs), labels...)
	}
	flows := c.src.Stats()
	seen := map[string]bool{}
	for _, f := range flows {
		for _, cl := range f.Clusters {
			if !seen[cl.Alias] {
				seen[cl.Alias] = true
				up := true
				for _, g := range flows { // down for one flow is down
					for _, o := range g.Clusters {
						up = up && (o.Alias != cl.Alias || o.Up)
					}
				}
				emit(d.clusterUp, prometheus.GaugeValue, b2f(up), cl.Alias)
				var avg, p99 time.Duration // every flow's watch of a cluster is the same one: take the largest
				for _, g := range flows {
					for _, o := range g.Clusters {
						if o.Alias == cl.Alias {
							avg, p99 = max(avg, o.RTTAvg), max(p99, o.RTTP99)
						}
					}
				}
				if avg > 0 {
					emit(d.clusterRTTAvg, prometheus.GaugeValue, avg.Seconds(), cl.Alias)
					emit(d.clusterRTTP99, prometheus.GaugeValue, p99.Seconds(), cl.Alias)
				}
			}
		}
	}
	for _, f := range flows {
		emit(d.flowUp, prometheus.GaugeValue, b2f(f.Running), f.Source, f.Target)
		if f.Stall != nil {
			emit(d.flowStalled, prometheus.GaugeValue, f.Stall.Seconds, f.Source, f.Target)
		}
		if f.Rate != nil {
			emit(d.rateLimit, prometheus.GaugeValue, float64(f.Rate.LimitBytesPerSecond), f.Source, f.Target)
			emit(d.throttled, prometheus.CounterValue, f.Rate.ThrottledSeconds, f.Source, f.Target)
		}
		if tx := f.Transactions; tx != nil {
			emit(d.txnCommitted, prometheus.CounterValue, float64(tx.Committed), f.Source, f.Target)
			emit(d.txnAborted, prometheus.CounterValue, float64(tx.Aborted), f.Source, f.Target)
		}
		for _, p := range f.Partitions {
			l := []string{f.Source, f.Target, p.RemoteTopic, strconv.Itoa(int(p.Partition))}
			emit(d.recordCount, prometheus.CounterValue, float64(p.Records), l...)
			emit(d.byteCount, prometheus.CounterValue, float64(p.Bytes), l...)
			summary(d.replLatency, d.replLatencyMax, p.ReplicationLatency, l...)
			if p.RecordAge != nil {
				summary(d.recordAge, d.recordAgeMax, *p.RecordAge, l...)
			}
			emit(d.gapRecords, prometheus.CounterValue, float64(p.LostRecords), l...)
			if p.Lag >= 0 {
				emit(d.lagRecords, prometheus.GaugeValue, float64(p.Lag), l...)
			}
			if s, ok := lagSeconds(p, nowMs); ok {
				emit(d.lagSeconds, prometheus.GaugeValue, s, l...)
			}
			if p.SourceEnd >= 0 {
				emit(d.endOffset, prometheus.GaugeValue, float64(p.SourceEnd), l...)
			}
			if p.Acked >= 0 {
				emit(d.ackedOffset, prometheus.GaugeValue, float64(p.Acked), l...)
			}
			if p.Stored >= 0 {
				emit(d.storedOffset, prometheus.GaugeValue, float64(p.Stored), l...)
			}
			if p.LastAckMs > 0 {
				emit(d.lastAck, prometheus.GaugeValue, float64(p.LastAckMs)/1000, l...)
			}
		}
		if h := f.Heartbeats; h != nil {
			emit(d.heartbeats, prometheus.CounterValue, float64(h.Count), f.Source, f.Target)
			if h.LastMs > 0 {
				emit(d.heartbeatLast, prometheus.GaugeValue, float64(h.LastMs)/1000, f.Source, f.Target)
			}
		}
		if s := f.OffsetSyncs; s != nil {
			emit(d.offsetSyncs, prometheus.CounterValue, float64(s.Count), f.Source, f.Target)
			if s.LastMs > 0 {
				emit(d.offsetSyncLast, prometheus.GaugeValue, float64(s.LastMs)/1000, f.Source, f.Target)
			}
		}
		if cp := f.Checkpoints; cp != nil {
			emit(d.cpSkippedActive, prometheus.GaugeValue, float64(len(cp.SkippedActiveGroups)), f.Source, f.Target)
			for _, g := range cp.Groups {
				if g.LastCheckpointMs > 0 {
					emit(d.cpAge, prometheus.GaugeValue, float64(max(nowMs-g.LastCheckpointMs, 0))/1000, f.Source, f.Target, g.Group)
				}
				for _, p := range g.Partitions {
					summary(d.cpLatency, d.cpLatencyMax, p.Latency, f.Source, f.Target, g.Group, p.Topic, strconv.Itoa(int(p.Partition)))
				}
			}
		}
	}
	cs, ok := c.src.(ClientStatsSource)
	if !ok {
		return
	}
	for _, cl := range cs.ClientStats() {
		l := []string{cl.Source, cl.Target, cl.Cluster, cl.Client, cl.Role}
		if cl.QueueMessages >= 0 {
			emit(d.queueMessages, prometheus.GaugeValue, float64(cl.QueueMessages), l...)
		}
		if cl.QueueBytes >= 0 {
			emit(d.queueBytes, prometheus.GaugeValue, float64(cl.QueueBytes), l...)
		}
		for _, b := range cl.Brokers {
			bl := append(l[:len(l):len(l)], b.Broker)
			emit(d.rttAvg, prometheus.GaugeValue, b.RTTAvg.Seconds(), bl...)
			emit(d.rttP99, prometheus.GaugeValue, b.RTTP99.Seconds(), bl...)
			emit(d.outbufRequests, prometheus.GaugeValue, float64(b.OutbufRequests), bl...)
			emit(d.waitrespCount, prometheus.GaugeValue, float64(b.WaitrespRequests), bl...)
		}
	}
}

// lagSeconds is the age of the oldest unreplicated record: exact when the source reports its
// timestamp; 0 when caught up; otherwise the time since the partition's last acknowledgement
// (how long it has made no progress while records wait). Unknown (not exported) when the lag
// is unknown, or records wait and nothing was ever acknowledged.
func lagSeconds(p PartitionStats, nowMs int64) (float64, bool) {
	switch {
	case p.OldestUnreplicatedMs > 0:
		return float64(max(nowMs-p.OldestUnreplicatedMs, 0)) / 1000, true
	case p.Lag == 0:
		return 0, true
	case p.Lag > 0 && p.LastAckMs > 0:
		return float64(max(nowMs-p.LastAckMs, 0)) / 1000, true
	}
	return 0, false
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
