package e2e

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// listenerProps is an MM2 file whose two clusters are one TCP listener that counts the
// connections it accepts (and closes them): a command that asks a cluster anything connects.
func listenerProps(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	p := filepath.Join(t.TempDir(), "mm2.properties")
	addr := ln.Addr().String()
	body := fmt.Sprintf("clusters = A, B\nA.bootstrap.servers = %s\nB.bootstrap.servers = %s\nA->B.enabled = true\nB->A.enabled = true\n", addr, addr)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p, &accepted
}

// helpFlag is one flag as `kmm CMD --help` lists it.
type helpFlag struct {
	name, placeholder string // "--report", "FILE.md" ("" for a switch)
}

// helpSection returns the lines of section (e.g. "OPTIONS:") of a help text.
func helpSection(help, section string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(help, "\n") {
		switch {
		case l == section:
			in = true
		case in && l != "" && !strings.HasPrefix(l, " "):
			return out
		case in:
			out = append(out, l)
		}
	}
	return out
}

// helpFlags parses the flags of an OPTIONS (or GLOBAL OPTIONS) section: each line that starts
// with three blanks and a dash names a flag (and its aliases) before two blanks or the line's
// end; a word after the name is its value's placeholder.
func helpFlags(lines []string) []helpFlag {
	var out []helpFlag
	for _, l := range lines {
		if !strings.HasPrefix(l, "   -") {
			continue
		}
		names, _, _ := strings.Cut(strings.TrimSpace(l), "  ")
		names, _, _ = strings.Cut(names, " [ ") // a repeatable flag: "--group GROUP [ --group GROUP ]"
		for _, n := range strings.Split(names, ", ") {
			f := strings.Fields(n)
			hf := helpFlag{name: f[0]}
			if len(f) > 1 {
				hf.placeholder = f[1]
			}
			out = append(out, hf)
		}
	}
	return out
}

// listedCommands lists the commands of a COMMANDS section.
func listedCommands(help string) []string {
	var out []string
	for _, l := range helpSection(help, "COMMANDS:") {
		if strings.HasPrefix(l, "   ") && !strings.HasPrefix(l, "    ") {
			name, _, _ := strings.Cut(strings.TrimSpace(l), " ")
			out = append(out, strings.TrimSuffix(name, ","))
		}
	}
	return out
}

// TestFlagValuesRefusedBeforeAnyCluster walks every command's flags as `kmm CMD --help` lists
// them, and the global flags: a flag that takes a value refuses one that starts with '-' (the
// next flag, "--", "-"), as `--flag VALUE` and `--flag=VALUE`, with exit 2 naming the flag, and
// every number flag refuses a negative value with exit 2 naming the flag and its range; none of
// these runs connects to the clusters of the file (a listener counts the connections), so none
// writes anything anywhere. Today's main ran `kmm failover F --report --dry-run --yes` as a real
// failover with its report written to a file named --dry-run.
func TestFlagValuesRefusedBeforeAnyCluster(t *testing.T) {
	props, accepted := listenerProps(t)
	dir := t.TempDir()
	root := Run(t, "--help")
	if root.Code != 0 {
		t.Fatalf("kmm --help: exit %d", root.Code)
	}
	paths := map[string][]helpFlag{"": helpFlags(helpSection(root.Stdout, "GLOBAL OPTIONS:"))}
	for _, c := range listedCommands(root.Stdout) {
		if c == "help" || c == "completion" {
			continue
		}
		h := Run(t, c, "--help")
		if subs := listedCommands(h.Stdout); len(subs) > 0 {
			for _, s := range subs {
				paths[c+" "+s] = helpFlags(helpSection(Run(t, c, s, "--help").Stdout, "OPTIONS:"))
			}
			continue
		}
		paths[c] = helpFlags(helpSection(h.Stdout, "OPTIONS:"))
	}
	if len(paths) < 10 {
		t.Fatalf("only %d commands found in kmm --help", len(paths))
	}
	valueFlags, numberFlags := 0, 0
	for p, flags := range paths {
		cmdline := func(tail ...string) []string {
			if p == "" {
				return append(tail, "config", "check", props)
			}
			args := append(append(strings.Fields(p), props), tail...)
			if strings.HasPrefix(p, "fail") {
				args = append(args, "--yes") // what would make them change the clusters
			}
			return args
		}
		for _, f := range flags {
			if f.placeholder == "" {
				continue
			}
			valueFlags++
			for _, tail := range [][]string{{f.name, "--dry-run"}, {f.name + "=--"}, {f.name, "-"}} {
				args := cmdline(tail...)
				r := runIn(t, dir, args...)
				if r.Code != 2 || r.Stdout != "" || !strings.Contains(r.Stderr, f.name) || !strings.Contains(r.Stderr, "cannot start with '-'") {
					t.Errorf("kmm %s: exit %d, stdout %q, stderr %q; want exit 2 naming %s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr, f.name)
				}
			}
			bad := map[string]string{"N": "-5", "DURATION": "-5s", "AGE": "-5s", "INTERVAL": "-5s"}[f.placeholder]
			if bad == "" {
				continue
			}
			numberFlags++
			args := cmdline(f.name, bad)
			r := runIn(t, dir, args...)
			if r.Code != 2 || r.Stdout != "" || !strings.Contains(r.Stderr, " must be ") {
				t.Errorf("kmm %s: exit %d, stdout %q, stderr %q; want exit 2 with the flag's range", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
			}
		}
	}
	t.Logf("%d commands, %d value flags, %d of them numbers", len(paths), valueFlags, numberFlags)
	if valueFlags < 80 || numberFlags < 20 {
		t.Errorf("walked %d value flags and %d number flags: the help parse missed some", valueFlags, numberFlags)
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("%d connection(s) to the clusters of the file: a usage error reached a cluster", n)
	}
	// No file named after a flag was written (a report, a JUnit file): the working directory is empty.
	if es, _ := os.ReadDir(dir); len(es) != 0 {
		t.Errorf("files written in the working directory: %v", es)
	}
}
