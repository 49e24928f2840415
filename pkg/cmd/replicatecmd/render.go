package replicatecmd

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/replicator"
)

// renderer turns engine events into output: NDJSON on stdout with -o json; otherwise log lines
// on stderr, plus a one-line status redrawn in place when stderr is a terminal.
type renderer struct {
	mu     sync.Mutex
	json   *json.Encoder
	log    *slog.Logger
	errOut io.Writer
	tty    bool
	status map[string]replicator.Event // last progress per flow
	prev   map[string]replicator.Event
	drawn  bool
	now    func() time.Time // the factory's clock: the time on the status line
	// started counts flow_started events: an interrupt before the first is exit 130.
	started int
}

// anyStarted reports whether a flow has started.
func (r *renderer) anyStarted() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.started > 0
}

func newRenderer(out, errOut io.Writer, jsonOut, tty bool, log *slog.Logger) *renderer {
	r := &renderer{log: log, errOut: errOut, tty: tty && !jsonOut, status: map[string]replicator.Event{}, prev: map[string]replicator.Event{}, now: time.Now}
	if jsonOut {
		r.json = json.NewEncoder(out)
		r.json.SetEscapeHTML(false)
	}
	return r
}

// Emit implements replicator.Sink.
func (r *renderer) Emit(e replicator.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e.Type == replicator.EvStarted {
		r.started++
	}
	if r.json != nil {
		_ = r.json.Encode(e)
	}
	if e.Type == replicator.EvProgress {
		r.progress(e)
		return
	}
	r.clearLine()
	attrs := []any{"flow", e.Flow}
	if e.Cluster != "" {
		attrs = []any{"cluster", e.Cluster}
	}
	if e.Topic != "" {
		attrs = append(attrs, "topic", e.Topic)
	}
	if e.Partition != nil {
		attrs = append(attrs, "partition", *e.Partition)
	}
	switch e.Type {
	case replicator.EvWarning, replicator.EvClusterDown, replicator.EvClusterStillDown:
		r.log.Warn(e.Message, attrs...)
	case replicator.EvError, replicator.EvRetentionGap:
		if e.Type == replicator.EvRetentionGap {
			attrs = append(attrs, "lost_from", *e.From, "lost_to", *e.To, "lost_records", e.Count)
		}
		r.log.Error(e.Message, attrs...)
	case replicator.EvStarted:
		r.log.Info("flow started: "+e.Message, attrs...)
	case replicator.EvStopped:
		attrs = append(attrs, "records", e.Records, "bytes", e.Bytes)
		if e.Incomplete {
			r.log.Warn("flow stopped: "+e.Message, append(attrs, "undelivered_records", e.Undelivered)...)
		} else {
			r.log.Info("flow stopped: "+e.Message, attrs...)
		}
	case replicator.EvDraining:
		r.log.Info("draining: stopped fetching, waiting for the target to acknowledge, storing progress", attrs...)
	default:
		msg := e.Message
		if msg == "" {
			msg = string(e.Type)
		}
		r.log.Info(msg, attrs...)
	}
	r.redraw()
}

func (r *renderer) progress(e replicator.Event) {
	prev, had := r.status[e.Flow]
	r.prev[e.Flow] = prev
	r.status[e.Flow] = e
	if !r.tty {
		rate := 0.0
		if had {
			if dt := e.Time.Sub(prev.Time).Seconds(); dt > 0 {
				rate = float64(e.Records-prev.Records) / dt
			}
		}
		r.log.Info("progress", "flow", e.Flow, "records", e.Records, "bytes", e.Bytes, "records_per_sec", int64(rate), "retention_gap_records", e.Count)
		return
	}
	r.redraw()
}

func (r *renderer) clearLine() {
	if r.tty && r.drawn {
		fmt.Fprint(r.errOut, iostreams.EraseLine)
		r.drawn = false
	}
}

func (r *renderer) redraw() {
	if !r.tty || len(r.status) == 0 {
		return
	}
	line := ""
	for flow, e := range r.status {
		p := r.prev[flow]
		rate := 0.0
		if dt := e.Time.Sub(p.Time).Seconds(); dt > 0 && !p.Time.IsZero() {
			rate = float64(e.Records-p.Records) / dt
		}
		line += fmt.Sprintf("%s: %d records, %.1f MB, %.0f rec/s  ", flow, e.Records, float64(e.Bytes)/1e6, rate)
	}
	fmt.Fprintf(r.errOut, "%s%s(%s)", iostreams.EraseLine, line, r.now().Format("15:04:05"))
	r.drawn = true
}

// finish ends the status line.
func (r *renderer) finish() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tty && r.drawn {
		fmt.Fprintln(r.errOut)
		r.drawn = false
	}
}
