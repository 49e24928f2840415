// Package javatest runs kmm's Java programs against the real Apache Kafka jars, so that tests can
// compare the Go code with MirrorMaker 2's own classes: the vector generator of pkg/mm2wire and
// pkg/policy (pkg/mm2wire/testdata/java/GenVectors.java) and mm2conf's MM2 oracle
// (testdata/mm2/javacheck/MM2Oracle.java).
//
// It owns finding the jars (env KMM_KAFKA_LIBS, else the nearest .testbed/kafka-*/libs above the
// working directory), compiling Java sources with javac into a test temp dir and running them with
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

// repoRoot finds the repository root (the directory holding go.mod) above the working directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// Classes is a set of Java sources compiled against the Kafka jars.
type Classes struct {
	Dir  string // the compiled classes (a test temp dir)
	Libs string // the Kafka jar directory
	java string
}

// Compile compiles Java sources (paths relative to the repository root) against the Kafka jars
// into a test temp dir. It skips (or fails, see EnvRequire) the test when Java or the jars are
// missing; a compile error is always a failure.
func Compile(t testing.TB, sources ...string) *Classes {
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
	root, err := repoRoot()
	if err != nil {
		t.Fatalf("javatest: %v", err)
	}
	classes := t.TempDir()
	args := []string{"-nowarn", "-encoding", "UTF-8", "-cp", filepath.Join(libs, "*"), "-d", classes}
	for _, s := range sources {
		args = append(args, filepath.Join(root, s))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, javac, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("javatest: %s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return &Classes{Dir: classes, Libs: libs, java: java}
}

// RunOptions tune one Java run.
type RunOptions struct {
	Stdin []byte
	// Env, when not nil, is the whole environment of the JVM (nothing is inherited).
	Env []string
	// Dir is the working directory (default: the test's).
	Dir string
	// Timeout bounds the run (default 5 minutes).
	Timeout time.Duration
}

// Run runs main with args and returns its standard output; any failure fails the test with the
// combined output.
func (c *Classes) Run(t testing.TB, main string, opts RunOptions, args ...string) []byte {
	t.Helper()
	if opts.Timeout == 0 {
		opts.Timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), opts.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.java, append([]string{"-cp", filepath.Join(c.Libs, "*") + string(os.PathListSeparator) + c.Dir, main}, args...)...)
	cmd.Dir = opts.Dir
	if opts.Env != nil {
		cmd.Env = opts.Env
	}
	cmd.Stdin = bytes.NewReader(opts.Stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("javatest: %s: %v\n%s%s", strings.Join(cmd.Args, " "), err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes()
}

// Run compiles GenVectors.java against the jars and runs it once per mode ("wire", "policy",
// "utf8"), returning each mode's output. It skips (or fails, see EnvRequire) the test when Java or
// the jars are missing; a compile or run error is always a failure.
func Run(t testing.TB, modes ...string) map[string][]byte {
	t.Helper()
	c := Compile(t, filepath.Join("pkg", "mm2wire", "testdata", "java", "GenVectors.java"))
	res := make(map[string][]byte, len(modes))
	for _, mode := range modes {
		outFile := filepath.Join(c.Dir, mode+".out")
		c.Run(t, "GenVectors", RunOptions{}, mode, outFile)
		b, err := os.ReadFile(outFile)
		if err != nil {
			t.Fatalf("javatest: %v", err)
		}
		res[mode] = b
	}
	t.Logf("javatest: generated %v with the jars in %s", modes, c.Libs)
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
