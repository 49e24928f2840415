// Package iostreams carries the process's standard streams and decides once whether output is a
// terminal and whether to use colour. Tests use Test() for in-memory streams. It must not read
// flags or configuration files.
package iostreams

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/mattn/go-isatty"
	"golang.org/x/term"
)

// DefaultWidth is the width text is fitted to when neither COLUMNS nor a terminal says.
const DefaultWidth = 100

// IOStreams are the streams a command reads and writes.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer // results only
	ErrOut io.Writer // logs, progress, warnings, prompts, errors

	outTTY, errTTY, inTTY bool
	colorMode             string // auto|always|never
	getenv                func(string) string
	// termWidth is stdout's terminal width (0: not a terminal, or unknown).
	termWidth int
}

// System returns streams bound to the process's stdin, stdout and stderr.
func System() *IOStreams {
	s := &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		outTTY: isTerminal(os.Stdout), errTTY: isTerminal(os.Stderr), inTTY: isTerminal(os.Stdin),
		colorMode: "auto", getenv: os.Getenv,
	}
	if s.outTTY {
		if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil && w > 0 {
			s.termWidth = w
		}
	}
	return s
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

// Width is the number of columns text on stdout should fit (help, config explain): COLUMNS when
// set to a number, else the terminal's width, else DefaultWidth (piped, redirected, tests).
func (s *IOStreams) Width() int {
	if s.getenv != nil {
		if n, err := strconv.Atoi(strings.TrimSpace(s.getenv("COLUMNS"))); err == nil && n > 0 {
			return n
		}
	}
	if s.termWidth > 0 {
		return s.termWidth
	}
	return DefaultWidth
}

// SetColorMode sets auto, always or never.
func (s *IOStreams) SetColorMode(m string) { s.colorMode = m }

// SetEnv replaces the environment lookup (tests: NO_COLOR, TERM).
func (s *IOStreams) SetEnv(getenv func(string) string) { s.getenv = getenv }

// ColorEnabled decides colour for stdout, in one place: --color always/never win; otherwise
// off for NO_COLOR (any value) and TERM=dumb, on when stdout is a terminal.
func (s *IOStreams) ColorEnabled() bool { return s.colorFor(s.outTTY) }

// ColorEnabledStderr is ColorEnabled for what goes to stderr (progress, prompts, warnings).
func (s *IOStreams) ColorEnabledStderr() bool { return s.colorFor(s.errTTY) }

func (s *IOStreams) colorFor(tty bool) bool {
	switch s.colorMode {
	case "always":
		return true
	case "never":
		return false
	}
	if s.getenv != nil && (s.getenv("NO_COLOR") != "" || s.getenv("TERM") == "dumb") {
		return false
	}
	return tty
}

// Palette returns the colours for stdout (plain text when colour is off).
func (s *IOStreams) Palette() Palette { return NewPalette(s.ColorEnabled()) }

// ErrPalette returns the colours for stderr.
func (s *IOStreams) ErrPalette() Palette { return NewPalette(s.ColorEnabledStderr()) }
