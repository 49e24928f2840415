package rdkafka

import (
	"testing"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

func TestStampOrigin(t *testing.T) {
	shared := []kafka.Header{{Key: HeaderOrigin, Value: []byte("A")}}
	// No headers: the shared one-header slice, no allocation.
	if hs, echo := stampOrigin(nil, shared, "B"); echo || len(hs) != 1 || &hs[0] != &shared[0] {
		t.Errorf("no headers: %v %v", hs, echo)
	}
	// Headers without an origin: the origin appended, the others kept in order.
	hs, echo := stampOrigin([]kafka.Header{{Key: "seq", Value: []byte("7")}}, shared, "B")
	if echo || len(hs) != 2 || hs[0].Key != "seq" || hs[1].Key != HeaderOrigin || string(hs[1].Value) != "A" {
		t.Errorf("headers without an origin: %v %v", hs, echo)
	}
	// An origin already there (a second hop) is kept as is: C->... leaves "A".
	in := []kafka.Header{{Key: HeaderOrigin, Value: []byte("C")}, {Key: "x"}}
	if hs, echo := stampOrigin(in, shared, "B"); echo || len(hs) != 2 || string(hs[0].Value) != "C" {
		t.Errorf("origin C to B: %v %v", hs, echo)
	}
	// A record whose origin is the target is an echo.
	if _, echo := stampOrigin([]kafka.Header{{Key: "x"}, {Key: HeaderOrigin, Value: []byte("B")}}, shared, "B"); !echo {
		t.Error("a record from B copied to B is not an echo")
	}
	if _, echo := stampOrigin([]kafka.Header{{Key: HeaderOrigin, Value: []byte("Bx")}}, shared, "B"); echo {
		t.Error("origin Bx taken for B")
	}
}

// The per-record cost of the provenance header on the copy path (make bench measures the
// pipeline; this is the stamp alone).
func BenchmarkStampOrigin(b *testing.B) {
	shared := []kafka.Header{{Key: HeaderOrigin, Value: []byte("primary")}}
	two := []kafka.Header{{Key: "trace", Value: []byte("abc")}, {Key: "seq", Value: []byte("1")}}
	b.Run("no-headers", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_, _ = stampOrigin(nil, shared, "dr")
		}
	})
	b.Run("two-headers", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_, _ = stampOrigin(two[:2:2], shared, "dr")
		}
	})
	b.Run("origin-present", func(b *testing.B) {
		hs := append(two[:2:2], kafka.Header{Key: HeaderOrigin, Value: []byte("primary")})
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_, _ = stampOrigin(hs, shared, "dr")
		}
	})
}
