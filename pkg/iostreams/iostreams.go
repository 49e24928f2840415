// Package iostreams carries the process's standard streams and decides once whether output is a
// terminal and whether to use colour. Tests use Test() for in-memory streams. It must not read
// flags or configuration files.
package iostreams

import (
	"bytes"
	"io"
	"os"

	"github.com/mattn/go-isatty"
)

// IOStreams are the streams a command reads and writes.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer // results only
	ErrOut io.Writer // logs, progress, warnings, prompts, errors

	outTTY, errTTY, inTTY bool
	colorMode             string // auto|always|never
	getenv                func(string) string
}

// System returns streams bound to the process's stdin, stdout and stderr.
func System() *IOStreams {
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		outTTY: isTerminal(os.Stdout), errTTY: isTerminal(os.Stderr), inTTY: isTerminal(os.Stdin),
		colorMode: "auto", getenv: os.Getenv,
	}
}

// Test returns in-memory streams and the buffers behind them.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut, colorMode: "never", getenv: func(string) string { return "" }}, in, out, errOut
}

func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// SetTTY overrides terminal detection (tests).
func (s *IOStreams) SetTTY(in, out, errOut bool) { s.inTTY, s.outTTY, s.errTTY = in, out, errOut }

// IsStdoutTTY reports whether stdout is a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.outTTY }

// IsStderrTTY reports whether stderr is a terminal.
func (s *IOStreams) IsStderrTTY() bool { return s.errTTY }

// IsStdinTTY reports whether stdin is a terminal (prompts are possible).
func (s *IOStreams) IsStdinTTY() bool { return s.inTTY }

// SetColorMode sets auto, always or never.
func (s *IOStreams) SetColorMode(m string) { s.colorMode = m }

// ColorEnabled decides colour once: --color, NO_COLOR, then TTY detection.
func (s *IOStreams) ColorEnabled() bool {
	switch s.colorMode {
	case "always":
		return true
	case "never":
		return false
	}
	if s.getenv != nil && s.getenv("NO_COLOR") != "" {
		return false
	}
	return s.outTTY
}
