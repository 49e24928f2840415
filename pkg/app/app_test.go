package app

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/kerr"
)

func run(args ...string) (int, string, string) {
	io, _, out, errOut := iostreams.Test()
	code := Run(context.Background(), append([]string{"kmm"}, args...), io)
	return code, out.String(), errOut.String()
}

func TestHelpListsCommandsAndExitCodes(t *testing.T) {
	code, out, _ := run("--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"replicate", "status", "lag", "translate-offsets", "failover", "failback", "verify", "config",
		"EXIT CODES", "130  interrupted", "4    cluster unreachable", "5    stopped incomplete"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help lacks %q:\n%s", want, out)
		}
	}
}

// Every run in one process prints the exit-code section once (it was appended to urfave/cli's
// global template by each app).
func TestHelpTwiceInOneProcess(t *testing.T) {
	for i := 0; i < 3; i++ {
		_, out, _ := run("--help")
		if n := strings.Count(out, "EXIT CODES"); n != 1 {
			t.Fatalf("run %d: the exit-code section appears %d times:\n%s", i+1, n, out)
		}
	}
	if strings.Contains(cli.AppHelpTemplate, "EXIT CODES") {
		t.Fatal("urfave/cli's global template was changed")
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := run("--version")
	if code != 0 || !strings.HasPrefix(out, "kmm ") || !strings.Contains(out, "librdkafka 2.11.1") || !strings.Contains(out, "go1.") {
		t.Fatalf("exit %d, %q", code, out)
	}
}

// failback is built: without --yes and without a terminal it refuses before reading anything
// (exit 2); an unknown --stranded mode is a usage error.
func TestFailbackBuilt(t *testing.T) {
	if code, out, errOut := run("failback", "x.properties"); code != 2 || out != "" || !strings.Contains(errOut, "--yes") {
		t.Errorf("failback without --yes: exit %d stdout %q stderr %q", code, out, errOut)
	}
	if code, _, errOut := run("failback", "x.properties", "--stranded", "drop", "--yes"); code != 2 || !strings.Contains(errOut, "quarantine, skip or deliver") {
		t.Errorf("failback --stranded drop: exit %d stderr %q", code, errOut)
	}
}

// failover is built: without --yes and without a terminal it refuses before reading anything
// (exit 2); its rehearse mode is not built yet (exit 1).
func TestFailoverBuilt(t *testing.T) {
	if code, out, errOut := run("failover", "x.properties"); code != 2 || out != "" || !strings.Contains(errOut, "--yes") {
		t.Errorf("failover without --yes: exit %d stdout %q stderr %q", code, out, errOut)
	}
	// Every mode is built: rehearse gets as far as reading the (missing) file; an unknown mode is
	// a usage error naming it.
	if code, _, errOut := run("failover", "x.properties", "--mode", "rehearse", "--yes"); code != 2 || strings.Contains(errOut, "not implemented") || !strings.Contains(errOut, "x.properties does not exist") {
		t.Errorf("failover --mode rehearse: exit %d stderr %q", code, errOut)
	}
	if code, _, errOut := run("failover", "x.properties", "--mode", "drill", "--yes"); code != 2 || !strings.Contains(errOut, `--mode "drill": unknown`) {
		t.Errorf("failover --mode drill: exit %d stderr %q", code, errOut)
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	for _, args := range [][]string{{"--no-such-flag"}, {"frobnicate"}, {"--color", "pink", "lag"}, {"--log-level", "loud", "lag"}} {
		code, out, errOut := run(args...)
		if code != 2 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
		if strings.Contains(out, "error") {
			t.Errorf("%v: error text on stdout: %q", args, out)
		}
	}
}

func TestExitCodeTable(t *testing.T) {
	cases := map[int]error{
		0: nil, 1: kerr.New(kerr.Failure, "x"), 2: kerr.New(kerr.Usage, "x"), 3: kerr.New(kerr.CheckFailed, "x"),
		4: kerr.New(kerr.Unreachable, "x"), 5: kerr.New(kerr.Incomplete, "x"), 130: kerr.New(kerr.Interrupted, "x"),
	}
	for want, err := range cases {
		if got := ExitCode(err); got != want {
			t.Errorf("ExitCode(%v) = %d, want %d", err, got, want)
		}
	}
	if ExitCode(context.Canceled) != 130 {
		t.Error("context.Canceled should map to 130")
	}
}

func TestReorderArgs(t *testing.T) {
	a := &cli.App{Flags: []cli.Flag{&cli.StringFlag{Name: "log-level"}}, Commands: []*cli.Command{{
		Name: "config", Subcommands: []*cli.Command{{Name: "check", Flags: []cli.Flag{
			&cli.StringFlag{Name: "clusters"}, &cli.StringFlag{Name: "output", Aliases: []string{"o"}}, &cli.BoolFlag{Name: "strict"}}}}}}}
	for _, c := range []struct{ in, want []string }{
		{[]string{"kmm", "--log-level", "debug", "config", "check", "mm2.properties", "--clusters", "B", "-o", "json", "--strict"},
			[]string{"kmm", "--log-level", "debug", "config", "check", "--clusters", "B", "-o", "json", "--strict", "--", "mm2.properties"}},
		{[]string{"kmm", "config", "check", "--clusters=B", "a", "--", "--weird-file"},
			[]string{"kmm", "config", "check", "--clusters=B", "--", "a", "--weird-file"}},
		{[]string{"kmm", "unknown", "x", "--y"}, []string{"kmm", "unknown", "x", "--y"}},
		// MM2's own order and nargs: the file, then --clusters with several words.
		{[]string{"kmm", "config", "check", "mm2.properties", "--clusters", "B", "C", "--strict"},
			[]string{"kmm", "config", "check", "--clusters", "B,C", "--strict", "--", "mm2.properties"}},
	} {
		if got := reorderArgs(a, c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("reorder(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
