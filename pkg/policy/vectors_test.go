package policy

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kmmproject/kmm/pkg/mm2wire/javatest"
)

var update = flag.Bool("update", false, "rewrite testdata/vectors.json from the real Kafka jars (needs Java)")

const goldenFile = "testdata/vectors.json"

// policyVectors is the JSON written by pkg/mm2wire/testdata/java/GenVectors.java in "policy"
// mode. See the Java source for the layout of a policy_topics row.
type policyVectors struct {
	KafkaVersion string `json:"kafka_version"`
	Meta         []struct {
		RemoteAliases []string    `json:"remote_aliases"`
		Flows         [][2]string `json:"flows"`
	} `json:"policy_meta"`
	Configs []struct {
		Index  int `json:"index"`
		Config struct {
			Class                    string  `json:"class"`
			Separator                *string `json:"separator"`
			InternalSeparatorEnabled *string `json:"internal_separator_enabled"`
			SourceClusterAlias       *string `json:"source_cluster_alias"`
		} `json:"config"`
		HeartbeatsTopic string      `json:"heartbeats_topic"`
		InternalTopics  [][3]string `json:"internal_topics"`
	} `json:"policy_configs"`
	Topics [][]json.RawMessage `json:"policy_topics"`
}

type topicRow struct {
	config                             int
	topic                              string
	source, upstream                   *string
	original                           string
	isHeartbeats, isCheckpoints, isMM2 bool
	isInternal                         bool
	remote                             []string
	cycle                              []bool
	rename                             []string
}

func decodeRow(t *testing.T, raw []json.RawMessage) topicRow {
	t.Helper()
	if len(raw) != 12 {
		t.Fatalf("policy_topics row has %d fields, want 12", len(raw))
	}
	var r topicRow
	for i, dst := range []any{&r.config, &r.topic, &r.source, &r.upstream, &r.original, &r.isHeartbeats,
		&r.isCheckpoints, &r.isMM2, &r.isInternal, &r.remote, &r.cycle, &r.rename} {
		if err := json.Unmarshal(raw[i], dst); err != nil {
			t.Fatalf("policy_topics row field %d: %v", i, err)
		}
	}
	return r
}

// javaParseBoolean is Boolean.parseBoolean: "true" in any case.
func javaParseBoolean(s string) bool { return strings.EqualFold(s, "true") }

func optStr(s string, ok bool) string {
	if !ok {
		return "<null>"
	}
	return fmt.Sprintf("%q", s)
}

func ptrStr(p *string) string {
	if p == nil {
		return "<null>"
	}
	return fmt.Sprintf("%q", *p)
}

