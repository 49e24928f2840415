// Package failovercmd implements `kmm failover` (CLI glue: options, flags, preflight reads,
// rendering); the steps and their actions are pkg/switchover's.
package failovercmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/cmd/drshared"
	"github.com/kmmproject/kmm/pkg/drill"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/output"
	"github.com/kmmproject/kmm/pkg/plan"
	"github.com/kmmproject/kmm/pkg/switchover"
)

// Options are the flags and arguments of `kmm failover`.
type Options struct {
	drshared.Common
	Mode   string
	MaxRPO int64 // --max-rpo-records (emergency; -1 off)
	// MaxCkAge: --max-checkpoint-age (0 off): emergency refuses groups whose newest checkpoint
	// is older (unless AcceptLoss); planned's preflight refuses groups that committed past a
	// checkpoint older than this.
	MaxCkAge   time.Duration
	AcceptLoss bool
	// Report is --report FILE.md: the evidence report for auditors ("" none).
	Report string
	// PreHook/PostHook are the drill file's hook commands (sh -c).
	PreHook, PostHook string
}

// Validate checks the flags before anything is read (exit 2).
func (o *Options) Validate() error {
	if err := cmdutil.OneOf("mode", o.Mode, cmdutil.ModeChoices...); err != nil {
		return kerr.WithHint(kerr.New(kerr.Usage, "--mode %q: unknown", o.Mode), "use --mode planned, emergency or rehearse")
	}
	noFence := ""
	if o.Mode != "planned" {
		noFence = fmt.Sprintf("only planned mode fences the source (in %s mode %s)", o.Mode,
			map[string]string{"emergency": "the source is down", "rehearse": "nothing is cut over"}[o.Mode])
	}
	return errors.Join(o.CheckFence(noFence), o.CheckWaits(), cmdutil.AtLeastOrOff("max-rpo-records", o.MaxRPO, 0),
		cmdutil.NonNegativeDuration("max-checkpoint-age", o.MaxCkAge), drshared.CheckReportDir(o.Report))
}

