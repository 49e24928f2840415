package mm2conf

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/kmmproject/kmm/mm2conf/clientconf"
)

// MaxPipelines is the most record pipelines kmm runs for one flow, whatever tasks.max says:
// each is a librdkafka consumer and producer, and MM2 itself never runs more tasks than
// partitions (a cap decided at run time). pkg/flow applies it; check warns above it.
const MaxPipelines = 64

// SchemaVersion of the JSON reports.
const SchemaVersion = 1

// DiagnosticJSON is the JSON form of a Diagnostic.
type DiagnosticJSON struct {
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Position string `json:"position,omitempty"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	Key      string `json:"key,omitempty"`
	Message  string `json:"message"`
	Hint     string `json:"hint,omitempty"`
}

func diagJSON(ds Diagnostics) []DiagnosticJSON {
	out := make([]DiagnosticJSON, 0, len(ds))
	for _, d := range ds {
		out = append(out, DiagnosticJSON{Severity: d.Severity.String(), Code: d.Code, Position: d.Pos.String(),
			File: d.Pos.File, Line: d.Pos.Line, Key: d.Key, Message: d.Msg, Hint: d.Hint})
	}
	return out
}

// CheckFeatures is the JSON form of Features.
type CheckFeatures struct {
	Data                bool   `json:"data"`
	Checkpoints         bool   `json:"checkpoints"`
	GroupOffsetSync     bool   `json:"group_offset_sync"`
	Heartbeats          bool   `json:"heartbeats"`
	TopicConfigSync     bool   `json:"topic_config_sync"`
	ACLSync             bool   `json:"acl_sync"`
	OffsetSyncs         bool   `json:"offset_syncs"`
	OffsetSyncsLocation string `json:"offset_syncs_location"`
	// ExactlyOnce: exactly.once.source.support = enabled for the flow's target.
	ExactlyOnce bool `json:"exactly_once"`
}

// CheckIntervals are the flow's periods, in milliseconds.
type CheckIntervals struct {
	RefreshTopicsMs     int64 `json:"refresh_topics_ms"`
	RefreshGroupsMs     int64 `json:"refresh_groups_ms"`
	SyncTopicConfigsMs  int64 `json:"sync_topic_configs_ms"`
	SyncTopicACLsMs     int64 `json:"sync_topic_acls_ms"`
	EmitCheckpointsMs   int64 `json:"emit_checkpoints_ms"`
	SyncGroupOffsetsMs  int64 `json:"sync_group_offsets_ms"`
	EmitHeartbeatsMs    int64 `json:"emit_heartbeats_ms"`
	ConsumerPollTimeout int64 `json:"consumer_poll_timeout_ms"`
}

// CheckFlow is one row of `kmm config check`.
type CheckFlow struct {
	Name              string   `json:"name"`
	Source            string   `json:"source"`
	Target            string   `json:"target"`
	Herder            string   `json:"herder"`
	Enabled           bool     `json:"enabled"`
	Topics            []string `json:"topics"`
	TopicsExclude     []string `json:"topics_exclude"`
	Groups            []string `json:"groups"`
	GroupsExclude     []string `json:"groups_exclude"`
	ReplicationPolicy string   `json:"replication_policy"`
	Separator         string   `json:"separator"`
	InternalSeparator string   `json:"internal_separator"`
	TasksMax          int      `json:"tasks_max"`
	// Pipelines is what kmm runs: tasks.max capped at MaxPipelines.
	Pipelines         int           `json:"pipelines"`
	ReplicationFactor int           `json:"replication_factor"`
	Features          CheckFeatures `json:"features"`
	// Intervals are MM2's reading of the file; `kmm config check` replaces them with what
	// `kmm replicate` uses (kmm's defaults where the file is silent) and keeps MM2's in
	// MM2Intervals when they differ.
	Intervals    CheckIntervals  `json:"intervals"`
	MM2Intervals *CheckIntervals `json:"mm2_intervals,omitempty"`
}

// CheckReport is what `kmm config check` shows.
type CheckReport struct {
	SchemaVersion int              `json:"schema_version"`
	Kind          string           `json:"kind"`
	GeneratedAt   string           `json:"generated_at,omitempty"`
	Files         []string         `json:"files"`
	Clusters      []string         `json:"clusters"`
	Targets       []string         `json:"targets,omitempty"`
	Flows         []CheckFlow      `json:"flows"`
	Errors        int              `json:"errors"`
	Warnings      int              `json:"warnings"`
	Diagnostics   []DiagnosticJSON `json:"diagnostics"`
}

// ReportOptions tune the reports.
type ReportOptions struct {
	// GeneratedAt, when non-zero, is put in the JSON envelope (RFC 3339).
	GeneratedAt time.Time
}

func nonNil(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

func shortClass(c string) string {
	if i := strings.LastIndexByte(c, '.'); i >= 0 {
		return c[i+1:]
	}
	return c
}

// NewCheckReport builds the check report of a loaded configuration.
func NewCheckReport(c *Config, opts ReportOptions) *CheckReport {
	r := &CheckReport{SchemaVersion: SchemaVersion, Kind: "config-check", Files: nonNil(c.Files), Clusters: nonNil(c.Clusters), Targets: c.Targets,
		Flows: []CheckFlow{}, Diagnostics: diagJSON(c.Diagnostics)}
	if !opts.GeneratedAt.IsZero() {
		r.GeneratedAt = opts.GeneratedAt.UTC().Format(time.RFC3339)
	}
	for _, d := range c.Diagnostics {
		if d.Severity == SeverityError {
			r.Errors++
		} else {
			r.Warnings++
		}
	}
	for _, f := range c.Flows {
		s := f.Settings
		r.Flows = append(r.Flows, CheckFlow{
			Name: f.Name(), Source: f.Source, Target: f.Target, Herder: f.HerderReason, Enabled: f.Enabled,
			Topics: nonNil(s.Topics), TopicsExclude: nonNil(s.TopicsExclude), Groups: nonNil(s.Groups), GroupsExclude: nonNil(s.GroupsExclude),
			ReplicationPolicy: shortClass(s.ReplicationPolicyClass), Separator: s.ReplicationPolicySeparator, InternalSeparator: s.InternalSeparator,
			TasksMax: s.TasksMax, Pipelines: min(s.TasksMax, MaxPipelines), ReplicationFactor: s.ReplicationFactor,
			Features: CheckFeatures{Data: f.Features.Data, Checkpoints: f.Features.Checkpoints, GroupOffsetSync: f.Features.GroupOffsetSync,
				Heartbeats: f.Features.Heartbeats, TopicConfigSync: f.Features.TopicConfigSync, ACLSync: f.Features.ACLSync,
				OffsetSyncs: f.Features.OffsetSyncs, OffsetSyncsLocation: f.Features.OffsetSyncsLocation, ExactlyOnce: s.ExactlyOnce},
			Intervals: CheckIntervals{
				RefreshTopicsMs: s.RefreshTopicsInterval.Milliseconds(), RefreshGroupsMs: s.RefreshGroupsInterval.Milliseconds(),
				SyncTopicConfigsMs: s.SyncTopicConfigsInterval.Milliseconds(), SyncTopicACLsMs: s.SyncTopicACLsInterval.Milliseconds(),
				EmitCheckpointsMs: s.EmitCheckpointsInterval.Milliseconds(), SyncGroupOffsetsMs: s.SyncGroupOffsetsInterval.Milliseconds(),
				EmitHeartbeatsMs: s.EmitHeartbeatsInterval.Milliseconds(), ConsumerPollTimeout: s.ConsumerPollTimeout.Milliseconds(),
			},
		})
	}
	return r
}

// ExplainOrigin is the JSON form of an Origin.
type ExplainOrigin struct {
	Position string `json:"position,omitempty"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	Key      string `json:"key,omitempty"`
	Rule     string `json:"rule"`
}

