package app

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/kerr"
)

// completionCommand is `kmm completion bash|zsh|fish`: a static completion script generated
// from the command tree (commands, subcommands and their flags).
func completionCommand(out func() io.Writer, tree func() []*cli.Command) *cli.Command {
	return cmdutil.WithExamples(&cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script (bash, zsh or fish)",
		ArgsUsage: "bash|zsh|fish",
		// urfave/cli would add its help subcommand to the running command, and the script list it.
		HideHelpCommand: true,
		Action: func(c *cli.Context) error {
			if c.Args().Len() != 1 {
				return cmdutil.Usagef("e.g. kmm completion bash", "completion needs one shell: bash, zsh or fish")
			}
			w := out()
			switch sh := c.Args().First(); sh {
			case "bash":
				return bashCompletion(w, c.App.Flags, tree())
			case "zsh":
				fmt.Fprintln(w, "#compdef kmm\nautoload -U +X bashcompinit && bashcompinit")
				return bashCompletion(w, c.App.Flags, tree())
			case "fish":
				return fishCompletion(w, c.App.Flags, tree())
			default:
				return kerr.New(kerr.Usage, "completion: unknown shell %q (bash, zsh or fish)", sh)
			}
		},
	},
		cmdutil.Example{What: "bash, for this shell", Cmd: "source <(kmm completion bash)"},
		cmdutil.Example{What: "zsh, installed", Cmd: `kmm completion zsh > "${fpath[1]}/_kmm"`},
		cmdutil.Example{What: "fish, installed", Cmd: "kmm completion fish > ~/.config/fish/completions/kmm.fish"})
}

func flagWords(flags []cli.Flag) []string {
	var out []string
	for _, f := range flags {
		for _, n := range cmdutil.VisibleNames(f) {
			out = append(out, cmdutil.Dashed(n))
		}
	}
	sort.Strings(out)
	return out
}

func visible(cmds []*cli.Command) []*cli.Command {
	var out []*cli.Command
	for _, c := range cmds {
		if !c.Hidden {
			out = append(out, c)
		}
	}
	return out
}

func names(cmds []*cli.Command) string {
	var n []string
	for _, c := range visible(cmds) {
		n = append(n, c.Name)
	}
	return strings.Join(n, " ")
}

// valueKind says what completes the value of a flag: "choices" (its words, cmdutil.FlagChoices),
// "file" (its placeholder is FILE...: --config, --report, --drill, --junit) or "any" (nothing
// kmm can guess: a flow, a group, a duration). "" for a switch.
func valueKind(f cli.Flag) string {
	if !takesValueFlag(f) {
		return ""
	}
	if len(cmdutil.FlagChoices(f.Names()[0])) > 0 {
		return "choices"
	}
	name, _, _ := strings.Cut(flagString(f), "\t")
	if fields := strings.Fields(name); len(fields) > 1 && strings.HasPrefix(fields[1], "FILE") {
		return "file"
	}
	return "any"
}

// casePattern is a bash case pattern of f's visible names: --output|-o.
func casePattern(f cli.Flag) string {
	var ps []string
	for _, n := range cmdutil.VisibleNames(f) {
		ps = append(ps, cmdutil.Dashed(n))
	}
	return strings.Join(ps, "|")
}

// bashValueCases completes the value after a flag of flags: its choices, files, or nothing.
func bashValueCases(b *strings.Builder, flags []cli.Flag, indent string) {
	for _, f := range flags {
		switch valueKind(f) {
		case "choices":
			fmt.Fprintf(b, "%s%s) words=%q ;;\n", indent, casePattern(f), strings.Join(cmdutil.FlagChoices(f.Names()[0]), " "))
		case "file":
			fmt.Fprintf(b, "%s%s) files=1 ;;\n", indent, casePattern(f))
		case "any":
			fmt.Fprintf(b, "%s%s) return 0 ;;\n", indent, casePattern(f))
		}
	}
}

// argWords are the words a command's positional argument takes: its subcommands, the choices its
// ArgsUsage lists (bash|zsh|fish), the commands (help); "" with files true for a file argument.
func argWords(c *cli.Command, all []*cli.Command) (words string, files bool) {
	switch {
	case len(visible(c.Subcommands)) > 0:
		return names(c.Subcommands), false
	case c.Name == "help":
		return names(all), false
	case c.ArgsUsage != "" && strings.Trim(c.ArgsUsage, "abcdefghijklmnopqrstuvwxyz|") == "":
		return strings.ReplaceAll(c.ArgsUsage, "|", " "), false
	}
	return "", true
}

