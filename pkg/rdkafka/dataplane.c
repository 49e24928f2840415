// The C data plane of a Copier: see dataplane.h and dataplane.go.
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>
#include "dataplane.h"

#define KMM_RUNS 1024
#define KMM_GAPS 64
#define KMM_DR_MAX 20000 // delivery reports handled per call at most
#define KMM_SLOTS 1024   // slots per chunk

// A slot travels with one record through the producer (its opaque): the record's source offset
// and timestamp, which its delivery report needs. Slots come in chunks of KMM_SLOTS, taken in
// order by the consumer thread; the delivery thread frees a chunk once all its slots are reported.
typedef struct kmm_chunk kmm_chunk;
typedef struct kmm_slot {
	int64_t off, ts;
	kmm_chunk *c;
} kmm_slot;
struct kmm_chunk {
	int done; // atomic: slots reported
	kmm_slot s[KMM_SLOTS];
};

struct kmm_part {
	int32_t id, partition;
	kmm_topic *t;
	int64_t next_expected; // consumer thread; -1 unknown
	int echo_seen;         // consumer thread: echoes skipped since the last record produced
	int64_t inflight;      // atomic: records produced, delivery report not handled
	int64_t echo_tail;     // under mu: the last echo skipped while records were in flight, -1
	int64_t echo_ack;      // under mu: an echo to acknowledge now (nothing in flight), -1
	int32_t run_idx;       // delivery thread: this partition's open run in runs, -1
	int64_t last_produced; // consumer thread: source offset of the last record produced, -1
	int removed;           // consumer thread: taken out (kmm_dp_remove_part); never copied again
	kmm_part *prev;        // the removed part this one replaced (re-added): its reports come first
};

struct kmm_topic {
	char *name, *dst;
	const rd_kafka_topic_t *seen; // the consumer's handle of the topic (compared, never used)
	rd_kafka_topic_t *dst_rkt;    // the producer's handle (opaque: this topic)
	kmm_part **bypart;            // atomic: by partition; grown by copy, old arrays kept
	int32_t nbypart;              // atomic
	kmm_topic *next;
};

struct kmm_dp {
	rd_kafka_t *cons;
	rd_kafka_queue_t *cq;
	rd_kafka_t *prod;
	rd_kafka_queue_t *pq, *logq;
	pthread_mutex_t mu;
	kmm_topic *topics; // atomic head
	void **garbage;
	int ngarbage, capgarbage;
	char *origin, *target;
	size_t origin_len, target_len;
	int purging;    // atomic
	int echo_ready; // atomic

	// consumer thread
	const rd_kafka_topic_t *last_rkt;
	kmm_topic *last_t;
	rd_kafka_message_t *pending;
	rd_kafka_headers_t *pending_hdrs;
	kmm_part *pending_part;
	kmm_gap gaps[KMM_GAPS];
	int ngaps;
	kmm_chunk *chunk; // slots being handed out
	int chunk_used;

	// delivery thread
	rd_kafka_event_t *cur_ev;
	kmm_run runs[KMM_RUNS];
	kmm_part *runpart[KMM_RUNS];
	int nruns;
	int failed;
};

static char *kmm_strdup(const char *s) { return s ? strdup(s) : NULL; }

static void keep_garbage(kmm_dp *dp, void *p) {
	if (dp->ngarbage == dp->capgarbage) {
		dp->capgarbage = dp->capgarbage ? dp->capgarbage * 2 : 16;
		dp->garbage = realloc(dp->garbage, sizeof(void *) * dp->capgarbage);
	}
	dp->garbage[dp->ngarbage++] = p;
}

const char *kmm_dp_rk_name(rd_kafka_t *rk) { return rd_kafka_name(rk); }

kmm_dp *kmm_dp_new(rd_kafka_t *cons, rd_kafka_conf_t *pconf, char *errstr, size_t errsize) {
	kmm_dp *dp = calloc(1, sizeof(*dp));
	rd_kafka_conf_set_events(pconf, KMM_EVENT_DR | KMM_EVENT_STATS | KMM_EVENT_ERROR);
	dp->prod = rd_kafka_new(RD_KAFKA_PRODUCER, pconf, errstr, errsize);
	if (!dp->prod) {
		rd_kafka_conf_destroy(pconf);
		free(dp);
		return NULL;
	}
	dp->cons = cons;
	dp->cq = rd_kafka_queue_get_consumer(cons);
	dp->pq = rd_kafka_queue_get_main(dp->prod);
	dp->logq = rd_kafka_queue_new(dp->prod);
	rd_kafka_set_log_queue(dp->prod, dp->logq);
	pthread_mutex_init(&dp->mu, NULL);
	return dp;
}

