package cmdutil

import (
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/kmmproject/kmm/pkg/kerr"
)

// Validator is the options struct of a command: flags are read into it first, and Validate
// returns a kerr.Usage error (exit 2) for any bad value or combination, before the command
// reads its file or connects to any cluster.
type Validator interface {
	Validate() error
}

// Validate runs o.Validate and makes whatever it returns a usage error (exit 2); several
// problems are reported together, one per line.
func Validate(o Validator) error {
	err := o.Validate()
	if err == nil {
		return nil
	}
	if kerr.KindOf(err) == kerr.Usage {
		return err
	}
	return kerr.Wrap(kerr.Usage, err)
}

// OneOf refuses a value of --name that is not one of choices.
func OneOf(name, v string, choices ...string) error {
	for _, c := range choices {
		if v == c {
			return nil
		}
	}
	flag := "--" + name
	if name == "output" {
		flag = "-o"
	}
	return Usagef("", "%s must be %s, not %q", flag, strings.Join(choices, " or "), v)
}

// Exclusive refuses two flags given together.
func Exclusive(a string, aSet bool, b string, bSet bool, hint string) error {
	if aSet && bSet {
		return Usagef(hint, "--%s and --%s do not go together", a, b)
	}
	return nil
}

// Requires refuses --name (set) without --needed.
func Requires(name string, set bool, needed string, neededSet bool) error {
	if set && !neededSet {
		return Usagef("", "--%s only goes with --%s", name, needed)
	}
	return nil
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
		return Usagef("", "--%s must be 0 or more, not %d", name, v)
	}
	return nil
}

// NonNegativeDuration refuses a negative duration for --name.
func NonNegativeDuration(name string, d time.Duration) error {
	if d < 0 {
		return Usagef("", "--%s must be 0 or more, not %s", name, d)
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

// OptionalHTTPURL is HTTPURL when s is set.
func OptionalHTTPURL(name, s string) error {
	if s == "" {
		return nil
	}
	return HTTPURL(name, s)
}

// HTTPURL refuses what is not an http(s) URL with a host for --name.
func HTTPURL(name, s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Usagef("e.g. --"+name+" http://127.0.0.1:8083 (the address of kmm replicate --listen)", "--%s must be an http:// or https:// URL, not %q", name, s)
	}
	return nil
}

// byteUnits are the units ByteRate accepts (case-insensitive), after a number.
var byteUnits = []struct {
	suffix string
	mult   float64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"k", 1e3}, {"m", 1e6}, {"g", 1e9}, {"b", 1},
}

// ByteRate parses --name's value, bytes per second with an optional unit: 2000000, 10MB or 10M
// (10^6), 10MiB (2^20), 512KiB, 1.5GB, and an optional "/s". "" is unset (-1).
func ByteRate(name, s string) (int64, error) {
	if s == "" {
		return -1, nil
	}
	t := strings.ToLower(strings.TrimSpace(s))
	t = strings.TrimSuffix(t, "/s")
	mult := 1.0
	for _, u := range byteUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) || v*mult > math.MaxInt64/2 {
		return 0, Usagef("write bytes per second with an optional unit: 2000000, 10MB (10^6), 10MiB (2^20), 512KiB; 0 for no limit",
			"--%s %q is not a rate", name, s)
	}
	return int64(math.Round(v * mult)), nil
}

// FormatBytes writes n bytes with a decimal unit and at most two decimals: 512 B, 1.5 kB,
// 2 MB, 10.49 GB.
func FormatBytes(n int64) string {
	v, units := float64(n), []string{"B", "kB", "MB", "GB", "TB"}
	i := 0
	for v >= 1000 && i < len(units)-1 {
		v /= 1000
		i++
	}
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) + " " + units[i]
}
