package cmdutil

import (
	"net/url"
	"time"

	"github.com/kmmproject/kmm/pkg/kerr"
)

// Validator is the options struct of a command: flags are read into it first, and Validate
// returns a kerr.Usage error (exit 2) for any bad value or combination, before the command
// reads its file or connects to any cluster.
type Validator interface {
	Validate() error
}

// Usagef is a usage error (exit 2) with a hint saying what to do instead.
func Usagef(hint, format string, args ...any) error {
	err := kerr.New(kerr.Usage, format, args...)
	if hint != "" {
		err = kerr.WithHint(err, hint)
	}
	return err
}

// NonNegative refuses a negative number for --name.
func NonNegative(name string, v int64) error {
	if v < 0 {
		return Usagef("", "--%s must be 0 or more (0 = off), not %d", name, v)
	}
	return nil
}

// NonNegativeDuration refuses a negative duration for --name.
func NonNegativeDuration(name string, d time.Duration) error {
	if d < 0 {
		return Usagef("", "--%s must be 0 or more (0 = off), not %s", name, d)
	}
	return nil
}

// PositiveDuration refuses a zero or negative duration for --name.
func PositiveDuration(name string, d time.Duration) error {
	if d <= 0 {
		return Usagef("", "--%s must be more than 0, not %s", name, d)
	}
	return nil
}

// HTTPURL refuses what is not an http(s) URL with a host for --name.
func HTTPURL(name, s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Usagef("e.g. --"+name+" http://127.0.0.1:8083 (the address of kmm replicate --listen)", "--%s must be an http:// or https:// URL, not %q", name, s)
	}
	return nil
}