void kmm_dp_set_origin(kmm_dp *dp, const char *origin, const char *target) {
	dp->origin = kmm_strdup(origin);
	dp->origin_len = strlen(origin);
	dp->target = kmm_strdup(target);
	dp->target_len = strlen(target);
}

static kmm_part *part_of(kmm_topic *t, int32_t partition) {
	int32_t n = __atomic_load_n(&t->nbypart, __ATOMIC_ACQUIRE);
	if (partition < 0 || partition >= n)
		return NULL;
	kmm_part **a = __atomic_load_n(&t->bypart, __ATOMIC_ACQUIRE);
	return __atomic_load_n(&a[partition], __ATOMIC_ACQUIRE);
}

static kmm_part *new_part(kmm_topic *t, int32_t id, int32_t partition, int64_t next_expected) {
	kmm_part *p = calloc(1, sizeof(*p));
	p->partition = partition;
	p->t = t;
	p->echo_tail = p->echo_ack = -1;
	p->run_idx = -1;
	p->last_produced = -1;
	p->id = id;
	p->next_expected = next_expected;
	return p;
}

int kmm_dp_add_part(kmm_dp *dp, int32_t id, const char *src, const char *dst, int32_t partition, int64_t next_expected, kmm_part **out) {
	*out = NULL;
	pthread_mutex_lock(&dp->mu);
	kmm_topic *t;
	for (t = dp->topics; t; t = t->next)
		if (!strcmp(t->name, src))
			break;
	if (!t) {
		t = calloc(1, sizeof(*t));
		t->name = strdup(src);
		t->dst = strdup(dst);
		rd_kafka_topic_conf_t *tc = rd_kafka_topic_conf_new();
		rd_kafka_topic_conf_set_opaque(tc, t);
		t->dst_rkt = rd_kafka_topic_new(dp->prod, dst, tc);
		if (!t->dst_rkt) {
			free(t->name);
			free(t->dst);
			free(t);
			pthread_mutex_unlock(&dp->mu);
			return -1;
		}
		if (rd_kafka_topic_opaque(t->dst_rkt) != t) {
			// another source topic already writes to dst: not a supported mapping
			rd_kafka_topic_destroy(t->dst_rkt);
			free(t->name);
			free(t->dst);
			free(t);
			pthread_mutex_unlock(&dp->mu);
			return -2;
		}
		t->next = dp->topics;
		__atomic_store_n(&dp->topics, t, __ATOMIC_RELEASE);
	}
	if (partition >= t->nbypart) {
		int32_t n = partition + 1;
		kmm_part **a = calloc(n, sizeof(kmm_part *));
		if (t->bypart) {
			memcpy(a, t->bypart, sizeof(kmm_part *) * t->nbypart);
			keep_garbage(dp, t->bypart);
		}
		__atomic_store_n(&t->bypart, a, __ATOMIC_RELEASE);
		__atomic_store_n(&t->nbypart, n, __ATOMIC_RELEASE);
	}
	kmm_part *p = t->bypart[partition];
	if (!p) {
		p = new_part(t, id, partition, next_expected);
		__atomic_store_n(&t->bypart[partition], p, __ATOMIC_RELEASE);
	} else if (p->removed) {
		// Re-added after kmm_dp_remove_part: a fresh part, so the removed one's records still
		// in flight are reported to it (handle_dr), never to the new one.
		kmm_part *n = new_part(t, id, partition, next_expected);
		n->prev = p;
		__atomic_store_n(&t->bypart[partition], n, __ATOMIC_RELEASE);
		p = n;
	} else {
		p->id = id;
		p->next_expected = next_expected;
	}
	*out = p;
	pthread_mutex_unlock(&dp->mu);
	return 0;
}

