package failovercmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/cmd/drshared"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/output"
	"github.com/kmmproject/kmm/pkg/plan"
	"github.com/kmmproject/kmm/pkg/switchover"
)

// Prediction is what a failover now would cost, as far as a rehearsal can know it.
type Prediction struct {
	// NotReplicated: records not known to be on the target, summed over the flow's partitions:
	// what a planned failover's drain waits for, and at most what an emergency failover now
	// would lose (exactly that when every partition's replicated position is exact).
	NotReplicated int64 `json:"not_replicated_records"`
	// TranslateMillis: measuring and translating every group (a part of planned mode's RTO);
	// CommitMillis: the shadow commits (the same number of commits planned mode makes); null
	// when none was made (--dry-run): not measured, never 0.
	TranslateMillis int64  `json:"translate_ms"`
	CommitMillis    *int64 `json:"commit_ms"`
	// Exact / Bound: group partitions translated exactly / with a re-read bound; Ahead: group
	// partitions ahead of replication (not on the target yet: exact only after a drain).
	Exact int `json:"exact_partitions"`
	Bound int `json:"bound_partitions"`
	Ahead int `json:"ahead_partitions"`
	// Verified: shadow positions whose record equals the group's next record on the source (or
	// both at the end); Mismatched: those that do not while the translation claimed exact.
	Verified   int `json:"verified_positions"`
	Mismatched int `json:"mismatched_positions"`
}

type rehearseEnvelope struct {
	output.Envelope
	Mode       string                         `json:"mode"`
	Plan       *plan.Plan                     `json:"plan"`
	Gates      switchover.Gates               `json:"gates"`
	Report     *plan.Run                      `json:"report,omitempty"`
	Partitions []switchover.RehearsePartition `json:"partitions"`
	Checks     []switchover.ShadowCheck       `json:"shadow_checks"`
	Predicted  Prediction                     `json:"predicted"`
}

