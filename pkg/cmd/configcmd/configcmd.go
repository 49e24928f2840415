// Package configcmd implements `kmm config check` and `kmm config explain`: resolve an MM2
// properties file exactly as MM2 would and show the flows, the findings, where every effective
// value came from, and what each flow does with a topic or group (and why). It talks to a
// cluster only for `explain --topics` (to list the source topics) and never prints secrets.
package configcmd

import (
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/kerr"
)

// Command returns `kmm config`.
func Command(io *iostreams.IOStreams) *cli.Command {
	return &cli.Command{
		Name:  "config",
		Usage: "check and explain MM2 properties files",
		Subcommands: []*cli.Command{
			{
				Name:      "check",
				Usage:     "validate an MM2 properties file and print the resolved flows",
				ArgsUsage: "mirror-maker.properties",
				Description: `Reads the file as MirrorMaker 2 4.1.1 reads it, without connecting to any cluster, and prints
the flows MM2 would run, then every warning and error with its file:line. Exit 2 when MM2 or
kmm would refuse the file (kmm replicate refuses exactly what this refuses).

Examples:
   kmm config check mirror-maker.properties
   kmm config check mirror-maker.properties -o json
   kmm config check mirror-maker.properties --clusters B`,
				Flags:  append(cmdutil.ConfigFlags(), cmdutil.OutputFlag("table", "json")),
				Action: func(c *cli.Context) error { return check(c, io) },
			},
			{
				Name:      "explain",
				Usage:     "show every effective setting per flow and role and where it came from, or what each flow does with a topic or group",
				ArgsUsage: "mirror-maker.properties [KEY ...]",
				Description: `Without --topic, --group or --topics: every effective setting of each flow (connector, worker,
and each client role, in Java and librdkafka terms) with the file:line and rule it came from;
KEY arguments (globs allowed) keep only matching settings.

With --topic/--group (offline): for every flow that replicates, whether it replicates the topic
(and under which name on the target) or checkpoints the group (and syncs its offsets), and the
rule that decided, with its file:line: a topics/topics.exclude entry, an internal or heartbeats
topic, a cycle (the topic came from the flow's target), a disabled feature.
With --topics: the same for every topic of each flow's source cluster (connects to it).

Examples:
   kmm config explain mirror-maker.properties
   kmm config explain mirror-maker.properties --flow A->B bootstrap.servers 'ssl.*'
   kmm config explain mirror-maker.properties --topic orders --topic B.orders --group billing
   kmm config explain mirror-maker.properties --topics -o json`,
				Flags: append(cmdutil.ConfigFlags(), cmdutil.OutputFlag("table", "json"),
					&cli.StringFlag{Name: "flow", Usage: "only this flow, e.g. A->B"},
					&cli.StringSliceFlag{Name: "section", Usage: "only these sections: connector, worker, or a client role such as source-consumer"},
					&cli.StringSliceFlag{Name: "topic", Usage: "what each flow does with this source topic, and why (repeatable; offline)"},
					&cli.StringSliceFlag{Name: "group", Usage: "what each flow does with this consumer group, and why (repeatable; offline)"},
					&cli.BoolFlag{Name: "topics", Usage: "list every topic of each flow's source cluster with what the flow does with it (connects to the source clusters)"}),
				Action: func(c *cli.Context) error { return explain(c, io) },
			},
		},
	}
}

func check(c *cli.Context, io *iostreams.IOStreams) error {
	out, err := cmdutil.Output(c, "table", "json")
	if err != nil {
		return err
	}
	opts, err := cmdutil.LoadOptions(c)
	if err != nil {
		return err
	}
	cfg, loadErr := mm2conf.Load(opts)
	if cfg == nil {
		return kerr.Wrap(kerr.Usage, loadErr)
	}
	rep := mm2conf.NewCheckReport(cfg, mm2conf.ReportOptions{GeneratedAt: time.Now().UTC()})
	if out == "json" {
		err = rep.RenderJSON(io.Out)
	} else {
		err = rep.RenderText(io.Out)
		if err == nil && len(cfg.Diagnostics) > 0 {
			err = mm2conf.RenderDiagnosticsText(io.ErrOut, cfg.Diagnostics)
		}
	}
	if err != nil {
		return err
	}
	if loadErr != nil {
		return kerr.New(kerr.Usage, "%s has configuration errors (see above)", opts.ConfigFile)
	}
	return nil
}

func explain(c *cli.Context, io *iostreams.IOStreams) error {
	out, err := cmdutil.Output(c, "table", "json")
	if err != nil {
		return err
	}
	// Positional: the file, then keys to show.
	args := c.Args().Slice()
	opts := mm2conf.LoadOptions{ConfigFile: c.String("config"), Clusters: c.StringSlice("clusters"),
		SourceClusterConfig: c.String("source-cluster-config"), TargetClusterConfig: c.String("target-cluster-config")}
	if c.IsSet("whitelist") {
		w := c.String("whitelist")
		opts.Whitelist = &w
	}
	if opts.ConfigFile == "" {
		if len(args) == 0 {
			return kerr.WithHint(kerr.New(kerr.Usage, "no MM2 properties file given"), "usage: kmm config explain mirror-maker.properties [--flow A->B] [KEY ...]")
		}
		opts.ConfigFile, args = args[0], args[1:]
	}
	cfg, loadErr := cmdutil.Load(opts, io.ErrOut)
	if cfg == nil {
		return loadErr
	}
	if c.IsSet("topic") || c.IsSet("group") || c.Bool("topics") {
		if len(args) > 0 {
			return kerr.New(kerr.Usage, "KEY arguments (%s) do not go with --topic, --group or --topics", strings.Join(args, " "))
		}
		return explainNames(c, io, cfg, loadErr, out == "json")
	}
	rep, err := mm2conf.NewExplainReport(cfg, mm2conf.ExplainOptions{ReportOptions: mm2conf.ReportOptions{GeneratedAt: time.Now().UTC()},
		Flow: c.String("flow"), Keys: args, Sections: c.StringSlice("section")})
	if err != nil {
		return kerr.Wrap(kerr.Usage, err)
	}
	if out == "json" {
		err = rep.RenderJSON(io.Out)
	} else {
		err = rep.RenderText(io.Out)
	}
	if err != nil {
		return err
	}
	return loadErr
}
