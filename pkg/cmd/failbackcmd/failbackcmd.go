// Package failbackcmd implements `kmm failback` (CLI glue: options, flags, preflight reads,
// rendering); the steps and their actions are pkg/switchover's.
package failbackcmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/user"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/drill"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/flowstate"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/output"
	"github.com/kmmproject/kmm/pkg/plan"
	"github.com/kmmproject/kmm/pkg/switchover"
)

// Options are the flags and arguments of `kmm failback`.
type Options struct {
	File            mm2conf.LoadOptions
	Flow            flow.Selector
	Output          string
	Groups          []string
	GroupsRegex     string
	Stranded        string
	Fence           string
	FencePrincipals []string
	FenceCommand    string
	QuietFor        time.Duration
	Timeout         time.Duration
	Force           bool
	MaxRevLag       int64 // --max-reverse-lag (-1: no gate)
	StartReverse    bool
	ApplyOpts       cmdutil.ApplyOptions
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
		Flags: append(append(cmdutil.ConfigFlags(), cmdutil.OutputFlag("table", "json")),
			append(cmdutil.FlowFlags(false),
				&cli.StringSliceFlag{Name: "group", Usage: "move these groups back (default: the flow's groups filter)"},
				&cli.StringFlag{Name: "groups", Usage: "move back the groups matching this Java regex"},
				&cli.StringFlag{Name: "stranded", Value: switchover.StrandedQuarantine, Usage: "records written on the source that never reached the target: quarantine (copy to kmm.stranded.<topic>, groups move past them), skip (groups move past them), deliver (groups read them)"},
				&cli.StringFlag{Name: "fence", Value: "none", Usage: "how writers on the target are stopped: none (you stop them; see --quiet-for), acl (DENY WRITE ACLs for --fence-principal on the target's topics the reverse flow copies, removed before the flow replicates again) or hook (--fence-command)"},
				&cli.StringSliceFlag{Name: "fence-principal", Usage: "--fence acl: deny this `PRINCIPAL` writes to the target's topics during the failback (repeatable; User:* denies every principal that is not a super user)"},
				&cli.StringFlag{Name: "fence-command", Usage: "--fence hook: a shell `COMMAND` that stops the writers on the target; a non-zero exit stops the failback with exit 3"},
				&cli.DurationFlag{Name: "quiet-for", Value: 10 * time.Second, Usage: "with --fence none: wait until no end offset the reverse flow copies has moved for this long (0: do not wait)"},
				&cli.DurationFlag{Name: "timeout", Value: 5 * time.Minute, Usage: "bound of each wait (quiet target, reverse drain)"},
				&cli.Int64Flag{Name: "max-reverse-lag", Value: -1, Usage: "refuse (exit 3, nothing changed) when the reverse flow has more records than this left to copy"},
				&cli.BoolFlag{Name: "start-reverse", Usage: "run the reverse flow T->S in this process (kmm replicate's engine) for the catch-up: started at the drain, stopped once it has copied everything (its progress stored)"},
				&cli.BoolFlag{Name: "force", Usage: "also move groups that have members on the source or the target"},
				&cli.StringFlag{Name: "plan", Usage: "a drill plan (TOML: flow, groups, timeout, fence); flags given win"},
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
			o := &Options{File: file, Flow: cmdutil.FlowSelector(c), Output: out, Groups: c.StringSlice("group"), GroupsRegex: c.String("groups"),
				Stranded: c.String("stranded"), Fence: c.String("fence"), FencePrincipals: c.StringSlice("fence-principal"), FenceCommand: c.String("fence-command"), QuietFor: c.Duration("quiet-for"),
				Timeout: c.Duration("timeout"), Force: c.Bool("force"), MaxRevLag: c.Int64("max-reverse-lag"), StartReverse: c.Bool("start-reverse"),
				ApplyOpts: cmdutil.ApplyOptions{DryRun: c.Bool("dry-run"), Yes: c.Bool("yes"), JSON: out == "json", Verb: "changed"}}
			if path := c.String("plan"); path != "" {
				d, err := drill.Load(path)
				if err != nil {
					return err
				}
				applyDrill(d, o, c.IsSet)
			}
			return Run(c.Context, o, f)
		},
	},
		cmdutil.Example{What: "see the plan of a failback, change nothing", Cmd: "kmm failback mirror-maker.properties --flow 'A->B' --dry-run"},
		cmdutil.Example{What: "fail back, quarantining the records stranded on A", Cmd: "kmm failback mirror-maker.properties --flow 'A->B' --stranded quarantine --quiet-for 10s --yes"},
		cmdutil.Example{What: "fail back with B->A run by failback itself, B's producers fenced by ACLs", Cmd: "kmm failback mirror-maker.properties --flow 'A->B' --start-reverse --fence acl --fence-principal User:orders-app --yes"},
		cmdutil.Example{What: "fail back the groups matching a regex, the report as JSON", Cmd: "kmm failback mirror-maker.properties --flow 'A->B' --groups 'billing|orders-.*' --yes -o json"},
	)
}

