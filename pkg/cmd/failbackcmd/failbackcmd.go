// Package failbackcmd implements `kmm failback` (CLI glue: options, flags, preflight reads,
// rendering); the steps and their actions are pkg/switchover's.
package failbackcmd

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

// Options are the flags and arguments of `kmm failback`.
type Options struct {
	drshared.Common
	Stranded     string
	MaxRevLag    int64 // --max-reverse-lag (-1: no gate)
	StartReverse bool
	// Report is --report FILE.md: the evidence report for auditors ("" none).
	Report string
}

// Validate checks the flags before anything is read (exit 2).
func (o *Options) Validate() error {
	if cmdutil.OneOf("stranded", o.Stranded, cmdutil.StrandedChoices...) != nil {
		return kerr.WithHint(kerr.New(kerr.Usage, "--stranded %q: unknown", o.Stranded), "use --stranded quarantine, skip or deliver")
	}
	return errors.Join(o.CheckFence(""), o.CheckWaits(), cmdutil.AtLeastOrOff("max-reverse-lag", o.MaxRevLag, 0), drshared.CheckReportDir(o.Report))
}

// Command returns `kmm failback`.
func Command(f *cmdutil.Factory) *cli.Command {
	return cmdutil.WithExamples(&cli.Command{
		Name:      "failback",
		Usage:     "make a failed-over flow's source the primary again: stranded records accounted for, reverse copy drained, groups translated back, the flow replicating again",
		ArgsUsage: "mirror-maker.properties",
		Description: `--flow S->T names the flow that was failed over (its state is FAILED_OVER; otherwise exit 3).
kmm replicate FILE --flow 'T->S' must run while failback waits for the reverse copy (the
failover stored its resume positions at T's ends at the cut, so it copies only what T received
after the cut; after an emergency failover failback stores them first, from the flow state).
Steps: mark the flow FAILING_BACK; account for the stranded records (written on S after the
last record that reached T): --stranded quarantine copies them to kmm.stranded.<topic> on S with
their original topic, partition and offset in headers and moves the groups at the cut past them,
skip only moves the groups, deliver leaves them to be read; the report counts them per partition
either way. Then the writers on T stop (--fence none --quiet-for D, --fence acl with
--fence-principal, removed again before the flow replicates, or --fence hook), the reverse copy
drains (--start-reverse: failback runs T->S itself, in process, until drained, then stops it),
each group's offsets on T are translated back exactly (in reverse over the S->T offset syncs
inside the replicated part, forward over the T->S copy after it) and committed to the same group
on S, failover's DENY ACLs are removed, S->T's resume positions are stored at S's ends (nothing
copied back), and the flow is marked REPLICATING with a new epoch. Stop kmm replicate T->S
before starting S->T again.
The plan is printed first; --dry-run stops there; a terminal asks, otherwise --yes is required.
An interrupted run resumes where it stopped. Exit 3: a preflight check failed (nothing written).`,
		Flags: append(append(append(append(cmdutil.ConfigFlags(), cmdutil.OutputFlag("table", "json")), cmdutil.FlowFlags(false)...),
			append([]cli.Flag{
				&cli.StringFlag{Name: "stranded", Value: switchover.StrandedQuarantine, Usage: "records written on the source that never reached the target: quarantine (copy to kmm.stranded.<topic>, groups move past them), skip (groups move past them), deliver (groups read them)"},
				&cli.Int64Flag{Name: "max-reverse-lag", Value: -1, Usage: "refuse (exit 3, nothing changed) when the reverse flow has more records than this left to copy (-1: no limit)"},
				&cli.BoolFlag{Name: "start-reverse", Usage: "run the reverse flow T->S in this process (kmm replicate's engine) for the catch-up: started at the drain, stopped once it has copied everything (its progress stored)"},
				drshared.ReportFlag("write an evidence report for auditors to `FILE.md` (Markdown: who, when, the confirmed plan, each step with timestamps, RTO, the stranded records per partition, re-reads and skips per group and partition), also with --dry-run"),
			}, drshared.Flags(drshared.FlagText{
				Group:          "move these groups back (default: the flow's groups filter)",
				Groups:         "move back the groups matching this Java regex",
				Fence:          "how writers on the target are stopped: none (you stop them; see --quiet-for), acl (DENY WRITE ACLs for --fence-principal on the target's topics the reverse flow copies, removed before the flow replicates again) or hook (--fence-command)",
				FencePrincipal: "--fence acl: deny this `PRINCIPAL` writes to the target's topics during the failback (repeatable; User:* denies every principal that is not a super user)",
				FenceCommand:   "--fence hook: a shell `COMMAND` that stops the writers on the target; a non-zero exit stops the failback with exit 3",
				QuietFor:       "with --fence none: wait until no end offset the reverse flow copies has moved for this long (0: do not wait)",
				Timeout:        "bound of each wait (quiet target, reverse drain)",
				Force:          "also move groups that have members on the source or the target",
				Drill:          "a drill `FILE` (TOML; failback reads its flow, groups, timeout and fence); flags given win",
			})...)...), drshared.ApplyFlags()...),
		Action: func(c *cli.Context) error {
			common, err := drshared.FromContext(c)
			if err != nil {
				return err
			}
			o := &Options{Common: common, Stranded: c.String("stranded"), MaxRevLag: c.Int64("max-reverse-lag"), StartReverse: c.Bool("start-reverse"),
				Report: c.String("report")}
			// Failback reads the flow, groups, timeout and fence of the drill (not its mode, gates
			// or report, which are failover's).
			if err := drill.Given(c.String("drill"), func(d *drill.Drill) { o.ApplyDrill(d, c.IsSet) }); err != nil {
				return err
			}
			return Run(c.Context, o, f)
		},
	},
		cmdutil.Example{What: "see the plan of a failback, change nothing", Cmd: "kmm failback mirror-maker.properties --flow 'A->B' --dry-run"},
		cmdutil.Example{What: "fail back, quarantining the records stranded on A", Cmd: "kmm failback mirror-maker.properties --flow 'A->B' --stranded quarantine --quiet-for 10s --yes"},
		cmdutil.Example{What: "fail back with B->A run by failback itself, B's producers fenced by ACLs", Cmd: "kmm failback mirror-maker.properties --flow 'A->B' --start-reverse --fence acl --fence-principal User:orders-app --yes"},
		cmdutil.Example{What: "fail back the groups matching a regex, the report as JSON", Cmd: "kmm failback mirror-maker.properties --flow 'A->B' --groups 'billing|orders-.*' --yes -o json"},
		cmdutil.Example{What: "fail back as a drill file says, with an evidence report for auditors", Cmd: "kmm failback mirror-maker.properties --drill drill.toml --report failback.md --yes"},
	)
}

