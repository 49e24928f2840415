// Package goldentest compares command output with golden files under testdata/golden
// (rewritten with -update-golden). Test support only: the layering check keeps it, and the
// testing package it needs, out of the kmm binary.
package goldentest

import (
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

var update = flag.Bool("update-golden", false, "rewrite testdata/golden files")

// Golden compares got with testdata/golden/<name> at the repository root (rewritten with
// `go test ... -update-golden`). For tests of command output.
func Golden(t testing.TB, name string, got []byte) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-golden to create it)", err)
	}
	if string(want) != string(got) {
		t.Fatalf("%s differs from the golden file:\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
	}
}
