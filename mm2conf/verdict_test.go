package mm2conf

import (
	"strings"
	"testing"
)

// Each verdict names the rule that decided, with the file:line it was written at.
func TestTopicAndGroupVerdicts(t *testing.T) {
	cfg, err := load(t, map[string]string{"mm2.properties": `clusters = A, B
A.bootstrap.servers = a:9092
B.bootstrap.servers = b:9092
A->B.enabled = true
A->B.topics = orders.*, B\\.orders.*, heartbeats
topics.exclude = .*-scratch
A->B.groups = app-.*
emit.checkpoints.enabled = true
B->A.enabled = false
`}, LoadOptions{ConfigFile: "mm2.properties"})
	if err != nil {
		t.Fatal(err)
	}
	ab, ba := cfg.Flow("A->B"), cfg.Flow("B->A")
	for _, c := range []struct {
		f                    *FlowConfig
		topic                string
		replicated           bool
		code, target, reason string
	}{
		{ab, "orders-1", true, VerdictIncluded, "A.orders-1", "matches 'orders.*' in topics: topics = orders.*, B\\.orders.*, heartbeats (mm2.properties:5, A->B.topics), and no entry of topics.exclude: topics.exclude = .*-scratch (mm2.properties:6)"},
		{ab, "orders-scratch", false, VerdictExcluded, "", "matches '.*-scratch' in topics.exclude: topics.exclude = .*-scratch (mm2.properties:6)"},
		{ab, "payments", false, VerdictNotIncluded, "", "matches no entry of topics: topics = orders.*, B\\.orders.*, heartbeats (mm2.properties:5, A->B.topics)"},
		{ab, "B.orders-1", false, VerdictCycle, "", `a cycle: the name says it came from "B", the flow's target, so replicating it back would loop`},
		{ab, "C.heartbeats", true, VerdictHeartbeats, "A.C.heartbeats", "a heartbeats topic, replicated whatever the topic filter says: heartbeats.replication.enabled = true (default)"},
		{ab, "orders.checkpoints.internal", false, VerdictInternal, "", "an internal topic (an MM2 checkpoints topic): MM2 never replicates it"},
		{ab, "heartbeats", true, VerdictIncluded, "A.heartbeats", "matches 'heartbeats' in topics: topics = orders.*, B\\.orders.*, heartbeats (mm2.properties:5, A->B.topics), and no entry of topics.exclude: topics.exclude = .*-scratch (mm2.properties:6)"},
		{ba, "orders-1", false, VerdictFlowDisabled, "", "the flow does not replicate: B->A.enabled is not true (MM2 runs it only to emit heartbeats)"},
	} {
		v := c.f.Topic(c.topic)
		if v.Replicated != c.replicated || v.Code != c.code || v.Replicated && v.TargetTopic != c.target || v.Reason != c.reason {
			t.Errorf("%s %s: got %v %s %q %q\nwant %v %s %q %q", c.f.Name(), c.topic, v.Replicated, v.Code, v.TargetTopic, v.Reason, c.replicated, c.code, c.target, c.reason)
		}
	}
	g := ab.Group("app-billing")
	if !g.Checkpointed || g.Synced || g.TargetGroup != "app-billing" || g.Rule == nil || g.Rule.Origin.Pos.Line != 7 ||
		!strings.Contains(g.Reason, "checkpointed only, not synced to the target group: sync.group.offsets.enabled = false (default)") {
		t.Errorf("app-billing: %+v", g)
	}
	if g := ab.Group("console-consumer-7"); g.Checkpointed || g.Code != VerdictNotIncluded {
		t.Errorf("console-consumer-7: %+v", g)
	}
	vs, err := cfg.NameVerdicts(NamesOptions{Topics: []string{"orders-1"}, Groups: []string{"app-x"}})
	if err != nil || len(vs) != 2 || vs[0].Flow != "A->B" || vs[0].TargetTopic != "A.orders-1" || vs[1].TargetGroup != "app-x" || vs[1].Rule.Line != 7 {
		t.Errorf("NameVerdicts (enabled flows only): %+v %v", vs, err)
	}
	if _, err := cfg.NameVerdicts(NamesOptions{Flow: "A->C"}); err == nil {
		t.Error("an unknown --flow is accepted")
	}
}
