package policy

import (
	"strings"
	"testing"
)

type opt struct {
	s  string
	ok bool
}

func some(s string) opt { return opt{s, true} }

var null = opt{}

func TestDefaultTopicSourceJavaSplit(t *testing.T) {
	dot := NewDefault("", false, true) // separator key absent: "."
	tests := []struct {
		p        *Default
		topic    string
		source   opt
		upstream opt
		original string
	}{
		{dot, "orders", null, null, "orders"},
		{dot, "A.orders", some("A"), some("orders"), "orders"},
		{dot, "B.A.orders", some("B"), some("A.orders"), "orders"},
		// Java String.split: trailing empty strings are dropped, a leading separator gives "".
		{dot, "foo.", null, null, "foo."},
		{dot, ".foo", some(""), some("foo"), "foo"},
		{dot, "a..b", some("a"), some(".b"), "b"},
		{dot, ".", null, null, "."},
		{dot, "..", null, null, ".."},
		{dot, "A..", null, null, "A.."},
		{dot, "A.B.", some("A"), some("B."), "B."},
		{dot, "", null, null, ""},
		{NewDefault("_", true, true), "A_B_orders", some("A"), some("B_orders"), "orders"},
		{NewDefault("_", true, true), "A.orders", null, null, "A.orders"},
		{NewDefault("--", true, true), "A---orders", some("A"), some("-orders"), "-orders"},
		{NewDefault("--", true, true), "A----", null, null, "A----"},
		{NewDefault("aa", true, true), "aaa", some(""), some("a"), "a"},
		{NewDefault("aa", true, true), "aaaa", null, null, "aaaa"},
		{NewDefault("|", true, true), "A|orders", some("A"), some("orders"), "orders"}, // no regex meaning
		{NewDefault("", true, true), "ab", some("a"), some("b"), "b"},                  // empty separator: per character
		{NewDefault("", true, true), "ünï", some("ü"), some("nï"), "ï"},
		{NewDefault("", true, true), "a", null, null, "a"},
	}
	for _, tc := range tests {
		if s, ok := tc.p.TopicSource(tc.topic); (opt{s, ok}) != tc.source {
			t.Errorf("sep %q: TopicSource(%q) = %q,%v; want %+v", tc.p.Separator(), tc.topic, s, ok, tc.source)
		}
		if s, ok := tc.p.UpstreamTopic(tc.topic); (opt{s, ok}) != tc.upstream {
			t.Errorf("sep %q: UpstreamTopic(%q) = %q,%v; want %+v", tc.p.Separator(), tc.topic, s, ok, tc.upstream)
		}
		if got := tc.p.OriginalTopic(tc.topic); got != tc.original {
			t.Errorf("sep %q: OriginalTopic(%q) = %q, want %q", tc.p.Separator(), tc.topic, got, tc.original)
		}
	}
}

func TestSeparatorSettings(t *testing.T) {
	tests := []struct {
		name                string
		p                   *Default
		sep, isep           string
		checkpoints, syncs  string
		remote              string
		isCheckpoints, isMM string
	}{
		{"absent", NewDefault("_", false, false), ".", ".", "A.checkpoints.internal", "mm2-offset-syncs.B.internal", "A.orders",
			"A.checkpoints.internal", "mm2-offset-syncs.B.internal"},
		{"custom, internal on", NewDefault("_", true, true), "_", "_", "A_checkpoints_internal", "mm2-offset-syncs_B_internal", "A_orders",
			"A_checkpoints_internal", "mm2-offset-syncs_B_internal"},
		{"custom, internal off", NewDefault("_", true, false), "_", ".", "A.checkpoints.internal", "mm2-offset-syncs.B.internal", "A_orders",
			"A.checkpoints.internal", "mm2-offset-syncs.B.internal"},
		{"double dash", NewDefault("--", true, true), "--", "--", "A--checkpoints--internal", "mm2-offset-syncs--B--internal", "A--orders",
			"A--checkpoints--internal", "mm2-offset-syncs--B--internal"},
	}
	for _, tc := range tests {
		p := tc.p
		if p.Separator() != tc.sep || p.InternalSeparator() != tc.isep {
			t.Errorf("%s: separators %q %q, want %q %q", tc.name, p.Separator(), p.InternalSeparator(), tc.sep, tc.isep)
		}
		if got := p.CheckpointsTopic("A"); got != tc.checkpoints {
			t.Errorf("%s: CheckpointsTopic = %q, want %q", tc.name, got, tc.checkpoints)
		}
		if got := p.OffsetSyncsTopic("B"); got != tc.syncs {
			t.Errorf("%s: OffsetSyncsTopic = %q, want %q", tc.name, got, tc.syncs)
		}
		if got := p.FormatRemoteTopic("A", "orders"); got != tc.remote {
			t.Errorf("%s: FormatRemoteTopic = %q, want %q", tc.name, got, tc.remote)
		}
		if got := p.HeartbeatsTopic(); got != "heartbeats" {
			t.Errorf("%s: HeartbeatsTopic = %q", tc.name, got)
		}
		if !p.IsCheckpointsTopic(tc.isCheckpoints) || !p.IsMM2InternalTopic(tc.isCheckpoints) || !p.IsInternalTopic(tc.isCheckpoints) {
			t.Errorf("%s: %q not recognised as a checkpoints topic", tc.name, tc.isCheckpoints)
		}
		if p.IsCheckpointsTopic(tc.isMM) || !p.IsMM2InternalTopic(tc.isMM) || !p.IsInternalTopic(tc.isMM) {
			t.Errorf("%s: %q not recognised as an MM2 internal topic", tc.name, tc.isMM)
		}
	}
}

