// Package output renders kmm's results: plain aligned tables (tablewriter) and JSON documents
// with HTML escaping off. It writes only to the writer it is given and knows nothing of Kafka.
package output

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// SchemaVersion of kmm's JSON envelopes.
const SchemaVersion = 1

// Envelope is the JSON document of a read command.
type Envelope struct {
	SchemaVersion int       `json:"schema_version"`
	Kind          string    `json:"kind"`
	GeneratedAt   time.Time `json:"generated_at"`
	Items         any       `json:"items"`
}

// WriteJSON writes v as indented JSON without HTML escaping.
func WriteJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

func newTable(w io.Writer) *tablewriter.Table {
	return tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenRows: tw.Off, BetweenColumns: tw.Off},
				Lines:      tw.Lines{ShowHeaderLine: tw.Off},
			},
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithTrimSpace(tw.Off),
		tablewriter.WithPadding(tw.Padding{Left: "", Right: "  ", Overwrite: true}),
	)
}

// Table renders rows under header as aligned columns; empty cells show "-"; trailing blanks
// are stripped from every line.
func Table(w io.Writer, header []string, rows [][]string) error {
	var buf bytes.Buffer
	t := newTable(&buf)
	h := make([]any, len(header))
	for i, s := range header {
		h[i] = s
	}
	t.Header(h...)
	for _, r := range rows {
		cells := make([]any, len(r))
		for i, s := range r {
			if s == "" {
				s = "-"
			}
			cells[i] = s
		}
		if err := t.Append(cells...); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	var out strings.Builder
	for _, line := range strings.Split(strings.TrimRight(buf.String(), "\n"), "\n") {
		out.WriteString(strings.TrimRight(line, " "))
		out.WriteByte('\n')
	}
	_, err := io.WriteString(w, out.String())
	return err
}

// ErrorDoc is what a command run with -o json prints on stdout when it fails without having
// printed its own document (kind "error"): one line of JSON, so that it also ends an NDJSON
// stream (replicate's events, lag --watch). Hint is null when there is none. Class is the kind
// of failure behind ExitCode: "usage" (2), "check_failed" (3), "unreachable" (4),
// "incomplete" (5), "interrupted" (130), "failure" or "not_implemented" (1).
type ErrorDoc struct {
	SchemaVersion int       `json:"schema_version"`
	Kind          string    `json:"kind"`
	GeneratedAt   time.Time `json:"generated_at"`
	Command       string    `json:"command"`
	ExitCode      int       `json:"exit_code"`
	Class         string    `json:"class"`
	Cause         string    `json:"cause"`
	Hint          *string   `json:"hint"`
}

// WriteLine writes v as one line of JSON without HTML escaping (an NDJSON record).
func WriteLine(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}
