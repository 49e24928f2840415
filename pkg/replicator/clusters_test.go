package replicator

import (
	"strings"
	"testing"
	"time"

	"github.com/kmmproject/kmm/pkg/rdkafka"
)

func testWatch(t0 time.Time) (*clusterWatch, *[]Event) {
	var evs []Event
	w := &clusterWatch{alias: "B", bootstrap: "127.0.0.1:29092", downAfter: DefaultDownAfter, up: true, lastOK: t0,
		sink: func(e Event) { evs = append(evs, e) }, flows: []string{"A->B (target)"}, secrets: []string{"s3cr3t-pw"}}
	return w, &evs
}

var refused = &rdkafka.LogError{Level: 3, Tag: "FAIL", Msg: "127.0.0.1:29092/1: Connect to ipv4#127.0.0.1:29092 failed: Connection refused (after 0ms in state CONNECT)"}

// One WARN when the cluster goes down (after DownAfter without a usable connection), a
// reminder every 30 s, one INFO when it returns; the cause is the most specific seen.
func TestClusterWatchTransitions(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	w, evs := testWatch(t0)
	w.failed(t0.Add(5*time.Second), mustReach(t, refused))
	w.evaluate(t0.Add(9 * time.Second))
	if len(*evs) != 0 || w.isDown() {
		t.Fatalf("down after 9 s without a usable connection: %+v", *evs)
	}
	w.evaluate(t0.Add(10 * time.Second))
	if len(*evs) != 1 || (*evs)[0].Type != EvClusterDown || (*evs)[0].Cluster != "B" || !w.isDown() {
		t.Fatalf("want one cluster_down after 10 s: %+v", *evs)
	}
	msg := (*evs)[0].Message
	for _, want := range []string{"cluster B (127.0.0.1:29092) is unreachable since 2026-01-02T03:04:10Z", "connection refused: Connect to ipv4#127.0.0.1:29092 failed: Connection refused", "A->B (target)", "nothing is lost"} {
		if !strings.Contains(msg, want) {
			t.Errorf("cluster_down message %q lacks %q", msg, want)
		}
	}
	// A generic error later in the outage does not replace the specific cause.
	w.failed(t0.Add(12*time.Second), mustReach(t, &rdkafka.LogError{Level: 3, Tag: "ERROR", Msg: "1/1 brokers are down"}))
	st := w.state()
	if st.Up || !st.DownSince.Equal(t0.Add(5*time.Second)) || !strings.HasPrefix(st.Cause, "connection refused: ") {
		t.Fatalf("state %+v", st)
	}
	for s := 11; s <= 100; s++ {
		w.evaluate(t0.Add(time.Duration(s) * time.Second))
	}
	var reminders int
	for _, e := range (*evs)[1:] {
		if e.Type != EvClusterStillDown {
			t.Fatalf("unexpected event while down: %+v", e)
		}
		reminders++
	}
	if reminders != 3 { // at 40, 70, 100 s
		t.Fatalf("%d reminders in 90 s of outage, want 3 (every 30 s): %+v", reminders, *evs)
	}
	w.ok(t0.Add(101 * time.Second))
	w.evaluate(t0.Add(101 * time.Second))
	last := (*evs)[len(*evs)-1]
	if last.Type != EvClusterUp || w.isDown() || !strings.Contains(last.Message, "reachable again after 1m36s") {
		t.Fatalf("want cluster_up after 1m36s of outage: %+v", last)
	}
	if st := w.state(); !st.Up || st.Cause != "" || !st.DownSince.IsZero() {
		t.Fatalf("state after recovery %+v", st)
	}
	n := len(*evs)
	for s := 102; s < 200; s++ {
		w.ok(t0.Add(time.Duration(s) * time.Second))
		w.evaluate(t0.Add(time.Duration(s) * time.Second))
	}
	if len(*evs) != n {
		t.Fatalf("events while up: %+v", (*evs)[n:])
	}
}

// Failures between working connections (a flapping link, one broker of several) do not make a
// cluster down; no failure at all (an idle client) does not either.
func TestClusterWatchNeedsBothSilenceAndFailure(t *testing.T) {
	t0 := time.Now()
	w, evs := testWatch(t0)
	for s := 1; s < 60; s++ {
		now := t0.Add(time.Duration(s) * time.Second)
		if s%5 == 0 {
			w.ok(now)
		} else {
			w.failed(now, mustReach(t, refused))
		}
		w.evaluate(now)
	}
	w2, evs2 := testWatch(t0)
	w2.evaluate(t0.Add(time.Hour))
	if len(*evs) != 0 || len(*evs2) != 0 || w.isDown() || w2.isDown() {
		t.Fatalf("flapping: %+v; silent: %+v", *evs, *evs2)
	}
}

func TestClusterWatchHidesSecretsInCauses(t *testing.T) {
	t0 := time.Now()
	w, _ := testWatch(t0)
	w.failed(t0, rdkafka.Reach{Kind: "SASL", Detail: "token endpoint https://user:s3cr3t-pw@idp/token refused", Specific: true})
	w.evaluate(t0.Add(time.Minute))
	if c := w.state().Cause; strings.Contains(c, "s3cr3t-pw") || !strings.Contains(c, "[hidden]") {
		t.Fatalf("cause %q shows the secret", c)
	}
}

func mustReach(t *testing.T, err error) rdkafka.Reach {
	t.Helper()
	r, ok := rdkafka.Reachability(err)
	if !ok {
		t.Fatalf("%v is not a reachability error", err)
	}
	return r
}
