package drshared

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kmmproject/kmm/pkg/buildinfo"
	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/plan"
	"github.com/kmmproject/kmm/pkg/switchover"
)

// Evidence is what --report FILE.md writes for auditors: who ran which failover of which flow
// when, the plan that was confirmed, each step with its timestamps, RTO, RPO per partition and
// the re-reads and skips per group and partition. It holds no setting of the MM2 file (no
// bootstrap servers, no credentials) and no hook command line.
type Evidence struct {
	// Command is the command that ran ("failover", "failback"; "" is failover).
	Command                    string
	Mode, Flow, Source, Target string
	By                         string // user@host
	KMM                        string // kmm version
	Started, Generated         time.Time
	// Confirmation: how the plan was confirmed (--yes, on a terminal, or --dry-run: not applied).
	Confirmation string
	Plan         *plan.Plan
	Run          *plan.Run // nil when nothing ran
	Err          string    // the error the command ended with, if any
	RTOMillis    int64     // -1: not reached
	RTONote      string
	RPO          []RPOLine
	RPOTotal     *int64 // nil: not known (not measured, or nothing says where the source ended)
	RPONote      string
	Translations []switchover.ExactOffset
	// TranslationColumns name the translations' topic and offset columns (nil: failover's,
	// source and target).
	TranslationColumns *Columns
	Checks             []switchover.ShadowCheck
	CkAges             []switchover.CheckpointAge
	// Gates: the preflight's gates and their verdicts.
	Gates switchover.Gates
	Notes []string
}

// RPOLine is one source partition's loss (or, in a rehearsal, predicted loss); SourceEnd and
// Records are -1 when not known ("?").
type RPOLine struct {
	Topic      string
	Partition  int32
	SourceEnd  int64
	Replicated int64
	How        string
	Records    int64
}

// known is n, or "?" when it is not known (-1).
func known(n int64) string {
	if n < 0 {
		return "?"
	}
	return fmt.Sprint(n)
}

func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r", " "), "\n", " ")
}