// Command returns `kmm failover`.
func Command(f *cmdutil.Factory) *cli.Command {
	return cmdutil.WithExamples(&cli.Command{
		Name:      "failover",
		Usage:     "make a flow's target the primary: drain, translate group offsets exactly, commit them, mark the flow failed over",
		ArgsUsage: "mirror-maker.properties",
		Description: `--mode planned (both clusters up): with the source's writers stopped (--fence none
--quiet-for D waits until no source end offset moves for D), waits until every partition is
replicated to the source's end (the replicated position of kmm lag), marks the flow FAILING_OVER
in __kmm_state (a running kmm replicate stops it and stores its final progress), waits until no
replicator of the flow is alive, translates each group's committed offset on the source exactly
(anchored on the offset syncs, records counted on both sides, the record at the result compared
with the source's) and commits it to the same group on the target, then marks the flow
FAILED_OVER with the cut. The groups' consumers must be stopped on both clusters.
The plan is printed first; --dry-run stops there; a terminal asks, otherwise --yes is required.
An interrupted run resumes where it stopped. Exit 3: a preflight check failed (nothing written).

--mode emergency (the source is down, an outage): the source is probed first (reachable: exit 3,
use planned mode; --force overrides). Nothing is read from the source: the groups are committed
on the target where their checkpoints and kmm's offset map put them (exact where the map knows;
a group at or past what the target holds resumes at its end), the flow is marked FAILED_OVER
with the cut, and the RPO is stated: records known written on the source and not on the target
(rpo_records), the estimate of the most (rpo_records_max) and how old that knowledge is. Gates:
--max-rpo-records N and --max-checkpoint-age D refuse (exit 3, nothing changed) unless
--accept-loss. The running kmm replicate of the flow stops itself at the mark.

--mode rehearse (a drill with no downtime): translates every group as planned mode would now,
commits the offsets to shadow groups kmm-rehearse.<group> on the target (the real groups are not
touched, their consumers may keep running), reads the record at each shadow position and
compares it (key, value, headers, timestamp) with the record at the group's position on the
source, reports what a failover now would cost (records not replicated yet, exact or bound per
group partition, translate and commit times), then deletes the shadow groups. No fence, no flow
state. An interrupted rehearsal's shadow groups are deleted by the next one. Exit 3 when a
position translated as exact does not hold the group's next record.`,
		Flags: append(append(append(append(cmdutil.ConfigFlags(), cmdutil.OutputFlag("table", "json")), cmdutil.FlowFlags(false)...),
			append([]cli.Flag{
				&cli.StringFlag{Name: "mode", Value: "planned", Usage: "planned (both clusters up), emergency (the source is down) or rehearse (a drill: shadow groups only, nothing else changes)"},
				&cli.Int64Flag{Name: "max-rpo-records", Value: -1, Usage: "emergency: refuse (exit 3, nothing changed) when more records than this are known not to be on the target (-1: no limit)"},
				&cli.DurationFlag{Name: "max-checkpoint-age", Usage: "emergency: refuse (exit 3, nothing changed) when a group's newest checkpoint on the target is older than `AGE` (the outage's time counts); planned: the preflight refuses a group that committed on the source past a checkpoint older than AGE (0: off)"},
				&cli.BoolFlag{Name: "accept-loss", Usage: "emergency: fail over even when a gate (--max-rpo-records, --max-checkpoint-age, no end-offset snapshot) fails"},
				drshared.ReportFlag("write an evidence report for auditors to `FILE.md` (Markdown: who, when, the confirmed plan, each step with timestamps, RTO, RPO per partition, re-reads and skips per group and partition), in every mode"),
			}, drshared.Flags(drshared.FlagText{
				Group:          "move these groups (default: the flow's groups filter)",
				Groups:         "move the groups matching this Java regex",
				Fence:          "how writers on the source are stopped (planned mode): none (you stop them; see --quiet-for), acl (DENY WRITE ACLs for --fence-principal, removed by kmm failback), hook (--fence-command)",
				FencePrincipal: "--fence acl: deny this `PRINCIPAL` writes to the flow's source topics (repeatable; User:* denies every principal that is not a super user)",
				FenceCommand:   "--fence hook: a shell `COMMAND` that stops the writers (KMM_FLOW, KMM_SOURCE, KMM_TARGET, KMM_SOURCE_BOOTSTRAP, KMM_TOPICS in its environment); a non-zero exit stops the failover with exit 3",
				QuietFor:       "with --fence none: wait until no source end offset has moved for this long (0: do not wait)",
				Timeout:        "bound of each wait (quiet source, drain, replicator stop)",
				Force:          "also move groups that have members on the source or the target",
				Drill:          "a drill `FILE` (TOML: flow, mode, groups, fence, gates, report, hooks; see testdata/drill/drill.toml); flags given win",
			})...)...), drshared.ApplyFlags()...),
		Action: func(c *cli.Context) error {
			common, err := drshared.FromContext(c)
			if err != nil {
				return err
			}
			o := &Options{Common: common, Mode: c.String("mode"), MaxRPO: c.Int64("max-rpo-records"), MaxCkAge: c.Duration("max-checkpoint-age"),
				AcceptLoss: c.Bool("accept-loss"), Report: c.String("report")}
			if err := drill.Given(c.String("drill"), func(d *drill.Drill) { applyDrill(d, o, c.IsSet) }); err != nil {
				return err
			}
			return Run(c.Context, o, f)
		},
	},
		cmdutil.Example{What: "see the plan of a planned failover, change nothing", Cmd: "kmm failover mirror-maker.properties --flow 'A->B' --mode planned --fence none --quiet-for 10s --dry-run"},
		cmdutil.Example{What: "fail over, moving the groups that match a regex", Cmd: "kmm failover mirror-maker.properties --flow 'A->B' --mode planned --groups 'billing|orders-.*' --yes"},
		cmdutil.Example{What: "the source is down: fail over if at most 1000 records are lost", Cmd: "kmm failover mirror-maker.properties --flow 'A->B' --mode emergency --max-rpo-records 1000 --yes -o json"},
		cmdutil.Example{What: "the source is down: see what an emergency failover would do and lose, change nothing", Cmd: "kmm failover mirror-maker.properties --flow 'A->B' --mode emergency --dry-run --report outage.md"},
		cmdutil.Example{What: "rehearse a failover without downtime: shadow groups only, deleted afterwards", Cmd: "kmm failover mirror-maker.properties --flow 'A->B' --mode rehearse --yes -o json"},
		cmdutil.Example{What: "a DR drill from a reviewed file", Cmd: "kmm failover mirror-maker.properties --drill drill.toml --dry-run"},
	)
}

// envelope is the JSON of failover.
type envelope struct {
	output.Envelope
	Plan   *plan.Plan       `json:"plan"`
	Report *plan.Run        `json:"report,omitempty"`
	Gates  switchover.Gates `json:"gates"`
	// RTOMillis: from the command's start to the last group commit ("consumers may resume").
	RTOMillis int64 `json:"rto_ms,omitempty"`
	// RPORecords: records written on the source and not on the target at the cut (planned: 0,
	// drained); null when the failover did not reach the cut (a dry run, a refusal, a failure).
	RPORecords *int64 `json:"rpo_records"`
}

// request is the failover the options ask for, of flow f, run by by (user@host).
func (o *Options) request(f *flow.Flow, flows []*flow.Flow, groupMatch func(string) bool, by string) switchover.FailoverRequest {
	return switchover.FailoverRequest{F: f, Reverse: flow.Reverse(flows, f), Mode: o.Mode, Groups: o.Groups, GroupMatch: groupMatch, GroupsRegex: o.GroupsRegex,
		Force: o.Force, MaxCkAge: o.MaxCkAge, MaxRPO: o.MaxRPO, AcceptLoss: o.AcceptLoss, QuietFor: o.QuietFor, Timeout: o.Timeout,
		Fence: o.FenceOptions(nil), By: by}
}

