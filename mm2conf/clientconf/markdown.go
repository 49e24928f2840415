package clientconf

import (
	"fmt"
	"regexp"
	"strings"
)

var propName = regexp.MustCompile(`[a-z][a-z0-9_]*(\.[a-z0-9_*]+)+`)

// MarkdownTable renders the translation table and the Java defaults kmm sets, for
// docs/client-settings.md and `config explain`.
func MarkdownTable() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d Java client settings. Clients: P producer, C consumer, A admin.\n\n", len(table))
	b.WriteString("| Java setting | Clients | librdkafka | What kmm does |\n")
	b.WriteString("|---|---|---|---|\n")
	for _, s := range table {
		rd := "—"
		if s.Rdkafka != "" {
			rd = propName.ReplaceAllString(s.Rdkafka, "`$0`")
			if !strings.ContainsAny(s.Rdkafka, " ,") {
				rd = "`" + s.Rdkafka + "`"
			}
		}
		what := s.Note
		switch s.Action {
		case ActionWarn:
			what = "Warning: " + s.Note + " (quiet when set to the Java default " + mdDefault(s) + ")."
		case ActionRefuse:
			what = "**Error**: " + s.Note + " (quiet when set to the Java default " + mdDefault(s) + ")."
		case ActionDrop:
			what = "Ignored: " + s.Note + "."
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", s.Java, strings.ToUpper(s.Roles), rd, mdEscape(what))
	}
	b.WriteString("\nJava defaults kmm sets when the setting is absent, because librdkafka's default differs:\n\n")
	b.WriteString("| Client | librdkafka | Value | Why |\n|---|---|---|---|\n")
	for _, d := range javaDefaults {
		fmt.Fprintf(&b, "| %s | `%s` | `%s` | %s |\n", d.Role, d.Rdkafka, d.Value, mdEscape(d.Why))
	}
	return b.String()
}

func mdDefault(s Setting) string {
	if s.Default == "" {
		return "(empty)"
	}
	return "`" + s.Default + "`"
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
