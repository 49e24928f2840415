package app

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/iostreams"
)

// guarded runs kmm with an opener that counts the clusters a command opens (none may be: these
// are usage errors, found before anything is read or asked).
func guarded(t *testing.T, args ...string) (int, string, string, int64) {
	t.Helper()
	var opened atomic.Int64
	opener := cluster.OpenerFunc(func(*flow.Flow, flow.Side) (cluster.Cluster, error) {
		opened.Add(1)
		return nil, fmt.Errorf("test: no cluster may be opened")
	})
	io, _, out, errOut := iostreams.Test()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	code := runWith(ctx, append([]string{"kmm"}, args...), io, opener)
	return code, out.String(), errOut.String(), opened.Load()
}

// valueFlags lists, for every command of the tree (its full name; "" for the global flags) and
// every flag of it that takes a value, each name the flag answers to (aliases and old names
// included).
func valueFlags() map[string][]cli.Flag {
	io, _, _, _ := iostreams.Test()
	a := newApp(io)
	out := map[string][]cli.Flag{"": a.Flags}
	var walk func(prefix string, cs []*cli.Command)
	walk = func(prefix string, cs []*cli.Command) {
		for _, c := range cs {
			p := strings.TrimSpace(prefix + " " + c.Name)
			out[p] = c.Flags
			walk(p, c.Subcommands)
		}
	}
	walk("", a.Commands)
	for p, fs := range out {
		var keep []cli.Flag
		for _, f := range fs {
			if takesValueFlag(f) {
				keep = append(keep, f)
			}
		}
		out[p] = keep
	}
	return out
}

// argsFor is a command line of command path p with the MM2 file, then the flag token and its
// value; global flags go before `config check FILE`.
func argsFor(p, file string, tail ...string) []string {
	if p == "" {
		return append(tail, "config", "check", file)
	}
	return append(append(strings.Fields(p), file), tail...)
}

// TestEveryValueFlagRefusesADashValue walks every command's flags that take a value, under every
// name, from the app's own definition: a value that starts with '-' (the next flag, "--", "-")
// is refused in both forms (--flag VALUE, --flag=VALUE), exit 2 with the flag named and nothing
// opened, whatever follows. Today's main took `kmm failover F --report --dry-run --yes` as a
// report file named --dry-run and failed over for real.
func TestEveryValueFlagRefusesADashValue(t *testing.T) {
	file := unreachableFile(t)
	n := 0
	for p, flags := range valueFlags() {
		for _, f := range flags {
			for _, name := range f.Names() {
				tok := cmdutil.Dashed(name)
				for _, v := range []string{"--dry-run", "--yes", "--help", "--", "-", "-x"} {
					for _, tail := range [][]string{{tok, v}, {tok + "=" + v}} {
						if strings.HasPrefix(p, "fail") {
							tail = append(tail, "--yes") // what would make them change clusters
						}
						args := argsFor(p, file, tail...)
						n++
						code, out, errOut, opened := guarded(t, args...)
						if code != 2 || out != "" || opened != 0 || !strings.Contains(errOut, tok) || !strings.Contains(errOut, "cannot start with '-'") {
							t.Errorf("kmm %s: exit %d, %d cluster(s) opened, stdout %q, stderr %q; want exit 2 naming %s",
								strings.Join(args, " "), code, opened, out, errOut, tok)
						}
					}
				}
			}
		}
	}
	if n < 500 {
		t.Fatalf("only %d command lines tried: the walk missed flags", n)
	}
}

