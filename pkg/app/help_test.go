package app

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/output/goldentest"
)

func tree() []*cli.Command {
	io, _, _, _ := iostreams.Test()
	return newApp(io).Commands
}

// TestEveryCommandHasExamples walks the command tree: every command kmm ships renders an
// EXAMPLES section in its help.
func TestEveryCommandHasExamples(t *testing.T) {
	var walk func(prefix string, cs []*cli.Command)
	n := 0
	walk = func(prefix string, cs []*cli.Command) {
		for _, c := range cs {
			p := strings.TrimSpace(prefix + " " + c.Name)
			walk(p, c.Subcommands)
			n++
			if !cmdutil.HasExamples(c) {
				t.Errorf("kmm %s has no examples: wrap it in cmdutil.WithExamples", p)
				continue
			}
			code, out, _ := run(append(strings.Fields(p), "--help")...)
			if code != 0 || !strings.Contains(out, "\nEXAMPLES:\n   ") || !strings.Contains(out, "kmm "+p) {
				t.Errorf("kmm %s --help: exit %d, no examples of itself:\n%s", p, code, out)
			}
		}
	}
	walk("", tree())
	if n < 8 {
		t.Fatalf("only %d commands walked", n)
	}
}

// TestHelpGolden pins the help text of every command (rewrite with -update-golden).
func TestHelpGolden(t *testing.T) {
	paths := append([]string{""}, CommandPaths()...)
	for _, p := range paths {
		args := append(strings.Fields(p), "--help")
		code, out, errOut := run(args...)
		if code != 0 || errOut != "" {
			t.Errorf("kmm %s: exit %d, stderr %q", strings.Join(args, " "), code, errOut)
		}
		name := "help/kmm" + strings.ReplaceAll(" "+p, " ", "-") + ".txt"
		goldentest.Golden(t, name, []byte(out))
		// kmm help COMMAND shows the same text.
		if p != "" {
			code, out2, _ := run(append([]string{"help"}, strings.Fields(p)...)...)
			if code != 0 || out2 != out {
				t.Errorf("kmm help %s differs from kmm %s --help (exit %d):\n%s", p, p, code, out2)
			}
		}
		for _, bad := range []string{"(default: false)", "(default: 0s)", "(default: 0)", "value value", "kmm replicate --listen   "} {
			if strings.Contains(out, bad) {
				t.Errorf("kmm %s --help contains %q", p, bad)
			}
		}
		for _, l := range strings.Split(out, "\n") {
			if flag, _, _ := strings.Cut(strings.TrimSpace(l), "  "); strings.HasPrefix(flag, "--") && strings.Contains(flag+" ", " value ") {
				t.Errorf("kmm %s --help: urfave/cli's placeholder 'value' in %q", p, flag)
			}
		}
	}
}

func TestMistypedCommandsSuggest(t *testing.T) {
	for _, c := range []struct {
		args []string
		hint string
	}{
		{[]string{"config", "chek", "x.properties"}, "did you mean 'kmm config check'?"},
		{[]string{"statsu"}, "did you mean 'kmm status'?"},
		{[]string{"help", "config", "explian"}, "did you mean 'kmm config explain'?"},
		{[]string{"translate"}, "did you mean 'kmm translate-offsets'?"},
	} {
		code, out, errOut := run(c.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, c.hint) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, out, errOut, c.hint)
		}
	}
}

func TestUsageHintNamesTheFullCommand(t *testing.T) {
	for _, p := range []string{"config check", "status", "replicate"} {
		code, _, errOut := run(strings.Fields(p)...)
		if code != 2 || !strings.Contains(errOut, "usage: kmm "+p+" mirror-maker.properties") {
			t.Errorf("%s: exit %d, %q", p, code, errOut)
		}
	}
	code, _, errOut := run("config", "explain", "--no-such")
	if code != 2 || !strings.Contains(errOut, "kmm config explain --help") {
		t.Errorf("exit %d, %q", code, errOut)
	}
}

