package cmdutil

import (
	"strings"
	"testing"

	"github.com/kmmproject/kmm/pkg/kerr"
)

func TestByteRate(t *testing.T) {
	for in, want := range map[string]int64{"": -1, "0": 0, "2000000": 2000000, "10MB": 10_000_000, "10mb/s": 10_000_000, "10M": 10_000_000,
		"10MiB": 10 << 20, "512KiB": 512 << 10, "1.5GB": 1_500_000_000, "100kB": 100_000, "64 KiB": 64 << 10, "7B": 7} {
		got, err := ByteRate("rate-limit", in)
		if err != nil || got != want {
			t.Errorf("ByteRate(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"10XB", "-1", "MB", "1e400", "ten"} {
		_, err := ByteRate("rate-limit", in)
		if err == nil || kerr.KindOf(err) != kerr.Usage || !strings.Contains(err.Error(), "--rate-limit") {
			t.Errorf("ByteRate(%q): %v, want a usage error naming --rate-limit", in, err)
		}
	}
	for n, want := range map[int64]string{512: "512 B", 1500: "1.5 kB", 2_000_000: "2 MB", 10_485_760: "10.49 MB", 0: "0 B"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
