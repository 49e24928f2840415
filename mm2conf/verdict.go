package mm2conf

import (
	"fmt"
	"strings"

	"github.com/kmmproject/kmm/pkg/policy"
)

// Class names of the replication policies kmm implements.
const (
	DefaultPolicyClass  = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"
	IdentityPolicyClass = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
)

// Policy returns the flow's replication policy, configured as MM2 configures it from the
// connector config: the separator read raw (an empty separator included), the internal-separator
// flag, and for IdentityReplicationPolicy the connector's source.cluster.alias.
func (f *FlowConfig) Policy() (policy.Policy, error) {
	s := f.Settings
	internal := s.InternalTopicSeparatorEnabled
	switch cls := s.ReplicationPolicyClass; cls {
	case "", DefaultPolicyClass:
		return policy.NewDefault(s.ReplicationPolicySeparator, s.ReplicationPolicySeparatorSet, internal), nil
	case IdentityPolicyClass:
		return policy.NewIdentityConfigured(s.ReplicationPolicySeparator, s.ReplicationPolicySeparatorSet, internal, s.sourceAliasRaw), nil
	default:
		return nil, fmt.Errorf("flow %s: replication.policy.class %s is not supported", f.Name(), cls)
	}
}

// Names are the names a flow's connectors make, as MM2 4.1.1 makes them. They come from the
// connectors' aliases (Settings.SourceClusterAlias / TargetClusterAlias), which are the flow's
// own aliases unless the file overrides source.cluster.alias or target.cluster.alias.
type Names struct {
	// SourceAlias and TargetAlias are the connectors' aliases.
	SourceAlias string `json:"source_alias"`
	TargetAlias string `json:"target_alias"`
	// OffsetSyncsTopic lives on the source cluster (offset-syncs.topic.location=source) or the
	// target; OffsetSyncsLocation says which.
	OffsetSyncsTopic    string `json:"offset_syncs_topic"`
	OffsetSyncsLocation string `json:"offset_syncs_location"`
	// CheckpointsTopic and HeartbeatsTopic live on the target cluster.
	CheckpointsTopic string `json:"checkpoints_topic"`
	HeartbeatsTopic  string `json:"heartbeats_topic"`
	// PartitionCluster is the "cluster" field of the Connect source partitions MM2 stores its
	// progress under in the worker's offsets topic.
	PartitionCluster string `json:"partition_cluster"`
	// OffsetsTopic is the worker's offsets topic (on the target), named after the flow's source.
	OffsetsTopic string `json:"offsets_topic"`
}

// Names returns the names the flow's connectors use.
func (f *FlowConfig) Names() (Names, error) {
	p, err := f.Policy()
	if err != nil {
		return Names{}, err
	}
	s := f.Settings
	n := Names{SourceAlias: s.SourceClusterAlias, TargetAlias: s.TargetClusterAlias, OffsetSyncsLocation: s.OffsetSyncsTopicLocation,
		CheckpointsTopic: p.CheckpointsTopic(s.SourceClusterAlias), HeartbeatsTopic: p.HeartbeatsTopic(), PartitionCluster: s.SourceClusterAlias}
	// MirrorSourceConfig.offsetSyncsTopic: named after the other cluster's alias.
	if s.OffsetSyncsTopicLocation == "source" {
		n.OffsetSyncsTopic = p.OffsetSyncsTopic(s.TargetClusterAlias)
	} else {
		n.OffsetSyncsTopic = p.OffsetSyncsTopic(s.SourceClusterAlias)
	}
	n.OffsetsTopic, _ = f.Worker.Get("offset.storage.topic")
	return n, nil
}

// Verdict codes: why a flow replicates a topic or checkpoints a group, or not. They are stable
// (JSON) and the same the MM2 oracle of mm2conf's tests derives from MM2's own classes.
const (
	VerdictIncluded      = "included"      // the include list matches and the exclude list does not
	VerdictHeartbeats    = "heartbeats"    // a heartbeats topic: replicated whatever the filter says
	VerdictExcluded      = "excluded"      // the exclude list matches
	VerdictNotIncluded   = "not-included"  // the include list does not match
	VerdictInternal      = "internal"      // an internal topic of Kafka, Connect or MM2
	VerdictCycle         = "cycle"         // the topic came from the flow's target
	VerdictFlowDisabled  = "flow-disabled" // the flow does not replicate (S->T.enabled is not true)
	VerdictNoCheckpoints = "checkpoints-disabled"
	VerdictNoOffsetSyncs = "offset-syncs-disabled"
)

