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
		for _, n := range f.Names() {
			if len(n) == 1 {
				out = append(out, "-"+n)
			} else {
				out = append(out, "--"+n)
			}
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

func bashCompletion(w io.Writer, global []cli.Flag, cmds []*cli.Command) error {
	var b strings.Builder
	b.WriteString("# kmm completion for bash (kmm completion bash)\n_kmm() {\n")
	b.WriteString("  local cur=\"${COMP_WORDS[COMP_CWORD]}\" path=\"\" w i\n")
	b.WriteString("  for ((i = 1; i < COMP_CWORD; i++)); do w=\"${COMP_WORDS[i]}\"; [[ $w == -* ]] || path=\"${path:+$path }$w\"; done\n")
	b.WriteString("  local words\n  case \"$path\" in\n")
	fmt.Fprintf(&b, "    \"\") words=%q ;;\n", names(cmds)+" "+strings.Join(flagWords(global), " "))
	// Longest paths first so "config check" wins over "config".
	type entry struct {
		depth int
		line  string
	}
	var lines []entry
	var collect func(prefix string, cs []*cli.Command)
	collect = func(prefix string, cs []*cli.Command) {
		for _, c := range visible(cs) {
			p := strings.TrimSpace(prefix + " " + c.Name)
			words := strings.TrimSpace(names(c.Subcommands) + " " + strings.Join(flagWords(c.Flags), " "))
			lines = append(lines, entry{strings.Count(p, " "), fmt.Sprintf("    %q*) words=%q ;;\n", p, words)})
			collect(p, c.Subcommands)
		}
	}
	collect("", cmds)
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].depth > lines[j].depth })
	for _, l := range lines {
		b.WriteString(l.line)
	}
	b.WriteString("  esac\n  mapfile -t COMPREPLY < <(compgen -W \"$words\" -- \"$cur\")\n  [[ ${#COMPREPLY[@]} -gt 0 ]] || mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n}\ncomplete -F _kmm kmm\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func fishCompletion(w io.Writer, global []cli.Flag, cmds []*cli.Command) error {
	var b strings.Builder
	b.WriteString("# kmm completion for fish (kmm completion fish)\n")
	for _, f := range global {
		fmt.Fprintf(&b, "complete -c kmm -l %s\n", f.Names()[0])
	}
	for _, c := range visible(cmds) {
		fmt.Fprintf(&b, "complete -c kmm -f -n '__fish_use_subcommand' -a %s -d %q\n", c.Name, c.Usage)
		for _, s := range visible(c.Subcommands) {
			fmt.Fprintf(&b, "complete -c kmm -f -n '__fish_seen_subcommand_from %s' -a %s -d %q\n", c.Name, s.Name, s.Usage)
			for _, f := range s.Flags {
				fmt.Fprintf(&b, "complete -c kmm -n '__fish_seen_subcommand_from %s' -l %s\n", s.Name, f.Names()[0])
			}
		}
		for _, f := range c.Flags {
			fmt.Fprintf(&b, "complete -c kmm -n '__fish_seen_subcommand_from %s' -l %s\n", c.Name, f.Names()[0])
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