// TestEveryNumberFlagIsRangeChecked: every duration and count flag of every command refuses a
// negative value (exit 2, the flag named with the range it takes) before any cluster is asked,
// and those that must be positive refuse 0.
func TestEveryNumberFlagIsRangeChecked(t *testing.T) {
	file := unreachableFile(t)
	n := 0
	for p, flags := range valueFlags() {
		for _, f := range flags {
			bad := ""
			switch f.(type) {
			case *cli.DurationFlag:
				bad = "-5s"
			case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
				bad = "-5"
			default:
				continue
			}
			n++
			args := argsFor(p, file, cmdutil.Dashed(f.Names()[0]), bad)
			if strings.HasPrefix(p, "fail") {
				args = append(args, "--yes")
			}
			start := time.Now()
			code, out, errOut, opened := guarded(t, args...)
			if code != 2 || out != "" || opened != 0 || !strings.Contains(errOut, cmdutil.Dashed(f.Names()[0])+" must be") || time.Since(start) > 3*time.Second {
				t.Errorf("kmm %s: exit %d, %d cluster(s) opened, stdout %q, stderr %q; want exit 2 naming the flag and its range",
					strings.Join(args, " "), code, opened, out, errOut)
			}
		}
	}
	if n < 20 {
		t.Fatalf("only %d number flags walked", n)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"failover", file, "--timeout", "0s", "--yes"}, "--timeout must be more than 0, not 0s"},
		{[]string{"failback", file, "--timeout", "0s", "--yes"}, "--timeout must be more than 0, not 0s"},
		{[]string{"failover", file, "--quiet-for", "-1s", "--yes"}, "--quiet-for must be 0 or more, not -1s"},
		{[]string{"failover", file, "--max-rpo-records", "-5", "--yes"}, "--max-rpo-records must be 0 or more, or -1 to switch it off, not -5"},
		{[]string{"failback", file, "--max-reverse-lag", "-2", "--yes"}, "--max-reverse-lag must be 0 or more, or -1 to switch it off, not -2"},
		{[]string{"verify", file, "--max-duplicates", "-2"}, "--max-duplicates must be 0 or more, or -1 to switch it off, not -2"},
		{[]string{"verify", file, "--max-lag-records", "-1"}, "--max-lag-records must be 0 or more, not -1"},
		{[]string{"verify", file, "--samples", "0"}, "--samples must be 1 or more, not 0"},
		{[]string{"verify", file, "--parallel", "0"}, "--parallel must be 1 or more, not 0"},
		{[]string{"verify", file, "--seed", "-1"}, "--seed must be 0 or more, not -1"},
		{[]string{"lag", file, "--interval", "0s"}, "--interval must be more than 0, not 0s"},
		{[]string{"replicate", file, "--progress-interval", "0s"}, "--progress-interval must be more than 0, not 0s"},
		{[]string{"status", file, "--max-lag", "-1"}, "--max-lag-records must be 0 or more, not -1"},
	} {
		code, out, errOut, opened := guarded(t, c.args...)
		if code != 2 || out != "" || opened != 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("kmm %s: exit %d, %d cluster(s) opened, stdout %q, stderr %q; want exit 2 with %q", strings.Join(c.args, " "), code, opened, out, errOut, c.want)
		}
	}
	// -1 still switches the gates off, as documented.
	for _, args := range [][]string{{"failover", file, "--max-rpo-records", "-1", "--yes"}, {"verify", file, "--max-duplicates", "-1"}} {
		if _, _, errOut, _ := guarded(t, args...); strings.Contains(errOut, "must be") {
			t.Errorf("kmm %s: %q", strings.Join(args, " "), errOut)
		}
	}
}