// runRehearse is --mode rehearse: everything planned mode computes, committed to shadow groups
// on the target and proved by reading the records at the shadow positions, then deleted. No
// fence, no flow state, no commit to a real group.
func runRehearse(ctx context.Context, o *Options, fac *cmdutil.Factory, fo *switchover.Failover, gates switchover.Gates, start time.Time) error {
	ios := fac.IO
	f := fo.F
	journal := drshared.Journal(fo.Tgt, f, fac)
	defer journal.Close()
	r := &switchover.Rehearsal{Fo: fo}
	if prev, err := journal.Load(ctx, plan.RunKey(switchover.RehearseCommand, f.Name())); err != nil {
		return err
	} else if prev.Unfinished() {
		r.Leftover = switchover.ShadowGroupsOf(prev)
		fmt.Fprintf(ios.ErrOut, "kmm: rehearsal run %s (started %s) did not finish: its shadow groups are deleted first and the rehearsal starts over\n",
			prev.ID, prev.Started.UTC().Format(time.RFC3339))
	}
	if err := r.Prepare(ctx); err != nil {
		return err
	}
	p, err := r.Plan()
	if err != nil {
		return err
	}
	ex := &plan.Executor{Journal: journal, Actions: r.Actions(), Restart: true}
	if !o.ApplyOpts.DryRun {
		if err := runHook(ctx, ios.ErrOut, "pre", o.PreHook); err != nil {
			return err
		}
	}
	applied, err := cmdutil.Apply(ctx, fac, o.ApplyOpts, p, ex)
	if err == nil && !o.ApplyOpts.DryRun {
		err = runHook(ctx, ios.ErrOut, "post", o.PostHook)
	}
	tr := r.Translated()
	env := rehearseEnvelope{Envelope: output.Envelope{SchemaVersion: output.SchemaVersion, Kind: "failover", GeneratedAt: fac.Now().UTC(), Items: tr},
		Mode: "rehearse", Plan: p, Gates: gates, Partitions: r.Partitions(), Checks: r.Checks()}
	pr := &env.Predicted
	pr.TranslateMillis = r.TranslateMillis()
	for _, pt := range env.Partitions {
		pr.NotReplicated += pt.NotReplicated
	}
	exact := map[string]bool{}
	for _, e := range tr {
		switch {
		case e.Exact:
			pr.Exact++
			exact[fmt.Sprintf("%s/%s/%d", e.Group, e.Topic, e.Partition)] = true
		case e.Ahead > 0:
			pr.Ahead++
		default:
			pr.Bound++
		}
	}
	var bad []string
	for _, c := range env.Checks {
		switch c.Result {
		case "equal", "at-end":
			pr.Verified++
		case "differs", "missing":
			if exact[fmt.Sprintf("%s/%s/%d", c.Group, c.Topic, c.Partition)] {
				pr.Mismatched++
				bad = append(bad, fmt.Sprintf("%s %s[%d]: %s", c.Group, c.Topic, c.Partition, c.Detail))
			}
		}
	}
	if applied != nil && applied.Report != nil {
		env.Report = applied.Report
		for _, s := range applied.Report.Steps {
			if s.Kind == switchover.KindCommitShadow && s.Started != nil && s.Finished != nil {
				ms := s.Finished.Sub(*s.Started).Milliseconds()
				if pr.CommitMillis != nil {
					ms += *pr.CommitMillis
				}
				pr.CommitMillis = &ms
			}
		}
	}
	commits := "not measured (no shadow commit was made)"
	if pr.CommitMillis != nil {
		commits = fmt.Sprintf("%d ms", *pr.CommitMillis)
	}
	ev := drshared.NewEvidence("failover", o.Mode, f, start, fac.Now(), fac.UserAtHost(), p, o.ApplyOpts, applied, err)
	ev.Gates = gates
	ev.RTONote = fmt.Sprintf("predicted parts: translate %d ms and commits %s (measured by this rehearsal); a planned failover adds the fence, the drain of %d record(s) and the replicator's stop",
		pr.TranslateMillis, commits, pr.NotReplicated)
	notReplicated := pr.NotReplicated
	ev.Translations, ev.Checks, ev.RPOTotal = tr, env.Checks, &notReplicated
	ev.RPONote = "predicted: records not known to be on " + fo.F.Target + "; a planned failover drains them first (RPO 0), an emergency failover now would lose at most these"
	for _, pt := range env.Partitions {
		ev.RPO = append(ev.RPO, drshared.RPOLine{Topic: pt.Topic, Partition: pt.Partition, SourceEnd: pt.SourceEnd, Replicated: pt.Replicated, How: pt.ReplicatedSource, Records: pt.NotReplicated})
	}
	ev.Notes = append(ev.Notes, fmt.Sprintf("rehearsal: shadow groups %s<group> only; no fence, no flow state change, no commit to a real group", switchover.ShadowPrefix))
	if o.Output == "json" {
		if werr := output.WriteJSON(ios.Out, env); werr != nil && err == nil {
			err = werr
		}
	} else {
		fmt.Fprintln(ios.Out)
		if len(tr) > 0 {
			if rerr := drshared.RenderTranslations(ios.Out, tr, columns); rerr != nil && err == nil {
				err = rerr
			}
			fmt.Fprintln(ios.Out)
		}
		if len(env.Checks) > 0 {
			var rows [][]string
			for _, c := range env.Checks {
				rows = append(rows, []string{c.Group, c.ShadowGroup, c.RemoteTopic, fmt.Sprint(c.Partition), fmt.Sprint(c.SourceOffset), fmt.Sprint(c.ShadowOffset), c.Result})
			}
			if terr := output.Table(ios.Out, []string{"GROUP", "SHADOW GROUP", "REMOTE TOPIC", "PARTITION", "SOURCE OFFSET", "SHADOW OFFSET", "RECORDS"}, rows); terr != nil && err == nil {
				err = terr
			}
			fmt.Fprintln(ios.Out)
		}
		var rows [][]string
		for _, pt := range env.Partitions {
			rows = append(rows, []string{pt.Topic, fmt.Sprint(pt.Partition), fmt.Sprint(pt.SourceEnd), fmt.Sprint(pt.Replicated), pt.ReplicatedSource, fmt.Sprint(pt.NotReplicated)})
		}
		if terr := output.Table(ios.Out, []string{"TOPIC", "PARTITION", "SOURCE END", "REPLICATED", "HOW KNOWN", "NOT REPLICATED"}, rows); terr != nil && err == nil {
			err = terr
		}
		commitTook := "?"
		if pr.CommitMillis != nil {
			commitTook = (time.Duration(*pr.CommitMillis) * time.Millisecond).String()
		}
		fmt.Fprintf(ios.Out, "\nA failover now: %d record(s) not known to be on %s (planned mode drains them first; an emergency failover would lose at most that many); %d group partition(s) translate exactly, %d with a bound, %d are ahead of replication (measured: translate %s, commits %s).\n",
			pr.NotReplicated, fo.F.Target, pr.Exact, pr.Bound, pr.Ahead, time.Duration(pr.TranslateMillis)*time.Millisecond, commitTook)
	}
	if err == nil && len(bad) > 0 {
		err = kerr.New(kerr.CheckFailed, "rehearsal: %d shadow position(s) translated as exact do not hold the group's next record:\n  %s", len(bad), strings.Join(bad, "\n  "))
	}
	if err != nil {
		ev.Err = err.Error()
	}
	return drshared.WriteReport(o.Report, ios.ErrOut, ev, fac.Now(), err)
}
