// Package lagcmd implements `kmm lag`: replication lag per source partition (records not yet on
// the target and the age of the oldest of them), from the clusters themselves: source offsets
// and the resume positions stored on the target. Thresholds turn it into a check (exit 3).
package lagcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/lag"
	"github.com/kmmproject/kmm/pkg/output"
	"github.com/kmmproject/kmm/pkg/snapshot"
)

// Options are the flags and arguments of `kmm lag`.
type Options struct {
	File       mm2conf.LoadOptions
	Flow       flow.Selector
	Output     string
	Topics     []string
	Groups     []string
	Thresholds lag.Thresholds
	Watch      bool
	Interval   time.Duration
	// Endpoint is a running `kmm replicate --listen` URL to take live positions from.
	Endpoint string
}

// Validate returns a usage error (exit 2) for bad flag values, before the file is read.
func (o *Options) Validate() error {
	return errors.Join(
		cmdutil.OneOf("output", o.Output, cmdutil.OutputChoices...),
		cmdutil.NonNegative("max-lag-records", o.Thresholds.MaxRecords),
		cmdutil.NonNegativeDuration("max-lag-time", o.Thresholds.MaxTime),
		// checked without --watch too: a bad value is a mistake either way
		cmdutil.PositiveDuration("interval", o.Interval),
		cmdutil.OptionalHTTPURL("endpoint", o.Endpoint),
	)
}

// Command returns `kmm lag`.
func Command(f *cmdutil.Factory) *cli.Command {
	return cmdutil.WithExamples(&cli.Command{
		Name:      "lag",
		Usage:     "show replication lag per partition (records and time); thresholds make it a check",
		ArgsUsage: "mirror-maker.properties",
		Description: `Per source partition of every enabled flow: records not yet on the target and the age of the
oldest of them. The replicated position is the best truth available, newest first: the live
position of a running replicate (--endpoint), else the further of the progress stored on the
target and the newest offset sync mapped through the target's end offset (checked by comparing
the last record on the target with the source's), else the stored progress. SOURCE and AS OF
say which and how old; an estimate shows its range (LAG 0..40). With --endpoint, a second
table shows the round trip the replicator measures to each cluster over the last minute (a
slow flow over a slow link shows there). With
--group, each group's lag on both sides and what a failover now would cost. --max-lag-records
and --max-lag-time exit 3 when exceeded.`,
		Flags: append(append(cmdutil.ConfigFlags(), cmdutil.OutputFlag("table", "json")), append(cmdutil.FlowFlags(false),
			&cli.StringSliceFlag{Name: "topic", Usage: "only these source `TOPIC`s"},
			&cli.StringSliceFlag{Name: "group", Usage: "also show these consumer `GROUP`s: lag on both sides and what a failover now would cost"},
			&cli.Int64Flag{Name: "max-lag-records", Aliases: cmdutil.OldNames("max-lag-records"), Usage: "exit 3 when a partition is more than `N` records behind (0 = off)"},
			&cli.DurationFlag{Name: "max-lag-time", Usage: "exit 3 when a partition's oldest unreplicated record is older than `DURATION` (0 = off)"},
			&cli.StringFlag{Name: "endpoint", Usage: "take live replicated positions from a running 'kmm replicate --listen' at this `URL` (e.g. http://127.0.0.1:8083)"},
			&cli.BoolFlag{Name: "watch", Usage: "repeat every --interval (redraw on a terminal, NDJSON otherwise)"},
			&cli.DurationFlag{Name: "interval", Value: 5 * time.Second, Usage: "refresh `INTERVAL` of --watch"},
		)...),
		Action: func(c *cli.Context) error {
			out, err := cmdutil.Output(c, "table", "json")
			if err != nil {
				return err
			}
			file, err := cmdutil.LoadOptions(c)
			if err != nil {
				return err
			}
			return Run(c.Context, &Options{File: file, Flow: cmdutil.FlowSelector(c), Output: out, Topics: c.StringSlice("topic"),
				Groups: c.StringSlice("group"), Thresholds: lag.Thresholds{MaxRecords: c.Int64("max-lag-records"), MaxTime: c.Duration("max-lag-time")},
				Watch: c.Bool("watch"), Interval: c.Duration("interval"), Endpoint: c.String("endpoint")}, f)
		},
	},
		cmdutil.Example{What: "records and time not yet replicated, per partition", Cmd: "kmm lag mirror-maker.properties"},
		cmdutil.Example{What: "as a check: exit 3 when a partition is 10000 records or 1 minute behind", Cmd: "kmm lag mirror-maker.properties --flow 'A->B' --max-lag-records 10000 --max-lag-time 1m"},
		cmdutil.Example{What: "what a failover now would cost group billing", Cmd: "kmm lag mirror-maker.properties --group billing -o json"},
		cmdutil.Example{What: "refresh every 2 seconds until Ctrl-C", Cmd: "kmm lag mirror-maker.properties --watch --interval 2s"},
		cmdutil.Example{What: "live positions from a running replicate --listen", Cmd: "kmm lag mirror-maker.properties --endpoint http://127.0.0.1:8083"},
	)
}

