// Package failovercmd implements `kmm failover` (CLI glue: options, flags, preflight reads,
// rendering); the steps and their actions are pkg/switchover's.
package failovercmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/buildinfo"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/flowstate"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/output"
	"github.com/kmmproject/kmm/pkg/plan"
	"github.com/kmmproject/kmm/pkg/switchover"
)

// Options are the flags and arguments of `kmm failover`.
type Options struct {
	File        mm2conf.LoadOptions
	Flow        flow.Selector
	Output      string
	Mode        string
	Groups      []string
	GroupsRegex string
	Fence       string
	// FencePrincipals (--fence acl) and FenceCommand (--fence hook).
	FencePrincipals []string
	FenceCommand    string
	QuietFor        time.Duration
	Timeout         time.Duration
	Force           bool
	MaxRPO          int64 // --max-rpo-records (emergency; -1 off)
	// MaxCkAge: --max-checkpoint-age (0 off): emergency refuses groups whose newest checkpoint
	// is older (unless AcceptLoss); planned's preflight refuses groups that committed past a
	// checkpoint older than this.
	MaxCkAge   time.Duration
	AcceptLoss bool
	ApplyOpts  cmdutil.ApplyOptions
	// Report is --report FILE.md: the evidence report for auditors ("" none).
	Report string
	// PreHook/PostHook are the drill plan's hook commands (sh -c).
	PreHook, PostHook string
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

--mode rehearse (a drill with no downtime): translates every group as planned mode would now,
commits the offsets to shadow groups kmm-rehearse.<group> on the target (the real groups are not
touched, their consumers may keep running), reads the record at each shadow position and
compares it (key, value, headers, timestamp) with the record at the group's position on the
source, reports what a failover now would cost (records not replicated yet, exact or bound per
group partition, translate and commit times), then deletes the shadow groups. No fence, no flow
state. An interrupted rehearsal's shadow groups are deleted by the next one. Exit 3 when a
position translated as exact does not hold the group's next record.`,
		Flags: append(append(cmdutil.ConfigFlags(), cmdutil.OutputFlag("table", "json")),
			append(cmdutil.FlowFlags(false),
				&cli.StringFlag{Name: "mode", Value: "planned", Usage: "planned (both clusters up), emergency (the source is down) or rehearse (a drill: shadow groups only, nothing else changes)"},
				&cli.Int64Flag{Name: "max-rpo-records", Value: -1, Usage: "emergency: refuse (exit 3, nothing changed) when more records than this are known not to be on the target"},
				&cli.DurationFlag{Name: "max-checkpoint-age", Usage: "emergency: refuse (exit 3, nothing changed) when a group's newest checkpoint on the target is older than `AGE` (the outage's time counts); planned: the preflight refuses a group that committed on the source past a checkpoint older than AGE (0: off)"},
				&cli.BoolFlag{Name: "accept-loss", Usage: "emergency: fail over even when a gate (--max-rpo-records, --max-checkpoint-age, no end-offset snapshot) fails"},
				&cli.StringSliceFlag{Name: "group", Usage: "move these groups (default: the flow's groups filter)"},
				&cli.StringFlag{Name: "groups", Usage: "move the groups matching this Java regex"},
				&cli.StringFlag{Name: "fence", Value: "none", Usage: "how writers on the source are stopped (planned mode): none (you stop them; see --quiet-for), acl (DENY WRITE ACLs for --fence-principal, removed by kmm failback), hook (--fence-command)"},
				&cli.StringSliceFlag{Name: "fence-principal", Usage: "--fence acl: deny this `PRINCIPAL` writes to the flow's source topics (repeatable; User:* denies every principal that is not a super user)"},
				&cli.StringFlag{Name: "fence-command", Usage: "--fence hook: a shell `COMMAND` that stops the writers (KMM_FLOW, KMM_SOURCE, KMM_TARGET, KMM_SOURCE_BOOTSTRAP, KMM_TOPICS in its environment); a non-zero exit stops the failover with exit 3"},
				&cli.DurationFlag{Name: "quiet-for", Value: 10 * time.Second, Usage: "with --fence none: wait until no source end offset has moved for this long (0: do not wait)"},
				&cli.DurationFlag{Name: "timeout", Value: 5 * time.Minute, Usage: "bound of each wait (quiet source, drain, replicator stop)"},
				&cli.BoolFlag{Name: "force", Usage: "also move groups that have members on the source or the target"},
				&cli.StringFlag{Name: "plan", Usage: "a drill plan (TOML: flow, mode, groups, fence, gates, hooks; see testdata/drill/drill.toml); flags given win"},
				&cli.StringFlag{Name: "report", Usage: "write an evidence report for auditors to `FILE.md` (Markdown: who, when, the confirmed plan, each step with timestamps, RTO, RPO per partition, re-reads and skips per group and partition), in every mode"},
				&cli.BoolFlag{Name: "dry-run", Usage: "print the plan, change nothing"},
				&cli.BoolFlag{Name: "yes", Usage: "do not ask for confirmation (required when stdin is not a terminal)"},
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
			o := &Options{File: file, Flow: cmdutil.FlowSelector(c), Output: out, Mode: c.String("mode"),
				Groups: c.StringSlice("group"), GroupsRegex: c.String("groups"), Fence: c.String("fence"), FencePrincipals: c.StringSlice("fence-principal"), FenceCommand: c.String("fence-command"), QuietFor: c.Duration("quiet-for"),
				Timeout: c.Duration("timeout"), Force: c.Bool("force"), MaxRPO: c.Int64("max-rpo-records"), MaxCkAge: c.Duration("max-checkpoint-age"), AcceptLoss: c.Bool("accept-loss"),
				Report: c.String("report"), ApplyOpts: cmdutil.ApplyOptions{DryRun: c.Bool("dry-run"), Yes: c.Bool("yes"), JSON: out == "json", Verb: "changed"}}
			if err := cmdutil.NonNegativeDuration("max-checkpoint-age", o.MaxCkAge); err != nil {
				return err
			}
			if path := c.String("plan"); path != "" {
				d, err := LoadDrill(path)
				if err != nil {
					return err
				}
				applyDrill(d, o, c.IsSet)
			}
			return Run(c.Context, o, f)
		},
	},
		cmdutil.Example{What: "see the plan of a planned failover, change nothing", Cmd: "kmm failover mirror-maker.properties --flow 'A->B' --mode planned --fence none --quiet-for 10s --dry-run"},
		cmdutil.Example{What: "fail over, moving the groups that match a regex", Cmd: "kmm failover mirror-maker.properties --flow 'A->B' --mode planned --groups 'billing|orders-.*' --yes"},
		cmdutil.Example{What: "the source is down: fail over if at most 1000 records are lost", Cmd: "kmm failover mirror-maker.properties --flow 'A->B' --mode emergency --max-rpo-records 1000 --yes -o json"},
		cmdutil.Example{What: "rehearse a failover without downtime: shadow groups only, deleted afterwards", Cmd: "kmm failover mirror-maker.properties --flow 'A->B' --mode rehearse --yes -o json"},
		cmdutil.Example{What: "a DR drill from a reviewed file", Cmd: "kmm failover mirror-maker.properties --plan drill.toml --dry-run"},
	)
}

