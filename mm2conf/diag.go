package mm2conf

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Severity of a diagnostic.
type Severity int

const (
	// SeverityWarning: kmm honours the file, but something is probably not
	// what the author meant (or MM2 itself ignores it).
	SeverityWarning Severity = iota
	// SeverityError: kmm cannot honour the file; nothing may run.
	SeverityError
)

func (s Severity) String() string {
	if s == SeverityError {
		return "error"
	}
	return "warning"
}

// MarshalText renders the severity as "warning" or "error".
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Diagnostic is one finding about the configuration, tied to the file:line
// that caused it whenever there is one.
type Diagnostic struct {
	Severity Severity `json:"severity"`
	// Code is a stable identifier of the kind of finding, e.g. "unknown-key".
	Code string `json:"code"`
	Pos  Pos    `json:"-"`
	// Key is the property key as written in the file, when relevant.
	Key  string `json:"key,omitempty"`
	Msg  string `json:"message"`
	Hint string `json:"hint,omitempty"`
}

// String renders "file:line: warning: msg" (no hint).
func (d Diagnostic) String() string {
	var b strings.Builder
	if p := d.Pos.String(); p != "" {
		b.WriteString(p)
		b.WriteString(": ")
	}
	b.WriteString(d.Severity.String())
	b.WriteString(": ")
	b.WriteString(d.Msg)
	return b.String()
}

// Diagnostics is a list of findings.
type Diagnostics []Diagnostic

// HasErrors reports whether any diagnostic is an error.
func (ds Diagnostics) HasErrors() bool {
	for _, d := range ds {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Errors returns only the error diagnostics.
func (ds Diagnostics) Errors() Diagnostics {
	var out Diagnostics
	for _, d := range ds {
		if d.Severity == SeverityError {
			out = append(out, d)
		}
	}
	return out
}

// Sort orders diagnostics by file, line, severity (errors first), then
// message, and drops exact duplicates.
func (ds Diagnostics) Sort() Diagnostics {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		if a.Pos != b.Pos {
			// Diagnostics without a position go last.
			if a.Pos.IsZero() != b.Pos.IsZero() {
				return !a.Pos.IsZero()
			}
			return a.Pos.Less(b.Pos)
		}
		if a.Severity != b.Severity {
			return a.Severity > b.Severity
		}
		if a.Msg != b.Msg {
			return a.Msg < b.Msg
		}
		return a.Key < b.Key
	})
	out := ds[:0]
	for i, d := range ds {
		if i > 0 && d == ds[i-1] {
			continue
		}
		out = append(out, d)
	}
	return out
}

// ConfigError is returned by Load when the configuration has at least one
// error diagnostic. It carries all diagnostics (warnings too).
type ConfigError struct {
	Diagnostics Diagnostics
}

func (e *ConfigError) Error() string {
	errs := e.Diagnostics.Errors()
	if len(errs) == 0 {
		return "invalid MM2 configuration"
	}
	var b strings.Builder
	b.WriteString(errs[0].String())
	if len(errs) > 1 {
		fmt.Fprintf(&b, " (and %d more error(s))", len(errs)-1)
	}
	return b.String()
}

// AsConfigError extracts a *ConfigError from err.
func AsConfigError(err error) (*ConfigError, bool) {
	var ce *ConfigError
	ok := errors.As(err, &ce)
	return ce, ok
}

// diagSink collects diagnostics during a load.
type diagSink struct {
	list Diagnostics
}

func (s *diagSink) add(d Diagnostic) { s.list = append(s.list, d) }

// hasErrorAt reports whether an error about key at pos was reported.
func (s *diagSink) hasErrorAt(pos Pos, key string) bool {
	for _, d := range s.list {
		if d.Severity == SeverityError && d.Pos == pos && d.Key == key {
			return true
		}
	}
	return false
}

func (s *diagSink) warn(code string, pos Pos, key, msg, hint string) {
	s.add(Diagnostic{Severity: SeverityWarning, Code: code, Pos: pos, Key: key, Msg: msg, Hint: hint})
}

func (s *diagSink) err(code string, pos Pos, key, msg, hint string) {
	s.add(Diagnostic{Severity: SeverityError, Code: code, Pos: pos, Key: key, Msg: msg, Hint: hint})
}
