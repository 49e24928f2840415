// Package translatecmd implements `kmm translate-offsets`: per group, topic and partition, the
// committed source offset and the target offset a consumer of that group should resume from,
// how it was derived (checkpoint or offset mapping), its age, and whether it is exact or its
// error bound. It reads the target cluster (checkpoints written by kmm or Apache MM2), and the
// source only when reachable, so it works while the source is down. --apply commits the
// translated offsets to the groups on the target after printing the plan.
package translatecmd

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/checkpoint"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/output"
	"github.com/kmmproject/kmm/pkg/snapshot"
)

// Command returns `kmm translate-offsets`.
func Command(f *cmdutil.Factory) *cli.Command {
	return &cli.Command{
		Name:      "translate-offsets",
		Usage:     "translate consumer group offsets from source to target (and --apply them)",
		ArgsUsage: "mirror-maker.properties",
		Flags: append(cmdutil.ConfigFlags(), cmdutil.OutputFlag("table", "json"),
			&cli.StringFlag{Name: "source", Usage: "source cluster alias (default: the only enabled flow's)"},
			&cli.StringFlag{Name: "target", Usage: "target cluster alias"},
			&cli.StringSliceFlag{Name: "group", Usage: "translate these groups (exit 3 if one cannot be translated)"},
			&cli.StringFlag{Name: "groups", Usage: "translate the groups matching this Java regex"},
			&cli.StringSliceFlag{Name: "topic", Usage: "only these source (or target) topics"},
			&cli.BoolFlag{Name: "apply", Usage: "commit the translated offsets to the groups on the target"},
			&cli.BoolFlag{Name: "dry-run", Usage: "with --apply: print the plan, commit nothing"},
			&cli.BoolFlag{Name: "yes", Usage: "with --apply: do not ask for confirmation (required when stdin is not a terminal)"},
			&cli.BoolFlag{Name: "force", Usage: "with --apply: also commit to groups that are not idle on the target"},
		),
		Action: func(c *cli.Context) error { return run(c, f) },
	}
}

func run(c *cli.Context, fac *cmdutil.Factory) error {
	io := fac.IO
	out, err := cmdutil.Output(c, "table", "json")
	if err != nil {
		return err
	}
	if c.Bool("apply") && !c.Bool("dry-run") && !c.Bool("yes") && !io.IsStdinTTY() {
		return kerr.WithHint(kerr.New(kerr.Usage, "--apply changes committed offsets on the target and needs confirmation"),
			"add --yes (or --dry-run to only see the plan)")
	}
	var groupMatch func(string) bool
	if re := c.String("groups"); re != "" {
		m, err := mm2conf.CompilePatternList([]string{re})
		if err != nil {
			return kerr.Wrap(kerr.Usage, fmt.Errorf("--groups: %w", err))
		}
		groupMatch = m
	}
	_, flows, err := cmdutil.LoadFlows(c, fac)
	if err != nil {
		return err
	}
	f, err := flow.One(flows, flow.Selector{Source: c.String("source"), Target: c.String("target")})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.Context, 2*time.Minute)
	defer cancel()
	in, srcErr, err := snapshot.TranslateInput(ctx, fac.Clusters, f, fac.Clock())
	if err != nil {
		return err
	}
	if srcErr != nil {
		fmt.Fprintf(io.ErrOut, "kmm: source cluster %s not read (%v): translating from what %s holds; error bounds may be unknown\n", f.Source, srcErr, f.Target)
	}
	requested := c.StringSlice("group")
	in.Groups = requested
	if topics := c.StringSlice("topic"); len(topics) > 0 {
		in.Topics = func(s, t string) bool { return slices.Contains(topics, s) || slices.Contains(topics, t) }
	}
	res := checkpoint.Translate(in)
	if groupMatch != nil && len(requested) == 0 {
		res = slices.DeleteFunc(res, func(g checkpoint.GroupTranslation) bool { return !groupMatch(g.Group) })
	}
	if out == "json" {
		err = output.WriteJSON(io.Out, output.Envelope{SchemaVersion: output.SchemaVersion, Kind: "translate-offsets", GeneratedAt: fac.Clock().UTC(), Items: jsonItems(res)})
	} else {
		err = render(io.Out, res)
	}
	if err != nil {
		return err
	}
	var bad []string
	for _, g := range res {
		if len(requested) > 0 && slices.Contains(requested, g.Group) && !g.OK() {
			bad = append(bad, g.Group+": "+reasons(g))
		}
	}
	if c.Bool("apply") {
		if err := apply(ctx, c, fac, f, res, in); err != nil {
			return err
		}
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
	AgeMs        int64  `json:"age_ms"`
	Exact        bool   `json:"exact"`
	Bound        int64  `json:"bound"`
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
				TargetTopic: r.TargetTopic, TargetOffset: r.TargetOffset, Derived: string(r.Derived), AgeMs: r.Age.Milliseconds(),
				Exact: r.Exact, Bound: r.Bound, Checkpoint: r.Checkpoint})
		}
		for _, p := range g.Problems {
			jg.Problems = append(jg.Problems, jsonProblem{Kind: string(p.Kind), Topic: p.Topic, Partition: p.Partition, Detail: p.Detail})
		}
		out = append(out, jg)
	}
	return out
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

