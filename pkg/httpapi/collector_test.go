package httpapi

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// fakeSource is a Source whose snapshot the test sets.
type fakeSource struct {
	mu      sync.Mutex
	flows   []FlowStats
	clients []ClientStats // served only through fakeClientSource
}

func (f *fakeSource) Stats() []FlowStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]FlowStats, len(f.flows))
	copy(out, f.flows)
	return out
}

func (f *fakeSource) set(flows ...FlowStats) {
	f.mu.Lock()
	f.flows = flows
	f.mu.Unlock()
}

type fakeClientSource struct{ *fakeSource }

func (f fakeClientSource) ClientStats() []ClientStats { return f.clients }

var testNow = time.UnixMilli(1_700_000_100_000)

func fixedNow() time.Time { return testNow }

// baseFlows: A->B replicating two partitions (one behind, one caught up, one never acked), and
// a heartbeats-only B->A that is not running.
func baseFlows() []FlowStats {
	return []FlowStats{
		{Source: "A", Target: "B", Enabled: true, Running: true, Tasks: 2, EmitHeartbeats: true,
			Partitions: []PartitionStats{
				{Topic: "orders", RemoteTopic: "A.orders", Partition: 0, Records: 1000, Bytes: 64000, Acked: 999, Stored: 990,
					SourceEnd: 1005, Lag: 5, LostRecords: 0, LastAckMs: 1_700_000_097_500,
					ReplicationLatency: Latency{Count: 1000, SumMs: 25000, MaxMs: 180}},
				{Topic: "orders", RemoteTopic: "A.orders", Partition: 1, Records: 40, Bytes: 800, Acked: 139, Stored: 139,
					SourceEnd: 140, Lag: 0, LostRecords: 100, LastAckMs: 1_700_000_000_000,
					ReplicationLatency: Latency{Count: 40, SumMs: 400, MaxMs: 12}},
				{Topic: "orders", RemoteTopic: "A.orders", Partition: 2, Acked: -1, Stored: -1, SourceEnd: -1, Lag: -1},
			}},
		{Source: "B", Target: "A", Enabled: false, Running: false, Tasks: 1, EmitHeartbeats: true},
	}
}

