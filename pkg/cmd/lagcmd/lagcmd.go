// Package lagcmd implements `kmm lag`: replication lag per source partition (records not yet on
// the target and the age of the oldest of them), from the clusters themselves: source offsets
// and the resume positions stored on the target. Thresholds turn it into a check (exit 3).
package lagcmd

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/lag"
	"github.com/kmmproject/kmm/pkg/output"
	"github.com/kmmproject/kmm/pkg/snapshot"
)

// Command returns `kmm lag`.
func Command(f *cmdutil.Factory) *cli.Command {
	return &cli.Command{
		Name:      "lag",
		Usage:     "show replication lag per partition (records and time); thresholds make it a check",
		ArgsUsage: "mirror-maker.properties",
		Flags: append(cmdutil.ConfigFlags(), cmdutil.OutputFlag("table", "json"),
			&cli.StringFlag{Name: "flow", Usage: "only this flow, e.g. A->B"},
			&cli.StringSliceFlag{Name: "topic", Usage: "only these source topics"},
			&cli.StringSliceFlag{Name: "group", Usage: "also show these consumer groups: lag on both sides and what a failover now would cost"},
			&cli.Int64Flag{Name: "max-lag", Usage: "exit 3 when a partition is more than N records behind"},
			&cli.DurationFlag{Name: "max-lag-time", Usage: "exit 3 when a partition's oldest unreplicated record is older than D"},
			&cli.BoolFlag{Name: "watch", Usage: "repeat every --interval (redraw on a terminal, NDJSON otherwise)"},
			&cli.DurationFlag{Name: "interval", Value: 5 * time.Second, Usage: "refresh interval of --watch"},
		),
		Action: func(c *cli.Context) error { return run(c, f) },
	}
}

func run(c *cli.Context, fac *cmdutil.Factory) error {
	io := fac.IO
	out, err := cmdutil.Output(c, "table", "json")
	if err != nil {
		return err
	}
	_, all, err := cmdutil.LoadFlows(c, fac)
	if err != nil {
		return err
	}
	flows, err := flow.All(all, flow.Selector{Flow: c.String("flow")}, true)
	if err != nil {
		return err
	}
	th := lag.Thresholds{MaxRecords: c.Int64("max-lag"), MaxTime: c.Duration("max-lag-time")}
	topics := c.StringSlice("topic")
	for {
		rows, err := snapshot.Lag(c.Context, fac.Clusters, flows, topics)
		if err != nil {
			return err
		}
		var groups []lag.GroupLag
		if gs := c.StringSlice("group"); len(gs) > 0 {
			for _, f := range flows {
				ins, err := snapshot.GroupLag(c.Context, fac.Clusters, f, gs, rows, fac.Clock())
				if err != nil {
					return err
				}
				if len(topics) > 0 {
					ins = slices.DeleteFunc(ins, func(g lag.GroupInput) bool { return !slices.Contains(topics, g.Topic) })
				}
				groups = append(groups, lag.ComputeGroups(ins)...)
			}
		}
		viol := lag.Violations(rows, th)
		if err := render(io, out, rows, groups, c.Bool("watch"), th, fac.Clock()); err != nil {
			return err
		}
		if !c.Bool("watch") {
			if len(viol) > 0 {
				return kerr.New(kerr.CheckFailed, "replication lag over threshold:\n  %s", strings.Join(viol, "\n  "))
			}
			return nil
		}
		for _, v := range viol {
			fmt.Fprintf(io.ErrOut, "kmm: over threshold: %s\n", v)
		}
		select {
		case <-c.Context.Done():
			return nil
		case <-time.After(c.Duration("interval")):
		}
	}
}

// envelope is the JSON of `kmm lag`: partitions in items, groups (with --group) beside them.
type envelope struct {
	output.Envelope
	Groups []lag.GroupLag `json:"groups,omitempty"`
}

func render(io *iostreams.IOStreams, out string, rows []lag.PartitionLag, groups []lag.GroupLag, watch bool, th lag.Thresholds, now time.Time) error {
	if out == "json" || (watch && !io.IsStdoutTTY()) {
		env := envelope{Envelope: output.Envelope{SchemaVersion: output.SchemaVersion, Kind: "lag", GeneratedAt: now.UTC(), Items: rows}, Groups: groups}
		if watch {
			enc := json.NewEncoder(io.Out)
			enc.SetEscapeHTML(false)
			return enc.Encode(env)
		}
		return output.WriteJSON(io.Out, env)
	}
	if watch {
		fmt.Fprint(io.Out, "\033[H\033[2J")
		fmt.Fprintf(io.Out, "kmm lag  %s\n\n", now.Format("15:04:05"))
	}
	over := func(r lag.PartitionLag) bool { return len(lag.Violations([]lag.PartitionLag{r}, th)) > 0 }
	if err := table(io.Out, rows, over, io.ColorEnabled()); err != nil {
		return err
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
		cells = append(cells, []string{g.Flow, g.Group, g.Topic, fmt.Sprint(g.Partition), num(g.LagOnSource), num(g.LagOnTarget), num(g.WouldReread), num(g.CouldMiss)})
	}
	return output.Table(io.Out, []string{"FLOW", "GROUP", "TOPIC", "PARTITION", "LAG ON SOURCE", "LAG ON TARGET", "FAILOVER NOW: RE-READ", "FAILOVER NOW: COULD MISS"}, cells)
}

// table renders the partition rows (sorted by lag, largest first); with colour, rows over a
// threshold are red (the NOTE column says so too: colour is never the only signal).
func table(w io.Writer, rows []lag.PartitionLag, over func(lag.PartitionLag) bool, colour bool) error {
	var cells [][]string
	for _, r := range rows {
		age := ""
		if r.LagRecords > 0 && r.LagSeconds > 0 {
			age = time.Duration(r.LagSeconds * float64(time.Second)).Round(100 * time.Millisecond).String()
		}
		note := ""
		switch {
		case r.LostToRetention > 0:
			note = fmt.Sprintf("%d records deleted on the source before replication", r.LostToRetention)
		case !r.Started:
			note = "not replicated yet"
		}
		lagCell := fmt.Sprint(r.LagRecords)
		if over(r) {
			note = strings.TrimPrefix(note+"; over threshold", "; ")
			if colour {
				lagCell = "\033[31m" + lagCell + "\033[0m"
			}
		}
		cells = append(cells, []string{r.Flow, r.Topic, fmt.Sprint(r.Partition), r.RemoteTopic, fmt.Sprint(r.SourceEnd), fmt.Sprint(r.Next),
			lagCell, age, note})
	}
	return output.Table(w, []string{"FLOW", "TOPIC", "PARTITION", "REMOTE TOPIC", "SOURCE END", "NEXT", "LAG", "LAG TIME", "NOTE"}, cells)
}
