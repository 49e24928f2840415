// Package app is an application stand-in for the failover and failback tests: a producer
// writing sequence numbers (header "seq") at a steady rate, and a librdkafka consumer group that
// commits as it reads and records every sequence number it saw, so "every record exactly once
// across A then B" is checked from the outside.
package app

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// Producer writes records with consecutive sequence numbers, round robin over the partitions.
type Producer struct {
	p      *rdkafka.Producer
	topic  string
	parts  int
	next   atomic.Int64
	cancel context.CancelFunc
	done   chan error
}

// StartProducer writes to topic at about rate records per second (batches every 20 ms) from
// sequence number from, until Stop.
func StartProducer(bootstrap, topic string, parts, rate int, from int64) (*Producer, error) {
	p, err := rdkafka.NewProducer("app-producer", rdkafka.Config{"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": "true"})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr := &Producer{p: p, topic: topic, parts: parts, cancel: cancel, done: make(chan error, 1)}
	pr.next.Store(from)
	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		per := max(1, rate/50)
		for {
			select {
			case <-ctx.Done():
				pr.done <- nil
				return
			case <-tick.C:
			}
			recs := make([]rdkafka.Record, per)
			for i := range recs {
				seq := pr.next.Load() + int64(i)
				recs[i] = rdkafka.Record{Topic: topic, Partition: int32(seq % int64(parts)), Key: []byte(strconv.FormatInt(seq, 10)),
					Value: []byte(fmt.Sprintf("value-%d", seq)), Headers: []rdkafka.Header{{Key: "seq", Value: []byte(strconv.FormatInt(seq, 10))}}}
			}
			// Not cancelled by Stop: a batch is either acknowledged and counted, or an error.
			wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
			_, err := p.ProduceSync(wctx, recs)
			wcancel()
			if err != nil {
				pr.done <- err
				return
			}
			pr.next.Add(int64(per))
		}
	}()
	return pr, nil
}

// Stop stops writing and returns the next sequence number (all before it were acknowledged).
func (p *Producer) Stop() (int64, error) {
	p.cancel()
	err := <-p.done
	p.p.Close()
	return p.next.Load(), err
}

// Produced is the number of the next sequence number to write.
func (p *Producer) Produced() int64 { return p.next.Load() }

// Consumer is a consumer group member that commits what it read after every poll.
type Consumer struct {
	c      *rdkafka.Consumer
	mu     sync.Mutex
	seen   map[int64]int
	limit  int64
	cancel context.CancelFunc
	done   chan error
	read   atomic.Int64
}

// StartConsumer joins group on bootstrap and reads topic; it stops reading (and committing)
// after limit records when limit > 0. auto.offset.reset is earliest: a group without a
// committed offset re-reads everything (which the exactly-once checks would catch).
func StartConsumer(bootstrap, group, topic string, limit int64) (*Consumer, error) {
	c, err := rdkafka.NewConsumer("app-consumer "+group, rdkafka.Config{"bootstrap.servers": bootstrap, "group.id": group,
		"auto.offset.reset": "earliest", "session.timeout.ms": "10000", "max.poll.interval.ms": "60000"})
	if err != nil {
		return nil, err
	}
	if err := c.Subscribe(topic); err != nil {
		c.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	co := &Consumer{c: c, seen: map[int64]int{}, limit: limit, cancel: cancel, done: make(chan error, 1)}
	go func() {
		for ctx.Err() == nil {
			max := 500
			if limit > 0 {
				max = int(min(int64(max), limit-co.read.Load()))
				if max <= 0 {
					<-ctx.Done()
					break
				}
			}
			recs, err := c.Poll(ctx, max, 200*time.Millisecond)
			if err != nil && ctx.Err() == nil {
				co.done <- err
				return
			}
			if len(recs) == 0 {
				continue
			}
			commit := map[rdkafka.TP]int64{}
			co.mu.Lock()
			for _, r := range recs {
				for _, h := range r.Headers {
					if h.Key == "seq" {
						n, _ := strconv.ParseInt(string(h.Value), 10, 64)
						co.seen[n]++
					}
				}
				commit[rdkafka.TP{Topic: r.Topic, Partition: r.Partition}] = r.Offset + 1
			}
			co.mu.Unlock()
			if err := c.Commit(commit); err != nil {
				co.done <- err
				return
			}
			co.read.Add(int64(len(recs)))
		}
		co.done <- nil
	}()
	return co, nil
}

// Read is how many records the consumer has read and committed.
func (c *Consumer) Read() int64 { return c.read.Load() }

// Stop leaves the group and returns how often each sequence number was seen.
func (c *Consumer) Stop() (map[int64]int, error) {
	c.cancel()
	err := <-c.done
	c.c.Close()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen, err
}

// Check returns the sequence numbers in [0, n) seen zero times and those seen more than once,
// over the union of the given observations.
func Check(n int64, seen ...map[int64]int) (lost, dup []int64) {
	total := map[int64]int{}
	for _, s := range seen {
		for k, v := range s {
			total[k] += v
		}
	}
	for i := int64(0); i < n; i++ {
		switch c := total[i]; {
		case c == 0:
			lost = append(lost, i)
		case c > 1:
			dup = append(dup, i)
		}
	}
	return lost, dup
}

// Seen returns how often each sequence number was seen so far (a copy; safe while it runs).
func (c *Consumer) Seen() map[int64]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[int64]int, len(c.seen))
	for k, v := range c.seen {
		out[k] = v
	}
	return out
}