func TestMetricsExact(t *testing.T) {
	src := &fakeSource{}
	src.set(baseFlows()...)
	want := `
# HELP kmm_flow_up 1 while the flow S->T runs, 0 when it is starting, stopped or failed.
# TYPE kmm_flow_up gauge
kmm_flow_up{source="A",target="B"} 1
kmm_flow_up{source="B",target="A"} 0
# HELP kmm_mirror_source_byte_count_total Value bytes (not keys or headers) of the records acknowledged by the target since start (MM2 byte-count).
# TYPE kmm_mirror_source_byte_count_total counter
kmm_mirror_source_byte_count_total{partition="0",source="A",target="B",topic="A.orders"} 64000
kmm_mirror_source_byte_count_total{partition="1",source="A",target="B",topic="A.orders"} 800
kmm_mirror_source_byte_count_total{partition="2",source="A",target="B",topic="A.orders"} 0
# HELP kmm_mirror_source_record_count_total Records acknowledged by the target since start (MM2 MirrorSourceConnector record-count).
# TYPE kmm_mirror_source_record_count_total counter
kmm_mirror_source_record_count_total{partition="0",source="A",target="B",topic="A.orders"} 1000
kmm_mirror_source_record_count_total{partition="1",source="A",target="B",topic="A.orders"} 40
kmm_mirror_source_record_count_total{partition="2",source="A",target="B",topic="A.orders"} 0
# HELP kmm_mirror_source_replication_latency_ms Acknowledgement time minus record timestamp, in milliseconds (MM2 replication-latency-ms); sum and count since start.
# TYPE kmm_mirror_source_replication_latency_ms summary
kmm_mirror_source_replication_latency_ms_sum{partition="0",source="A",target="B",topic="A.orders"} 25000
kmm_mirror_source_replication_latency_ms_count{partition="0",source="A",target="B",topic="A.orders"} 1000
kmm_mirror_source_replication_latency_ms_sum{partition="1",source="A",target="B",topic="A.orders"} 400
kmm_mirror_source_replication_latency_ms_count{partition="1",source="A",target="B",topic="A.orders"} 40
kmm_mirror_source_replication_latency_ms_sum{partition="2",source="A",target="B",topic="A.orders"} 0
kmm_mirror_source_replication_latency_ms_count{partition="2",source="A",target="B",topic="A.orders"} 0
# HELP kmm_mirror_source_replication_latency_ms_max Largest replication latency since start, in milliseconds (MM2's -max is over a 2x30 s window instead).
# TYPE kmm_mirror_source_replication_latency_ms_max gauge
kmm_mirror_source_replication_latency_ms_max{partition="0",source="A",target="B",topic="A.orders"} 180
kmm_mirror_source_replication_latency_ms_max{partition="1",source="A",target="B",topic="A.orders"} 12
kmm_mirror_source_replication_latency_ms_max{partition="2",source="A",target="B",topic="A.orders"} 0
# HELP kmm_replication_acked_offset Last source offset whose record the target acknowledged.
# TYPE kmm_replication_acked_offset gauge
kmm_replication_acked_offset{partition="0",source="A",target="B",topic="A.orders"} 999
kmm_replication_acked_offset{partition="1",source="A",target="B",topic="A.orders"} 139
# HELP kmm_replication_lag_records Source end offset minus the next offset to replicate (the end offset is refreshed every few seconds).
# TYPE kmm_replication_lag_records gauge
kmm_replication_lag_records{partition="0",source="A",target="B",topic="A.orders"} 5
kmm_replication_lag_records{partition="1",source="A",target="B",topic="A.orders"} 0
# HELP kmm_replication_lag_seconds Age of the oldest record not replicated yet; 0 when caught up. Approximated as the time since the last acknowledgement while records wait, unless the source reports the oldest record's timestamp.
# TYPE kmm_replication_lag_seconds gauge
kmm_replication_lag_seconds{partition="0",source="A",target="B",topic="A.orders"} 2.5
kmm_replication_lag_seconds{partition="1",source="A",target="B",topic="A.orders"} 0
# HELP kmm_replication_last_ack_timestamp_seconds Unix time of the last record the target acknowledged.
# TYPE kmm_replication_last_ack_timestamp_seconds gauge
kmm_replication_last_ack_timestamp_seconds{partition="0",source="A",target="B",topic="A.orders"} 1.7000000975e+09
kmm_replication_last_ack_timestamp_seconds{partition="1",source="A",target="B",topic="A.orders"} 1.7e+09
# HELP kmm_replication_source_end_offset End offset of the source partition, as last read.
# TYPE kmm_replication_source_end_offset gauge
kmm_replication_source_end_offset{partition="0",source="A",target="B",topic="A.orders"} 1005
kmm_replication_source_end_offset{partition="1",source="A",target="B",topic="A.orders"} 140
# HELP kmm_replication_stored_offset Last source offset stored as the resume position in mm2-offsets.<source>.internal on the target.
# TYPE kmm_replication_stored_offset gauge
kmm_replication_stored_offset{partition="0",source="A",target="B",topic="A.orders"} 990
kmm_replication_stored_offset{partition="1",source="A",target="B",topic="A.orders"} 139
# HELP kmm_retention_gap_records_total Records deleted by retention on the source before they were replicated (lost to the target).
# TYPE kmm_retention_gap_records_total counter
kmm_retention_gap_records_total{partition="0",source="A",target="B",topic="A.orders"} 0
kmm_retention_gap_records_total{partition="1",source="A",target="B",topic="A.orders"} 100
kmm_retention_gap_records_total{partition="2",source="A",target="B",topic="A.orders"} 0
`
	c := NewCollector(src, fixedNow)
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
	// The collector's output passes promlint (naming conventions), except for the _ms unit
	// kept from MM2's metric names on purpose.
	problems, err := testutil.CollectAndLint(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if strings.Contains(p.Metric, "_ms") && strings.Contains(p.Text, "abbreviated units") {
			continue
		}
		t.Errorf("lint %s: %s", p.Metric, p.Text)
	}
}

