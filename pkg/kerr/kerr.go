// Package kerr defines kmm's typed errors. Every command returns these kinds; pkg/app alone maps
// them to process exit codes. kerr must not print or exit.
package kerr

import (
	"errors"
	"fmt"
)

// Kind classifies an error for the exit-code table.
type Kind int

const (
	// Failure is a runtime failure (exit 1). The zero value, so plain errors are failures.
	Failure Kind = iota
	// Usage is a usage or configuration error found before any network I/O (exit 2).
	Usage
	// CheckFailed is a check that ran and did not pass (exit 3).
	CheckFailed
	// Unreachable is a cluster that cannot be reached or refused authentication/TLS (exit 4).
	Unreachable
	// Interrupted is a run ended by SIGINT/SIGTERM before it finished (exit 130).
	Interrupted
	// Incomplete is a run stopped on request within its time bound before all its work was
	// delivered: `replicate` after SIGINT/SIGTERM with records the target never acknowledged.
	// Nothing is lost (they are copied again on restart), but the stop was not clean (exit 5).
	Incomplete
)

func (k Kind) String() string {
	switch k {
	case Usage:
		return "usage"
	case CheckFailed:
		return "check failed"
	case Unreachable:
		return "unreachable"
	case Interrupted:
		return "interrupted"
	case Incomplete:
		return "incomplete"
	default:
		return "failure"
	}
}

// Error is an error with a kind and an optional hint telling the user what to do next.
type Error struct {
	Kind Kind
	Err  error
	Hint string
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// New returns an error of kind k.
func New(k Kind, format string, args ...any) error {
	return &Error{Kind: k, Err: fmt.Errorf(format, args...)}
}

// Wrap gives err the kind k (nil stays nil).
func Wrap(k Kind, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: k, Err: err}
}

// WithHint returns err with a hint line attached, keeping its kind.
func WithHint(err error, hint string) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: KindOf(err), Err: err, Hint: hint}
}

// KindOf returns the kind of the outermost typed error in err's chain, or Failure.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Failure
}

// HintOf returns the first hint found in err's chain.
func HintOf(err error) string {
	for err != nil {
		var e *Error
		if !errors.As(err, &e) {
			return ""
		}
		if e.Hint != "" {
			return e.Hint
		}
		err = e.Err
	}
	return ""
}
