package replicator

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// The ring keeps the newest RecentEventsKept events worth showing, newest first; progress,
// reminders and routine syncs are left out.
func TestRecentEvents(t *testing.T) {
	var r recentEvents
	if got := r.newestFirst(); len(got) != 0 {
		t.Fatalf("empty ring: %+v", got)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var passed []Event
	s := recordingSink{next: SinkFunc(func(e Event) { passed = append(passed, e) }), r: &r}
	for i := 0; i < 250; i++ {
		s.Emit(Event{Time: t0.Add(time.Duration(i) * time.Second), Type: EvWarning, Message: fmt.Sprint(i)})
		s.Emit(Event{Time: t0.Add(time.Duration(i) * time.Second), Type: EvProgress})
	}
	s.Emit(Event{Type: EvClusterStillDown})
	s.Emit(Event{Type: EvConfigsSynced})
	s.Emit(Event{Type: EvClusterDown, Cluster: "B", Message: "down"})
	if len(passed) != 503 {
		t.Fatalf("the sink passed %d of 503 events on", len(passed))
	}
	got := r.newestFirst()
	if len(got) != RecentEventsKept || got[0].Type != EvClusterDown || got[0].Time.IsZero() {
		t.Fatalf("%d events, newest %+v", len(got), got[0])
	}
	for i, e := range got[1:] {
		if want := fmt.Sprint(249 - i); e.Type != EvWarning || e.Message != want {
			t.Fatalf("event %d: %+v, want warning %s", i+1, e, want)
		}
	}
}

// A cluster that has not answered for a few seconds says since when and why before it is
// declared down.
func TestClusterWatchFailing(t *testing.T) {
	now := time.Now()
	w, _ := testWatch(now.Add(-5 * time.Second))
	if st := w.state(); !st.FailingSince.IsZero() || st.Cause != "" {
		t.Fatalf("silent but no failure: %+v", st)
	}
	w.failed(now.Add(-4*time.Second), mustReach(t, refused))
	st := w.state()
	if !st.Up || !st.FailingSince.Equal(now.Add(-4*time.Second)) || !strings.HasPrefix(st.Cause, "connection refused: ") {
		t.Fatalf("failing: %+v", st)
	}
	w.ok(now)
	if st := w.state(); !st.FailingSince.IsZero() || st.Cause != "" {
		t.Fatalf("answered again: %+v", st)
	}
}
