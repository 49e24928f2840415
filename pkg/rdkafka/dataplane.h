// The C data plane of a Copier (kmm.data.plane = c): records go from the source consumer's queue
// to the target producer and their delivery reports are folded into per-partition runs, all in
// C; Go sees one call per batch (dataplane.go, docs/benchmarks.md "The C data plane").
//
// librdkafka's header is inside the confluent-kafka-go module, which cgo cannot put on this
// package's include path; the few declarations used are repeated here, as rdkafka.h of
// librdkafka v2.11.1 (the version confluent-kafka-go v2.11.1 links statically) declares them.
// Layouts (rd_kafka_message_t, rd_kafka_vu_t) are librdkafka's public ABI; TestDataPlaneCopy
// fails on any mismatch (it compares every copied record's key, value, timestamp and headers).
#ifndef KMM_DATAPLANE_H
#define KMM_DATAPLANE_H

#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include <pthread.h>

typedef struct rd_kafka_s rd_kafka_t;
typedef struct rd_kafka_topic_s rd_kafka_topic_t;
typedef struct rd_kafka_conf_s rd_kafka_conf_t;
typedef struct rd_kafka_topic_conf_s rd_kafka_topic_conf_t;
typedef struct rd_kafka_queue_s rd_kafka_queue_t;
typedef struct rd_kafka_op_s rd_kafka_event_t;
typedef struct rd_kafka_headers_s rd_kafka_headers_t;
typedef struct rd_kafka_error_s rd_kafka_error_t;
typedef int rd_kafka_resp_err_t;
typedef enum rd_kafka_type_t {
	RD_KAFKA_PRODUCER,
	RD_KAFKA_CONSUMER
} rd_kafka_type_t;
typedef enum rd_kafka_timestamp_type_t {
	RD_KAFKA_TIMESTAMP_NOT_AVAILABLE,
	RD_KAFKA_TIMESTAMP_CREATE_TIME,
	RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME
} rd_kafka_timestamp_type_t;

typedef struct rd_kafka_message_s {
	rd_kafka_resp_err_t err;
	rd_kafka_topic_t *rkt;
	int32_t partition;
	void *payload;
	size_t len;
	void *key;
	size_t key_len;
	int64_t offset;
	void *_private;
} rd_kafka_message_t;

typedef struct rd_kafka_vu_s {
	int vtype;
	union {
		const char *cstr;
		rd_kafka_topic_t *rkt;
		int i;
		int32_t i32;
		int64_t i64;
		struct {
			void *ptr;
			size_t size;
		} mem;
		struct {
			const char *name;
			const void *val;
			ssize_t size;
		} header;
		rd_kafka_headers_t *headers;
		void *ptr;
		char _pad[64];
	} u;
} rd_kafka_vu_t;

typedef struct rd_kafka_topic_partition_s {
	char *topic;
	int32_t partition;
	int64_t offset;
	void *metadata;
	size_t metadata_size;
	void *opaque;
	rd_kafka_resp_err_t err;
	void *_private;
} rd_kafka_topic_partition_t;

struct rd_kafka_metadata_topic {
	char *topic;
	int partition_cnt;
	void *partitions;
	rd_kafka_resp_err_t err;
};
struct rd_kafka_metadata {
	int broker_cnt;
	void *brokers;
	int topic_cnt;
	struct rd_kafka_metadata_topic *topics;
	int32_t orig_broker_id;
	char *orig_broker_name;
};

#define KMM_VTYPE_END 0
#define KMM_VTYPE_RKT 2
#define KMM_VTYPE_PARTITION 3
#define KMM_VTYPE_VALUE 4
#define KMM_VTYPE_KEY 5
#define KMM_VTYPE_OPAQUE 6
#define KMM_VTYPE_MSGFLAGS 7
#define KMM_VTYPE_TIMESTAMP 8
#define KMM_VTYPE_HEADERS 10

#define KMM_MSG_F_COPY 0x2

#define KMM_EVENT_DR 0x1
#define KMM_EVENT_FETCH 0x2
#define KMM_EVENT_LOG 0x4
#define KMM_EVENT_ERROR 0x8
#define KMM_EVENT_STATS 0x40

#define KMM_ERR_PARTITION_EOF (-191)
#define KMM_ERR_UNKNOWN_PARTITION (-190)
#define KMM_ERR_QUEUE_FULL (-184)
#define KMM_ERR_NOENT (-156)
#define KMM_ERR_PURGE_QUEUE (-152)
#define KMM_ERR_PURGE_INFLIGHT (-151)

#define KMM_PURGE_QUEUE 0x1
#define KMM_PURGE_INFLIGHT 0x2
#define KMM_PURGE_NON_BLOCKING 0x4

