package mm2conf

import (
	"strings"
	"testing"
)

// A->B and B->A with IdentityReplicationPolicy (or an empty separator) over overlapping topics
// loop forever: check names the loop, both flows and both filter lines.
func TestReplicationLoopWarning(t *testing.T) {
	const both = base + "A->B.enabled = true\nB->A.enabled = true\n"
	const identity = "replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy\n"
	for _, c := range []struct {
		name, file string
		want       []string // substrings of the warning; nil: no loop warning
	}{
		{"identity, default topics", both + identity, []string{"A->B and B->A", "IdentityReplicationPolicy", "topics = .* (default)", "Neither MM2 nor kmm can prevent it"}},
		{"identity, overlapping lists", both + identity + "A->B.topics = orders.*\nB->A.topics = orders-eu, payments\n",
			[]string{"mm2.properties:7 A->B.topics = orders.*", "mm2.properties:8 B->A.topics = orders-eu, payments", `"orders-eu"`}},
		{"empty separator", both + "replication.policy.separator =\n", []string{"A->B and B->A", "empty replication.policy.separator"}},
		{"identity, disjoint", both + identity + "A->B.topics = orders\nB->A.topics = payments\n", nil},
		{"default policy", both, nil},
		{"one way only", base + "A->B.enabled = true\n" + identity, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, _ := load(t, map[string]string{"mm2.properties": c.file}, LoadOptions{})
			var got string
			for _, d := range cfg.Diagnostics {
				if d.Code == "replication-loop" {
					got = d.String()
				}
			}
			if c.want == nil {
				if got != "" {
					t.Fatalf("unexpected loop warning: %s", got)
				}
				return
			}
			if got == "" {
				t.Fatalf("no loop warning:\n%s", diagStrings(cfg))
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("warning lacks %q:\n%s", w, got)
				}
			}
		})
	}
}

// tasks.max beyond MaxPipelines: check says what kmm runs and why, and reports the cap.
func TestTasksMaxCappedWarning(t *testing.T) {
	cfg, _ := load(t, map[string]string{"mm2.properties": base + "A->B.enabled = true\ntasks.max = 2147483647\n"}, LoadOptions{})
	got := diagStrings(cfg)
	for _, w := range []string{"mm2.properties:5: warning: tasks.max = 2147483647: kmm runs at most 64 pipelines per flow", "MM2 caps its task count at run time at the number of partitions"} {
		if !strings.Contains(got, w) {
			t.Errorf("diagnostics lack %q:\n%s", w, got)
		}
	}
	for _, f := range NewCheckReport(cfg, ReportOptions{}).Flows {
		if f.Name == "A->B" && (f.TasksMax != 2147483647 || f.Pipelines != MaxPipelines) {
			t.Errorf("report: tasks_max %d, pipelines %d", f.TasksMax, f.Pipelines)
		}
	}
	cfg, _ = load(t, map[string]string{"mm2.properties": base + "A->B.enabled = true\ntasks.max = 64\n"}, LoadOptions{})
	if strings.Contains(diagStrings(cfg), "tasks.max") {
		t.Errorf("warning at 64:\n%s", diagStrings(cfg))
	}
}
