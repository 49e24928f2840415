package output

import (
	"bytes"
	"strings"
	"testing"
)

func TestWrap(t *testing.T) {
	for _, c := range []struct {
		in     string
		width  int
		indent string
		want   string
	}{
		{"short", 10, "  ", "short"},
		{"one two three four", 9, "  ", "one two\n  three\n  four"},
		{"  indented words go here", 12, "    ", "  indented\n    words go\n    here"},
		{"a.long.key.without.spaces", 12, "", "a.long.key.\nwithout.\nspaces"},
		{"aaaaaaaaaaaaaaaaaaaa", 8, "", "aaaaaaaa\naaaaaaaa\naaaa"},
		{"first line\nsecond line here", 10, "> ", "first line\n> second\n> line\n> here"},
		{"no width", 0, "", "no width"},
	} {
		if got := Wrap(c.in, c.width, c.indent); got != c.want {
			t.Errorf("Wrap(%q, %d, %q) = %q, want %q", c.in, c.width, c.indent, got, c.want)
		}
		for _, l := range strings.Split(Wrap(c.in, c.width, c.indent), "\n") {
			if c.width > 0 && len(l) > c.width {
				t.Errorf("Wrap(%q, %d): line %q is too long", c.in, c.width, l)
			}
		}
	}
	if got := Hang("   --flag X  ", "usage words that wrap", 24, "             "); got != "   --flag X  usage words\n             that wrap" {
		t.Errorf("Hang: %q", got)
	}
}

// TableWidth narrows the last columns first, wraps their cells in place and leaves a table that
// fits as Table renders it.
func TestTableWidth(t *testing.T) {
	header := []string{"KEY", "VALUE", "ORIGIN"}
	rows := [][]string{{"a.key", "1", "a long origin that explains where the value came from and why it is what it is"}, {"b", "two", "short"}}
	var narrow, plain bytes.Buffer
	if err := TableWidth(&narrow, header, rows, 60); err != nil {
		t.Fatal(err)
	}
	want := "KEY    VALUE  ORIGIN\n" +
		"a.key  1      a long origin that explains where the value\n" +
		"              came from and why it is what it is\n" +
		"b      two    short\n"
	if narrow.String() != want {
		t.Errorf("TableWidth 60:\n%s\nwant\n%s", narrow.String(), want)
	}
	if err := TableWidth(&narrow, header, rows, 0); err != nil {
		t.Fatal(err)
	}
	if err := Table(&plain, header, rows); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(narrow.String(), plain.String()) {
		t.Errorf("width 0 is not Table")
	}
}
