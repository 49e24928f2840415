package replicator

import (
	"sync"
	"time"
)

// RecentEventsKept is how many events Replicator.RecentEvents keeps (the newest).
const RecentEventsKept = 100

// recentTypes are the events worth showing to someone who opens the status page during an
// incident: clusters going down and coming back, flows starting, stopping (a failover's mark
// says so in the message) and failing, worker rebalances, warnings and lost records. Progress
// (every 10 s), reminders (every 30 s) and routine syncs would push them out of the buffer.
var recentTypes = map[EventType]bool{
	EvStarted: true, EvStopped: true, EvDraining: true, EvError: true, EvWarning: true, EvRetentionGap: true,
	EvClusterDown: true, EvClusterUp: true,
	EvWorkerAssigned: true, EvWorkerRevoked: true, EvWorkerLeader: true,
	EvTopicCreated: true, EvPartitionsGrew: true, EvTopicAdded: true,
}

// recentEvents is a bounded ring of the newest events (RecentEventsKept).
type recentEvents struct {
	mu   sync.Mutex
	buf  []Event
	next int // where the next event goes once buf is full
}

func (r *recentEvents) add(e Event) {
	if !recentTypes[e.Type] {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.buf) < RecentEventsKept {
		r.buf = append(r.buf, e)
		return
	}
	r.buf[r.next] = e
	r.next = (r.next + 1) % RecentEventsKept
}

// newestFirst returns a copy of the buffer, newest first.
func (r *recentEvents) newestFirst() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Event, 0, len(r.buf))
	for i := len(r.buf) - 1; i >= 0; i-- {
		out = append(out, r.buf[(r.next+i)%len(r.buf)])
	}
	return out
}

// RecentEvents returns the newest events of the run (at most RecentEventsKept), newest first:
// clusters down and up, flows started, stopped (by a signal, or by a failover's mark: the
// message says which) and failed, worker rebalances, warnings, records lost to retention, topics
// created or grown. Progress events, reminders and routine syncs are not kept.
func (r *Replicator) RecentEvents() []Event { return r.recent.newestFirst() }

// recordingSink keeps the events it passes on in the replicator's ring.
type recordingSink struct {
	next Sink
	r    *recentEvents
}

func (s recordingSink) Emit(e Event) {
	s.r.add(e)
	s.next.Emit(e)
}
