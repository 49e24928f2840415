package drill

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kmmproject/kmm/pkg/kerr"
)

// The example drill of testdata (failover's keys and verify's [verify] table in one file) reads
// without an unknown key, and each command's values come out typed.
func TestExampleDrill(t *testing.T) {
	d, err := Load(filepath.Join("..", "..", "testdata", "drill", "drill.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if d.Flow != "A->B" || d.Mode != "planned" || !d.Timeout.Set || d.Timeout.Duration != 5*time.Minute || d.Fence.QuietFor.Duration != 10*time.Second {
		t.Errorf("failover keys: %+v", d)
	}
	if d.Verify.MaxLagRecords == nil || *d.Verify.MaxLagRecords != 0 || d.Verify.MaxCheckpointAge.Duration != 5*time.Minute {
		t.Errorf("[verify]: %+v", d.Verify)
	}
}

func TestStrict(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ text, want string }{
		{"flow = \"A->B\"\n[fence]\nquiet = \"10s\"\n", ":3: unknown key \"fence.quiet\""},
		{"timeout = 5\n", ":1: timeout: "},
		{"[verify]\nlevel = \"full\"\n[verfy]\nlevel = \"x\"\n", ":3: unknown key \"verfy\""},
	} {
		p := filepath.Join(dir, "d.toml")
		if err := os.WriteFile(p, []byte(tc.text), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(p)
		if kerr.KindOf(err) != kerr.Usage || !strings.Contains(err.Error(), p+tc.want) {
			t.Errorf("%q: %v, want a usage error with %q", tc.text, err, p+tc.want)
		}
	}
}

// Given does nothing without a path, hands a read drill to apply, and returns Load's errors.
func TestGiven(t *testing.T) {
	called := false
	if err := Given("", func(*Drill) { called = true }); err != nil || called {
		t.Fatalf("no path: err %v, applied %v", err, called)
	}
	p := filepath.Join(t.TempDir(), "drill.toml")
	if err := os.WriteFile(p, []byte("flow = \"A->B\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var got *Drill
	if err := Given(p, func(d *Drill) { got = d }); err != nil || got == nil || got.Flow != "A->B" {
		t.Fatalf("err %v, drill %+v", err, got)
	}
	if err := Given(filepath.Join(t.TempDir(), "none.toml"), func(*Drill) { t.Fatal("applied a missing file") }); err == nil {
		t.Fatal("a missing file: no error")
	}
}
