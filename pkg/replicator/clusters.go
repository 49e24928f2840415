package replicator

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kmmproject/kmm/mm2conf/clientconf"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// Outage thresholds (Options may override the first two). They are documented in
// docs/replicate.md's "Outages"; keep the two in step.
const (
	// DefaultDownAfter: a cluster is down when no client has had a usable connection to it for
	// this long and at least one connection attempt or request failed meanwhile.
	DefaultDownAfter = 10 * time.Second
	// DefaultStallAfter: a flow is stalled when records wait (fetched and not yet acknowledged,
	// or on the source and not yet fetched) and none was delivered for this long.
	DefaultStallAfter = 30 * time.Second
	// remindEvery: while a cluster stays down, one reminder log line this often.
	remindEvery = 30 * time.Second
	// probeEvery and probeTimeout: each cluster is asked for its broker list this often, and
	// a probe without an answer within probeTimeout counts as a failure.
	probeEvery   = 2 * time.Second
	probeTimeout = 5 * time.Second
)

// ClusterState is what the replicator knows about reaching one cluster.
type ClusterState struct {
	Alias     string    `json:"cluster"`
	Bootstrap string    `json:"bootstrap"`
	Role      string    `json:"role,omitempty"` // in FlowStats: "source" or "target"
	Up        bool      `json:"up"`
	DownSince time.Time `json:"down_since,omitempty"` // first failure of the current outage (zero while up)
	// FailingSince is set while the cluster is still up but has had no usable connection for
	// more than a probe interval, with failures (zero otherwise): the first failure, and Cause
	// says what failed. Past DownAfter it is declared down.
	FailingSince time.Time `json:"failing_since,omitzero"`
	// Cause is librdkafka's reason, classified: "connection refused: Connect to ipv4#… failed:
	// Connection refused", "DNS: …", "TLS: …", "SASL: …", "timeout: …".
	Cause string `json:"cause,omitempty"`
	// RTTAvg and RTTP99 are the link's round trip as librdkafka measures it (statistics rtt,
	// request sent to response received, in its broker thread) for the probe's metadata
	// requests (one every probeEvery on an open connection, answered at once by the broker)
	// over the last rttStatsEvery; 0 before the first window. (The pipelines' per-broker rtt is
	// in /metrics too, but a fetch's includes the broker's fetch.wait.max.ms whenever the
	// source has nothing new, so it is not the link's.)
	RTTAvg time.Duration `json:"rtt_avg_ns,omitempty"`
	RTTP99 time.Duration `json:"rtt_p99_ns,omitempty"`
}

// rttStatsEvery is the statistics window of the probe clients (about 5 probes each).
const rttStatsEvery = 10 * time.Second

// clusterWatch decides whether one cluster is reachable, from a probe of its own (a metadata
// request every probeEvery), the problems every client of the cluster reports (librdkafka error
// events and log lines), and signs of a working connection (an acknowledged record, a broker
// connection up in a client's statistics).
type clusterWatch struct {
	alias, bootstrap string
	downAfter        time.Duration
	admin            *rdkafka.Admin
	secrets          []string // configuration values never shown in a cause
	sink             func(Event)

	mu         sync.Mutex
	up         bool
	lastOK     time.Time
	failSince  time.Time // first failure since lastOK (zero: none)
	cause      rdkafka.Reach
	causeRank  int
	downAt     time.Time // when it was declared down
	downSince  time.Time // first failure of the outage (failSince when declared down)
	lastRemind time.Time
	flows      []string // "A->B (target)", for messages
	waiting    func() string
}

func newClusterWatch(alias, bootstrap string, cfg rdkafka.Config, downAfter time.Duration, sink func(Event)) (*clusterWatch, error) {
	w := &clusterWatch{alias: alias, bootstrap: bootstrap, downAfter: downAfter, sink: sink, up: true, lastOK: time.Now()}
	for k, v := range cfg {
		if clientconf.IsSecretKey(k) && len(v) >= 4 {
			w.secrets = append(w.secrets, v)
		}
	}
	a, err := rdkafka.NewAdmin("cluster "+alias, cfg, rdkafka.WithProblems(func(err error) { w.problem(err) }), rdkafka.WithLinkRTT(rttStatsEvery))
	if err != nil {
		return nil, err
	}
	w.admin = a
	return w, nil
}