// The old names of renamed flags still work (hidden aliases) but appear in no help and no
// completion; -o text is replicate's old name of -o table.
func TestOldFlagNamesAcceptedNotShown(t *testing.T) {
	file := unreachableFile(t)
	for _, c := range []struct {
		args []string
		want string // in stderr: the old name reached the flag's check
	}{
		{[]string{"failover", file, "--plan", "no-such-drill.toml", "--dry-run"}, "no-such-drill.toml"},
		{[]string{"failback", file, "--plan", "no-such-drill.toml", "--dry-run"}, "no-such-drill.toml"},
		{[]string{"lag", file, "--max-lag", "-1"}, "--max-lag-records must be 0 or more"},
		{[]string{"status", file, "--max-lag", "-1"}, "--max-lag-records must be 0 or more"},
		{[]string{"replicate", file, "-o", "text", "--shutdown-timeout", "-1s"}, "--shutdown-timeout must be 0 or more"},
		{[]string{"replicate", file, "-o", "table", "--shutdown-timeout", "-1s"}, "--shutdown-timeout must be 0 or more"},
		{[]string{"replicate", file, "-o", "yaml"}, "-o must be table or json"},
	} {
		code, _, errOut, _ := guarded(t, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) || strings.Contains(errOut, "not defined") {
			t.Errorf("kmm %s: exit %d, stderr %q; want %q", strings.Join(c.args, " "), code, errOut, c.want)
		}
	}
	// config explain --topics is --list-topics: it lists the source's topics (opens A).
	if code, _, errOut, opened := guarded(t, "config", "explain", file, "--topics"); opened == 0 || strings.Contains(errOut, "not defined") {
		t.Errorf("config explain --topics: exit %d, %d opened, %q", code, opened, errOut)
	}
	old := map[string][]string{"failover": {"--plan"}, "failback": {"--plan"}, "lag": {"--max-lag "}, "status": {"--max-lag "}, "config explain": {"--topics "}}
	for p, names := range old {
		_, out, _ := run(append(strings.Fields(p), "--help")...)
		for _, n := range names {
			if strings.Contains(out, n) {
				t.Errorf("kmm %s --help shows the old name %q:\n%s", p, n, out)
			}
		}
	}
	_, help, _ := run("replicate", "--help")
	if !strings.Contains(help, "table or json") || strings.Contains(help, "text or json") {
		t.Errorf("replicate -o: %s", help)
	}
	for _, sh := range []string{"bash", "fish"} {
		_, out, _ := run("completion", sh)
		for _, n := range []string{"--plan", "-l plan", "--max-lag ", "--max-lag\"", "-l max-lag\n", "-l topics\n"} {
			if strings.Contains(out, n) && !(n == "-l topics\n" && strings.Contains(out, "'__fish_seen_subcommand_from verify' -l topics")) {
				t.Errorf("%s completion offers the old name %q", sh, n)
			}
		}
	}
}

// TestHelpFitsTheTerminal: the help of every command has no line wider than COLUMNS (100, 80,
// 60), keeps its examples (continued with a backslash, not cut), and the default without
// COLUMNS nor a terminal is 100. Today's main printed failover and failback lines of 318
// characters.
func TestHelpFitsTheTerminal(t *testing.T) {
	paths := append([]string{""}, CommandPaths()...)
	for _, width := range []int{100, 80, 60, 0} {
		for _, p := range paths {
			io, _, out, errOut := iostreams.Test()
			if width > 0 {
				io.SetEnv(func(k string) string {
					if k == "COLUMNS" {
						return fmt.Sprint(width)
					}
					return ""
				})
			}
			args := append(append([]string{"kmm"}, strings.Fields(p)...), "--help")
			if code := Run(context.Background(), args, io); code != 0 {
				t.Fatalf("kmm %s --help: exit %d %s", p, code, errOut)
			}
			limit := width
			if width == 0 {
				limit = iostreams.DefaultWidth
			}
			for _, l := range strings.Split(out.String(), "\n") {
				if n := len([]rune(l)); n > limit {
					t.Errorf("COLUMNS=%d kmm %s --help: a line of %d characters: %q", width, p, n, l)
				}
			}
			if p != "" && !strings.Contains(out.String(), "\nEXAMPLES:\n") {
				t.Errorf("COLUMNS=%d kmm %s --help lost its examples", width, p)
			}
		}
	}
	// A long example is one shell command over several lines.
	_, out, _ := run("replicate", "--help")
	if !strings.Contains(out, "kmm replicate --clusters SOURCE,TARGET --source-cluster-config source-cluster.properties \\\n       --target-cluster-config") {
		t.Errorf("the tutorial example is not continued with a backslash:\n%s", out)
	}
	// Usage columns wrap under their column.
	if !strings.Contains(out, "   --shutdown-timeout DURATION   how long (DURATION) the stop may take after SIGINT/SIGTERM (drain,\n                                 store progress") {
		t.Errorf("--shutdown-timeout's usage does not wrap in its column:\n%s", out)
	}
}

func TestWrapHelpers(t *testing.T) {
	if got := continueCommand("kmm failover mirror-maker.properties --flow 'A->B' --fence-command 'kubectl scale deploy/x --replicas=0' --yes", 70); strings.Join(got, "\n") !=
		"   kmm failover mirror-maker.properties --flow 'A->B' \\\n       --fence-command 'kubectl scale deploy/x --replicas=0' --yes" {
		t.Errorf("continueCommand: %q", got)
	}
	if got := wrapAt("a b c d e f", 4, 10); got != "a b c\n    d e f" {
		t.Errorf("wrapAt: %q", got)
	}
}