// kmm_dp_remove_part takes p out (consumer thread, between two kmm_dp_consume calls): no record
// of it is produced afterwards; its records already consumed are dropped. 1 when the record
// waiting for room in the producer queue was p's (dropped, never produced).
int kmm_dp_remove_part(kmm_dp *dp, kmm_part *p) {
	p->removed = 1;
	dp->last_rkt = NULL;
	dp->last_t = NULL;
	if (dp->pending && dp->pending_part == p) {
		kmm_dp_drop_pending(dp);
		return 1;
	}
	return 0;
}

// kmm_dp_part_inflight: p's records produced whose delivery report was not handled yet.
int64_t kmm_dp_part_inflight(kmm_part *p) { return __atomic_load_n(&p->inflight, __ATOMIC_SEQ_CST); }

int64_t kmm_dp_pending_offset(kmm_dp *dp) { return dp->pending ? dp->pending->offset : -1; }

static kmm_part *lookup(kmm_dp *dp, const rd_kafka_message_t *m) {
	kmm_topic *t = NULL;
	if (m->rkt == dp->last_rkt && dp->last_t) {
		t = dp->last_t;
	} else {
		kmm_topic *h = __atomic_load_n(&dp->topics, __ATOMIC_ACQUIRE);
		for (kmm_topic *x = h; x; x = x->next)
			if (x->seen == m->rkt) {
				t = x;
				break;
			}
		if (!t) {
			const char *name = rd_kafka_topic_name(m->rkt);
			for (kmm_topic *x = h; x; x = x->next)
				if (!strcmp(x->name, name)) {
					t = x;
					x->seen = m->rkt;
					break;
				}
		}
		if (!t)
			return NULL;
		dp->last_rkt = m->rkt;
		dp->last_t = t;
	}
	kmm_part *p = part_of(t, m->partition);
	return p && !p->removed ? p : NULL;
}

static void fill(kmm_event *ev, int kind, int code, const char *text) {
	memset(ev, 0, sizeof(*ev));
	ev->kind = kind;
	ev->code = code;
	ev->text = kmm_strdup(text);
	ev->part = -1;
}

static kmm_slot *slot_new(kmm_dp *dp) {
	if (!dp->chunk || dp->chunk_used == KMM_SLOTS) {
		dp->chunk = malloc(sizeof(kmm_chunk));
		dp->chunk->done = 0;
		dp->chunk_used = 0;
	}
	kmm_slot *s = &dp->chunk->s[dp->chunk_used++];
	s->c = dp->chunk;
	return s;
}

static void slot_done(kmm_slot *s) {
	kmm_chunk *c = s->c;
	if (__atomic_add_fetch(&c->done, 1, __ATOMIC_SEQ_CST) == KMM_SLOTS)
		free(c);
}

// produce hands the record to the producer; 0 or librdkafka's error code. The payload is copied
// into the producer's message (one allocation either way: librdkafka allocates the message with
// room for the copy) and the consumed message is destroyed once produced, so the producer queue
// never pins the consumer's fetch buffers: its queue.buffering.max.kbytes is then what the
// records it holds weigh (docs/benchmarks.md, "Memory on the C plane"). The record's source
// offset and timestamp travel in a slot, the opaque.
static int produce(kmm_dp *dp, kmm_part *p, rd_kafka_message_t *m, rd_kafka_headers_t *h) {
	rd_kafka_vu_t vu[8];
	int i = 0;
	memset(vu, 0, sizeof(vu));
	vu[i].vtype = KMM_VTYPE_RKT;
	vu[i++].u.rkt = p->t->dst_rkt;
	vu[i].vtype = KMM_VTYPE_PARTITION;
	vu[i++].u.i32 = m->partition;
	vu[i].vtype = KMM_VTYPE_VALUE;
	vu[i].u.mem.ptr = m->payload;
	vu[i++].u.mem.size = m->len;
	vu[i].vtype = KMM_VTYPE_KEY;
	vu[i].u.mem.ptr = m->key;
	vu[i++].u.mem.size = m->key_len;
	int64_t ts = rd_kafka_message_timestamp(m, NULL);
	kmm_slot *s = slot_new(dp);
	s->off = m->offset;
	s->ts = ts;
	vu[i].vtype = KMM_VTYPE_OPAQUE;
	vu[i++].u.ptr = s;
	vu[i].vtype = KMM_VTYPE_MSGFLAGS;
	vu[i++].u.i = KMM_MSG_F_COPY;
	if (ts >= 0) {
		vu[i].vtype = KMM_VTYPE_TIMESTAMP;
		vu[i++].u.i64 = ts;
	}
	if (h) {
		vu[i].vtype = KMM_VTYPE_HEADERS;
		vu[i++].u.headers = h;
	}
	__atomic_add_fetch(&p->inflight, 1, __ATOMIC_SEQ_CST);
	rd_kafka_error_t *err = rd_kafka_produceva(dp->prod, vu, i);
	if (err) {
		int code = rd_kafka_error_code(err);
		rd_kafka_error_destroy(err);
		__atomic_sub_fetch(&p->inflight, 1, __ATOMIC_SEQ_CST);
		dp->chunk_used--; // the slot is taken again by the next record
		return code;
	}
	return 0;
}

