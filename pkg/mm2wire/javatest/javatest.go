// Package javatest runs kmm's Java vector generator (pkg/mm2wire/testdata/java/GenVectors.java)
// against the real Apache Kafka jars, so that the tests of pkg/mm2wire and pkg/policy can compare
// the Go code with MirrorMaker 2's own classes.
//
// It owns finding the jars (env KMM_KAFKA_LIBS, else the nearest .testbed/kafka-*/libs above the
// working directory), compiling the generator with javac into a test temp dir and running it with
// java. When java, javac or the jars are missing the calling test is skipped, unless
// KMM_REQUIRE_JARS=1, which turns the skip into a failure (CI sets it).
//
// Test support only: it must not be imported by non-test code, and it must not write anywhere but
// the test's temp dir.
package javatest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

const (
	// EnvLibs names a directory holding the Kafka jars (connect-mirror, kafka-clients, ...).
	EnvLibs = "KMM_KAFKA_LIBS"
	// EnvRequire, when "1", makes a missing Java or jar directory a test failure.
	EnvRequire = "KMM_REQUIRE_JARS"
)

// requiredJars are the jar name prefixes the generator needs.
var requiredJars = []string{
	"connect-mirror-", "connect-mirror-client-", "kafka-clients-", "connect-runtime-",
	"connect-json-", "connect-api-", "jackson-databind-", "jackson-core-",
}

// Required reports whether KMM_REQUIRE_JARS=1.
func Required() bool { return os.Getenv(EnvRequire) == "1" }

func skipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if Required() {
		t.Fatalf("%s (%s=1 makes this a failure)", msg, EnvRequire)
	}
	t.Skipf("skipping the real-jar comparison: %s (needs javac/java 17+ in PATH and the Kafka jars in $%s or a .testbed/kafka-*/libs above the package; %s=1 makes this a failure)",
		msg, EnvLibs, EnvRequire)
}

// LibsDir returns the Kafka jar directory: $KMM_KAFKA_LIBS if set, else the first
// .testbed/kafka-*/libs found walking up from the working directory (the newest version if
// several). It checks that the jars the generator needs are there.
func LibsDir() (string, error) {
	if d := os.Getenv(EnvLibs); d != "" {
		if err := checkJars(d); err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvLibs, d, err)
		}
		return d, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		matches, _ := filepath.Glob(filepath.Join(dir, ".testbed", "kafka-*", "libs"))
		sort.Sort(sort.Reverse(sort.StringSlice(matches)))
		for _, m := range matches {
			if checkJars(m) == nil {
				return m, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no .testbed/kafka-*/libs with the Kafka jars above the working directory")
		}
		dir = parent
	}
}

func checkJars(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, prefix := range requiredJars {
		found := false
		for _, e := range entries {
			n := e.Name()
			if strings.HasPrefix(n, prefix) && strings.HasSuffix(n, ".jar") &&
				// "connect-mirror-" must not be satisfied by "connect-mirror-client-"
				!(prefix == "connect-mirror-" && strings.HasPrefix(n, "connect-mirror-client-")) {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("no %s*.jar in %s", prefix, dir)
		}
	}
	return nil
}

// generatorSource finds GenVectors.java by walking up from the working directory to go.mod.
func generatorSource() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, "pkg", "mm2wire", "testdata", "java", "GenVectors.java")
			if _, err := os.Stat(p); err != nil {
				return "", err
			}
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// Run compiles GenVectors.java against the jars and runs it once per mode ("wire", "policy",
// "utf8"), returning each mode's output. It skips (or fails, see EnvRequire) the test when Java or
// the jars are missing; a compile or run error is always a failure.
func Run(t testing.TB, modes ...string) map[string][]byte {
	t.Helper()
	if testing.Short() && !Required() {
		t.Skip("-short (make unit): the Java cross-checks run in make test")
	}
	libs, err := LibsDir()
	if err != nil {
		if os.Getenv(EnvLibs) != "" {
			t.Fatalf("javatest: %v", err)
		}
		skipOrFail(t, "%v", err)
	}
	javac, err := exec.LookPath("javac")
	if err != nil {
		skipOrFail(t, "javac not found in PATH")
	}
	java, err := exec.LookPath("java")
	if err != nil {
		skipOrFail(t, "java not found in PATH")
	}
	src, err := generatorSource()
	if err != nil {
		t.Fatalf("javatest: generator source: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	classes := t.TempDir()
	cp := filepath.Join(libs, "*")
	cmd := exec.CommandContext(ctx, javac, "-nowarn", "-encoding", "UTF-8", "-cp", cp, "-d", classes, src)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("javatest: %s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	res := make(map[string][]byte, len(modes))
	for _, mode := range modes {
		outFile := filepath.Join(classes, mode+".out")
		cmd := exec.CommandContext(ctx, java, "-cp", cp+string(os.PathListSeparator)+classes, "GenVectors", mode, outFile)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("javatest: %s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
		}
		b, err := os.ReadFile(outFile)
		if err != nil {
			t.Fatalf("javatest: %v", err)
		}
		res[mode] = b
	}
	t.Logf("javatest: generated %v with the jars in %s", modes, libs)
	return res
}

// CompareGolden checks fresh (what the jars generate now) against the committed golden file, or
// rewrites the file when update is set.
func CompareGolden(t testing.TB, goldenFile string, fresh []byte, update bool) {
	t.Helper()
	if update {
		if err := os.WriteFile(goldenFile, fresh, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", goldenFile)
		return
	}
	golden, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(golden, fresh) {
		tmp := filepath.Join(t.TempDir(), "vectors.json")
		_ = os.WriteFile(tmp, fresh, 0o644)
		t.Errorf("%s differs from what the jars generate now (fresh copy: %s); rerun with -update if the change is expected", goldenFile, tmp)
	}
}
