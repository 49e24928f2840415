// What rdkafka_types.h and rdkafka_funcs.h restate, compiled against librdkafka's own rdkafka.h
// (the one inside the confluent-kafka-go module, beside the static library kmm links): any
// difference is a compile error. TestRestatedRdkafkaDeclarations (decls_test.go) compiles this
// file with -Wall -Wextra -Werror; it is never linked.
#include <stddef.h>
#include <rdkafka.h> // librdkafka's own (-isystem .../kafka/librdkafka_vendor: its own warnings are not ours)

// 1. Types and constants. rdkafka_types.h is read with its definitions renamed (kmmchk_*), so
// that they stand beside rdkafka.h's and are compared member by member. Its opaque typedefs
// (rd_kafka_t, rd_kafka_event_t, ...) are not renamed: C11 allows a typedef to be repeated only
// as the same type, so a different struct behind one is an error by itself.
#define rd_kafka_resp_err_t kmmchk_resp_err_t
#define rd_kafka_type_t kmmchk_type_t
#define RD_KAFKA_PRODUCER KMMCHK_PRODUCER
#define RD_KAFKA_CONSUMER KMMCHK_CONSUMER
#define rd_kafka_timestamp_type_t kmmchk_timestamp_type_t
#define RD_KAFKA_TIMESTAMP_NOT_AVAILABLE KMMCHK_TIMESTAMP_NOT_AVAILABLE
#define RD_KAFKA_TIMESTAMP_CREATE_TIME KMMCHK_TIMESTAMP_CREATE_TIME
#define RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME KMMCHK_TIMESTAMP_LOG_APPEND_TIME
#define rd_kafka_message_s kmmchk_message_s
#define rd_kafka_message_t kmmchk_message_t
#define rd_kafka_vu_s kmmchk_vu_s
#define rd_kafka_vu_t kmmchk_vu_t
#define rd_kafka_topic_partition_s kmmchk_topic_partition_s
#define rd_kafka_topic_partition_t kmmchk_topic_partition_t
#define rd_kafka_metadata_topic kmmchk_metadata_topic
#define rd_kafka_metadata kmmchk_metadata
#include "rdkafka_types.h"
#undef rd_kafka_resp_err_t
#undef rd_kafka_type_t
#undef RD_KAFKA_PRODUCER
#undef RD_KAFKA_CONSUMER
#undef rd_kafka_timestamp_type_t
#undef RD_KAFKA_TIMESTAMP_NOT_AVAILABLE
#undef RD_KAFKA_TIMESTAMP_CREATE_TIME
#undef RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME
#undef rd_kafka_message_s
#undef rd_kafka_message_t
#undef rd_kafka_vu_s
#undef rd_kafka_vu_t
#undef rd_kafka_topic_partition_s
#undef rd_kafka_topic_partition_t
#undef rd_kafka_metadata_topic
#undef rd_kafka_metadata