func apply(ctx context.Context, c *cli.Context, fac *cmdutil.Factory, f *flow.Flow, res []checkpoint.GroupTranslation, in checkpoint.TranslateInput) error {
	io := fac.IO
	plans := checkpoint.PlanApply(res, in.TargetGroups, in.TargetEnds, checkpoint.ApplyOptions{Force: c.Bool("force")})
	sort.Slice(plans, func(i, j int) bool { return plans[i].Group < plans[j].Group })
	fmt.Fprintf(io.ErrOut, "plan: commit translated offsets on %s\n", f.Target)
	n := 0
	for _, p := range plans {
		if p.Skipped != checkpoint.NotSkipped {
			fmt.Fprintf(io.ErrOut, "  %s: skipped: %s\n", p.Group, p.Detail)
			continue
		}
		for _, cm := range p.Commits {
			fmt.Fprintf(io.ErrOut, "  %s %s[%d]: %d -> %d\n", p.Group, cm.TP.Topic, cm.TP.Partition, cm.Current, cm.Offset)
			n++
		}
		for _, cm := range p.Refused {
			fmt.Fprintf(io.ErrOut, "  %s %s[%d]: refused: %d is past the end of the target partition\n", p.Group, cm.TP.Topic, cm.TP.Partition, cm.Offset)
		}
	}
	if c.Bool("dry-run") || n == 0 {
		fmt.Fprintf(io.ErrOut, "plan: %d offset(s); nothing committed\n", n)
		return nil
	}
	if !c.Bool("yes") {
		fmt.Fprintf(io.ErrOut, "commit %d offset(s) on %s? [y/N] ", n, f.Target)
		line, _ := bufio.NewReader(io.In).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			return kerr.New(kerr.CheckFailed, "not confirmed; nothing committed")
		}
	}
	tgt, err := fac.Clusters.Open(f, flow.Target)
	if err != nil {
		return err
	}
	defer tgt.Close()
	for _, p := range plans {
		if p.Skipped != checkpoint.NotSkipped || len(p.Commits) == 0 {
			continue
		}
		offs := map[cluster.TP]cluster.OffsetMeta{}
		for _, cm := range p.Commits {
			offs[cluster.TP{Topic: cm.TP.Topic, Partition: cm.TP.Partition}] = cluster.OffsetMeta{Offset: cm.Offset, Metadata: cm.Metadata}
		}
		if err := tgt.AlterGroupOffsets(ctx, p.Group, offs); err != nil {
			return fmt.Errorf("committing offsets of group %s on %s: %w", p.Group, f.Target, err)
		}
		fmt.Fprintf(io.ErrOut, "committed %d offset(s) of group %s on %s\n", len(p.Commits), p.Group, f.Target)
	}
	return nil
}