static int produce_result(kmm_dp *dp, int code, kmm_part *p, rd_kafka_message_t *m, rd_kafka_headers_t *h, kmm_event *ev) {
	dp->pending = m;
	dp->pending_hdrs = h;
	dp->pending_part = p;
	if (code == KMM_ERR_QUEUE_FULL)
		return KMM_C_FULL;
	if (code == KMM_ERR_UNKNOWN_PARTITION)
		return KMM_C_NOPART;
	fill(ev, KMM_EV_ERROR, code, NULL);
	ev->part = p->id;
	ev->partition = p->partition;
	return KMM_C_PRODUCE_ERR;
}

int32_t kmm_dp_pending_part(kmm_dp *dp) { return dp->pending ? dp->pending_part->id : -1; }

void kmm_dp_drop_pending(kmm_dp *dp) {
	if (!dp->pending)
		return;
	if (dp->pending_hdrs)
		rd_kafka_headers_destroy(dp->pending_hdrs);
	rd_kafka_message_destroy(dp->pending);
	dp->pending = NULL;
	dp->pending_hdrs = NULL;
	dp->pending_part = NULL;
}

kmm_gap *kmm_dp_gaps(kmm_dp *dp, int *n) {
	*n = dp->ngaps;
	return dp->gaps;
}

static kmm_part *lookup_name(kmm_dp *dp, const char *topic, int32_t partition) {
	if (!topic)
		return NULL;
	for (kmm_topic *x = __atomic_load_n(&dp->topics, __ATOMIC_ACQUIRE); x; x = x->next)
		if (!strcmp(x->name, topic)) {
			kmm_part *p = part_of(x, partition);
			return p && !p->removed ? p : NULL;
		}
	return NULL;
}

// partition_eof: the consumer reached the end of p at offset end. When the end is past the
// offset after the last record consumed (a transaction marker, aborted records under
// read_committed), ev says so (1) and Go calls the IdleHandler once every record produced from p
// so far is acknowledged; at most once per end offset, as the Go plane's partitionEOF.
static int partition_eof(kmm_dp *dp, kmm_part *p, int64_t end, kmm_event *ev) {
	if (end <= 0 || (p->next_expected >= 0 && end <= p->next_expected))
		return 0;
	p->next_expected = end; // a later record at or after end is no gap
	// The end covers the echoes skipped at the tail: their acknowledgement must not come after
	// the idle one and move the position back.
	pthread_mutex_lock(&dp->mu);
	p->echo_tail = p->echo_ack = -1;
	pthread_mutex_unlock(&dp->mu);
	p->echo_seen = 0;
	fill(ev, KMM_EV_EOF, KMM_ERR_PARTITION_EOF, NULL);
	ev->partition = p->partition;
	ev->offset = end;
	ev->after = p->last_produced;
	ev->part = p->id;
	return 1;
}

// weigh is what a record weighs for a rate limit: key, value and headers (as the Go plane's
// recordBytes).
static int64_t weigh(const rd_kafka_message_t *m, const rd_kafka_headers_t *h) {
	int64_t n = (int64_t)m->key_len + (int64_t)m->len;
	if (h) {
		const char *name;
		const void *val;
		size_t size;
		for (size_t i = 0; rd_kafka_header_get_all(h, i, &name, &val, &size) == 0; i++)
			n += (int64_t)strlen(name) + (int64_t)size;
	}
	return n;
}

