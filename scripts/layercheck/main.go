// Command layercheck enforces kmm's package layering (docs/architecture.md) over
// `go list -deps -json`, in two tables: Table, docs/architecture.md's package table as data (each
// package of the module and the kmm packages it may import; anything else of the module is a
// violation, and so is a package without a row), and Rules, the layering rules, each naming the
// packages it applies to, what they must not import (directly, or anywhere in their dependencies
// with Transitive), and why. It prints every violation and exits 1 if there is one; `make lint`
// runs it.
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

// Row is one row of docs/architecture.md's package table: packages (paths inside the module)
// and the kmm packages they may import, outside their tests (paths inside the module).
type Row struct {
	Packages []string
	May      []string
}

// Table is docs/architecture.md's package table, row for row (TestTableIsTheDocs holds them
// equal; TestTableIsTrue holds every listed import used).
var Table = []Row{
	{Packages: []string{"cmd/kmm"},
		May: []string{"pkg/app", "pkg/iostreams"}},
	{Packages: []string{"pkg/app"},
		May: []string{"pkg/buildinfo", "pkg/cluster", "pkg/cmd/cmdutil", "pkg/cmd/configcmd", "pkg/cmd/failbackcmd", "pkg/cmd/failovercmd", "pkg/cmd/lagcmd", "pkg/cmd/replicatecmd", "pkg/cmd/statuscmd", "pkg/cmd/translatecmd", "pkg/cmd/verifycmd", "pkg/groupprobe", "pkg/iostreams", "pkg/kerr", "pkg/output", "pkg/rdkafka", "pkg/whoami"}},
	{Packages: []string{"pkg/cmd/replicatecmd"},
		May: []string{"mm2conf", "pkg/buildinfo", "pkg/cmd/cmdutil", "pkg/flow", "pkg/httpapi", "pkg/iostreams", "pkg/kerr", "pkg/output", "pkg/replicator", "pkg/replicator/replsource"}},
	{Packages: []string{"pkg/cmd/statuscmd"},
		May: []string{"mm2conf", "pkg/cluster", "pkg/cmd/cmdutil", "pkg/flow", "pkg/health", "pkg/iostreams", "pkg/kerr", "pkg/lag", "pkg/output", "pkg/snapshot"}},
	{Packages: []string{"pkg/cmd/lagcmd"},
		May: []string{"mm2conf", "pkg/cluster", "pkg/cmd/cmdutil", "pkg/flow", "pkg/iostreams", "pkg/kerr", "pkg/lag", "pkg/output", "pkg/snapshot"}},
	{Packages: []string{"pkg/cmd/translatecmd"},
		May: []string{"mm2conf", "pkg/checkpoint", "pkg/cmd/cmdutil", "pkg/flow", "pkg/kerr", "pkg/lag", "pkg/output", "pkg/plan", "pkg/snapshot", "pkg/switchover"}},
	{Packages: []string{"pkg/cmd/verifycmd"},
		May: []string{"mm2conf", "pkg/cmd/cmdutil", "pkg/drill", "pkg/flow", "pkg/iostreams", "pkg/kerr", "pkg/output", "pkg/verify"}},
	{Packages: []string{"pkg/cmd/failovercmd", "pkg/cmd/failbackcmd"},
		May: []string{"pkg/cmd/cmdutil", "pkg/cmd/drshared", "pkg/drill", "pkg/flow", "pkg/kerr", "pkg/output", "pkg/plan", "pkg/switchover"}},
	{Packages: []string{"pkg/cmd/drshared"},
		May: []string{"mm2conf", "pkg/buildinfo", "pkg/cluster", "pkg/cmd/cmdutil", "pkg/drill", "pkg/flow", "pkg/kerr", "pkg/output", "pkg/plan", "pkg/switchover"}},
	{Packages: []string{"pkg/cmd/configcmd"},
		May: []string{"mm2conf", "mm2conf/clientconf", "pkg/cluster", "pkg/cmd/cmdutil", "pkg/flow", "pkg/iostreams", "pkg/kerr", "pkg/output"}},
	{Packages: []string{"pkg/cmd/cmdutil"},
		May: []string{"mm2conf", "pkg/buildinfo", "pkg/cluster", "pkg/flow", "pkg/iostreams", "pkg/kerr", "pkg/output", "pkg/plan", "pkg/switchover", "pkg/verify", "pkg/whoami"}},
	{Packages: []string{"pkg/switchover"},
		May: []string{"pkg/checkpoint", "pkg/cluster", "pkg/flow", "pkg/flowstate", "pkg/kerr", "pkg/lag", "pkg/mm2read", "pkg/mm2wire", "pkg/offsetmap", "pkg/offsetsync", "pkg/plan", "pkg/snapshot", "pkg/verify"}},
	{Packages: []string{"pkg/plan"},
		May: []string{"pkg/cluster", "pkg/kerr"}},
	{Packages: []string{"pkg/snapshot"},
		May: []string{"pkg/checkpoint", "pkg/cluster", "pkg/flow", "pkg/flowstate", "pkg/health", "pkg/kerr", "pkg/lag", "pkg/mm2read", "pkg/mm2wire", "pkg/offsetmap", "pkg/offsetsync", "pkg/plan"}},
	{Packages: []string{"pkg/mm2read"},
		May: []string{"pkg/checkpoint", "pkg/cluster", "pkg/flow", "pkg/mm2wire", "pkg/offsetmap", "pkg/offsetsync"}},
	{Packages: []string{"pkg/cluster"},
		May: []string{"pkg/flow", "pkg/kerr"}},
	{Packages: []string{"pkg/flow"},
		May: []string{"mm2conf", "pkg/kerr", "pkg/offsetmap", "pkg/policy"}},
	{Packages: []string{"pkg/checkpoint"},
		May: []string{"pkg/mm2wire", "pkg/offsetmap", "pkg/offsetsync", "pkg/policy"}},
	{Packages: []string{"pkg/offsetsync"},
		May: []string{"pkg/mm2wire"}},
	{Packages: []string{"pkg/lag"},
		May: []string{}},
	{Packages: []string{"pkg/health"},
		May: []string{"pkg/cluster", "pkg/lag"}},
	{Packages: []string{"pkg/verify"},
		May: []string{"pkg/checkpoint", "pkg/cluster", "pkg/flow", "pkg/metasync", "pkg/mm2read", "pkg/mm2wire", "pkg/offsetsync", "pkg/plan"}},
	{Packages: []string{"pkg/metasync"},
		May: []string{"pkg/cluster", "pkg/flow"}},
	{Packages: []string{"pkg/flowstate"},
		May: []string{}},
	{Packages: []string{"pkg/offsetmap"},
		May: []string{}},
	{Packages: []string{"pkg/drill"},
		May: []string{"pkg/tomlfile"}},
	{Packages: []string{"pkg/tomlfile"},
		May: []string{"pkg/kerr"}},
	{Packages: []string{"pkg/policy", "pkg/mm2wire", "pkg/consumeroffsets", "pkg/kerr"},
		May: []string{}},
	{Packages: []string{"pkg/buildinfo", "pkg/whoami"},
		May: []string{}},
	{Packages: []string{"mm2conf"},
		May: []string{"mm2conf/clientconf", "pkg/policy"}},
	{Packages: []string{"mm2conf/clientconf"},
		May: []string{}},
	{Packages: []string{"pkg/rdkafka"},
		May: []string{"mm2conf/clientconf", "pkg/cluster", "pkg/flow", "pkg/kerr"}},
	{Packages: []string{"pkg/groupprobe"},
		May: []string{"pkg/cluster", "pkg/flow"}},
	{Packages: []string{"pkg/replicator"},
		May: []string{"mm2conf/clientconf", "pkg/buildinfo", "pkg/checkpoint", "pkg/cluster", "pkg/consumeroffsets", "pkg/flow", "pkg/flowstate", "pkg/groupprobe", "pkg/kerr", "pkg/metasync", "pkg/mm2read", "pkg/mm2wire", "pkg/offsetmap", "pkg/offsetsync", "pkg/plan", "pkg/rdkafka", "pkg/whoami"}},
	{Packages: []string{"pkg/replicator/replsource"},
		May: []string{"mm2conf", "pkg/cluster", "pkg/flow", "pkg/flowstate", "pkg/httpapi", "pkg/lag", "pkg/plan", "pkg/rdkafka", "pkg/replicator", "pkg/snapshot"}},
	{Packages: []string{"pkg/httpapi"},
		May: []string{"mm2conf/clientconf", "pkg/kerr"}},
	{Packages: []string{"pkg/iostreams", "pkg/output"},
		May: []string{}},
	{Packages: []string{"e2e"},
		May: []string{"e2e/testbed"}},
	{Packages: []string{"e2e/testbed"},
		May: []string{"pkg/rdkafka", "scripts/wanlink"}},
	{Packages: []string{"e2e/testbed/app"},
		May: []string{"pkg/rdkafka"}},
	{Packages: []string{"e2e/testbed/netfault"},
		May: []string{"e2e/testbed"}},
	{Packages: []string{"e2e/testbed/replbed"},
		May: []string{"e2e/testbed", "pkg/flow", "pkg/policy", "pkg/replicator"}},
	{Packages: []string{"e2e/testbed/kfakebed"},
		May: []string{"pkg/cluster", "pkg/flow", "pkg/policy", "pkg/rdkafka"}},
	{Packages: []string{"mm2conf/clientconf/clientconftest", "pkg/mm2wire/javatest", "pkg/output/goldentest"},
		May: []string{}},
	{Packages: []string{"scripts/bench"},
		May: []string{"mm2conf", "pkg/flow", "pkg/mm2wire", "pkg/rdkafka", "pkg/replicator", "scripts/wanlink"}},
	{Packages: []string{"scripts/benchfailover"},
		May: []string{"mm2conf", "pkg/checkpoint", "pkg/cluster", "pkg/cmd/cmdutil", "pkg/flow", "pkg/flowstate", "pkg/mm2read", "pkg/mm2wire", "pkg/plan", "pkg/rdkafka", "pkg/switchover"}},
	{Packages: []string{"scripts/crashloop"},
		May: []string{"mm2conf", "pkg/cluster", "pkg/cmd/cmdutil", "pkg/flow", "pkg/rdkafka"}},
	{Packages: []string{"scripts/demo"},
		May: []string{"pkg/rdkafka"}},
	{Packages: []string{"scripts/drill"},
		May: []string{"pkg/rdkafka"}},
	{Packages: []string{"scripts/faultsdoc"},
		May: []string{}},
	{Packages: []string{"scripts/kping"},
		May: []string{}},
	{Packages: []string{"scripts/layercheck"},
		May: []string{}},
	{Packages: []string{"scripts/wanlink", "scripts/wanlink/cmd/wanlink"},
		May: []string{"scripts/wanlink"}},
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
	if v.Import == "" {
		return fmt.Sprintf("%s: %s (%s)", v.Package, v.Rule, v.Why)
	}
	return fmt.Sprintf("%s imports %s: %s (%s)", v.Package, v.Import, v.Rule, v.Why)
}