// Rule is the setting that decided a verdict: its key and value, and where it was written
// (zero Pos for a default).
type Rule struct {
	Key   string
	Value string
	// Entry is the list entry that matched (a regex of topics, topics.exclude, ...), if any.
	Entry  string
	Origin Origin
}

// TopicVerdict is what a flow does with a topic of its source cluster.
type TopicVerdict struct {
	Flow       string
	Topic      string
	Replicated bool
	// TargetTopic is the name the topic gets on the target (also computed when it is not
	// replicated, to show what the name would be).
	TargetTopic string
	// Code is one of the Verdict* constants; Reason says it in words.
	Code   string
	Reason string
	// Rule is the setting that decided; nil when no setting did (internal topics, cycles).
	Rule *Rule
}

// GroupVerdict is what a flow does with a consumer group of its source cluster.
type GroupVerdict struct {
	Flow  string
	Group string
	// Checkpointed: the flow writes checkpoints for the group (for the partitions of topics it
	// replicates); Synced: it also commits the translated offsets to the group on the target.
	Checkpointed bool
	Synced       bool
	// TargetGroup is the group's name on the target (MM2 keeps group names).
	TargetGroup string
	Code        string
	Reason      string
	Rule        *Rule
}

// setting returns the effective value of a connector key with its origin (defaults included),
// honouring the legacy *.blacklist aliases kmm applies.
func (f *FlowConfig) setting(key string) (Value, bool) {
	for _, s := range f.Effective {
		if s.Key == key {
			return s.Value, true
		}
	}
	if v, ok := f.Connector[key]; ok {
		return v, true
	}
	return Value{}, false
}

func (f *FlowConfig) rule(key, entry string) *Rule {
	v, _ := f.setting(key)
	return &Rule{Key: key, Value: v.Resolved(), Entry: entry, Origin: v.Origin}
}

// matchingEntry returns the first entry of list that matches name on its own (MM2 joins the
// entries with '|', so the list matches when one entry does).
func matchingEntry(list []string, name string) string {
	for _, e := range list {
		m, err := CompilePatternList([]string{e})
		if err == nil && m(name) {
			return e
		}
	}
	return ""
}

// describe renders "topics = a, b (file:line, A->B.topics)" or "topics = .* (default)".
func (r *Rule) describe() string {
	where := "default"
	if !r.Origin.IsDefault() {
		var parts []string
		if p := r.Origin.Pos.String(); p != "" {
			parts = append(parts, p)
		}
		if r.Origin.Key != "" && r.Origin.Key != r.Key {
			parts = append(parts, r.Origin.Key)
		}
		where = strings.Join(parts, ", ")
		if where == "" {
			where = r.Origin.Rule
		}
	}
	return fmt.Sprintf("%s = %s (%s)", r.Key, r.Value, where)
}

// Topic says what the flow does with a topic named name on its source cluster, as
// MirrorSourceConnector.shouldReplicateTopic decides it: (the topic filter accepts it, or it is a
// heartbeats topic and heartbeats.replication.enabled) and it is not internal and not a cycle.
func (f *FlowConfig) Topic(name string) TopicVerdict {
	v := TopicVerdict{Flow: f.Name(), Topic: name}
	p, err := f.Policy()
	if err != nil || f.TopicFilter == nil {
		v.Code, v.Reason = VerdictFlowDisabled, "the flow's configuration has errors"
		return v
	}
	s := f.Settings
	v.TargetTopic = p.FormatRemoteTopic(s.SourceClusterAlias, name)
	if !f.Enabled {
		v.Code = VerdictFlowDisabled
		v.Rule = f.rule("enabled", "")
		v.Reason = fmt.Sprintf("the flow does not replicate: %s->%s.enabled is not true", f.Source, f.Target)
		if f.HerderReason == "heartbeats" {
			v.Reason += " (MM2 runs it only to emit heartbeats)"
		}
		return v
	}
	byFilter := f.TopicFilter.Match(name)
	heartbeats := s.HeartbeatsReplication && p.IsHeartbeatsTopic(name)
	switch {
	case !byFilter && !heartbeats:
		if f.TopicFilter.Included(name) {
			v.Code = VerdictExcluded
			v.Rule = f.rule("topics.exclude", matchingEntry(f.TopicFilter.Exclude, name))
			v.Reason = "matches " + quoteEntry(v.Rule.Entry) + "topics.exclude: " + v.Rule.describe()
		} else {
			v.Code = VerdictNotIncluded
			v.Rule = f.rule("topics", "")
			v.Reason = "matches no entry of topics: " + v.Rule.describe()
		}
	case p.IsInternalTopic(name):
		v.Code = VerdictInternal
		v.Reason = "an internal topic (" + internalWhy(p, name) + "): MM2 never replicates it"
	case policy.IsCycle(p, name, s.TargetClusterAlias):
		v.Code = VerdictCycle
		src, _ := p.TopicSource(name)
		v.Reason = fmt.Sprintf("a cycle: the name says it came from %q, the flow's target, so replicating it back would loop", src)
	case byFilter:
		v.Replicated, v.Code = true, VerdictIncluded
		v.Rule = f.rule("topics", matchingEntry(f.TopicFilter.Include, name))
		v.Reason = "matches " + quoteEntry(v.Rule.Entry) + "topics: " + v.Rule.describe()
		if len(f.TopicFilter.Exclude) > 0 {
			ex := f.rule("topics.exclude", "")
			v.Reason += ", and no entry of topics.exclude: " + ex.describe()
		}
	default:
		v.Replicated, v.Code = true, VerdictHeartbeats
		v.Rule = f.rule("heartbeats.replication.enabled", "")
		v.Reason = "a heartbeats topic, replicated whatever the topic filter says: " + v.Rule.describe()
	}
	return v
}

