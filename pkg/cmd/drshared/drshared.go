// Package drshared is what `kmm failover` and `kmm failback` share, as cli/cli's
// pkg/cmd/pr/shared is for its pr commands: the flags and options both take (groups, fence,
// waits, the apply contract, the drill file), who ran the command, opening the flow's two
// clusters, the switchover environment, the journal, and the rendering of translations, gates
// and the evidence report. The preflights, gates, steps and translations themselves are
// pkg/switchover's; the commands parse flags and render only.
package drshared

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/drill"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/output"
	"github.com/kmmproject/kmm/pkg/plan"
	"github.com/kmmproject/kmm/pkg/switchover"
)

// Common are the options failover and failback share.
type Common struct {
	File            mm2conf.LoadOptions
	Flow            flow.Selector
	Output          string
	Groups          []string
	GroupsRegex     string
	Fence           string
	FencePrincipals []string
	FenceCommand    string
	QuietFor        time.Duration
	Timeout         time.Duration
	Force           bool
	ApplyOpts       cmdutil.ApplyOptions
}

// FlagText words the shared flags for one command: what its groups do, where its writers are
// fenced, what it quiets.
type FlagText struct {
	Group, Groups                       string // --group, --groups
	Fence, FencePrincipal, FenceCommand string
	QuietFor, Timeout, Force, Drill     string
}

// Flags are the shared flags (after the file, output and flow flags), worded by t.
func Flags(t FlagText) []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "group", Usage: t.Group},
		&cli.StringFlag{Name: "groups", Usage: t.Groups},
		&cli.StringFlag{Name: "fence", Value: switchover.FenceNone, Usage: t.Fence},
		&cli.StringSliceFlag{Name: "fence-principal", Usage: t.FencePrincipal},
		&cli.StringFlag{Name: "fence-command", Usage: t.FenceCommand},
		&cli.DurationFlag{Name: "quiet-for", Value: 10 * time.Second, Usage: t.QuietFor},
		&cli.DurationFlag{Name: "timeout", Value: 5 * time.Minute, Usage: t.Timeout},
		&cli.BoolFlag{Name: "force", Usage: t.Force},
		&cli.StringFlag{Name: "drill", Aliases: cmdutil.OldNames("drill"), Usage: t.Drill},
	}
}

// ReportFlag is --report FILE.md, the evidence report, worded for one command.
func ReportFlag(usage string) cli.Flag {
	return &cli.StringFlag{Name: "report", Usage: usage}
}

// ApplyFlags are --dry-run and --yes, last in the list.
func ApplyFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "dry-run", Usage: "print the plan, change nothing"},
		&cli.BoolFlag{Name: "yes", Usage: "do not ask for confirmation (required when stdin is not a terminal)"},
	}
}

// FromContext fills the shared options from the command line.
func FromContext(c *cli.Context) (Common, error) {
	out, err := cmdutil.Output(c, "table", "json")
	if err != nil {
		return Common{}, err
	}
	file, err := cmdutil.LoadOptions(c)
	if err != nil {
		return Common{}, err
	}
	return Common{File: file, Flow: cmdutil.FlowSelector(c), Output: out, Groups: c.StringSlice("group"), GroupsRegex: c.String("groups"),
		Fence: c.String("fence"), FencePrincipals: c.StringSlice("fence-principal"), FenceCommand: c.String("fence-command"),
		QuietFor: c.Duration("quiet-for"), Timeout: c.Duration("timeout"), Force: c.Bool("force"),
		ApplyOpts: cmdutil.ApplyOptions{DryRun: c.Bool("dry-run"), Yes: c.Bool("yes"), JSON: out == "json", Verb: "changed"}}, nil
}

// ApplyDrill fills the shared options from a drill file; flags given on the command line (set)
// win.
func (o *Common) ApplyDrill(d *drill.Drill, set func(string) bool) {
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

// CheckFence validates the fence flags (exit 2 before anything is read). noFence, when not "",
// is why this run cannot fence (failover's emergency and rehearse modes): any fence but none is
// then refused with it.
func (o *Common) CheckFence(noFence string) error {
	switch o.Fence {
	case "", switchover.FenceNone:
		if len(o.FencePrincipals) > 0 {
			return kerr.New(kerr.Usage, "--fence-principal needs --fence acl")
		}
		if o.FenceCommand != "" {
			return kerr.New(kerr.Usage, "--fence-command needs --fence hook")
		}
		return nil
	case switchover.FenceACL, switchover.FenceHook:
	default:
		return kerr.WithHint(kerr.New(kerr.Usage, "--fence %q: unknown", o.Fence), "use --fence none, acl or hook")
	}
	if noFence != "" {
		return kerr.WithHint(kerr.New(kerr.Usage, "--fence %s: %s", o.Fence, noFence), "drop --fence")
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
			return kerr.New(kerr.Usage, "--fence-command needs --fence hook, not acl")
		}
		return nil
	}
	if strings.TrimSpace(o.FenceCommand) == "" {
		return kerr.WithHint(kerr.New(kerr.Usage, "--fence hook needs --fence-command"), "e.g. --fence-command 'kubectl scale deploy/orders-producer --replicas=0'")
	}
	if len(o.FencePrincipals) > 0 {
		return kerr.New(kerr.Usage, "--fence-principal needs --fence acl, not hook")
	}
	return nil
}

