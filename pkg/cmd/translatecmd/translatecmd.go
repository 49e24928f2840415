// Package translatecmd implements `kmm translate-offsets`: per group, topic and partition, the
// committed source offset and the target offset a consumer of that group should resume from,
// how it was derived (checkpoint or offset mapping), its age, and whether it is exact or its
// error bound. It reads the target cluster (checkpoints written by kmm or Apache MM2), and the
// source only when reachable, so it works while the source is down. --apply commits the
// translated offsets to the groups on the target after printing the plan.
package translatecmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/checkpoint"
	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/lag"
	"github.com/kmmproject/kmm/pkg/output"
	"github.com/kmmproject/kmm/pkg/plan"
	"github.com/kmmproject/kmm/pkg/snapshot"
	"github.com/kmmproject/kmm/pkg/switchover"
)

// Options are the flags and arguments of `kmm translate-offsets`.
type Options struct {
	File   mm2conf.LoadOptions
	Flow   flow.Selector
	Output string // table or json
	Groups []string
	// GroupsRegex is a Java regex over group names (--groups).
	GroupsRegex string
	Topics      []string
	Apply       bool
	ApplyOpts   cmdutil.ApplyOptions
	Force       bool
	// AllGroups lets --apply commit every group translated when none is named.
	AllGroups bool
}

// Validate returns a usage error (exit 2) for bad flag values and combinations, before the
// file is read.
func (o *Options) Validate() error {
	errs := []error{
		cmdutil.OneOf("output", o.Output, "table", "json"),
		cmdutil.Exclusive("group", len(o.Groups) > 0, "groups", o.GroupsRegex != "", "name groups with --group, or match them with --groups REGEX"),
		cmdutil.Requires("dry-run", o.ApplyOpts.DryRun, "apply", o.Apply),
		cmdutil.Requires("yes", o.ApplyOpts.Yes, "apply", o.Apply),
		cmdutil.Requires("force", o.Force, "apply", o.Apply),
		cmdutil.Requires("all-groups", o.AllGroups, "apply", o.Apply),
		cmdutil.Exclusive("all-groups", o.AllGroups, "group", len(o.Groups) > 0, ""),
		cmdutil.Exclusive("all-groups", o.AllGroups, "groups", o.GroupsRegex != "", ""),
	}
	if o.Apply && !o.AllGroups && len(o.Groups) == 0 && o.GroupsRegex == "" {
		errs = append(errs, cmdutil.Usagef("name the groups with --group G or --groups REGEX, or add --all-groups", "--apply commits offsets of the groups selected, and none is"))
	}
	return errors.Join(errs...)
}

// Command returns `kmm translate-offsets`.
func Command(f *cmdutil.Factory) *cli.Command {
	return cmdutil.WithExamples(&cli.Command{
		Name:      "translate-offsets",
		Usage:     "translate consumer group offsets from source to target (and --apply them)",
		ArgsUsage: "mirror-maker.properties",
		Description: `Shows, per group, topic and partition, the committed source offset and the target offset a
consumer of that group resumes from, how it was derived (checkpoint or offset mapping), its age,
and whether it is exact or its error bound. Reads the target (checkpoints of kmm or Apache MM2),
and the source when reachable. --apply commits the translated offsets to idle groups on the
target as a plan: printed first, --dry-run stops there, each group is a step checked on the
target before it is committed, and an interrupted run is resumed by the next one (journal:
__kmm_state on the target).`,
		Flags: append(append(cmdutil.ConfigFlags(), cmdutil.OutputFlag("table", "json")),
			append(cmdutil.FlowFlags(true),
				&cli.StringSliceFlag{Name: "group", Usage: "translate these `GROUP`s (exit 3 if one cannot be translated)"},
				&cli.StringFlag{Name: "groups", Usage: "translate the groups matching this Java `REGEX`"},
				&cli.StringSliceFlag{Name: "topic", Usage: "only these source (or target) `TOPIC`s"},
				&cli.BoolFlag{Name: "apply", Usage: "commit the translated offsets to the groups on the target"},
				&cli.BoolFlag{Name: "dry-run", Usage: "with --apply: print the plan, commit nothing"},
				&cli.BoolFlag{Name: "yes", Usage: "with --apply: do not ask for confirmation (required when stdin is not a terminal)"},
				&cli.BoolFlag{Name: "force", Usage: "with --apply: also commit to groups that are not idle on the target"},
				&cli.BoolFlag{Name: "all-groups", Usage: "with --apply and no --group/--groups: commit the offsets of every group translated"},
			)...),
		Action: func(c *cli.Context) error {
			opts, err := optionsFrom(c)
			if err != nil {
				return err
			}
			return run(c.Context, opts, f)
		},
	},
		cmdutil.Example{What: "where group billing should resume on the target, and how exact that is", Cmd: "kmm translate-offsets mirror-maker.properties --group billing"},
		cmdutil.Example{What: "every group matching a regex, as JSON", Cmd: "kmm translate-offsets mirror-maker.properties --flow 'A->B' --groups 'app-.*' -o json"},
		cmdutil.Example{What: "the plan only, as JSON", Cmd: "kmm translate-offsets mirror-maker.properties --group billing --apply --dry-run -o json"},
		cmdutil.Example{What: "commit the translated offsets on the target without asking", Cmd: "kmm translate-offsets mirror-maker.properties --group billing --apply --yes"},
	)
}

