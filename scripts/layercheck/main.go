// Command layercheck enforces kmm's package layering (docs/architecture.md) over
// `go list -deps -json`: the rules are the table below, each naming the packages it applies to,
// what they must not import (directly, or anywhere in their dependencies with Transitive), and
// why. It prints every violation and exits 1 if there is one; `make lint` runs it.
//
//	go run ./scripts/layercheck            # checks ./... of the module in the working directory
//	go run ./scripts/layercheck -dir DIR   # checks the module in DIR
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
)

const m = "github.com/kmmproject/kmm/"

// Rule is one layering rule.
type Rule struct {
	Name     string
	Packages []string // the packages it applies to (patterns, see match)
	Except   []string // packages exempt from it
	Forbid   []string // what they must not import
	Allow    []string // imports exempt from Forbid
	// Transitive checks every dependency (go list's Deps) instead of the direct imports.
	Transitive bool
	Why        string
}

var (
	kafkaClients = []string{"github.com/confluentinc/...", "github.com/twmb/franz-go/..."}
	testSupport  = []string{m + "e2e/...", m + "pkg/mm2wire/javatest", m + "mm2conf/clientconf/clientconftest", m + "pkg/output/goldentest",
		"github.com/twmb/franz-go/pkg/kfake"}
	// The pure domain: computes on values, talks to no cluster except through pkg/cluster's
	// interfaces, knows nothing of the command line.
	domain = []string{m + "mm2conf/...", m + "pkg/flow", m + "pkg/cluster", m + "pkg/plan", m + "pkg/switchover", m + "pkg/snapshot",
		m + "pkg/mm2read", m + "pkg/lag", m + "pkg/health", m + "pkg/checkpoint", m + "pkg/offsetsync", m + "pkg/policy",
		m + "pkg/mm2wire", m + "pkg/consumeroffsets", m + "pkg/kerr", m + "pkg/verify", m + "pkg/flowstate", m + "pkg/offsetmap", m + "pkg/metasync"}
)

// Rules is kmm's layering, in one table.
var Rules = []Rule{
	{Name: "the kmm binary links no test code", Packages: []string{m + "cmd/kmm"}, Transitive: true,
		Forbid: append([]string{"testing"}, testSupport...),
		Why:    "test helpers and their flags must not ship; move them to a test-only package"},
	{Name: "test support is imported by tests only", Packages: []string{m + "..."}, Except: testSupport,
		Forbid: testSupport, Why: "kfake, the test beds and *test helper packages are for _test.go files"},
	{Name: "no testing outside tests", Packages: []string{m + "..."}, Except: testSupport, Forbid: []string{"testing"},
		Why: "only _test.go files and test-support packages may use package testing"},
	{Name: "one Kafka client adapter", Packages: []string{m + "..."},
		Except: append([]string{m + "pkg/rdkafka", m + "pkg/groupprobe", m + "scripts/bench", m + "scripts/kping"}, testSupport...),
		Forbid: kafkaClients,
		Why:    "only pkg/rdkafka (librdkafka) and pkg/groupprobe (franz-go, for Connect groups librdkafka cannot describe) speak Kafka"},
	{Name: "the domain is client-free", Packages: domain, Except: testSupport, Transitive: true,
		Forbid: append([]string{m + "pkg/rdkafka", m + "pkg/groupprobe", m + "pkg/replicator"}, kafkaClients...),
		Why:    "domain code talks to clusters through pkg/cluster's interfaces and builds without cgo"},
	{Name: "the domain knows no command line", Packages: domain, Except: testSupport,
		Forbid: []string{m + "pkg/cmd/...", m + "pkg/app", m + "pkg/iostreams", m + "pkg/output", "github.com/urfave/cli/..."},
		Why:    "domain packages return data; commands (pkg/cmd/...) parse flags and render"},
	{Name: "mm2conf is a leaf", Packages: []string{m + "mm2conf/..."}, Except: testSupport, Forbid: []string{m + "pkg/..."}, Allow: []string{m + "pkg/policy"},
		Why: "the MM2 file model depends on nothing else of kmm but the replication policy (topic and group verdicts name the remote topics as MM2's policy does)"},
	{Name: "policy is a leaf", Packages: []string{m + "pkg/policy"}, Forbid: []string{m + "..."},
		Why: "MM2's replication policies are used by mm2conf and the domain alike; they depend on nothing of kmm"},
	{Name: "the offset map is a leaf", Packages: []string{m + "pkg/offsetmap"}, Forbid: []string{m + "..."},
		Why: "where the copies landed is pure data, read by the engine and every DR command alike; it depends on nothing of kmm"},
	{Name: "the flow model is a leaf of the domain", Packages: []string{m + "pkg/flow"},
		Forbid: []string{m + "pkg/cluster", m + "pkg/plan", m + "pkg/switchover", m + "pkg/snapshot", m + "pkg/mm2read", m + "pkg/checkpoint", m + "pkg/offsetsync"},
		Why:    "everything takes flows; flows take nothing but mm2conf, policy and kerr"},
	{Name: "the metadata rules are pure", Packages: []string{m + "pkg/metasync"}, Forbid: []string{m + "..."}, Allow: []string{m + "pkg/cluster", m + "pkg/flow"},
		Why: "what replicate syncs of topic configs and ACLs and what verify compares are functions of values (pkg/cluster's) and the flow; the engine and verify do the I/O"},
	{Name: "commands open no clients", Packages: []string{m + "pkg/cmd/..."},
		Forbid: append([]string{m + "pkg/rdkafka", m + "pkg/groupprobe"}, kafkaClients...),
		Why:    "commands get clusters from the factory's Opener (pkg/cluster)"},
	{Name: "only replicate runs the engine", Packages: []string{m + "..."},
		Except: append([]string{m + "pkg/replicator", m + "pkg/cmd/replicatecmd", m + "pkg/replicator/replsource", m + "scripts/bench"}, testSupport...),
		Forbid: []string{m + "pkg/replicator"},
		Why:    "read commands, the HTTP API and the plan core take flows from pkg/flow, not the engine"},
	{Name: "the HTTP API builds without cgo", Packages: []string{m + "pkg/httpapi"}, Transitive: true,
		Forbid: append([]string{m + "pkg/rdkafka", m + "pkg/replicator"}, kafkaClients...),
		Why:    "pkg/replicator/replsource adapts the engine to it"},
}