type envelope struct {
	output.Envelope
	Plan     *plan.Plan                 `json:"plan"`
	Report   *plan.Run                  `json:"report,omitempty"`
	Gates    switchover.Gates           `json:"gates"`
	Stranded []switchover.StrandedRange `json:"stranded"`
	// StrandedRecords is the total of Stranded.
	StrandedRecords int64  `json:"stranded_records"`
	StrandedMode    string `json:"stranded_mode"`
	// RemoteWrites are records written on the target into remote topics after the cut, which
	// cannot flow back (RemoteWritesRecords their total).
	RemoteWrites        []switchover.StrandedRange `json:"remote_writes"`
	RemoteWritesRecords int64                      `json:"remote_writes_records"`
	RTOMillis           int64                      `json:"rto_ms,omitempty"`
}

// Run runs `kmm failback`.
func Run(ctx context.Context, o *Options, fac *cmdutil.Factory) error {
	start := fac.Now()
	ios := fac.IO
	if err := cmdutil.Validate(o); err != nil {
		return err
	}
	if err := cmdutil.CheckConfirmable(o.ApplyOpts, ios, "failback changes the flow's state, the groups' offsets on the source and both flows' resume positions"); err != nil {
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
	rev := flow.Reverse(flows, f)
	if rev == nil {
		return kerr.New(kerr.Usage, "the file has no flow %s->%s (clusters = %s, %s): failback copies the target's new records back through it", f.Target, f.Source, f.Source, f.Target)
	}
	req := switchover.FailbackRequest{F: f, Rev: rev, Groups: o.Groups, GroupMatch: groupMatch, GroupsRegex: o.GroupsRegex, Stranded: o.Stranded,
		Fence: o.FenceOptions(nil), QuietFor: o.QuietFor, Timeout: o.Timeout, Force: o.Force, MaxRevLag: o.MaxRevLag, By: fac.UserAtHost()}
	if o.StartReverse {
		if fac.Replicate == nil {
			return kerr.New(kerr.Usage, "--start-reverse: this build cannot run flows in process")
		}
		r, err := switchover.ReverseToStart(rev)
		if err != nil {
			return err
		}
		req.StartReverse = func(ctx context.Context) error { return fac.Replicate(ctx, []*flow.Flow{r}) }
	}
	const need = "failback needs both clusters"
	src, tgt, err := drshared.OpenBoth(ctx, fac, f, need)
	if err != nil {
		return err
	}
	defer tgt.Close()
	defer src.Close()
	fb, gates, err := switchover.PrepareFailback(ctx, drshared.Env(fac), req, src, tgt)
	if err != nil {
		return err
	}
	fb.Opt.Progress = func(msg string) { fmt.Fprintf(ios.ErrOut, "kmm: %s\n", msg) }
	fb.Opt.Meter = func(what string, total int64) switchover.Meter { return ios.NewProgress(what, total, nil) }
	fb.Opt.Fence.HookOut = ios.ErrOut
	p, err := fb.Plan()
	if err != nil {
		return err
	}
	journal := drshared.Journal(tgt, f, fac)
	defer journal.Close()
	ex := &plan.Executor{Journal: journal, Actions: fb.Actions()}
	applied, err := cmdutil.Apply(ctx, fac, o.ApplyOpts, p, ex)
	env := envelope{Envelope: output.Envelope{SchemaVersion: output.SchemaVersion, Kind: "failback", GeneratedAt: fac.Now().UTC(), Items: fb.Translated()},
		Plan: p, Gates: gates, Stranded: fb.Stranded, StrandedMode: o.Stranded}
	if env.Stranded == nil {
		env.Stranded = []switchover.StrandedRange{}
	}
	for _, r := range fb.Stranded {
		env.StrandedRecords += r.Records
	}
	env.RemoteWrites = fb.RemoteWrites
	if env.RemoteWrites == nil {
		env.RemoteWrites = []switchover.StrandedRange{}
	}
	for _, r := range fb.RemoteWrites {
		env.RemoteWritesRecords += r.Records
	}
	if applied != nil && applied.Report != nil {
		env.Report = applied.Report
		env.RTOMillis = drshared.RTO(applied.Report, switchover.KindCommitBack, start)
	}
	ev := evidence(o, f, fac, start, req.By, p, applied, err, gates, fb, env)
	if o.Output == "json" {
		if werr := output.WriteJSON(ios.Out, env); werr != nil && err == nil {
			err = werr
		}
		return drshared.WriteReport(o.Report, ios.ErrOut, ev, fac.Now(), err)
	}
	if tr := fb.Translated(); len(tr) > 0 {
		fmt.Fprintln(ios.Out)
		cols := drshared.Columns{Topic: "TOPIC ON " + f.Target, Offset: "OFFSET ON " + f.Target, RemoteTopic: "TOPIC ON " + f.Source, RemoteOffset: "OFFSET ON " + f.Source}
		if rerr := drshared.RenderTranslations(ios.Out, tr, cols); rerr != nil && err == nil {
			err = rerr
		}
	}
	if !o.ApplyOpts.DryRun {
		var rows [][]string
		for _, r := range fb.Stranded {
			if r.Records > 0 {
				rows = append(rows, []string{r.Topic, fmt.Sprint(r.Partition), fmt.Sprint(r.From), fmt.Sprint(r.To), fmt.Sprint(r.Records)})
			}
		}
		fmt.Fprintln(ios.Out)
		if len(rows) > 0 {
			if terr := output.Table(ios.Out, []string{"TOPIC", "PARTITION", "STRANDED FROM", "TO", "RECORDS"}, rows); terr != nil && err == nil {
				err = terr
			}
		}
		fmt.Fprintf(ios.Out, "stranded: %d record(s) written on %s never reached %s (--stranded %s)\n", env.StrandedRecords, f.Source, f.Target, o.Stranded)
		if env.RemoteWritesRecords > 0 {
			fmt.Fprintf(ios.Out, "not copied back: %d record(s) written on %s into remote topics after the cut (MM2's cycle rule; see the plan's notes)\n", env.RemoteWritesRecords, f.Target)
		}
	}
	return drshared.WriteReport(o.Report, ios.ErrOut, ev, fac.Now(), err)
}

// strandedFate says what --stranded does with the stranded records.
var strandedFate = map[string]string{
	switchover.StrandedQuarantine: "copied to kmm.stranded.<topic> on %s, the groups moved past them",
	switchover.StrandedSkip:       "not copied, the groups on %s moved past them",
	switchover.StrandedDeliver:    "left on %s for the groups to read",
}

// evidence is failback's evidence report (--report), the same kind as failover's: who, when,
// the confirmed plan, each step, RTO (to the last group commit on the source), the records
// stranded on the source per partition (the failback's RPO: written there after the last record
// that reached the target) and the groups' translations back.
func evidence(o *Options, f *flow.Flow, fac *cmdutil.Factory, start time.Time, by string, p *plan.Plan, applied *cmdutil.Applied, err error,
	gates switchover.Gates, fb *switchover.Failback, env envelope) *drshared.Evidence {
	ev := drshared.NewEvidence("failback", "--stranded "+o.Stranded, f, start, fac.Now(), by, p, o.ApplyOpts, applied, err)
	ev.Gates = gates
	ev.Translations = fb.Translated()
	ev.TranslationColumns = &drshared.Columns{Topic: "Topic on " + f.Target, Offset: "Offset on " + f.Target, RemoteTopic: "Topic on " + f.Source, RemoteOffset: "Offset on " + f.Source}
	if env.RTOMillis > 0 {
		ev.RTOMillis, ev.RTONote = env.RTOMillis, "start to the last group commit: consumers may resume on "+f.Source
	}
	fate := fmt.Sprintf(strandedFate[o.Stranded], f.Source)
	for _, r := range fb.Stranded {
		if r.Records > 0 {
			ev.RPO = append(ev.RPO, drshared.RPOLine{Topic: r.Topic, Partition: r.Partition, SourceEnd: r.To, Replicated: r.From, How: "stranded: " + fate, Records: r.Records})
		}
	}
	stranded := env.StrandedRecords // counted by the preflight: known
	ev.RPOTotal = &stranded
	ev.RPONote = fmt.Sprintf("stranded: written on %s after the last record that reached %s before the cut; --stranded %s: %s", f.Source, f.Target, o.Stranded, fate)
	if env.RemoteWritesRecords > 0 {
		ev.Notes = append(ev.Notes, fmt.Sprintf("not copied back: %d record(s) written on %s into remote topics after the cut (MM2's cycle rule)", env.RemoteWritesRecords, f.Target))
	}
	return ev
}