int kmm_dp_consume(kmm_dp *dp, int timeout_ms, int max_msgs, int64_t max_weight, kmm_event *ev, int64_t *produced, int64_t *echoes, int64_t *bytes, int64_t *weight) {
	*produced = *echoes = *bytes = *weight = 0;
	dp->ngaps = 0;
	int n = 0;
	if (dp->pending) {
		rd_kafka_message_t *m = dp->pending;
		kmm_part *p = dp->pending_part;
		rd_kafka_headers_t *h = dp->pending_hdrs;
		dp->pending = NULL;
		int code = produce(dp, p, m, h);
		if (code == KMM_ERR_QUEUE_FULL) {
			// wait a little for room (the delivery thread frees it), as the Go copier's Flush(10)
			struct timespec ts = {0, 2 * 1000 * 1000};
			for (int i = 0; i < 5 && code == KMM_ERR_QUEUE_FULL; i++) {
				nanosleep(&ts, NULL);
				code = produce(dp, p, m, h);
			}
		}
		if (code)
			return produce_result(dp, code, p, m, h, ev);
		dp->pending_hdrs = NULL; // (weighed when it was first consumed)
		dp->pending_part = NULL;
		p->last_produced = m->offset;
		(*produced)++;
		*bytes += m->len;
		rd_kafka_message_destroy(m);
		n++;
	}
	while (n < max_msgs && (max_weight <= 0 || *weight < max_weight)) {
		rd_kafka_event_t *e = rd_kafka_queue_poll(dp->cq, n == 0 ? timeout_ms : 0);
		if (!e)
			break;
		int type = rd_kafka_event_type(e);
		if (type == KMM_EVENT_ERROR && rd_kafka_event_error(e) == KMM_ERR_PARTITION_EOF) {
			// enable.partition.eof: librdkafka says so with an error event naming the partition
			rd_kafka_topic_partition_t *tp = rd_kafka_event_topic_partition(e);
			int r = 0;
			if (tp) {
				kmm_part *p = lookup_name(dp, tp->topic, tp->partition);
				r = p ? partition_eof(dp, p, tp->offset, ev) : 0;
				rd_kafka_topic_partition_destroy(tp);
			}
			rd_kafka_event_destroy(e);
			if (r)
				return KMM_C_EVENT;
			continue;
		}
		if (type == KMM_EVENT_ERROR) {
			fill(ev, KMM_EV_ERROR, rd_kafka_event_error(e), rd_kafka_event_error_string(e));
			ev->fatal = rd_kafka_event_error_is_fatal(e);
			rd_kafka_event_destroy(e);
			return KMM_C_EVENT;
		}
		if (type == KMM_EVENT_STATS) {
			fill(ev, KMM_EV_STATS, 0, rd_kafka_event_stats(e));
			rd_kafka_event_destroy(e);
			return KMM_C_EVENT;
		}
		if (type != KMM_EVENT_FETCH) {
			rd_kafka_event_destroy(e);
			continue;
		}
		rd_kafka_message_t *m = (rd_kafka_message_t *)rd_kafka_event_message_next(e);
		if (!m) {
			rd_kafka_event_destroy(e);
			continue;
		}
		if (m->err == KMM_ERR_PARTITION_EOF) {
			kmm_part *p = m->rkt ? lookup(dp, m) : NULL;
			int r = p ? partition_eof(dp, p, m->offset, ev) : 0;
			rd_kafka_message_destroy(m);
			if (r)
				return KMM_C_EVENT;
			continue;
		}
		if (m->err) {
			fill(ev, KMM_EV_RECORD_ERROR, m->err, rd_kafka_message_errstr(m));
			ev->topic = m->rkt ? kmm_strdup(rd_kafka_topic_name(m->rkt)) : NULL;
			ev->partition = m->partition;
			ev->offset = m->offset;
			kmm_part *p = m->rkt ? lookup(dp, m) : NULL;
			ev->part = p ? p->id : -1;
			rd_kafka_message_destroy(m);
			return KMM_C_EVENT;
		}
		kmm_part *p = lookup(dp, m);
		if (!p) {
			rd_kafka_message_destroy(m);
			continue;
		}
		int64_t off = m->offset;
		if (p->next_expected >= 0 && off > p->next_expected && dp->ngaps < KMM_GAPS) {
			kmm_gap *g = &dp->gaps[dp->ngaps++];
			g->part = p->id;
			g->expected = p->next_expected;
			g->got = off;
		}
		p->next_expected = off + 1;
		n++;
		rd_kafka_headers_t *h = NULL;
		if (rd_kafka_message_detach_headers(m, &h) != 0)
			h = NULL;
		if (dp->origin) {
			const void *val = NULL;
			size_t size = 0;
			if (h && rd_kafka_header_get_last(h, "kmm.origin", &val, &size) == 0) {
				if (size == dp->target_len && (size == 0 || memcmp(val, dp->target, size) == 0)) {
					// an echo: its origin is the target; not copied, acknowledged in order
					rd_kafka_headers_destroy(h);
					rd_kafka_message_destroy(m);
					(*echoes)++;
					pthread_mutex_lock(&dp->mu);
					if (__atomic_load_n(&p->inflight, __ATOMIC_SEQ_CST) == 0) {
						p->echo_ack = off;
						__atomic_store_n(&dp->echo_ready, 1, __ATOMIC_SEQ_CST);
					} else {
						p->echo_tail = off;
					}
					pthread_mutex_unlock(&dp->mu);
					p->echo_seen = 1;
					continue;
				}
			} else {
				if (!h)
					h = rd_kafka_headers_new(1);
				rd_kafka_header_add(h, "kmm.origin", -1, dp->origin, (ssize_t)dp->origin_len);
			}
		}
		if (p->echo_seen) {
			// this record's acknowledgement covers the echoes before it
			pthread_mutex_lock(&dp->mu);
			p->echo_tail = p->echo_ack = -1;
			pthread_mutex_unlock(&dp->mu);
			p->echo_seen = 0;
		}
		if (max_weight > 0)
			*weight += weigh(m, h);
		int code = produce(dp, p, m, h);
		if (code)
			return produce_result(dp, code, p, m, h, ev);
		p->last_produced = off;
		(*produced)++;
		*bytes += m->len;
		rd_kafka_message_destroy(m);
		if (dp->ngaps == KMM_GAPS)
			return KMM_C_GAPS;
	}
	return KMM_C_IDLE;
}