// Run runs `kmm failover`.
func Run(ctx context.Context, o *Options, fac *cmdutil.Factory) error {
	start := fac.Now()
	ios := fac.IO
	if err := cmdutil.Validate(o); err != nil {
		return err
	}
	what := "failover changes the flow's state and the groups' offsets on the target"
	if o.Mode == "rehearse" {
		what = "failover --mode rehearse commits and deletes shadow groups (" + switchover.ShadowPrefix + "<group>) on the target"
	}
	if err := cmdutil.CheckConfirmable(o.ApplyOpts, ios, what); err != nil {
		return err
	}
	groupMatch, err := cmdutil.GroupsMatcher(o.GroupsRegex)
	if err != nil {
		return err
	}
	_, flows, err := fac.Flows(o.File)
	if err != nil {
		return err
	}
	f, err := flow.One(flows, o.Flow)
	if err != nil {
		return err
	}
	if !f.Enabled {
		return kerr.New(kerr.Usage, "flow %s is not enabled (%s.enabled = true): it replicates nothing to fail over", f.Name(), f.Name())
	}
	req := o.request(f, flows, groupMatch, fac.UserAtHost())
	env := drshared.Env(fac)
	if o.Mode == "emergency" {
		return runEmergency(ctx, o, fac, req, start)
	}
	need := "planned failover needs both clusters"
	if o.Mode == "rehearse" {
		need = "a rehearsal reads both clusters"
	}
	src, tgt, err := drshared.OpenBoth(ctx, fac, f, need)
	if err != nil {
		return err
	}
	defer src.Close()
	defer tgt.Close()
	fo, gates, err := switchover.PrepareFailover(ctx, env, req, src, tgt)
	if err != nil {
		return err
	}
	fo.Opt.Fence.HookOut = ios.ErrOut
	fo.Opt.Progress = func(msg string) { fmt.Fprintf(ios.ErrOut, "kmm: %s\n", msg) }
	fo.Opt.Meter = func(what string, total int64) switchover.Meter { return ios.NewProgress(what, total, nil) }
	if o.Mode == "rehearse" {
		return runRehearse(ctx, o, fac, fo, gates, start)
	}
	p, err := fo.Plan()
	if err != nil {
		return err
	}
	journal := drshared.Journal(tgt, f, fac)
	defer journal.Close()
	ex := &plan.Executor{Journal: journal, Actions: fo.Actions()}
	if !o.ApplyOpts.DryRun {
		if err := runHook(ctx, ios.ErrOut, "pre", o.PreHook); err != nil {
			return err
		}
	}
	applied, err := cmdutil.Apply(ctx, fac, o.ApplyOpts, p, ex)
	if err == nil && !o.ApplyOpts.DryRun {
		err = runHook(ctx, ios.ErrOut, "post", o.PostHook)
	}
	env2 := envelope{Envelope: output.Envelope{SchemaVersion: output.SchemaVersion, Kind: "failover", GeneratedAt: fac.Now().UTC(),
		Items: fo.Translated()}, Plan: p, Gates: gates}
	if applied != nil && applied.Report != nil {
		env2.Report = applied.Report
		env2.RTOMillis = drshared.RTO(applied.Report, switchover.KindCommitTranslated, start)
	}
	ev := drshared.NewEvidence("failover", o.Mode, f, start, fac.Now(), req.By, p, o.ApplyOpts, applied, err)
	ev.Gates = gates
	if env2.RTOMillis > 0 {
		ev.RTOMillis, ev.RTONote = env2.RTOMillis, "start to the last group commit: consumers may resume on "+f.Target
	}
	ev.Translations = fo.Translated()
	if cut := fo.Cut(); cut != nil && applied != nil && applied.Report != nil && err == nil {
		for _, c := range cut {
			ev.RPO = append(ev.RPO, drshared.RPOLine{Topic: c.Source.Topic, Partition: c.Source.Partition, SourceEnd: c.SourceEnd, Replicated: c.SourceEnd, How: "drained (exact)"})
		}
		ev.RPONote = "drained: every source record is on " + f.Target
		var none int64
		ev.RPOTotal, env2.RPORecords = &none, &none
	} else {
		ev.RPONote = "not measured: the failover did not reach the cut"
	}
	if o.Output == "json" {
		if werr := output.WriteJSON(ios.Out, env2); werr != nil && err == nil {
			err = werr
		}
	} else if tr := fo.Translated(); len(tr) > 0 {
		fmt.Fprintln(ios.Out)
		if rerr := drshared.RenderTranslations(ios.Out, tr, columns); rerr != nil && err == nil {
			err = rerr
		}
		if env2.RTOMillis > 0 {
			fmt.Fprintf(ios.Out, "\nRTO %s (start to the last group commit: consumers may resume on %s); RPO 0 records (drained: every source record is on %s)\n",
				(time.Duration(env2.RTOMillis) * time.Millisecond).Round(time.Millisecond), f.Target, f.Target)
		}
	}
	return drshared.WriteReport(o.Report, ios.ErrOut, ev, fac.Now(), err)
}

// columns name failover's translation table.
var columns = drshared.Columns{Topic: "TOPIC", Offset: "SOURCE OFFSET", RemoteTopic: "REMOTE TOPIC", RemoteOffset: "TARGET OFFSET"}