func optionsFrom(c *cli.Context) (*Options, error) {
	out, err := cmdutil.Output(c, "table", "json")
	if err != nil {
		return nil, err
	}
	file, err := cmdutil.LoadOptions(c)
	if err != nil {
		return nil, err
	}
	return &Options{File: file, Flow: cmdutil.FlowSelector(c), Output: out, Groups: c.StringSlice("group"), GroupsRegex: c.String("groups"),
		Topics: c.StringSlice("topic"), Apply: c.Bool("apply"), Force: c.Bool("force"), AllGroups: c.Bool("all-groups"),
		ApplyOpts: cmdutil.ApplyOptions{DryRun: c.Bool("dry-run"), Yes: c.Bool("yes"), JSON: out == "json", Verb: "committed"}}, nil
}

// envelope is the JSON of translate-offsets: translations in items; with --apply, the plan and
// (unless --dry-run) the report of the run beside them.
type envelope struct {
	output.Envelope
	Plan   *plan.Plan `json:"plan,omitempty"`
	Resume *resumed   `json:"resumed,omitempty"`
	Report *plan.Run  `json:"report,omitempty"`
}

type resumed struct {
	RunID   string    `json:"run_id"`
	Started time.Time `json:"started_at"`
	Done    int       `json:"steps_done"`
	Total   int       `json:"steps"`
}

