package mm2conf

import (
	"strings"
	"testing"
)

// FuzzLexer: ParseProperties never panics, reports positions inside the
// input, and Parse(Serialize(entries)) gives back the same keys and values.
func FuzzLexer(f *testing.F) {
	for _, s := range []string{
		"a=b", "a = b \\\n  c", "# c\n! d\nk:v", "k\\ ey=v\\u0041", "\\u12", "a=\\\r\n b", "\xef\xbb\xbfclusters=A",
		"clusters = A, B\nA->B.enabled = true \nA.bootstrap.servers=a:9092", "=\n:\n \\\n", "x=\\uD83D\\uDE00\\uD83D",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := strings.Count(string(data), "\n") + strings.Count(string(data), "\r") + 1
		for _, enc := range []Encoding{Latin1, UTF8} {
			p, diags, err := ParseProperties("f", data, enc)
			if err != nil {
				se, ok := err.(*SyntaxError)
				if !ok || se.Pos.Line < 1 || se.Pos.Line > lines {
					t.Fatalf("bad error %v for %q", err, data)
				}
				continue
			}
			for _, d := range diags {
				if d.Pos.Line < 1 || d.Pos.Line > lines {
					t.Fatalf("diagnostic line %d out of range for %q", d.Pos.Line, data)
				}
			}
			for _, e := range p.Entries {
				if e.Pos.Line < 1 || e.Pos.Line > lines {
					t.Fatalf("entry line %d out of range for %q", e.Pos.Line, data)
				}
			}
			eff := p.Effective()
			back, _, err := ParseProperties("g", SerializeProperties(eff), Latin1)
			if err != nil {
				t.Fatalf("re-parse of serialized %q: %v", data, err)
			}
			if back.Len() != len(eff) {
				t.Fatalf("round trip of %q: %d keys, want %d", data, back.Len(), len(eff))
			}
			for _, e := range eff {
				got, ok := back.Get(e.Key)
				if !ok || got.Value != e.Value {
					t.Fatalf("round trip of %q: key %q = %q (%v), want %q", data, e.Key, got.Value, ok, e.Value)
				}
			}
		}
	})
}
