// Package app is kmm's command-line front: the urfave/cli application, global flags, the signal
// context and the one table that maps errors to exit codes. Nothing else in kmm calls os.Exit.
package app

import (
	"context"
	"errors"
	"fmt"
	stdio "io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/pkg/buildinfo"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/cmd/replicatecmd"
	"github.com/kmmproject/kmm/pkg/groupprobe"
	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/rdkafka"
	"github.com/kmmproject/kmm/pkg/whoami"
)

// Exit codes. Documented in `kmm --help` and README ("Exit codes"); ExitCode is the only mapping.
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitUsage       = 2
	ExitCheckFailed = 3
	ExitUnreachable = 4
	ExitIncomplete  = 5
	ExitInterrupted = 130
)

// exitCodeHelp is printed by `kmm --help`.
const exitCodeHelp = `EXIT CODES:
   0    ok
   1    runtime failure
   2    usage or configuration error (nothing was written to any cluster)
   3    check failed (verify mismatch, lag over threshold, unhealthy flow, refused precondition)
   4    cluster unreachable, or authentication/TLS failure
   5    stopped incomplete: replicate's drain after SIGINT/SIGTERM hit --shutdown-timeout with
        records not yet acknowledged by the target (nothing is lost: they are copied again on
        the next start, as progress is stored only for acknowledged records)
   130  interrupted (SIGINT/SIGTERM)
`

// ExitCode maps an error returned by a command to the process exit code.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	if errors.Is(err, context.Canceled) && kerr.KindOf(err) == kerr.Failure {
		return ExitInterrupted
	}
	switch kerr.KindOf(err) {
	case kerr.Usage:
		return ExitUsage
	case kerr.CheckFailed:
		return ExitCheckFailed
	case kerr.Unreachable:
		return ExitUnreachable
	case kerr.Interrupted:
		return ExitInterrupted
	case kerr.Incomplete:
		return ExitIncomplete
	default:
		return ExitFailure
	}
}

// Main runs kmm with args (args[0] is the program name) and returns the exit code.
func Main(ctx context.Context, args []string, io *iostreams.IOStreams) int {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, args, io)
}

// Run is Main without signal handling (tests).
func Run(ctx context.Context, args []string, io *iostreams.IOStreams) int {
	return runWith(ctx, args, io, rdkafka.Opener{})
}

// runWith is Run with the clusters opened by clusters (tests wrap librdkafka's opener to bound
// how long they wait for a cluster that is known not to answer).
func runWith(ctx context.Context, args []string, io *iostreams.IOStreams, clusters cluster.Opener) int {
	out := &watchedOut{w: io.Out}
	io.Out = out
	defer func() { io.Out = out.w }()
	a := newAppWith(io, clusters)
	args = reorderArgs(a, args)
	a.Metadata[metaArgs] = args
	err := checkFlagValues(a, args)
	if err == nil {
		err = a.RunContext(ctx, args)
	} else {
		noteJSONFromArgs(a, args) // refused before urfave/cli parsed anything
	}
	err = interrupted(ctx, err)
	if err != nil {
		if cmd := jsonErrorCommand(a); cmd != "" && !out.wrote() {
			printJSONError(out.w, cmd, err)
		}
		printError(io, err)
	}
	if ll, ok := io.ErrOut.(*iostreams.LogLines); ok {
		ll.Flush()
	}
	return ExitCode(err)
}

// interrupted is how Ctrl-C reaches every command: the signal cancels the context the command
// runs under (c.Context); whatever the interrupted command then returns (a cancelled call, a
// timeout, a half-read snapshot) ends as exit 130. A command that finishes its work cleanly
// after a signal (replicate's drain) returns nil and exits 0; usage errors stay exit 2, and an
// incomplete stop (kerr.Incomplete) stays exit 5.
func interrupted(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	switch kerr.KindOf(err) {
	case kerr.Failure, kerr.Unreachable, kerr.CheckFailed:
		// what an interrupted wait or a half-collected snapshot looks like
		return kerr.New(kerr.Interrupted, "interrupted")
	}
	return err // usage errors stay 2; replicate's bounded stop keeps its own outcome (5)
}