// CheckWaits refuses bounds that cannot be waited for (exit 2 before anything is read):
// --quiet-for below 0, --timeout not above 0.
func (o *Common) CheckWaits() error {
	return errors.Join(cmdutil.NonNegativeDuration("quiet-for", o.QuietFor), cmdutil.PositiveDuration("timeout", o.Timeout))
}

// FenceOptions are the fence flags as pkg/switchover takes them.
func (o *Common) FenceOptions(hookOut io.Writer) switchover.FenceOptions {
	return switchover.FenceOptions{Method: o.Fence, Principals: o.FencePrincipals, Command: o.FenceCommand, HookOut: hookOut}
}

// Env is the switchover environment of a command: the factory's clusters, group prober and
// clock, warnings on stderr.
func Env(fac *cmdutil.Factory) switchover.Env {
	return switchover.Env{Clusters: fac.Clusters, Groups: fac.Groups, Now: fac.Now,
		Warn: func(msg string) { fmt.Fprintf(fac.IO.ErrOut, "kmm: %s\n", msg) }}
}

// Open opens side of f and proves it answers within 10 s: a cluster that does not is
// kerr.Unreachable (exit 4) with need as the hint's first words ("planned failover needs both
// clusters").
func Open(ctx context.Context, fac *cmdutil.Factory, f *flow.Flow, side flow.Side, need string) (cluster.Cluster, error) {
	c, err := fac.Clusters.Open(f, side)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := c.Ping(pctx, 10*time.Second); err != nil {
		c.Close()
		return nil, kerr.WithHint(kerr.Wrap(kerr.Unreachable, cluster.Named(f.Alias(side), f.Bootstrap(side), err)),
			cluster.UnreachableHint(need, f.Alias(side)))
	}
	return c, nil
}

// OpenBoth opens the source and the target of f at once and proves they answer within 10 s:
// when either does not, the error (kerr.Unreachable, exit 4) names each that did not, with need
// as the hint's first words.
func OpenBoth(ctx context.Context, fac *cmdutil.Factory, f *flow.Flow, need string) (src, tgt cluster.Cluster, err error) {
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cs, err := cluster.OpenAll(pctx, fac.Clusters, f, 10*time.Second, need, flow.Source, flow.Target)
	if err != nil {
		return nil, nil, err
	}
	return cs[0], cs[1], nil
}

// Journal is the plan journal of a DR command: __kmm_state on the flow's target.
func Journal(tgt cluster.Cluster, f *flow.Flow, fac *cmdutil.Factory) *plan.TopicJournal {
	return &plan.TopicJournal{C: tgt, RF: f.StateTopicRF(), RFKey: "checkpoints.topic.replication.factor", Now: fac.Now}
}

// RTO is the time from start to the last finished step of kind (the last group commit:
// consumers may resume); 0 when none finished.
func RTO(r *plan.Run, kind string, start time.Time) int64 {
	var ms int64
	if r == nil {
		return 0
	}
	for _, s := range r.Steps {
		if s.Kind == kind && s.Finished != nil {
			ms = max(ms, s.Finished.Sub(start).Milliseconds())
		}
	}
	return ms
}

// Columns name a translation table's offset columns: failover's source/target, failback's
// target/source.
type Columns struct {
	Topic, Offset, RemoteTopic, RemoteOffset string
}

// RenderTranslations writes translated group offsets as a table; unknown re-reads are "?".
func RenderTranslations(w io.Writer, tr []switchover.ExactOffset, cols Columns) error {
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
		rows = append(rows, []string{e.Group, e.Topic, fmt.Sprint(e.Partition), fmt.Sprint(e.SourceOffset), e.RemoteTopic, fmt.Sprint(e.TargetOffset), how, rr, fmt.Sprint(e.Skips), e.Why})
	}
	return output.Table(w, []string{"GROUP", cols.Topic, "PARTITION", cols.Offset, cols.RemoteTopic, cols.RemoteOffset, "TRANSLATION", "RE-READS", "SKIPS", "WHY"}, rows)
}