// Run runs `kmm lag`. With --watch -o json, a failure after the first document (a cluster lost
// while watching) ends the NDJSON stream with the JSON error document (kmm's, output.ErrorDoc);
// Ctrl-C, the usual end of a watch, does not.
func Run(ctx context.Context, o *Options, fac *cmdutil.Factory) error {
	rendered := false
	err := run(ctx, o, fac, &rendered)
	if err != nil && rendered && o.Watch && o.Output == "json" && kerr.KindOf(err) != kerr.Interrupted && ctx.Err() == nil {
		_ = output.WriteLine(fac.IO.Out, fac.ErrorDoc("kmm lag", err))
	}
	return err
}

func run(ctx context.Context, o *Options, fac *cmdutil.Factory, rendered *bool) error {
	if err := cmdutil.Validate(o); err != nil {
		return err
	}
	io := fac.IO
	_, all, err := fac.Flows(o.File)
	if err != nil {
		return err
	}
	flows, err := flow.All(all, o.Flow, true)
	if err != nil {
		return err
	}
	th, topics := o.Thresholds, o.Topics
	for {
		var live snapshot.LiveFunc
		if o.Endpoint != "" {
			live = func(f *flow.Flow) map[cluster.TP]lag.Observed {
				return snapshot.LivePositions(ctx, o.Endpoint, f, fac.Now())
			}
		}
		rows, err := snapshot.LagLive(ctx, fac.Clusters, flows, topics, live)
		if err != nil {
			return err
		}
		var groups []lag.GroupLag
		if gs := o.Groups; len(gs) > 0 {
			for _, f := range flows {
				ins, err := snapshot.GroupLag(ctx, fac.Clusters, f, gs, rows, fac.Now())
				if err != nil {
					return err
				}
				if len(topics) > 0 {
					ins = slices.DeleteFunc(ins, func(g lag.GroupInput) bool { return !slices.Contains(topics, g.Topic) })
				}
				groups = append(groups, lag.ComputeGroups(ins)...)
			}
		}
		var links []lag.LinkRTT
		if o.Endpoint != "" {
			var aliases []string
			for _, f := range flows {
				for _, a := range []string{f.Source, f.Target} {
					if !slices.Contains(aliases, a) {
						aliases = append(aliases, a)
					}
				}
			}
			links = snapshot.LinkRTTs(ctx, o.Endpoint, aliases...)
		}
		viol := lag.Violations(rows, th)
		if err := render(io, o.Output, rows, groups, links, o.Watch, th, fac.Now()); err != nil {
			return err
		}
		*rendered = true
		if !o.Watch {
			if len(viol) > 0 {
				return kerr.New(kerr.CheckFailed, "replication lag over threshold:\n  %s", strings.Join(viol, "\n  "))
			}
			return nil
		}
		for _, v := range viol {
			fmt.Fprintf(io.ErrOut, "kmm: over threshold: %s\n", v)
		}
		if err := io.Wait(ctx, o.Interval, "next refresh"); err != nil {
			return err // Ctrl-C: exit 130
		}
	}
}

// envelope is the JSON of `kmm lag`: partitions in items, groups (with --group) beside them.
type envelope struct {
	output.Envelope
	Groups []lag.GroupLag `json:"groups,omitempty"`
	// Links (with --endpoint): the round trip the running replicator measures to each cluster.
	Links []lag.LinkRTT `json:"links,omitempty"`
}

