package mm2conf

import (
	"fmt"
	"sort"
	"strings"
)

// Origin says where an effective value came from.
type Origin struct {
	// Pos is where the value was written; zero for defaults.
	Pos Pos `json:"-"`
	// Key is the property key MM2 read it from (e.g. "B.producer.acks",
	// "A->B.topics"); empty for defaults.
	Key string `json:"key,omitempty"`
	// Rule explains which MM2 rule put it here, e.g. "flow override A->B.*"
	// or "default (MirrorSourceConfig)".
	Rule string `json:"rule"`
}

// IsDefault reports whether the value is a default, not written anywhere.
func (o Origin) IsDefault() bool { return o.Pos.IsZero() && o.Key == "" }

// String renders "file:line KEY (rule)" or "rule" for defaults.
func (o Origin) String() string {
	var parts []string
	if p := o.Pos.String(); p != "" {
		parts = append(parts, p)
	}
	if o.Key != "" {
		parts = append(parts, o.Key)
	}
	if len(parts) == 0 {
		return o.Rule
	}
	if o.Rule != "" {
		return strings.Join(parts, " ") + " (" + o.Rule + ")"
	}
	return strings.Join(parts, " ")
}

// Value is one effective property value with its origin.
type Value struct {
	// Raw is the value as MM2 sees it before config providers run: a
	// ${provider:path:key} expression is kept as written.
	Raw    string
	Origin Origin
	// resolved is the value after config providers ran (== Raw when none).
	resolved    string
	hasResolved bool
	// FromProvider is true when a config provider supplied (part of) the
	// value. Reports show the resolved value, with the reference as its
	// origin, except for secret keys, which are never rendered.
	FromProvider bool
	// Unresolved: a ${...} reference in it could not be resolved (an error
	// was reported at its origin).
	Unresolved bool
}

// Resolved is the value after config-provider substitution.
func (v Value) Resolved() string {
	if v.hasResolved {
		return v.resolved
	}
	return v.Raw
}

// Props is a map of effective properties.
type Props map[string]Value