func (w *clusterWatch) name() string { return fmt.Sprintf("cluster %s (%s)", w.alias, w.bootstrap) }

func causeRank(r rdkafka.Reach) int {
	switch {
	case !r.Specific:
		return 1
	case r.Kind == "timeout":
		return 2
	}
	return 3
}

// problem is a client's report (any client of this cluster). It returns whether err was a
// problem reaching the cluster.
func (w *clusterWatch) problem(err error) bool {
	r, ok := rdkafka.Reachability(err)
	if !ok {
		return false
	}
	w.failed(time.Now(), r)
	return true
}

func (w *clusterWatch) failed(t time.Time, r rdkafka.Reach) {
	r.Detail = w.hide(r.Detail)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failSince.IsZero() {
		w.failSince = t
	}
	if rk := causeRank(r); rk >= w.causeRank {
		w.cause, w.causeRank = r, rk
	}
}

// ok records a sign of a usable connection at t.
func (w *clusterWatch) ok(t time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t.After(w.lastOK) {
		w.lastOK = t
		w.failSince = time.Time{}
		if w.up {
			w.cause, w.causeRank = rdkafka.Reach{}, 0
		}
	}
}

func (w *clusterWatch) hide(s string) string {
	for _, v := range w.secrets {
		s = strings.ReplaceAll(s, v, "[hidden]")
	}
	return s
}

// isDown reports whether the cluster is declared down.
func (w *clusterWatch) isDown() bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return !w.up
}

func (w *clusterWatch) state() ClusterState {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := ClusterState{Alias: w.alias, Bootstrap: w.bootstrap, Up: w.up}
	if r, ok := w.linkRTT(); ok && time.Since(r.At) < 3*rttStatsEvery {
		st.RTTAvg, st.RTTP99 = r.Avg, r.P99
	}
	if !w.up {
		st.DownSince = w.downSince
		st.Cause = w.causeText()
	} else if !w.failSince.IsZero() && time.Since(w.lastOK) > probeEvery+time.Second {
		st.FailingSince = w.failSince
		if w.cause.Kind != "" {
			st.Cause = w.cause.String()
		}
	}
	return st
}

func (w *clusterWatch) causeText() string {
	if w.cause.Kind == "" {
		return fmt.Sprintf("no usable connection for %s", w.downAfter)
	}
	return w.cause.String()
}

// evaluate applies the thresholds at now and logs transitions: one WARN when the cluster goes
// down, one INFO when it returns, a reminder every remindEvery while it stays down.
func (w *clusterWatch) evaluate(now time.Time) {
	w.mu.Lock()
	var ev *Event
	switch {
	case w.up && !w.failSince.IsZero() && now.Sub(w.lastOK) >= w.downAfter:
		w.up, w.downAt, w.downSince, w.lastRemind = false, now, w.failSince, now
		ev = &Event{Type: EvClusterDown, Message: fmt.Sprintf("%s is unreachable since %s: %s; %s wait for it and resume by themselves when it returns (nothing is lost)",
			w.name(), w.downSince.UTC().Format(time.RFC3339), w.causeText(), w.flowList())}
	case !w.up && w.lastOK.After(w.downAt):
		w.up, w.failSince, w.cause, w.causeRank = true, time.Time{}, rdkafka.Reach{}, 0
		ev = &Event{Type: EvClusterUp, Message: fmt.Sprintf("%s is reachable again after %s; %s resume", w.name(), w.lastOK.Sub(w.downSince).Round(time.Second), w.flowList())}
		w.downSince = time.Time{}
	case !w.up && now.Sub(w.lastRemind) >= remindEvery:
		w.lastRemind = now
		msg := fmt.Sprintf("%s still unreachable (for %s): %s", w.name(), now.Sub(w.downSince).Round(time.Second), w.causeText())
		if w.waiting != nil {
			if s := w.waiting(); s != "" {
				msg += "; " + s
			}
		}
		ev = &Event{Type: EvClusterStillDown, Message: msg}
	}
	w.mu.Unlock()
	if ev != nil {
		ev.Cluster = w.alias
		ev.Time = now
		w.sink(*ev)
	}
}