rd_kafka_conf_t *rd_kafka_conf_new(void);
int rd_kafka_conf_set(rd_kafka_conf_t *conf, const char *name, const char *value, char *errstr, size_t errstr_size);
void rd_kafka_conf_set_events(rd_kafka_conf_t *conf, int events);
void rd_kafka_conf_destroy(rd_kafka_conf_t *conf);
rd_kafka_t *rd_kafka_new(rd_kafka_type_t type, rd_kafka_conf_t *conf, char *errstr, size_t errstr_size);
void rd_kafka_destroy(rd_kafka_t *rk);
const char *rd_kafka_name(const rd_kafka_t *rk);
rd_kafka_queue_t *rd_kafka_queue_get_consumer(rd_kafka_t *rk);
rd_kafka_queue_t *rd_kafka_queue_get_main(rd_kafka_t *rk);
rd_kafka_queue_t *rd_kafka_queue_new(rd_kafka_t *rk);
void rd_kafka_queue_destroy(rd_kafka_queue_t *rkqu);
void rd_kafka_queue_yield(rd_kafka_queue_t *rkqu);
rd_kafka_resp_err_t rd_kafka_set_log_queue(rd_kafka_t *rk, rd_kafka_queue_t *rkqu);
rd_kafka_event_t *rd_kafka_queue_poll(rd_kafka_queue_t *rkqu, int timeout_ms);
int rd_kafka_event_type(const rd_kafka_event_t *rkev);
void rd_kafka_event_destroy(rd_kafka_event_t *rkev);
const rd_kafka_message_t *rd_kafka_event_message_next(rd_kafka_event_t *rkev);
rd_kafka_resp_err_t rd_kafka_event_error(rd_kafka_event_t *rkev);
const char *rd_kafka_event_error_string(rd_kafka_event_t *rkev);
int rd_kafka_event_error_is_fatal(rd_kafka_event_t *rkev);
rd_kafka_topic_partition_t *rd_kafka_event_topic_partition(rd_kafka_event_t *rkev);
void rd_kafka_topic_partition_destroy(rd_kafka_topic_partition_t *rktpar);
const char *rd_kafka_event_stats(rd_kafka_event_t *rkev);
int rd_kafka_event_log(rd_kafka_event_t *rkev, const char **fac, const char **str, int *level);
void rd_kafka_message_destroy(rd_kafka_message_t *rkmessage);
const char *rd_kafka_message_errstr(const rd_kafka_message_t *rkmessage);
int64_t rd_kafka_message_timestamp(const rd_kafka_message_t *rkmessage, rd_kafka_timestamp_type_t *tstype);
rd_kafka_resp_err_t rd_kafka_message_detach_headers(rd_kafka_message_t *rkmessage, rd_kafka_headers_t **hdrsp);
rd_kafka_headers_t *rd_kafka_headers_new(size_t initial_count);
void rd_kafka_headers_destroy(rd_kafka_headers_t *hdrs);
rd_kafka_resp_err_t rd_kafka_header_add(rd_kafka_headers_t *hdrs, const char *name, ssize_t name_size, const void *value, ssize_t value_size);
rd_kafka_resp_err_t rd_kafka_header_get_all(const rd_kafka_headers_t *hdrs, size_t idx, const char **namep, const void **valuep, size_t *sizep);
rd_kafka_resp_err_t rd_kafka_header_get_last(const rd_kafka_headers_t *hdrs, const char *name, const void **valuep, size_t *sizep);
rd_kafka_topic_t *rd_kafka_topic_new(rd_kafka_t *rk, const char *topic, rd_kafka_topic_conf_t *conf);
rd_kafka_topic_conf_t *rd_kafka_topic_conf_new(void);
void rd_kafka_topic_conf_set_opaque(rd_kafka_topic_conf_t *conf, void *rkt_opaque);
void *rd_kafka_topic_opaque(const rd_kafka_topic_t *rkt);
void rd_kafka_topic_destroy(rd_kafka_topic_t *rkt);
const char *rd_kafka_topic_name(const rd_kafka_topic_t *rkt);
rd_kafka_error_t *rd_kafka_produceva(rd_kafka_t *rk, const rd_kafka_vu_t *vus, size_t cnt);
rd_kafka_resp_err_t rd_kafka_error_code(const rd_kafka_error_t *error);
const char *rd_kafka_error_string(const rd_kafka_error_t *error);
void rd_kafka_error_destroy(rd_kafka_error_t *error);
int rd_kafka_outq_len(rd_kafka_t *rk);
rd_kafka_resp_err_t rd_kafka_purge(rd_kafka_t *rk, int purge_flags);
rd_kafka_resp_err_t rd_kafka_metadata(rd_kafka_t *rk, int all_topics, rd_kafka_topic_t *only_rkt, const struct rd_kafka_metadata **metadatap, int timeout_ms);
void rd_kafka_metadata_destroy(const struct rd_kafka_metadata *metadata);

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
