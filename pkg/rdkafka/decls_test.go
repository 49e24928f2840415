package rdkafka

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// rdkafkaHeader is librdkafka's rdkafka.h inside the confluent-kafka-go module the build uses:
// the header of the static library kmm links (go test puts GOROOT/bin first on PATH).
func rdkafkaHeader(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", "github.com/confluentinc/confluent-kafka-go/v2/kafka").Output()
	if err != nil {
		t.Fatalf("go list confluent-kafka-go's kafka package: %v", err)
	}
	h := filepath.Join(strings.TrimSpace(string(out)), "librdkafka_vendor", "rdkafka.h")
	if _, err := os.Stat(h); err != nil {
		t.Fatal(err)
	}
	return h
}

// cgoCompiler is the C compiler cgo uses (go env CC), as a command and its arguments.
func cgoCompiler(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "CC").Output()
	if err != nil {
		t.Fatalf("go env CC: %v", err)
	}
	cc := strings.Fields(string(out))
	if len(cc) == 0 {
		cc = []string{"gcc"}
	}
	return cc
}

// The declarations of librdkafka that rdkafka_types.h and rdkafka_funcs.h restate for the C data
// plane are librdkafka's own: testdata/declcheck.c, compiled with the module's rdkafka.h,
// compares every restated struct (size, alignment, each member's offset, size and type),
// typedef, enum and constant, and redeclares every restated function over rdkafka.h's types (a
// different signature does not compile); this test also checks that rdkafka.h declares each
// such function and that every restated constant has its comparison in declcheck.c.
func TestRestatedRdkafkaDeclarations(t *testing.T) {
	t.Parallel()
	header := rdkafkaHeader(t)
	cc := cgoCompiler(t)
	args := append(cc[1:], "-std=c11", "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
		"-isystem", filepath.Dir(header), "-I", ".", filepath.Join("testdata", "declcheck.c"))
	cmd := exec.Command(cc[0], args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the restated librdkafka declarations differ from %s (%s %s: %v):\n%s", header, cc[0], strings.Join(args, " "), err, out)
	}

	real, err := os.ReadFile(header)
	if err != nil {
		t.Fatal(err)
	}
	funcs, err := os.ReadFile("rdkafka_funcs.h")
	if err != nil {
		t.Fatal(err)
	}
	proto := regexp.MustCompile(`^[a-z].*?\b(rd_kafka_\w+)\(.*\);$`)
	n := 0
	for i, line := range strings.Split(string(funcs), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "//") || strings.HasPrefix(line, "#") {
			continue
		}
		m := proto.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("rdkafka_funcs.h:%d: not one function declaration a line: %q", i+1, line)
			continue
		}
		n++
		if !regexp.MustCompile(`RD_EXPORT\s+[^;{}()]*?\b` + m[1] + `\s*\(`).Match(real) {
			t.Errorf("rdkafka_funcs.h:%d: %s is not declared in %s", i+1, m[1], header)
		}
	}
	if n == 0 {
		t.Error("rdkafka_funcs.h declares no function")
	}

	types, err := os.ReadFile("rdkafka_types.h")
	if err != nil {
		t.Fatal(err)
	}
	check, err := os.ReadFile(filepath.Join("testdata", "declcheck.c"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^#define (KMM_\w+) `).FindAllSubmatch(types, -1) {
		if !bytes.Contains(check, []byte("SAME_VALUE("+string(m[1])+",")) {
			t.Errorf("rdkafka_types.h's %s is not compared in testdata/declcheck.c (SAME_VALUE)", m[1])
		}
	}
}
