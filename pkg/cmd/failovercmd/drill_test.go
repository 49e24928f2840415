package failovercmd

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kmmproject/kmm/pkg/cmd/drshared"
	"github.com/kmmproject/kmm/pkg/kerr"
)

func TestDrillExample(t *testing.T) {
	d, err := LoadDrill(filepath.Join("..", "..", "..", "testdata", "drill", "drill.toml"))
	if err != nil {
		t.Fatal(err)
	}
	o := &Options{Mode: "planned", Common: drshared.Common{Fence: "none"}, MaxRPO: -1}
	applyDrill(d, o, func(string) bool { return false })
	if o.Flow.Flow != "A->B" || len(o.Groups) != 2 || o.QuietFor != 10*time.Second || o.Timeout != 5*time.Minute || o.MaxRPO != 1000 ||
		o.MaxCkAge != 15*time.Minute || o.Report != "failover-report.md" || o.PreHook == "" || o.PostHook == "" {
		t.Fatalf("%+v", o)
	}
	// A flag given on the command line wins.
	o = &Options{Mode: "emergency"}
	applyDrill(d, o, func(name string) bool { return name == "mode" })
	if o.Mode != "emergency" {
		t.Fatalf("mode %q", o.Mode)
	}
}

func TestDrillStrict(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"unknown key", "flow = \"A->B\"\n\n[fence]\nmethod = \"none\"\nquiet = \"10s\"\n", ":5: unknown key \"fence.quiet\""},
		{"wrong type", "flow = \"A->B\"\ngroups = \"billing\"\n", "groups"},
		{"bad duration", "timeout = \"five minutes\"\n", "not a duration"},
		{"syntax", "flow = \"A->B\"\nmode = \n", ":2:"},
	} {
		p := filepath.Join(t.TempDir(), "drill.toml")
		if err := os.WriteFile(p, []byte(c.text), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := LoadDrill(p)
		var ke *kerr.Error
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) || !errors.As(err, &ke) || ke.Kind != kerr.Usage {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
