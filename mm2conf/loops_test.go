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
		{"identity, default topics", both + identity, []string{"A->B and B->A", "IdentityReplicationPolicy", "topics = .* (default)", "MM2 cannot prevent it"}},
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

// A negative interval turns its feature off, as MM2's Scheduler and connectors do, and check
// says so with the line.
func TestNegativeIntervalsDisableAsInMM2(t *testing.T) {
	cfg, _ := load(t, map[string]string{"mm2.properties": base + "A->B.enabled = true\n" +
		"emit.checkpoints.interval.seconds = -1\nrefresh.topics.interval.seconds = -5\nsync.topic.configs.interval.seconds = -1\nemit.heartbeats.interval.seconds = -1\nrefresh.groups.interval.seconds = -1\n"}, LoadOptions{})
	f := cfg.Flow("A->B")
	if ft := f.Features; ft.Checkpoints || ft.GroupOffsetSync || ft.RefreshTopics || ft.TopicConfigSync || ft.Heartbeats || ft.RefreshGroups || !ft.Data || !ft.ACLSync {
		t.Errorf("features %+v: want checkpoints, group sync, topic refresh, config sync, heartbeats, group refresh off; data and ACL sync on", ft)
	}
	got := diagStrings(cfg)
	for _, w := range []string{
		"mm2.properties:5: warning: emit.checkpoints.interval.seconds = -1: MM2 treats a negative interval as off: no checkpoints are emitted",
		"mm2.properties:6: warning: refresh.topics.interval.seconds = -5: MM2 treats a negative interval as off: the topics found at start are replicated, new topics and partitions are not picked up; kmm does the same",
		"mm2.properties:7: warning: sync.topic.configs.interval.seconds = -1",
		"mm2.properties:8: warning: emit.heartbeats.interval.seconds = -1",
		"mm2.properties:9: warning: refresh.groups.interval.seconds = -1: MM2 treats a negative interval as off: only the groups found at start are checkpointed, new groups are not picked up; kmm differs",
	} {
		if strings.Count(got, w) != 1 {
			t.Errorf("diagnostics lack %q (or repeat it):\n%s", w, got)
		}
	}
}
