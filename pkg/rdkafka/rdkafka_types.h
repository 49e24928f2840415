// The types and constants of librdkafka's rdkafka.h that kmm's C (dataplane.c, scan.c) uses,
// restated as librdkafka v2.11.1 (what confluent-kafka-go v2.11.1 links statically) declares
// them: that header is inside the confluent-kafka-go module, which cgo cannot put on this
// package's include path. rdkafka_funcs.h restates the functions.
//
// TestRestatedRdkafkaDeclarations (decls_test.go) compiles testdata/declcheck.c against the
// module's own rdkafka.h: every struct here must have its size, alignment and each field's
// offset, size and type; every constant its value; every typedef the same type. A difference is
// a compile error there, so an upgrade of confluent-kafka-go that changes what is restated here
// fails `make unit`. A struct or constant added here needs its line in declcheck.c.
#ifndef KMM_RDKAFKA_TYPES_H
#define KMM_RDKAFKA_TYPES_H

#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct rd_kafka_s rd_kafka_t;
typedef struct rd_kafka_topic_s rd_kafka_topic_t;
typedef struct rd_kafka_conf_s rd_kafka_conf_t;
typedef struct rd_kafka_topic_conf_s rd_kafka_topic_conf_t;
typedef struct rd_kafka_queue_s rd_kafka_queue_t;
typedef struct rd_kafka_op_s rd_kafka_event_t;
typedef struct rd_kafka_headers_s rd_kafka_headers_t;
typedef struct rd_kafka_error_s rd_kafka_error_t;
// An enum there (with negative values: int's compatible type); only compared with constants here.
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
	int vtype; // rd_kafka_vtype_t there: the KMM_VTYPE_* values below
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
	struct rd_kafka_metadata_partition *partitions; // never read here: left incomplete
	rd_kafka_resp_err_t err;
};
struct rd_kafka_metadata {
	int broker_cnt;
	struct rd_kafka_metadata_broker *brokers; // never read here: left incomplete
	int topic_cnt;
	struct rd_kafka_metadata_topic *topics;
	int32_t orig_broker_id;
	char *orig_broker_name;
};

// RD_KAFKA_VTYPE_*
#define KMM_VTYPE_END 0
#define KMM_VTYPE_RKT 2
#define KMM_VTYPE_PARTITION 3
#define KMM_VTYPE_VALUE 4
#define KMM_VTYPE_KEY 5
#define KMM_VTYPE_OPAQUE 6
#define KMM_VTYPE_MSGFLAGS 7
#define KMM_VTYPE_TIMESTAMP 8
#define KMM_VTYPE_HEADERS 10

// RD_KAFKA_MSG_F_*
#define KMM_MSG_F_COPY 0x2

// RD_KAFKA_EVENT_*
#define KMM_EVENT_DR 0x1
#define KMM_EVENT_FETCH 0x2
#define KMM_EVENT_LOG 0x4
#define KMM_EVENT_ERROR 0x8
#define KMM_EVENT_STATS 0x40

// RD_KAFKA_RESP_ERR__*
#define KMM_ERR_PARTITION_EOF (-191)
#define KMM_ERR_UNKNOWN_PARTITION (-190)
#define KMM_ERR_QUEUE_FULL (-184)
#define KMM_ERR_NOENT (-156)
#define KMM_ERR_PURGE_QUEUE (-152)
#define KMM_ERR_PURGE_INFLIGHT (-151)

// RD_KAFKA_PURGE_F_*
#define KMM_PURGE_QUEUE 0x1
#define KMM_PURGE_INFLIGHT 0x2
#define KMM_PURGE_NON_BLOCKING 0x4

#endif
