package mm2conf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInputLimits: what is not an MM2 properties file is refused with a message saying what it
// is, at once and without reading it whole (/dev/zero used to grow to gigabytes).
func TestInputLimits(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big := filepath.Join(dir, "big.properties")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileSize + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	cases := map[string]string{
		"/dev/zero":                    "is not a regular file",
		dir:                            "is a directory",
		big:                            "over kmm's limit of 4194304",
		write("empty.properties", nil): "is empty",
		write("blank.properties", []byte("\n  \n")):           "is empty",
		write("bin.properties", []byte("clusters=A\x00\x01")): "is not a text file",
	}
	for path, want := range cases {
		start := time.Now()
		_, err := Load(LoadOptions{ConfigFile: path})
		if err == nil {
			t.Errorf("%s: accepted", path)
			continue
		}
		cfg, _ := Load(LoadOptions{ConfigFile: path})
		found := false
		for _, d := range cfg.Diagnostics {
			if d.Severity == SeverityError && strings.Contains(d.Msg, want) && d.Hint != "" {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no error containing %q with a hint: %v", path, want, cfg.Diagnostics)
		}
		if time.Since(start) > 2*time.Second {
			t.Errorf("%s: took %s", path, time.Since(start))
		}
	}
}