static int64_t now_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void echo_run(kmm_dp *dp, kmm_part *p, int64_t off) {
	kmm_run *r = &dp->runs[dp->nruns];
	memset(r, 0, sizeof(*r));
	r->part = p->id;
	r->first_src = r->last_src = off;
	r->first_dst = r->last_dst = -1;
	dp->runpart[dp->nruns++] = p;
	p->run_idx = -1;
}

kmm_run *kmm_dp_runs(kmm_dp *dp) { return dp->runs; }

// handle_dr folds one delivery report into the runs; 1 when ev was filled (the first record the
// target rejected).
static int handle_dr(kmm_dp *dp, const rd_kafka_message_t *m, int64_t now, kmm_event *ev, int64_t *purged) {
	kmm_topic *t = rd_kafka_topic_opaque(m->rkt);
	kmm_part *p = t ? part_of(t, m->partition) : NULL;
	// Reports come in produce order per partition: while a removed part this one replaced has
	// records in flight, the report is its (the oldest such first).
	for (kmm_part *q = p ? p->prev : NULL; q; q = q->prev)
		if (__atomic_load_n(&q->inflight, __ATOMIC_SEQ_CST) > 0)
			p = q;
	kmm_slot *s = m->_private;
	int64_t src = s ? s->off : -1;
	int64_t ts = s ? s->ts : -1; // the source record's (the target may set its own: LogAppendTime)
	int64_t len = (int64_t)m->len;
	if (s)
		slot_done(s);
	if (!p)
		return 0;
	int64_t left = __atomic_sub_fetch(&p->inflight, 1, __ATOMIC_SEQ_CST);
	if (m->err) {
		if (__atomic_load_n(&dp->purging, __ATOMIC_SEQ_CST) && (m->err == KMM_ERR_PURGE_QUEUE || m->err == KMM_ERR_PURGE_INFLIGHT)) {
			(*purged)++;
			return 0;
		}
		if (dp->failed)
			return 0;
		dp->failed = 1;
		fill(ev, KMM_EV_REJECTED, m->err, rd_kafka_message_errstr(m));
		ev->part = p->id;
		ev->partition = p->partition;
		ev->offset = src;
		return 1;
	}
	if (dp->failed)
		return 0; // never acknowledge past a failed record
	int64_t dst = m->offset;
	kmm_run *r = p->run_idx >= 0 ? &dp->runs[p->run_idx] : NULL;
	if (!r || r->last_src + 1 != src || r->last_dst + 1 != dst) {
		p->run_idx = dp->nruns;
		r = &dp->runs[dp->nruns];
		dp->runpart[dp->nruns++] = p;
		memset(r, 0, sizeof(*r));
		r->part = p->id;
		r->first_src = src;
		r->first_dst = dst;
	}
	r->last_src = src;
	r->last_dst = dst;
	r->n++;
	r->bytes += len;
	if (ts > 0 && now - ts >= 0) {
		int64_t lat = now - ts;
		r->lat_sum += lat;
		if (lat > r->lat_max)
			r->lat_max = lat;
	}
	if (left == 0) {
		pthread_mutex_lock(&dp->mu);
		if (p->echo_tail >= 0 && __atomic_load_n(&p->inflight, __ATOMIC_SEQ_CST) == 0) {
			echo_run(dp, p, p->echo_tail);
			p->echo_tail = -1;
		}
		pthread_mutex_unlock(&dp->mu);
	}
	return 0;
}

