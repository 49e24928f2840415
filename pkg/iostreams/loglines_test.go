package iostreams

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// Every line written to a LogLines stderr comes out as one JSON record with the level its
// prefix says; records of the logger pass unchanged; a partial line waits for Flush.
func TestLogLinesEveryLineJSON(t *testing.T) {
	var raw bytes.Buffer
	ll := NewLogLines(&raw, &slog.HandlerOptions{Level: slog.LevelDebug})
	fmt.Fprintf(ll, "kmm: flow A->B (x -> y): records; 1 pipeline(s)\nkmm: error: boom\n")
	fmt.Fprint(ll, "kmm: warning: half")
	ll.Logger().Debug("direct", "k", 1)
	fmt.Fprint(ll, " a line\n\n"+EraseLine+"{\"already\":\"json\"}\n")
	fmt.Fprint(ll, "mm2.properties:5: warning: tasks.max = 99\n  hint: lower it\n")
	fmt.Fprint(ll, "apply 2 step(s)? [y/N] ")
	fmt.Fprint(ll, "no end")
	ll.Flush()
	var got []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(raw.String(), "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q is not JSON: %v\n%s", line, err, raw.String())
		}
		got = append(got, m)
	}
	want := []struct{ level, msg string }{
		{"INFO", "flow A->B (x -> y): records; 1 pipeline(s)"}, {"ERROR", "boom"}, {"DEBUG", "direct"},
		{"WARN", "half a line"}, {"", ""}, {"WARN", "mm2.properties:5: warning: tasks.max = 99"}, {"INFO", "hint: lower it"}, {"INFO", "apply 2 step(s)? [y/N]"}, {"INFO", "no end"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d:\n%s", len(got), len(want), raw.String())
	}
	for i, w := range want {
		if w.level == "" {
			if got[i]["already"] != "json" {
				t.Errorf("record %d: %v, want the JSON line unchanged", i, got[i])
			}
			continue
		}
		if got[i]["level"] != w.level || got[i]["msg"] != w.msg {
			t.Errorf("record %d: %v, want level %s msg %q", i, got[i], w.level, w.msg)
		}
	}
}
