// Package metasync is the one statement of the topic metadata a flow replicates besides the
// records — topic configs and topic ACLs, as MM2's MirrorSourceConnector syncs them — and of
// how a remote topic's metadata is compared with its source's. It is pure: it computes the
// target's desired state from the source's state and the flow, and the differences from both
// sides' state. The engine (pkg/replicator/topics.go) reads the source, calls it and applies
// the result; `kmm verify` (pkg/verify/metadata.go) reads both sides, calls it and reports the
// differences. A rule changed here changes both.
//
// MM2's rules (MirrorSourceConnector, KIP-894, DefaultConfigPropertyFilter):
//
//   - a config entry is replicated unless it is read-only, sensitive, a static broker config, or
//     excluded by the flow's config.properties.exclude (Flow.ConfigExcluded);
//   - a remote topic is created with the replicated entries that are not defaults, plus the
//     defaults when use.defaults.from=source;
//   - the periodic sync (incremental) SETs every replicated entry that is not a default and
//     DELETEs the remote topic's override of every default one (SETs it with
//     use.defaults.from=source): entries of dynamic broker configs are not defaults, so they
//     are set on the remote topic;
//   - ACLs: LITERAL TOPIC bindings of replicated topics are created for their remote topics;
//     ALLOW WRITE is not (only the replicator writes remote topics) and ALLOW ALL becomes
//     ALLOW READ; everything else (DENY included) is copied as it is. Nothing is removed.
package metasync

import (
	"fmt"
	"sort"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
)

// ConfigReplicated reports whether source config entry e takes part in flow f's config sync at
// all (MM2's MirrorSourceConnector.targetConfig filter and the flow's ConfigPropertyFilter).
func ConfigReplicated(f *flow.Flow, e cluster.ConfigEntry) bool {
	return !e.ReadOnly && !e.Sensitive && e.Source != cluster.SourceStaticBroker && !f.ConfigExcluded(e.Name)
}

// isDefault is Java's ConfigEntry.isDefault(): the value is the broker's built-in default.
// Entries from dynamic broker configs are not defaults.
func isDefault(e cluster.ConfigEntry) bool { return e.Source == cluster.SourceDefault }

// CreateConfigs is what a remote topic is created with, given its source topic's described
// config entries: the replicated entries that are not defaults, plus the defaults with
// use.defaults.from=source.
func CreateConfigs(f *flow.Flow, source map[string]cluster.ConfigEntry) map[string]string {
	out := map[string]string{}
	for name, e := range source {
		if !ConfigReplicated(f, withName(name, e)) || isDefault(e) && !f.UseDefaultsFromSource {
			continue
		}
		out[name] = e.Value
	}
	return out
}

// ConfigOps is the incremental config sync of one remote topic, given its source topic's
// described config entries, sorted by name: SET every replicated entry that is not a default,
// DELETE the remote override of every default one (SET with use.defaults.from=source).
func ConfigOps(f *flow.Flow, source map[string]cluster.ConfigEntry) []cluster.ConfigOp {
	var ops []cluster.ConfigOp
	for _, name := range sortedNames(source) {
		e := source[name]
		if !ConfigReplicated(f, withName(name, e)) {
			continue
		}
		if isDefault(e) && !f.UseDefaultsFromSource {
			ops = append(ops, cluster.ConfigOp{Name: name, Delete: true})
			continue
		}
		ops = append(ops, cluster.ConfigOp{Name: name, Value: e.Value})
	}
	return ops
}

// ConfigDiff is one replicated config whose remote topic differs from what the sync makes it.
type ConfigDiff struct {
	Name   string
	Source string // the source topic's value
	Target string // the remote topic's value ("" unset)
	// Default: the source uses its default and the remote topic overrides it with another
	// value (the sync deletes the override).
	Default bool
}

func (d ConfigDiff) String() string {
	def := ""
	if d.Default {
		def = " (default)"
	}
	return fmt.Sprintf("%s=%s%s on the source, %s on the target", d.Name, d.Source, def, orNone(d.Target))
}

func orNone(v string) string {
	if v == "" {
		return "(unset)"
	}
	return v
}

// CompareConfigs compares a remote topic's described configs (target) with what the sync
// (ConfigOps of the source's) makes them, sorted by name: a SET entry must have the source's
// value; a DELETEd one must not be overridden on the remote topic with another value (its
// value is then the target's own default, which may differ from the source's).
func CompareConfigs(f *flow.Flow, source, target map[string]cluster.ConfigEntry) []ConfigDiff {
	var diffs []ConfigDiff
	for _, op := range ConfigOps(f, source) {
		tv := target[op.Name]
		sv := source[op.Name].Value
		switch {
		case !op.Delete && tv.Value != op.Value:
			diffs = append(diffs, ConfigDiff{Name: op.Name, Source: op.Value, Target: tv.Value})
		case op.Delete && tv.Source == cluster.SourceDynamicTopic && tv.Value != sv:
			diffs = append(diffs, ConfigDiff{Name: op.Name, Source: sv, Target: tv.Value, Default: true})
		}
	}
	return diffs
}

// withName is e with its map key as name (the filter matches names; a described entry may
// leave Name empty).
func withName(name string, e cluster.ConfigEntry) cluster.ConfigEntry {
	e.Name = name
	return e
}

func sortedNames(m map[string]cluster.ConfigEntry) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