func ts(t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

func row(w io.Writer, cells ...any) {
	var b strings.Builder
	b.WriteString("|")
	for _, c := range cells {
		b.WriteString(" " + cell(fmt.Sprint(c)) + " |")
	}
	fmt.Fprintln(w, b.String())
}

func header(w io.Writer, names ...string) {
	row(w, toAny(names)...)
	seps := make([]any, len(names))
	for i := range seps {
		seps[i] = "---"
	}
	row(w, seps...)
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// RenderEvidence writes e as Markdown.
func RenderEvidence(w io.Writer, e *Evidence) error {
	var b bytes.Buffer
	cmd := e.Command
	if cmd == "" {
		cmd = "failover"
	}
	fmt.Fprintf(&b, "# kmm %s report: %s (%s)\n\n", cmd, e.Flow, e.Mode)
	header(&b, "", "")
	row(&b, "Flow", fmt.Sprintf("%s (source %s, target %s)", e.Flow, e.Source, e.Target))
	row(&b, "Mode", e.Mode)
	row(&b, "Run by", e.By)
	if e.Run != nil {
		row(&b, "Run", fmt.Sprintf("%s (%s)", e.Run.ID, e.Run.State))
		if e.Run.Host != "" {
			row(&b, "Run on host", e.Run.Host)
		}
		if len(e.Run.Resumes) > 0 {
			row(&b, "Resumed by", strings.Join(e.Run.Resumes, "; "))
		}
	} else {
		row(&b, "Run", "none (nothing was applied)")
	}
	row(&b, "kmm version", e.KMM)
	row(&b, "Started", ts(&e.Started))
	row(&b, "Report written", ts(&e.Generated))
	row(&b, "Confirmation", e.Confirmation)
	switch {
	case e.Err != "":
		row(&b, "Outcome", "failed: "+e.Err)
	case e.Run == nil:
		row(&b, "Outcome", "plan only")
	default:
		row(&b, "Outcome", "done")
	}
	if e.RTOMillis >= 0 {
		row(&b, "RTO", fmt.Sprintf("%d ms (%s)", e.RTOMillis, e.RTONote))
	} else if e.RTONote != "" {
		row(&b, "RTO", e.RTONote)
	}
	if e.RPOTotal != nil {
		row(&b, "RPO", fmt.Sprintf("%d record(s) (%s)", *e.RPOTotal, e.RPONote))
	} else {
		row(&b, "RPO", "? ("+e.RPONote+")")
	}

	if len(e.Gates) > 0 {
		fmt.Fprintf(&b, "\n## Preflight gates\n\n")
		header(&b, "Gate", "Verdict", "Problems", "Override")
		for _, g := range e.Gates {
			row(&b, g.Name, g.Verdict, strings.Join(g.Problems, "; "), g.Override)
		}
	}
	if p := e.Plan; p != nil {
		fmt.Fprintf(&b, "\n## The plan that was confirmed\n\n")
		fmt.Fprintf(&b, "Command `%s`, flow %s, created %s, digest `%s`, journal `%s` on %s.\n\n", p.Command, p.Flow, ts(&p.Created), p.Digest(), plan.StateTopic, p.Journal)
		header(&b, "#", "Step", "Kind", "Cluster", "Writes", "Why", "Expect")
		for i, s := range p.Steps {
			what := s.Writes
			if s.Skip != "" {
				what = "skipped: " + s.Skip
			}
			row(&b, i+1, s.ID, s.Kind, s.Cluster, what, s.Why, plan.Numbers(s.Expect))
		}
		for _, n := range p.Notes {
			fmt.Fprintf(&b, "\nNote: %s\n", cell(n))
		}
	}
	if r := e.Run; r != nil {
		fmt.Fprintf(&b, "\n## Steps\n\n")
		header(&b, "#", "Step", "Outcome", "Started", "Finished", "Duration", "Numbers", "Detail")
		for i, s := range r.Steps {
			d := ""
			if s.Started != nil && s.Finished != nil {
				d = fmt.Sprintf("%d ms", s.Finished.Sub(*s.Started).Milliseconds())
			}
			row(&b, i+1, s.ID, s.Outcome, ts(s.Started), ts(s.Finished), d, plan.Numbers(s.Numbers), s.Detail)
		}
	}
	if len(e.RPO) > 0 && cmd == "failback" {
		fmt.Fprintf(&b, "\n## Records stranded on %s per partition (written after the last record that reached %s)\n\n", e.Source, e.Target)
		header(&b, "Topic", "Partition", "End on "+e.Source, "Cut", "What happens to them", "Records not on "+e.Target)
	} else if len(e.RPO) > 0 {
		fmt.Fprintf(&b, "\n## RPO per partition\n\n")
		header(&b, "Topic", "Partition", "Source end", "Replicated", "How known", "Records not on "+e.Target)
	}
	if len(e.RPO) > 0 {
		for _, l := range e.RPO {
			row(&b, l.Topic, l.Partition, known(l.SourceEnd), l.Replicated, l.How, known(l.Records))
		}
	}
	if len(e.CkAges) > 0 {
		fmt.Fprintf(&b, "\n## Checkpoint ages (--max-checkpoint-age)\n\n")
		header(&b, "Group", "Newest checkpoint", "Age", "Committed past it on "+e.Source, "Stale")
		for _, a := range e.CkAges {
			age := "none"
			if a.AgeMs >= 0 {
				age = fmt.Sprintf("%d ms", a.AgeMs)
			}
			row(&b, a.Group, ts(&a.Newest), age, a.Behind, a.Stale)
		}
	}
	if len(e.Translations) > 0 {
		fmt.Fprintf(&b, "\n## Group offsets: re-reads and skips per group and partition\n\n")
		cols := Columns{Topic: "Topic", Offset: "Source offset", RemoteTopic: "Remote topic", RemoteOffset: "Target offset"}
		if e.TranslationColumns != nil {
			cols = *e.TranslationColumns
		}
		header(&b, "Group", cols.Topic, "Partition", cols.RemoteTopic, cols.Offset, cols.RemoteOffset, "Translation", "Re-reads", "Skips", "Why")
		for _, t := range e.Translations {
			how, rr := "exact", fmt.Sprint(t.Rereads)
			if !t.Exact {
				how = "bound"
			}
			if t.Rereads < 0 {
				rr = "?"
			}
			row(&b, t.Group, t.Topic, t.Partition, t.RemoteTopic, t.SourceOffset, t.TargetOffset, how, rr, t.Skips, t.Why)
		}
	}
	if len(e.Checks) > 0 {
		fmt.Fprintf(&b, "\n## Shadow positions compared (rehearsal)\n\n")
		header(&b, "Group", "Shadow group", "Remote topic", "Partition", "Source offset", "Shadow offset", "Records", "Detail")
		for _, c := range e.Checks {
			row(&b, c.Group, c.ShadowGroup, c.RemoteTopic, c.Partition, c.SourceOffset, c.ShadowOffset, c.Result, c.Detail)
		}
	}
	for i, n := range e.Notes {
		if i == 0 {
			fmt.Fprintf(&b, "\n## Notes\n\n")
		}
		fmt.Fprintf(&b, "- %s\n", cell(n))
	}
	_, err := w.Write(b.Bytes())
	return err
}

// WriteEvidence writes e to path (through a temporary file in the same directory, renamed).
func WriteEvidence(path string, e *Evidence) error {
	var b bytes.Buffer
	if err := RenderEvidence(&b, e); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".kmm-report-*")
	if err != nil {
		return kerr.Wrap(kerr.Usage, fmt.Errorf("--report %s: %w", path, err))
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b.Bytes()); err != nil {
		tmp.Close()
		return fmt.Errorf("--report %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("--report %s: %w", path, err)
	}
	return nil
}

// NewEvidence starts the evidence report of a run of command (mode) on flow f: who, when, how
// it was confirmed, the plan, the run's report and the error it ended with.
func NewEvidence(command, mode string, f *flow.Flow, start, now time.Time, by string, p *plan.Plan, opts cmdutil.ApplyOptions, applied *cmdutil.Applied, err error) *Evidence {
	e := &Evidence{Command: command, Mode: mode, Flow: f.Name(), Source: f.Source, Target: f.Target, By: by, KMM: buildinfo.Version,
		Started: start, Generated: now, Plan: p, RTOMillis: -1}
	switch {
	case opts.DryRun:
		e.Confirmation = "--dry-run: nothing was applied"
	case opts.Yes:
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

// WriteReport writes the evidence report to path (--report; nothing when ""), says so on errOut,
// and returns the command's error err, or the report's own when the command succeeded.
func WriteReport(path string, errOut io.Writer, e *Evidence, now time.Time, err error) error {
	if path == "" {
		return err
	}
	e.Generated = now
	if werr := WriteEvidence(path, e); werr != nil {
		if err == nil {
			return werr
		}
		fmt.Fprintf(errOut, "kmm: %v\n", werr)
		return err
	}
	fmt.Fprintf(errOut, "kmm: evidence report written to %s\n", path)
	return err
}

// CheckReportDir refuses (exit 2, before anything is read) a --report file whose directory does
// not exist.
func CheckReportDir(path string) error {
	if path == "" {
		return nil
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return kerr.WithHint(kerr.New(kerr.Usage, "--report %s: the directory %s does not exist", path, filepath.Dir(path)), "create it, or name a file in an existing directory")
	}
	return nil
}
