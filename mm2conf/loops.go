package mm2conf

import (
	"fmt"
	"regexp"
	"strings"
)

// checkLoops warns about a replication loop MM2 cannot break: A->B and B->A both enabled with
// a policy that keeps topic names (IdentityReplicationPolicy) or an empty separator, over topic
// filters that share a topic. MM2 detects cycles from the source-alias prefix of a remote topic
// name; without a prefix a record copied A->B is copied back B->A and again A->B, forever.
// kmm copies records as MM2 does and has no other way to tell a copied record from a new one.
func (c *Config) checkLoops(sink *diagSink) {
	byName := map[string]*FlowConfig{}
	for _, f := range c.Flows {
		byName[f.Name()] = f
	}
	for _, f := range c.Flows {
		back := byName[f.Target+"->"+f.Source]
		if back == nil || f.Source >= f.Target || !f.Enabled || !back.Enabled || f.TopicFilter == nil || back.TopicFilter == nil {
			continue
		}
		if !keepsNames(f) || !keepsNames(back) {
			continue
		}
		topic, ok := sharedTopic(f, back)
		if !ok {
			continue
		}
		fv, bv := filterLine(f), filterLine(back)
		pos := f.Connector["topics"].Origin
		sink.warn("replication-loop", pos.Pos, pos.Key,
			fmt.Sprintf("replication loop: %s and %s are both enabled with %s and their topic filters overlap (%s: %s; %s: %s; both take e.g. %q): every record copied one way is copied back, forever. MM2 cannot prevent it: without a source prefix in the topic name, a copied record cannot be told from a new one (kmm replicate marks its copies with the kmm.origin header and never writes a record back to the cluster it came from, but MM2 or any other copier on either direction loops)",
				f.Name(), back.Name(), policyWords(f, back), f.Name(), fv, back.Name(), bv, topic),
			fmt.Sprintf("make the filters disjoint (%s.topics and %s.topics, or topics.exclude), or use DefaultReplicationPolicy with a non-empty separator so MM2 and kmm skip the remote topics", f.Name(), back.Name()))
	}
}

// keepsNames reports whether f's remote topics carry no source prefix MM2 could detect.
func keepsNames(f *FlowConfig) bool {
	s := f.Settings
	return s.ReplicationPolicyClass == IdentityPolicyClass || (s.ReplicationPolicySeparatorSet && s.ReplicationPolicySeparator == "")
}

func policyWords(a, b *FlowConfig) string {
	if a.Settings.ReplicationPolicyClass == IdentityPolicyClass && b.Settings.ReplicationPolicyClass == IdentityPolicyClass {
		return "IdentityReplicationPolicy"
	}
	return "topic names kept unchanged (IdentityReplicationPolicy or an empty replication.policy.separator)"
}

// filterLine says where a flow's topics filter comes from: file:line and the value, or MM2's default.
func filterLine(f *FlowConfig) string {
	v, ok := f.Connector["topics"]
	val := strings.Join(f.Settings.Topics, ", ")
	if !ok || v.Origin.IsDefault() {
		return "topics = " + val + " (default)"
	}
	return v.Origin.Pos.String() + " " + v.Origin.Key + " = " + val
}

var regexMeta = regexp.MustCompile(`\\.|[.*+?()\[\]{}|^$]`)

// sharedTopic looks for a topic name both flows replicate: each filter pattern turned into a
// sample name (".*" and ".+" become "x", other metacharacters dropped) and the literal names in
// the lists are tried against both filters. A match proves the overlap; no match is not a proof
// of disjoint filters, so the check may miss exotic patterns but never warns wrongly.
func sharedTopic(a, b *FlowConfig) (string, bool) {
	var candidates []string
	for _, l := range [][]string{a.Settings.Topics, b.Settings.Topics} {
		for _, p := range l {
			p = strings.TrimSpace(p)
			candidates = append(candidates, p)
			s := strings.NewReplacer(".*", "x", ".+", "x", `\.`, ".", `\-`, "-").Replace(p)
			s = regexMeta.ReplaceAllString(s, "")
			if s == "" {
				s = "x"
			}
			candidates = append(candidates, s)
		}
	}
	for _, t := range candidates {
		if t != "" && a.TopicFilter.Match(t) && b.TopicFilter.Match(t) {
			return t, true
		}
	}
	return "", false
}
