// Package configcmd implements `kmm config check` and `kmm config explain`: resolve an MM2
// properties file exactly as MM2 would and show the flows, the findings, where every effective
// value came from, and what each flow does with a topic or group (and why). mm2conf builds the
// reports and verdicts as data; this package renders them (render.go, names.go). It talks to a
// cluster only for `explain --list-topics` (through the factory, to list the source topics) and never
// prints secrets.
package configcmd

import (
	"context"
	"errors"
	"fmt"
	stdio "io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/mm2conf/clientconf"
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
	// Topics and Groups ask what each flow does with these names (offline); AllTopics asks it
	// for every topic of each flow's source cluster (connects).
	Topics    []string
	Groups    []string
	AllTopics bool
	// Wide shows every flow in full and long values whole (the default fits a terminal).
	Wide bool
	// Ctx bounds --list-topics (Ctrl-C); nil: no bound beyond the command's own timeouts.
	Ctx context.Context
}

// Validate refuses what the flags of `kmm config check` cannot mean (usage errors, exit 2).
func (o *CheckOptions) Validate() error {
	return errors.Join(
		cmdutil.OneOf("output", o.Output, "table", "json"),
		noFile(o.File, "kmm config check mirror-maker.properties"),
	)
}

// Validate refuses what the flags of `kmm config explain` cannot mean (usage errors, exit 2).
func (o *ExplainOptions) Validate() error {
	var keys error
	if (len(o.Topics) > 0 || len(o.Groups) > 0 || o.AllTopics) && len(o.Keys) > 0 {
		keys = kerr.New(kerr.Usage, "KEY arguments (%s) do not go with --topic, --group or --list-topics", strings.Join(o.Keys, " "))
	}
	return errors.Join(
		cmdutil.OneOf("output", o.Output, "table", "json"),
		noFile(o.File, "kmm config explain mirror-maker.properties [--flow 'A->B'] [KEY ...]"),
		keys,
	)
}

func noFile(file mm2conf.LoadOptions, usage string) error {
	if file.ConfigFile == "" {
		return kerr.WithHint(kerr.New(kerr.Usage, "no MM2 properties file given"), "usage: "+usage)
	}
	return nil
}

