package policy

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// javaSplitSource is the naive reference for Default.TopicSource with a non-empty separator:
// Java's Pattern.split(topic) (limit 0) drops trailing empty strings; fewer than two parts
// means "not remote".
func javaSplitSource(topic, sep string) (string, bool) {
	parts := strings.Split(topic, sep)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) < 2 {
		return "", false
	}
	return parts[0], true
}

// FuzzTopicSource checks the allocation-free TopicSource against a naive String.split
// emulation, and that the lineage walks terminate and stay consistent.
func FuzzTopicSource(f *testing.F) {
	for _, s := range []string{"A.orders", "foo.", ".foo", "a..b", ".", "A_B_c", "aaa", "A.B.heartbeats"} {
		f.Add(s, ".")
		f.Add(s, "_")
		f.Add(s, "aa")
	}
	f.Fuzz(func(t *testing.T, topic, sep string) {
		if !utf8.ValidString(topic) || len(topic) > 300 || len(sep) > 4 {
			return
		}
		p := NewDefault(sep, true, true)
		src, ok := p.TopicSource(topic)
		if sep != "" {
			if wsrc, wok := javaSplitSource(topic, sep); src != wsrc || ok != wok {
				t.Fatalf("TopicSource(%q) sep %q = %q,%v; Java split gives %q,%v", topic, sep, src, ok, wsrc, wok)
			}
		}
		up, uok := p.UpstreamTopic(topic)
		if uok != ok || (ok && p.FormatRemoteTopic(src, up) != topic) {
			t.Fatalf("UpstreamTopic(%q) = %q,%v does not undo FormatRemoteTopic(%q)", topic, up, uok, src)
		}
		orig := p.OriginalTopic(topic)
		if !strings.HasSuffix(topic, orig) {
			t.Fatalf("OriginalTopic(%q) = %q is not a suffix", topic, orig)
		}
		_ = IsCycle(p, topic, "A")
		_ = RenameCheckpointTopic(p, "A", "B", topic)
		id := NewIdentity(sep, true, false, "A")
		_ = IsCycle(id, topic, "A")
		_ = id.IsInternalTopic(topic)
		_ = id.IsHeartbeatsTopic(topic)
	})
}