// Sections a Source does not fill are not exported at all, not exported as zeros.
func TestMetricsNotPopulatedAreAbsent(t *testing.T) {
	src := &fakeSource{}
	src.set(baseFlows()...)
	c := NewCollector(src, fixedNow)
	for _, name := range []string{
		"kmm_mirror_source_record_age_ms", "kmm_mirror_source_record_age_ms_max",
		"kmm_mirror_heartbeat_count_total", "kmm_mirror_heartbeat_last_timestamp_seconds",
		"kmm_mirror_offset_sync_count_total", "kmm_mirror_offset_sync_last_timestamp_seconds",
		"kmm_mirror_checkpoint_latency_ms", "kmm_mirror_checkpoint_latency_ms_max",
		"kmm_checkpoint_age_seconds", "kmm_checkpoint_skipped_active_groups",
		"kmm_rdkafka_producer_queue_messages", "kmm_rdkafka_broker_rtt_avg_seconds",
		"kmm_flow_transactions_committed_total", "kmm_flow_transactions_aborted_total",
	} {
		if n := testutil.CollectAndCount(c, name); n != 0 {
			t.Errorf("%s: %d series, want none", name, n)
		}
	}
}

// The optional sections and interfaces, filled by a future Source.
func TestMetricsOptionalSections(t *testing.T) {
	flows := []FlowStats{{Source: "A", Target: "B", Enabled: true, Running: true, Tasks: 1, EmitHeartbeats: true, CheckpointsRunning: true,
		Partitions: []PartitionStats{{Topic: "t", RemoteTopic: "A.t", Partition: 0, Records: 10, Acked: 9, Stored: 9, SourceEnd: 20, Lag: 10,
			LastAckMs: 1_700_000_099_000, OldestUnreplicatedMs: 1_700_000_040_000,
			ReplicationLatency: Latency{Count: 10, SumMs: 100, MaxMs: 30}, RecordAge: &Latency{Count: 10, SumMs: 50, MaxMs: 9}}},
		Heartbeats:   &EmitterStats{Count: 42, LastMs: 1_700_000_099_000},
		OffsetSyncs:  &EmitterStats{Count: 7},
		Transactions: &TxnStats{Committed: 31, Aborted: 4},
		Checkpoints: &CheckpointStats{SkippedActiveGroups: []string{"billing", "payments"},
			Groups: []GroupCheckpointStats{{Group: "g1", LastCheckpointMs: 1_700_000_090_000,
				Partitions: []CheckpointPartitionStats{{Topic: "A.t", Partition: 0, Latency: Latency{Count: 3, SumMs: 30, MaxMs: 20}}}}}},
	}}
	src := &fakeSource{clients: []ClientStats{{Source: "A", Target: "B", Cluster: "B", Client: "A->B-0", Role: "target-producer",
		QueueMessages: 12, QueueBytes: 3400, Brokers: []BrokerStats{{Broker: "127.0.0.1:29092/1", RTTAvg: 1500 * time.Microsecond,
			RTTP99: 8 * time.Millisecond, OutbufRequests: 1, WaitrespRequests: 3}}},
		{Source: "A", Target: "B", Cluster: "A", Client: "A->B-0", Role: "source-consumer", QueueMessages: -1, QueueBytes: -1}}}
	src.set(flows...)
	want := `
# HELP kmm_flow_transactions_aborted_total Transactions an exactly-once flow's pipelines aborted since start (a record the target refused, or a failed commit: their records are copied again from the committed positions), summed over pipelines.
# TYPE kmm_flow_transactions_aborted_total counter
kmm_flow_transactions_aborted_total{source="A",target="B"} 4
# HELP kmm_flow_transactions_committed_total Transactions an exactly-once flow's pipelines committed since start (records and their resume positions together), summed over pipelines.
# TYPE kmm_flow_transactions_committed_total counter
kmm_flow_transactions_committed_total{source="A",target="B"} 31
# HELP kmm_checkpoint_age_seconds Seconds since the newest checkpoint of the group was emitted.
# TYPE kmm_checkpoint_age_seconds gauge
kmm_checkpoint_age_seconds{group="g1",source="A",target="B"} 10
# HELP kmm_checkpoint_skipped_active_groups Groups whose offsets are not synced to the target because they have active members there.
# TYPE kmm_checkpoint_skipped_active_groups gauge
kmm_checkpoint_skipped_active_groups{source="A",target="B"} 2
# HELP kmm_mirror_checkpoint_latency_ms Time from computing a checkpoint to the acknowledgement of its record, in milliseconds (MM2 MirrorCheckpointConnector checkpoint-latency-ms); sum and count since start.
# TYPE kmm_mirror_checkpoint_latency_ms summary
kmm_mirror_checkpoint_latency_ms_sum{group="g1",partition="0",source="A",target="B",topic="A.t"} 30
kmm_mirror_checkpoint_latency_ms_count{group="g1",partition="0",source="A",target="B",topic="A.t"} 3
# HELP kmm_mirror_checkpoint_latency_ms_max Largest checkpoint latency since start, in milliseconds.
# TYPE kmm_mirror_checkpoint_latency_ms_max gauge
kmm_mirror_checkpoint_latency_ms_max{group="g1",partition="0",source="A",target="B",topic="A.t"} 20
# HELP kmm_mirror_heartbeat_count_total Heartbeat records written to the target's heartbeats topic since start.
# TYPE kmm_mirror_heartbeat_count_total counter
kmm_mirror_heartbeat_count_total{source="A",target="B"} 42
# HELP kmm_mirror_heartbeat_last_timestamp_seconds Unix time of the last heartbeat written.
# TYPE kmm_mirror_heartbeat_last_timestamp_seconds gauge
kmm_mirror_heartbeat_last_timestamp_seconds{source="A",target="B"} 1.700000099e+09
# HELP kmm_mirror_offset_sync_count_total Offset-sync records written since start.
# TYPE kmm_mirror_offset_sync_count_total counter
kmm_mirror_offset_sync_count_total{source="A",target="B"} 7
# HELP kmm_mirror_source_record_age_ms Poll time minus record timestamp, in milliseconds (MM2 record-age-ms); sum and count since start.
# TYPE kmm_mirror_source_record_age_ms summary
kmm_mirror_source_record_age_ms_sum{partition="0",source="A",target="B",topic="A.t"} 50
kmm_mirror_source_record_age_ms_count{partition="0",source="A",target="B",topic="A.t"} 10
# HELP kmm_mirror_source_record_age_ms_max Largest record age at poll time since start, in milliseconds.
# TYPE kmm_mirror_source_record_age_ms_max gauge
kmm_mirror_source_record_age_ms_max{partition="0",source="A",target="B",topic="A.t"} 9
# HELP kmm_rdkafka_broker_outbuf_requests Requests waiting to be sent to the broker (outbuf_cnt).
# TYPE kmm_rdkafka_broker_outbuf_requests gauge
kmm_rdkafka_broker_outbuf_requests{broker="127.0.0.1:29092/1",client="A->B-0",cluster="B",role="target-producer",source="A",target="B"} 1
# HELP kmm_rdkafka_broker_rtt_avg_seconds Average request round-trip time to the broker over the last librdkafka statistics window.
# TYPE kmm_rdkafka_broker_rtt_avg_seconds gauge
kmm_rdkafka_broker_rtt_avg_seconds{broker="127.0.0.1:29092/1",client="A->B-0",cluster="B",role="target-producer",source="A",target="B"} 0.0015
# HELP kmm_rdkafka_broker_rtt_p99_seconds 99th percentile request round-trip time to the broker over the last librdkafka statistics window.
# TYPE kmm_rdkafka_broker_rtt_p99_seconds gauge
kmm_rdkafka_broker_rtt_p99_seconds{broker="127.0.0.1:29092/1",client="A->B-0",cluster="B",role="target-producer",source="A",target="B"} 0.008
# HELP kmm_rdkafka_broker_waitresp_requests Requests sent to the broker and waiting for a response (waitresp_cnt).
# TYPE kmm_rdkafka_broker_waitresp_requests gauge
kmm_rdkafka_broker_waitresp_requests{broker="127.0.0.1:29092/1",client="A->B-0",cluster="B",role="target-producer",source="A",target="B"} 3
# HELP kmm_rdkafka_producer_queue_bytes Bytes waiting in the librdkafka producer queue (msg_size).
# TYPE kmm_rdkafka_producer_queue_bytes gauge
kmm_rdkafka_producer_queue_bytes{client="A->B-0",cluster="B",role="target-producer",source="A",target="B"} 3400
# HELP kmm_rdkafka_producer_queue_messages Messages waiting in the librdkafka producer queue (msg_cnt).
# TYPE kmm_rdkafka_producer_queue_messages gauge
kmm_rdkafka_producer_queue_messages{client="A->B-0",cluster="B",role="target-producer",source="A",target="B"} 12
# HELP kmm_replication_lag_seconds Age of the oldest record not replicated yet; 0 when caught up. Approximated as the time since the last acknowledgement while records wait, unless the source reports the oldest record's timestamp.
# TYPE kmm_replication_lag_seconds gauge
kmm_replication_lag_seconds{partition="0",source="A",target="B",topic="A.t"} 60
`
	c := NewCollector(fakeClientSource{src}, fixedNow)
	names := []string{"kmm_flow_transactions_aborted_total", "kmm_flow_transactions_committed_total", "kmm_checkpoint_age_seconds", "kmm_checkpoint_skipped_active_groups", "kmm_mirror_checkpoint_latency_ms",
		"kmm_mirror_checkpoint_latency_ms_max", "kmm_mirror_heartbeat_count_total", "kmm_mirror_heartbeat_last_timestamp_seconds",
		"kmm_mirror_offset_sync_count_total", "kmm_mirror_offset_sync_last_timestamp_seconds", "kmm_mirror_source_record_age_ms",
		"kmm_mirror_source_record_age_ms_max", "kmm_rdkafka_broker_outbuf_requests", "kmm_rdkafka_broker_rtt_avg_seconds",
		"kmm_rdkafka_broker_rtt_p99_seconds", "kmm_rdkafka_broker_waitresp_requests", "kmm_rdkafka_producer_queue_bytes",
		"kmm_rdkafka_producer_queue_messages", "kmm_replication_lag_seconds"}
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
}

func TestLagSeconds(t *testing.T) {
	now := int64(10_000)
	for _, tc := range []struct {
		name string
		p    PartitionStats
		want float64
		ok   bool
	}{
		{"unknown lag", PartitionStats{Lag: -1, LastAckMs: 9000}, 0, false},
		{"caught up", PartitionStats{Lag: 0, LastAckMs: 1000}, 0, true},
		{"behind, approximated", PartitionStats{Lag: 3, LastAckMs: 7500}, 2.5, true},
		{"behind, never acked", PartitionStats{Lag: 3}, 0, false},
		{"exact", PartitionStats{Lag: 3, LastAckMs: 9999, OldestUnreplicatedMs: 4000}, 6, true},
		{"clock skew", PartitionStats{Lag: 3, LastAckMs: 12000}, 0, true},
	} {
		got, ok := lagSeconds(tc.p, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: got %v,%v want %v,%v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
