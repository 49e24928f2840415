// Package e2e holds black-box tests of the built kmm binary against the real test-bed clusters:
// what an operator sees (stdout, stderr, exit codes, signals). It must not import kmm internals
// beyond the test-bed helpers and what reads the clusters from the outside (pkg/rdkafka's
// clients, pkg/consumeroffsets' decoder of __consumer_offsets).
package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kmmproject/kmm/e2e/testbed"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Bin returns the kmm binary under test: $KMM_BIN, or one built once into a temp dir.
func Bin(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("KMM_BIN"); p != "" {
		return p
	}
	if testing.Short() {
		t.Skip("-short (make unit): the black-box tests of the binary run in make test (or set KMM_BIN)")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kmm-e2e-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "kmm")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/kmm")
		cmd.Dir = testbed.Root()
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = err
			binPath = string(out)
		}
	})
	if buildErr != nil {
		t.Fatalf("building kmm: %v\n%s", buildErr, binPath)
	}
	return binPath
}

// Result is one finished kmm run.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Run runs kmm with args and waits for it.
func Run(t testing.TB, args ...string) Result {
	t.Helper()
	cmd := exec.Command(Bin(t), args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return Result{Code: code, Stdout: out.String(), Stderr: errOut.String()}
}

// runIn runs kmm in dir.
func runIn(t testing.TB, dir string, args ...string) Result {
	t.Helper()
	cmd := exec.Command(Bin(t), args...)
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return Result{Code: code, Stdout: out.String(), Stderr: errOut.String()}
}