// applyDrill fills o from a drill file; flags given on the command line win. Failback reads the
// flow, groups, timeout and fence of the drill (not its mode or gates, which are failover's).
func applyDrill(d *drill.Drill, o *Options, set func(string) bool) {
	if d.Flow != "" && !set("flow") {
		o.Flow.Flow = d.Flow
	}
	if len(d.Groups) > 0 && !set("group") {
		o.Groups = d.Groups
	}
	if d.GroupsRegex != "" && !set("groups") {
		o.GroupsRegex = d.GroupsRegex
	}
	if d.Timeout.Set && !set("timeout") {
		o.Timeout = d.Timeout.Duration
	}
	if d.Fence.Method != "" && !set("fence") {
		o.Fence = d.Fence.Method
	}
	if len(d.Fence.Principals) > 0 && !set("fence-principal") {
		o.FencePrincipals = d.Fence.Principals
	}
	if d.Fence.Command != "" && !set("fence-command") {
		o.FenceCommand = d.Fence.Command
	}
	if d.Fence.QuietFor.Set && !set("quiet-for") {
		o.QuietFor = d.Fence.QuietFor.Duration
	}
}

type envelope struct {
	output.Envelope
	Plan     *plan.Plan                 `json:"plan"`
	Report   *plan.Run                  `json:"report,omitempty"`
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

func userAtHost() string {
	host, _ := os.Hostname()
	name := "unknown"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	return name + "@" + host
}

func checkFlags(o *Options) error {
	switch o.Stranded {
	case switchover.StrandedQuarantine, switchover.StrandedSkip, switchover.StrandedDeliver:
	default:
		return kerr.WithHint(kerr.New(kerr.Usage, "--stranded %q: unknown", o.Stranded), "use --stranded quarantine, skip or deliver")
	}
	if o.Fence != switchover.FenceACL && len(o.FencePrincipals) > 0 {
		return kerr.New(kerr.Usage, "--fence-principal needs --fence acl")
	}
	switch o.Fence {
	case "", switchover.FenceNone:
		if o.FenceCommand != "" {
			return kerr.New(kerr.Usage, "--fence-command needs --fence hook")
		}
	case switchover.FenceHook:
		if strings.TrimSpace(o.FenceCommand) == "" {
			return kerr.New(kerr.Usage, "--fence hook needs --fence-command")
		}
	case switchover.FenceACL:
		if o.FenceCommand != "" {
			return kerr.New(kerr.Usage, "--fence-command needs --fence hook")
		}
		if len(o.FencePrincipals) == 0 {
			return kerr.WithHint(kerr.New(kerr.Usage, "--fence acl needs at least one --fence-principal"),
				"name the producers' principals on the target (--fence-principal User:orders-app), or --fence-principal 'User:*' for every principal that is not a super user")
		}
		for _, p := range o.FencePrincipals {
			if err := switchover.CheckPrincipal(p); err != nil {
				return kerr.Wrap(kerr.Usage, fmt.Errorf("--fence-principal: %w", err))
			}
		}
	default:
		return kerr.WithHint(kerr.New(kerr.Usage, "--fence %q: unknown", o.Fence), "use --fence none, acl or hook")
	}
	return nil
}

// Run runs `kmm failback`.
func Run(ctx context.Context, o *Options, fac *cmdutil.Factory) error {
	start := time.Now()
	ios := fac.IO
	if err := checkFlags(o); err != nil {
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
	var rev *flow.Flow
	for _, r := range flows {
		if r.Source == f.Target && r.Target == f.Source {
			rev = r
		}
	}
	if rev == nil {
		return kerr.New(kerr.Usage, "the file has no flow %s->%s (clusters = %s, %s): failback copies the target's new records back through it", f.Target, f.Source, f.Source, f.Target)
	}
	open := func(side flow.Side, alias, boot string) (cluster.Cluster, error) {
		c, err := fac.Clusters.Open(f, side)
		if err != nil {
			return nil, err
		}
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if _, err := c.Ping(pctx, 10*time.Second); err != nil {
			c.Close()
			return nil, kerr.WithHint(kerr.Wrap(kerr.Unreachable, fmt.Errorf("cluster %s (bootstrap %s): %w", alias, boot, err)),
				"failback needs both clusters; check bootstrap.servers and security settings (kmm config explain)")
		}
		return c, nil
	}
	tgt, err := open(flow.Target, f.Target, f.TargetBootstrap)
	if err != nil {
		return err
	}
	defer tgt.Close()
	src, err := open(flow.Source, f.Source, f.SourceBootstrap)
	if err != nil {
		return err
	}
	defer src.Close()
	fb, err := preflight(ctx, fac, ios.ErrOut, o, f, rev, src, tgt, groupMatch)
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
	journal := &plan.TopicJournal{C: tgt, RF: f.StateTopicRF(), RFKey: "checkpoints.topic.replication.factor", Now: fac.Clock}
	defer journal.Close()
	ex := &plan.Executor{Journal: journal, Actions: fb.Actions()}
	applied, err := cmdutil.Apply(ctx, fac, o.ApplyOpts, p, ex)
	env := envelope{Envelope: output.Envelope{SchemaVersion: output.SchemaVersion, Kind: "failback", GeneratedAt: fac.Clock().UTC(), Items: fb.Translated()},
		Plan: p, Stranded: fb.Stranded, StrandedMode: o.Stranded}
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
		for _, s := range applied.Report.Steps {
			if s.Kind == switchover.KindCommitBack && s.Finished != nil {
				env.RTOMillis = max(env.RTOMillis, s.Finished.Sub(start).Milliseconds())
			}
		}
	}
	if o.Output == "json" {
		if werr := output.WriteJSON(ios.Out, env); werr != nil && err == nil {
			err = werr
		}
		return err
	}
	if tr := fb.Translated(); len(tr) > 0 {
		fmt.Fprintln(ios.Out)
		if rerr := render(ios.Out, f, tr); rerr != nil && err == nil {
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
	return err
}

func render(w io.Writer, f *flow.Flow, tr []switchover.ExactOffset) error {
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
		rows = append(rows, []string{e.Group, e.Topic, fmt.Sprint(e.Partition), fmt.Sprint(e.SourceOffset), e.RemoteTopic, fmt.Sprint(e.TargetOffset), how, rr, "0", e.Why})
	}
	return output.Table(w, []string{"GROUP", "TOPIC ON " + f.Target, "PARTITION", "OFFSET ON " + f.Target, "TOPIC ON " + f.Source, "OFFSET ON " + f.Source, "TRANSLATION", "RE-READS", "SKIPS", "WHY"}, rows)
}

// preflight reads both clusters and refuses (exit 3, nothing written) what would make the
// failback wrong.
func preflight(ctx context.Context, fac *cmdutil.Factory, errOut io.Writer, o *Options, f, rev *flow.Flow, src, tgt cluster.Cluster, groupMatch func(string) bool) (*switchover.Failback, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	st, err := switchover.ReadFlowState(ctx, f, tgt, src)
	if err != nil {
		return nil, err
	}
	if st.State != flowstate.FailedOver && st.State != flowstate.FailingBack {
		return nil, kerr.WithHint(kerr.New(kerr.CheckFailed, "flow %s is %s (epoch %d), not FAILED_OVER: nothing to fail back; nothing was changed", f.Name(), st.State, st.Epoch),
			fmt.Sprintf("kmm failover --flow '%s' makes %s the primary; failback returns from it", f.Name(), f.Target))
	}
	if st.State == flowstate.FailingBack { // a resumed failback: the cut is kept in the record
		fmt.Fprintf(errOut, "kmm: flow %s is FAILING_BACK (epoch %d): continuing that failback\n", f.Name(), st.Epoch)
	}
	tts, err := tgt.ListTopics(ctx)
	if err != nil {
		return nil, err
	}
	// Partitions the reverse flow copies (heartbeats are never quiet, and not the application's).
	all, err := switchover.ReverseTPs(ctx, rev, tgt)
	if err != nil {
		return nil, err
	}
	var revTPs []cluster.TP
	for _, tp := range all {
		if !rev.Policy.IsHeartbeatsTopic(tp.Topic) {
			revTPs = append(revTPs, tp)
		}
	}
	// Groups: committed offsets on T for the flow's remote topics or topics the reverse flow copies.
	mapped := map[string]bool{}
	for _, c := range st.Cut {
		mapped[f.RemoteTopic(c.Topic)] = true
	}
	for _, tp := range revTPs {
		mapped[tp.Topic] = true
	}
	list, err := tgt.ListGroups(ctx)
	if err != nil {
		return nil, err
	}
	var groups []string
	for _, g := range list {
		switch {
		case len(o.Groups) > 0 && !slices.Contains(o.Groups, g.ID):
			continue
		case len(o.Groups) == 0 && groupMatch != nil && !groupMatch(g.ID):
			continue
		case len(o.Groups) == 0 && groupMatch == nil && !f.GroupFilter(g.ID):
			continue
		}
		offs, err := tgt.ListGroupOffsets(ctx, g.ID)
		if err != nil {
			return nil, err
		}
		for tp := range offs {
			if mapped[tp.Topic] && tts[tp.Topic].Partitions > 0 {
				groups = append(groups, g.ID)
				break
			}
		}
	}
	sort.Strings(groups)
	for _, g := range o.Groups {
		if !slices.Contains(groups, g) {
			return nil, kerr.New(kerr.Usage, "group %s has no committed offset on %s for the topics of %s or %s", g, f.Target, f.Name(), rev.Name())
		}
	}
	if o.GroupsRegex != "" && len(groups) == 0 {
		return nil, kerr.New(kerr.Usage, "--groups %q matches no group with committed offsets on %s", o.GroupsRegex, f.Target)
	}
	var problems []string
	if len(groups) > 0 && !o.Force {
		for _, side := range []struct {
			c     cluster.Cluster
			alias string
		}{{src, f.Source}, {tgt, f.Target}} {
			ds, err := side.c.DescribeGroups(ctx, groups...)
			if err != nil {
				return nil, err
			}
			for _, d := range ds {
				if d.Members > 0 {
					problems = append(problems, fmt.Sprintf("group %s has %d member(s) on %s: stop its consumers first (or --force)", d.ID, d.Members, side.alias))
				}
			}
		}
	}
	if !o.Force {
		// No Apache MM2 on either direction: A->B's would write A's records into B again, B->A's
		// would race the reverse drain and the positions failback stores.
		for _, fl := range []*flow.Flow{f, rev} {
			if pr := cmdutil.MM2Running(ctx, fac, fl, errOut); pr != "" {
				problems = append(problems, pr)
			}
		}
		// At most one kmm replicator of the reverse flow.
		recs, err := plan.ReadState(ctx, src)
		if err != nil {
			return nil, err
		}
		alive := 0
		for _, l := range flowstate.Leases(recs, rev.Source, rev.Target) {
			if l.Alive(time.Now()) {
				alive++
			}
		}
		if alive > 1 {
			problems = append(problems, fmt.Sprintf("%d kmm replicate processes run %s: keep one (or --force)", alive, rev.Name()))
		}
		if o.StartReverse && alive > 0 {
			problems = append(problems, fmt.Sprintf("--start-reverse, but a kmm replicate process already runs %s: stop it, or drop --start-reverse (or --force)", rev.Name()))
		}
	}
	if len(problems) > 0 {
		return nil, kerr.New(kerr.CheckFailed, "preflight failed, nothing was changed:\n  %s", strings.Join(problems, "\n  "))
	}
	stranded, err := switchover.FindStranded(ctx, f, rev, src, tgt, st.Cut)
	if err != nil {
		return nil, err
	}
	lagFB := &switchover.Failback{F: f, Rev: rev, S: src, T: tgt, RevTPs: revTPs, Opt: switchover.FailbackOptions{Timeout: o.Timeout}}
	lag, err := lagFB.ReverseLag(ctx)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(errOut, "kmm: reverse flow %s: %d record(s) of %d partition(s) on %s not on %s yet\n", rev.Name(), lag, len(revTPs), f.Target, f.Source)
	if o.MaxRevLag >= 0 && lag > o.MaxRevLag {
		return nil, kerr.WithHint(kerr.New(kerr.CheckFailed, "reverse flow %s has %d record(s) left to copy, more than --max-reverse-lag %d; nothing was changed", rev.Name(), lag, o.MaxRevLag),
			fmt.Sprintf("let kmm replicate FILE --flow '%s' catch up, then run failback again", rev.Name()))
	}
	remoteWrites, err := switchover.FindRemoteWrites(ctx, f, rev, tgt, st.Cut)
	if err != nil {
		return nil, err
	}
	var startRev func(context.Context) error
	if o.StartReverse {
		if fac.Replicate == nil {
			return nil, kerr.New(kerr.Usage, "--start-reverse: this build cannot run flows in process")
		}
		// The file may leave T->S disabled (it drives kmm replicate; MM2 then runs it for
		// heartbeats only): enabled here, with the offset syncs failback translates over.
		r := *rev
		r.Enabled, r.EmitOffsetSyncs = true, true
		if r.TopicFilter == nil {
			return nil, kerr.New(kerr.Usage, "--start-reverse: flow %s has no topics filter in the file (set %s.topics)", rev.Name(), rev.Name())
		}
		if err := r.Validate(); err != nil {
			return nil, kerr.Wrap(kerr.Usage, err)
		}
		startRev = func(ctx context.Context) error { return fac.Replicate(ctx, []*flow.Flow{&r}) }
	}
	return &switchover.Failback{F: f, Rev: rev, S: src, T: tgt, State: st, Groups: groups, RevTPs: revTPs, Stranded: stranded, RemoteWrites: remoteWrites,
		Opt: switchover.FailbackOptions{StartReverse: startRev, Stranded: o.Stranded, QuietFor: o.QuietFor, Timeout: o.Timeout, By: userAtHost(), Force: o.Force,
			Fence: switchover.FenceOptions{Method: o.Fence, Principals: o.FencePrincipals, Command: o.FenceCommand}, Drift: cmdutil.Drift(ctx, fac, f)}}, nil
}
