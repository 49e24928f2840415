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
#ifdef __GLIBC__
#include <malloc.h>
static void kmm_limit_arenas(int n) {
	if (getenv("MALLOC_ARENA_MAX") == NULL) {
		mallopt(M_ARENA_MAX, n);
	}
}
#else
static void kmm_limit_arenas(int n) { (void)n; }
#endif
*/
import "C"

// MallocArenas is the glibc malloc arena limit `kmm replicate` sets for itself.
const MallocArenas = 2

// LimitMallocArenas limits glibc's malloc arenas to n for this process unless MALLOC_ARENA_MAX
// is set. Call it before creating any client.
func LimitMallocArenas(n int) { C.kmm_limit_arenas(C.int(n)) }
