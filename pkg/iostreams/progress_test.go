package iostreams

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestProgressPlainLinesWhenPiped(t *testing.T) {
	s, _, out, errOut := Test()
	p := s.NewProgress("draining A->B", 200, nil)
	clock := time.Unix(0, 0)
	p.now = func() time.Time { return clock }
	p.lastLog = clock
	p.Set(50) // within LogEvery: no line
	clock = clock.Add(11 * time.Second)
	p.Add(50) // a line at 100/200
	p.Set(200)
	p.Done()
	p.Done() // twice is harmless
	want := "kmm: draining A->B: 0/200 (0%)\nkmm: draining A->B: 100/200 (50%)\nkmm: draining A->B: 200/200 (100%) done\n"
	if errOut.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", errOut, want)
	}
	if out.Len() != 0 {
		t.Errorf("progress wrote to stdout: %q", out)
	}
}

func TestProgressThroughLogger(t *testing.T) {
	s, _, _, errOut := Test()
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	p := s.NewProgress("verify A->B", -1, log)
	p.Add(7)
	p.Done()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || errOut.Len() != 0 {
		t.Fatalf("log %q, stderr %q", buf.String(), errOut)
	}
	var last map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &last); err != nil || last["msg"] != "done" || last["done"] != 7.0 || last["what"] != "verify A->B" {
		t.Errorf("last line %q (%v)", lines[1], err)
	}
}

func TestProgressBarOnTerminal(t *testing.T) {
	s, _, out, errOut := Test()
	s.SetTTY(false, false, true)
	p := s.NewProgress("scanning", 10, nil)
	time.Sleep(150 * time.Millisecond) // past the bar's redraw throttle
	p.Set(5)
	drawn := errOut.String()
	p.Done()
	if !strings.Contains(drawn, "scanning") || !strings.Contains(drawn, "5/10") {
		t.Errorf("no bar on the terminal: %q", drawn)
	}
	if strings.Contains(errOut.String(), "kmm: scanning") || out.Len() != 0 {
		t.Errorf("plain lines or stdout on a terminal: %q / %q", errOut, out)
	}
}

func TestWaitEndsWithContext(t *testing.T) {
	for _, tty := range []bool{false, true} {
		s, _, _, _ := Test()
		s.SetTTY(false, false, tty)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		start := time.Now()
		err := s.Wait(ctx, time.Minute, "next refresh")
		cancel()
		if err == nil || time.Since(start) > 2*time.Second {
			t.Errorf("tty=%v: Wait returned %v after %s", tty, err, time.Since(start))
		}
	}
}
