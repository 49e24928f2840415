package cmdutil

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// Example is one command line shown under EXAMPLES in a command's help, with what it does.
type Example struct {
	What string // one line, e.g. "run every enabled flow until Ctrl-C"
	Cmd  string // the command line, e.g. "kmm replicate mirror-maker.properties"
}

// WithExamples attaches examples to c and returns c. This is the one place that renders them:
// `kmm CMD --help` and `kmm help CMD` print an EXAMPLES section after the options. Every
// command kmm ships has at least one example (a test in pkg/app walks the command tree).
func WithExamples(c *cli.Command, ex ...Example) *cli.Command {
	tmpl := cli.CommandHelpTemplate
	if len(c.Subcommands) > 0 {
		tmpl = cli.SubcommandHelpTemplate
	}
	c.CustomHelpTemplate = tmpl + RenderExamples(ex)
	return c
}

// RenderExamples is the EXAMPLES section as it appears in help (template-escaped).
func RenderExamples(ex []Example) string {
	if len(ex) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nEXAMPLES:\n")
	for i, e := range ex {
		if i > 0 {
			b.WriteByte('\n')
		}
		if e.What != "" {
			b.WriteString("   # " + e.What + "\n")
		}
		b.WriteString("   " + e.Cmd + "\n")
	}
	// The section is template text: keep any "{{" literal.
	return strings.ReplaceAll(b.String(), "{{", `{{"{{"}}`)
}

// HasExamples reports whether c's help carries an EXAMPLES section.
func HasExamples(c *cli.Command) bool {
	return strings.Contains(c.CustomHelpTemplate, "\nEXAMPLES:\n")
}

// CommandPath is the full name of the running command, e.g. "config check" (urfave/cli's
// FullName gives only "check" for a subcommand). For hints: "usage: kmm " + CommandPath(c).
func CommandPath(c *cli.Context) string {
	var names []string
	for i, ctx := range c.Lineage() {
		// The root contexts' command is the app itself ("kmm"): the hints add that name.
		if ctx.Command != nil && ctx.Command.Name != "" && (i == 0 || c.App == nil || ctx.Command.Name != c.App.Name) {
			names = append([]string{ctx.Command.Name}, names...)
		}
	}
	return strings.Join(names, " ")
}