// Package is what layercheck reads of `go list -json`.
type Package struct {
	ImportPath string
	Standard   bool
	Imports    []string
	Deps       []string
}

// match reports whether import path p matches pattern: "a/b/..." matches a/b and everything
// below it; any other pattern matches itself only.
func match(p, pattern string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return p == base || strings.HasPrefix(p, base+"/")
	}
	return p == pattern
}

func matchAny(p string, patterns []string) bool {
	for _, pat := range patterns {
		if match(p, pat) {
			return true
		}
	}
	return false
}

// Violation is one forbidden import.
type Violation struct {
	Rule, Package, Import, Why string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s imports %s: %s (%s)", v.Package, v.Import, v.Rule, v.Why)
}

// Check applies rules to pkgs.
func Check(pkgs []Package, rules []Rule) []Violation {
	var out []Violation
	for _, p := range pkgs {
		if p.Standard {
			continue
		}
		for _, r := range rules {
			if !matchAny(p.ImportPath, r.Packages) || matchAny(p.ImportPath, r.Except) {
				continue
			}
			imps := p.Imports
			if r.Transitive {
				imps = p.Deps
			}
			for _, imp := range imps {
				if matchAny(imp, r.Forbid) && !matchAny(imp, r.Allow) {
					out = append(out, Violation{Rule: r.Name, Package: p.ImportPath, Import: imp, Why: r.Why})
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Load runs `go list -deps -json ./...` in dir.
func Load(dir string) ([]Package, error) {
	cmd := exec.Command("go", "list", "-deps", "-json", "./...")
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go list: %v\n%s", err, errOut.String())
	}
	return Decode(&out)
}

// Decode reads the concatenated JSON objects go list prints.
func Decode(r io.Reader) ([]Package, error) {
	var pkgs []Package
	dec := json.NewDecoder(r)
	for dec.More() {
		var p Package
		if err := dec.Decode(&p); err != nil {
			return nil, err
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

func main() {
	dir := flag.String("dir", ".", "the module to check")
	flag.Parse()
	pkgs, err := Load(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "layercheck:", err)
		os.Exit(2)
	}
	vs := Check(pkgs, Rules)
	for _, v := range vs {
		fmt.Fprintln(os.Stderr, "layercheck:", v)
	}
	if len(vs) > 0 {
		fmt.Fprintf(os.Stderr, "layercheck: %d violation(s) of the layering in docs/architecture.md\n", len(vs))
		os.Exit(1)
	}
}
