package rdkafka

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kmmproject/kmm/pkg/kerr"
)

// MembershipHandler receives a Membership's assignment changes, on its poll goroutine, in the
// order the group protocol makes them. Revoked must not return before the partitions are no
// longer copied (and their progress stored, unless lost): the group gives them to another
// member only after it returns. lost is true when the member was thrown out of the group
// (session timeout, fenced): the partitions may already belong to another member.
type MembershipHandler interface {
	Assigned(tps []TP)
	Revoked(tps []TP, lost bool)
}

// Membership is a consumer that joins a group only to be given partitions: it subscribes to
// topics with the cooperative-sticky assignor (incremental rebalances: a rebalance revokes only
// the partitions that move, and the members keep copying the rest meanwhile), pauses every
// partition it is assigned (it fetches no record and commits nothing), and hands assignments to
// its handler. The records are copied by Copiers in assign mode.
type Membership struct {
	name  string
	group string
	c     *kafka.Consumer
	h     MembershipHandler

	mu       sync.Mutex
	topics   []string
	owned    map[TP]bool
	closed   bool
	done     chan struct{}
	problems func(error)
}

// MembershipSettings are the settings a Membership adds to the caller's (the side's consumer
// settings): the group, the cooperative-sticky assignor, no commits, and a 10 s session (the
// broker's group.min.session.timeout.ms is 6 s): a member killed without leaving loses its
// partitions within about that time. Values set by the caller win, except the group and what
// correctness needs.
func MembershipSettings(group string, cfg Config) Config {
	fixed := map[string]string{"group.id": group, "partition.assignment.strategy": "cooperative-sticky",
		"enable.auto.commit": "false", "enable.auto.offset.store": "false", "auto.offset.reset": "latest",
		"group.protocol": "classic", "enable.partition.eof": "false"}
	out := Config{}
	for k, v := range cfg {
		if _, f := fixed[k]; !f && k != "group.instance.id" && k != "isolation.level" {
			out[k] = v
		}
	}
	for k, v := range fixed {
		out[k] = v
	}
	return merge(out, map[string]string{"session.timeout.ms": "10000", "heartbeat.interval.ms": "2000",
		// A paused member fetches nothing; keep what it might queue before the pause tiny.
		"queued.max.messages.kbytes": "64"}, failFast)
}

// NewMembership creates a member of group (not yet subscribed: Subscribe).
func NewMembership(name, group string, cfg Config, h MembershipHandler, opts ...Option) (*Membership, error) {
	o := collect(opts)
	cfg = withLogChannel(MembershipSettings(group, cfg))
	c, err := kafka.NewConsumer(cfg.configMap(nil))
	if err != nil {
		return nil, kerr.Wrap(kerr.Usage, fmt.Errorf("%s: invalid consumer configuration: %w", name, err))
	}
	startDrain(name, c.Logs(), cfg, o.problems)
	return &Membership{name: name, group: group, c: c, h: h, owned: map[TP]bool{}, done: make(chan struct{}), problems: o.problems}, nil
}

// Group is the group's id.
func (m *Membership) Group() string { return m.group }

// Subscribe sets the topics whose partitions the group shares (a change triggers a rebalance).
// It does nothing when the list is unchanged.
func (m *Membership) Subscribe(topics []string) error {
	ts := append([]string(nil), topics...)
	sort.Strings(ts)
	m.mu.Lock()
	same := len(ts) == len(m.topics) && len(ts) > 0
	for i := range ts {
		if same && ts[i] != m.topics[i] {
			same = false
		}
	}
	m.mu.Unlock()
	if same || len(ts) == 0 {
		return nil
	}
	if err := m.c.SubscribeTopics(ts, m.rebalance); err != nil {
		return Classify(fmt.Errorf("%s: subscribe to %v in group %s: %w", m.name, ts, m.group, err))
	}
	m.mu.Lock()
	m.topics = ts
	m.mu.Unlock()
	return nil
}

// Owned returns the partitions the group has assigned to this member, sorted.
func (m *Membership) Owned() []TP {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]TP, 0, len(m.owned))
	for tp := range m.owned {
		out = append(out, tp)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}

// Holds reports whether the group has assigned tp to this member.
func (m *Membership) Holds(tp TP) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.owned[tp]
}

func tpsOf(ps []kafka.TopicPartition) []TP {
	out := make([]TP, 0, len(ps))
	for _, p := range ps {
		if p.Topic != nil {
			out = append(out, TP{Topic: *p.Topic, Partition: p.Partition})
		}
	}
	return out
}

// rebalance is the consumer's rebalance callback (poll goroutine).
func (m *Membership) rebalance(c *kafka.Consumer, ev kafka.Event) error {
	switch e := ev.(type) {
	case kafka.AssignedPartitions:
		if err := c.IncrementalAssign(e.Partitions); err != nil {
			return err
		}
		if len(e.Partitions) > 0 {
			if err := c.Pause(e.Partitions); err != nil && m.problems != nil {
				m.problems(fmt.Errorf("%s: pausing the member's partitions: %w", m.name, err))
			}
		}
		tps := tpsOf(e.Partitions)
		m.mu.Lock()
		for _, tp := range tps {
			m.owned[tp] = true
		}
		m.mu.Unlock()
		if len(tps) > 0 {
			m.h.Assigned(tps)
		}
	case kafka.RevokedPartitions:
		tps := tpsOf(e.Partitions)
		lost := c.AssignmentLost()
		m.mu.Lock()
		for _, tp := range tps {
			delete(m.owned, tp)
		}
		m.mu.Unlock()
		if len(tps) > 0 {
			m.h.Revoked(tps, lost)
		}
		if err := c.IncrementalUnassign(e.Partitions); err != nil {
			return err
		}
	}
	return nil
}

// Run polls (serving the group protocol and the callbacks) until ctx ends or Close.
func (m *Membership) Run(ctx context.Context) {
	defer close(m.done)
	for ctx.Err() == nil {
		m.mu.Lock()
		closed := m.closed
		m.mu.Unlock()
		if closed {
			return
		}
		ev := m.c.Poll(100)
		switch e := ev.(type) {
		case kafka.Error:
			if m.problems != nil {
				m.problems(fmt.Errorf("%s (group %s): %w", m.name, m.group, e))
			}
		case *kafka.Message:
			// Paused partitions fetch nothing; a record fetched before the pause is ignored.
		}
	}
}

// Close leaves the group (the handler's Revoked runs for what the member still holds, so its
// partitions move to the other members once they are drained) and closes the consumer. Call
// after Run has started; it waits for Run to end first.
func (m *Membership) Close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	m.mu.Unlock()
	<-m.done
	_ = m.c.Close()
}
