package configcmd

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/output"
)

// RenderJSON writes a report (mm2conf.CheckReport or ExplainReport) as indented JSON.
func RenderJSON(w io.Writer, report any) error { return output.WriteJSON(w, report) }

// renderTable renders rows as an aligned table.
func renderTable(w io.Writer, header []string, rows [][]string) error {
	return output.Table(w, header, rows)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func fmtDur(ms int64) string {
	if ms < 0 {
		return "off" // MM2's scheduler runs no task with a negative interval
	}
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d%time.Hour == 0 && d >= time.Hour:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0 && d >= time.Minute:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d%time.Second == 0 && d >= time.Second:
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return fmt.Sprintf("%dms", ms)
}

// printable shows whitespace in short values.
func printable(s string) string {
	if s == "" || strings.TrimSpace(s) != s || strings.ContainsAny(s, "\t\n\r") {
		return fmt.Sprintf("%q", s)
	}
	return s
}

func listCell(l []string) string {
	if len(l) == 0 {
		return "(none)"
	}
	return strings.Join(l, ", ")
}

// RenderCheckText writes the flows table of `kmm config check`, then the diagnostics.
func RenderCheckText(w io.Writer, r *mm2conf.CheckReport) error {
	if len(r.Flows) > 0 {
		var rows [][]string
		for _, f := range r.Flows {
			enabled := yesNo(f.Enabled)
			if !f.Enabled && f.Herder == "heartbeats" {
				enabled = "no (heartbeats only)"
			}
			var feats []string
			add := func(on bool, name string) {
				if on {
					feats = append(feats, name)
				}
			}
			add(f.Features.Data, "data")
			add(f.Features.Checkpoints, "checkpoints")
			add(f.Features.GroupOffsetSync, "group-offset-sync")
			add(f.Features.Heartbeats, "heartbeats")
			add(f.Features.TopicConfigSync, "config-sync")
			add(f.Features.ACLSync, "acl-sync")
			if f.Features.OffsetSyncs {
				feats = append(feats, "offset-syncs@"+f.Features.OffsetSyncsLocation)
			}
			if f.Features.ExactlyOnce && f.Enabled {
				feats = append(feats, "exactly-once")
			}
			iv, mm2 := f.Intervals, f.Intervals
			if f.MM2Intervals != nil {
				mm2 = *f.MM2Intervals
			}
			// each interval as `kmm replicate` uses it, MM2's beside it where it differs
			dur := func(name string, kmm, mm2 int64) string {
				s := name + " " + fmtDur(kmm)
				if kmm != mm2 {
					s += " (MM2 " + fmtDur(mm2) + ")"
				}
				return s
			}
			var ints []string
			if f.Enabled {
				ints = append(ints, dur("topics", iv.RefreshTopicsMs, mm2.RefreshTopicsMs), dur("groups", iv.RefreshGroupsMs, mm2.RefreshGroupsMs))
				if f.Features.TopicConfigSync {
					ints = append(ints, dur("configs", iv.SyncTopicConfigsMs, mm2.SyncTopicConfigsMs))
				}
				if f.Features.ACLSync {
					ints = append(ints, dur("acls", iv.SyncTopicACLsMs, mm2.SyncTopicACLsMs))
				}
				if f.Features.Checkpoints {
					ints = append(ints, dur("checkpoints", iv.EmitCheckpointsMs, mm2.EmitCheckpointsMs))
				}
				if f.Features.GroupOffsetSync {
					ints = append(ints, dur("group-sync", iv.SyncGroupOffsetsMs, mm2.SyncGroupOffsetsMs))
				}
			}
			if f.Features.Heartbeats {
				ints = append(ints, dur("heartbeats", iv.EmitHeartbeatsMs, mm2.EmitHeartbeatsMs))
			}
			policy := f.ReplicationPolicy + " (" + printable(f.Separator) + ")"
			rows = append(rows, []string{f.Name, enabled, listCell(f.Topics), listCell(f.TopicsExclude), listCell(f.Groups), listCell(f.GroupsExclude),
				policy, strings.Join(feats, ", "), strings.Join(ints, ", ")})
		}
		if err := renderTable(w, []string{"FLOW", "ENABLED", "TOPICS", "TOPICS EXCLUDE", "GROUPS", "GROUPS EXCLUDE", "POLICY (SEPARATOR)", "FEATURES", "INTERVALS"}, rows); err != nil {
			return err
		}
	}
	return renderDiagnostics(w, r.Diagnostics, r.Errors, r.Warnings)
}

func renderDiagnostics(w io.Writer, ds []mm2conf.DiagnosticJSON, errs, warns int) error {
	var b strings.Builder
	if len(ds) > 0 {
		b.WriteByte('\n')
	}
	for _, d := range ds {
		if d.Position != "" {
			b.WriteString(d.Position)
			b.WriteString(": ")
		}
		fmt.Fprintf(&b, "%s: %s\n", d.Severity, d.Message)
		if d.Hint != "" {
			fmt.Fprintf(&b, "  hint: %s\n", d.Hint)
		}
	}
	fmt.Fprintf(&b, "\n%d error(s), %d warning(s)\n", errs, warns)
	_, err := io.WriteString(w, b.String())
	return err
}

// RenderExplainText writes one table per flow and section of `kmm config explain`, then the
// diagnostics: everything, one line per setting (--wide).
func RenderExplainText(w io.Writer, r *mm2conf.ExplainReport) error {
	return RenderExplainTextWith(w, r, ExplainText{Wide: true})
}

// ExplainText tunes the text of `kmm config explain`.
type ExplainText struct {
	// Wide shows everything, one line per setting (nothing wrapped). Otherwise the output fits
	// Width columns: a flow that only emits heartbeats (MM2 runs one for each pair of clusters
	// without an enabled flow) is one line, values longer than MaxValue are elided (unless Full)
	// and long cells wrap within their column.
	Wide bool
	// Full shows every flow in full and long values whole, still fitted to Width (a flow named
	// with --flow).
	Full bool
	// Width is the terminal's width (0: not wrapped).
	Width int
}

func (t ExplainText) width() int {
	if t.Wide {
		return 0
	}
	return t.Width
}

// MaxValue is the longest value explain shows without --wide.
const MaxValue = 60

func heartbeatsLine(f mm2conf.ExplainFlow) string {
	every := ""
	n := 0
	for _, s := range f.Sections {
		n += len(s.Entries)
		for _, e := range s.Entries {
			if s.Name == "connector" && e.Key == "emit.heartbeats.interval.seconds" {
				every = " every " + e.Value + " s"
			}
		}
	}
	return fmt.Sprintf("== flow %s (heartbeats only, into %s%s; %d settings, --wide shows them)\n", f.Name, f.Target, every, n)
}

func elide(v string, wide bool) string {
	r := []rune(v)
	if wide || len(r) <= MaxValue {
		return v
	}
	// The note on a line of its own: wrapped in a narrow column, it stays in one piece.
	return fmt.Sprintf("%s...\n(%d chars, --wide shows all)", string(r[:MaxValue-25]), len(r))
}

// RenderExplainTextWith writes `kmm config explain`'s text as t says.
func RenderExplainTextWith(w io.Writer, r *mm2conf.ExplainReport, t ExplainText) error {
	for i, f := range r.Flows {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		state := "enabled"
		if !f.Enabled {
			state = "disabled"
			if f.Herder == "heartbeats" {
				state = "heartbeats only"
			}
		}
		if !t.Wide && !t.Full && !f.Enabled && f.Herder == "heartbeats" {
			if _, err := io.WriteString(w, output.Wrap(strings.TrimSuffix(heartbeatsLine(f), "\n"), t.width(), "   ")+"\n"); err != nil {
				return err
			}
			continue
		}
		if _, err := fmt.Fprintf(w, "== flow %s (%s)\n", f.Name, state); err != nil {
			return err
		}
		for _, s := range f.Sections {
			if len(s.Entries) == 0 {
				continue
			}
			if _, err := fmt.Fprintf(w, "\n-- %s\n", s.Name); err != nil {
				return err
			}
			var rows [][]string
			for _, e := range s.Entries {
				origin := e.Origin.Rule
				if e.Origin.Position != "" || e.Origin.Key != "" {
					origin = strings.TrimSpace(e.Origin.Position + " " + e.Origin.Key + " (" + e.Origin.Rule + ")")
				}
				rows = append(rows, []string{e.Key, elide(printable(e.Value), t.Wide || t.Full), origin})
			}
			if err := output.TableWidth(w, []string{"KEY", "VALUE", "ORIGIN"}, rows, t.width()); err != nil {
				return err
			}
		}
	}
	errs, warns := 0, 0
	for _, d := range r.Diagnostics {
		if d.Severity == "error" {
			errs++
		} else {
			warns++
		}
	}
	// Diagnostics keep the compiler form, one "file:line: severity: message" line each (editors
	// and grep read them), as config check prints them.
	return renderDiagnostics(w, r.Diagnostics, errs, warns)
}
