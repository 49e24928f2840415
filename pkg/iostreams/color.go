package iostreams

import (
	"github.com/fatih/color"
)

// This file is the only place in kmm that knows terminal escape sequences: colour goes through
// fatih/color with the decision taken here, and the few cursor controls kmm uses are the
// constants below. A test fails when an escape literal appears anywhere else.

// Terminal control sequences (write them only when the stream is a terminal).
const (
	// EraseLine returns the cursor to column 0 and clears the line (one-line status).
	EraseLine = "\r\x1b[K"
	// ClearScreen moves the cursor home and clears the screen (`lag --watch` redraw).
	ClearScreen = "\x1b[H\x1b[2J"
)

// Palette colours kmm's states and emphasis. Every command takes its colours from here, so OK
// is always green and DOWN always red. With colour off every method returns its input, so a
// palette can be used unconditionally. Colour is never the only signal: the words stay.
type Palette struct {
	enabled bool
}

// NewPalette returns a palette that colours (enabled) or passes text through.
func NewPalette(enabled bool) Palette { return Palette{enabled: enabled} }

// Enabled reports whether this palette colours.
func (p Palette) Enabled() bool { return p.enabled }

func (p Palette) paint(s string, attrs ...color.Attribute) string {
	if !p.enabled {
		return s
	}
	c := color.New(attrs...)
	c.EnableColor() // per colour, never the package-wide color.NoColor
	return c.Sprint(s)
}

// OK is a healthy state (green).
func (p Palette) OK(s string) string { return p.paint(s, color.FgGreen) }

// Warn is a warning (yellow).
func (p Palette) Warn(s string) string { return p.paint(s, color.FgYellow) }

// Degraded is a flow that runs but not well (yellow).
func (p Palette) Degraded(s string) string { return p.paint(s, color.FgYellow) }

// Fail is a failed check or step (red).
func (p Palette) Fail(s string) string { return p.paint(s, color.FgRed) }

// Down is a flow or cluster that does not work at all (red).
func (p Palette) Down(s string) string { return p.paint(s, color.FgRed) }

// Bold emphasises (headings, the action a plan takes).
func (p Palette) Bold(s string) string { return p.paint(s, color.Bold) }

// Faint de-emphasises (defaults, skipped steps).
func (p Palette) Faint(s string) string { return p.paint(s, color.Faint) }

// State colours a state word by its meaning: OK, WARN/WARNING/DEGRADED/SKIPPED, FAIL/FAILED/
// ERROR, DOWN/UNREACHABLE; anything else is returned as is.
func (p Palette) State(s string) string {
	switch s {
	case "OK", "ok", "PASS", "DONE":
		return p.OK(s)
	case "WARN", "WARNING", "warning", "SKIPPED":
		return p.Warn(s)
	case "DEGRADED":
		return p.Degraded(s)
	case "FAIL", "FAILED", "ERROR", "error", "MISMATCH":
		return p.Fail(s)
	case "DOWN", "UNREACHABLE":
		return p.Down(s)
	}
	return s
}
