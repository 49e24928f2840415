package metasync

import (
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/policy"
)

// testFlow is A->B selecting every topic but skip-*, excluding min.insync.replicas (one of
// MM2's default config.properties.exclude), under the Default policy unless identity.
func testFlow(t *testing.T, identity bool, change func(*flow.Flow)) *flow.Flow {
	t.Helper()
	f := &flow.Flow{Source: "A", Target: "B", Enabled: true, Policy: policy.NewDefault(".", false, true),
		TopicFilter:    func(topic string) bool { return !strings.HasPrefix(topic, "skip") },
		ConfigExcluded: func(name string) bool { return name == "min.insync.replicas" }}
	if identity {
		f.Policy = policy.NewIdentity(".", false, true, "A")
	}
	if change != nil {
		change(f)
	}
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
	return f
}

func entry(value string, source cluster.ConfigSource) cluster.ConfigEntry {
	return cluster.ConfigEntry{Value: value, Source: source}
}

// sourceEntries is one entry of each kind the filter tells apart.
func sourceEntries() map[string]cluster.ConfigEntry {
	es := map[string]cluster.ConfigEntry{
		"retention.ms":        entry("86400000", cluster.SourceDynamicTopic),
		"cleanup.policy":      entry("delete", cluster.SourceDefault),
		"max.message.bytes":   entry("2000000", cluster.SourceDynamicDefaultBroker),
		"segment.ms":          entry("3600000", cluster.SourceDynamicBroker),
		"compression.type":    entry("zstd", cluster.SourceUnknown),
		"segment.bytes":       entry("1048576", cluster.SourceStaticBroker),
		"min.insync.replicas": entry("2", cluster.SourceDynamicTopic),
		"read.only.thing":     {Value: "x", Source: cluster.SourceDynamicTopic, ReadOnly: true},
		"secret.thing":        {Source: cluster.SourceDynamicTopic, Sensitive: true},
	}
	for n, e := range es {
		e.Name = n
		es[n] = e
	}
	return es
}

func TestConfigReplicated(t *testing.T) {
	f := testFlow(t, false, nil)
	want := map[string]bool{
		"retention.ms": true, "cleanup.policy": true, "max.message.bytes": true, "segment.ms": true, "compression.type": true,
		"segment.bytes":       false, // static broker config
		"min.insync.replicas": false, // config.properties.exclude
		"read.only.thing":     false,
		"secret.thing":        false,
	}
	for name, e := range sourceEntries() {
		if got := ConfigReplicated(f, e); got != want[name] {
			t.Errorf("%s (%s): replicated %v, want %v", name, e.Source, got, want[name])
		}
	}
}

func TestCreateConfigsAndOps(t *testing.T) {
	set := func(n, v string) cluster.ConfigOp { return cluster.ConfigOp{Name: n, Value: v} }
	for _, tc := range []struct {
		name        string
		fromSource  bool
		excludeAlso string
		wantCreate  map[string]string
		wantOps     []cluster.ConfigOp
	}{
		{name: "use.defaults.from=target", wantCreate: map[string]string{"retention.ms": "86400000", "max.message.bytes": "2000000", "segment.ms": "3600000", "compression.type": "zstd"},
			wantOps: []cluster.ConfigOp{{Name: "cleanup.policy", Delete: true}, set("compression.type", "zstd"), set("max.message.bytes", "2000000"), set("retention.ms", "86400000"), set("segment.ms", "3600000")}},
		{name: "use.defaults.from=source", fromSource: true,
			wantCreate: map[string]string{"retention.ms": "86400000", "cleanup.policy": "delete", "max.message.bytes": "2000000", "segment.ms": "3600000", "compression.type": "zstd"},
			wantOps:    []cluster.ConfigOp{set("cleanup.policy", "delete"), set("compression.type", "zstd"), set("max.message.bytes", "2000000"), set("retention.ms", "86400000"), set("segment.ms", "3600000")}},
		{name: "an excluded default is not deleted", excludeAlso: "cleanup.policy",
			wantCreate: map[string]string{"retention.ms": "86400000", "max.message.bytes": "2000000", "segment.ms": "3600000", "compression.type": "zstd"},
			wantOps:    []cluster.ConfigOp{set("compression.type", "zstd"), set("max.message.bytes", "2000000"), set("retention.ms", "86400000"), set("segment.ms", "3600000")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := testFlow(t, false, func(f *flow.Flow) {
				f.UseDefaultsFromSource = tc.fromSource
				f.ConfigExcluded = func(n string) bool { return n == "min.insync.replicas" || n == tc.excludeAlso }
			})
			if got := CreateConfigs(f, sourceEntries()); !maps.Equal(got, tc.wantCreate) {
				t.Errorf("CreateConfigs = %v, want %v", got, tc.wantCreate)
			}
			if got := ConfigOps(f, sourceEntries()); !reflect.DeepEqual(got, tc.wantOps) {
				t.Errorf("ConfigOps = %v, want %v", got, tc.wantOps)
			}
		})
	}
	// The map key names the entry (a described entry may leave Name empty).
	f := testFlow(t, false, nil)
	if got := CreateConfigs(f, map[string]cluster.ConfigEntry{"min.insync.replicas": entry("2", cluster.SourceDynamicTopic)}); len(got) != 0 {
		t.Errorf("an excluded entry without a Name was created: %v", got)
	}
}