func (w *clusterWatch) flowList() string {
	if len(w.flows) == 0 {
		return "its flows"
	}
	return "flows " + strings.Join(w.flows, ", ")
}

// probe runs until ctx ends: a metadata request every probeEvery.
func (w *clusterWatch) probe(ctx context.Context) {
	t := time.NewTicker(probeEvery)
	defer t.Stop()
	for {
		start := time.Now()
		_, err := w.admin.Probe(ctx, probeTimeout)
		switch {
		case ctx.Err() != nil:
			return
		case err == nil:
			w.ok(start)
		default:
			r, ok := rdkafka.Reachability(err)
			if !ok || r.Kind == "timeout" {
				r = rdkafka.Reach{Kind: "timeout", Detail: fmt.Sprintf("no answer to a metadata request within %s", probeTimeout), Specific: true}
			}
			w.failed(time.Now(), r)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// watches is the set of cluster watches of one Run, by alias.
type watches struct {
	by     map[string]*clusterWatch
	cancel context.CancelFunc
	done   chan struct{}
}

func (ws *watches) get(alias string) *clusterWatch {
	if ws == nil {
		return nil
	}
	return ws.by[alias]
}

func (ws *watches) states() []ClusterState {
	if ws == nil {
		return nil
	}
	out := make([]ClusterState, 0, len(ws.by))
	for _, w := range ws.by {
		out = append(out, w.state())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Alias < out[j].Alias })
	return out
}

// start runs the probes and a 1 s evaluation tick (which also samples the engines' signs of
// life) until stop.
func (ws *watches) start(engines []*engine) {
	ctx, cancel := context.WithCancel(context.Background())
	ws.cancel, ws.done = cancel, make(chan struct{})
	for _, w := range ws.by {
		go w.probe(ctx) // Probe returns when ctx ends; the client closes after its last call
	}
	go func() {
		defer close(ws.done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				for _, e := range engines {
					e.sample(now)
				}
				for _, w := range ws.by {
					w.evaluate(now)
				}
			}
		}
	}()
}

// stop ends the probes and the tick, and waits up to timeout for the tick to return (after
// which no engine is sampled any more).
func (ws *watches) stop(timeout time.Duration) {
	if ws == nil || ws.cancel == nil {
		return
	}
	ws.cancel()
	select {
	case <-ws.done:
	case <-time.After(timeout):
	}
}

// close releases the probe clients (after stop).
func (ws *watches) close() {
	if ws == nil {
		return
	}
	for _, w := range ws.by {
		w.admin.Close()
	}
}

func (w *clusterWatch) linkRTT() (rdkafka.LinkRTT, bool) {
	if w.admin == nil {
		return rdkafka.LinkRTT{}, false
	}
	return w.admin.LinkRTT()
}

// roundTrip times up to n metadata requests to the cluster and returns the shortest (0 if none
// succeeded within 2 s each): the link's round trip plus the broker's and this process's
// scheduling, the minimum keeping a loaded machine's worst out. The first request also
// connects when the watch has not yet, so it is not counted. It stops at the first timed
// request shorter than near: a cluster that once answered that fast is near, while on a loaded
// machine a near one can answer slowly several times in a row (a full test run measured the
// bed's loopback cluster 45 ms away with two requests).
func (w *clusterWatch) roundTrip(ctx context.Context, n int, near time.Duration) time.Duration {
	if w == nil || w.admin == nil {
		return 0
	}
	var best time.Duration
	for i := 0; i < n && ctx.Err() == nil; i++ {
		t0 := time.Now()
		if _, err := w.admin.Probe(ctx, 2*time.Second); err != nil {
			continue
		}
		if d := time.Since(t0); i > 0 && (best == 0 || d < best) { // the first may include the connect
			best = d
		}
		if best > 0 && best < near {
			break
		}
	}
	return best
}