func render(io *iostreams.IOStreams, out string, rows []lag.PartitionLag, groups []lag.GroupLag, links []lag.LinkRTT, watch bool, th lag.Thresholds, now time.Time) error {
	if out == "json" || (watch && !io.IsStdoutTTY()) {
		env := envelope{Envelope: output.Envelope{SchemaVersion: output.SchemaVersion, Kind: "lag", GeneratedAt: now.UTC(), Items: rows}, Groups: groups, Links: links}
		if watch {
			enc := json.NewEncoder(io.Out)
			enc.SetEscapeHTML(false)
			return enc.Encode(env)
		}
		return output.WriteJSON(io.Out, env)
	}
	if watch {
		fmt.Fprint(io.Out, iostreams.ClearScreen)
		fmt.Fprintf(io.Out, "kmm lag  %s\n\n", now.Format("15:04:05"))
	}
	over := func(r lag.PartitionLag) bool { return len(lag.Violations([]lag.PartitionLag{r}, th)) > 0 }
	if err := table(io.Out, rows, over, io.Palette(), now); err != nil {
		return err
	}
	if len(links) > 0 {
		fmt.Fprintln(io.Out)
		var cells [][]string
		for _, l := range links {
			cells = append(cells, []string{l.Cluster, fmt.Sprintf("%.1f ms", l.AvgMs), fmt.Sprintf("%.1f ms", l.P99Ms), "kmm replicate at " + l.MeasuredBy})
		}
		if err := output.Table(io.Out, []string{"CLUSTER", "LINK RTT AVG", "LINK RTT P99", "MEASURED BY"}, cells); err != nil {
			return err
		}
	}
	if len(groups) == 0 {
		return nil
	}
	fmt.Fprintln(io.Out)
	num := func(n int64) string {
		if n < 0 {
			return "?"
		}
		return fmt.Sprint(n)
	}
	var cells [][]string
	for _, g := range groups {
		miss := num(g.CouldMiss)
		if g.CouldMissMin >= 0 && g.CouldMissMin < g.CouldMiss {
			miss = fmt.Sprintf("%d..%d", g.CouldMissMin, g.CouldMiss)
		}
		cells = append(cells, []string{g.Flow, g.Group, g.Topic, fmt.Sprint(g.Partition), num(g.LagOnSource), num(g.LagOnTarget), num(g.WouldReread), miss})
	}
	return output.Table(io.Out, []string{"FLOW", "GROUP", "TOPIC", "PARTITION", "LAG ON SOURCE", "LAG ON TARGET", "FAILOVER NOW: RE-READ", "FAILOVER NOW: COULD MISS"}, cells)
}

// table renders the partition rows (sorted by lag, largest first); with colour, rows over a
// threshold are red (the NOTE column says so too: colour is never the only signal). SOURCE and
// AS OF say how each position is known; an estimated lag shows its range ("0..40" records).
func table(w io.Writer, rows []lag.PartitionLag, over func(lag.PartitionLag) bool, pal iostreams.Palette, now time.Time) error {
	var cells [][]string
	for _, r := range rows {
		age := ""
		switch {
		case r.LagRecords > 0 && r.LagSeconds < 0:
			age = "?" // records wait; the oldest one's timestamp could not be read
		case r.LagRecords > 0 && r.LagSeconds > 0:
			age = time.Duration(r.LagSeconds * float64(time.Second)).Round(100 * time.Millisecond).String()
		}
		note := ""
		switch {
		case r.LostToRetention > 0:
			note = fmt.Sprintf("%d records deleted on the source before replication", r.LostToRetention)
		case !r.Started && r.LagRecords > 0:
			note = "not replicated yet"
		}
		lagCell := LagCell(r)
		if over(r) {
			note = strings.TrimPrefix(note+"; over threshold", "; ")
			lagCell = pal.Fail(lagCell)
		}
		cells = append(cells, []string{r.Flow, r.Topic, fmt.Sprint(r.Partition), r.RemoteTopic, fmt.Sprint(r.SourceEnd), fmt.Sprint(r.Next),
			lagCell, age, r.PositionSource, AsOf(r.AsOf, now), note})
	}
	return output.Table(w, []string{"FLOW", "TOPIC", "PARTITION", "REMOTE TOPIC", "SOURCE END", "NEXT", "LAG", "LAG TIME", "SOURCE", "AS OF", "NOTE"}, cells)
}

// LagCell is a row's lag: exact, or the range it lies in when the position is an estimate.
func LagCell(r lag.PartitionLag) string {
	if r.Exact || r.LagRecordsMin == r.LagRecords {
		return fmt.Sprint(r.LagRecords)
	}
	return fmt.Sprintf("%d..%d", r.LagRecordsMin, r.LagRecords)
}

// AsOf is how old a position is ("now" under a second, "?" when not known).
func AsOf(at, now time.Time) string {
	if at.IsZero() {
		return "?"
	}
	d := now.Sub(at)
	if d < time.Second {
		return "now"
	}
	return d.Round(time.Second).String() + " ago"
}