func checkPolicyVectors(t *testing.T, data []byte) {
	var v policyVectors
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("vectors: %v", err)
	}
	if len(v.Meta) != 1 || len(v.Configs) == 0 || len(v.Topics) == 0 {
		t.Fatal("vectors: a section is missing or empty")
	}
	meta := v.Meta[0]
	policies := make([]Policy, len(v.Configs))
	names := make([]string, len(v.Configs))
	for i, c := range v.Configs {
		if c.Index != i {
			t.Fatalf("config %d has index %d", i, c.Index)
		}
		sep, sepSet := "", c.Config.Separator != nil
		if sepSet {
			sep = *c.Config.Separator
		}
		internal := true
		if c.Config.InternalSeparatorEnabled != nil {
			internal = javaParseBoolean(*c.Config.InternalSeparatorEnabled)
		}
		alias := ""
		if c.Config.SourceClusterAlias != nil {
			alias = *c.Config.SourceClusterAlias
		}
		switch c.Config.Class {
		case "default":
			policies[i] = NewDefault(sep, sepSet, internal)
		case "identity":
			if c.Config.SourceClusterAlias != nil {
				policies[i] = NewIdentityConfigured(sep, sepSet, internal, alias)
			} else {
				policies[i] = NewIdentity(sep, sepSet, internal, alias)
			}
		default:
			t.Fatalf("unknown class %q", c.Config.Class)
		}
		names[i] = fmt.Sprintf("%s(separator=%s, internal.separator.enabled=%s, source.cluster.alias=%s)",
			c.Config.Class, ptrStr(c.Config.Separator), ptrStr(c.Config.InternalSeparatorEnabled), ptrStr(c.Config.SourceClusterAlias))
		p := policies[i]
		if got := p.HeartbeatsTopic(); got != c.HeartbeatsTopic {
			t.Errorf("%s.HeartbeatsTopic() = %q, want %q", names[i], got, c.HeartbeatsTopic)
		}
		for _, it := range c.InternalTopics {
			if got := p.CheckpointsTopic(it[0]); got != it[1] {
				t.Errorf("%s.CheckpointsTopic(%q) = %q, want %q", names[i], it[0], got, it[1])
			}
			if got := p.OffsetSyncsTopic(it[0]); got != it[2] {
				t.Errorf("%s.OffsetSyncsTopic(%q) = %q, want %q", names[i], it[0], got, it[2])
			}
		}
	}
	checked := 0
	for _, raw := range v.Topics {
		r := decodeRow(t, raw)
		p, name, tp := policies[r.config], names[r.config], r.topic
		if s, ok := p.TopicSource(tp); optStr(s, ok) != ptrStr(r.source) {
			t.Errorf("%s.TopicSource(%q) = %s, want %s", name, tp, optStr(s, ok), ptrStr(r.source))
		}
		if s, ok := p.UpstreamTopic(tp); optStr(s, ok) != ptrStr(r.upstream) {
			t.Errorf("%s.UpstreamTopic(%q) = %s, want %s", name, tp, optStr(s, ok), ptrStr(r.upstream))
		}
		if got := p.OriginalTopic(tp); got != r.original {
			t.Errorf("%s.OriginalTopic(%q) = %q, want %q", name, tp, got, r.original)
		}
		for _, b := range []struct {
			method    string
			got, want bool
		}{
			{"IsHeartbeatsTopic", p.IsHeartbeatsTopic(tp), r.isHeartbeats},
			{"IsCheckpointsTopic", p.IsCheckpointsTopic(tp), r.isCheckpoints},
			{"IsMM2InternalTopic", p.IsMM2InternalTopic(tp), r.isMM2},
			{"IsInternalTopic", p.IsInternalTopic(tp), r.isInternal},
		} {
			if b.got != b.want {
				t.Errorf("%s.%s(%q) = %v, want %v", name, b.method, tp, b.got, b.want)
			}
		}
		if len(r.remote) != len(meta.RemoteAliases) || len(r.cycle) != len(meta.Flows) || len(r.rename) != len(meta.Flows) {
			t.Fatalf("row for %q has the wrong number of results", tp)
		}
		for i, a := range meta.RemoteAliases {
			if got := p.FormatRemoteTopic(a, tp); got != r.remote[i] {
				t.Errorf("%s.FormatRemoteTopic(%q, %q) = %q, want %q", name, a, tp, got, r.remote[i])
			}
		}
		for i, f := range meta.Flows {
			if got := IsCycle(p, tp, f[1]); got != r.cycle[i] {
				t.Errorf("%s: IsCycle(%q) for %s->%s = %v, want %v", name, tp, f[0], f[1], got, r.cycle[i])
			}
			if got := RenameCheckpointTopic(p, f[0], f[1], tp); got != r.rename[i] {
				t.Errorf("%s: RenameCheckpointTopic(%q) for %s->%s = %q, want %q", name, tp, f[0], f[1], got, r.rename[i])
			}
		}
		checked++
	}
	t.Logf("checked %d policies x topics from Kafka %s", checked, v.KafkaVersion)
}

// TestGoldenVectors checks the committed vectors (generated by the real jars); no Java needed.
func TestGoldenVectors(t *testing.T) {
	data, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	checkPolicyVectors(t, data)
}

// TestJavaVectors regenerates the vectors with MM2's own policy, MirrorSourceConnector.isCycle
// and MirrorCheckpointTask.renameTopicPartition from the Kafka jars, diffs them against the
// golden file (rewriting it with -update) and checks them.
func TestJavaVectors(t *testing.T) {
	fresh := javatest.Run(t, "policy")["policy"]
	javatest.CompareGolden(t, goldenFile, fresh, *update)
	checkPolicyVectors(t, fresh)
}
