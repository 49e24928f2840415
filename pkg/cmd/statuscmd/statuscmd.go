// Package statuscmd implements `kmm status`: for every flow of an MM2 properties file, OK,
// DEGRADED or DOWN with the reasons in plain words, from the clusters themselves (not local
// state), so it works from any machine and while the source is down. Exit 3 when a flow is not
// OK.
package statuscmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/health"
	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/lag"
	"github.com/kmmproject/kmm/pkg/output"
	"github.com/kmmproject/kmm/pkg/snapshot"
)

// Options are the flags and arguments of `kmm status`.
type Options struct {
	File     mm2conf.LoadOptions
	Flow     flow.Selector
	Output   string
	Limits   health.Limits
	Endpoint string
}

// Validate returns a usage error (exit 2) for bad flag values, before the file is read.
func (o *Options) Validate() error {
	return errors.Join(
		cmdutil.OneOf("output", o.Output, "table", "json"),
		cmdutil.NonNegativeDuration("max-heartbeat-age", o.Limits.MaxHeartbeatAge),
		cmdutil.NonNegativeDuration("max-progress-age", o.Limits.MaxProgressAge),
		cmdutil.NonNegative("max-lag-records", o.Limits.MaxLagRecords),
		cmdutil.NonNegativeDuration("max-checkpoint-age", o.Limits.MaxCheckpointAge),
		cmdutil.OptionalHTTPURL("endpoint", o.Endpoint),
	)
}

