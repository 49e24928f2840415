package verify

import (
	"context"
	"testing"
	"time"

	"github.com/kmmproject/kmm/pkg/cluster"
)

func BenchmarkRecordHash1K(b *testing.B) {
	r := cluster.Record{Key: []byte("key-0000000001"), Value: make([]byte, 1024), Headers: []cluster.Header{{Key: "bench-seq", Value: make([]byte, 8)}, {Key: "bench-src", Value: []byte("123456789")}}, Timestamp: time.Now()}
	b.SetBytes(1024 + 14 + 35)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		RecordHash(&r, true)
	}
}

func BenchmarkCompareEqual(b *testing.B) {
	n := 100_000
	its := make([]Item, n)
	for i := range its {
		its[i] = Item{Offset: int64(i), Hash: uint64(i) * 0x9E3779B97F4A7C15}
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := (Comparer{}).Compare(context.Background(), &SliceStream{Items: its}, &SliceStream{Items: its}); err != nil {
			b.Fatal(err)
		}
	}
}
