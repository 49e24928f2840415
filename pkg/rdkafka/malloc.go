package rdkafka

// glibc gives every thread that allocates its own malloc arena, up to 8 per core. librdkafka
// allocates and frees every message and fetch buffer on its broker threads (a few per client,
// a dozen clients per `kmm replicate`), so freed memory ends up spread over many arenas that
// each keep their free chunks: ~25-30 MiB of kmm's peak RSS in the bulk benchmarks
// (docs/benchmarks.md). Two arenas hold the same work. LimitMallocArenas must run before the
// first client exists; it leaves an arena limit the environment sets (MALLOC_ARENA_MAX) alone.
// Other C libraries (musl) have no arenas: nothing to do.

/*
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
static void kmm_limit_arenas(int n) {
	if (getenv("MALLOC_ARENA_MAX") == NULL) {
		mallopt(M_ARENA_MAX, n);
	}
}
static void kmm_trim(void) { malloc_trim(0); }
#define KMM_FRAG_N 65536
static void *kmm_frag_pin;
// Fragments the calling thread's arena for the test of TrimMalloc: 64 MiB in 1,000-byte
// chunks, touched, then a chunk above them that stays, then the 64 MiB freed: glibc keeps it
// (free memory below a live chunk is not returned at the top).
static int kmm_frag_fill(void) {
	void **frag = calloc(KMM_FRAG_N, sizeof(void *)); // taken before the chunks, below them
	if (!frag) return -1;
	for (int i = 0; i < KMM_FRAG_N; i++) {
		if (!(frag[i] = malloc(1000))) return -1;
		memset(frag[i], 1, 1000);
	}
	if (!(kmm_frag_pin = malloc(1000))) return -1;
	for (int i = 0; i < KMM_FRAG_N; i++) free(frag[i]);
	free(frag);
	return 0;
}
static void kmm_frag_unpin(void) { free(kmm_frag_pin); kmm_frag_pin = NULL; }
#else
static int kmm_frag_fill(void) { return -1; }
static void kmm_frag_unpin(void) {}
static void kmm_limit_arenas(int n) { (void)n; }
static void kmm_trim(void) {}
#endif
// cgo's generated wrapper of a C function without parameters or result (kmm_trim,
// kmm_frag_unpin) never reads its one argument, the frame pointer: -Wunused-parameter (-Wextra,
// an error under the package's -Werror, dataplane.go) would stop the build on code kmm does not
// write. This comes after every line of kmm's own above, so only cgo's wrappers of this file
// are exempt.
#pragma GCC diagnostic ignored "-Wunused-parameter"
*/
import "C"

import (
	"context"
	"time"
)

// MallocArenas is the glibc malloc arena limit `kmm replicate` sets for itself.
const MallocArenas = 2

// LimitMallocArenas limits glibc's malloc arenas to n for this process unless MALLOC_ARENA_MAX
// is set. Call it before creating any client.
func LimitMallocArenas(n int) { C.kmm_limit_arenas(C.int(n)) }

// TrimMalloc returns the free memory of glibc's arenas to the system (malloc_trim(0), which
// also releases whole free pages inside an arena, not only at its top). glibc returns memory by
// itself only from the top of an arena, so a heap that millions of short-lived records pass
// through (librdkafka's messages, fetch buffers and produce requests, allocated and freed on
// different threads) keeps what it freed below its live chunks: kmm replicate's RSS across a
// 100 ms link was 380-430 MiB for ~160 MiB of live C memory at peak (heaptrack). One call took
// 8-16 ms with ~150 MiB of C heap. Nothing to do on other C libraries.
func TrimMalloc() { C.kmm_trim() }

// MallocTrimInterval is how often `kmm replicate` calls TrimMalloc.
const MallocTrimInterval = time.Second

// TrimMallocEvery calls TrimMalloc every d until ctx ends.
func TrimMallocEvery(ctx context.Context, d time.Duration) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			TrimMalloc()
		}
	}
}

// fragmentHeap and unpinHeap are TrimMalloc's test fixture (kmm_frag_fill); false when the C
// library has no arenas to trim.
func fragmentHeap() bool { return C.kmm_frag_fill() == 0 }
func unpinHeap()         { C.kmm_frag_unpin() }