func printError(io *iostreams.IOStreams, err error) {
	msg := err.Error()
	if ll, ok := io.ErrOut.(*iostreams.LogLines); ok {
		// --log-format json: one record, the hint an attribute of it.
		ll.Flush()
		attrs := []any{"exit_code", ExitCode(err)}
		if h := kerr.HintOf(err); h != "" {
			attrs = append(attrs, "hint", h)
		}
		ll.Logger().Error(msg, attrs...)
		return
	}
	fmt.Fprintf(io.ErrOut, "kmm: error: %s\n", msg)
	if h := kerr.HintOf(err); h != "" {
		for _, line := range strings.Split(h, "\n") {
			fmt.Fprintf(io.ErrOut, "  hint: %s\n", line)
		}
	}
}

// VersionString is what `kmm --version` prints.
func VersionString() string {
	_, rdk := rdkafka.LibraryVersion()
	return fmt.Sprintf("kmm %s (commit %s, %s, librdkafka %s)", buildinfo.Version, buildinfo.Commit, runtime.Version(), rdk)
}

func newApp(io *iostreams.IOStreams) *cli.App { return newAppWith(io, rdkafka.Opener{}) }

func newAppWith(io *iostreams.IOStreams, clusters cluster.Opener) *cli.App {
	logs := &logging{IO: io}
	cf := &cmdutil.Factory{IO: io, Logger: logs.Logger, Clock: time.Now, Who: whoami.Who, Clusters: clusters, Groups: groupprobe.Prober{}, Getenv: os.Getenv,
		Replicate: replicatecmd.RunFlows, ExitCode: ExitCode}
	a := &cli.App{
		Name:                 "kmm",
		Usage:                "failover-focused Kafka cross-cluster replication, MirrorMaker 2 compatible",
		UsageText:            "kmm [global options] command [command options] [arguments...]",
		HideVersion:          true,
		Metadata:             map[string]any{},
		Writer:               &helpWriter{Writer: io.Out, width: io.Width()},
		ErrWriter:            io.ErrOut,
		EnableBashCompletion: false,
		ExitErrHandler:       func(*cli.Context, error) {}, // never let urfave/cli call os.Exit
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "version", Usage: "print kmm, Go and librdkafka versions"},
			&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error"},
			&cli.StringFlag{Name: "log-format", Value: "text", Usage: "text or json"},
			&cli.StringFlag{Name: "color", Value: "auto", Usage: "auto, always or never (NO_COLOR is honoured)"},
		},
		Before: func(c *cli.Context) error {
			switch m := c.String("color"); m {
			case "auto", "always", "never":
				io.SetColorMode(m)
			default:
				return kerr.New(kerr.Usage, "--color must be auto, always or never, not %q", m)
			}
			logs.LogLevel, logs.LogFormat = c.String("log-level"), c.String("log-format")
			if err := logs.validate(); err != nil {
				return err
			}
			logs.setup()
			return nil
		},
		Action: func(c *cli.Context) error {
			if c.Bool("version") {
				fmt.Fprintln(io.Out, VersionString())
				return nil
			}
			if c.Args().Len() > 0 {
				return unknownCommand("", c.Args().First(), c.App.Commands)
			}
			return cli.ShowAppHelp(c)
		},
		OnUsageError:          usageError,
		HideHelpCommand:       true,
		CustomAppHelpTemplate: appHelpTemplate,
	}
	a.Commands = append(commands(cf),
		helpCommand(func(ctx context.Context, args []string) error { return a.RunContext(ctx, reorderArgs(a, args)) }),
		completionCommand(func() stdio.Writer { return io.Out }, func() []*cli.Command { return a.Commands }))
	// kmm's own help command hides urfave/cli's, which then no longer adds --help: add it back.
	a.Flags = append(a.Flags, cli.HelpFlag)
	cli.FlagStringer = flagString
	cli.HelpPrinter = printHelp
	prepareTree(a.Commands, "")
	markJSONOutput(a.Commands, "")
	return a
}

func usageError(_ *cli.Context, err error, _ bool) error {
	return kerr.WithHint(kerr.Wrap(kerr.Usage, err), "run 'kmm --help' or 'kmm COMMAND --help'")
}

