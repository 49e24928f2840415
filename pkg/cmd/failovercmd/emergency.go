package failovercmd

import (
	"context"
	"fmt"
	"time"

	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/cmd/drshared"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/output"
	"github.com/kmmproject/kmm/pkg/plan"
	"github.com/kmmproject/kmm/pkg/switchover"
)

type emergencyEnvelope struct {
	output.Envelope
	Plan      *plan.Plan          `json:"plan"`
	Report    *plan.Run           `json:"report,omitempty"`
	Gates     switchover.Gates    `json:"gates"`
	RTOMillis int64               `json:"rto_ms,omitempty"`
	RPO       []switchover.RPORow `json:"rpo"`
	// RPOTotal (= RPOMin): records known to be on the source and not on the target; RPOMax the
	// estimate of the most it can be; RPOAgeMs how old the freshest knowledge of the source's
	// end is. Each is null when not known (nothing says where any partition ended), never 0.
	RPOTotal *int64 `json:"rpo_records"`
	RPOMin   *int64 `json:"rpo_records_min"`
	RPOMax   *int64 `json:"rpo_records_max"`
	RPOAgeMs *int64 `json:"rpo_age_ms"`
	// CheckpointAges: the --max-checkpoint-age gate's view of each group (when the gate is set).
	CheckpointAges []switchover.CheckpointAge `json:"checkpoint_ages,omitempty"`
}

