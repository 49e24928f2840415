package main

// The ceiling: what the same librdkafka clients, with the settings kmm's Copier uses
// (rdkafka.CopierSettings over the flow's replication client settings, both from kmm's own
// code), manage when they only consume from A or only produce to B. This package imports
// confluent-kafka-go directly (the only one outside pkg/rdkafka): it is a measuring tool, not part
// of kmm, and it must reproduce the Copier's per-record path exactly (Poll one *kafka.Message at
// a time; Produce with an Opaque slot, delivery reports drained from Events() with
// go.delivery.report.fields=none), which pkg/rdkafka's convenience wrappers do not expose.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// spread assigns partitions round robin to n pipelines, as the replicator engine does.
func spread(parts, n int) [][]int32 {
	out := make([][]int32, n)
	for p := 0; p < parts; p++ {
		out[p%n] = append(out[p%n], int32(p))
	}
	return out
}

type ceilingResult struct {
	Records  int64
	Bytes    int64
	First    time.Time
	Last     time.Time
	CPU      float64 // CPU seconds of this process during the measurement
	Err      error
	Settings map[string]string
}

// ceilingConsume reads topic (partitions 0..n-1 up to end[p]) with tasks consumers in
// parallel, each polling message by message like the Copier's consumer goroutine.
func ceilingConsume(ctx context.Context, cons rdkafka.Config, topic string, end []int64, tasks int) ceilingResult {
	var (
		wg      sync.WaitGroup
		records atomic.Int64
		bytes   atomic.Int64
		mu      sync.Mutex
		first   time.Time
		last    time.Time
		errs    []error
	)
	cpu0 := selfCPU()
	for i, parts := range spread(len(end), tasks) {
		if len(parts) == 0 {
			continue
		}
		wg.Add(1)
		go func(i int, parts []int32) {
			defer wg.Done()
			settings, _ := rdkafka.CopierSettings(fmt.Sprintf("bench-ceiling-%d", i), cons, nil)
			c, err := kafka.NewConsumer(rdkafka.KafkaConfigMap(settings))
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				return
			}
			defer c.Close()
			go func() {
				for range c.Logs() { // go.logs.channel.enable, as the Copier has it
				}
			}()
			var tps []kafka.TopicPartition
			remaining := 0
			for _, p := range parts {
				if end[p] > 0 {
					tps = append(tps, kafka.TopicPartition{Topic: &topic, Partition: p, Offset: kafka.OffsetInvalid})
					remaining++
				}
			}
			if err := c.IncrementalAssign(tps); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				return
			}
			var f, l time.Time
			for remaining > 0 && ctx.Err() == nil {
				ev := c.Poll(100)
				m, ok := ev.(*kafka.Message)
				if !ok {
					continue
				}
				if m.TopicPartition.Error != nil {
					continue
				}
				if f.IsZero() {
					f = time.Now()
				}
				records.Add(1)
				n := len(m.Key) + len(m.Value)
				for _, h := range m.Headers {
					n += len(h.Key) + len(h.Value)
				}
				bytes.Add(int64(n))
				if int64(m.TopicPartition.Offset)+1 == end[m.TopicPartition.Partition] {
					remaining--
				}
			}
			l = time.Now()
			mu.Lock()
			if first.IsZero() || f.Before(first) {
				first = f
			}
			if l.After(last) {
				last = l
			}
			if ctx.Err() != nil {
				errs = append(errs, ctx.Err())
			}
			mu.Unlock()
		}(i, parts)
	}
	wg.Wait()
	settings, _ := rdkafka.CopierSettings("bench-ceiling-0", cons, nil)
	return ceilingResult{Records: records.Load(), Bytes: bytes.Load(), First: first, Last: last, CPU: selfCPU() - cpu0,
		Err: errors.Join(errs...), Settings: settings}
}

// genRecord fills a record of workload w with sequence number i (key, value, two headers).
type recordGen struct {
	w      workload
	random []byte
}

func newRecordGen(w workload) *recordGen {
	return &recordGen{w: w, random: randomBytes(4 << 20)}
}

func (g *recordGen) key(i int64) []byte { return []byte(fmt.Sprintf("key-%010d", i)) }

func (g *recordGen) value(i int64) []byte {
	off := int((i * 7919) % int64(len(g.random)-g.w.ValueSize))
	return g.random[off : off+g.w.ValueSize]
}

func (g *recordGen) headers(i int64) []kafka.Header {
	seq := make([]byte, 8)
	for b := 0; b < 8; b++ {
		seq[b] = byte(i >> (56 - 8*b))
	}
	return []kafka.Header{{Key: hdrSeq, Value: seq}, {Key: hdrSrc, Value: []byte(hdrSrcValue)}}
}