// Keys returns the keys sorted.
func (p Props) Keys() []string {
	ks := make([]string, 0, len(p))
	for k := range p {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Get returns the resolved value of key.
func (p Props) Get(key string) (string, bool) {
	v, ok := p[key]
	return v.Resolved(), ok
}

func (p Props) putIfAbsent(k string, v Value) {
	if _, ok := p[k]; !ok {
		p[k] = v
	}
}

// withPrefixStripped is Utils.entriesWithPrefix(props, prefix) (stripped).
func (p Props) withPrefixStripped(prefix string) Props {
	out := Props{}
	for k, v := range p {
		if strings.HasPrefix(k, prefix) {
			out[k[len(prefix):]] = v
		}
	}
	return out
}

// rawEntry is one property of the merged input (the MM2 file plus what the
// command-line forms add), keyed as MM2 would see it.
type rawEntry struct {
	Key   string
	Value string
	Pos   Pos
	Note  string // how a non-file entry was made, e.g. "from --whitelist"
	// LostEscape: see Entry.LostEscape.
	LostEscape string
}

type rawSet struct {
	m map[string]rawEntry
}

func newRawSet() *rawSet { return &rawSet{m: map[string]rawEntry{}} }

func (r *rawSet) set(e rawEntry)                { r.m[e.Key] = e }
func (r *rawSet) get(k string) (rawEntry, bool) { e, ok := r.m[k]; return e, ok }
func (r *rawSet) has(k string) bool             { _, ok := r.m[k]; return ok }
func (r *rawSet) withPrefix(p string) []rawEntry {
	return r.filter(func(k string) bool { return strings.HasPrefix(k, p) })
}
func (r *rawSet) all() []rawEntry { return r.filter(func(string) bool { return true }) }
func (r *rawSet) filter(f func(string) bool) []rawEntry {
	var out []rawEntry
	for k, e := range r.m {
		if f(k) {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func (e rawEntry) value(rule string) Value {
	if e.Note != "" {
		rule = rule + ", " + e.Note
	}
	return Value{Raw: e.Value, Origin: Origin{Pos: e.Pos, Key: e.Key, Rule: rule}}
}

func derive(v Value, rule string) Value {
	v.Origin.Rule = rule
	return v
}

func defaultValue(v, rule string) Value {
	return Value{Raw: v, Origin: Origin{Rule: rule}}
}

// The MM2 connector classes.
const (
	SourceConnectorClass     = "org.apache.kafka.connect.mirror.MirrorSourceConnector"
	CheckpointConnectorClass = "org.apache.kafka.connect.mirror.MirrorCheckpointConnector"
	HeartbeatConnectorClass  = "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"
	byteArrayConverter       = "org.apache.kafka.connect.converters.ByteArrayConverter"
)

// builder computes MM2's maps with origins from a rawSet.
type builder struct {
	raw *rawSet
}

// clusterProps is MirrorMakerConfig.clusterProps(alias).
func (b *builder) clusterProps(alias string) Props {
	props := Props{}
	prefix := alias + "."
	for _, e := range b.raw.withPrefix(prefix) {
		props[e.Key[len(prefix):]] = e.value("cluster " + alias + ".*")
	}
	for _, k := range clientSecurityNames {
		if v, ok := props[k]; ok {
			for _, cp := range []string{"producer.", "consumer.", "admin."} {
				props.putIfAbsent(cp+k, derive(v, fmt.Sprintf("cluster %s.*: MM2 copies %s%s to %s%s if absent", alias, prefix, k, cp, k)))
			}
		}
	}
	for _, k := range clientSecurityNames {
		if e, ok := b.raw.get(k); ok {
			for _, cp := range []string{"producer.", "consumer.", "admin."} {
				props.putIfAbsent(cp+k, e.value("top-level client security key, fallback for every cluster"))
			}
			props.putIfAbsent(k, e.value("top-level client security key, fallback for every cluster"))
		}
	}
	return props
}

// workerConfig is MirrorMakerConfig.workerConfig(S->T), before providers.
func (b *builder) workerConfig(src, tgt string) Props {
	props := b.clusterProps(tgt)
	for _, p := range topLevelWorkerPrefixes {
		for _, e := range b.raw.withPrefix(p) {
			props[e.Key] = e.value(fmt.Sprintf("top-level %s* key, copied into every worker", p))
		}
	}
	for _, e := range b.raw.withPrefix("config.providers") {
		props[e.Key] = e.value("top-level config.providers*")
	}
	pair := src + "->" + tgt
	props.putIfAbsent("client.id", defaultValue(pair, "MM2 default: client.id = S->T"))
	props.putIfAbsent("group.id", defaultValue(src+"-mm2", "MM2 default: group.id = S-mm2"))
	props.putIfAbsent("offset.storage.topic", defaultValue("mm2-offsets."+src+".internal", "MM2 default: mm2-offsets.S.internal"))
	props.putIfAbsent("status.storage.topic", defaultValue("mm2-status."+src+".internal", "MM2 default: mm2-status.S.internal"))
	props.putIfAbsent("config.storage.topic", defaultValue("mm2-configs."+src+".internal", "MM2 default: mm2-configs.S.internal"))
	for _, k := range []string{"key.converter", "value.converter", "header.converter"} {
		props.putIfAbsent(k, defaultValue(byteArrayConverter, "MM2 default"))
	}
	return props
}

// connectorConfig is MirrorMakerConfig.connectorBaseConfig(S->T,
// MirrorSourceConnector). The checkpoint and heartbeat connectors get the
// same map except for name and connector.class.
func (b *builder) connectorConfig(src, tgt string) Props {
	props := Props{}
	for _, e := range b.raw.all() {
		if isConnectorKey(e.Key) {
			props[e.Key] = e.value("top-level connector key")
		}
		if isKMMKey(e.Key) {
			props[e.Key] = e.value("top-level kmm key")
		}
	}
	for _, e := range b.raw.withPrefix("config.providers") {
		props[e.Key] = e.value("top-level config.providers*")
	}
	for _, e := range b.raw.withPrefix("replication.policy") {
		props[e.Key] = e.value("top-level replication.policy*")
	}
	for _, side := range []struct{ alias, name string }{{src, "source"}, {tgt, "target"}} {
		cp := b.clusterProps(side.alias)
		for _, k := range cp.Keys() {
			v := cp[k]
			if clientPrefixOf(k) == "" {
				props[side.name+".cluster."+k] = derive(v, v.Origin.Rule+fmt.Sprintf(", as %s.cluster.%s", side.name, k))
			} else {
				props[side.name+"."+k] = derive(v, v.Origin.Rule+fmt.Sprintf(", as %s.%s", side.name, k))
			}
		}
	}
	props.putIfAbsent("name", defaultValue("MirrorSourceConnector", "MM2 default (connector simple class name)"))
	props.putIfAbsent("connector.class", defaultValue(SourceConnectorClass, "MM2 default"))
	props.putIfAbsent("source.cluster.alias", defaultValue(src, "MM2 default (the flow's source)"))
	props.putIfAbsent("target.cluster.alias", defaultValue(tgt, "MM2 default (the flow's target)"))
	prefix := src + "->" + tgt + "."
	for _, e := range b.raw.withPrefix(prefix) {
		props[e.Key[len(prefix):]] = e.value("flow override " + src + "->" + tgt + ".*")
	}
	props.putIfAbsent("enabled", defaultValue("false", "MM2 default: a flow is disabled unless "+src+"->"+tgt+".enabled = true"))
	return props
}

// Java client roles kmm configures for a flow.
const (
	// RoleSourceConsumer reads replicated records from the source
	// (MirrorSourceTask's consumer): source.cluster.* security keys, then
	// consumer.*, then source.consumer.*; enable.auto.commit=false forced,
	// auto.offset.reset=earliest by default.
	RoleSourceConsumer = "source-consumer"
	// RoleTargetProducer writes replicated records, checkpoints and
	// heartbeats to the target: the Connect worker's producer (worker
	// bootstrap.servers, Connect's producer defaults, then the worker's
	// producer.* i.e. T.producer.*, then the connector's producer.override.*).
	RoleTargetProducer = "target-producer"
	// RoleSourceAdmin and RoleTargetAdmin: *.cluster.* security keys,
	// admin.*, then source.admin.* / target.admin.*.
	RoleSourceAdmin = "source-admin"
	RoleTargetAdmin = "target-admin"
	// RoleTargetConsumer: target.cluster.* security keys, consumer.*,
	// target.consumer.* (reads checkpoints / offset syncs on the target).
	RoleTargetConsumer = "target-consumer"
	// RoleSourceProducer: source.cluster.* security keys, producer.*,
	// source.producer.* (writes offset syncs when their topic is on the source).
	RoleSourceProducer = "source-producer"
	// RoleOffsetSyncsProducer is the producer that writes offset syncs:
	// MM2's source producer when offset-syncs.topic.location=source (the
	// default), its connector-level target producer (target.cluster.*,
	// producer.*, target.producer.*) when it is target.
	RoleOffsetSyncsProducer = "offset-syncs-producer"
)

// Roles lists every role, in display order.
func Roles() []string {
	return []string{RoleSourceConsumer, RoleTargetProducer, RoleSourceAdmin, RoleTargetAdmin, RoleTargetConsumer, RoleSourceProducer, RoleOffsetSyncsProducer}
}

// collidingConnectorKeys are connector keys whose names also look like
// client prefixes; MM2 passes them on to the clients, where Java ignores
// them as unknown ("poll.timeout.ms", "timeout.ms"). kmm drops them.
var collidingConnectorKeys = map[string]bool{"consumer.poll.timeout.ms": true, "admin.timeout.ms": true}

// connectorClientProps builds a connector-level client config:
// <side>.cluster.* ∩ client security keys, then <kind>.*, then <side>.<kind>.*.
func connectorClientProps(conn Props, side, kind string) Props {
	out := Props{}
	for k, v := range conn.withPrefixStripped(side + ".cluster.") {
		if clientSecuritySet[k] {
			out[k] = v
		}
	}
	for k, v := range conn.withPrefixStripped(kind + ".") {
		// producer.override.* etc. are for Connect's own clients (the
		// worker producer); Java ignores "override.x" in MM2's clients.
		if collidingConnectorKeys[kind+"."+k] || strings.HasPrefix(k, "override.") {
			continue
		}
		out[k] = v
	}
	for k, v := range conn.withPrefixStripped(side + "." + kind + ".") {
		out[k] = v
	}
	return out
}

// javaClientProps returns the Java client settings of a role, as MM2 would
// build them, with origins.
func javaClientProps(role string, conn, worker Props, location string) Props {
	switch role {
	case RoleSourceConsumer, RoleTargetConsumer:
		side := "source"
		if role == RoleTargetConsumer {
			side = "target"
		}
		p := connectorClientProps(conn, side, "consumer")
		p["enable.auto.commit"] = defaultValue("false", "forced by MM2")
		p.putIfAbsent("auto.offset.reset", defaultValue("earliest", "MM2 default"))
		return p
	case RoleSourceAdmin:
		return connectorClientProps(conn, "source", "admin")
	case RoleTargetAdmin:
		return connectorClientProps(conn, "target", "admin")
	case RoleSourceProducer:
		return connectorClientProps(conn, "source", "producer")
	case RoleOffsetSyncsProducer:
		if location == "target" {
			return connectorClientProps(conn, "target", "producer")
		}
		return connectorClientProps(conn, "source", "producer")
	case RoleTargetProducer:
		p := Props{}
		if bs, ok := worker["bootstrap.servers"]; ok {
			p["bootstrap.servers"] = bs
		} else {
			p["bootstrap.servers"] = defaultValue("localhost:9092", "Connect worker default (no bootstrap.servers for the target!)")
		}
		p["acks"] = defaultValue("all", "Connect worker producer default")
		p["max.in.flight.requests.per.connection"] = defaultValue("1", "Connect worker producer default")
		p["delivery.timeout.ms"] = defaultValue("2147483647", "Connect worker producer default")
		p["max.block.ms"] = defaultValue("9223372036854775807", "Connect worker producer default")
		p["enable.idempotence"] = defaultValue("false", "Connect worker producer default")
		for k, v := range worker.withPrefixStripped("producer.") {
			p[k] = v
		}
		for k, v := range conn.withPrefixStripped("producer.override.") {
			p[k] = derive(v, v.Origin.Rule+", as connector producer.override.*")
		}
		return p
	}
	return nil
}