func TestInternalTopics(t *testing.T) {
	p := NewDefault("", false, true)
	tests := []struct {
		topic          string
		mm2, internal  bool
		heartbeatsLike bool
	}{
		{"__consumer_offsets", false, true, false},
		{".hidden", false, true, false},
		{"A.checkpoints.internal", true, true, false},
		{"mm2-offset-syncs.B.internal", true, true, false},
		{"mm2-offsets.A.internal", true, true, false},
		{"mm2-configs.A.internal", true, true, false},
		// Kafka 4.0+ (KAFKA-17200): plain ".internal"/"-internal" names are no longer internal.
		{"x.internal", false, false, false},
		{"connect-offsets-internal", false, false, false},
		{"orders", false, false, false},
		{"heartbeats", false, false, true},
		{"A.heartbeats", false, false, true},
		{"B.A.heartbeats", false, false, true},
		{"A.heartbeats.x", false, false, false},
		{"xheartbeats", false, false, false},
	}
	for _, tc := range tests {
		if got := p.IsMM2InternalTopic(tc.topic); got != tc.mm2 {
			t.Errorf("IsMM2InternalTopic(%q) = %v", tc.topic, got)
		}
		if got := p.IsInternalTopic(tc.topic); got != tc.internal {
			t.Errorf("IsInternalTopic(%q) = %v", tc.topic, got)
		}
		if got := p.IsHeartbeatsTopic(tc.topic); got != tc.heartbeatsLike {
			t.Errorf("IsHeartbeatsTopic(%q) = %v", tc.topic, got)
		}
	}
}

func TestIdentity(t *testing.T) {
	p := NewIdentity("", false, true, "A")
	tests := []struct {
		topic    string
		remote   string
		source   opt
		upstream opt
		original string
		isHB     bool
	}{
		{"orders", "orders", some("A"), some("orders"), "orders", false},
		{"B.orders", "B.orders", some("A"), some("B.orders"), "B.orders", false},
		{"heartbeats", "A.heartbeats", null, null, "heartbeats", true},
		{"A.heartbeats", "A.A.heartbeats", some("A"), some("heartbeats"), "heartbeats", true},
		{"C.B.heartbeats", "A.C.B.heartbeats", some("C"), some("B.heartbeats"), "heartbeats", true},
		{"xheartbeats", "A.xheartbeats", null, null, "xheartbeats", false}, // suffix test only
	}
	for _, tc := range tests {
		if got := p.FormatRemoteTopic("A", tc.topic); got != tc.remote {
			t.Errorf("FormatRemoteTopic(A, %q) = %q, want %q", tc.topic, got, tc.remote)
		}
		if s, ok := p.TopicSource(tc.topic); (opt{s, ok}) != tc.source {
			t.Errorf("TopicSource(%q) = %q,%v", tc.topic, s, ok)
		}
		if s, ok := p.UpstreamTopic(tc.topic); (opt{s, ok}) != tc.upstream {
			t.Errorf("UpstreamTopic(%q) = %q,%v", tc.topic, s, ok)
		}
		if got := p.OriginalTopic(tc.topic); got != tc.original {
			t.Errorf("OriginalTopic(%q) = %q", tc.topic, got)
		}
		if got := p.IsHeartbeatsTopic(tc.topic); got != tc.isHB {
			t.Errorf("IsHeartbeatsTopic(%q) = %v", tc.topic, got)
		}
	}
	if s, ok := NewIdentity("", false, true, "").TopicSource("orders"); ok {
		t.Errorf("unconfigured alias: TopicSource = %q, true", s)
	}
	if got := p.CheckpointsTopic("A"); got != "A.checkpoints.internal" {
		t.Errorf("CheckpointsTopic = %q", got)
	}
	q := NewIdentity("_", true, false, "A")
	if q.Separator() != "_" || q.InternalSeparator() != "." || q.OffsetSyncsTopic("B") != "mm2-offset-syncs.B.internal" {
		t.Errorf("identity separators: %q %q %q", q.Separator(), q.InternalSeparator(), q.OffsetSyncsTopic("B"))
	}
	if got := q.FormatRemoteTopic("A", "B_heartbeats"); got != "A_B_heartbeats" {
		t.Errorf("FormatRemoteTopic = %q", got)
	}
}