// envelope is the JSON of failover.
type envelope struct {
	output.Envelope
	Plan   *plan.Plan `json:"plan"`
	Report *plan.Run  `json:"report,omitempty"`
	// RTOMillis: from the command's start to the last group commit ("consumers may resume").
	RTOMillis int64 `json:"rto_ms,omitempty"`
	// RPORecords: records written on the source and not on the target at the cut (planned: 0).
	RPORecords int64 `json:"rpo_records"`
}

func userAtHost() string {
	host, _ := os.Hostname()
	name := "unknown"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	return name + "@" + host
}

// Run runs `kmm failover`.
func Run(ctx context.Context, o *Options, fac *cmdutil.Factory) error {
	start := time.Now()
	ios := fac.IO
	switch o.Mode {
	case "planned", "emergency", "rehearse":
	default:
		return kerr.WithHint(kerr.New(kerr.Usage, "--mode %q: unknown", o.Mode), "use --mode planned, emergency or rehearse")
	}
	if err := checkFence(o); err != nil {
		return err
	}
	if o.Report != "" {
		if st, err := os.Stat(filepath.Dir(o.Report)); err != nil || !st.IsDir() {
			return kerr.WithHint(kerr.New(kerr.Usage, "--report %s: the directory %s does not exist", o.Report, filepath.Dir(o.Report)), "create it, or name a file in an existing directory")
		}
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
	open := func(side flow.Side, alias, boot string) (cluster.Cluster, error) { // fails within 10 s
		c, err := fac.Clusters.Open(f, side)
		if err != nil {
			return nil, err
		}
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if _, err := c.Ping(pctx, 10*time.Second); err != nil {
			c.Close()
			return nil, kerr.WithHint(kerr.Wrap(kerr.Unreachable, fmt.Errorf("cluster %s (bootstrap %s): %w", alias, boot, err)),
				"planned failover needs both clusters; check bootstrap.servers and security settings (kmm config explain)")
		}
		return c, nil
	}
	if o.Mode == "emergency" {
		return runEmergency(ctx, o, fac, f, flows, open, groupMatch, start)
	}
	src, err := open(flow.Source, f.Source, f.SourceBootstrap)
	if err != nil {
		return err
	}
	defer src.Close()
	tgt, err := open(flow.Target, f.Target, f.TargetBootstrap)
	if err != nil {
		return err
	}
	defer tgt.Close()

	fo, err := preflight(ctx, o, fac, f, src, tgt, groupMatch)
	if err != nil {
		return err
	}
	fo.Opt.Reverse = reverseOf(flows, f)
	fo.Opt.Fence = switchover.FenceOptions{Method: o.Fence, Principals: o.FencePrincipals, Command: o.FenceCommand, HookOut: ios.ErrOut}
	fo.Opt.Progress = func(msg string) { fmt.Fprintf(ios.ErrOut, "kmm: %s\n", msg) }
	fo.Opt.Meter = func(what string, total int64) switchover.Meter { return ios.NewProgress(what, total, nil) }
	if o.Mode == "rehearse" {
		return runRehearse(ctx, o, fac, fo, start)
	}
	p, err := fo.Plan()
	if err != nil {
		return err
	}
	journal := &plan.TopicJournal{C: tgt, RF: f.StateTopicRF(), RFKey: "checkpoints.topic.replication.factor", Now: fac.Clock}
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
	env := envelope{Envelope: output.Envelope{SchemaVersion: output.SchemaVersion, Kind: "failover", GeneratedAt: fac.Clock().UTC(),
		Items: fo.Translated()}, Plan: p}
	if applied != nil && applied.Report != nil {
		env.Report = applied.Report
		for _, s := range applied.Report.Steps {
			if s.Kind == switchover.KindCommitTranslated && s.Finished != nil {
				env.RTOMillis = max(env.RTOMillis, s.Finished.Sub(start).Milliseconds())
			}
		}
	}
	ev := newEvidence(o, f, start, p, applied, err)
	ev.RTOMillis = -1
	if env.RTOMillis > 0 {
		ev.RTOMillis, ev.RTONote = env.RTOMillis, "start to the last group commit: consumers may resume on "+f.Target
	}
	ev.Translations = fo.Translated()
	if cut := fo.Cut(); cut != nil && applied != nil && applied.Report != nil && err == nil {
		for _, c := range cut {
			ev.RPO = append(ev.RPO, RPOLine{Topic: c.Source.Topic, Partition: c.Source.Partition, SourceEnd: c.SourceEnd, Replicated: c.SourceEnd, How: "drained (exact)"})
		}
		ev.RPONote = "drained: every source record is on " + f.Target
	} else {
		ev.RPONote = "not measured: the failover did not reach the cut"
	}
	if o.Output == "json" {
		if werr := output.WriteJSON(ios.Out, env); werr != nil && err == nil {
			err = werr
		}
	} else if tr := fo.Translated(); len(tr) > 0 {
		fmt.Fprintln(ios.Out)
		if rerr := renderTranslations(ios.Out, tr); rerr != nil && err == nil {
			err = rerr
		}
		if env.RTOMillis > 0 {
			fmt.Fprintf(ios.Out, "\nRTO %s (start to the last group commit: consumers may resume on %s); RPO 0 records (drained: every source record is on %s)\n",
				(time.Duration(env.RTOMillis) * time.Millisecond).Round(time.Millisecond), f.Target, f.Target)
		}
	}
	return writeReport(o, ios.ErrOut, ev, err)
}

// newEvidence starts the evidence report of a run (see Evidence).
func newEvidence(o *Options, f *flow.Flow, start time.Time, p *plan.Plan, applied *cmdutil.Applied, err error) *Evidence {
	e := &Evidence{Mode: o.Mode, Flow: f.Name(), Source: f.Source, Target: f.Target, By: userAtHost(), KMM: buildinfo.Version,
		Started: start, Generated: time.Now(), Plan: p, RTOMillis: -1}
	switch {
	case o.ApplyOpts.DryRun:
		e.Confirmation = "--dry-run: nothing was applied"
	case o.ApplyOpts.Yes:
		e.Confirmation = "--yes"
	default:
		e.Confirmation = "confirmed on a terminal"
	}
	if applied != nil {
		e.Run = applied.Report
	}
	if err != nil {
		e.Err = err.Error()
	}
	return e
}

// writeReport writes --report FILE.md, if asked, and returns the command's error (or the
// report's, when the command succeeded).
func writeReport(o *Options, errOut io.Writer, e *Evidence, err error) error {
	if o.Report == "" {
		return err
	}
	e.Generated = time.Now()
	if werr := WriteEvidence(o.Report, e); werr != nil {
		if err == nil {
			return werr
		}
		fmt.Fprintf(errOut, "kmm: %v\n", werr)
		return err
	}
	fmt.Fprintf(errOut, "kmm: evidence report written to %s\n", o.Report)
	return err
}

// preflight reads both clusters and refuses (exit 3, nothing written) what would make the
// failover wrong; it returns the failover to plan.
func preflight(ctx context.Context, o *Options, fac *cmdutil.Factory, f *flow.Flow, src, tgt cluster.Cluster, groupMatch func(string) bool) (*switchover.Failover, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	st, err := switchover.ReadFlowState(ctx, f, tgt, src)
	if err != nil {
		return nil, err
	}
	switch st.State {
	case flowstate.FailedOver:
		return nil, kerr.WithHint(kerr.New(kerr.CheckFailed, "flow %s is already FAILED_OVER (epoch %d, %s, by %s, run %s)", f.Name(), st.Epoch, st.At.Format(time.RFC3339), st.By, st.RunID),
			fmt.Sprintf("nothing to do; to go back, kmm failback --flow '%s'", f.Name()))
	case flowstate.FailingBack:
		return nil, kerr.New(kerr.CheckFailed, "flow %s is FAILING_BACK (epoch %d): finish the failback first", f.Name(), st.Epoch)
	}
	sts, err := src.ListTopics(ctx)
	if err != nil {
		return nil, err
	}
	tts, err := tgt.ListTopics(ctx)
	if err != nil {
		return nil, err
	}
	var tps []cluster.TP
	var problems []string
	var topics []string
	for t := range sts {
		// Heartbeats are kmm's and MM2's own records, written all the time by other flows: not
		// the application's data, and never quiet.
		if f.Selected(t) && !f.Policy.IsHeartbeatsTopic(t) {
			topics = append(topics, t)
		}
	}
	sort.Strings(topics)
	for _, t := range topics {
		rt := f.RemoteTopic(t)
		if tts[rt].Partitions == 0 {
			problems = append(problems, fmt.Sprintf("topic %s has no remote topic %s on %s", t, rt, f.Target))
			continue
		}
		if tts[rt].Partitions != sts[t].Partitions {
			problems = append(problems, fmt.Sprintf("topic %s has %d partition(s) on %s, %s has %d on %s", t, sts[t].Partitions, f.Source, rt, tts[rt].Partitions, f.Target))
		}
		for p := 0; p < sts[t].Partitions; p++ {
			tps = append(tps, cluster.TP{Topic: t, Partition: int32(p)})
		}
	}
	if len(tps) == 0 && len(problems) == 0 {
		return nil, kerr.New(kerr.CheckFailed, "flow %s replicates no topic of %s: nothing to fail over", f.Name(), f.Source)
	}
	// The groups to move: committed offsets on the flow's topics on S.
	inFlow := map[string]bool{}
	for _, t := range topics {
		inFlow[t] = true
	}
	list, err := src.ListGroups(ctx)
	if err != nil {
		return nil, err
	}
	var groups []string
	for _, g := range list {
		switch {
		case len(o.Groups) > 0:
			if !slices.Contains(o.Groups, g.ID) {
				continue
			}
		case groupMatch != nil:
			if !groupMatch(g.ID) {
				continue
			}
		default:
			if !f.GroupFilter(g.ID) {
				continue
			}
		}
		offs, err := src.ListGroupOffsets(ctx, g.ID)
		if err != nil {
			return nil, err
		}
		for tp := range offs {
			if inFlow[tp.Topic] {
				groups = append(groups, g.ID)
				break
			}
		}
	}
	sort.Strings(groups)
	for _, g := range o.Groups {
		if !slices.Contains(groups, g) {
			return nil, kerr.WithHint(kerr.New(kerr.Usage, "group %s has no committed offset on %s for the topics of %s", g, f.Source, f.Name()),
				"list the groups with kmm translate-offsets FILE --flow '"+f.Name()+"'")
		}
	}
	if o.GroupsRegex != "" && len(groups) == 0 {
		return nil, kerr.New(kerr.Usage, "--groups %q matches no group with committed offsets on %s for the topics of %s", o.GroupsRegex, f.Source, f.Name())
	}
	if len(groups) > 0 && o.Mode != "rehearse" { // a rehearsal has no downtime: the groups keep running
		for _, side := range []struct {
			c     cluster.Cluster
			alias string
		}{{tgt, f.Target}, {src, f.Source}} {
			ds, err := side.c.DescribeGroups(ctx, groups...)
			if err != nil {
				return nil, err
			}
			for _, d := range ds {
				if d.Members > 0 && !o.Force {
					problems = append(problems, fmt.Sprintf("group %s has %d member(s) on %s: stop its consumers first (or --force)", d.ID, d.Members, side.alias))
				}
			}
		}
	}
	if o.Mode != "rehearse" && !o.Force { // a rehearsal changes nothing MM2 writes: it may run
		if pr := cmdutil.MM2Running(ctx, fac, f, fac.IO.ErrOut); pr != "" {
			problems = append(problems, pr)
		}
	}
	if o.MaxCkAge > 0 && len(groups) > 0 {
		ages, err := checkpointAges(ctx, f, src, tgt, nil, groups, o.MaxCkAge, time.Now())
		if err != nil {
			return nil, err
		}
		problems = append(problems, staleProblems(ages, o.MaxCkAge, f)...)
	}
	if len(problems) > 0 {
		return nil, kerr.New(kerr.CheckFailed, "preflight failed, nothing was changed:\n  %s", strings.Join(problems, "\n  "))
	}
	return &switchover.Failover{F: f, Src: src, Tgt: tgt, Groups: groups, TPs: tps,
		Opt: switchover.FailoverOptions{Mode: o.Mode, QuietFor: o.QuietFor, Timeout: o.Timeout, By: userAtHost(), Force: o.Force,
			Drift: cmdutil.Drift(ctx, fac, f)}}, nil
}

func renderTranslations(w io.Writer, tr []switchover.ExactOffset) error {
	var rows [][]string
	for _, e := range tr {
		rr := fmt.Sprint(e.Rereads)
		if e.Rereads < 0 {
			rr = "?"
		}
		how := "exact"
		if !e.Exact {
			how = "bound"
		}
		rows = append(rows, []string{e.Group, e.Topic, fmt.Sprint(e.Partition), e.RemoteTopic, fmt.Sprint(e.SourceOffset), fmt.Sprint(e.TargetOffset), how, rr, "0", e.Why})
	}
	return output.Table(w, []string{"GROUP", "TOPIC", "PARTITION", "REMOTE TOPIC", "SOURCE OFFSET", "TARGET OFFSET", "TRANSLATION", "RE-READS", "SKIPS", "WHY"}, rows)
}

// checkFence validates the fence flags (exit 2 before anything is read).
func checkFence(o *Options) error {
	switch o.Fence {
	case "", switchover.FenceNone:
		if len(o.FencePrincipals) > 0 || o.FenceCommand != "" {
			return kerr.New(kerr.Usage, "--fence-principal and --fence-command need --fence acl or --fence hook")
		}
		return nil
	case switchover.FenceACL, switchover.FenceHook:
	default:
		return kerr.WithHint(kerr.New(kerr.Usage, "--fence %q: unknown", o.Fence), "use --fence none, acl or hook")
	}
	if o.Mode != "planned" {
		return kerr.WithHint(kerr.New(kerr.Usage, "--fence %s: only planned mode fences the source (in %s mode the source is down)", o.Fence, o.Mode), "drop --fence")
	}
	if o.Fence == switchover.FenceACL {
		if len(o.FencePrincipals) == 0 {
			return kerr.WithHint(kerr.New(kerr.Usage, "--fence acl needs at least one --fence-principal"),
				"name the producers' principals (--fence-principal User:orders-app), or --fence-principal 'User:*' for every principal that is not a super user")
		}
		for _, p := range o.FencePrincipals {
			if err := switchover.CheckPrincipal(p); err != nil {
				return kerr.Wrap(kerr.Usage, fmt.Errorf("--fence-principal: %w", err))
			}
		}
		if o.FenceCommand != "" {
			return kerr.New(kerr.Usage, "--fence-command goes with --fence hook, not acl")
		}
		return nil
	}
	if strings.TrimSpace(o.FenceCommand) == "" {
		return kerr.WithHint(kerr.New(kerr.Usage, "--fence hook needs --fence-command"), "e.g. --fence-command 'kubectl scale deploy/orders-producer --replicas=0'")
	}
	if len(o.FencePrincipals) > 0 {
		return kerr.New(kerr.Usage, "--fence-principal goes with --fence acl, not hook")
	}
	return nil
}

// reverseOf returns the flow T->S of the file for flow S->T (nil when there is none).
func reverseOf(flows []*flow.Flow, f *flow.Flow) *flow.Flow {
	for _, r := range flows {
		if r.Source == f.Target && r.Target == f.Source {
			return r
		}
	}
	return nil
}
