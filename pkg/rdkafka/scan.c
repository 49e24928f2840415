// Digest scans in C: see scan.h.
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "scan.h"

struct kmm_scan_s {
	rd_kafka_queue_t *q; // the consumer's queue (rd_kafka_queue_get_consumer)
	unsigned char *buf;  // the bytes of the record being hashed
	size_t cap;
};

kmm_scan *kmm_scan_new(rd_kafka_t *rk) {
	kmm_scan *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	if (rk)
		s->q = rd_kafka_queue_get_consumer(rk);
	s->cap = 4096;
	s->buf = malloc(s->cap);
	if (!s->buf) {
		if (s->q)
			rd_kafka_queue_destroy(s->q);
		free(s);
		return NULL;
	}
	return s;
}

void kmm_scan_destroy(kmm_scan *s) {
	if (!s)
		return;
	if (s->q)
		rd_kafka_queue_destroy(s->q);
	free(s->buf);
	free(s);
}

// XXH64, seed 0 (the algorithm of github.com/cespare/xxhash/v2's Sum64).
#define P1 0x9E3779B185EBCA87ULL
#define P2 0xC2B2AE3D27D4EB4FULL
#define P3 0x165667B19E3779F9ULL
#define P4 0x85EBCA77C2B2AE63ULL
#define P5 0x27D4EB2F165667C5ULL

static inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static inline uint64_t rd64(const unsigned char *p) {
	uint64_t v;
	memcpy(&v, p, 8); // little-endian hosts only (amd64, arm64)
	return v;
}
static inline uint32_t rd32(const unsigned char *p) {
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}
static inline uint64_t round64(uint64_t acc, uint64_t in) {
	acc += in * P2;
	acc = rotl(acc, 31);
	return acc * P1;
}
static inline uint64_t merge64(uint64_t acc, uint64_t v) {
	acc ^= round64(0, v);
	return acc * P1 + P4;
}

uint64_t kmm_xxh64(const void *data, size_t len) {
	const unsigned char *p = data, *end = p + len;
	uint64_t h;
	if (len >= 32) {
		uint64_t v1 = P1 + P2, v2 = P2, v3 = 0, v4 = (uint64_t)0 - P1;
		const unsigned char *limit = end - 32;
		do {
			v1 = round64(v1, rd64(p));
			v2 = round64(v2, rd64(p + 8));
			v3 = round64(v3, rd64(p + 16));
			v4 = round64(v4, rd64(p + 24));
			p += 32;
		} while (p <= limit);
		h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
		h = merge64(h, v1);
		h = merge64(h, v2);
		h = merge64(h, v3);
		h = merge64(h, v4);
	} else {
		h = P5;
	}
	h += (uint64_t)len;
	while (p + 8 <= end) {
		h ^= round64(0, rd64(p));
		h = rotl(h, 27) * P1 + P4;
		p += 8;
	}
	if (p + 4 <= end) {
		h ^= (uint64_t)rd32(p) * P1;
		h = rotl(h, 23) * P2 + P3;
		p += 4;
	}
	while (p < end) {
		h ^= (uint64_t)(*p) * P5;
		h = rotl(h, 11) * P1;
		p++;
	}
	h ^= h >> 33;
	h *= P2;
	h ^= h >> 29;
	h *= P3;
	h ^= h >> 32;
	return h;
}

// The record's bytes as RecordHash feeds them to its digest, into s->buf.
static int grow(kmm_scan *s, size_t need) {
	if (need <= s->cap)
		return 0;
	size_t c = s->cap * 2;
	while (c < need)
		c *= 2;
	unsigned char *b = realloc(s->buf, c);
	if (!b)
		return -1;
	s->buf = b;
	s->cap = c;
	return 0;
}

// put_tag writes tag and n as 8 bytes big-endian (9 bytes).
static inline size_t put_tag(unsigned char *b, unsigned char tag, uint64_t n) {
	b[0] = tag;
	for (int i = 0; i < 8; i++)
		b[1 + i] = (unsigned char)(n >> (56 - 8 * i));
	return 9;
}

// put_len writes RecordHash's length prefix: 0 for null, else 1 and the length.
static inline size_t put_len(unsigned char *b, int null, uint64_t n) {
	if (null) {
		b[0] = 0;
		return 1;
	}
	return put_tag(b, 1, n);
}

static const char origin_header[] = "kmm.origin";

// record_hash computes kmm_record_hash into *h; -1 if the scratch buffer cannot grow.
static int record_hash(kmm_scan *s, const void *key, size_t klen, const void *val, size_t vlen, size_t hcnt,
		       const char **hnames, const void **hvals, const size_t *hsizes, int64_t ts_ms, int with_ts, uint64_t *h) {
	// A trailing provenance header is not hashed (cluster.WithoutOrigin).
	if (hcnt > 0 && strcmp(hnames[hcnt - 1], origin_header) == 0)
		hcnt--;
	size_t need = 9 + klen + 9 + vlen + 9 + 9;
	for (size_t i = 0; i < hcnt; i++)
		need += 18 + strlen(hnames[i]) + (hvals[i] ? hsizes[i] : 0);
	if (grow(s, need))
		return -1;
	unsigned char *b = s->buf;
	size_t n = put_len(b, key == NULL, klen);
	if (key && klen)
		memcpy(b + n, key, klen), n += klen;
	n += put_len(b + n, val == NULL, vlen);
	if (val && vlen)
		memcpy(b + n, val, vlen), n += vlen;
	n += put_tag(b + n, 'h', hcnt);
	for (size_t i = 0; i < hcnt; i++) {
		size_t kl = strlen(hnames[i]);
		n += put_len(b + n, 0, kl);
		memcpy(b + n, hnames[i], kl), n += kl;
		n += put_len(b + n, hvals[i] == NULL, hsizes[i]);
		if (hvals[i] && hsizes[i])
			memcpy(b + n, hvals[i], hsizes[i]), n += hsizes[i];
	}
	if (with_ts)
		n += put_tag(b + n, 't', (uint64_t)ts_ms);
	*h = kmm_xxh64(b, n);
	return 0;
}

