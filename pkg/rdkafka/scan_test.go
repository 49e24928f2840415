package rdkafka

import "testing"

// A scan reader's prefetch is capped to its budget whatever the file sets, so readers open at
// once multiply a small number; the file still wins where it asks for less.
func TestScanReaderSettings(t *testing.T) {
	replication := Config{"bootstrap.servers": "x:9092", "fetch.max.bytes": "52428800", "max.partition.fetch.bytes": "10485760",
		"queued.max.messages.kbytes": "65536", "isolation.level": "read_uncommitted", "socket.nagle.disable": "false"}
	for _, c := range []struct {
		name     string
		file     Config
		prefetch int
		want     map[string]string
	}{
		{"replication-tuned file, 4 MiB", replication, 4 << 20, map[string]string{"queued.max.messages.kbytes": "4096", "max.partition.fetch.bytes": "4194304",
			"fetch.max.bytes": "4194304", "fetch.wait.max.ms": "10", "isolation.level": "read_committed", "socket.nagle.disable": "false", "bootstrap.servers": "x:9092"}},
		{"below the minimum", replication, 1000, map[string]string{"queued.max.messages.kbytes": "1024", "max.partition.fetch.bytes": "1048576", "fetch.max.bytes": "1048576"}},
		{"defaults", Config{"bootstrap.servers": "x:9092"}, 8 << 20, map[string]string{"queued.max.messages.kbytes": "8192", "max.partition.fetch.bytes": "1048576",
			"fetch.max.bytes": "", "queued.min.messages": "10000", "fetch.queue.backoff.ms": "10", "socket.nagle.disable": "true"}},
		{"the file asks for less", Config{"queued.max.messages.kbytes": "2048", "max.partition.fetch.bytes": "65536"}, 8 << 20,
			map[string]string{"queued.max.messages.kbytes": "2048", "max.partition.fetch.bytes": "65536"}},
		{"the file waits less", Config{"fetch.wait.max.ms": "5"}, 8 << 20, map[string]string{"fetch.wait.max.ms": "5"}},
		{"large records", Config{"fetch.max.bytes": "52428800", "message.max.bytes": "5000000"}, 1 << 20, map[string]string{"fetch.max.bytes": "5000000"}},
	} {
		got := ScanReaderSettings(c.file, c.prefetch)
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q (all: %v)", c.name, k, got[k], v, got)
			}
		}
	}
}
