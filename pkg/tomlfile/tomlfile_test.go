package tomlfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kmmproject/kmm/pkg/kerr"
)

type drill struct {
	Flow    string `toml:"flow"`
	MaxLag  int64  `toml:"max_lag"`
	Confirm bool   `toml:"confirm"`
	Groups  []struct {
		Name  string `toml:"name"`
		Force bool   `toml:"force"`
	} `toml:"groups"`
	Drain struct {
		Timeout string `toml:"timeout"`
	} `toml:"drain"`
}

func TestDecodeStrict(t *testing.T) {
	ok := `flow = "A->B"
max_lag = 100

[drain]
timeout = "30s"

[[groups]]
name = "billing"
`
	var d drill
	if err := Decode("drill.toml", ok, &d); err != nil || d.Flow != "A->B" || d.MaxLag != 100 || d.Drain.Timeout != "30s" || len(d.Groups) != 1 || d.Groups[0].Name != "billing" {
		t.Fatalf("%v %+v", err, d)
	}
	for _, c := range []struct{ text, want string }{
		{"flow = \"A->B\"\nmax_lagg = 5\n", `drill.toml:2: unknown key "max_lagg"`},
		{"flow = \"A->B\"\n\n[drain]\ntimeout = \"1s\"\ntimout = \"2s\"\n", `drill.toml:5: unknown key "drain.timout"`},
		{"[[groups]]\nname = \"a\"\n\n[[groups]]\nname = \"b\"\nforse = true\n", `drill.toml:6: unknown key "groups.forse"`},
		{"[rollback]\nsteps = 3\nwhen = \"now\"\n", `drill.toml:1: unknown key "rollback"`},
		{"drain.timeoutt = \"1s\"\n", `drill.toml:1: unknown key "drain.timeoutt"`},
		{"flow = \"A->B\"\nmax_lag = \"lots\"\n", "drill.toml:2:"},
		{"flow = A->B\n", "drill.toml:1:"},
	} {
		var d drill
		err := Decode("drill.toml", c.text, &d)
		if err == nil || kerr.KindOf(err) != kerr.Usage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want a usage error containing %q", c.text, err, c.want)
		}
		if strings.Count(err.Error(), "unknown key") > 1 {
			t.Errorf("%q: one unknown table reported key by key: %v", c.text, err)
		}
	}
}

func TestDecodeFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "d.toml")
	if err := os.WriteFile(p, []byte("flow = \"A->B\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var d drill
	if err := DecodeFile(p, &d); err != nil || d.Flow != "A->B" {
		t.Fatalf("%v %+v", err, d)
	}
	for _, bad := range []string{filepath.Join(dir, "missing.toml"), dir, "/dev/zero"} {
		if err := DecodeFile(bad, &d); err == nil || kerr.KindOf(err) != kerr.Usage {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