func bashCompletion(w io.Writer, global []cli.Flag, cmds []*cli.Command) error {
	var b strings.Builder
	b.WriteString("# kmm completion for bash (kmm completion bash)\n_kmm() {\n")
	b.WriteString("  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"\" path=\"\" words=\"\" files=0 w i skip=0 started=0\n")
	b.WriteString("  ((COMP_CWORD > 1)) && prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n")
	// The command path: the words that are not flags, skipping the values of the global flags
	// given before the command (kmm --log-level debug status ...).
	var globalValued []string
	for _, f := range global {
		if valueKind(f) != "" {
			globalValued = append(globalValued, casePattern(f))
		}
	}
	b.WriteString("  for ((i = 1; i < COMP_CWORD; i++)); do\n    w=\"${COMP_WORDS[i]}\"\n")
	b.WriteString("    if ((skip)); then skip=0; continue; fi\n    case \"$w\" in\n")
	if len(globalValued) > 0 {
		fmt.Fprintf(&b, "      %s) ((started)) || skip=1 ;;\n", strings.Join(globalValued, "|"))
	}
	b.WriteString("      -*) ;;\n      *) path=\"${path:+$path }$w\"; started=1 ;;\n    esac\n  done\n")
	// The value of a global flag, anywhere.
	b.WriteString("  case \"$prev\" in\n")
	bashValueCases(&b, global, "    ")
	b.WriteString("  esac\n")
	b.WriteString("  if [[ -z $words ]] && ((files == 0)); then\n  case \"$path\" in\n")
	fmt.Fprintf(&b, "    \"\") if [[ $cur == -* ]]; then words=%q; else words=%q; fi ;;\n", strings.Join(flagWords(global), " "), names(cmds))
	// Longest paths first so "config check" wins over "config".
	type entry struct {
		depth int
		text  string
	}
	var entries []entry
	var collect func(prefix string, cs []*cli.Command)
	collect = func(prefix string, cs []*cli.Command) {
		for _, c := range visible(cs) {
			p := strings.TrimSpace(prefix + " " + c.Name)
			var e strings.Builder
			fmt.Fprintf(&e, "    %q|%q*)\n      case \"$prev\" in\n", p, p+" ")
			bashValueCases(&e, c.Flags, "        ")
			words, files := argWords(c, cmds)
			argument := fmt.Sprintf("words=%q", words)
			if files {
				argument = "files=1"
			}
			if len(visible(c.Subcommands)) > 0 {
				// Only right after the parent: its subcommands (a path past them matched a longer entry).
				argument = fmt.Sprintf("[[ $path == %q ]] && words=%q", p, words)
			}
			fmt.Fprintf(&e, "        *) if [[ $cur == -* ]]; then words=%q; else %s; fi ;;\n      esac ;;\n", strings.Join(flagWords(c.Flags), " "), argument)
			entries = append(entries, entry{strings.Count(p, " "), e.String()})
			collect(p, c.Subcommands)
		}
	}
	collect("", cmds)
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].depth > entries[j].depth })
	for _, e := range entries {
		b.WriteString(e.text)
	}
	b.WriteString("  esac\n  fi\n")
	b.WriteString("  if ((files)); then\n    compopt -o filenames 2>/dev/null\n    mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n")
	b.WriteString("  else\n    mapfile -t COMPREPLY < <(compgen -W \"$words\" -- \"$cur\")\n  fi\n}\ncomplete -F _kmm kmm\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// fishFlag is the fish completion line of flag f under condition cond.
func fishFlag(b *strings.Builder, f cli.Flag, cond string) {
	fmt.Fprintf(b, "complete -c kmm")
	if cond != "" {
		fmt.Fprintf(b, " -n '%s'", cond)
	}
	for _, n := range cmdutil.VisibleNames(f) {
		if len(n) == 1 {
			fmt.Fprintf(b, " -s %s", n)
		} else {
			fmt.Fprintf(b, " -l %s", n)
		}
	}
	switch valueKind(f) {
	case "choices":
		fmt.Fprintf(b, " -x -a '%s'", strings.Join(cmdutil.FlagChoices(f.Names()[0]), " "))
	case "file":
		b.WriteString(" -r -F")
	case "any":
		b.WriteString(" -x")
	}
	b.WriteString("\n")
}

func fishCompletion(w io.Writer, global []cli.Flag, cmds []*cli.Command) error {
	var b strings.Builder
	b.WriteString("# kmm completion for fish (kmm completion fish)\n")
	for _, f := range global {
		fishFlag(&b, f, "")
	}
	for _, c := range visible(cmds) {
		fmt.Fprintf(&b, "complete -c kmm -f -n '__fish_use_subcommand' -a %s -d %q\n", c.Name, c.Usage)
		if words, files := argWords(c, cmds); !files && len(visible(c.Subcommands)) == 0 {
			fmt.Fprintf(&b, "complete -c kmm -f -n '__fish_seen_subcommand_from %s' -a '%s'\n", c.Name, words)
		}
		for _, s := range visible(c.Subcommands) {
			fmt.Fprintf(&b, "complete -c kmm -f -n '__fish_seen_subcommand_from %s' -a %s -d %q\n", c.Name, s.Name, s.Usage)
			for _, f := range s.Flags {
				fishFlag(&b, f, "__fish_seen_subcommand_from "+s.Name)
			}
		}
		for _, f := range c.Flags {
			fishFlag(&b, f, "__fish_seen_subcommand_from "+c.Name)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
