package app

import (
	stdio "io"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/output"
)

// With -o json, a command that fails without having printed its document prints one JSON error
// document (output.ErrorDoc) on stdout, besides the message on stderr: a script reading stdout
// learns why (the exit code, the class, the cause and the hint) instead of reading nothing.
// A command that printed its document (status with a cluster down, verify and lag over a
// threshold, config check with errors: the document says why) or its own error event
// (replicate's NDJSON) gets none.

// metaJSONErrors is the cli.App metadata key under which the command path of a run with -o json
// is kept (set once its flags are parsed); metaArgs holds the arguments the app runs with.
const (
	metaJSONErrors = "kmm.json-errors"
	metaArgs       = "kmm.args"
)

// markJSONOutput makes every command with an -o/--output flag note, once its flags are parsed,
// whether -o json was asked for; when the parser refuses a flag, whether the arguments ask
// for it (the parser keeps nothing of a failed parse).
func markJSONOutput(cmds []*cli.Command, prefix string) {
	for _, c := range cmds {
		path := strings.TrimSpace(prefix + " " + c.Name)
		if hasOutputFlag(c.Flags) {
			before := c.Before
			c.Before = func(ctx *cli.Context) error {
				if ctx.String("output") == "json" {
					ctx.App.Metadata[metaJSONErrors] = "kmm " + path
				}
				if before != nil {
					return before(ctx)
				}
				return nil
			}
			onUsage := c.OnUsageError
			c.OnUsageError = func(ctx *cli.Context, err error, sub bool) error {
				if args, _ := ctx.App.Metadata[metaArgs].([]string); outputArg(args) == "json" {
					ctx.App.Metadata[metaJSONErrors] = "kmm " + path
				}
				if onUsage != nil {
					return onUsage(ctx, err, sub)
				}
				return err
			}
		}
		markJSONOutput(c.Subcommands, path)
	}
}

// outputArg is the value the last -o/--output of args (before "--") gives, or "".
func outputArg(args []string) string {
	out := ""
	for i := 0; i < len(args); i++ {
		s := args[i]
		if s == "--" {
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(s, "-"), "=")
		if !strings.HasPrefix(s, "-") || (name != "o" && name != "output") {
			continue
		}
		if !hasVal && i+1 < len(args) {
			i++
			val = args[i]
		}
		out = val
	}
	return out
}

// noteJSONFromArgs notes -o json for a run refused before its flags were parsed: the command
// args name (after the global flags) has an output flag and args give it json.
func noteJSONFromArgs(a *cli.App, args []string) {
	i := 1
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "-" && args[i] != "--" {
		if takesValue(a.Flags, args[i]) {
			i++
		}
		i++
	}
	cmd, path, i := commandAt(a, args, i)
	if cmd == nil {
		return
	}
	if hasOutputFlag(cmd.Flags) && outputArg(args[i:]) == "json" {
		a.Metadata[metaJSONErrors] = "kmm " + path
	}
}

func hasOutputFlag(flags []cli.Flag) bool {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == "output" {
				return true
			}
		}
	}
	return false
}

// jsonErrorCommand is the command path ("kmm verify") of a run that asked for -o json, or "".
func jsonErrorCommand(a *cli.App) string {
	s, _ := a.Metadata[metaJSONErrors].(string)
	return s
}

// watchedOut counts what a command writes to stdout.
type watchedOut struct {
	mu      sync.Mutex
	w       stdio.Writer
	written bool
}

func (o *watchedOut) Write(p []byte) (int, error) {
	o.mu.Lock()
	if len(p) > 0 {
		o.written = true
	}
	o.mu.Unlock()
	return o.w.Write(p)
}

func (o *watchedOut) wrote() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.written
}

// printJSONError writes err's JSON error document to out.
func printJSONError(out stdio.Writer, command string, err error) {
	_ = output.WriteLine(out, cmdutil.NewErrorDoc(command, ExitCode(err), err, time.Now()))
}