func TestGlobalFlagsAfterTheCommand(t *testing.T) {
	// --color after the command is accepted (and validated) as a global flag.
	code, _, errOut := run("config", "check", "x.properties", "--color", "pink")
	if code != 2 || !strings.Contains(errOut, "--color must be auto, always or never") {
		t.Errorf("exit %d, %q", code, errOut)
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "mm2.properties")
	if err := os.WriteFile(f, []byte("clusters = A, B\nA.bootstrap.servers = 127.0.0.1:1\nB.bootstrap.servers = 127.0.0.1:1\nA->B.enabled = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run("config", "check", f, "--log-level", "debug", "-o", "json", "--color", "never")
	if code != 0 || !strings.HasPrefix(out, "{") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestCompletionScripts(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		code, out, errOut := run("completion", sh)
		if code != 0 || errOut != "" {
			t.Fatalf("%s: exit %d, %q", sh, code, errOut)
		}
		for _, want := range []string{"translate-offsets", "check", "max-lag-time"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s completion lacks %q", sh, want)
			}
		}
		if sh == "bash" {
			if _, err := exec.LookPath("bash"); err == nil {
				cmd := exec.Command("bash", "-c", out+"\nCOMP_WORDS=(kmm config check --cl); COMP_CWORD=3; _kmm; echo \"${COMPREPLY[*]}\"")
				got, err := cmd.CombinedOutput()
				if err != nil || strings.TrimSpace(string(got)) != "--clusters" {
					t.Errorf("bash completion of 'kmm config check --cl': %q (%v)", got, err)
				}
			}
		}
	}
	// Values: the words of --mode, --level, --fence, --stranded and -o, files for file flags
	// and file arguments, nothing for a value kmm cannot guess.
	if _, err := exec.LookPath("bash"); err == nil {
		_, script, _ := run("completion", "bash")
		dir := t.TempDir()
		for _, f := range []string{"mm2.properties", "drill.toml"} {
			if err := os.WriteFile(filepath.Join(dir, f), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range []struct{ line, want string }{
			{"kmm failover mm2.properties --mode ''", "planned emergency rehearse"},
			{"kmm verify --level ''", "metadata sample full"},
			{"kmm failover --fence ''", "none acl hook"},
			{"kmm failback --stranded ''", "quarantine skip deliver"},
			{"kmm status -o ''", "table json"},
			{"kmm replicate --output j", "json"},
			{"kmm --log-level ''", "debug info warn error"},
			{"kmm --log-level debug sta", "status"},
			{"kmm config ''", "check explain"},
			{"kmm completion ''", "bash zsh fish"},
			{"kmm config check ''", "drill.toml mm2.properties"},
			{"kmm failover --report ''", "drill.toml mm2.properties"},
			{"kmm failback --drill d", "drill.toml"},
			{"kmm verify --junit mm", "mm2.properties"},
			{"kmm failover --flow ''", ""},
			{"kmm lag mm2.properties --max-lag", "--max-lag-records --max-lag-time"},
		} {
			cmd := exec.Command("bash", "-c", script+"\nCOMP_WORDS=("+c.line+"); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _kmm; printf '%s\\n' \"${COMPREPLY[@]}\" | sort | xargs")
			cmd.Dir = dir
			got, err := cmd.CombinedOutput()
			if err != nil || strings.TrimSpace(string(got)) != sortedWords(c.want) {
				t.Errorf("bash completion of %q: %q (%v), want %q", c.line, got, err, sortedWords(c.want))
			}
		}
	}
	_, fish, _ := run("completion", "fish")
	for _, want := range []string{"-n '__fish_seen_subcommand_from failover' -l mode -x -a 'planned emergency rehearse'",
		"-n '__fish_seen_subcommand_from verify' -l level -x -a 'metadata sample full'",
		"-n '__fish_seen_subcommand_from failback' -l stranded -x -a 'quarantine skip deliver'",
		"-n '__fish_seen_subcommand_from failback' -l fence -x -a 'none acl hook'",
		"-n '__fish_seen_subcommand_from status' -l output -s o -x -a 'table json'",
		"-n '__fish_seen_subcommand_from failback' -l report -r -F", "-n '__fish_seen_subcommand_from failover' -l drill -r -F",
		"-n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'"} {
		if !strings.Contains(fish, want) {
			t.Errorf("fish completion lacks %q", want)
		}
	}
	if code, _, _ := run("completion", "powershell"); code != 2 {
		t.Errorf("unknown shell: exit %d, want 2", code)
	}
}

func sortedWords(s string) string {
	w := strings.Fields(s)
	sort.Strings(w)
	return strings.Join(w, " ")
}
