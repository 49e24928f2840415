// Package lagcmd implements `kmm lag`: replication lag per source partition (records not yet on
// the target and the age of the oldest of them), from the clusters themselves: source offsets
// and the resume positions stored on the target. Thresholds turn it into a check (exit 3).
package lagcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/flowconf"
	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/lag"
	"github.com/kmmproject/kmm/pkg/output"
	"github.com/kmmproject/kmm/pkg/rdkafka"
	"github.com/kmmproject/kmm/pkg/replicator"
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
	opts, err := cmdutil.LoadOptions(c)
	if err != nil {
		return err
	}
	cfg, err := cmdutil.Load(opts, io.ErrOut)
	if err != nil {
		return err
	}
	all, err := flowconf.Replicator(cfg)
	if err != nil {
		return kerr.Wrap(kerr.Usage, err)
	}
	var flows []*replicator.Flow
	for _, f := range all {
		if !f.Enabled || (c.String("flow") != "" && f.Name() != c.String("flow")) {
			continue
		}
		if err := f.Validate(); err != nil {
			return kerr.Wrap(kerr.Usage, err)
		}
		flows = append(flows, f)
	}
	if len(flows) == 0 {
		return kerr.New(kerr.Usage, "no enabled flow matches --flow %q", c.String("flow"))
	}
	th := lag.Thresholds{MaxRecords: c.Int64("max-lag"), MaxTime: c.Duration("max-lag-time")}
	topics := c.StringSlice("topic")
	for {
		rows, err := collect(c.Context, flows, topics)
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

// collect reads, per flow, the selected source partitions' offsets and the positions stored on
// the target, and the timestamps of the oldest unreplicated records.
func collect(ctx context.Context, flows []*replicator.Flow, topics []string) ([]lag.PartitionLag, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var ins []lag.PartitionInput
	for _, f := range flows {
		src, err := rdkafka.NewAdmin("cluster "+f.Source, f.SourceAdmin)
		if err != nil {
			return nil, err
		}
		defer src.Close()
		tgt, err := rdkafka.NewAdmin("cluster "+f.Target, f.TargetAdmin)
		if err != nil {
			return nil, err
		}
		defer tgt.Close()
		for _, a := range []struct {
			adm        *rdkafka.Admin
			alias, boo string
		}{{src, f.Source, f.SourceBootstrap}, {tgt, f.Target, f.TargetBootstrap}} {
			if _, err := a.adm.Ping(ctx, 10*time.Second); err != nil {
				return nil, kerr.WithHint(kerr.Wrap(kerr.Unreachable, fmt.Errorf("cluster %s (bootstrap %s): %w", a.alias, a.boo, err)),
					"check the cluster's bootstrap.servers and security settings (kmm config explain)")
			}
		}
		ts, err := src.ListTopics(ctx)
		if err != nil {
			return nil, err
		}
		var tps []rdkafka.TP
		for t, info := range ts {
			if !f.Selected(t) || (len(topics) > 0 && !slices.Contains(topics, t)) {
				continue
			}
			for p := 0; p < info.Partitions; p++ {
				tps = append(tps, rdkafka.TP{Topic: t, Partition: int32(p)})
			}
		}
		if len(tps) == 0 {
			continue
		}
		starts, err := src.ListOffsets(ctx, tps, rdkafka.Earliest)
		if err != nil {
			return nil, err
		}
		ends, err := src.ListOffsets(ctx, tps, rdkafka.Latest)
		if err != nil {
			return nil, err
		}
		stored, err := replicator.ReadSourcePositions(ctx, tgt, f.TargetConsumer, f.OffsetsTopic, f.Source)
		if err != nil {
			return nil, err
		}
		need := map[rdkafka.TP]int64{}
		var flowIns []lag.PartitionInput
		for _, tp := range tps {
			st, ok := stored[tp]
			if !ok {
				st = -1
			}
			in := lag.PartitionInput{Flow: f.Name(), Topic: tp.Topic, RemoteTopic: f.Policy.FormatRemoteTopic(f.Source, tp.Topic), Partition: tp.Partition,
				SourceStart: starts[tp].Offset, SourceEnd: ends[tp].Offset, Stored: st}
			if next := max(lag.Next(in), in.SourceStart); next < in.SourceEnd {
				need[tp] = next
			}
			flowIns = append(flowIns, in)
		}
		oldest := oldestTimestamps(ctx, f, need)
		for i := range flowIns {
			flowIns[i].OldestUnreplicatedMs = oldest[rdkafka.TP{Topic: flowIns[i].Topic, Partition: flowIns[i].Partition}]
		}
		ins = append(ins, flowIns...)
	}
	return lag.Compute(ins, time.Now()), nil
}

// oldestTimestamps reads one record at each given offset and returns its timestamp.
func oldestTimestamps(ctx context.Context, f *replicator.Flow, at map[rdkafka.TP]int64) map[rdkafka.TP]int64 {
	out := map[rdkafka.TP]int64{}
	if len(at) == 0 {
		return out
	}
	c, err := rdkafka.NewConsumer("cluster "+f.Source, f.SourceConsumer)
	if err != nil {
		return out
	}
	defer c.Close()
	if err := c.Assign(at); err != nil {
		return out
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(out) < len(at) && time.Now().Before(deadline) {
		recs, err := c.Poll(ctx, 1000, 500*time.Millisecond)
		if err != nil {
			return out
		}
		for _, r := range recs {
			tp := rdkafka.TP{Topic: r.Topic, Partition: r.Partition}
			if _, seen := out[tp]; !seen {
				out[tp] = r.Timestamp.UnixMilli()
			}
		}
	}
	return out
}