// ExplainEntry is one effective value.
type ExplainEntry struct {
	Key     string        `json:"key"`
	Value   string        `json:"value"`
	Secret  bool          `json:"secret,omitempty"`
	Default bool          `json:"default,omitempty"`
	Origin  ExplainOrigin `json:"origin"`
}

// ExplainSection groups entries: "connector", "worker", "<role>" (Java
// client settings) and "<role> (librdkafka)".
type ExplainSection struct {
	Name    string         `json:"name"`
	Entries []ExplainEntry `json:"entries"`
}

// ExplainFlow is one flow's sections.
type ExplainFlow struct {
	Name    string `json:"name"`
	Source  string `json:"source"`
	Target  string `json:"target"`
	Herder  string `json:"herder"`
	Enabled bool   `json:"enabled"`
	// ExactlyOnce: exactly.once.source.support = enabled applies to the flow.
	ExactlyOnce bool             `json:"exactly_once,omitempty"`
	Sections    []ExplainSection `json:"sections"`
}

// ExplainReport is what `kmm config explain` shows.
type ExplainReport struct {
	SchemaVersion int              `json:"schema_version"`
	Kind          string           `json:"kind"`
	GeneratedAt   string           `json:"generated_at,omitempty"`
	Files         []string         `json:"files"`
	Keys          []string         `json:"keys,omitempty"`
	Flows         []ExplainFlow    `json:"flows"`
	Diagnostics   []DiagnosticJSON `json:"diagnostics"`
}

