package iostreams

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Progress reports a long scan or wait (failover drains, verify scans, `lag --watch`). On a
// terminal (stderr) it is a bar drawn by schollz/progressbar; otherwise it is plain log lines,
// at most one per LogEvery plus one at the end, through the logger given (so --log-format json
// gives JSON). Progress never writes to stdout.
type Progress struct {
	mu       sync.Mutex
	what     string
	total    int64 // < 0: unknown
	done     int64
	bar      *progressbar.ProgressBar
	log      *slog.Logger
	w        io.Writer
	lastLog  time.Time
	finished bool
	now      func() time.Time
	// LogEvery is the least time between two plain log lines (default 10s).
	LogEvery time.Duration
}

// NewProgress starts reporting the progress of what (e.g. "draining A->B") toward total units
// (records, partitions; total < 0 when unknown). log may be nil: plain lines then go to
// stderr as "kmm: what: n/total".
func (s *IOStreams) NewProgress(what string, total int64, log *slog.Logger) *Progress {
	p := &Progress{what: what, total: total, log: log, w: s.ErrOut, now: time.Now, LogEvery: 10 * time.Second}
	if s.errTTY {
		max := total
		if max < 0 {
			max = -1 // spinner
		}
		p.bar = progressbar.NewOptions64(max,
			progressbar.OptionSetWriter(s.ErrOut),
			progressbar.OptionSetDescription(what),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetRenderBlankState(true),
			progressbar.OptionEnableColorCodes(false),
			progressbar.OptionSetPredictTime(total > 0),
		)
	} else {
		p.logLine(false)
		p.lastLog = p.now()
	}
	return p
}

// Add advances the progress by n units.
func (p *Progress) Add(n int64) { p.Set(p.current() + n) }

func (p *Progress) current() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.done
}

// Set moves the progress to n units done.
func (p *Progress) Set(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.finished {
		return
	}
	p.done = n
	if p.bar != nil {
		_ = p.bar.Set64(n)
		return
	}
	if now := p.now(); now.Sub(p.lastLog) >= p.LogEvery {
		p.logLine(false)
		p.lastLog = now
	}
}

// Done ends the report: the bar is cleared from the terminal; a final log line otherwise.
func (p *Progress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.finished {
		return
	}
	p.finished = true
	if p.bar != nil {
		_ = p.bar.Finish()
		_ = p.bar.Exit()
		return
	}
	p.logLine(true)
}

func (p *Progress) logLine(final bool) {
	state := "progress"
	if final {
		state = "done"
	}
	if p.log != nil {
		args := []any{"what", p.what, "done", p.done}
		if p.total >= 0 {
			args = append(args, "total", p.total)
		}
		p.log.Info(state, args...)
		return
	}
	switch {
	case p.total > 0:
		fmt.Fprintf(p.w, "kmm: %s: %d/%d (%d%%)%s\n", p.what, p.done, p.total, p.done*100/p.total, map[bool]string{true: " done"}[final])
	default:
		fmt.Fprintf(p.w, "kmm: %s: %d%s\n", p.what, p.done, map[bool]string{true: " done"}[final])
	}
}

// Wait waits d or until ctx ends (then it returns ctx.Err()). On a terminal it counts the wait
// down in a bar labelled what; otherwise it waits silently (the caller logs what matters).
func (s *IOStreams) Wait(ctx context.Context, d time.Duration, what string) error {
	if !s.errTTY || d < time.Second {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return nil
		}
	}
	bar := progressbar.NewOptions64(int64(d/time.Second),
		progressbar.OptionSetWriter(s.ErrOut),
		progressbar.OptionSetDescription(what),
		progressbar.OptionSetWidth(20),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetPredictTime(false),
		progressbar.OptionSetElapsedTime(false),
	)
	defer func() { _ = bar.Exit() }()
	start := time.Now()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			el := time.Since(start)
			if el >= d {
				_ = bar.Finish()
				return nil
			}
			_ = bar.Set64(int64(el / time.Second))
		}
	}
}
