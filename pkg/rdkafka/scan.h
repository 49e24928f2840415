// Digest scans in C (kmm verify --level full): a scan reader's records are hashed on the C side
// of its librdkafka consumer queue, so only (offset, digest) pairs reach Go (scan.go). The
// digest is pkg/verify's RecordHash, byte for byte (TestScanDigestMatchesRecordHash).
#ifndef KMM_SCAN_H
#define KMM_SCAN_H

#include "dataplane.h" // (librdkafka's declarations: rdkafka_types.h, rdkafka_funcs.h)

// One record as a scan sees it: the layout of pkg/cluster's Digest.
typedef struct {
	int64_t offset;
	uint64_t hash;
} kmm_digest;

// A scan of one partition through a consumer's queue.
typedef struct kmm_scan_s kmm_scan;

kmm_scan *kmm_scan_new(rd_kafka_t *rk);
void kmm_scan_destroy(kmm_scan *s);

// kmm_scan_poll hashes up to max records of topic/partition with offsets in (after, end) from the
// consumer's queue into out, waiting at most timeout_ms for the first event. *seen counts every
// record polled (of any partition: the idle rule's activity). Returns the number of digests, or
// -1 with *err, *fatal and errstr set on a consumer or record error.
int kmm_scan_poll(kmm_scan *s, const char *topic, int32_t partition, int64_t after, int64_t end, int with_ts,
		  int timeout_ms, kmm_digest *out, int max, int *seen, int *err, int *fatal, char *errstr, size_t errlen);

// kmm_record_hash hashes one record given as fields (tests: the same digest as kmm_scan_poll's).
// A NULL key or value is null; header values likewise; hnames/hvals/hsizes have hcnt entries.
uint64_t kmm_record_hash(kmm_scan *s, const void *key, size_t klen, const void *val, size_t vlen, size_t hcnt,
			 const char **hnames, const void **hvals, const size_t *hsizes, int64_t ts_ms, int with_ts);

// kmm_xxh64 is XXH64 with seed 0 (tests).
uint64_t kmm_xxh64(const void *p, size_t len);

#endif