func TestCompareConfigs(t *testing.T) {
	src := map[string]cluster.ConfigEntry{
		"retention.ms":        entry("86400000", cluster.SourceDynamicTopic),
		"cleanup.policy":      entry("delete", cluster.SourceDefault),
		"max.message.bytes":   entry("2000000", cluster.SourceDynamicDefaultBroker),
		"segment.bytes":       entry("1048576", cluster.SourceStaticBroker),
		"min.insync.replicas": entry("2", cluster.SourceDynamicTopic),
		"secret.thing":        {Source: cluster.SourceDynamicTopic, Sensitive: true},
	}
	// clean is a remote topic as the sync leaves it: the replicated non-defaults set, the
	// defaults left to the target, the rest as the target has it.
	clean := func() map[string]cluster.ConfigEntry {
		return map[string]cluster.ConfigEntry{
			"retention.ms":        entry("86400000", cluster.SourceDynamicTopic),
			"cleanup.policy":      entry("delete", cluster.SourceDefault),
			"max.message.bytes":   entry("2000000", cluster.SourceDynamicTopic),
			"segment.bytes":       entry("536870912", cluster.SourceStaticBroker),
			"min.insync.replicas": entry("1", cluster.SourceDefault),
			"secret.thing":        {Source: cluster.SourceDynamicTopic, Sensitive: true},
		}
	}
	with := func(name string, e cluster.ConfigEntry) map[string]cluster.ConfigEntry {
		m := clean()
		m[name] = e
		return m
	}
	without := func(name string) map[string]cluster.ConfigEntry {
		m := clean()
		delete(m, name)
		return m
	}
	for _, tc := range []struct {
		name       string
		fromSource bool
		target     map[string]cluster.ConfigEntry
		want       []string
	}{
		{name: "clean copy", target: clean()},
		{name: "an override differs", target: with("retention.ms", entry("7200000", cluster.SourceDynamicTopic)),
			want: []string{"retention.ms=86400000 on the source, 7200000 on the target"}},
		{name: "an override is missing on the target", target: without("retention.ms"),
			want: []string{"retention.ms=86400000 on the source, (unset) on the target"}},
		{name: "a dynamic broker config of the source is set on the remote topic", target: with("max.message.bytes", entry("1048588", cluster.SourceDefault)),
			want: []string{"max.message.bytes=2000000 on the source, 1048588 on the target"}},
		{name: "the source uses its default, the target overrides it", target: with("cleanup.policy", entry("compact", cluster.SourceDynamicTopic)),
			want: []string{"cleanup.policy=delete (default) on the source, compact on the target"}},
		{name: "an override equal to the source's default", target: with("cleanup.policy", entry("delete", cluster.SourceDynamicTopic))},
		{name: "the target's own default differs (not an override)", target: with("cleanup.policy", entry("compact", cluster.SourceDynamicDefaultBroker))},
		{name: "use.defaults.from=source: the source's default must be the remote topic's value", fromSource: true,
			target: with("cleanup.policy", entry("compact", cluster.SourceDynamicDefaultBroker)),
			want:   []string{"cleanup.policy=delete on the source, compact on the target"}},
		{name: "excluded, static broker and sensitive entries are not compared",
			target: with("min.insync.replicas", entry("3", cluster.SourceDynamicTopic))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := testFlow(t, false, func(f *flow.Flow) { f.UseDefaultsFromSource = tc.fromSource })
			var got []string
			for _, d := range CompareConfigs(f, src, tc.target) {
				got = append(got, d.String())
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
	// Two differences come sorted by name.
	f := testFlow(t, false, nil)
	tgt := with("retention.ms", entry("1", cluster.SourceDynamicTopic))
	tgt["cleanup.policy"] = entry("compact", cluster.SourceDynamicTopic)
	if got := CompareConfigs(f, src, tgt); len(got) != 2 || got[0].Name != "cleanup.policy" || !got[0].Default || got[1].Name != "retention.ms" || got[1].Default {
		t.Errorf("two differences: %+v", got)
	}
}

// What the sync does to a remote topic, verify finds equal: ConfigOps applied to any target
// leave CompareConfigs nothing to report, with either use.defaults.from.
func TestSyncedConfigsCompareEqual(t *testing.T) {
	for _, fromSource := range []bool{false, true} {
		f := testFlow(t, false, func(f *flow.Flow) { f.UseDefaultsFromSource = fromSource })
		src := sourceEntries()
		// A drifted target: overrides where the source has defaults, other values, a static
		// config of its own, entries the source does not know.
		tgt := map[string]cluster.ConfigEntry{
			"retention.ms":        entry("1", cluster.SourceDynamicTopic),
			"cleanup.policy":      entry("compact", cluster.SourceDynamicTopic),
			"segment.bytes":       entry("536870912", cluster.SourceStaticBroker),
			"min.insync.replicas": entry("3", cluster.SourceDynamicTopic),
			"only.on.target":      entry("y", cluster.SourceDynamicTopic),
		}
		if len(CompareConfigs(f, src, tgt)) == 0 {
			t.Fatalf("use.defaults.from=source %v: the drifted target compares equal", fromSource)
		}
		for _, op := range ConfigOps(f, src) {
			if op.Delete {
				tgt[op.Name] = entry("target-default", cluster.SourceDefault)
			} else {
				tgt[op.Name] = entry(op.Value, cluster.SourceDynamicTopic)
			}
		}
		if d := CompareConfigs(f, src, tgt); len(d) != 0 {
			t.Errorf("use.defaults.from=source %v: after the sync: %v", fromSource, d)
		}
	}
}