uint64_t kmm_record_hash(kmm_scan *s, const void *key, size_t klen, const void *val, size_t vlen, size_t hcnt,
			 const char **hnames, const void **hvals, const size_t *hsizes, int64_t ts_ms, int with_ts) {
	uint64_t h = 0;
	record_hash(s, key, klen, val, vlen, hcnt, hnames, hvals, hsizes, ts_ms, with_ts, &h);
	return h;
}

// Go's zero time.Time in Unix milliseconds: what RecordHash hashes for a record without a
// timestamp (confluent-kafka-go leaves Timestamp zero when librdkafka reports -1).
#define KMM_NO_TS (-62135596800000LL)

#define KMM_MAX_STACK_HDRS 32

static uint64_t hash_message(kmm_scan *s, const rd_kafka_message_t *m, int with_ts, int *ok) {
	const char *names_s[KMM_MAX_STACK_HDRS];
	const void *vals_s[KMM_MAX_STACK_HDRS];
	size_t sizes_s[KMM_MAX_STACK_HDRS];
	const char **names = names_s;
	const void **vals = vals_s;
	size_t *sizes = sizes_s;
	rd_kafka_headers_t *hdrs = NULL;
	size_t hcnt = 0;
	*ok = 1;
	if (rd_kafka_message_headers(m, &hdrs) == 0 && hdrs)
		hcnt = rd_kafka_header_cnt(hdrs);
	if (hcnt > KMM_MAX_STACK_HDRS) {
		names = malloc(hcnt * sizeof(*names));
		vals = malloc(hcnt * sizeof(*vals));
		sizes = malloc(hcnt * sizeof(*sizes));
		if (!names || !vals || !sizes) {
			free(names), free(vals), free(sizes);
			*ok = 0;
			return 0;
		}
	}
	for (size_t i = 0; i < hcnt; i++) {
		if (rd_kafka_header_get_all(hdrs, i, &names[i], &vals[i], &sizes[i]) != 0) {
			hcnt = i;
			break;
		}
	}
	rd_kafka_timestamp_type_t tstype = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
	int64_t ts = rd_kafka_message_timestamp(m, &tstype);
	if (ts == -1)
		ts = KMM_NO_TS;
	uint64_t h = 0;
	if (record_hash(s, m->key, m->key_len, m->payload, m->len, hcnt, names, vals, sizes, ts, with_ts, &h))
		*ok = 0;
	if (names != names_s)
		free(names), free(vals), free(sizes);
	return h;
}

int kmm_scan_poll(kmm_scan *s, const char *topic, int32_t partition, int64_t after, int64_t end, int with_ts,
		  int timeout_ms, kmm_digest *out, int max, int *seen, int *err, int *fatal, char *errstr, size_t errlen) {
	int n = 0;
	*seen = 0;
	*err = 0;
	*fatal = 0;
	while (n < max) {
		rd_kafka_event_t *e = rd_kafka_queue_poll(s->q, (n == 0 && *seen == 0) ? timeout_ms : 0);
		if (!e)
			break;
		int type = rd_kafka_event_type(e);
		if (type == KMM_EVENT_ERROR) {
			if (rd_kafka_event_error_is_fatal(e)) {
				*err = rd_kafka_event_error(e);
				*fatal = 1;
				snprintf(errstr, errlen, "%s", rd_kafka_event_error_string(e));
				rd_kafka_event_destroy(e);
				return -1;
			}
			rd_kafka_event_destroy(e); // as the Go reader without a problem handler
			continue;
		}
		if (type != KMM_EVENT_FETCH) {
			rd_kafka_event_destroy(e);
			continue;
		}
		const rd_kafka_message_t *m = rd_kafka_event_message_next(e);
		if (!m) {
			rd_kafka_event_destroy(e);
			continue;
		}
		if (m->err) {
			if (m->err == KMM_ERR_PARTITION_EOF) {
				rd_kafka_event_destroy(e);
				continue;
			}
			*err = m->err;
			snprintf(errstr, errlen, "%s", rd_kafka_message_errstr(m));
			rd_kafka_event_destroy(e);
			return -1;
		}
		(*seen)++;
		int mine = m->partition == partition && m->offset > after && m->offset < end && m->rkt &&
			   strcmp(rd_kafka_topic_name(m->rkt), topic) == 0;
		if (mine) {
			int ok;
			uint64_t h = hash_message(s, m, with_ts, &ok);
			if (!ok) {
				*err = -1;
				snprintf(errstr, errlen, "out of memory hashing a record of %zu bytes", m->len + m->key_len);
				rd_kafka_event_destroy(e);
				return -1;
			}
			out[n].offset = m->offset;
			out[n].hash = h;
			n++;
			after = m->offset;
		}
		rd_kafka_event_destroy(e);
		if (mine && after >= end - 1)
			break; // the range is read: nothing after it is wanted
	}
	return n;
}
