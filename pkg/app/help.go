package app

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/kerr"
)

// appHelpTemplate is urfave/cli's, with kmm's exit codes after it.
var appHelpTemplate = cli.AppHelpTemplate + "\n" + exitCodeHelp

// defaultFlagStringer is urfave/cli's own, taken before kmm replaces it.
var defaultFlagStringer = cli.FlagStringer

// flagString is urfave/cli's flag line without the noise: no "(default: false)" on switches, no
// "(default: 0s)"/"(default: 0)"/(default: "") for flags that are off unless set, and no second
// default when the usage text already states one.
func flagString(f cli.Flag) string {
	s := namePlaceholder(f, defaultFlagStringer(f))
	i := strings.LastIndex(s, " (default: ")
	if i < 0 || !strings.HasSuffix(s, ")") {
		return s
	}
	def := s[i+len(" (default: ") : len(s)-1]
	usage := s[:i]
	if tab := strings.Index(usage, "\t"); tab >= 0 {
		usage = usage[tab+1:]
	}
	switch {
	case def == "false", def == "0", def == "0s", def == `""`:
		return s[:i]
	case strings.Contains(usage, "(default ") || strings.Contains(usage, "(default:"):
		return s[:i]
	}
	return s
}

// namePlaceholder replaces urfave/cli's "value" placeholder (a flag whose usage names none in
// backticks) by one that says what to give: N for numbers, DURATION, else the flag's last word
// in capitals (--mode MODE, --log-format FORMAT).
func namePlaceholder(f cli.Flag, s string) string {
	tab := strings.Index(s, "\t")
	if tab < 0 || !strings.Contains(s[:tab], " value") {
		return s
	}
	names := f.Names()
	ph := "VALUE"
	switch f.(type) {
	case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag, *cli.Float64Flag, *cli.IntSliceFlag, *cli.Int64SliceFlag:
		ph = "N"
	case *cli.DurationFlag:
		ph = "DURATION"
	default:
		if len(names) > 0 {
			words := strings.Split(names[0], "-")
			ph = strings.ToUpper(words[len(words)-1])
		}
	}
	return strings.ReplaceAll(s[:tab], " value", " "+ph) + s[tab:]
}

// commandPaths returns the full names ("config check") of every command in the tree, leaves
// and parents, in order.
func commandPaths(cmds []*cli.Command, prefix string) []string {
	var out []string
	for _, c := range cmds {
		if c.Hidden {
			continue
		}
		p := strings.TrimSpace(prefix + " " + c.Name)
		out = append(out, p)
		out = append(out, commandPaths(c.Subcommands, p)...)
	}
	return out
}

// CommandPaths lists kmm's commands by full name ("status", "config check", ...), for tests
// that must cover every command (the secret grep, help goldens).
func CommandPaths() []string {
	io, _, _, _ := iostreams.Test()
	return commandPaths(newApp(io).Commands, "")
}

// suggest returns the candidates closest to s (edit distance ≤ 2, or a prefix).
func suggest(s string, candidates []string) []string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, c := range candidates {
		d := editDistance(s, c)
		if d <= 2 || (len(s) >= 3 && strings.HasPrefix(c, s)) {
			cs = append(cs, cand{c, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	var out []string
	for _, c := range cs {
		out = append(out, c.name)
	}
	return out
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// unknownCommand is the usage error for a mistyped command, with "did you mean".
func unknownCommand(prefix, name string, cmds []*cli.Command) error {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	full := strings.TrimSpace("kmm " + prefix)
	err := kerr.New(kerr.Usage, "unknown command %q for %q", name, full)
	if s := suggest(name, names); len(s) > 0 {
		return kerr.WithHint(err, fmt.Sprintf("did you mean '%s %s'?", full, s[0]))
	}
	return kerr.WithHint(err, fmt.Sprintf("run '%s --help' for the list of commands", full))
}

// prepareTree sets, on every command of the tree: flag errors as usage errors naming the
// command's full path; a parent's action refusing unknown subcommands with "did you mean".
func prepareTree(cmds []*cli.Command, prefix string) {
	for _, c := range cmds {
		path := strings.TrimSpace(prefix + " " + c.Name)
		if len(c.Subcommands) > 0 {
			c.HideHelpCommand = true // `kmm help config check` covers it (leaves need urfave's for --help)
		}
		if c.OnUsageError == nil {
			c.OnUsageError = usageErrorFor(path)
		}
		if len(c.Subcommands) > 0 && c.Action == nil {
			subs := c.Subcommands
			c.Action = func(ctx *cli.Context) error {
				if ctx.Args().Len() > 0 {
					return unknownCommand(path, ctx.Args().First(), subs)
				}
				return cli.ShowSubcommandHelp(ctx)
			}
		}
		prepareTree(c.Subcommands, path)
	}
}

func usageErrorFor(path string) cli.OnUsageErrorFunc {
	return func(_ *cli.Context, err error, _ bool) error {
		return kerr.WithHint(kerr.Wrap(kerr.Usage, err), "run 'kmm "+path+" --help'")
	}
}

// helpCommand is `kmm help [COMMAND [SUBCOMMAND]]`: the same text as `kmm COMMAND --help`.
func helpCommand(run func(ctx context.Context, args []string) error) *cli.Command {
	return cmdutil.WithExamples(&cli.Command{
		Name:            "help",
		Aliases:         []string{"h"},
		Usage:           "show the help of kmm or of a command",
		ArgsUsage:       "[COMMAND [SUBCOMMAND]]",
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			var args []string
			for _, a := range c.Args().Slice() {
				switch a {
				case "--":
				case "--help", "-h":
					return cli.ShowCommandHelp(c.Lineage()[1], "help")
				default:
					args = append(args, a)
				}
			}
			if len(args) == 0 {
				return cli.ShowAppHelp(c)
			}
			// Check the path first, so a mistyped topic is a usage error with a suggestion.
			cmds := c.App.Commands
			prefix := ""
			for _, a := range args {
				var found *cli.Command
				for _, cc := range cmds {
					if cc.HasName(a) && !cc.Hidden {
						found = cc
					}
				}
				if found == nil {
					return unknownCommand(prefix, a, cmds)
				}
				prefix = strings.TrimSpace(prefix + " " + found.Name)
				cmds = found.Subcommands
			}
			return run(c.Context, append(append([]string{"kmm"}, args...), "--help"))
		},
	}, cmdutil.Example{What: "the help of a subcommand", Cmd: "kmm help config check"})
}
