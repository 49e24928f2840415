package replicator

import (
	"context"
	"os"
	"runtime/debug"

	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// GCPercent is the Go garbage collector's GOGC `kmm replicate` runs with when the environment
// does not set GOGC.
const GCPercent = 50

// TuneProcessMemory sets the process-wide memory settings of `kmm replicate`; call it once,
// before the first client exists. Every polled record is copied into the Go heap and is garbage
// once produced: collecting at 1.5x the live heap instead of 2x, glibc with two malloc arenas
// instead of up to 16 (rdkafka.LimitMallocArenas), and the C heap's free memory returned every
// second until ctx ends (rdkafka.TrimMallocEvery) keep peak RSS near the 128 MiB target
// (docs/benchmarks.md). GOGC and MALLOC_ARENA_MAX in the environment win.
func TuneProcessMemory(ctx context.Context) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
	rdkafka.LimitMallocArenas(rdkafka.MallocArenas)
	go rdkafka.TrimMallocEvery(ctx, rdkafka.MallocTrimInterval)
}