#define COMPATIBLE(a, b) __builtin_types_compatible_p(a, b)
// SAME_TYPE: compatible types of one size and alignment (an enum and int are, in GCC and
// clang, when the enum has negative values).
#define SAME_TYPE(mine, theirs)                                                                                     \
	_Static_assert(COMPATIBLE(mine, theirs) && sizeof(mine) == sizeof(theirs) && _Alignof(mine) == _Alignof(theirs), \
		       #mine " is not " #theirs)
// SAME_LAYOUT: one size and alignment; the members are compared one by one below.
#define SAME_LAYOUT(mine, theirs)                                                                       \
	_Static_assert(sizeof(mine) == sizeof(theirs) && _Alignof(mine) == _Alignof(theirs), #mine " and " \
		       #theirs " differ in size or alignment")
#define MEMBER_TYPE(t, m) __typeof__(((t *)0)->m)
// AT: member m is at the same offset with the same size; FIELD: and of a compatible type.
#define AT(mine, theirs, m)                                                                       \
	_Static_assert(offsetof(mine, m) == offsetof(theirs, m) &&                                  \
			       sizeof(((mine *)0)->m) == sizeof(((theirs *)0)->m),                    \
		       #mine "." #m " is not where " #theirs "." #m " is, or not as large")
#define FIELD(mine, theirs, m)                                                                    \
	AT(mine, theirs, m);                                                                      \
	_Static_assert(COMPATIBLE(MEMBER_TYPE(mine, m), MEMBER_TYPE(theirs, m)), #mine "." #m \
		       " is not of the type of " #theirs "." #m)
#define SAME_VALUE(mine, theirs) _Static_assert((long long)(mine) == (long long)(theirs), #mine " is not " #theirs)

// typedefs and enums
SAME_TYPE(kmmchk_resp_err_t, rd_kafka_resp_err_t);
SAME_LAYOUT(kmmchk_type_t, rd_kafka_type_t);
_Static_assert(COMPATIBLE(kmmchk_type_t, unsigned) == COMPATIBLE(rd_kafka_type_t, unsigned), "rd_kafka_type_t's integer type");
SAME_VALUE(KMMCHK_PRODUCER, RD_KAFKA_PRODUCER);
SAME_VALUE(KMMCHK_CONSUMER, RD_KAFKA_CONSUMER);
SAME_LAYOUT(kmmchk_timestamp_type_t, rd_kafka_timestamp_type_t);
_Static_assert(COMPATIBLE(kmmchk_timestamp_type_t, unsigned) == COMPATIBLE(rd_kafka_timestamp_type_t, unsigned),
	       "rd_kafka_timestamp_type_t's integer type");
SAME_VALUE(KMMCHK_TIMESTAMP_NOT_AVAILABLE, RD_KAFKA_TIMESTAMP_NOT_AVAILABLE);
SAME_VALUE(KMMCHK_TIMESTAMP_CREATE_TIME, RD_KAFKA_TIMESTAMP_CREATE_TIME);
SAME_VALUE(KMMCHK_TIMESTAMP_LOG_APPEND_TIME, RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME);

// rd_kafka_message_t
SAME_LAYOUT(kmmchk_message_t, rd_kafka_message_t);
FIELD(kmmchk_message_t, rd_kafka_message_t, err);
FIELD(kmmchk_message_t, rd_kafka_message_t, rkt);
FIELD(kmmchk_message_t, rd_kafka_message_t, partition);
FIELD(kmmchk_message_t, rd_kafka_message_t, payload);
FIELD(kmmchk_message_t, rd_kafka_message_t, len);
FIELD(kmmchk_message_t, rd_kafka_message_t, key);
FIELD(kmmchk_message_t, rd_kafka_message_t, key_len);
FIELD(kmmchk_message_t, rd_kafka_message_t, offset);
FIELD(kmmchk_message_t, rd_kafka_message_t, _private);

// rd_kafka_vu_t (vtype is an int here for rd_kafka_vtype_t: where and how large is checked,
// and its values are the KMM_VTYPE_* below)
SAME_LAYOUT(kmmchk_vu_t, rd_kafka_vu_t);
AT(kmmchk_vu_t, rd_kafka_vu_t, vtype);
AT(kmmchk_vu_t, rd_kafka_vu_t, u);
FIELD(kmmchk_vu_t, rd_kafka_vu_t, u.cstr);
FIELD(kmmchk_vu_t, rd_kafka_vu_t, u.rkt);
FIELD(kmmchk_vu_t, rd_kafka_vu_t, u.i);
FIELD(kmmchk_vu_t, rd_kafka_vu_t, u.i32);
FIELD(kmmchk_vu_t, rd_kafka_vu_t, u.i64);
FIELD(kmmchk_vu_t, rd_kafka_vu_t, u.mem.ptr);
FIELD(kmmchk_vu_t, rd_kafka_vu_t, u.mem.size);
FIELD(kmmchk_vu_t, rd_kafka_vu_t, u.header.name);
FIELD(kmmchk_vu_t, rd_kafka_vu_t, u.header.val);
FIELD(kmmchk_vu_t, rd_kafka_vu_t, u.header.size);
FIELD(kmmchk_vu_t, rd_kafka_vu_t, u.headers);
FIELD(kmmchk_vu_t, rd_kafka_vu_t, u.ptr);
FIELD(kmmchk_vu_t, rd_kafka_vu_t, u._pad);

// rd_kafka_topic_partition_t
SAME_LAYOUT(kmmchk_topic_partition_t, rd_kafka_topic_partition_t);
FIELD(kmmchk_topic_partition_t, rd_kafka_topic_partition_t, topic);
FIELD(kmmchk_topic_partition_t, rd_kafka_topic_partition_t, partition);
FIELD(kmmchk_topic_partition_t, rd_kafka_topic_partition_t, offset);
FIELD(kmmchk_topic_partition_t, rd_kafka_topic_partition_t, metadata);
FIELD(kmmchk_topic_partition_t, rd_kafka_topic_partition_t, metadata_size);
FIELD(kmmchk_topic_partition_t, rd_kafka_topic_partition_t, opaque);
FIELD(kmmchk_topic_partition_t, rd_kafka_topic_partition_t, err);
FIELD(kmmchk_topic_partition_t, rd_kafka_topic_partition_t, _private);

// struct rd_kafka_metadata_topic, struct rd_kafka_metadata
SAME_LAYOUT(struct kmmchk_metadata_topic, struct rd_kafka_metadata_topic);
FIELD(struct kmmchk_metadata_topic, struct rd_kafka_metadata_topic, topic);
FIELD(struct kmmchk_metadata_topic, struct rd_kafka_metadata_topic, partition_cnt);
FIELD(struct kmmchk_metadata_topic, struct rd_kafka_metadata_topic, partitions);
FIELD(struct kmmchk_metadata_topic, struct rd_kafka_metadata_topic, err);
SAME_LAYOUT(struct kmmchk_metadata, struct rd_kafka_metadata);
FIELD(struct kmmchk_metadata, struct rd_kafka_metadata, broker_cnt);
FIELD(struct kmmchk_metadata, struct rd_kafka_metadata, brokers);
FIELD(struct kmmchk_metadata, struct rd_kafka_metadata, topic_cnt);
AT(struct kmmchk_metadata, struct rd_kafka_metadata, topics); // (the pointee is compared above)
FIELD(struct kmmchk_metadata, struct rd_kafka_metadata, orig_broker_id);
FIELD(struct kmmchk_metadata, struct rd_kafka_metadata, orig_broker_name);

// constants
SAME_VALUE(KMM_VTYPE_END, RD_KAFKA_VTYPE_END);
SAME_VALUE(KMM_VTYPE_RKT, RD_KAFKA_VTYPE_RKT);
SAME_VALUE(KMM_VTYPE_PARTITION, RD_KAFKA_VTYPE_PARTITION);
SAME_VALUE(KMM_VTYPE_VALUE, RD_KAFKA_VTYPE_VALUE);
SAME_VALUE(KMM_VTYPE_KEY, RD_KAFKA_VTYPE_KEY);
SAME_VALUE(KMM_VTYPE_OPAQUE, RD_KAFKA_VTYPE_OPAQUE);
SAME_VALUE(KMM_VTYPE_MSGFLAGS, RD_KAFKA_VTYPE_MSGFLAGS);
SAME_VALUE(KMM_VTYPE_TIMESTAMP, RD_KAFKA_VTYPE_TIMESTAMP);
SAME_VALUE(KMM_VTYPE_HEADERS, RD_KAFKA_VTYPE_HEADERS);
SAME_VALUE(KMM_MSG_F_COPY, RD_KAFKA_MSG_F_COPY);
SAME_VALUE(KMM_EVENT_DR, RD_KAFKA_EVENT_DR);
SAME_VALUE(KMM_EVENT_FETCH, RD_KAFKA_EVENT_FETCH);
SAME_VALUE(KMM_EVENT_LOG, RD_KAFKA_EVENT_LOG);
SAME_VALUE(KMM_EVENT_ERROR, RD_KAFKA_EVENT_ERROR);
SAME_VALUE(KMM_EVENT_STATS, RD_KAFKA_EVENT_STATS);
SAME_VALUE(KMM_ERR_PARTITION_EOF, RD_KAFKA_RESP_ERR__PARTITION_EOF);
SAME_VALUE(KMM_ERR_UNKNOWN_PARTITION, RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION);
SAME_VALUE(KMM_ERR_QUEUE_FULL, RD_KAFKA_RESP_ERR__QUEUE_FULL);
SAME_VALUE(KMM_ERR_NOENT, RD_KAFKA_RESP_ERR__NOENT);
SAME_VALUE(KMM_ERR_PURGE_QUEUE, RD_KAFKA_RESP_ERR__PURGE_QUEUE);
SAME_VALUE(KMM_ERR_PURGE_INFLIGHT, RD_KAFKA_RESP_ERR__PURGE_INFLIGHT);
SAME_VALUE(KMM_PURGE_QUEUE, RD_KAFKA_PURGE_F_QUEUE);
SAME_VALUE(KMM_PURGE_INFLIGHT, RD_KAFKA_PURGE_F_INFLIGHT);
SAME_VALUE(KMM_PURGE_NON_BLOCKING, RD_KAFKA_PURGE_F_NON_BLOCKING);

// 2. Functions: rdkafka_funcs.h's prototypes, now over rdkafka.h's own types (rdkafka_types.h
// is not read again: its guard is set), redeclare rdkafka.h's functions; a redeclaration of
// another type is an error ("conflicting types"). That rdkafka.h declares each at all is
// decls_test.go's to check (a new declaration is no error).
#include "rdkafka_funcs.h"
