package rdkafka

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// A client's log lines go to the process logger as JSON records at mapped levels, with the
// client's secrets hidden; with a problem handler, warnings and errors go to it and the
// records are debug.
func TestDrainLogsLevelsSecretsHandler(t *testing.T) {
	var buf bytes.Buffer
	SetLogger(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	defer procLogger.Store(nil)
	cfg := Config{"sasl.password": "s3cr3tpw", "sasl.username": "alice"}
	feed := func(problems func(error)) []map[string]any {
		buf.Reset()
		ch := make(chan kafka.LogEvent, 4)
		ch <- kafka.LogEvent{Name: "rdkafka#producer-9", Tag: "FAIL", Level: 3, Message: "[thrd:main]: auth as alice with s3cr3tpw failed"}
		ch <- kafka.LogEvent{Name: "rdkafka#producer-9", Tag: "REQTMOUT", Level: 4, Message: "timed out"}
		ch <- kafka.LogEvent{Name: "rdkafka#producer-9", Tag: "PARTCNT", Level: 5, Message: "notice"}
		ch <- kafka.LogEvent{Name: "rdkafka#producer-9", Tag: "BROKER", Level: 7, Message: "debug"}
		close(ch)
		drainLogs("cluster A", ch, cfg, problems) // returns when the channel is closed
		var out []map[string]any
		for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("%q: %v", l, err)
			}
			out = append(out, m)
		}
		return out
	}
	recs := feed(nil)
	if strings.Contains(buf.String(), "s3cr3tpw") || !strings.Contains(buf.String(), "[hidden]") {
		t.Errorf("secret not hidden:\n%s", buf.String())
	}
	wantLevels := []string{"ERROR", "WARN", "INFO", "DEBUG"}
	if len(recs) != 4 {
		t.Fatalf("%d records:\n%s", len(recs), buf.String())
	}
	for i, r := range recs {
		if r["level"] != wantLevels[i] || r["client"] != "cluster A" {
			t.Errorf("record %d: %v, want level %s client cluster A", i, r, wantLevels[i])
		}
	}
	if m := recs[0]["msg"].(string); strings.Contains(m, "thrd:") || !strings.HasPrefix(m, "librdkafka FAIL: auth as alice") {
		t.Errorf("msg %q", m)
	}
	var got []error
	recs = feed(func(err error) { got = append(got, err) })
	if len(got) != 2 {
		t.Fatalf("handler got %v, want the error and the warning", got)
	}
	var le *LogError
	if !errors.As(got[0], &le) || le.Tag != "FAIL" || strings.Contains(le.Msg, "s3cr3tpw") {
		t.Errorf("handler got %#v", got[0])
	}
	for i, r := range recs {
		if r["level"] != "DEBUG" {
			t.Errorf("record %d with a handler: level %v, want DEBUG", i, r["level"])
		}
	}
}

// Every client kind drains its log channel into the logger (a connection refused by
// 127.0.0.1:1 is logged, never printed raw), and closing the client ends the draining.
func TestClientsLogThroughLoggerAndStop(t *testing.T) {
	var mu syncBuffer
	SetLogger(slog.New(slog.NewJSONHandler(&mu, &slog.HandlerOptions{Level: slog.LevelDebug})))
	defer procLogger.Store(nil)
	// Counted by label: other tests' clients may still be closing in the background.
	if n := drainsOf("logtest"); n != 0 {
		t.Fatalf("%d logtest drains before the test", n)
	}
	cfg := Config{"bootstrap.servers": "127.0.0.1:1"}
	a, err := NewAdmin("logtest A", cfg)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewProducer("logtest A", cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewConsumer("logtest A", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Assign(map[TP]int64{{Topic: "t", Partition: 0}: int64(Earliest)}); err != nil {
		t.Fatal(err)
	}
	h := &warnHandler{}
	cp, err := NewCopier("logtest A->B-0", cfg, cfg, h)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cp.Start(ctx)
	if n := drainsOf("logtest"); n != 5 {
		t.Errorf("%d log channels drained, want 5 (admin, producer, consumer, the copier's two)", n)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && strings.Count(mu.String(), "Connection refused") < 3 {
		_, _ = c.Poll(context.Background(), 1, 100*time.Millisecond)
	}
	out := mu.String()
	for _, name := range []string{"producer-", "consumer-"} {
		if !strings.Contains(out, name) {
			t.Errorf("no librdkafka record of a %s client:\n%s", name, out)
		}
	}
	for time.Now().Before(deadline) && h.count() == 0 {
		time.Sleep(20 * time.Millisecond)
	}
	if h.count() == 0 {
		t.Errorf("the copier's handler got no librdkafka warning")
	}
	a.Close()
	p.Close()
	c.Close()
	cancel()
	cp.Close()
	for time.Now().Before(deadline) && drainsOf("logtest") != 0 {
		time.Sleep(10 * time.Millisecond)
	}
	if n := drainsOf("logtest"); n != 0 {
		t.Errorf("%d log channels still drained after Close", n)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type warnHandler struct {
	mu    sync.Mutex
	warns int
}

func (w *warnHandler) Acked(*CopyPart, int64, int64, int, int64) {}
func (w *warnHandler) AckedRun(*CopyPart, AckRun)                {}
func (w *warnHandler) Gap(*CopyPart, int64, int64)               {}
func (w *warnHandler) Warn(string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.warns++
}

func (w *warnHandler) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.warns
}