// reorderArgs lets flags follow positional arguments (MirrorMaker's own order:
// `kmm replicate mm2.properties --clusters B`). urfave/cli v2 stops parsing flags at the first
// positional argument, so flags found after it are moved before it. "--" ends reordering.
func reorderArgs(a *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	i := 1
	// Global flags stay before the command.
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		out = append(out, args[i])
		if takesValue(a.Flags, args[i]) && i+1 < len(args) {
			out = append(out, args[i+1])
			i++
		}
		i++
	}
	if i >= len(args) {
		return out
	}
	globalEnd := len(out)
	cmd := a.Command(args[i])
	if cmd == nil {
		return append(out, args[i:]...)
	}
	out = append(out, args[i])
	i++
	// Descend into subcommands (kmm config check ...).
	for i < len(args) && len(cmd.Subcommands) > 0 {
		sub := findSub(cmd, args[i])
		if sub == nil {
			break
		}
		out = append(out, args[i])
		cmd = sub
		i++
	}
	var flags, pos []string
	for ; i < len(args); i++ {
		s := args[i]
		if s == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if strings.HasPrefix(s, "-") && s != "-" && !hasFlag(cmd.Flags, s) && hasFlag(a.Flags, s) && !hasFlag([]cli.Flag{cli.HelpFlag}, s) {
			// A global flag after the command (kmm status --log-level debug ...): move it before.
			glob := []string{s}
			if takesValue(a.Flags, s) && i+1 < len(args) {
				glob = append(glob, args[i+1])
				i++
			}
			out = append(out[:globalEnd:globalEnd], append(glob, out[globalEnd:]...)...)
			globalEnd += len(glob)
			continue
		}
		if strings.HasPrefix(s, "-") && s != "-" {
			flags = append(flags, s)
			if takesValue(cmd.Flags, s) && i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
				// MM2's `mm2.properties --clusters B C`: after the file, --clusters takes every
				// following word (argparse nargs='+').
				if len(pos) > 0 && strings.TrimLeft(s, "-") == "clusters" {
					for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
						flags[len(flags)-1] += "," + args[i+1]
						i++
					}
				}
			}
			continue
		}
		pos = append(pos, s)
	}
	out = append(out, flags...)
	if len(pos) > 0 {
		out = append(out, "--")
		out = append(out, pos...)
	}
	return out
}

// commandAt resolves the command named by args[i] (after the global flags) and the subcommands
// that follow it: the command, its path ("config explain") and the index of the first argument
// after them. cmd is nil when args[i] names no command.
func commandAt(a *cli.App, args []string, i int) (cmd *cli.Command, path string, next int) {
	if i >= len(args) {
		return nil, "", i
	}
	if cmd = a.Command(args[i]); cmd == nil {
		return nil, "", i
	}
	path = cmd.Name
	for i++; i < len(args) && len(cmd.Subcommands) > 0; i++ {
		sub := findSub(cmd, args[i])
		if sub == nil {
			break
		}
		cmd, path = sub, path+" "+sub.Name
	}
	return cmd, path, i
}

func findSub(c *cli.Command, name string) *cli.Command {
	for _, s := range c.Subcommands {
		if s.HasName(name) {
			return s
		}
	}
	return nil
}

// takesValue reports whether the flag token s names a flag that needs a separate value.
func takesValue(flags []cli.Flag, s string) bool {
	if strings.Contains(s, "=") {
		return false
	}
	name := strings.TrimLeft(s, "-")
	for _, fl := range flags {
		for _, n := range fl.Names() {
			if n != name {
				continue
			}
			if bf, ok := fl.(*cli.BoolFlag); ok && bf != nil {
				return false
			}
			return true
		}
	}
	return false
}

// hasFlag reports whether the flag token s (-x, --name, --name=v) names one of flags.
func hasFlag(flags []cli.Flag, s string) bool {
	name := strings.TrimLeft(s, "-")
	if k := strings.IndexByte(name, '='); k >= 0 {
		name = name[:k]
	}
	for _, fl := range flags {
		for _, n := range fl.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}
