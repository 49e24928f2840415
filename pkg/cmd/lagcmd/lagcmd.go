// Package lagcmd implements `kmm lag`: replication lag per source partition (records not yet on
// the target and the age of the oldest of them), from the clusters themselves: source offsets
// and the resume positions stored on the target. Thresholds turn it into a check (exit 3).
package lagcmd

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/lag"
	"github.com/kmmproject/kmm/pkg/output"
	"github.com/kmmproject/kmm/pkg/replicator"
	"github.com/kmmproject/kmm/pkg/snapshot"
)

// Command returns `kmm lag`.
func Command(io *iostreams.IOStreams) *cli.Command {
	return &cli.Command{
		Name:      "lag",
		Usage:     "show replication lag per partition (records and time); thresholds make it a check",
		ArgsUsage: "mirror-maker.properties",
		Flags: append(cmdutil.ConfigFlags(), cmdutil.OutputFlag("table", "json"),
			&cli.StringFlag{Name: "flow", Usage: "only this flow, e.g. A->B"},
			&cli.StringSliceFlag{Name: "topic", Usage: "only these source topics"},
			&cli.Int64Flag{Name: "max-lag", Usage: "exit 3 when a partition is more than N records behind"},
			&cli.DurationFlag{Name: "max-lag-time", Usage: "exit 3 when a partition's oldest unreplicated record is older than D"},
			&cli.BoolFlag{Name: "watch", Usage: "repeat every --interval (redraw on a terminal, NDJSON otherwise)"},
			&cli.DurationFlag{Name: "interval", Value: 5 * time.Second, Usage: "refresh interval of --watch"},
		),
		Action: func(c *cli.Context) error { return run(c, io) },
	}
}

func run(c *cli.Context, io *iostreams.IOStreams) error {
	out, err := cmdutil.Output(c, "table", "json")
	if err != nil {
		return err
	}
	_, all, err := cmdutil.LoadFlows(c, io.ErrOut)
	if err != nil {
		return err
	}
	var flows []*replicator.Flow
	for _, f := range all {
		if f.Enabled && (c.String("flow") == "" || f.Name() == c.String("flow")) {
			flows = append(flows, f)
		}
	}
	if len(flows) == 0 {
		return kerr.New(kerr.Usage, "no enabled flow matches --flow %q", c.String("flow"))
	}
	th := lag.Thresholds{MaxRecords: c.Int64("max-lag"), MaxTime: c.Duration("max-lag-time")}
	topics := c.StringSlice("topic")
	for {
		rows, err := snapshot.Lag(c.Context, flows, topics)
		if err != nil {
			return err
		}
		viol := lag.Violations(rows, th)
		if err := render(io, out, rows, c.Bool("watch")); err != nil {
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

func render(io *iostreams.IOStreams, out string, rows []lag.PartitionLag, watch bool) error {
	if out == "json" || (watch && !io.IsStdoutTTY()) {
		if watch {
			enc := json.NewEncoder(io.Out)
			enc.SetEscapeHTML(false)
			return enc.Encode(output.Envelope{SchemaVersion: output.SchemaVersion, Kind: "lag", GeneratedAt: time.Now().UTC(), Items: rows})
		}
		return output.WriteJSON(io.Out, output.Envelope{SchemaVersion: output.SchemaVersion, Kind: "lag", GeneratedAt: time.Now().UTC(), Items: rows})
	}
	if watch {
		fmt.Fprint(io.Out, "\033[H\033[2J")
		fmt.Fprintf(io.Out, "kmm lag  %s\n\n", time.Now().Format("15:04:05"))
	}
	return table(io.Out, rows)
}

func table(w io.Writer, rows []lag.PartitionLag) error {
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
		cells = append(cells, []string{r.Flow, r.Topic, fmt.Sprint(r.Partition), r.RemoteTopic, fmt.Sprint(r.SourceEnd), fmt.Sprint(r.Next),
			fmt.Sprint(r.LagRecords), age, note})
	}
	return output.Table(w, []string{"FLOW", "TOPIC", "PARTITION", "REMOTE TOPIC", "SOURCE END", "NEXT", "LAG", "LAG TIME", "NOTE"}, cells)
}