func TestIsCycle(t *testing.T) {
	d := NewDefault("", false, true)
	id := NewIdentity("", false, true, "B")
	tests := []struct {
		p      Policy
		topic  string
		target string
		want   bool
	}{
		// flows A->B and B->A; seen from B replicating to A
		{d, "A.orders", "A", true},
		{d, "C.A.orders", "A", true},
		{d, "C.orders", "A", false},
		{d, "orders", "A", false},
		{d, "A.heartbeats", "A", true},
		{d, "C.heartbeats", "A", false},
		{d, "heartbeats", "A", false},
		{d, ".A.orders", "A", true}, // source "" first, then A
		// Identity: no detection for normal topics; the configured alias is the source
		{id, "orders", "A", false},
		{id, "orders", "B", true},
		{id, "A.heartbeats", "A", true},
		{id, "C.heartbeats", "A", false},
	}
	for _, tc := range tests {
		if got := IsCycle(tc.p, tc.topic, tc.target); got != tc.want {
			t.Errorf("IsCycle(%T, %q, %q) = %v, want %v", tc.p, tc.topic, tc.target, got, tc.want)
		}
	}
}

func TestRenameCheckpointTopic(t *testing.T) {
	d := NewDefault("", false, true)
	tests := []struct {
		p              Policy
		source, target string
		topic, want    string
	}{
		{d, "A", "B", "orders", "A.orders"},
		{d, "A", "B", "B.orders", "orders"},     // came from the target: original name
		{d, "A", "B", "B.C.orders", "orders"},   // original, not upstream
		{d, "A", "B", "C.orders", "A.C.orders"}, // came from elsewhere
		{NewDefault("_", true, true), "A", "B", "B_orders", "orders"},
		{NewIdentity("", false, true, "A"), "A", "B", "orders", "orders"},
		{NewIdentity("", false, true, "A"), "A", "B", "B.heartbeats", "heartbeats"},
	}
	for _, tc := range tests {
		if got := RenameCheckpointTopic(tc.p, tc.source, tc.target, tc.topic); got != tc.want {
			t.Errorf("RenameCheckpointTopic(%s->%s, %q) = %q, want %q", tc.source, tc.target, tc.topic, got, tc.want)
		}
	}
}

// loopPolicy never reaches the end of a lineage; IsCycle must still return.
type loopPolicy struct{ *Default }

func (loopPolicy) TopicSource(string) (string, bool) { return "X", true }
func (loopPolicy) UpstreamTopic(t string) (string, bool) {
	if t == "a" {
		return "b", true
	}
	return "a", true
}

func TestIsCycleTerminates(t *testing.T) {
	if IsCycle(loopPolicy{NewDefault("", false, true)}, "t", "A") {
		t.Error("IsCycle on an endless lineage = true")
	}
}

func TestLongNames(t *testing.T) {
	p := NewDefault("", false, true)
	topic := strings.Repeat("A.", 500) + "orders"
	if got := p.OriginalTopic(topic); got != "orders" {
		t.Errorf("OriginalTopic = %q", got)
	}
	if !IsCycle(p, topic, "A") || IsCycle(p, topic, "B") {
		t.Error("IsCycle on a 500-hop name")
	}
}
