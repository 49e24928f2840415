package rdkafka_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kmmproject/kmm/e2e/testbed/kfakebed"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// idleHandler records, in call order, what a Copier reports for its partitions.
type idleHandler struct {
	mu    sync.Mutex
	calls []string // "ack SRC" and "idle NEXT"
	acked int64    // last source offset acknowledged
	dst   int64    // last target offset
}

func (h *idleHandler) Acked(_ *rdkafka.CopyPart, src, dst int64, _ int, _ int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, fmt.Sprintf("ack %d", src))
	h.acked, h.dst = src, dst
}
func (h *idleHandler) AckedRun(p *rdkafka.CopyPart, r rdkafka.AckRun) { // the C plane's runs
	for i := int64(0); i < r.N; i++ {
		h.Acked(p, r.FirstSrc+i, r.FirstDst+i, 0, 0)
	}
}
func (h *idleHandler) Gap(*rdkafka.CopyPart, int64, int64) {}
func (h *idleHandler) Warn(string, error)                  {}
func (h *idleHandler) Idle(_ *rdkafka.CopyPart, next int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, fmt.Sprintf("idle %d", next))
}

func (h *idleHandler) snapshot() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.calls...)
}

// produceTxn writes per records to partition 0 of topic in one transaction, committed or aborted.
func produceTxn(t *testing.T, p *kafka.Producer, topic string, per int, commit bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < per; i++ {
		if err := p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: 0}, Value: []byte(fmt.Sprint(i))}, nil); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if commit {
		err = p.CommitTransaction(ctx)
	} else {
		p.Flush(10000)
		err = p.AbortTransaction(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// A partition whose tail is a transaction marker (after a committed transaction) or aborted
// records and their marker: the Copier calls Idle with the source's end once every copied record
// is acknowledged, after their Acked, and once per end offset; a later record is acknowledged as
// usual, and the next idle tail is reported again. Both data planes.
func TestCopierIdleAtTransactionTail(t *testing.T) {
	t.Parallel()
	for _, plane := range []string{rdkafka.PlaneC, rdkafka.PlaneGo} {
		t.Run(plane, func(t *testing.T) {
			t.Parallel()
			testCopierIdleAtTransactionTail(t, plane)
		})
	}
}

func testCopierIdleAtTransactionTail(t *testing.T, plane string) {
	a, b := kfakebed.Start(t, "A"), kfakebed.Start(t, "B")
	a.CreateTopic(t, "txn", 1)
	b.CreateTopic(t, "A.txn", 1)
	cfg := a.Config()
	cfg["transactional.id"] = "idle-test"
	p, err := kafka.NewProducer(rdkafka.KafkaConfigMap(cfg))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	go func() {
		for range p.Events() {
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.InitTransactions(ctx); err != nil {
		t.Fatal(err)
	}
	// Offsets: committed 0-4, marker 5 (end 6).
	produceTxn(t, p, "txn", 5, true)

	h := &idleHandler{acked: -1}
	cons := a.Config()
	cons["isolation.level"] = "read_committed"
	c, err := rdkafka.NewCopier("idle", cons, b.Config(), h, rdkafka.WithDataPlane(plane))
	if err != nil {
		t.Fatal(err)
	}
	if c.Plane() != plane {
		t.Fatalf("the copier runs the %s plane, want %s", c.Plane(), plane)
	}
	defer c.Close()
	c.Start(context.Background())
	if err := c.Add([]*rdkafka.CopyPart{{SrcTopic: "txn", DstTopic: "A.txn", Partition: 0}}, []int64{-1}); err != nil {
		t.Fatal(err)
	}
	wait := func(what string, want []string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			got := h.snapshot()
			if fmt.Sprint(got) == fmt.Sprint(want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: calls %v, want %v", what, got, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	committed := []string{"ack 0", "ack 1", "ack 2", "ack 3", "ack 4", "idle 6"}
	wait("committed tail", committed)
	// The next EOFs at the same end (none come without new data, but give them time) add nothing.
	time.Sleep(500 * time.Millisecond)
	wait("no repeat", committed)

	// Aborted records 6-8 and their marker 9 (end 10): nothing to copy, the end moves on.
	produceTxn(t, p, "txn", 3, false)
	afterAbort := append(committed, "idle 10")
	wait("aborted tail", afterAbort)

	// A committed record after the gap: acknowledged as usual (offset 10, marker 11, end 12).
	produceTxn(t, p, "txn", 1, true)
	wait("committed after the aborted tail", append(afterAbort, "ack 10", "idle 12"))
	if h.dst != 5 {
		t.Fatalf("the record after the gaps landed at target offset %d, want 5", h.dst)
	}
}