// Command returns `kmm status`.
func Command(f *cmdutil.Factory) *cli.Command {
	return cmdutil.WithExamples(&cli.Command{
		Name:      "status",
		Usage:     "show the health of each replication flow (OK, DEGRADED, DOWN and why)",
		ArgsUsage: "mirror-maker.properties",
		Description: `Reads the clusters themselves (heartbeats, stored progress, checkpoints, source offsets), not
local state, so it works from any machine with the properties file and while the source is down.
Exit 3 when a flow is not OK.`,
		Flags: append(append(cmdutil.ConfigFlags(), cmdutil.OutputFlag("table", "json")), append(cmdutil.FlowFlags(false),
			&cli.DurationFlag{Name: "max-heartbeat-age", Usage: "heartbeats older than `AGE` make a flow DEGRADED (default max(1m, 10 × interval))"},
			&cli.DurationFlag{Name: "max-progress-age", Usage: "no stored progress for `AGE` while records wait makes a flow DEGRADED (default max(2m, 10 × flush interval))"},
			&cli.Int64Flag{Name: "max-lag-records", Aliases: cmdutil.OldNames("max-lag-records"), Usage: "more than `N` records waiting makes a flow DEGRADED (0 = off)"},
			&cli.StringFlag{Name: "endpoint", Usage: "also ask a running 'kmm replicate --listen' at this `URL` (e.g. http://127.0.0.1:8083) how its flows run, and take the replicated positions it has acknowledged"},
			&cli.DurationFlag{Name: "max-checkpoint-age", Usage: "a group committing past checkpoints older than `AGE` makes a flow DEGRADED (default 2m)"},
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
			return Run(c.Context, &Options{File: file, Flow: cmdutil.FlowSelector(c), Output: out, Endpoint: c.String("endpoint"),
				Limits: health.Limits{MaxHeartbeatAge: c.Duration("max-heartbeat-age"), MaxProgressAge: c.Duration("max-progress-age"),
					MaxLagRecords: c.Int64("max-lag-records"), MaxCheckpointAge: c.Duration("max-checkpoint-age")}}, f)
		},
	},
		cmdutil.Example{What: "OK, DEGRADED or DOWN per flow, and why (exit 3 unless all OK, 4 when no cluster answers)", Cmd: "kmm status mirror-maker.properties"},
		cmdutil.Example{What: "one flow, as JSON", Cmd: "kmm status mirror-maker.properties --flow 'A->B' -o json"},
		cmdutil.Example{What: "also ask the running replicate process how its flows run, with a lag limit", Cmd: "kmm status mirror-maker.properties --endpoint http://127.0.0.1:8083 --max-lag-records 10000"},
	)
}

// Run runs `kmm status`.
func Run(ctx context.Context, o *Options, f *cmdutil.Factory) error {
	if err := cmdutil.Validate(o); err != nil {
		return err
	}
	_, all, err := f.Flows(o.File)
	if err != nil {
		return err
	}
	flows, err := flow.All(all, o.Flow, false)
	if err != nil {
		return err
	}
	var reps []health.Report
	var bad []string
	var live snapshot.LiveFunc
	if o.Endpoint != "" {
		live = func(fl *flow.Flow) map[cluster.TP]lag.Observed {
			return snapshot.LivePositions(ctx, o.Endpoint, fl, f.Now())
		}
	}
	sts := snapshot.StatusLive(ctx, f.Clusters, flows, live)
	if err := ctx.Err(); err != nil {
		return err // interrupted: exit 130, no half-collected table
	}
	if o.Endpoint != "" {
		names := make([]string, len(sts))
		for i, st := range sts {
			names[i] = st.Flow
		}
		eps := snapshot.Endpoint(ctx, o.Endpoint, names)
		for i := range sts {
			sts[i].Endpoint = eps[sts[i].Flow]
		}
	}
	now := f.Now()
	for _, st := range sts {
		r := health.Evaluate(st, now, o.Limits)
		reps = append(reps, r)
		if !r.State.Healthy() {
			bad = append(bad, r.Flow+" "+string(r.State))
		}
	}
	if err := render(f.IO, o.Output, reps, now); err != nil {
		return err
	}
	if allUnreachable(sts) {
		errs, aliases := unreachable(sts)
		return kerr.WithHint(kerr.Wrap(kerr.Unreachable, fmt.Errorf("no cluster of the file answered: %w", cluster.JoinUnreachable(errs...))),
			cluster.UnreachableHint("", aliases...))
	}
	if len(bad) > 0 {
		return kerr.New(kerr.CheckFailed, "not OK: %s", strings.Join(bad, ", "))
	}
	return nil
}

// allUnreachable reports whether no cluster of any flow answered (exit 4 rather than 3).
func allUnreachable(sts []health.FlowStatus) bool {
	for _, st := range sts {
		if st.SourceErr == nil || st.TargetErr == nil {
			return false
		}
	}
	return len(sts) > 0
}

// unreachable lists the clusters that did not answer, each once (a cluster of several flows
// was asked once per flow), with their aliases.
func unreachable(sts []health.FlowStatus) (errs []error, aliases []string) {
	seen := map[string]bool{}
	add := func(alias, boot string, err error) {
		if err == nil || seen[alias] {
			return
		}
		seen[alias] = true
		errs = append(errs, cluster.Named(alias, boot, err))
		aliases = append(aliases, alias)
	}
	for _, st := range sts {
		add(st.Source, st.SourceBoot, st.SourceErr)
		add(st.Target, st.TargetBoot, st.TargetErr)
	}
	return errs, aliases
}

// num is *n, or unknown when it is not known.
func num[T int | int64](n *T, unknown string) string {
	if n == nil {
		return unknown
	}
	return fmt.Sprint(*n)
}

// ages is how long ago something was on the target: "never" when nothing is there (-1), "?"
// when not known (the target unreachable).
func ages(ms *int64) string {
	switch {
	case ms == nil:
		return "?"
	case *ms < 0:
		return "never"
	}
	return (time.Duration(*ms) * time.Millisecond).Round(time.Second).String() + " ago"
}

func render(io *iostreams.IOStreams, out string, reps []health.Report, now time.Time) error {
	if out == "json" {
		return output.WriteJSON(io.Out, output.Envelope{SchemaVersion: output.SchemaVersion, Kind: "status", GeneratedAt: now.UTC(), Items: reps})
	}
	pal := io.Palette()
	var rows [][]string
	for _, r := range reps {
		state := pal.State(string(r.State))
		// What is not known is "?", never 0; what does not apply (a heartbeats-only flow's
		// topics, lag and progress) is "-".
		unknown := "?"
		if r.HeartbeatsOnly {
			unknown = "-"
		}
		topics := unknown
		if r.TopicsMatched != nil {
			onT := "?"
			if r.TopicsMissing != nil {
				onT = fmt.Sprint(*r.TopicsMatched - *r.TopicsMissing)
			}
			topics = fmt.Sprintf("%s/%d", onT, *r.TopicsMatched)
		}
		progress := ages(r.ProgressAgeMs)
		if r.HeartbeatsOnly {
			progress = "-"
		}
		rows = append(rows, []string{r.Flow, state, topics, num(r.Partitions, unknown), num(r.LagRecords, unknown),
			ages(r.HeartbeatAgeMs), progress, ages(r.CheckpointAgeMs)})
	}
	if err := output.Table(io.Out, []string{"FLOW", "STATE", "TOPICS ON TARGET", "PARTITIONS", "LAG", "LAST HEARTBEAT", "LAST PROGRESS", "LAST CHECKPOINT"}, rows); err != nil {
		return err
	}
	for _, r := range reps {
		for _, why := range r.Reasons {
			fmt.Fprintf(io.Out, "%s: %s\n", r.Flow, why)
		}
		for _, w := range r.Workers {
			lead := ""
			if w.Leader {
				lead = " (leader)"
			}
			fmt.Fprintf(io.Out, "%s: worker %s pid %d%s copies %d partition(s): %s\n", r.Flow, w.Host, w.PID, lead, len(w.Partitions), strings.Join(w.Partitions, " "))
		}
	}
	for _, r := range reps {
		if r.RateLimit <= 0 {
			continue
		}
		line := fmt.Sprintf("%s: rate limit %s/s", r.Flow, cmdutil.FormatBytes(r.RateLimit))
		if r.RateLimitFrom == "endpoint" {
			line += " (the running replicator's)"
		} else {
			line += " (kmm.rate.limit.bytes.per.second)"
		}
		if r.ThrottledSeconds != nil {
			line += fmt.Sprintf("; its pipelines waited %s for it since start", (time.Duration(*r.ThrottledSeconds * float64(time.Second))).Round(100*time.Millisecond))
		}
		fmt.Fprintln(io.Out, line)
	}
	return nil
}
