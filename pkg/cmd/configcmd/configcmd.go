// Package configcmd implements `kmm config check` and `kmm config explain`: resolve an MM2
// properties file exactly as MM2 would and show the flows, the findings, and where every
// effective value came from. It never talks to a cluster and never prints secrets.
package configcmd

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/kerr"
)

// Command returns `kmm config`.
func Command(f *cmdutil.Factory) *cli.Command {
	io := f.IO
	return &cli.Command{
		Name:  "config",
		Usage: "check and explain MM2 properties files",
		Subcommands: []*cli.Command{
			{
				Name:      "check",
				Usage:     "validate an MM2 properties file and print the resolved flows",
				ArgsUsage: "mirror-maker.properties",
				Flags:     append(cmdutil.ConfigFlags(), cmdutil.OutputFlag("table", "json")),
				Action:    func(c *cli.Context) error { return check(c, io) },
			},
			{
				Name:      "explain",
				Usage:     "show every effective setting per flow and role, and where it came from",
				ArgsUsage: "mirror-maker.properties [KEY ...]",
				Flags: append(cmdutil.ConfigFlags(), cmdutil.OutputFlag("table", "json"),
					&cli.StringFlag{Name: "flow", Usage: "only this flow, e.g. A->B"},
					&cli.StringSliceFlag{Name: "section", Usage: "only these sections: connector, worker, or a client role such as source-consumer"}),
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
