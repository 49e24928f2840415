// Package cmdutil holds what several kmm subcommands share: the Factory that hands them their
// dependencies, the MM2 file flags (both of MM2's command-line forms, and the seed tutorial's
// MM1-style flags), loading the file with its diagnostics printed to stderr, flow selection
// flags, and the user contract of commands that change clusters (plan, --dry-run, confirmation,
// report). It never opens a Kafka client itself: clusters come from the Factory's Opener.
package cmdutil

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/kerr"
)

// ConfigFlags are the flags that select and complete an MM2 configuration.
func ConfigFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "clusters", Usage: "only flows whose target is one of these `ALIAS`es (MM2's --clusters); with --source-cluster-config: SOURCE,TARGET"},
		&cli.StringFlag{Name: "config", Usage: "the MM2 properties `FILE` (instead of the positional argument)"},
		&cli.StringFlag{Name: "source-cluster-config", Usage: "properties `FILE` of the source cluster (tutorial form; implies the flow SOURCE->TARGET)"},
		&cli.StringFlag{Name: "target-cluster-config", Usage: "properties `FILE` of the target cluster (tutorial form)"},
		&cli.StringFlag{Name: "whitelist", Usage: "MirrorMaker 1 flag: a topic `REGEX`, read as the MM2 key 'topics' (with a warning)"},
	}
}

// LoadOptions turns the flags and positional argument into mm2conf options.
func LoadOptions(c *cli.Context) (mm2conf.LoadOptions, error) {
	opts := mm2conf.LoadOptions{
		ConfigFile:          c.String("config"),
		Clusters:            c.StringSlice("clusters"),
		SourceClusterConfig: c.String("source-cluster-config"),
		TargetClusterConfig: c.String("target-cluster-config"),
	}
	if c.IsSet("whitelist") {
		w := c.String("whitelist")
		opts.Whitelist = &w
	}
	args := c.Args().Slice()
	switch {
	case len(args) > 1:
		return opts, kerr.WithHint(kerr.New(kerr.Usage, "expected one properties file, got %d arguments: %s", len(args), strings.Join(args, " ")),
			"give the MM2 properties file once, e.g. `kmm "+CommandPath(c)+" mirror-maker.properties`")
	case len(args) == 1 && opts.ConfigFile != "" && opts.ConfigFile != args[0]:
		return opts, kerr.New(kerr.Usage, "two properties files given: %s and --config %s", args[0], opts.ConfigFile)
	case len(args) == 1:
		opts.ConfigFile = args[0]
	}
	if opts.ConfigFile == "" {
		return opts, kerr.WithHint(kerr.New(kerr.Usage, "no MM2 properties file given"),
			"usage: kmm "+CommandPath(c)+" mirror-maker.properties [--clusters ALIAS]")
	}
	return opts, nil
}

// Load reads the configuration, prints its diagnostics to errOut and returns a Usage error
// when there are errors (nothing has talked to any cluster yet).
func Load(opts mm2conf.LoadOptions, errOut io.Writer) (*mm2conf.Config, error) {
	cfg, err := mm2conf.Load(opts)
	if cfg != nil && len(cfg.Diagnostics) > 0 {
		_ = RenderDiagnostics(errOut, cfg.Diagnostics)
	}
	if err != nil {
		n := 0
		if cfg != nil {
			for _, d := range cfg.Diagnostics {
				if d.Severity == mm2conf.SeverityError {
					n++
				}
			}
		}
		if n > 0 {
			return cfg, kerr.New(kerr.Usage, "%s: %d configuration error(s); nothing was written to any cluster", opts.ConfigFile, n)
		}
		return cfg, kerr.Wrap(kerr.Usage, err)
	}
	return cfg, nil
}

// OutputFlag is -o/--output with the given choices.
func OutputFlag(choices ...string) cli.Flag {
	return &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: choices[0], Usage: "output `FORMAT`: " + strings.Join(choices, " or ")}
}

// Output validates -o.
func Output(c *cli.Context, choices ...string) (string, error) {
	o := c.String("output")
	for _, ch := range choices {
		if o == ch {
			return o, nil
		}
	}
	return "", kerr.New(kerr.Usage, "-o must be %s, not %q", strings.Join(choices, " or "), o)
}

// LoadFlows reads the file named by the command line with the factory (see Factory.Flows).
func LoadFlows(c *cli.Context, f *Factory) (*mm2conf.Config, []*flow.Flow, error) {
	opts, err := LoadOptions(c)
	if err != nil {
		return nil, nil, err
	}
	return f.Flows(opts)
}

// FlowFlags are --flow S->T and, with sourceTarget, its aliases --source and --target.
func FlowFlags(sourceTarget bool) []cli.Flag {
	fl := []cli.Flag{&cli.StringFlag{Name: "flow", Usage: "the `FLOW` S->T (quote it in a shell: --flow 'A->B'; default: the only enabled flow)"}}
	if sourceTarget {
		fl = append(fl, &cli.StringFlag{Name: "source", Usage: "source cluster `ALIAS` (with --target: another way to name the flow)"},
			&cli.StringFlag{Name: "target", Usage: "target cluster `ALIAS`"})
	}
	return fl
}

// FlowSelector reads the flow flags.
func FlowSelector(c *cli.Context) flow.Selector {
	return flow.Selector{Flow: c.String("flow"), Source: c.String("source"), Target: c.String("target")}
}

// RenderDiagnostics writes diagnostics as "file:line: severity: msg" lines with "  hint: ..."
// lines (for stderr).
func RenderDiagnostics(w io.Writer, ds mm2conf.Diagnostics) error {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.String())
		b.WriteByte('\n')
		if d.Hint != "" {
			fmt.Fprintf(&b, "  hint: %s\n", d.Hint)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