// ExplainOptions select what to explain.
type ExplainOptions struct {
	ReportOptions
	// Flow is "S->T"; empty means every flow.
	Flow string
	// Keys filters entries: an entry is shown when its key equals a filter,
	// ends with "."+filter (so bootstrap.servers also shows
	// source.cluster.bootstrap.servers), or when the key or a dot-separated
	// tail of it matches the filter as a glob (path.Match: "ssl.*").
	Keys []string
	// Sections limits the sections ("connector", "worker", role names);
	// empty means all.
	Sections []string
}

// ErrUnknownFlow is returned by NewExplainReport for an unknown --flow.
type ErrUnknownFlow struct {
	Flow  string
	Known []string
}

func (e *ErrUnknownFlow) Error() string {
	return fmt.Sprintf("no flow %q (flows: %s)", e.Flow, strings.Join(e.Known, ", "))
}

// KeyMatches reports whether an explain KEY filter selects key k (see ExplainOptions.Keys).
func KeyMatches(k string, filters []string) bool { return keyMatches(k, filters) }

func keyMatches(k string, filters []string) bool {
	if len(filters) == 0 {
		return true
	}
	for _, f := range filters {
		if k == f || strings.HasSuffix(k, "."+f) {
			return true
		}
		if ok, _ := path.Match(f, k); ok {
			return true
		}
		for i := 0; i < len(k); i++ {
			if k[i] == '.' {
				if ok, _ := path.Match(f, k[i+1:]); ok {
					return true
				}
			}
		}
	}
	return false
}

// displayValue returns what may be shown for a value: "[hidden]" for secret keys (whether
// the value is inline, a provider reference, or both: a reference can sit beside an inline
// password, as in `username="${env:USER}" password="..."`), else the effective value: a
// ${provider:...} reference resolved (the reference is part of the origin, see valueOrigin).
func displayValue(key string, v Value) (string, bool) {
	if clientconf.IsSecretKey(key) {
		return clientconf.Redact(key, v.Raw), true
	}
	if v.FromProvider && !v.Unresolved {
		return v.Resolved(), false
	}
	return v.Raw, false
}

func explainOrigin(o Origin) ExplainOrigin {
	return ExplainOrigin{Position: o.Pos.String(), File: o.Pos.File, Line: o.Pos.Line, Key: o.Key, Rule: o.Rule}
}

// valueOrigin is the origin of v, naming the ${provider:...} reference it was resolved from.
func valueOrigin(key string, v Value) ExplainOrigin {
	o := explainOrigin(v.Origin)
	if v.FromProvider && !clientconf.IsSecretKey(key) {
		o.Rule += ", resolved from " + v.Raw
	} else if v.FromProvider {
		o.Rule += ", resolved by a config provider"
	}
	return o
}

func propsSection(name string, p Props, filters []string) ExplainSection {
	s := ExplainSection{Name: name, Entries: []ExplainEntry{}}
	for _, k := range p.Keys() {
		if !keyMatches(k, filters) {
			continue
		}
		v := p[k]
		val, secret := displayValue(k, v)
		s.Entries = append(s.Entries, ExplainEntry{Key: k, Value: val, Secret: secret, Default: v.Origin.IsDefault(), Origin: valueOrigin(k, v)})
	}
	return s
}

