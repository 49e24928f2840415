package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docTable reads docs/architecture.md's package table: the rows after the header
// "| package | owns | may import (kmm) |", packages and imports in backticks ("none": nothing).
func docTable(t *testing.T) []Row {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	tick := regexp.MustCompile("`([^`]*)`")
	names := func(cell string) []string {
		var out []string
		for _, m := range tick.FindAllStringSubmatch(cell, -1) {
			out = append(out, m[1])
		}
		return out
	}
	var rows []Row
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "| package | owns | may import (kmm) |") {
			in = true
			continue
		}
		if !in || strings.HasPrefix(line, "|---") {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) != 3 {
			t.Fatalf("docs/architecture.md: a row of the package table without 3 cells (a | inside a cell?): %s", line)
		}
		may := names(cells[2])
		if len(may) == 0 && strings.TrimSpace(cells[2]) != "none" {
			t.Fatalf("docs/architecture.md: %q: the third cell lists no package in backticks and is not \"none\"", cells[0])
		}
		rows = append(rows, Row{Packages: names(cells[0]), May: may})
	}
	if len(rows) == 0 {
		t.Fatal("docs/architecture.md: no package table")
	}
	return rows
}

func tableMap(t *testing.T, what string, rows []Row) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, r := range rows {
		if len(r.Packages) == 0 {
			t.Errorf("%s: a row without packages", what)
		}
		may := slices.Sorted(slices.Values(r.May))
		for _, p := range r.Packages {
			if _, dup := out[p]; dup {
				t.Errorf("%s: %s has two rows", what, p)
			}
			out[p] = may
		}
	}
	return out
}

// The doc's table and layercheck's are the same: same packages, each allowed the same imports.
func TestTableIsTheDocs(t *testing.T) {
	doc, code := tableMap(t, "docs/architecture.md", docTable(t)), tableMap(t, "Table", Table)
	for p, may := range doc {
		if c, ok := code[p]; !ok {
			t.Errorf("%s has a row in docs/architecture.md and none in Table", p)
		} else if !slices.Equal(may, c) {
			t.Errorf("%s: docs/architecture.md lists %v, Table %v", p, may, c)
		}
	}
	for p := range code {
		if _, ok := doc[p]; !ok {
			t.Errorf("%s has a row in Table and none in docs/architecture.md", p)
		}
	}
}

// Every import a row lists is made by one of its packages: the table states what is, not what
// once was.
func TestTableIsTrue(t *testing.T) {
	pkgs, err := Load(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	imports := map[string][]string{}
	for _, p := range pkgs {
		if rel, ok := strings.CutPrefix(p.ImportPath, m); ok {
			imports[rel] = p.Imports
		}
	}
	for _, r := range Table {
		for _, may := range r.May {
			used := false
			for _, p := range r.Packages {
				used = used || slices.Contains(imports[p], m+may)
			}
			if !used {
				t.Errorf("the row of %v lists %s, which none of them imports: remove it (docs/architecture.md and Table)", r.Packages, may)
			}
		}
		for _, p := range r.Packages {
			if _, ok := imports[p]; !ok {
				t.Errorf("the row of %v names %s, which is not a package of the module", r.Packages, p)
			}
		}
	}
}

// For every row of the table, one of its packages importing a package of the module the row
// does not list is reported; the listed imports are not; a package without a row is reported.
func TestTableRejectsAViolatingImportPerRow(t *testing.T) {
	var all []string
	for _, r := range Table {
		all = append(all, r.Packages...)
	}
	for _, r := range Table {
		p := r.Packages[0]
		bad := ""
		for _, c := range all {
			if c != p && !slices.Contains(r.May, c) {
				bad = c
				break
			}
		}
		imports := []string{"fmt"}
		for _, may := range r.May {
			imports = append(imports, m+may)
		}
		if vs := CheckTable([]Package{{ImportPath: m + p, Imports: imports}}, Table); len(vs) != 0 {
			t.Errorf("%s importing what its row lists: %v", p, vs)
		}
		vs := CheckTable([]Package{{ImportPath: m + p, Imports: append(imports, m+bad)}}, Table)
		if len(vs) != 1 || vs[0].Rule != ruleMayOnly || vs[0].Import != m+bad {
			t.Errorf("%s importing %s (not in its row): got %v", p, bad, vs)
		}
	}
	vs := CheckTable([]Package{{ImportPath: m + "pkg/newthing", Imports: []string{m + "pkg/kerr"}}, {ImportPath: "fmt", Standard: true}}, Table)
	if len(vs) != 1 || vs[0].Rule != ruleNoRow {
		t.Errorf("a package without a row: got %v", vs)
	}
}

// For every layering rule, a package it applies to importing what it forbids is reported under
// that rule.
func TestEveryRuleRejectsAViolatingImport(t *testing.T) {
	for _, r := range Rules {
		pkg, imp := example(r.Packages, r.Except), example(r.Forbid, r.Allow)
		if pkg == "" || imp == "" {
			t.Errorf("rule %q: no package or import to try (%q, %q)", r.Name, pkg, imp)
			continue
		}
		p := Package{ImportPath: pkg, Imports: []string{imp}, Deps: []string{imp}}
		found := false
		for _, v := range Check([]Package{p}, Rules) {
			found = found || (v.Rule == r.Name && v.Import == imp)
		}
		if !found {
			t.Errorf("rule %q: %s importing %s is not reported", r.Name, pkg, imp)
		}
	}
}

// example returns a path matching one of patterns and none of except ("" if it finds none): a
// pattern's own path ("a/b" of "a/b/..."), or one below it.
func example(patterns, except []string) string {
	for _, pat := range patterns {
		base := strings.TrimSuffix(strings.TrimSuffix(pat, "/..."), "/")
		for _, c := range []string{base, base + "/x"} {
			if match(c, pat) && !matchAny(c, except) {
				return c
			}
		}
	}
	return ""
}
