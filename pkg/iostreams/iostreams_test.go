package iostreams

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestColorDecision(t *testing.T) {
	for _, c := range []struct {
		name      string
		mode      string
		tty       bool
		env       map[string]string
		want      bool
		wantPaint string
	}{
		{"terminal", "auto", true, nil, true, "\x1b[32mOK\x1b[0m"},
		{"piped", "auto", false, nil, false, "OK"},
		{"NO_COLOR", "auto", true, map[string]string{"NO_COLOR": "1"}, false, "OK"},
		{"TERM=dumb", "auto", true, map[string]string{"TERM": "dumb"}, false, "OK"},
		{"--color never", "never", true, nil, false, "OK"},
		{"--color always piped", "always", false, nil, true, "\x1b[32mOK\x1b[0m"},
		{"--color always beats NO_COLOR", "always", false, map[string]string{"NO_COLOR": "1"}, true, "\x1b[32mOK\x1b[0m"},
	} {
		s, _, _, _ := Test()
		s.SetTTY(false, c.tty, c.tty)
		s.SetColorMode(c.mode)
		s.SetEnv(func(k string) string { return c.env[k] })
		if got := s.ColorEnabled(); got != c.want {
			t.Errorf("%s: ColorEnabled = %v, want %v", c.name, got, c.want)
		}
		if got := s.ColorEnabledStderr(); got != c.want {
			t.Errorf("%s: ColorEnabledStderr = %v, want %v", c.name, got, c.want)
		}
		if got := s.Palette().State("OK"); got != c.wantPaint {
			t.Errorf("%s: Palette().State(OK) = %q, want %q", c.name, got, c.wantPaint)
		}
	}
}

func TestPaletteStates(t *testing.T) {
	p := NewPalette(true)
	for state, code := range map[string]string{"OK": "32", "WARN": "33", "DEGRADED": "33", "FAIL": "31", "DOWN": "31"} {
		if got, want := p.State(state), "\x1b["+code+"m"+state+"\x1b[0m"; got != want {
			t.Errorf("State(%s) = %q, want %q", state, got, want)
		}
	}
	if got := p.State("other"); got != "other" {
		t.Errorf("unknown state coloured: %q", got)
	}
	off := NewPalette(false)
	for _, f := range []func(string) string{off.OK, off.Warn, off.Degraded, off.Fail, off.Down, off.Bold, off.Faint, off.State} {
		if got := f("DOWN"); got != "DOWN" {
			t.Errorf("palette off changed the text: %q", got)
		}
	}
}

// TestNoEscapeCodesOutsideIOStreams is the lint rule of the colour decision: terminal escape
// sequences are written in this package only (colour through the Palette, cursor control
// through the constants), so no command decides on its own whether colour is allowed.
func TestNoEscapeCodesOutsideIOStreams(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root not found at %s: %v", root, err)
	}
	esc := regexp.MustCompile(`\\x1[bB]|\\033|\\u001[bB]|\\U0000001[bB]|\x1b`)
	self, _ := filepath.Abs(".")
	var bad []string
	checked := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "bin") {
				return filepath.SkipDir
			}
			if p == self {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		checked++
		for i, line := range strings.Split(string(b), "\n") {
			if esc.MatchString(line) {
				rel, _ := filepath.Rel(root, p)
				bad = append(bad, rel+":"+strconv.Itoa(i+1)+": "+strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Fatalf("only %d Go files checked: the walk is broken", checked)
	}
	if len(bad) > 0 {
		t.Errorf("terminal escape codes outside pkg/iostreams (use iostreams.Palette or its constants):\n  %s", strings.Join(bad, "\n  "))
	}
}

// Width: COLUMNS when it is a number, else the terminal's width, else 100.
func TestWidth(t *testing.T) {
	s, _, _, _ := Test()
	if s.Width() != DefaultWidth || DefaultWidth != 100 {
		t.Errorf("default width %d", s.Width())
	}
	for env, want := range map[string]int{"80": 80, " 132 ": 132, "wide": 100, "0": 100, "-5": 100} {
		s.SetEnv(func(k string) string {
			if k == "COLUMNS" {
				return env
			}
			return ""
		})
		if got := s.Width(); got != want {
			t.Errorf("COLUMNS=%q: width %d, want %d", env, got, want)
		}
	}
	s.SetEnv(func(string) string { return "" })
	s.termWidth = 90
	if s.Width() != 90 {
		t.Errorf("terminal width: %d", s.Width())
	}
}
