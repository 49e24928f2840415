package configcmd

import (
	"strings"
	"testing"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/iostreams"
)

func TestRenderVerdicts(t *testing.T) {
	io, _, out, _ := iostreams.Test()
	yes, no := true, false
	err := renderVerdicts(io, []mm2conf.NameVerdict{
		{Topic: "orders", Flow: "A->B", Replicated: true, TargetTopic: "A.orders", Reason: "matches 'orders' in topics"},
		{Topic: "B.orders", Flow: "A->B", Reason: "a cycle"},
		{Group: "app", Flow: "A->B", Replicated: true, Synced: &yes, TargetGroup: "app", Reason: "matches '.*' in groups"},
		{Group: "etl", Flow: "A->B", Replicated: true, Synced: &no, TargetGroup: "etl", Reason: "checkpointed only"},
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := [][]string{
		{"NAME", "KIND", "FLOW", "DOES", "ON TARGET", "WHY"},
		{"orders", "topic", "A->B", "replicated", "A.orders", "matches 'orders' in topics"},
		{"B.orders", "topic", "A->B", "no", "-", "a cycle"},
		{"app", "group", "A->B", "checkpointed, synced", "app"},
		{"etl", "group", "A->B", "checkpointed", "etl", "checkpointed only"},
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines:\n%s", len(lines), out)
	}
	for i, w := range want {
		for _, cell := range w {
			if !strings.Contains(lines[i], cell) {
				t.Errorf("line %d %q lacks %q", i, lines[i], cell)
			}
		}
	}
}
