// Package httpapi is the HTTP endpoint of a running `kmm replicate`: a status page for people
// with a browser (and its JSON), Prometheus metrics, health and readiness probes, and
// read-only Kafka Connect REST-compatible connector listings and statuses, so monitoring
// written for MM2-on-Connect keeps working.
//
// It reads snapshots through the Source interface on each scrape or request (and every 5 s,
// for the status page's rates) and adds no cost to the replication path. It must not import
// confluent-kafka-go or pkg/rdkafka (it builds without cgo), must not print, and must not read
// flags or configuration files: the command wires it up (pkg/replicator/replsource adapts a
// replicator.Replicator).
//
// # Endpoints
//
//	GET /                             a browser (Accept: text/html): the status page; otherwise {"version":...,"commit":...}
//	GET /?fragment=1                  the status page's live part (what its script fetches every 2 s)
//	GET /api/status                   the status page as JSON (schema_version 1, kind "replicate-status")
//	GET /static/status.css|status.js  the page's style and script (embedded)
//	GET /metrics                      Prometheus text format (kmm_*, go_*, process_*)
//	GET /healthz                      200 {"status":"ok"} while the process serves
//	GET /readyz                       200 when every flow runs and moves; 503 {"status":"not ready","reasons":[...],"clusters":[...]}
//	GET /connectors[?expand=status|info]
//	GET /connectors/{name}            {"name","config","tasks","type"}
//	GET /connectors/{name}/config     the connector config, secrets hidden
//	GET /connectors/{name}/status     Connect's status shape
//	GET /connectors/{name}/tasks/{id}/status
//	GET /connectors/{name}/offsets    resume positions, as Connect's KIP-875 endpoint shows them
//	GET /{source}/{target}/connectors[/...]   the same, for one flow, with MM2's simple names
//
// Everything else is a Connect-style JSON error, {"error_code":404,"message":...}; methods
// other than GET and HEAD get 405 (the API is read-only: connectors come from the MM2 file).
//
// # Status page
//
// GET / from a browser is one page for the people on call, readable on a phone: per flow its
// state (REPLICATING, FAILING_OVER, FAILED_OVER, FAILING_BACK, or STARTING, STOPPED,
// HEARTBEATS for a heartbeats-only flow) and health (OK, WARN, DOWN, STALLED, FAILED, STOPPED,
// STARTING) with the reasons; both clusters UP, NO ANSWER (failing for a few seconds) or DOWN
// (since when, why); records/s and bytes/s over about 30 s (sampled every 5 s); the lag in
// records and seconds with the worst 5 partitions and how old the source end offsets are (the
// same numbers as kmm_replication_lag_records and kmm_replication_lag_seconds); what failing
// over now would cost; checkpoint ages; exactly-once transactions; the rate limit; this
// process's worker share and every worker's partitions; the recent events, newest first.
//
// The server renders everything (html/template), so the page is complete with scripts off (a
// snapshot with a refresh link); its one small script (status.js) fetches /?fragment=1 every
// refresh_seconds and says when kmm stops answering. Nothing comes from elsewhere (no CDN, no
// web fonts; a Content-Security-Policy allows only the server's own files), colour is never
// the only signal (every badge has its word), and unknown is "?" on the page and null in the
// JSON, never 0. Nothing of the connector configs is shown (no secret can be).
//
// What the page shows beyond Stats comes from the optional StatusSource: the recent events and
// the background readings. replsource reads, per flow and only while the page or /api/status
// is requested (from the first request until 10 minutes without one), every 15 s: the cost of
// failing over now, with the functions `kmm lag --group` calls (snapshot.LagLive with the
// replicator's acknowledged positions, snapshot.GroupLag, lag.ComputeGroups: records not on
// the target, and per consumer group the records it would read again and could miss), and the
// flow's record and workers' leases in __kmm_state. Each reading says when it was made, how
// long it took and why the last attempt failed; a flow whose cluster the replicator holds for
// down is not read (the last numbers stay, marked stale).
//
// GET /api/status is the same as JSON: {"schema_version":1,"kind":"replicate-status",
// "generated_at", "kmm":{version,commit,worker_id}, "refresh_seconds", "health" (OK or
// ATTENTION), "flows":[{flow, source, target, enabled, state, state_record, health, reasons,
// error, pipelines, clusters:[{cluster, role, bootstrap, status, up, since, for_seconds, cause,
// rtt_avg_ms, rtt_p99_ms}], throughput:{records_per_second, bytes_per_second, window_seconds,
// records_total, bytes_total}, lag:{records, seconds, seconds_approximate, partitions,
// partitions_unknown, partitions_behind, source_ends_at, source_ends_age_seconds,
// lost_to_retention_records, worst:[...]}, failover_now:{status, computed_at, age_seconds,
// took_seconds, every_seconds, last_attempt_at, error, records_not_on_target,
// records_not_on_target_min, oldest_not_on_target_seconds, exact, position_sources,
// evidence_age_seconds, partitions, groups:[{group, partitions, would_reread,
// would_reread_unknown_partitions, could_miss, could_miss_min, could_miss_unknown_partitions,
// lag_on_source, lag_on_target}]},
// checkpoints, transactions, rate_limit, workers}], "events":[{time, type, level, flow,
// cluster, message}]}. A section that does not apply is null (lag of a heartbeats-only flow,
// transactions of an at-least-once flow, workers without kmm.workers.enabled).
//
// # Connector names
//
// MM2 in dedicated mode runs one Connect herder per flow S->T, and each herder names its
// connectors by their simple class names (MirrorSourceConnector, MirrorCheckpointConnector,
// MirrorHeartbeatConnector), so names repeat across flows. One kmm process serves every flow,
// so at the top level a connector is named "S->T.<simple name>", e.g.
// "A->B.MirrorSourceConnector": the convention of Strimzi's KafkaMirrorMaker2, whose Connect
// REST API on port 8083 is the one most MM2 users have curled. Names are stable when flows
// are added. For pasted commands:
//   - a bare simple name, GET /connectors/MirrorSourceConnector/status, resolves when exactly
//     one flow runs that connector; with several, the 404 message lists the full names;
//   - /{source}/{target}/connectors/... (MM2's per-flow REST prefix) answers with the simple
//     names, as that flow's own Connect cluster would;
//   - "->" may be sent raw (curl does) or percent-encoded (-%3E).
//
// An enabled flow has the source, checkpoint and heartbeat connectors; a heartbeats-only flow
// only the heartbeat connector. States: FAILED (with the flow's error as "trace") when the
// flow failed; UNASSIGNED while it is not running (starting, draining, stopped), and for the
// checkpoint connector while FlowStats.CheckpointsRunning is false; RUNNING otherwise. A
// RUNNING connector (and its tasks) whose flow cannot move carries the reason as "trace",
// starting with "stalled: " (a cluster it needs unreachable since when and why, or no record
// delivered for a while): Connect, too, keeps tasks RUNNING while their clients retry. Tasks:
// one per replication pipeline (tasks.max) for the source connector; one for the checkpoint
// and heartbeat connectors when they emit, else none. The worker_id is Options.WorkerID,
// default "<hostname>:<port>". GET /connectors/{name} returns MM2's connector config of the
// flow (Options.Configs, raw values as in the file, i.e. config-provider references stay
// unresolved as in Connect) with keys that hold secrets shown as "[hidden]"; without a config
// it returns only what kmm knows (aliases, tasks.max, enabled, name, connector.class).
//
// # Metrics
//
// MM2's JMX metrics (kafka.connect.mirror, mm2-compat.md §7.1) become Prometheus metrics with
// the same tags in the same order and the same meaning: counters get _total, MM2's -avg and
// -rate become _sum/_count summaries and counters to rate(), -max stays a gauge. The topic
// label is the remote (target) topic, as in MM2. Label sets:
//
//	flow:            source, target
//	partition:       source, target, topic, partition
//	group:           source, target, group
//	group partition: source, target, group, topic, partition
//	client:          source, target, cluster, client, role
//	broker:          source, target, cluster, client, role, broker
//
// Populated today (from replicator.Stats through replsource):
//
//	kmm_flow_up                                  gauge    flow       1 running, 0 starting/stopped/failed
//	kmm_flow_stalled_seconds                     gauge    flow       since the last delivery while records wait (0: moving or idle)
//	kmm_flow_transactions_committed_total        counter  flow       exactly-once flows: transactions committed
//	kmm_flow_transactions_aborted_total          counter  flow       exactly-once flows: transactions aborted (copied again)
//	kmm_cluster_up                               gauge    cluster    1 reachable, 0 after 10 s without a usable connection
//	kmm_cluster_rtt_avg_seconds|p99_seconds      gauge    cluster    the link's round trip (the replicator's metadata probe, last minute)
//	kmm_mirror_source_record_count_total         counter  partition  records acked by the target (MM2 record-count)
//	kmm_mirror_source_byte_count_total           counter  partition  value bytes of those (MM2 byte-count)
//	kmm_mirror_source_replication_latency_ms     summary  partition  ack time − record timestamp, _sum/_count (MM2 replication-latency-ms)
//	kmm_mirror_source_replication_latency_ms_max gauge    partition  largest since start (MM2: over a 2×30 s window)
//	kmm_replication_lag_records                  gauge    partition  source end − next offset to replicate
//	kmm_replication_lag_seconds                  gauge    partition  age of the oldest unreplicated record (approximate, below)
//	kmm_retention_gap_records_total              counter  partition  records deleted on S by retention before replication
//	kmm_replication_source_end_offset            gauge    partition  source end offset (refreshed every 5 s)
//	kmm_replication_acked_offset                 gauge    partition  last source offset acked by T
//	kmm_replication_stored_offset                gauge    partition  last resume position stored in mm2-offsets.<S>.internal
//	kmm_replication_last_ack_timestamp_seconds   gauge    partition  Unix time of the last ack
//	kmm_build_info                               gauge    version, commit
//	go_*, process_*                                                   Go runtime and process collectors
//
// Defined, exported only once a Source fills them (none does yet; no zeros are faked):
//
//	kmm_mirror_source_record_age_ms[_max]        summary+gauge partition  poll time − record timestamp (PartitionStats.RecordAge)
//	kmm_mirror_heartbeat_count_total             counter  flow      heartbeats written (FlowStats.Heartbeats)
//	kmm_mirror_heartbeat_last_timestamp_seconds  gauge    flow
//	kmm_mirror_offset_sync_count_total           counter  flow      offset syncs written (FlowStats.OffsetSyncs)
//	kmm_mirror_offset_sync_last_timestamp_seconds gauge   flow
//	kmm_mirror_checkpoint_latency_ms[_max]       summary+gauge group partition  MM2 checkpoint-latency-ms (FlowStats.Checkpoints)
//	kmm_checkpoint_age_seconds                   gauge    group     since the group's newest checkpoint
//	kmm_checkpoint_skipped_active_groups         gauge    flow      groups not synced because active on T
//	kmm_rdkafka_producer_queue_messages|bytes    gauge    client    librdkafka msg_cnt/msg_size (ClientStatsSource)
//	kmm_rdkafka_broker_rtt_avg_seconds|p99_seconds gauge  broker    librdkafka rtt.avg/p99
//	kmm_rdkafka_broker_outbuf_requests           gauge    broker    outbuf_cnt
//	kmm_rdkafka_broker_waitresp_requests         gauge    broker    waitresp_cnt
//
// Rates are PromQL's: rate(kmm_mirror_source_record_count_total[1m]) is MM2's record-rate,
// rate(..._replication_latency_ms_sum[5m]) / rate(..._replication_latency_ms_count[5m]) its
// -avg.
//
// kmm_replication_lag_seconds is exact (now − timestamp of the oldest unreplicated record)
// when the Source reports PartitionStats.OldestUnreplicatedMs. Until it does: 0 when the
// record lag is 0; otherwise the time since the partition's last acknowledgement, i.e. how
// long it has made no progress while records wait, which grows steadily for a stalled
// partition and stays near 0 for a busy one. A partition that was idle and just received
// records reads as its idle time until they are acked (milliseconds normally, since the lag
// only turns positive when an end-offset refresh catches unacked records), so alert on it
// with a `for:` clause. It is not exported while records wait and none was ever acked.
//
// # Binding
//
// The server has no authentication or TLS, and its answers reveal cluster aliases, topic
// names and client settings. New therefore refuses any address other machines could reach
// (":8083", "0.0.0.0:8083", a non-loopback IP or host name) unless Options.AllowRemote is
// set; the default is DefaultAddr, 127.0.0.1:8083.
package httpapi