// Command returns `kmm config`.
func Command(f *cmdutil.Factory) *cli.Command {
	return cmdutil.WithExamples(&cli.Command{
		Name:      "config",
		Usage:     "check and explain MM2 properties files",
		UsageText: "kmm config check|explain mirror-maker.properties [command options]",
		Subcommands: []*cli.Command{
			cmdutil.WithExamples(&cli.Command{
				Name:      "check",
				Usage:     "validate an MM2 properties file and print the resolved flows",
				ArgsUsage: "mirror-maker.properties",
				Description: `Resolves the file as MirrorMaker 2 would (defaults, per-flow and per-cluster overrides, config
providers) and prints each flow with its topics, groups, policy, features and intervals, then
every warning and error with file:line. Exit 2 when the file has errors. No cluster is contacted.`,
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
				cmdutil.Example{What: "the flows MM2 would run and every finding with its file:line (exit 2 on errors)", Cmd: "kmm config check mirror-maker.properties"},
				cmdutil.Example{What: "as JSON, only the flows into B", Cmd: "kmm config check mirror-maker.properties --clusters B -o json"},
				cmdutil.Example{What: "the tutorial form with MirrorMaker 1 flags", Cmd: "kmm config check --clusters SOURCE,TARGET --source-cluster-config source-cluster.properties --target-cluster-config target-cluster.properties --whitelist '.*' --config mirror-maker.properties"},
			),
			cmdutil.WithExamples(&cli.Command{
				Name:      "explain",
				Usage:     "show every effective setting per flow and role and where it came from, or what each flow does with a topic or group",
				ArgsUsage: "mirror-maker.properties [KEY ...]",
				Description: `Shows, per flow and section (connector, worker, and each client role such as
source-consumer), every effective setting, its value (secrets hidden; values of config-provider
references resolved, the reference in the origin) and where it came from (file:line and key, or
the default rule). KEY arguments filter by key (* wildcards).

With --topic/--group (offline): for every flow that replicates, whether it replicates the topic
(and under which name on the target) or checkpoints the group (and syncs its offsets), and the
rule that decided, with its file:line: a topics/topics.exclude entry, an internal or heartbeats
topic, a cycle (the topic came from the flow's target), a disabled feature.
With --list-topics: the same for every topic of each flow's source cluster (connects to it).
The text fits the terminal (COLUMNS, else its width, else 100 columns): long cells wrap within
their column, values longer than 60 characters are elided unless --flow names the flow, and a
heartbeats-only flow is one line. --wide shows everything, one line per setting.`,
				Flags: append(cmdutil.ConfigFlags(), cmdutil.OutputFlag("table", "json"),
					&cli.StringFlag{Name: "flow", Usage: "only this `FLOW` (quote it in a shell: --flow 'A->B')"},
					&cli.StringSliceFlag{Name: "section", Usage: "only these `SECTION`s: connector, worker, or a client role such as source-consumer"},
					&cli.StringSliceFlag{Name: "topic", Usage: "what each flow does with this source `TOPIC`, and why (repeatable; offline)"},
					&cli.StringSliceFlag{Name: "group", Usage: "what each flow does with this consumer `GROUP`, and why (repeatable; offline)"},
					&cli.BoolFlag{Name: "wide", Usage: "show everything, one line per setting: heartbeats-only flows in full (one line each otherwise), long values whole, nothing wrapped to the terminal's width"},
					&cli.BoolFlag{Name: "list-topics", Aliases: cmdutil.OldNames("list-topics"), Usage: "list every topic of each flow's source cluster with what the flow does with it (connects to the source clusters)"}),
				Action: func(c *cli.Context) error {
					o, err := explainOptions(c)
					if err != nil {
						return err
					}
					return RunExplain(o, f)
				},
			},
				cmdutil.Example{What: "every effective setting of one flow, with its file:line", Cmd: "kmm config explain mirror-maker.properties --flow 'A->B'"},
				cmdutil.Example{What: "only some keys of one section (globs allowed)", Cmd: "kmm config explain mirror-maker.properties bootstrap.servers 'ssl.*' --section target-producer"},
				cmdutil.Example{What: "what each flow does with a topic and a group, and why (offline)", Cmd: "kmm config explain mirror-maker.properties --topic orders --topic B.orders --group billing"},
				cmdutil.Example{What: "every topic of the source clusters (connects to them)", Cmd: "kmm config explain mirror-maker.properties --list-topics -o json"},
			),
		},
	},
		cmdutil.Example{What: "check a file before starting replicate", Cmd: "kmm config check mirror-maker.properties"},
		cmdutil.Example{What: "where a setting came from", Cmd: "kmm config explain mirror-maker.properties --flow 'A->B' bootstrap.servers"},
	)
}

// RunCheck runs `kmm config check`.
func RunCheck(o *CheckOptions, f *cmdutil.Factory) error {
	if err := cmdutil.Validate(o); err != nil {
		return err
	}
	io := f.IO
	cfg, loadErr := mm2conf.Load(o.File)
	if cfg == nil {
		return kerr.Wrap(kerr.Usage, loadErr)
	}
	rep := mm2conf.NewCheckReport(cfg, mm2conf.ReportOptions{GeneratedAt: f.Now().UTC()})
	overlayIntervals(cfg, rep)
	var err error
	if o.Output == "json" {
		err = RenderJSON(io.Out, rep)
	} else {
		err = RenderCheckText(io.Out, rep)
		// The report ends with the diagnostics; repeat them on stderr only when stdout is not
		// the terminal (piped or redirected), so a terminal shows each once.
		if err == nil && len(cfg.Diagnostics) > 0 && !io.IsStdoutTTY() {
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
	o := &ExplainOptions{File: file, Output: out, Flow: c.String("flow"), Keys: args, Sections: c.StringSlice("section"),
		Topics: c.StringSlice("topic"), Groups: c.StringSlice("group"), AllTopics: c.Bool("list-topics"), Wide: c.Bool("wide"), Ctx: c.Context}
	return o, nil
}

// RunExplain runs `kmm config explain`.
func RunExplain(o *ExplainOptions, f *cmdutil.Factory) error {
	if err := cmdutil.Validate(o); err != nil {
		return err
	}
	io := f.IO
	// The explain table ends with the diagnostics: on a terminal, do not print them twice.
	topicMode := len(o.Topics) > 0 || len(o.Groups) > 0 || o.AllTopics
	diagOut := stdio.Writer(io.ErrOut)
	if o.Output != "json" && io.IsStdoutTTY() && !topicMode {
		diagOut = stdio.Discard
	}
	cfg, loadErr := cmdutil.Load(o.File, diagOut)
	if cfg == nil {
		return loadErr
	}
	if len(o.Topics) > 0 || len(o.Groups) > 0 || o.AllTopics {
		return runExplainNames(o, f, cfg, loadErr)
	}
	rep, err := mm2conf.NewExplainReport(cfg, mm2conf.ExplainOptions{ReportOptions: mm2conf.ReportOptions{GeneratedAt: f.Now().UTC()},
		Flow: o.Flow, Keys: o.Keys, Sections: o.Sections})
	if err != nil {
		return kerr.Wrap(kerr.Usage, err)
	}
	// Show what `kmm replicate` uses: kmm's defaults and forced producer settings over MM2's.
	cmdutil.OverlayReplicate(rep, o.Keys)
	if err := checkSelection(io.ErrOut, cfg, o.Flow, o.Sections, o.Keys); err != nil {
		return err
	}
	if o.Output == "json" {
		err = RenderJSON(io.Out, rep)
	} else {
		// A flow asked for by name is shown in full; the text fits the terminal unless --wide.
		err = RenderExplainTextWith(io.Out, rep, ExplainText{Wide: o.Wide, Full: o.Flow != "", Width: io.Width()})
	}
	if err != nil {
		return err
	}
	return loadErr
}

// checkSelection refuses --section names and KEY arguments that select nothing: a typo must
// not look like "this setting is not set".
func checkSelection(errOut stdio.Writer, cfg *mm2conf.Config, flow string, sections, keys []string) error {
	if len(sections) == 0 && len(keys) == 0 {
		return nil
	}
	all, err := mm2conf.NewExplainReport(cfg, mm2conf.ExplainOptions{Flow: flow})
	if err != nil {
		return kerr.Wrap(kerr.Usage, err)
	}
	known := map[string]bool{}
	var names []string
	for _, f := range all.Flows {
		for _, s := range f.Sections {
			n := strings.TrimSuffix(s.Name, " (librdkafka)")
			if !known[n] {
				known[n] = true
				names = append(names, n)
			}
			known[s.Name] = true
		}
	}
	for _, s := range sections {
		if !known[s] {
			return kerr.WithHint(kerr.New(kerr.Usage, "--section %q: no such section", s), "sections: "+strings.Join(names, ", "))
		}
	}
	for _, k := range keys {
		r, err := mm2conf.NewExplainReport(cfg, mm2conf.ExplainOptions{Flow: flow, Keys: []string{k}, Sections: sections})
		if err != nil {
			return kerr.Wrap(kerr.Usage, err)
		}
		cmdutil.OverlayReplicate(r, []string{k})
		n := 0
		for _, f := range r.Flows {
			for _, s := range f.Sections {
				n += len(s.Entries)
			}
		}
		if n > 0 {
			continue
		}
		if strings.ContainsAny(k, "*?[") {
			fmt.Fprintf(errOut, "kmm: no setting set matches %q\n", k)
			continue
		}
		if _, known := clientconf.LookupRdkafka(k); !known {
			return kerr.WithHint(kerr.New(kerr.Usage, "no setting matches %q", k), "KEY is a setting name or a glob, e.g. bootstrap.servers or 'ssl.*'; run without KEY to see every setting")
		}
		fmt.Fprintf(errOut, "kmm: %s is not set for the flows and roles shown\n", k)
	}
	return nil
}
