// Package verifycmd implements `kmm verify`: is the target a faithful, failover-ready copy of
// the source? Findings come from pkg/verify; this package parses flags and the drill TOML,
// renders the table, JSON and JUnit XML, and maps failures to exit 3.
package verifycmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"time"

	"github.com/kmmproject/kmm/pkg/drill"
	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/output"
	"github.com/kmmproject/kmm/pkg/verify"
)

// Options are the flags and arguments of `kmm verify`.
type Options struct {
	File       mm2conf.LoadOptions
	Flow       flow.Selector
	Topics     string // regular expression over source topic names
	Groups     string // regular expression over group ids
	Level      string
	Output     string
	JUnit      string
	Samples    int
	Seed       uint64
	From       string // "" or "groups"
	Parallel   int
	Canary     time.Duration
	Thresholds verify.Thresholds
}

// Command returns `kmm verify`.
func Command(f *cmdutil.Factory) *cli.Command {
	return cmdutil.WithExamples(&cli.Command{
		Name:      "verify",
		Usage:     "prove the target is a faithful, failover-ready copy of the source (metadata, sample or full comparison, canary)",
		ArgsUsage: "mirror-maker.properties",
		Description: `Read-only on both clusters (the canary alone writes, to its own topic). Levels:
  metadata (default)  remote topics, partitions, replication factor, topic configs, ACL coverage,
                      per partition progress, retention gaps, records deleted on the target, lag,
                      heartbeats, offset syncs, checkpoints and each group's translated offsets,
                      and the flow's failover state; costs grow with partitions, not records
  sample              + for --samples offset-sync anchors per partition (seeded by --seed), the
                      source and target records the anchor pairs are compared field by field
  full                + both sides streamed per partition (read_committed) and compared by record
                      digests over ranges, a mismatching range bisected to its first differing
                      record; missing, extra, diverged and duplicated records reported apart
                      (duplicates are at-least-once and only counted unless --max-duplicates)

--canary D produces probes to the topic kmm-canary on the source for D and reads them on the
target: the flow's topics filter must select kmm-canary.

Exit 0 when nothing failed (warnings allowed), 3 when a check failed, 4 when a cluster is
unreachable, 2 for usage errors. Thresholds can also come from a drill file (--drill) with a
[verify] table: level, max_lag_records, max_lag_time, max_checkpoint_age, max_duplicates.`,
		Flags: append(append(cmdutil.ConfigFlags(), cmdutil.OutputFlag("table", "json")), append(cmdutil.FlowFlags(false),
			&cli.StringFlag{Name: "topics", Usage: "only source topics matching this regular expression (full match)"},
			&cli.StringFlag{Name: "groups", Usage: "only consumer groups matching this regular expression (full match)"},
			&cli.StringFlag{Name: "level", Value: verify.LevelMetadata, Usage: "metadata, sample or full"},
			&cli.StringFlag{Name: "junit", Usage: "also write JUnit XML to `FILE` (one test case per check and partition)"},
			&cli.IntFlag{Name: "samples", Value: 5, Usage: "sample: offset-sync anchors per partition"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "sample: seed of the anchor choice (same seed, same anchors)"},
			&cli.StringFlag{Name: "from", Usage: "full: 'groups' compares only from each group's translated position to the end"},
			&cli.IntFlag{Name: "parallel", Value: defaultParallel(), DefaultText: "the number of CPUs, 2 to 8", Usage: "full: partitions compared at once (two readers each, sharing an 8 MiB prefetch budget, at least 1 MiB each)"},
			&cli.DurationFlag{Name: "canary", Usage: "produce probes to kmm-canary for D and report gaps and latency"},
			&cli.Int64Flag{Name: "max-lag-records", Usage: "fail when a partition is more than N records behind"},
			&cli.DurationFlag{Name: "max-lag-time", Usage: "fail when a partition's oldest unreplicated record is older than D"},
			&cli.DurationFlag{Name: "max-checkpoint-age", Usage: "fail when a group committed on the source past a checkpoint older than D"},
			&cli.Int64Flag{Name: "max-duplicates", Value: -1, Usage: "full: fail when a partition has more than N duplicates (-1: never)"},
			&cli.StringFlag{Name: "drill", Usage: "read level and thresholds from the [verify] table of this drill `FILE` (TOML)"},
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
			o := &Options{File: file, Flow: cmdutil.FlowSelector(c), Topics: c.String("topics"), Groups: c.String("groups"), Level: c.String("level"),
				Output: out, JUnit: c.String("junit"), Samples: c.Int("samples"), Seed: c.Uint64("seed"), From: c.String("from"),
				Parallel: c.Int("parallel"), Canary: c.Duration("canary"),
				Thresholds: verify.Thresholds{MaxLagRecords: c.Int64("max-lag-records"), MaxLagTime: c.Duration("max-lag-time"), MaxCheckpointAge: c.Duration("max-checkpoint-age")}}
			if d := c.Int64("max-duplicates"); d != cmdutil.Off {
				o.Thresholds.MaxDuplicates = &d // Validate refuses what is below -1
			}
			if err := applyDrill(c.String("drill"), o, c.IsSet); err != nil {
				return err
			}
			return Run(c.Context, o, f)
		},
	},
		cmdutil.Example{What: "metadata checks of every flow (read-only)", Cmd: "kmm verify mirror-maker.properties"},
		cmdutil.Example{What: "compare sampled records of one flow, reproducibly", Cmd: "kmm verify mirror-maker.properties --flow 'A->B' --level sample --samples 10 --seed 7"},
		cmdutil.Example{What: "compare every record of some topics, as JSON", Cmd: "kmm verify mirror-maker.properties --level full --topics 'orders|payments' -o json"},
		cmdutil.Example{What: "only what the groups would read after a failover", Cmd: "kmm verify mirror-maker.properties --level full --from groups --groups 'billing.*'"},
		cmdutil.Example{What: "as a CI gate with thresholds and a JUnit report", Cmd: "kmm verify mirror-maker.properties --max-lag-records 1000 --max-lag-time 1m --junit verify.xml"},
		cmdutil.Example{What: "thresholds from a drill file", Cmd: "kmm verify mirror-maker.properties --drill drill.toml"},
		cmdutil.Example{What: "send probes for 30 seconds and report gaps and latency", Cmd: "kmm verify mirror-maker.properties --canary 30s"},
	)
}

// applyDrill fills what the command line did not set from the [verify] table of the drill file
// at path, if any (read strictly through pkg/drill: errors name file:line).
func applyDrill(path string, o *Options, isSet func(string) bool) error {
	return drill.Given(path, func(d *drill.Drill) { applyVerify(d, o, isSet) })
}

func applyVerify(d *drill.Drill, o *Options, isSet func(string) bool) {
	v := d.Verify
	if v.Level != "" && !isSet("level") {
		o.Level = v.Level
	}
	if v.MaxLagRecords != nil && !isSet("max-lag-records") {
		o.Thresholds.MaxLagRecords = *v.MaxLagRecords
	}
	if v.MaxLagTime.Set && !isSet("max-lag-time") {
		o.Thresholds.MaxLagTime = v.MaxLagTime.Duration
	}
	if v.MaxCheckpointAge.Set && !isSet("max-checkpoint-age") {
		o.Thresholds.MaxCheckpointAge = v.MaxCheckpointAge.Duration
	}
	if v.MaxDuplicates != nil && !isSet("max-duplicates") && *v.MaxDuplicates >= 0 {
		o.Thresholds.MaxDuplicates = v.MaxDuplicates
	}
}

func compile(flag, re string) (func(string) bool, error) {
	if re == "" {
		return nil, nil
	}
	rx, err := regexp.Compile("^(?:" + re + ")$")
	if err != nil {
		return nil, kerr.WithHint(kerr.New(kerr.Usage, "--%s %q: %v", flag, re, err), "a Go regular expression matched against the whole name, e.g. 'orders|payments.*'")
	}
	return rx.MatchString, nil
}

// Validate returns a usage error (exit 2) for bad flag values (a drill file's included), before
// anything is read.
func (o *Options) Validate() error {
	errs := []error{cmdutil.OneOf("output", o.Output, cmdutil.OutputChoices...)}
	if cmdutil.OneOf("level", o.Level, cmdutil.LevelChoices...) != nil {
		errs = append(errs, kerr.New(kerr.Usage, "--level must be metadata, sample or full, not %q", o.Level))
	}
	switch {
	case o.From != "" && o.From != "groups":
		errs = append(errs, kerr.New(kerr.Usage, "--from must be groups, not %q", o.From))
	case o.From != "" && o.Level != verify.LevelFull:
		errs = append(errs, kerr.New(kerr.Usage, "--from groups applies to --level full"))
	}
	errs = append(errs,
		cmdutil.AtLeast("samples", int64(o.Samples), 1),
		cmdutil.AtLeast("parallel", int64(o.Parallel), 1),
		cmdutil.NonNegativeDuration("canary", o.Canary),
		cmdutil.NonNegative("max-lag-records", o.Thresholds.MaxLagRecords),
		cmdutil.NonNegativeDuration("max-lag-time", o.Thresholds.MaxLagTime),
		cmdutil.NonNegativeDuration("max-checkpoint-age", o.Thresholds.MaxCheckpointAge))
	if d := o.Thresholds.MaxDuplicates; d != nil {
		errs = append(errs, cmdutil.AtLeastOrOff("max-duplicates", *d, 0))
	}
	return errors.Join(errs...)
}

// Run runs `kmm verify`. With --junit, a run that fails before its report is written (a cluster
// unreachable, a bad file or flag) writes a JUnit file whose one failing test case names the
// cause, so that a CI job gating on the file does not read an empty or stale one.
func Run(ctx context.Context, o *Options, fac *cmdutil.Factory) error {
	reported := false
	err := run(ctx, o, fac, &reported)
	if err != nil && o.JUnit != "" && !reported && !errors.Is(err, errJUnitPath) {
		if werr := writeJUnitError(o.JUnit, err, fac.Now()); werr != nil {
			fmt.Fprintf(fac.IO.ErrOut, "kmm: --junit %s: %v\n", o.JUnit, werr)
		}
	}
	return err
}

// errJUnitPath marks the error of a --junit file that cannot be written.
var errJUnitPath = errors.New("--junit")

func run(ctx context.Context, o *Options, fac *cmdutil.Factory, reported *bool) error {
	if err := cmdutil.Validate(o); err != nil {
		return err
	}
	topics, err := compile("topics", o.Topics)
	if err != nil {
		return err
	}
	groups, err := compile("groups", o.Groups)
	if err != nil {
		return err
	}
	if o.JUnit != "" {
		// Fail before reading a cluster when the report cannot be written.
		fh, err := os.OpenFile(o.JUnit, os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return kerr.Wrap(kerr.Usage, fmt.Errorf("%w: %v", errJUnitPath, err))
		}
		fh.Close()
	}
	_, all, err := fac.Flows(o.File)
	if err != nil {
		return err
	}
	flows, err := flow.All(all, o.Flow, true)
	if err != nil {
		return err
	}
	prog := newProgress(fac)
	var reports []*verify.Report
	for _, f := range flows {
		rep, err := verify.Run(ctx, fac.Clusters, f, verify.Options{Level: o.Level, Topics: topics, Groups: groups, Samples: o.Samples, Seed: o.Seed,
			FromGroups: o.From == "groups", Parallel: o.Parallel, Thresholds: o.Thresholds, Progress: prog, Now: fac.Now})
		if err != nil {
			if ctx.Err() != nil {
				return kerr.Wrap(kerr.Interrupted, ctx.Err())
			}
			return err
		}
		if o.Canary > 0 {
			fd, err := verify.Canary(ctx, fac.Clusters, f, verify.CanaryOptions{Duration: o.Canary, Progress: prog})
			if err != nil {
				if ctx.Err() != nil {
					return kerr.Wrap(kerr.Interrupted, ctx.Err())
				}
				return err
			}
			rep.Add(fd)
			rep.Finish(fac.Now().UTC())
		}
		reports = append(reports, rep)
	}
	if o.Output == "json" {
		if err := output.WriteJSON(fac.IO.Out, output.Envelope{SchemaVersion: output.SchemaVersion, Kind: "verify", GeneratedAt: fac.Now().UTC(), Items: reports}); err != nil {
			return err
		}
	} else if err := renderTable(fac.IO.Out, reports, fac.IO.ColorEnabled()); err != nil {
		return err
	}
	if o.JUnit != "" {
		if err := writeJUnit(o.JUnit, reports); err != nil {
			return err
		}
		*reported = true
	}
	failed := 0
	for _, r := range reports {
		failed += r.Summary.Fail
	}
	if failed > 0 {
		return kerr.New(kerr.CheckFailed, "verify: %d finding(s) failed", failed)
	}
	return nil
}

// defaultParallel is --parallel's default: one partition compared at a time per CPU, 2 to 8
// (each is two librdkafka clients with their threads; measured on 2 cores, 4 at once read at
// 0.62-0.70x the consume-only ceiling and 2 at 0.73-0.87x, docs/benchmarks.md).
func defaultParallel() int { return min(max(runtime.NumCPU(), 2), 8) }
