package app

import (
	"bytes"
	"context"
	"fmt"
	stdio "io"
	"reflect"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/output"
)

// appHelpTemplate is urfave/cli's, with kmm's exit codes after it.
var appHelpTemplate = cli.AppHelpTemplate + "\n" + exitCodeHelp

// defaultFlagStringer is urfave/cli's own, taken before kmm replaces it.
var defaultFlagStringer = cli.FlagStringer

// flagString is urfave/cli's flag line without the noise: no old names (cmdutil.OldNames), no
// "(default: false)" on switches, no "(default: 0s)"/"(default: 0)"/(default: "") for flags that
// are off unless set, and no second default when the usage text already states one.
func flagString(f cli.Flag) string {
	s := namePlaceholder(f, defaultFlagStringer(withoutOldNames(f)))
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

// withoutOldNames returns f, or a copy of it without the aliases that are old names.
func withoutOldNames(f cli.Flag) cli.Flag {
	names := f.Names()
	visible := cmdutil.VisibleNames(f)
	if len(visible) == len(names) {
		return f
	}
	v := reflect.ValueOf(f)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return f
	}
	cp := reflect.New(v.Elem().Type())
	cp.Elem().Set(v.Elem())
	aliases := cp.Elem().FieldByName("Aliases")
	if !aliases.IsValid() || !aliases.CanSet() {
		return f
	}
	aliases.Set(reflect.ValueOf(visible[1:]))
	if g, ok := cp.Interface().(cli.Flag); ok {
		return g
	}
	return f
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

// helpWriter is the app's Writer: where help goes, with the width it is fitted to.
type helpWriter struct {
	stdio.Writer
	width int
}

// helpWidth is the width help written to w is fitted to.
func helpWidth(w stdio.Writer) int {
	if hw, ok := w.(*helpWriter); ok && hw.width > 0 {
		return hw.width
	}
	return iostreams.DefaultWidth
}

// maxNameColumn is the widest the flag-name column of help gets: a longer name (a repeatable
// flag's "--fence-principal PRINCIPAL [ --fence-principal PRINCIPAL ]") has its usage below it.
const maxNameColumn = 32

// printHelp is kmm's help printer (cli.HelpPrinter): urfave/cli's templates with every line
// fitted to the terminal's width (COLUMNS, the terminal, else 100): the usage and description
// wrapped, the options as a two-column table whose usage column wraps, the examples' comments
// wrapped and their command lines continued with a backslash (still one shell command to copy).
func printHelp(w stdio.Writer, templ string, data any) {
	width := helpWidth(w)
	for _, t := range []string{`{{template "visibleFlagCategoryTemplate" .}}`, `{{template "visibleFlagTemplate" .}}`} {
		templ = strings.ReplaceAll(templ, t, `{{kmmFlags .VisibleFlags}}`)
	}
	var b bytes.Buffer
	cli.HelpPrinterCustom(&b, templ, data, map[string]any{
		"wrap":     func(s string, offset int) string { return wrapAt(s, offset, width) },
		"kmmFlags": func(flags []cli.Flag) string { return flagTable(flags, width) },
	})
	_, _ = stdio.WriteString(w, fitHelp(b.String(), width))
}

// wrapAt is urfave/cli's template function wrap: s starts at column offset (its first line is
// already indented there), its other lines are indented by offset and their own blanks.
func wrapAt(s string, offset, width int) string {
	pad := strings.Repeat(" ", offset)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			lines[i] = ""
			continue
		}
		own := l[:len(l)-len(strings.TrimLeft(l, " "))]
		wrapped := output.Wrap(pad+l, width, pad+own)
		if i == 0 {
			wrapped = strings.TrimPrefix(wrapped, pad)
		}
		lines[i] = wrapped
	}
	return strings.Join(lines, "\n")
}

// flagTable renders the OPTIONS section's lines: names, then the usage wrapped in its column.
func flagTable(flags []cli.Flag, width int) string {
	type row struct{ name, usage string }
	var rows []row
	col := 0
	for _, f := range flags {
		name, usage, _ := strings.Cut(f.String(), "\t")
		rows = append(rows, row{name, usage})
		if n := utf8.RuneCountInString(name); n <= maxNameColumn {
			col = max(col, n)
		}
	}
	indent := strings.Repeat(" ", 3+col+2)
	var b strings.Builder
	for _, r := range rows {
		b.WriteString("\n")
		n := utf8.RuneCountInString(r.name)
		if n > col {
			b.WriteString("   " + r.name + "\n")
			b.WriteString(output.Hang(indent, r.usage, width, indent))
			continue
		}
		b.WriteString(output.Hang("   "+r.name+strings.Repeat(" ", col-n+2), r.usage, width, indent))
	}
	return b.String()
}

// fitHelp fits what the templates leave wider than width: the EXAMPLES section (comments
// wrapped, commands continued with " \\"), and as a last resort any other long line (wrapped
// at its own indentation).
func fitHelp(s string, width int) string {
	lines := strings.Split(s, "\n")
	var out []string
	examples := false
	for _, l := range lines {
		switch {
		case l == "EXAMPLES:" || strings.HasSuffix(l, "\nEXAMPLES:"):
			examples = true
			out = append(out, l)
		case examples && strings.HasPrefix(l, "   # "):
			out = append(out, output.Hang("   # ", strings.TrimPrefix(l, "   # "), width, "   # "))
		case examples && strings.HasPrefix(l, "   ") && utf8.RuneCountInString(l) > width:
			out = append(out, continueCommand(strings.TrimPrefix(l, "   "), width)...)
		case examples && l != "" && !strings.HasPrefix(l, " "):
			examples = false // the next section
			out = append(out, output.Wrap(l, width, "   "))
		case utf8.RuneCountInString(l) > width:
			own := l[:len(l)-len(strings.TrimLeft(l, " "))]
			out = append(out, output.Wrap(l, width, own))
		default:
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// continueCommand splits a shell command line into lines of at most width columns, indented by
// 3 (the first) and 7 (the others), every line but the last ending in " \\". Quoted words
// ('a b', "a b") are never split.
func continueCommand(cmd string, width int) []string {
	words := shellWords(cmd)
	var lines []string
	cur := "  "
	first := true
	for _, w := range words {
		line := cur + " " + w
		if !first && utf8.RuneCountInString(line)+2 > width && strings.TrimSpace(cur) != "" {
			lines = append(lines, cur+" \\")
			cur = "      "
			line = cur + " " + w
		}
		cur, first = line, false
	}
	return append(lines, cur)
}

// shellWords splits a command line on blanks outside quotes.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			cur.WriteRune(r)
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
			cur.WriteRune(r)
		case r == ' ':
			if cur.Len() > 0 {
				words = append(words, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		words = append(words, cur.String())
	}
	return words
}
