package iostreams

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"sync"
)

// LogLines is a stderr that carries log records only (--log-format json): every line written
// to it that is not already a JSON object becomes one record of log, so that a machine reading
// stderr never meets a line it cannot parse. A leading "kmm: " is dropped; "kmm: error: " makes
// an error record, "kmm: warning: " a warning, anything else an info record.
type LogLines struct {
	raw io.Writer
	log *slog.Logger
	mu  sync.Mutex
	buf []byte
}

// NewLogLines returns a LogLines writing JSON records to raw (the real stderr) with opts (the
// level). Its Logger writes to raw directly.
func NewLogLines(raw io.Writer, opts *slog.HandlerOptions) *LogLines {
	return &LogLines{raw: raw, log: slog.New(slog.NewJSONHandler(raw, opts))}
}

// Logger is the process logger: JSON records on the real stderr.
func (l *LogLines) Logger() *slog.Logger { return l.log }

// Write implements io.Writer: complete lines become records; a partial line waits for its end
// (or Flush), except a confirmation question ("... [y/N] "), which is a record at once.
func (l *LogLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		line := string(l.buf[:i])
		l.buf = l.buf[i+1:]
		l.line(line)
	}
	// A question waits for its answer without a line end: it is a record at once.
	if bytes.HasSuffix(l.buf, []byte("[y/N] ")) {
		l.line(string(l.buf))
		l.buf = nil
	}
	if len(l.buf) == 0 {
		l.buf = nil
	}
	return len(p), nil
}

// Flush writes a partial line still waiting for its end as a record.
func (l *LogLines) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) > 0 {
		l.line(string(l.buf))
		l.buf = nil
	}
}

var positioned = regexp.MustCompile(`^\S+: (error|warning): `)

func (l *LogLines) line(s string) {
	s = strings.TrimRight(s, "\r")
	// Terminal control sequences (erase line) have no place in a record.
	s = strings.ReplaceAll(s, EraseLine, "")
	if strings.TrimSpace(s) == "" {
		return
	}
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "{") && json.Valid([]byte(t)) {
		_, _ = io.WriteString(l.raw, t+"\n") // a record already
		return
	}
	lvl := slog.LevelInfo
	msg := strings.TrimPrefix(strings.TrimSpace(s), "kmm: ")
	switch {
	case strings.HasPrefix(msg, "error: "):
		lvl, msg = slog.LevelError, strings.TrimPrefix(msg, "error: ")
	case strings.HasPrefix(msg, "warning: "):
		lvl, msg = slog.LevelWarn, strings.TrimPrefix(msg, "warning: ")
	default:
		// A diagnostic with its position keeps it: "mm2.properties:5: warning: ...".
		if m := positioned.FindStringSubmatch(msg); m != nil {
			lvl = slog.LevelWarn
			if m[1] == "error" {
				lvl = slog.LevelError
			}
		}
	}
	l.log.Log(context.Background(), lvl, msg)
}