// The rule names of the table's violations.
const (
	ruleNoRow   = "every package has a row in the package table"
	ruleMayOnly = "a package imports of kmm only what its row lists"
)

// CheckTable checks the module's packages among pkgs against table: every one has a row, and
// imports nothing of the module its row does not list.
func CheckTable(pkgs []Package, table []Row) []Violation {
	rows := map[string]*Row{}
	for i := range table {
		for _, p := range table[i].Packages {
			rows[m+p] = &table[i]
		}
	}
	var out []Violation
	for _, p := range pkgs {
		if p.Standard || !strings.HasPrefix(p.ImportPath, m) {
			continue
		}
		r := rows[p.ImportPath]
		if r == nil {
			out = append(out, Violation{Rule: ruleNoRow, Package: p.ImportPath,
				Why: "add it to docs/architecture.md's package table and to Table in scripts/layercheck/main.go"})
			continue
		}
		may := map[string]bool{}
		for _, i := range r.May {
			may[m+i] = true
		}
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, m) && !may[imp] {
				out = append(out, Violation{Rule: ruleMayOnly, Package: p.ImportPath, Import: imp,
					Why: fmt.Sprintf("its row in docs/architecture.md lists %s; change the import, or the row there and in scripts/layercheck's Table", listOrNone(r.May))})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
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
	vs := append(CheckTable(pkgs, Table), Check(pkgs, Rules)...)
	for _, v := range vs {
		fmt.Fprintln(os.Stderr, "layercheck:", v)
	}
	if len(vs) > 0 {
		fmt.Fprintf(os.Stderr, "layercheck: %d violation(s) of the layering in docs/architecture.md\n", len(vs))
		os.Exit(1)
	}
}