func quoteEntry(e string) string {
	if e == "" {
		return ""
	}
	return "'" + e + "' in "
}

// internalWhy names the rule of ReplicationPolicy.isInternalTopic (4.1.1) that applies.
func internalWhy(p policy.Policy, t string) string {
	switch {
	case p.IsCheckpointsTopic(t):
		return "an MM2 checkpoints topic"
	case p.IsMM2InternalTopic(t):
		if s, ok := p.(interface{ InternalSeparator() string }); ok {
			return "an MM2 internal topic: its name starts with 'mm2' and ends in '" + s.InternalSeparator() + "internal'"
		}
		return "an MM2 internal topic"
	case strings.HasPrefix(t, "__"):
		return "a Kafka internal topic: its name starts with '__'"
	default:
		return "its name starts with '.'"
	}
}

// Group says what the flow does with a consumer group named name on its source cluster: whether
// MirrorCheckpointConnector checkpoints it (the flow is enabled, checkpoints and offset syncs are
// on, the group filter accepts it) and whether its translated offsets are synced to the target.
// The checkpoints cover the partitions of topics the flow replicates.
func (f *FlowConfig) Group(name string) GroupVerdict {
	v := GroupVerdict{Flow: f.Name(), Group: name, TargetGroup: name}
	s := f.Settings
	switch {
	case f.GroupFilter == nil:
		v.Code, v.Reason = VerdictFlowDisabled, "the flow's configuration has errors"
	case !f.Enabled:
		v.Code = VerdictFlowDisabled
		v.Rule = f.rule("enabled", "")
		v.Reason = fmt.Sprintf("the flow does not replicate: %s->%s.enabled is not true", f.Source, f.Target)
	case !s.EmitCheckpoints:
		v.Code = VerdictNoCheckpoints
		v.Rule = f.rule("emit.checkpoints.enabled", "")
		v.Reason = "the flow writes no checkpoints: " + v.Rule.describe()
	case !s.EmitOffsetSyncs:
		v.Code = VerdictNoOffsetSyncs
		v.Rule = f.rule("emit.offset-syncs.enabled", "")
		v.Reason = "the flow writes no checkpoints without offset syncs: " + v.Rule.describe()
	case !f.GroupFilter.Match(name):
		if f.GroupFilter.Included(name) {
			v.Code = VerdictExcluded
			v.Rule = f.rule("groups.exclude", matchingEntry(f.GroupFilter.Exclude, name))
			v.Reason = "matches " + quoteEntry(v.Rule.Entry) + "groups.exclude: " + v.Rule.describe()
		} else {
			v.Code = VerdictNotIncluded
			v.Rule = f.rule("groups", "")
			v.Reason = "matches no entry of groups: " + v.Rule.describe()
		}
	default:
		v.Checkpointed, v.Code = true, VerdictIncluded
		v.Synced = s.SyncGroupOffsets
		v.Rule = f.rule("groups", matchingEntry(f.GroupFilter.Include, name))
		v.Reason = "matches " + quoteEntry(v.Rule.Entry) + "groups: " + v.Rule.describe()
		sync := f.rule("sync.group.offsets.enabled", "")
		if v.Synced {
			v.Reason += "; offsets synced to the target group: " + sync.describe()
		} else {
			v.Reason += "; checkpointed only, not synced to the target group: " + sync.describe()
		}
	}
	return v
}