// ceilingProduce writes the workload's records (same sizes, keys and headers) to topic on the
// target with tasks producers in parallel, each one like the Copier's producer: Produce with an
// Opaque slot, ErrQueueFull -> Flush(10) and retry, delivery reports drained on one goroutine.
func ceilingProduce(ctx context.Context, prod rdkafka.Config, topic string, w workload, tasks int) ceilingResult {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first time.Time
		last  time.Time
		errs  []error
		acked atomic.Int64
		bytes atomic.Int64
	)
	gen := newRecordGen(w)
	cpu0 := selfCPU()
	perPart := make([]int64, w.Partitions)
	for i := int64(0); i < w.Records; i++ {
		perPart[i%int64(w.Partitions)]++
	}
	type slot struct{ vlen int }
	for _, parts := range spread(w.Partitions, tasks) {
		if len(parts) == 0 {
			continue
		}
		wg.Add(1)
		go func(parts []int32) {
			defer wg.Done()
			_, settings := rdkafka.CopierSettings("bench-ceiling", nil, prod)
			p, err := kafka.NewProducer(rdkafka.KafkaConfigMap(settings))
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				return
			}
			defer p.Close()
			go func() {
				for range p.Logs() { // go.logs.channel.enable, as the Copier has it
				}
			}()
			var total int64
			for _, part := range parts {
				total += perPart[part]
			}
			done := make(chan struct{})
			var mine atomic.Int64
			var firstAck time.Time
			go func() {
				defer close(done)
				for ev := range p.Events() {
					m, ok := ev.(*kafka.Message)
					if !ok {
						continue
					}
					if m.TopicPartition.Error != nil {
						mu.Lock()
						errs = append(errs, m.TopicPartition.Error)
						mu.Unlock()
					}
					if _, ok := m.Opaque.(*slot); ok {
						if firstAck.IsZero() {
							firstAck = time.Now()
						}
						acked.Add(1)
						if mine.Add(1) == total {
							return
						}
					}
				}
			}()
			var chunk []slot
			sent := make([]int64, len(parts))
			// Interleave partitions like a consumer's fetch responses would.
			for left := total; left > 0 && ctx.Err() == nil; {
				for j, part := range parts {
					for k := 0; k < 100 && sent[j] < perPart[part]; k++ {
						i := sent[j]*int64(w.Partitions) + int64(part)
						if len(chunk) == 0 {
							chunk = make([]slot, 1024)
						}
						s := &chunk[0]
						chunk = chunk[1:]
						m := &kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: part},
							Key: gen.key(i), Value: gen.value(i), Headers: gen.headers(i), Opaque: s}
						s.vlen = len(m.Value)
						n := len(m.Key) + len(m.Value)
						for _, h := range m.Headers {
							n += len(h.Key) + len(h.Value)
						}
						for {
							err := p.Produce(m, nil)
							if err == nil {
								break
							}
							var ke kafka.Error
							if errors.As(err, &ke) && ke.Code() == kafka.ErrQueueFull {
								p.Flush(10)
								continue
							}
							mu.Lock()
							errs = append(errs, err)
							mu.Unlock()
							return
						}
						bytes.Add(int64(n))
						sent[j]++
						left--
					}
				}
			}
			select {
			case <-done:
			case <-ctx.Done():
				mu.Lock()
				errs = append(errs, ctx.Err())
				mu.Unlock()
			}
			// Like the replicator runs, from the first record on the target (first delivery
			// report) to the last: connection set-up and the first linger are not counted.
			l := time.Now()
			mu.Lock()
			if !firstAck.IsZero() && (first.IsZero() || firstAck.Before(first)) {
				first = firstAck
			}
			if l.After(last) {
				last = l
			}
			mu.Unlock()
		}(parts)
	}
	wg.Wait()
	_, settings := rdkafka.CopierSettings("bench-ceiling", nil, prod)
	return ceilingResult{Records: acked.Load(), Bytes: bytes.Load(), First: first, Last: last, CPU: selfCPU() - cpu0,
		Err: errors.Join(errs...), Settings: settings}
}

// asyncProducer paces records for the latency workload: Produce without waiting, delivery
// reports drained on a goroutine (errors counted).
type asyncProducer struct {
	p      *kafka.Producer
	failed atomic.Int64
	acked  atomic.Int64
	done   chan struct{}
}

func newAsyncProducer(cfg rdkafka.Config) (*asyncProducer, error) {
	settings := rdkafka.Config{"go.delivery.report.fields": "none"}
	for k, v := range cfg {
		settings[k] = v
	}
	p, err := kafka.NewProducer(rdkafka.KafkaConfigMap(settings))
	if err != nil {
		return nil, err
	}
	ap := &asyncProducer{p: p, done: make(chan struct{})}
	go func() {
		defer close(ap.done)
		for ev := range p.Events() {
			if m, ok := ev.(*kafka.Message); ok {
				if m.TopicPartition.Error != nil {
					ap.failed.Add(1)
				} else {
					ap.acked.Add(1)
				}
			}
		}
	}()
	return ap, nil
}

func (a *asyncProducer) produce(topic string, part int32, key, value []byte, hdrs []kafka.Header) error {
	m := &kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: part}, Key: key, Value: value, Headers: hdrs}
	for {
		err := a.p.Produce(m, nil)
		if err == nil {
			return nil
		}
		var ke kafka.Error
		if errors.As(err, &ke) && ke.Code() == kafka.ErrQueueFull {
			a.p.Flush(5)
			continue
		}
		return err
	}
}

// close waits for every delivery report (up to timeout) and closes the producer.
func (a *asyncProducer) close(timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for a.p.Len() > 0 && time.Now().Before(deadline) {
		a.p.Flush(100)
	}
	a.p.Close()
	<-a.done
}
