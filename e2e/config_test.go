package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kmmproject/kmm/e2e/testbed"
)

// Every malformed corpus file makes `kmm config check` and `kmm replicate` exit 2 with its exact
// file:line error, before any network I/O (the files name no reachable cluster).
func TestMalformedCorpusExits2(t *testing.T) {
	dir := filepath.Join(testbed.Root(), "testdata", "mm2")
	files, err := filepath.Glob(filepath.Join(dir, "malformed-*.properties"))
	if err != nil || len(files) < 15 {
		t.Fatalf("%d malformed files (%v)", len(files), err)
	}
	for _, f := range files {
		want, err := os.ReadFile(strings.TrimSuffix(f, ".properties") + ".error")
		if err != nil {
			t.Fatal(err)
		}
		// The .error files name the file relative to the corpus directory.
		wantLine := strings.TrimSpace(string(want))
		if strings.Contains(wantLine, "@TMP@") {
			continue // needs key stores made at test time: covered by mm2conf's corpus test
		}
		for _, cmd := range [][]string{{"config", "check"}, {"replicate"}} {
			r := runIn(t, dir, append(cmd, filepath.Base(f))...)
			if r.Code != 2 || !strings.Contains(r.Stderr, wantLine) {
				t.Errorf("%v %s: exit %d, want 2 with %q\n%s", cmd, filepath.Base(f), r.Code, wantLine, r.Stderr)
			}
		}
	}
}

// The tutorial's files and both its command lines: form 1 explains that no flow is enabled and
// what the tutorial got wrong; form 2 implies the flow and accepts MM1's --whitelist.
func TestSeedForms(t *testing.T) {
	dir := filepath.Join(testbed.Root(), "testdata", "mm2", "seed")
	r := runIn(t, dir, "config", "check", "mirror-maker.properties")
	if r.Code != 2 || !strings.Contains(r.Stderr, ".enabled = true") || !strings.Contains(r.Stderr, "sync.topic.acls.enabled") {
		t.Fatalf("form 1: exit %d\n%s", r.Code, r.Stderr)
	}
	r = runIn(t, dir, "config", "check", "--clusters", "SOURCE,TARGET", "--source-cluster-config", "source-cluster.properties",
		"--target-cluster-config", "target-cluster.properties", "--whitelist", ".*", "--config", "mirror-maker.properties")
	if !strings.Contains(r.Stderr, "SOURCE->TARGET.enabled = true") || !strings.Contains(r.Stderr, "whitelist") || !strings.Contains(r.Stdout, "SOURCE->TARGET") {
		t.Fatalf("form 2: exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	// Flags after the file name, MM2's order.
	r2 := runIn(t, dir, "config", "check", "mirror-maker.properties", "--clusters", "SOURCE,TARGET", "--source-cluster-config", "source-cluster.properties",
		"--target-cluster-config", "target-cluster.properties", "--whitelist", ".*")
	if r2.Stdout != r.Stdout {
		t.Fatalf("flags after the file give another result:\n%s\nvs\n%s", r2.Stdout, r.Stdout)
	}
}