func run(ctx context.Context, o *Options, fac *cmdutil.Factory) error {
	if err := cmdutil.Validate(o); err != nil {
		return err
	}
	io := fac.IO
	if o.Apply {
		if err := cmdutil.CheckConfirmable(o.ApplyOpts, io, "--apply changes committed offsets on the target"); err != nil {
			return err
		}
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
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	in, srcErr, err := snapshot.TranslateInput(ctx, fac.Clusters, f, fac.Now())
	if err != nil {
		return err
	}
	if srcErr != nil {
		fmt.Fprintf(io.ErrOut, "kmm: source cluster %s not read (%v): translating from what %s holds; error bounds may be unknown\n", f.Source, srcErr, f.Target)
	}
	in.Groups = o.Groups
	if topics := o.Topics; len(topics) > 0 {
		in.Topics = func(s, t string) bool { return slices.Contains(topics, s) || slices.Contains(topics, t) }
	}
	res := checkpoint.Translate(in)
	if groupMatch != nil && len(o.Groups) == 0 {
		res = slices.DeleteFunc(res, func(g checkpoint.GroupTranslation) bool { return !groupMatch(g.Group) })
	}
	var bad []string
	for _, g := range res {
		if len(o.Groups) > 0 && slices.Contains(o.Groups, g.Group) && !g.OK() {
			bad = append(bad, g.Group+": "+reasons(g))
		}
	}
	env := envelope{Envelope: output.Envelope{SchemaVersion: output.SchemaVersion, Kind: "translate-offsets", GeneratedAt: fac.Now().UTC(), Items: jsonItems(res)}}
	if o.Output != "json" {
		if err := render(io.Out, res); err != nil {
			return err
		}
	}
	var applyErr error
	if o.Apply {
		if o.Output != "json" {
			fmt.Fprintln(io.Out)
		}
		var applied *cmdutil.Applied
		applied, applyErr = apply(ctx, o, fac, f, res, in)
		if applied != nil {
			env.Plan, env.Report = applied.Plan, applied.Report
			if r := applied.Resume; r != nil {
				env.Resume = &resumed{RunID: r.RunID, Started: r.Started, Done: r.Done, Total: r.Total}
			}
		}
	}
	if o.Output == "json" {
		if err := output.WriteJSON(io.Out, env); err != nil {
			return err
		}
	}
	if applyErr != nil {
		return applyErr
	}
	if len(bad) > 0 {
		return kerr.New(kerr.CheckFailed, "cannot translate:\n  %s", strings.Join(bad, "\n  "))
	}
	return nil
}

func reasons(g checkpoint.GroupTranslation) string {
	if len(g.Problems) == 0 && len(g.Rows) == 0 {
		return "no checkpoint and no committed offset known for this group"
	}
	var out []string
	for _, p := range g.Problems {
		out = append(out, p.Detail)
	}
	return strings.Join(out, "; ")
}

type jsonRow struct {
	Group        string `json:"group"`
	SourceTopic  string `json:"source_topic"`
	Partition    int32  `json:"partition"`
	SourceOffset int64  `json:"source_offset"`
	TargetTopic  string `json:"target_topic"`
	TargetOffset int64  `json:"target_offset"`
	Derived      string `json:"derived"`
	AgeMs        *int64 `json:"age_ms"` // null: not known
	Exact        bool   `json:"exact"`
	Bound        *int64 `json:"bound"` // null: not known
	Checkpoint   int64  `json:"checkpoint_offset"`
}

type jsonProblem struct {
	Kind      string `json:"kind"`
	Topic     string `json:"topic,omitempty"`
	Partition int32  `json:"partition"`
	Detail    string `json:"detail"`
}

type jsonGroup struct {
	Group         string        `json:"group"`
	OK            bool          `json:"ok"`
	TargetState   string        `json:"target_state,omitempty"`
	TargetMembers int           `json:"target_members"`
	Rows          []jsonRow     `json:"rows"`
	Problems      []jsonProblem `json:"problems"`
}

func jsonItems(res []checkpoint.GroupTranslation) []jsonGroup {
	out := make([]jsonGroup, 0, len(res))
	for _, g := range res {
		jg := jsonGroup{Group: g.Group, OK: g.OK(), TargetState: g.TargetState, TargetMembers: g.TargetMembers, Rows: []jsonRow{}, Problems: []jsonProblem{}}
		for _, r := range g.Rows {
			jg.Rows = append(jg.Rows, jsonRow{Group: r.Group, SourceTopic: r.SourceTopic, Partition: r.Partition, SourceOffset: r.SourceOffset,
				TargetTopic: r.TargetTopic, TargetOffset: r.TargetOffset, Derived: string(r.Derived), AgeMs: ageMs(r.Age),
				Exact: r.Exact, Bound: lag.Known(r.Bound), Checkpoint: r.Checkpoint})
		}
		for _, p := range g.Problems {
			jg.Problems = append(jg.Problems, jsonProblem{Kind: string(p.Kind), Topic: p.Topic, Partition: p.Partition, Detail: p.Detail})
		}
		out = append(out, jg)
	}
	return out
}

// ageMs is a row's age in milliseconds, nil when not known (Age < 0: -1 ns, which
// Milliseconds would make 0).
func ageMs(age time.Duration) *int64 {
	if age < 0 {
		return nil
	}
	ms := age.Milliseconds()
	return &ms
}

func render(w io.Writer, res []checkpoint.GroupTranslation) error {
	var rows [][]string
	for _, g := range res {
		for _, r := range g.Rows {
			age := "live"
			if r.Age > 0 {
				age = r.Age.Round(time.Second).String()
			} else if r.Age < 0 {
				age = "?"
			}
			prec := "exact"
			switch {
			case r.Bound < 0:
				prec = "bound unknown"
			case !r.Exact:
				prec = fmt.Sprintf("may re-read ≤%d", r.Bound)
			}
			rows = append(rows, []string{r.Group, r.SourceTopic, fmt.Sprint(r.Partition), fmt.Sprint(r.SourceOffset), r.TargetTopic,
				fmt.Sprint(r.TargetOffset), string(r.Derived), age, prec})
		}
	}
	if err := output.Table(w, []string{"GROUP", "SOURCE TOPIC", "PARTITION", "SOURCE OFFSET", "TARGET TOPIC", "TARGET OFFSET", "FROM", "AGE", "PRECISION"}, rows); err != nil {
		return err
	}
	for _, g := range res {
		for _, p := range g.Problems {
			fmt.Fprintf(w, "%s: %s: %s\n", g.Group, p.Kind, p.Detail)
		}
	}
	return nil
}

// apply commits the translated offsets as a plan on the flow's target (one step per group).
func apply(ctx context.Context, o *Options, fac *cmdutil.Factory, f *flow.Flow, res []checkpoint.GroupTranslation, in checkpoint.TranslateInput) (*cmdutil.Applied, error) {
	groups := checkpoint.PlanApply(res, in.TargetGroups, in.TargetEnds, checkpoint.ApplyOptions{Force: o.Force})
	p, err := switchover.CommitOffsetsPlan("translate-offsets", f, groups, fac.Now())
	if err != nil {
		return nil, err
	}
	tgt, err := fac.Clusters.Open(f, flow.Target)
	if err != nil {
		return nil, err
	}
	defer tgt.Close()
	journal := &plan.TopicJournal{C: tgt, RF: f.StateTopicRF(), RFKey: "checkpoints.topic.replication.factor", Now: fac.Now}
	defer journal.Close()
	ex := &plan.Executor{Journal: journal, Actions: map[string]plan.Action{switchover.KindCommitOffsets: switchover.CommitOffsets{Groups: tgt}}}
	return cmdutil.Apply(ctx, fac, o.ApplyOpts, p, ex)
}
