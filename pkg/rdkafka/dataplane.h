// The C data plane of a Copier (kmm.data.plane = c): records go from the source consumer's queue
// to the target producer and their delivery reports are folded into per-partition runs, all in
// C; Go sees one call per batch (dataplane.go, docs/benchmarks.md "The C data plane").
//
// librdkafka's header is inside the confluent-kafka-go module, which cgo cannot put on this
// package's include path; the few declarations used are restated in rdkafka_types.h and
// rdkafka_funcs.h, as rdkafka.h of librdkafka v2.11.1 (the version confluent-kafka-go v2.11.1
// links statically) declares them. TestRestatedRdkafkaDeclarations compiles them against that
// rdkafka.h (layouts, constants, function types); TestDataPlaneCopy also compares every copied
// record's key, value, timestamp and headers.
#ifndef KMM_DATAPLANE_H
#define KMM_DATAPLANE_H

#include <stdint.h>
#include <stddef.h>
#include <pthread.h>

#include "rdkafka_types.h"
#include "rdkafka_funcs.h"

// ---- kmm ----

// One entry of a delivery batch: a run of acknowledged records of one partition whose source and
// target offsets both advance by one (first..last), or an echo acknowledgement (n = 0, dst -1):
// the position may move to last_src, nothing was written.
typedef struct kmm_run {
	int32_t part;
	int32_t _pad;
	int64_t first_src, first_dst, last_src, last_dst;
	int64_t n, bytes, lat_sum, lat_max;
} kmm_run;

// A gap the consumer saw (offsets jumped from expected to got).
typedef struct kmm_gap {
	int32_t part;
	int32_t _pad;
	int64_t expected, got;
} kmm_gap;

// An event Go must handle: a client error, a record error, statistics, a log line, a record
// the target rejected. text is malloc'd (Go frees it).
typedef struct kmm_event {
	int kind; // KMM_EV_*
	int code;
	int fatal;
	int level;
	int32_t partition;
	int32_t part; // record failures: the part id
	int64_t offset;
	int64_t after; // KMM_EV_EOF: the source offset of the last record produced from the partition, -1
	char *text;
	char *topic; // malloc'd
} kmm_event;

#define KMM_EV_NONE 0
#define KMM_EV_ERROR 1
#define KMM_EV_RECORD_ERROR 2
#define KMM_EV_STATS 3
#define KMM_EV_LOG 4
#define KMM_EV_REJECTED 5
#define KMM_EV_EOF 6

// kmm_consume results
#define KMM_C_IDLE 0       // nothing (more) to do now
#define KMM_C_EVENT 1      // ev is set
#define KMM_C_FULL 2       // the producer queue is full: a record waits (call again, or drop it)
#define KMM_C_NOPART 3     // the target partition is unknown: a record waits (refresh metadata)
#define KMM_C_PRODUCE_ERR 4 // produce failed (code in ev)
#define KMM_C_GAPS 5       // the gap buffer is full

typedef struct kmm_part kmm_part;
typedef struct kmm_topic kmm_topic;
typedef struct kmm_dp kmm_dp;

kmm_dp *kmm_dp_new(rd_kafka_t *cons, rd_kafka_conf_t *pconf, char *errstr, size_t errsize);
void kmm_dp_set_origin(kmm_dp *dp, const char *origin, const char *target);
int kmm_dp_add_part(kmm_dp *dp, int32_t id, const char *src, const char *dst, int32_t partition, int64_t next_expected, kmm_part **out);
int kmm_dp_remove_part(kmm_dp *dp, kmm_part *p);
int64_t kmm_dp_part_inflight(kmm_part *p);
int64_t kmm_dp_pending_offset(kmm_dp *dp);
int kmm_dp_consume(kmm_dp *dp, int timeout_ms, int max_msgs, int64_t max_weight, kmm_event *ev, int64_t *produced, int64_t *echoes, int64_t *bytes, int64_t *weight);
void kmm_dp_drop_pending(kmm_dp *dp);
int32_t kmm_dp_pending_part(kmm_dp *dp);
int kmm_dp_deliveries(kmm_dp *dp, int timeout_ms, kmm_event *ev, int *nruns, int64_t *reported, int64_t *purged);
kmm_run *kmm_dp_runs(kmm_dp *dp);
kmm_gap *kmm_dp_gaps(kmm_dp *dp, int *n);
void kmm_dp_set_purging(kmm_dp *dp);
void kmm_dp_purge(kmm_dp *dp);
int kmm_dp_outq_len(kmm_dp *dp);
void kmm_dp_wake_deliveries(kmm_dp *dp);
void kmm_dp_wake_consumer(kmm_dp *dp);
int kmm_dp_partition_count(kmm_dp *dp, const char *topic, int timeout_ms);
void kmm_dp_destroy_producer(kmm_dp *dp);
void kmm_dp_free(kmm_dp *dp);
const char *kmm_dp_rk_name(rd_kafka_t *rk);

#endif
