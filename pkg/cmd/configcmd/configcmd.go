// Package configcmd implements `kmm config check` and `kmm config explain`: resolve an MM2
// properties file exactly as MM2 would and show the flows, the findings, and where every
// effective value came from. mm2conf builds the reports as data; this package renders them
// (render.go). It never talks to a cluster and never prints secrets.
package configcmd

import (
	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/kerr"
)

// CheckOptions are the flags and arguments of `kmm config check`.
type CheckOptions struct {
	File   mm2conf.LoadOptions
	Output string
}

// ExplainOptions are the flags and arguments of `kmm config explain`.
type ExplainOptions struct {
	File     mm2conf.LoadOptions
	Output   string
	Flow     string
	Keys     []string
	Sections []string
}

// Command returns `kmm config`.
func Command(f *cmdutil.Factory) *cli.Command {
	return &cli.Command{
		Name:  "config",
		Usage: "check and explain MM2 properties files",
		Subcommands: []*cli.Command{
			{
				Name:      "check",
				Usage:     "validate an MM2 properties file and print the resolved flows",
				ArgsUsage: "mirror-maker.properties",
				Description: `Resolves the file as MirrorMaker 2 would (defaults, per-flow and per-cluster overrides, config
providers) and prints each flow with its topics, groups, policy, features and intervals, then
every warning and error with file:line. Exit 2 when the file has errors. No cluster is contacted.

Examples:
   kmm config check mirror-maker.properties
   kmm config check mirror-maker.properties --clusters B -o json`,
				Flags: append(cmdutil.ConfigFlags(), cmdutil.OutputFlag("table", "json")),
				Action: func(c *cli.Context) error {
					out, err := cmdutil.Output(c, "table", "json")
					if err != nil {
						return err
					}
					file, err := cmdutil.LoadOptions(c)
					if err != nil {
						return err
					}
					return RunCheck(&CheckOptions{File: file, Output: out}, f)
				},
			},
			{
				Name:      "explain",
				Usage:     "show every effective setting per flow and role, and where it came from",
				ArgsUsage: "mirror-maker.properties [KEY ...]",
				Description: `Shows, per flow and section (connector, worker, and each client role such as
source-consumer), every effective setting, its value (secrets hidden) and where it came from
(file:line and key, or the default rule). KEY arguments filter by key (* wildcards).

Examples:
   kmm config explain mirror-maker.properties --flow 'A->B'
   kmm config explain mirror-maker.properties bootstrap.servers 'ssl.*' --section target-producer
   kmm config explain mirror-maker.properties -o json`,
				Flags: append(cmdutil.ConfigFlags(), cmdutil.OutputFlag("table", "json"),
					&cli.StringFlag{Name: "flow", Usage: "only this flow (quote it in a shell: --flow 'A->B')"},
					&cli.StringSliceFlag{Name: "section", Usage: "only these sections: connector, worker, or a client role such as source-consumer"}),
				Action: func(c *cli.Context) error {
					o, err := explainOptions(c)
					if err != nil {
						return err
					}
					return RunExplain(o, f)
				},
			},
		},
	}
}

// RunCheck runs `kmm config check`.
func RunCheck(o *CheckOptions, f *cmdutil.Factory) error {
	io := f.IO
	cfg, loadErr := mm2conf.Load(o.File)
	if cfg == nil {
		return kerr.Wrap(kerr.Usage, loadErr)
	}
	rep := mm2conf.NewCheckReport(cfg, mm2conf.ReportOptions{GeneratedAt: f.Clock().UTC()})
	var err error
	if o.Output == "json" {
		err = RenderJSON(io.Out, rep)
	} else {
		err = RenderCheckText(io.Out, rep)
		if err == nil && len(cfg.Diagnostics) > 0 {
			err = cmdutil.RenderDiagnostics(io.ErrOut, cfg.Diagnostics)
		}
	}
	if err != nil {
		return err
	}
	if loadErr != nil {
		return kerr.New(kerr.Usage, "%s has configuration errors (see above)", o.File.ConfigFile)
	}
	return nil
}

// explainOptions reads the flags; positional arguments are the file, then keys to show.
func explainOptions(c *cli.Context) (*ExplainOptions, error) {
	out, err := cmdutil.Output(c, "table", "json")
	if err != nil {
		return nil, err
	}
	args := c.Args().Slice()
	file := mm2conf.LoadOptions{ConfigFile: c.String("config"), Clusters: c.StringSlice("clusters"),
		SourceClusterConfig: c.String("source-cluster-config"), TargetClusterConfig: c.String("target-cluster-config")}
	if c.IsSet("whitelist") {
		w := c.String("whitelist")
		file.Whitelist = &w
	}
	if file.ConfigFile == "" {
		if len(args) == 0 {
			return nil, kerr.WithHint(kerr.New(kerr.Usage, "no MM2 properties file given"), "usage: kmm config explain mirror-maker.properties [--flow 'A->B'] [KEY ...]")
		}
		file.ConfigFile, args = args[0], args[1:]
	}
	return &ExplainOptions{File: file, Output: out, Flow: c.String("flow"), Keys: args, Sections: c.StringSlice("section")}, nil
}

// RunExplain runs `kmm config explain`.
func RunExplain(o *ExplainOptions, f *cmdutil.Factory) error {
	io := f.IO
	cfg, loadErr := cmdutil.Load(o.File, io.ErrOut)
	if cfg == nil {
		return loadErr
	}
	rep, err := mm2conf.NewExplainReport(cfg, mm2conf.ExplainOptions{ReportOptions: mm2conf.ReportOptions{GeneratedAt: f.Clock().UTC()},
		Flow: o.Flow, Keys: o.Keys, Sections: o.Sections})
	if err != nil {
		return kerr.Wrap(kerr.Usage, err)
	}
	if o.Output == "json" {
		err = RenderJSON(io.Out, rep)
	} else {
		err = RenderExplainText(io.Out, rep)
	}
	if err != nil {
		return err
	}
	return loadErr
}
