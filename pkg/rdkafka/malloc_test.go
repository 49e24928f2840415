package rdkafka

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// rssBytes is this process's resident set (/proc/self/statm).
func rssBytes(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skipf("no /proc/self/statm: %v", err)
	}
	f := strings.Fields(string(b))
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return pages * int64(os.Getpagesize())
}

// TrimMalloc returns memory glibc keeps after frees below a live chunk: 64 MiB freed in
// 1,000-byte chunks under one that stays is still resident until the trim.
func TestTrimMallocReturnsFreedMemory(t *testing.T) {
	runtime.LockOSThread() // one thread, one arena for the fill
	defer runtime.UnlockOSThread()
	before := rssBytes(t)
	if !fragmentHeap() {
		t.Skip("not glibc: no arenas to trim")
	}
	defer unpinHeap()
	kept := rssBytes(t) - before
	if kept < 48<<20 {
		t.Skipf("glibc returned the freed memory by itself (%d MiB still resident): nothing to trim", kept>>20)
	}
	TrimMalloc()
	after := rssBytes(t) - before
	t.Logf("64 MiB freed under a live chunk: %d MiB still resident, %d MiB after TrimMalloc", kept>>20, after>>20)
	if kept-after < 40<<20 {
		t.Errorf("TrimMalloc returned %d MiB of %d MiB freed, want at least 40", (kept-after)>>20, kept>>20)
	}
}