// NewExplainReport builds the explain report.
func NewExplainReport(c *Config, opts ExplainOptions) (*ExplainReport, error) {
	r := &ExplainReport{SchemaVersion: SchemaVersion, Kind: "config-explain", Files: nonNil(c.Files), Keys: opts.Keys,
		Flows: []ExplainFlow{}, Diagnostics: diagJSON(c.Diagnostics)}
	if !opts.GeneratedAt.IsZero() {
		r.GeneratedAt = opts.GeneratedAt.UTC().Format(time.RFC3339)
	}
	if opts.Flow != "" && c.Flow(opts.Flow) == nil {
		var known []string
		for _, f := range c.Flows {
			known = append(known, f.Name())
		}
		return r, &ErrUnknownFlow{Flow: opts.Flow, Known: known}
	}
	want := func(section string) bool {
		if len(opts.Sections) == 0 {
			return true
		}
		base := strings.TrimSuffix(section, " (librdkafka)")
		return contains(opts.Sections, section) || contains(opts.Sections, base)
	}
	for _, f := range c.Flows {
		if opts.Flow != "" && f.Name() != opts.Flow {
			continue
		}
		ef := ExplainFlow{Name: f.Name(), Source: f.Source, Target: f.Target, Herder: f.HerderReason, Enabled: f.Enabled, ExactlyOnce: f.Enabled && f.Settings.ExactlyOnce}
		if want("connector") {
			s := ExplainSection{Name: "connector", Entries: []ExplainEntry{}}
			for _, st := range f.Effective {
				if !keyMatches(st.Key, opts.Keys) {
					continue
				}
				val, secret := displayValue(st.Key, st.Value)
				s.Entries = append(s.Entries, ExplainEntry{Key: st.Key, Value: val, Secret: secret, Default: st.Value.Origin.IsDefault(), Origin: valueOrigin(st.Key, st.Value)})
			}
			ef.Sections = append(ef.Sections, s)
		}
		if want("worker") && f.Worker != nil {
			ef.Sections = append(ef.Sections, propsSection("worker", f.Worker, opts.Keys))
		}
		if f.Connector != nil {
			for _, role := range Roles() {
				if !want(role) {
					continue
				}
				cc := f.ClientConfig(role)
				if cc == nil {
					continue
				}
				ef.Sections = append(ef.Sections, propsSection(role, cc.Java, opts.Keys))
				ef.Sections = append(ef.Sections, librdkafkaSection(role, cc, opts.Keys))
			}
		}
		r.Flows = append(r.Flows, ef)
	}
	return r, nil
}

func librdkafkaSection(role string, cc *ClientConfig, filters []string) ExplainSection {
	s := ExplainSection{Name: role + " (librdkafka)", Entries: []ExplainEntry{}}
	res := cc.Librdkafka
	keys := make([]string, 0, len(res.Config))
	for k := range res.Config {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		javaKeys := strings.Split(res.Origin[k], ",")
		if !keyMatches(k, filters) && !anyKeyMatches(javaKeys, filters) {
			continue
		}
		val := res.Config[k]
		if n := strings.Count(val, "-----BEGIN "); n > 0 {
			val = fmt.Sprintf("(PEM: %d block(s), %d bytes)", n, len(val))
		}
		secret := res.Secret[k] || clientconf.IsSecretKey(k)
		if secret {
			val = "[hidden]"
		}
		o := ExplainOrigin{Rule: res.Origin[k]}
		// Point at the first Java key's file:line.
		for _, jk := range javaKeys {
			if v, ok := cc.Java[strings.TrimSpace(jk)]; ok {
				o = valueOrigin(strings.TrimSpace(jk), v)
				o.Rule = "from " + res.Origin[k] + "; " + o.Rule
				if v.FromProvider && clientconf.IsSecretKey(strings.TrimSpace(jk)) && !secret {
					// A value taken from a secret-typed key (sasl.username from
					// sasl.jaas.config) shows what the provider gave.
					o.Rule = "from " + res.Origin[k] + "; " + v.Origin.Rule + ", resolved by a config provider"
				}
				break
			}
		}
		s.Entries = append(s.Entries, ExplainEntry{Key: k, Value: val, Secret: secret, Default: o.Position == "" && o.Key == "", Origin: o})
	}
	return s
}

func anyKeyMatches(keys, filters []string) bool {
	for _, k := range keys {
		if keyMatches(strings.TrimSpace(k), filters) {
			return true
		}
	}
	return false
}