// runEmergency fails over from what the target holds (switchover.PrepareEmergency: the source
// proven unreachable, or --force; the RPO from the source-ends snapshot; the groups from their
// checkpoints), and renders it.
func runEmergency(ctx context.Context, o *Options, fac *cmdutil.Factory, req switchover.FailoverRequest, start time.Time) error {
	ios := fac.IO
	f := req.F
	// The source is probed while the target is opened: a source that does not answer costs
	// one wait, not one after the target's.
	probed := make(chan error, 1)
	go func() {
		src, err := drshared.Open(ctx, fac, f, flow.Source, "")
		if err == nil {
			src.Close()
		}
		probed <- err
	}()
	tgt, err := drshared.Open(ctx, fac, f, flow.Target, "emergency failover needs the target cluster "+f.Target)
	srcDown := <-probed
	if err != nil {
		return err
	}
	defer tgt.Close()
	e, gates, err := switchover.PrepareEmergency(ctx, drshared.Env(fac), req, tgt, srcDown)
	if err != nil {
		return err
	}
	e.Opt.Progress = func(msg string) { fmt.Fprintf(ios.ErrOut, "kmm: %s\n", msg) }
	p, err := e.Plan()
	if err != nil {
		return err
	}
	journal := drshared.Journal(tgt, f, fac)
	defer journal.Close()
	ex := &plan.Executor{Journal: journal, Actions: e.Actions()}
	applied, err := cmdutil.Apply(ctx, fac, o.ApplyOpts, p, ex)
	env := emergencyEnvelope{Envelope: output.Envelope{SchemaVersion: output.SchemaVersion, Kind: "failover", GeneratedAt: fac.Now().UTC(), Items: e.Translated()},
		Plan: p, Gates: gates, RPO: e.RPORows, CheckpointAges: e.CkAges}
	if applied != nil && applied.Report != nil {
		env.Report = applied.Report
		// After the replicator stopped, its final progress makes the RPO exact.
		if r2, _, rerr := e.RPO(ctx); rerr == nil {
			env.RPO = r2
		} else {
			fmt.Fprintf(ios.ErrOut, "kmm: re-reading the replicated positions after the stop: %v (the RPO is the one before it)\n", rerr)
		}
		env.RTOMillis = drshared.RTO(applied.Report, switchover.KindCommitTranslated, start)
	}
	ev := drshared.NewEvidence("failover", o.Mode, f, start, fac.Now(), req.By, p, o.ApplyOpts, applied, err)
	ev.Gates = gates
	if env.RTOMillis > 0 {
		ev.RTOMillis, ev.RTONote = env.RTOMillis, "start to the last group commit: consumers may resume on "+f.Target
	}
	env.RPOTotal, env.RPOMax = switchover.RPOTotals(env.RPO)
	env.RPOMin = env.RPOTotal
	ev.Translations, ev.CkAges, ev.RPOTotal = e.Translated(), e.CkAges, env.RPOTotal
	for _, r := range env.RPO {
		if r.SnapshotAgeMs >= 0 && (env.RPOAgeMs == nil || r.SnapshotAgeMs < *env.RPOAgeMs) {
			env.RPOAgeMs = &r.SnapshotAgeMs
		}
	}
	ev.RPONote = rpoNote(f.Source, f.Target, env.RPOMin, env.RPOMax, env.RPOAgeMs)
	for _, r := range env.RPO {
		ev.RPO = append(ev.RPO, drshared.RPOLine{Topic: r.Topic, Partition: r.Partition, SourceEnd: r.SourceEnd, Replicated: r.Replicated,
			How: fmt.Sprintf("source end: %s, %s old; replicated: %s; at most %s", r.SourceEndHow, age(r.SnapshotAgeMs), r.ReplicatedSource, count(r.RPORecordsMax)), Records: r.RPORecords})
	}
	if e.Ends == nil {
		ev.Notes = append(ev.Notes, "no source end-offset snapshot on "+f.Target+": the RPO is not known (--accept-loss)")
	}
	if o.Output == "json" {
		if werr := output.WriteJSON(ios.Out, env); werr != nil && err == nil {
			err = werr
		}
		return drshared.WriteReport(o.Report, ios.ErrOut, ev, fac.Now(), err)
	}
	fmt.Fprintln(ios.Out)
	if tr := e.Translated(); len(tr) > 0 {
		if rerr := drshared.RenderTranslations(ios.Out, tr, columns); rerr != nil && err == nil {
			err = rerr
		}
		fmt.Fprintln(ios.Out)
	}
	var cells [][]string
	for _, r := range env.RPO {
		end := "?"
		if r.SourceEnd >= 0 {
			end = fmt.Sprint(r.SourceEnd)
		}
		cells = append(cells, []string{r.Topic, fmt.Sprint(r.Partition), end, r.SourceEndHow, age(r.SnapshotAgeMs), fmt.Sprint(r.Replicated), r.ReplicatedSource,
			count(r.RPORecords), count(r.RPORecordsMax)})
	}
	if terr := output.Table(ios.Out, []string{"TOPIC", "PARTITION", "SOURCE END", "HOW KNOWN", "AGE", "REPLICATED", "HOW KNOWN", "RPO RECORDS", "AT MOST"}, cells); terr != nil && err == nil {
		err = terr
	}
	fmt.Fprintf(ios.Out, "RPO %s\n", rpoNote(f.Source, f.Target, env.RPOMin, env.RPOMax, env.RPOAgeMs))
	return drshared.WriteReport(o.Report, ios.ErrOut, ev, fac.Now(), err)
}

// rpoNote words an emergency failover's RPO: the records known lost, the estimate of the most,
// and how old the knowledge of the source's end is (nil: not known).
func rpoNote(src, tgt string, lo, hi, ageMs *int64) string {
	if lo == nil {
		return fmt.Sprintf("not known: nothing on %s says where %s's partitions ended (no end-offset snapshot, no checkpoint)", tgt, src)
	}
	when := "as of ? before the cut: from checkpoints, no end-offset snapshot"
	if ageMs != nil {
		when = "as of " + age(*ageMs) + " before the cut"
	}
	s := fmt.Sprintf("%d record(s) known written on %s and not on %s (its end known %s)", *lo, src, tgt, when)
	if hi != nil && *hi > *lo {
		s += fmt.Sprintf("; at most about %d with what %s may have received after that, at its recent write rate", *hi, src)
	}
	return s
}

// count is n, or "?" when it is not known (-1).
func count(n int64) string {
	if n < 0 {
		return "?"
	}
	return fmt.Sprint(n)
}

// age words a duration in milliseconds for a table ("?" when unknown).
func age(ms int64) string {
	if ms < 0 {
		return "?"
	}
	return (time.Duration(ms) * time.Millisecond).Round(100 * time.Millisecond).String()
}