int kmm_dp_deliveries(kmm_dp *dp, int timeout_ms, kmm_event *ev, int *nruns, int64_t *reported, int64_t *purged) {
	for (int i = 0; i < dp->nruns; i++)
		dp->runpart[i]->run_idx = -1;
	dp->nruns = 0;
	*nruns = 0;
	*reported = *purged = 0;
	int ret = KMM_EV_NONE;
	memset(ev, 0, sizeof(*ev));
	if (__atomic_exchange_n(&dp->echo_ready, 0, __ATOMIC_SEQ_CST)) {
		pthread_mutex_lock(&dp->mu);
		for (kmm_topic *t = dp->topics; t; t = t->next)
			for (int32_t i = 0; i < t->nbypart; i++) {
				for (kmm_part *p = t->bypart[i]; p; p = p->prev) {
					if (p->echo_ack < 0)
						continue;
					if (dp->nruns >= KMM_RUNS - 2) {
						__atomic_store_n(&dp->echo_ready, 1, __ATOMIC_SEQ_CST);
						continue;
					}
					echo_run(dp, p, p->echo_ack);
					p->echo_ack = -1;
				}
			}
		pthread_mutex_unlock(&dp->mu);
	}
	rd_kafka_event_t *le = rd_kafka_queue_poll(dp->logq, 0);
	if (le) {
		const char *fac = NULL, *str = NULL;
		int level = 0;
		if (rd_kafka_event_type(le) == KMM_EVENT_LOG && rd_kafka_event_log(le, &fac, &str, &level) == 0) {
			fill(ev, KMM_EV_LOG, 0, str);
			ev->level = level;
			ev->topic = kmm_strdup(fac);
			ret = KMM_EV_LOG;
		}
		rd_kafka_event_destroy(le);
		if (ret) {
			*nruns = dp->nruns;
			return ret;
		}
	}
	int64_t now = now_ms();
	int first = 1;
	while (*reported < KMM_DR_MAX && dp->nruns < KMM_RUNS - 2) {
		if (!dp->cur_ev) {
			dp->cur_ev = rd_kafka_queue_poll(dp->pq, first && dp->nruns == 0 ? timeout_ms : 0);
			first = 0;
			if (!dp->cur_ev)
				break;
			now = now_ms();
		}
		int type = rd_kafka_event_type(dp->cur_ev);
		if (type == KMM_EVENT_DR) {
			int done = 0;
			while (dp->nruns < KMM_RUNS - 2) {
				const rd_kafka_message_t *m = rd_kafka_event_message_next(dp->cur_ev);
				if (!m) {
					done = 1;
					break;
				}
				(*reported)++;
				if (handle_dr(dp, m, now, ev, purged)) {
					ret = KMM_EV_REJECTED;
					break;
				}
			}
			if (done) {
				rd_kafka_event_destroy(dp->cur_ev);
				dp->cur_ev = NULL;
			}
			if (ret)
				break;
			continue;
		}
		if (type == KMM_EVENT_STATS) {
			fill(ev, KMM_EV_STATS, 0, rd_kafka_event_stats(dp->cur_ev));
			ret = KMM_EV_STATS;
		} else if (type == KMM_EVENT_ERROR) {
			fill(ev, KMM_EV_ERROR, rd_kafka_event_error(dp->cur_ev), rd_kafka_event_error_string(dp->cur_ev));
			ev->fatal = rd_kafka_event_error_is_fatal(dp->cur_ev);
			ret = KMM_EV_ERROR;
		}
		rd_kafka_event_destroy(dp->cur_ev);
		dp->cur_ev = NULL;
		if (ret)
			break;
	}
	*nruns = dp->nruns;
	return ret;
}

