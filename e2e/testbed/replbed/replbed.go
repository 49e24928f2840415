// Package replbed runs kmm's replication engine in-process against the test bed, for
// real-cluster tests of packages that need a live flow: a flow builder with fast intervals, and
// start/stop helpers that fail the test on start-up errors. Test support only.
package replbed

import (
	"context"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/policy"
	"github.com/kmmproject/kmm/pkg/replicator"
)

// Flow builds a flow src->tgt replicating the topics matching re (Go regex, full match), with
// the default replication policy and fast intervals.
func Flow(src, tgt testbed.Cluster, re string) *flow.Flow {
	rx := regexp.MustCompile("^(?:" + re + ")$")
	cfg := func(c testbed.Cluster) map[string]string { return map[string]string{"bootstrap.servers": c.Bootstrap} }
	return &flow.Flow{
		Source: src.Name, Target: tgt.Name, SourceBootstrap: src.Bootstrap, TargetBootstrap: tgt.Bootstrap, Enabled: true,
		SourceConsumer: cfg(src), SourceAdmin: cfg(src), SourceProducer: cfg(src),
		TargetProducer: map[string]string{"bootstrap.servers": tgt.Bootstrap, "enable.idempotence": "true", "acks": "all", "linger.ms": "5"},
		TargetAdmin:    cfg(tgt), TargetConsumer: cfg(tgt),
		Policy: policy.NewDefault(".", false, true), TopicFilter: rx.MatchString, HeartbeatsReplication: true,
		ReplicationFactor: 1, RefreshTopics: true, RefreshTopicsInterval: time.Second,
		EmitOffsetSyncs: true, OffsetLagMax: 100, OffsetSyncsRF: 1,
		OffsetsTopicRF: 1, OffsetFlushInterval: 500 * time.Millisecond, Tasks: 2,
	}
}

// Running is a replicator started by Start.
type Running struct {
	cancel context.CancelFunc
	done   chan error
	mu     sync.Mutex
	events []replicator.Event
}

// Start validates flows (filling what the test left unset), runs them until Stop (or the end of
// the test) and waits until every flow started; a start-up error fails the test at once.
func Start(t *testing.T, flows ...*flow.Flow) *Running {
	t.Helper()
	for _, f := range flows {
		if err := f.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Running{cancel: cancel, done: make(chan error, 1)}
	go func() {
		r.done <- replicator.Run(ctx, flows, replicator.Options{ShutdownTimeout: 20 * time.Second, ProgressEvery: -1,
			Sink: replicator.SinkFunc(func(e replicator.Event) {
				r.mu.Lock()
				r.events = append(r.events, e)
				r.mu.Unlock()
				if e.Type == replicator.EvWarning || e.Type == replicator.EvError || e.Type == replicator.EvRetentionGap {
					t.Logf("replicator: %s %s", e.Type, e.Message)
				}
			})})
	}()
	t.Cleanup(func() { r.Stop(t) })
	deadline := time.Now().Add(90 * time.Second)
	for len(r.Find(replicator.EvStarted)) < len(flows) {
		select {
		case err := <-r.done:
			r.cancel = nil
			t.Fatalf("replicator stopped during start: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("flows not started within 90s")
		}
	}
	return r
}

// Stop cancels the run and waits for the drain (at most 60 s).
func (r *Running) Stop(t *testing.T) {
	if r.cancel == nil {
		return
	}
	r.cancel()
	r.cancel = nil
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("replicator returned %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Error("replicator did not stop within 60s of cancel")
	}
}

// Find returns the events of one type seen so far.
func (r *Running) Find(typ replicator.EventType) []replicator.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []replicator.Event
	for _, e := range r.events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}
