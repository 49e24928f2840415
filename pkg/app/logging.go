package app

import (
	"io"
	"log/slog"

	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// logging is the process logger: --log-level and --log-format over the error stream, built on
// first use. Commands get it through cmdutil.Factory.Logger; there are no package-level globals.
type logging struct {
	IO        *iostreams.IOStreams
	LogLevel  string
	LogFormat string
	logger    *slog.Logger
}

func (f *logging) validate() error {
	if _, err := parseLevel(f.LogLevel); err != nil {
		return err
	}
	if f.LogFormat != "text" && f.LogFormat != "json" {
		return kerr.New(kerr.Usage, "--log-format must be text or json, not %q", f.LogFormat)
	}
	return nil
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, kerr.New(kerr.Usage, "--log-level must be debug, info, warn or error, not %q", s)
	}
	return l, nil
}

// Logger returns the process logger (stderr, slog).
func (f *logging) Logger() *slog.Logger {
	if f.logger != nil {
		return f.logger
	}
	lvl, _ := parseLevel(f.LogLevel)
	var w io.Writer = f.IO.ErrOut
	opts := &slog.HandlerOptions{Level: lvl}
	if ll, ok := w.(*iostreams.LogLines); ok {
		f.logger = ll.Logger()
	} else if f.LogFormat == "json" {
		f.logger = slog.New(slog.NewJSONHandler(w, opts))
	} else {
		f.logger = slog.New(slog.NewTextHandler(w, opts))
	}
	return f.logger
}

// setup makes stderr carry JSON records only with --log-format json when stderr is not a
// terminal (where a person reads it and a prompt needs a line without its end): the lines
// commands print there ("kmm: ...", errors) become records too. It also hands the logger to
// pkg/rdkafka for librdkafka's own log lines of every client.
func (f *logging) setup() {
	if f.LogFormat == "json" && !f.IO.IsStderrTTY() {
		if _, done := f.IO.ErrOut.(*iostreams.LogLines); !done {
			lvl, _ := parseLevel(f.LogLevel)
			f.IO.ErrOut = iostreams.NewLogLines(f.IO.ErrOut, &slog.HandlerOptions{Level: lvl})
			f.logger = nil
		}
	}
	rdkafka.SetLogger(f.Logger())
}