void kmm_dp_set_purging(kmm_dp *dp) { __atomic_store_n(&dp->purging, 1, __ATOMIC_SEQ_CST); }

void kmm_dp_purge(kmm_dp *dp) {
	__atomic_store_n(&dp->purging, 1, __ATOMIC_SEQ_CST);
	rd_kafka_purge(dp->prod, KMM_PURGE_QUEUE | KMM_PURGE_INFLIGHT | KMM_PURGE_NON_BLOCKING);
}

int kmm_dp_outq_len(kmm_dp *dp) { return rd_kafka_outq_len(dp->prod); }

void kmm_dp_wake_deliveries(kmm_dp *dp) { rd_kafka_queue_yield(dp->pq); }
void kmm_dp_wake_consumer(kmm_dp *dp) { rd_kafka_queue_yield(dp->cq); }

int kmm_dp_partition_count(kmm_dp *dp, const char *topic, int timeout_ms) {
	rd_kafka_topic_t *rkt = rd_kafka_topic_new(dp->prod, topic, NULL);
	if (!rkt)
		return -1;
	const struct rd_kafka_metadata *md = NULL;
	int n = -1;
	if (rd_kafka_metadata(dp->prod, 0, rkt, &md, timeout_ms) == 0 && md) {
		if (md->topic_cnt > 0 && md->topics[0].err == 0)
			n = md->topics[0].partition_cnt;
		rd_kafka_metadata_destroy(md);
	}
	rd_kafka_topic_destroy(rkt);
	return n;
}

// kmm_dp_destroy_producer releases everything that refers to either client: call after every
// delivery report was handled (or given up on), before the consumer is closed.
void kmm_dp_destroy_producer(kmm_dp *dp) {
	kmm_dp_drop_pending(dp);
	if (dp->cur_ev) {
		rd_kafka_event_destroy(dp->cur_ev);
		dp->cur_ev = NULL;
	}
	for (kmm_topic *t = dp->topics; t; t = t->next) {
		if (t->dst_rkt)
			rd_kafka_topic_destroy(t->dst_rkt);
		t->dst_rkt = NULL;
	}
	if (dp->cq)
		rd_kafka_queue_destroy(dp->cq);
	dp->cq = NULL;
	rd_kafka_queue_destroy(dp->pq);
	rd_kafka_set_log_queue(dp->prod, NULL);
	rd_kafka_queue_destroy(dp->logq);
	rd_kafka_destroy(dp->prod);
	dp->prod = NULL;
}

void kmm_dp_free(kmm_dp *dp) {
	kmm_topic *t = dp->topics;
	while (t) {
		kmm_topic *next = t->next;
		for (int32_t i = 0; i < t->nbypart; i++)
			for (kmm_part *p = t->bypart[i]; p;) {
				kmm_part *prev = p->prev;
				free(p);
				p = prev;
			}
		free(t->bypart);
		free(t->name);
		free(t->dst);
		free(t);
		t = next;
	}
	if (dp->chunk && dp->chunk_used < KMM_SLOTS)
		free(dp->chunk); // (a full one is freed by its last report)
	for (int i = 0; i < dp->ngarbage; i++)
		free(dp->garbage[i]);
	free(dp->garbage);
	free(dp->origin);
	free(dp->target);
	pthread_mutex_destroy(&dp->mu);
	free(dp);
}
