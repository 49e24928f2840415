package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Each rule rejects the import it forbids, and allows its exceptions.
func TestCheckRejectsViolatingImports(t *testing.T) {
	for _, c := range []struct {
		pkg      Package
		wantRule string // "" = allowed
	}{
		{Package{ImportPath: m + "pkg/flow", Imports: []string{m + "pkg/rdkafka"}, Deps: []string{m + "pkg/rdkafka"}}, "the domain is client-free"},
		{Package{ImportPath: m + "pkg/cmd/lagcmd", Imports: []string{m + "pkg/rdkafka"}}, "commands open no clients"},
		{Package{ImportPath: m + "pkg/snapshot", Imports: []string{m + "pkg/replicator"}, Deps: []string{m + "pkg/replicator"}}, "only replicate runs the engine"},
		{Package{ImportPath: m + "pkg/output", Imports: []string{"testing"}}, "no testing outside tests"},
		{Package{ImportPath: m + "cmd/kmm", Deps: []string{"fmt", "testing"}}, "the kmm binary links no test code"},
		{Package{ImportPath: m + "cmd/kmm", Deps: []string{"github.com/twmb/franz-go/pkg/kfake"}}, "the kmm binary links no test code"},
		{Package{ImportPath: m + "mm2conf", Imports: []string{m + "pkg/output"}}, "mm2conf is a leaf"},
		{Package{ImportPath: m + "pkg/lag", Imports: []string{"github.com/urfave/cli/v2"}}, "the domain knows no command line"},
		{Package{ImportPath: m + "pkg/policy", Imports: []string{m + "pkg/kerr"}}, "policy is a leaf"},
		{Package{ImportPath: m + "pkg/plan", Imports: []string{"github.com/twmb/franz-go/pkg/kgo"}}, "one Kafka client adapter"},
		{Package{ImportPath: m + "pkg/app", Imports: []string{m + "e2e/testbed/kfakebed"}}, "test support is imported by tests only"},
		{Package{ImportPath: m + "pkg/httpapi", Deps: []string{"github.com/confluentinc/confluent-kafka-go/v2/kafka"}}, "the HTTP API builds without cgo"},
		{Package{ImportPath: m + "pkg/metasync", Imports: []string{m + "pkg/cluster", m + "pkg/verify"}}, "the metadata rules are pure"},
		{Package{ImportPath: m + "pkg/metasync", Imports: []string{m + "pkg/rdkafka"}, Deps: []string{m + "pkg/rdkafka"}}, "the domain is client-free"},
		// Allowed.
		{Package{ImportPath: m + "pkg/rdkafka", Imports: []string{"github.com/confluentinc/confluent-kafka-go/v2/kafka"}}, ""},
		{Package{ImportPath: m + "pkg/groupprobe", Imports: []string{"github.com/twmb/franz-go/pkg/kgo"}}, ""},
		{Package{ImportPath: m + "mm2conf", Imports: []string{m + "pkg/policy"}}, ""},
		{Package{ImportPath: m + "pkg/cmd/replicatecmd", Imports: []string{m + "pkg/replicator"}}, ""},
		{Package{ImportPath: m + "pkg/metasync", Imports: []string{m + "pkg/cluster", m + "pkg/flow", "strings"}}, ""},
		{Package{ImportPath: m + "e2e/testbed/kfakebed", Imports: []string{"testing", "github.com/twmb/franz-go/pkg/kfake", m + "pkg/rdkafka"}}, ""},
		{Package{ImportPath: "testing", Standard: true, Imports: []string{"internal/synctest"}}, ""},
	} {
		vs := Check([]Package{c.pkg}, Rules)
		got := map[string]bool{}
		for _, v := range vs {
			got[v.Rule] = true
		}
		if c.wantRule == "" && len(vs) > 0 {
			t.Errorf("%s: unexpected violations %v", c.pkg.ImportPath, vs)
		}
		if c.wantRule != "" && !got[c.wantRule] {
			t.Errorf("%s importing %v: no %q violation (got %v)", c.pkg.ImportPath, append(c.pkg.Imports, c.pkg.Deps...), c.wantRule, vs)
		}
	}
}

// End to end: a module laid out like kmm whose flow model imports testing and the librdkafka
// adapter fails the check run through `go list`; without those imports it passes.
func TestCheckOnAModule(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go tool")
	}
	dir := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module github.com/kmmproject/kmm\n\ngo 1.22\n")
	write("pkg/rdkafka/rdkafka.go", "package rdkafka\n\nfunc Open() {}\n")
	write("pkg/flow/flow.go", "package flow\n\nimport (\n\t\"testing\"\n\n\t\"github.com/kmmproject/kmm/pkg/rdkafka\"\n)\n\nfunc F(t *testing.T) { rdkafka.Open() }\n")
	write("cmd/kmm/main.go", "package main\n\nimport \"github.com/kmmproject/kmm/pkg/flow\"\n\nvar _ = flow.F\n\nfunc main() {}\n")
	pkgs, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, v := range Check(pkgs, Rules) {
		lines = append(lines, v.String())
	}
	got := strings.Join(lines, "\n")
	for _, want := range []string{
		m + "pkg/flow imports testing: no testing outside tests",
		m + "pkg/flow imports " + m + "pkg/rdkafka: the domain is client-free",
		m + "cmd/kmm imports testing: the kmm binary links no test code",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no violation %q in:\n%s", want, got)
		}
	}
	write("pkg/flow/flow.go", "package flow\n\nfunc F() {}\n")
	pkgs, err = Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if vs := Check(pkgs, Rules); len(vs) != 0 {
		t.Fatalf("clean module: %v", vs)
	}
}

// The repository itself passes, the package table and the rules.
func TestRepositoryPasses(t *testing.T) {
	pkgs, err := Load(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 50 {
		t.Fatalf("only %d packages listed", len(pkgs))
	}
	if vs := append(CheckTable(pkgs, Table), Check(pkgs, Rules)...); len(vs) != 0 {
		t.Fatalf("%d violation(s):\n%v", len(vs), vs)
	}
}