// NameRule is the JSON form of a Rule.
type NameRule struct {
	Key      string `json:"key"`
	Value    string `json:"value"`
	Entry    string `json:"entry,omitempty"`
	Default  bool   `json:"default,omitempty"`
	Position string `json:"position,omitempty"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	Written  string `json:"written_as,omitempty"`
}

// NameVerdict is one answer of `kmm config explain --topic/--group`: what one flow does with
// one topic or group. For a group, Replicated means checkpointed (its offsets are translated to
// the target) and Synced says whether they are also committed to the target group.
type NameVerdict struct {
	Topic       string    `json:"topic,omitempty"`
	Group       string    `json:"group,omitempty"`
	Flow        string    `json:"flow"`
	Replicated  bool      `json:"replicated"`
	Synced      *bool     `json:"synced,omitempty"`
	TargetTopic string    `json:"target_topic,omitempty"`
	TargetGroup string    `json:"target_group,omitempty"`
	Code        string    `json:"code"`
	Reason      string    `json:"reason"`
	Rule        *NameRule `json:"rule,omitempty"`
}

// NamesOptions select the names and flows to explain.
type NamesOptions struct {
	// Flow is "S->T"; empty means every flow that replicates (all flows when none does).
	Flow   string
	Topics []string
	Groups []string
}

func nameRule(r *Rule) *NameRule {
	if r == nil {
		return nil
	}
	o := r.Origin
	nr := &NameRule{Key: r.Key, Value: r.Value, Entry: r.Entry, Default: o.IsDefault(), Position: o.Pos.String(), File: o.Pos.File, Line: o.Pos.Line}
	if o.Key != r.Key {
		nr.Written = o.Key
	}
	return nr
}

// ExplainFlows returns the flows NamesOptions.Flow selects: the named one, else the enabled
// flows, else (none enabled) every flow.
func (c *Config) ExplainFlows(flow string) ([]*FlowConfig, error) {
	if flow != "" {
		f := c.Flow(flow)
		if f == nil {
			var known []string
			for _, f := range c.Flows {
				known = append(known, f.Name())
			}
			return nil, &ErrUnknownFlow{Flow: flow, Known: known}
		}
		return []*FlowConfig{f}, nil
	}
	if en := c.EnabledFlows(); len(en) > 0 {
		return en, nil
	}
	return c.Flows, nil
}

// TopicVerdicts answers, for every selected flow, what it does with each topic.
func TopicVerdicts(flows []*FlowConfig, topics []string) []NameVerdict {
	var out []NameVerdict
	for _, t := range topics {
		for _, f := range flows {
			v := f.Topic(t)
			nv := NameVerdict{Topic: t, Flow: v.Flow, Replicated: v.Replicated, Code: v.Code, Reason: v.Reason, Rule: nameRule(v.Rule)}
			if v.Replicated {
				nv.TargetTopic = v.TargetTopic
			}
			out = append(out, nv)
		}
	}
	return out
}

// GroupVerdicts answers, for every selected flow, what it does with each consumer group.
func GroupVerdicts(flows []*FlowConfig, groups []string) []NameVerdict {
	var out []NameVerdict
	for _, g := range groups {
		for _, f := range flows {
			v := f.Group(g)
			synced := v.Synced
			nv := NameVerdict{Group: g, Flow: v.Flow, Replicated: v.Checkpointed, Synced: &synced, Code: v.Code, Reason: v.Reason, Rule: nameRule(v.Rule)}
			if v.Checkpointed {
				nv.TargetGroup = v.TargetGroup
			}
			out = append(out, nv)
		}
	}
	return out
}

// NameVerdicts answers NamesOptions: topics first, then groups.
func (c *Config) NameVerdicts(opts NamesOptions) ([]NameVerdict, error) {
	flows, err := c.ExplainFlows(opts.Flow)
	if err != nil {
		return nil, err
	}
	return append(TopicVerdicts(flows, opts.Topics), GroupVerdicts(flows, opts.Groups)...), nil
}
