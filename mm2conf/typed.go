package mm2conf

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// javaTrim is String.trim(): it strips every character <= U+0020 at both ends.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// listSplit is ConfigDef's COMMA_WITH_WHITESPACE, "\\s*,\\s*" (Java \s is
// [ \t\n\x0B\f\r]).
var listSplit = regexp.MustCompile(`[ \t\n\x0B\f\r]*,[ \t\n\x0B\f\r]*`)

// ParseList parses a LIST value as ConfigDef does: trim, then an empty
// string is the empty list, otherwise split on \s*,\s* keeping empty
// elements (split(..., -1)).
func ParseList(v string) []string {
	t := javaTrim(v)
	if t == "" {
		return []string{}
	}
	return listSplit.Split(t, -1)
}

// ParseBool parses a BOOLEAN value as ConfigDef does: trimmed,
// case-insensitive "true" or "false"; anything else is an error.
func ParseBool(v string) (bool, error) {
	t := javaTrim(v)
	switch {
	case strings.EqualFold(t, "true"):
		return true, nil
	case strings.EqualFold(t, "false"):
		return false, nil
	}
	return false, fmt.Errorf("Expected value to be either true or false")
}

// JavaParseBoolean is Boolean.parseBoolean: true iff the raw, untrimmed
// string equals "true" ignoring case. MM2 uses it for A->B.enabled and
// emit.heartbeats.enabled when it decides which herders exist.
func JavaParseBoolean(v string) bool { return strings.EqualFold(v, "true") }

func parseJavaInt(v string, bits int, typ string) (int64, error) {
	t := javaTrim(v)
	// Integer.parseInt accepts an optional sign and decimal digits only.
	ok := t != ""
	for i, r := range t {
		if (r == '+' || r == '-') && i == 0 && len(t) > 1 {
			continue
		}
		if r < '0' || r > '9' {
			ok = false
			break
		}
	}
	if !ok {
		return 0, fmt.Errorf("Not a number of type %s", typ)
	}
	n, err := strconv.ParseInt(t, 10, bits)
	if err != nil {
		return 0, fmt.Errorf("Not a number of type %s", typ)
	}
	return n, nil
}

// ParseInt parses an INT value (trimmed, 32-bit).
func ParseInt(v string) (int32, error) {
	n, err := parseJavaInt(v, 32, "INT")
	return int32(n), err
}

// ParseLong parses a LONG value (trimmed, 64-bit).
func ParseLong(v string) (int64, error) { return parseJavaInt(v, 64, "LONG") }

// ParseShort parses a SHORT value (trimmed, 16-bit).
func ParseShort(v string) (int16, error) {
	n, err := parseJavaInt(v, 16, "SHORT")
	return int16(n), err
}

// ParseDouble parses a DOUBLE value (trimmed).
func ParseDouble(v string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSuffix(javaTrim(v), "d"), "D"), 64)
	if err != nil || math.IsNaN(f) && !strings.Contains(v, "NaN") {
		return 0, fmt.Errorf("Not a number of type DOUBLE")
	}
	return f, nil
}

// checkTyped validates v against a ConfigDef type the way ConfigDef.parseType
// does and returns Kafka's error text (without the "Invalid value" prefix).
func checkTyped(typ, v string) error {
	var err error
	switch typ {
	case "BOOLEAN":
		_, err = ParseBool(v)
	case "INT":
		_, err = ParseInt(v)
	case "LONG":
		_, err = ParseLong(v)
	case "SHORT":
		_, err = ParseShort(v)
	case "DOUBLE":
		_, err = ParseDouble(v)
	}
	return err
}

// typedError formats Kafka's ConfigException text.
func typedError(key, v string, err error) string {
	return fmt.Sprintf("Invalid value %s for configuration %s: %v", javaTrim(v), key, err)
}
