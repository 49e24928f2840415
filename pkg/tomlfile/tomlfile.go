// Package tomlfile reads kmm's own TOML files (failover drills, plans, verify specs) strictly
// with BurntSushi/toml: a syntax or type error and every key the target struct does not have
// are usage errors (exit 2) naming file:line, so a typo in a drill never passes silently. It
// reads files and returns values; it must not print or talk to Kafka.
package tomlfile

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/kmmproject/kmm/pkg/kerr"
)

var typeErr = regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]*)"\): (.*)$`)

// MaxSize is the largest TOML file read (drills and plans are a few kilobytes).
const MaxSize = 1 << 20

// DecodeFile reads path into v (a pointer to a struct with `toml:"..."` tags).
func DecodeFile(path string, v any) error {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return kerr.New(kerr.Usage, "%s does not exist", path)
		}
		return kerr.Wrap(kerr.Usage, err)
	}
	if !st.Mode().IsRegular() {
		return kerr.New(kerr.Usage, "%s is not a regular file", path)
	}
	if st.Size() > MaxSize {
		return kerr.New(kerr.Usage, "%s is %d bytes, over the limit of %d", path, st.Size(), MaxSize)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return kerr.Wrap(kerr.Usage, err)
	}
	return Decode(path, string(b), v)
}

// Decode is DecodeFile on text already read; name labels errors.
func Decode(name, text string, v any) error {
	md, err := toml.Decode(text, v)
	if err != nil {
		var pe toml.ParseError
		var ppe *toml.ParseError
		if errors.As(err, &ppe) {
			pe = *ppe
		}
		if ppe != nil || errors.As(err, &pe) {
			msg := pe.Message
			if pe.LastKey != "" {
				msg = fmt.Sprintf("%s: %s", pe.LastKey, pe.Message)
			}
			return kerr.WithHint(kerr.New(kerr.Usage, "%s:%d: %s", name, pe.Position.Line, msg), "see https://toml.io for the syntax")
		}
		// Type mismatches come as "toml: line N (last key "k"): message".
		if m := typeErr.FindStringSubmatch(err.Error()); m != nil {
			return kerr.New(kerr.Usage, "%s:%s: %s: %s", name, m[1], m[2], m[3])
		}
		return kerr.Wrap(kerr.Usage, fmt.Errorf("%s: %w", name, err))
	}
	if und := md.Undecoded(); len(und) > 0 {
		var lines []string
		for _, k := range und {
			if isInsideUndecoded(k, und) {
				continue // report the unknown table once, not each of its keys
			}
			lines = append(lines, fmt.Sprintf("%s:%d: unknown key %q", name, keyLine(text, k), k.String()))
		}
		return kerr.WithHint(kerr.New(kerr.Usage, "%s", strings.Join(lines, "\n")), "check the spelling against the documented keys; kmm refuses keys it would ignore")
	}
	return nil
}

// isInsideUndecoded reports whether k lies under another undecoded key (a whole unknown table).
func isInsideUndecoded(k toml.Key, all []toml.Key) bool {
	for _, o := range all {
		if len(o) < len(k) && strings.HasPrefix(k.String()+".", o.String()+".") {
			return true
		}
	}
	return false
}

// keyLine finds the line that defines k: a [table] or [[array]] header equal to k, or a
// `key = value` line whose table prefix plus (dotted) key equals k. 0 when not found.
func keyLine(text string, k toml.Key) int {
	want := normKey(k.String())
	table := ""
	for i, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
			continue
		case strings.HasPrefix(line, "[["):
			table = normKey(strings.TrimSpace(strings.TrimSuffix(strings.SplitN(strings.TrimPrefix(line, "[["), "]]", 2)[0], "]]")))
			if table == want {
				return i + 1
			}
		case strings.HasPrefix(line, "["):
			table = normKey(strings.TrimSpace(strings.SplitN(strings.TrimPrefix(line, "["), "]", 2)[0]))
			if table == want {
				return i + 1
			}
		default:
			eq := strings.IndexByte(line, '=')
			if eq < 0 {
				continue
			}
			key := normKey(line[:eq])
			if table != "" {
				key = table + "." + key
			}
			if key == want || strings.HasPrefix(want, key+".") {
				return i + 1
			}
		}
	}
	return 0
}

// normKey drops blanks around dots and the quotes of quoted keys.
func normKey(s string) string {
	parts := strings.Split(s, ".")
	for i, p := range parts {
		parts[i] = strings.Trim(strings.TrimSpace(p), `"'`)
	}
	return strings.Join(parts, ".")
}
