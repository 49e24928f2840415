package cmdutil

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/kmmproject/kmm/pkg/buildinfo"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/output"
	"github.com/kmmproject/kmm/pkg/plan"
)

// PauseAfterStepEnv is a test-only hook: with KMM_TEST_PAUSE_AFTER_STEP=N a command that applies
// a plan stops after its N-th step has been applied and journaled, says so on stderr ("paused
// after step N") and waits until it is killed or interrupted. The real-cluster tests use it to
// kill a run between two steps. Not for production use.
const PauseAfterStepEnv = "KMM_TEST_PAUSE_AFTER_STEP"

// ApplyOptions are the user's answers to the contract of a command that changes clusters.
type ApplyOptions struct {
	DryRun bool
	Yes    bool
	JSON   bool // -o json: the caller prints plan and report in its JSON document
	// Verb says what the command does to clusters, past tense ("committed"; default "changed").
	Verb string
}

// CheckConfirmable is the rule checked before anything else: a change needs --yes when stdin is
// not a terminal (usage error, exit 2), unless it is a dry run.
func CheckConfirmable(o ApplyOptions, io interface{ IsStdinTTY() bool }, what string) error {
	if o.DryRun || o.Yes || io.IsStdinTTY() {
		return nil
	}
	return kerr.WithHint(kerr.New(kerr.Usage, "%s and needs confirmation", what), "add --yes (or --dry-run to only see the plan)")
}

// Applied is what Apply did.
type Applied struct {
	Plan   *plan.Plan
	Resume *plan.Resume // the unfinished run this one continued, if any
	Report *plan.Run    // nil when nothing ran (dry run, nothing to do, not confirmed)
}

// Apply is the user contract of every command that changes clusters: print the plan (tables on
// stdout unless -o json, where the caller prints it), stop there with --dry-run, ask on a
// terminal unless --yes, execute through the executor (resuming an unfinished run of the same
// command and flow, which it announces), print progress on stderr and the report (steps,
// outcomes, times, numbers). A step that fails returns its error; an unconfirmed plan is a
// refused precondition (exit 3).
func Apply(ctx context.Context, f *Factory, o ApplyOptions, p *plan.Plan, ex *plan.Executor) (*Applied, error) {
	errOut, out := f.IO.ErrOut, f.IO.Out
	res := &Applied{Plan: p}
	verb := o.Verb
	if verb == "" {
		verb = "changed"
	}
	if ex.Now == nil {
		ex.Now = f.Now
	}
	if ex.Host == "" {
		ex.Host = f.Host()
	}
	if ex.Version == "" {
		ex.Version = buildinfo.Version
	}
	run, resume, err := ex.Begin(ctx, p)
	if err != nil {
		return res, err
	}
	res.Resume = resume
	if resume != nil {
		fmt.Fprintf(errOut, "kmm: %s\n", resume)
	}
	if !o.JSON {
		if err := RenderPlan(out, p, run); err != nil {
			return res, err
		}
	}
	steps, todo := len(p.Executable()), 0
	for _, s := range p.Executable() {
		if rec := recorded(run, s.ID); rec == nil || !rec.Outcome.Done() {
			todo++
		}
	}
	switch {
	case o.DryRun:
		fmt.Fprintf(errOut, "kmm: plan: %d step(s) to apply on %s; --dry-run: nothing %s\n", todo, p.Journal, verb)
		return res, nil
	case steps == 0:
		fmt.Fprintf(errOut, "kmm: plan: nothing to apply; nothing %s\n", verb)
		return res, nil
	}
	if !o.Yes {
		fmt.Fprintf(errOut, "apply %d step(s) to cluster %s (%s %s)? [y/N] ", todo, p.Journal, p.Command, p.Flow)
		line, _ := bufio.NewReader(f.IO.In).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			return res, kerr.New(kerr.CheckFailed, "not confirmed; nothing %s", verb)
		}
	}
	ex.OnStep = func(i, n int, rec plan.StepRecord) {
		line := fmt.Sprintf("kmm: step %d/%d %s: %s", i+1, n, rec.ID, rec.Outcome)
		if len(rec.Numbers) > 0 {
			line += " (" + plan.Numbers(rec.Numbers) + ")"
		}
		if rec.Outcome == plan.Failed || rec.Outcome == plan.AlreadyDone {
			line += ": " + rec.Detail
		}
		fmt.Fprintln(errOut, line)
	}
	if n, err := strconv.Atoi(f.Env(PauseAfterStepEnv)); err == nil && n > 0 {
		ex.AfterStep = func(ctx context.Context, done int) error {
			if done != n {
				return nil
			}
			fmt.Fprintf(errOut, "kmm: test hook %s: paused after step %d\n", PauseAfterStepEnv, n)
			<-ctx.Done()
			return kerr.Wrap(kerr.Interrupted, ctx.Err())
		}
	}
	report, err := ex.Execute(ctx, p, run)
	res.Report = report
	if !o.JSON && report != nil {
		fmt.Fprintln(out)
		if rerr := RenderReport(out, report); rerr != nil && err == nil {
			err = rerr
		}
	}
	if err != nil {
		fmt.Fprintf(errOut, "kmm: run %s stopped; it is recorded in %s and the next run resumes it\n", report.ID, ex.Journal.Where())
		return res, err
	}
	c := count(report)
	fmt.Fprintf(errOut, "kmm: run %s done: %d applied, %d already in effect, %d done before, %d skipped\n",
		report.ID, c[plan.Applied], c[plan.AlreadyDone], c[plan.DoneBefore], c[plan.Skipped])
	return res, nil
}

func recorded(r *plan.Run, id string) *plan.StepRecord {
	if r == nil {
		return nil
	}
	for i := range r.Steps {
		if r.Steps[i].ID == id {
			return &r.Steps[i]
		}
	}
	return nil
}

func count(r *plan.Run) map[plan.Outcome]int {
	c := map[plan.Outcome]int{}
	for _, s := range r.Steps {
		c[s.Outcome]++
	}
	return c
}

// RenderPlan writes the plan as a table: one row per step; when a run is being resumed, steps
// it recorded as done say so. Notes follow the table.
func RenderPlan(w io.Writer, p *plan.Plan, run *plan.Run) error {
	fmt.Fprintf(w, "PLAN %s %s (journal: %s on %s)\n", p.Command, p.Flow, plan.StateTopic, p.Journal)
	var rows [][]string
	for _, s := range p.Steps {
		what := s.Writes
		if s.Skip != "" {
			what = "skipped: " + s.Skip
		} else if rec := recorded(run, s.ID); rec != nil && rec.Outcome.Done() {
			what += " [done by run " + run.ID + "]"
		}
		rows = append(rows, []string{s.ID, s.Kind, s.Cluster, what, plan.Numbers(s.Expect)})
	}
	if err := output.Table(w, []string{"STEP", "KIND", "CLUSTER", "WRITES", "EXPECT"}, rows); err != nil {
		return err
	}
	for _, n := range p.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}

// RenderReport writes a run's outcome per step with times and numbers.
func RenderReport(w io.Writer, r *plan.Run) error {
	fmt.Fprintf(w, "REPORT run %s (%s)\n", r.ID, r.State)
	ts := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	var rows [][]string
	for _, s := range r.Steps {
		rows = append(rows, []string{s.ID, string(s.Outcome), ts(s.Started), ts(s.Finished), plan.Numbers(s.Numbers)})
	}
	return output.Table(w, []string{"STEP", "OUTCOME", "STARTED", "FINISHED", "NUMBERS"}, rows)
}
