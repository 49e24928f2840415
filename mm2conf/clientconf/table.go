package clientconf

import (
	"strings"
)

// Action says what Translate does with a Java setting.
type Action int

// Actions.
const (
	// ActionMap copies the value (validated, sometimes converted) to the librdkafka property Rdkafka.
	ActionMap Action = iota
	// ActionWarn: a Java-only knob with no librdkafka meaning. A Warning unless the value is the
	// Java default (or a no-op value) or a supplied default.
	ActionWarn
	// ActionDrop: ignored without a diagnostic, for the reason in Note.
	ActionDrop
	// ActionRefuse: cannot be honoured. An Error unless the value is the Java default.
	ActionRefuse
	// ActionSpecial: translated by dedicated code (SASL, TLS, partitioner, ...), described in Note.
	ActionSpecial
)

func (a Action) String() string {
	switch a {
	case ActionMap:
		return "map"
	case ActionWarn:
		return "warn, ignored"
	case ActionDrop:
		return "ignored"
	case ActionRefuse:
		return "error"
	case ActionSpecial:
		return "special"
	}
	return "?"
}

// Setting is one row of the translation table.
type Setting struct {
	Java    string // the Java client key
	Roles   string // the Java clients that define it: letters p (producer), c (consumer), a (admin)
	Type    string // Java ConfigDef type
	Default string // Java default ("" for none/null); LIST defaults comma-separated
	Action  Action
	Rdkafka string // the librdkafka property written (ActionMap) or produced (ActionSpecial)
	Note    string // what happens and why

	noop   []string // further values that are no-ops (ActionWarn/ActionRefuse stay quiet)
	hint   string
	mech   string                                       // only used with this SASL mechanism
	conv   func(s *state, key, v string) (string, bool) // value conversion for ActionMap
	target func(r Role) string                          // role-dependent Rdkafka for ActionMap
}

type roleMask uint8

func (s Setting) rolesMask() roleMask {
	var m roleMask
	for _, c := range s.Roles {
		switch c {
		case 'p':
			m |= 1
		case 'c':
			m |= 2
		case 'a':
			m |= 4
		}
	}
	return m
}

type tableEntry struct {
	Setting
	roles roleMask
}

func (m roleMask) has(r Role) bool {
	switch r {
	case Producer:
		return m&1 != 0
	case Consumer:
		return m&2 != 0
	case Admin:
		return m&4 != 0
	}
	return false
}

func (e tableEntry) roleNames() string {
	var n []string
	for _, c := range e.Roles {
		switch c {
		case 'p':
			n = append(n, "producer")
		case 'c':
			n = append(n, "consumer")
		case 'a':
			n = append(n, "admin")
		}
	}
	return strings.Join(n, "/")
}

// RoleNames spells out Roles.
func (s Setting) RoleNames() string { return tableEntry{Setting: s}.roleNames() }

// TargetFor is the librdkafka property an ActionMap setting writes for role r.
func (s Setting) TargetFor(r Role) string {
	if s.target != nil {
		return s.target(r)
	}
	return s.Rdkafka
}

// isDefault reports whether v is the Java default or a no-op value.
func (s Setting) isDefault(v string) bool {
	nv := normValue(s.Type, v)
	if nv == normValue(s.Type, s.Default) {
		return true
	}
	for _, n := range s.noop {
		if nv == normValue(s.Type, n) {
			return true
		}
	}
	return false
}

func normValue(typ, v string) string {
	v = strings.TrimSpace(v)
	switch typ {
	case "LIST":
		return strings.Join(splitList(v), ",")
	case "BOOLEAN":
		return strings.ToLower(v)
	case "CLASS":
		return strings.TrimPrefix(v, "class ")
	}
	return v
}

// splitList splits a Java LIST value: trimmed, split on commas with surrounding blanks, an
// empty string giving an empty list.
func splitList(v string) []string {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	parts := strings.Split(v, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// Settings returns the translation table, sorted by Java key.
func Settings() []Setting {
	out := make([]Setting, len(table))
	copy(out, table)
	return out
}

var settingByKey = func() map[string]tableEntry {
	m := make(map[string]tableEntry, len(table))
	for _, s := range table {
		if _, dup := m[s.Java]; dup {
			panic("clientconf: duplicate table key " + s.Java)
		}
		m[s.Java] = tableEntry{Setting: s, roles: s.rolesMask()}
	}
	return m
}()

// javaForRdkafka maps librdkafka names users may write by mistake to the Java key to use.
var javaForRdkafka = func() map[string]string {
	m := map[string]string{}
	for _, s := range table {
		if s.Action != ActionMap || s.Rdkafka == "" || s.Rdkafka == s.Java || s.target != nil {
			continue
		}
		m[s.Rdkafka] = s.Java
	}
	m["sasl.mechanisms"] = "sasl.mechanism"
	m["sasl.username"] = "sasl.jaas.config"
	m["sasl.password"] = "sasl.jaas.config"
	m["ssl.ca.location"] = "ssl.truststore.location"
	m["ssl.certificate.location"] = "ssl.keystore.location"
	m["ssl.key.location"] = "ssl.keystore.location"
	m["message.timeout.ms"] = "delivery.timeout.ms"
	m["queue.buffering.max.ms"] = "linger.ms"
	m["request.required.acks"] = "acks"
	m["compression.codec"] = "compression.type"
	m["fetch.message.max.bytes"] = "max.partition.fetch.bytes"
	m["partitioner"] = "partitioner.class"
	m["message.send.max.retries"] = "retries"
	return m
}()

const (
	noteJavaMetrics = "a Java client metrics setting; kmm has its own metrics"
	noteOAuthLogin  = "librdkafka refreshes OAUTHBEARER tokens on its own schedule (at 80% of their lifetime)"
	noteOAuthRetry  = "librdkafka retries token requests on its own schedule"
	noteKerberos    = "a Kerberos setting; unused because GSSAPI is not supported by this build (sasl.mechanism=GSSAPI is an error)"
	noteTokenCheck  = "a token validation setting; librdkafka does not validate the tokens it fetches"
	noteBrokerOnly  = "a broker-side token validation setting; clients do not use it"
	noteJavaTLS     = "Java TLS provider machinery; librdkafka uses OpenSSL"
	oauthMech       = "OAUTHBEARER"
)

// table is the translation table, sorted by Java key. Roles/Type/Default come from
// kafka-clients 4.1.1's ConfigDefs (plus keys of older clients still found in MM2 files);
// librdkafka names from librdkafka 2.11.1's CONFIGURATION.md.
var table = []Setting{
	{Java: "acks", Roles: "p", Type: "STRING", Default: "all", Action: ActionMap, Rdkafka: "acks",
		Note: "Same name and values (all, -1, 0, 1).", conv: convEnum("all", "-1", "0", "1")},
	{Java: "allow.auto.create.topics", Roles: "c", Type: "BOOLEAN", Default: "true", Action: ActionMap, Rdkafka: "allow.auto.create.topics",
		Note: "Same name.", conv: convBool},
	{Java: "auto.commit.interval.ms", Roles: "c", Type: "INT", Default: "5000", Action: ActionMap, Rdkafka: "auto.commit.interval.ms",
		Note: "Same name."},
	{Java: "auto.include.jmx.reporter", Roles: "pca", Type: "BOOLEAN", Default: "true", Action: ActionWarn,
		Note: "a Java 3.4-3.9 JMX switch; kmm has no JMX"},
	{Java: "auto.offset.reset", Roles: "c", Type: "STRING", Default: "latest", Action: ActionMap, Rdkafka: "auto.offset.reset",
		Note: "earliest and latest map as is; none becomes librdkafka's error (the consumer gets an error instead of an exception); by_duration:... is an error.",
		conv: convAutoOffsetReset},
	{Java: "batch.size", Roles: "p", Type: "INT", Default: "16384", Action: ActionMap, Rdkafka: "batch.size",
		Note: "Same name (bytes per batch). 0 (no batching) becomes batch.num.messages=1. Java's smaller default is not imposed.",
		conv: convBatchSize},
	{Java: "bootstrap.controllers", Roles: "a", Type: "LIST", Default: "", Action: ActionRefuse,
		Note: "kmm's admin client talks to brokers only, not to KRaft controllers", hint: "set bootstrap.servers to the cluster's broker listeners"},
	{Java: "bootstrap.servers", Roles: "pca", Type: "LIST", Default: "", Action: ActionMap, Rdkafka: "bootstrap.servers",
		Note: "Same name; entries trimmed, each must have a port. Required.", conv: convBootstrap},
	{Java: "buffer.memory", Roles: "p", Type: "LONG", Default: "33554432", Action: ActionWarn,
		Note: "no librdkafka equivalent (its producer queue limit queue.buffering.max.kbytes counts differently and makes produce calls fail instead of block)",
		hint: "kmm keeps librdkafka's queue limit (1 GiB) and waits when the queue is full; remove the setting to silence this"},
	{Java: "check.crcs", Roles: "c", Type: "BOOLEAN", Default: "true", Action: ActionMap, Rdkafka: "check.crcs",
		Note: "Same name. When unset librdkafka's default (false) applies: kmm does not pay per-record CRC checks unless asked.", conv: convBool},
	{Java: "client.dns.lookup", Roles: "pca", Type: "STRING", Default: "use_all_dns_ips", Action: ActionMap, Rdkafka: "client.dns.lookup",
		Note: "Same name and values; the pre-3.0 value default becomes use_all_dns_ips (with a warning).", conv: convDNSLookup},
	{Java: "client.id", Roles: "pca", Type: "STRING", Default: "", Action: ActionMap, Rdkafka: "client.id",
		Note: "Same name."},
	{Java: "client.rack", Roles: "c", Type: "STRING", Default: "", Action: ActionMap, Rdkafka: "client.rack",
		Note: "Same name (fetch from the closest replica, KIP-392)."},
	{Java: "compression.gzip.level", Roles: "p", Type: "INT", Default: "-1", Action: ActionSpecial, Rdkafka: "compression.level",
		Note: "Becomes compression.level when compression.type=gzip."},
	{Java: "compression.lz4.level", Roles: "p", Type: "INT", Default: "9", Action: ActionSpecial, Rdkafka: "compression.level",
		Note: "Becomes compression.level when compression.type=lz4 (librdkafka caps it at 12)."},
	{Java: "compression.type", Roles: "p", Type: "STRING", Default: "none", Action: ActionMap, Rdkafka: "compression.type",
		Note: "Same name and values (none, gzip, snappy, lz4, zstd).", conv: convEnum("none", "gzip", "snappy", "lz4", "zstd")},
	{Java: "compression.zstd.level", Roles: "p", Type: "INT", Default: "3", Action: ActionSpecial, Rdkafka: "compression.level",
		Note: "Becomes compression.level when compression.type=zstd (librdkafka accepts 1..12)."},
	{Java: "connections.max.idle.ms", Roles: "pca", Type: "LONG", Default: "540000", Action: ActionMap, Rdkafka: "connections.max.idle.ms",
		Note: "Same name; a negative value (never close) becomes 0 (librdkafka's \"disabled\").", conv: convIdle},
	{Java: "default.api.timeout.ms", Roles: "ca", Type: "INT", Default: "60000", Action: ActionWarn,
		Note: "no librdkafka property: kmm passes its own timeout to each call"},
	{Java: "delivery.timeout.ms", Roles: "p", Type: "INT", Default: "120000", Action: ActionMap, Rdkafka: "delivery.timeout.ms",
		Note: "Same name (librdkafka alias of message.timeout.ms)."},
	{Java: "enable.auto.commit", Roles: "c", Type: "BOOLEAN", Default: "true", Action: ActionMap, Rdkafka: "enable.auto.commit",
		Note: "Same name.", conv: convBool},
	{Java: "enable.idempotence", Roles: "p", Type: "BOOLEAN", Default: "true", Action: ActionMap, Rdkafka: "enable.idempotence",
		Note: "Same name. When unset, Java's default is reproduced: true unless acks, retries or max.in.flight.requests.per.connection conflict with it.",
		conv: convBool},
	{Java: "enable.metrics.push", Roles: "pca", Type: "BOOLEAN", Default: "true", Action: ActionMap, Rdkafka: "enable.metrics.push",
		Note: "Same name (KIP-714).", conv: convBool},
	{Java: "exclude.internal.topics", Roles: "c", Type: "BOOLEAN", Default: "true", Action: ActionWarn,
		Note: "no librdkafka equivalent; kmm assigns partitions itself and applies MM2's topic filter"},
	{Java: "fetch.max.bytes", Roles: "c", Type: "INT", Default: "52428800", Action: ActionMap, Rdkafka: "fetch.max.bytes",
		Note: "Same name. Below 1000000 message.max.bytes is lowered with it (librdkafka requires fetch.max.bytes >= message.max.bytes)."},
	{Java: "fetch.max.wait.ms", Roles: "c", Type: "INT", Default: "500", Action: ActionMap, Rdkafka: "fetch.wait.max.ms",
		Note: "Renamed."},
	{Java: "fetch.min.bytes", Roles: "c", Type: "INT", Default: "1", Action: ActionMap, Rdkafka: "fetch.min.bytes",
		Note: "Same name (librdkafka's minimum is 1)."},
	{Java: "group.id", Roles: "c", Type: "STRING", Default: "", Action: ActionMap, Rdkafka: "group.id",
		Note: "Same name."},
	{Java: "group.instance.id", Roles: "c", Type: "STRING", Default: "", Action: ActionMap, Rdkafka: "group.instance.id",
		Note: "Same name (static membership)."},
	{Java: "group.protocol", Roles: "c", Type: "STRING", Default: "classic", Action: ActionMap, Rdkafka: "group.protocol",
		Note: "Same name and values (classic, consumer).", conv: convEnum("classic", "consumer")},
	{Java: "group.remote.assignor", Roles: "c", Type: "STRING", Default: "", Action: ActionMap, Rdkafka: "group.remote.assignor",
		Note: "Same name."},
	{Java: "heartbeat.interval.ms", Roles: "c", Type: "INT", Default: "3000", Action: ActionMap, Rdkafka: "heartbeat.interval.ms",
		Note: "Same name (dropped with a warning when group.protocol=consumer, where the broker sets it)."},
	{Java: "interceptor.classes", Roles: "pc", Type: "LIST", Default: "", Action: ActionWarn,
		Note: "Java interceptor classes cannot run in kmm"},
	{Java: "internal.leave.group.on.close", Roles: "c", Type: "BOOLEAN", Default: "true", Action: ActionWarn,
		Note: "an internal Java consumer setting with no librdkafka equivalent"},
	{Java: "internal.throw.on.fetch.stable.offset.unsupported", Roles: "c", Type: "BOOLEAN", Default: "false", Action: ActionWarn,
		Note: "an internal Java consumer setting with no librdkafka equivalent"},
	{Java: "isolation.level", Roles: "c", Type: "STRING", Default: "read_uncommitted", Action: ActionMap, Rdkafka: "isolation.level",
		Note: "Same name and values. When unset Java's default read_uncommitted is set (librdkafka's default is read_committed).",
		conv: convEnum("read_uncommitted", "read_committed")},
	{Java: "key.deserializer", Roles: "c", Type: "CLASS", Default: "", Action: ActionWarn,
		noop: []string{"org.apache.kafka.common.serialization.ByteArrayDeserializer"},
		Note: "kmm copies raw bytes; deserializer classes do not apply (ByteArrayDeserializer is accepted silently)"},
	{Java: "key.serializer", Roles: "p", Type: "CLASS", Default: "", Action: ActionWarn,
		noop: []string{"org.apache.kafka.common.serialization.ByteArraySerializer"},
		Note: "kmm copies raw bytes; serializer classes do not apply (ByteArraySerializer is accepted silently)"},
	{Java: "linger.ms", Roles: "p", Type: "LONG", Default: "5", Action: ActionMap, Rdkafka: "linger.ms",
		Note: "Same name."},
	{Java: "max.block.ms", Roles: "p", Type: "LONG", Default: "60000", Action: ActionWarn,
		Note: "no librdkafka equivalent: librdkafka never blocks a produce call, kmm waits for queue space itself"},
	{Java: "max.in.flight.requests.per.connection", Roles: "p", Type: "INT", Default: "5", Action: ActionMap, Rdkafka: "max.in.flight.requests.per.connection",
		Note: "Same name."},
	{Java: "max.partition.fetch.bytes", Roles: "c", Type: "INT", Default: "1048576", Action: ActionMap, Rdkafka: "max.partition.fetch.bytes",
		Note: "Same name (librdkafka alias of fetch.message.max.bytes)."},
	{Java: "max.poll.interval.ms", Roles: "c", Type: "INT", Default: "300000", Action: ActionMap, Rdkafka: "max.poll.interval.ms",
		Note: "Same name (raised to session.timeout.ms if lower, which librdkafka requires)."},
	{Java: "max.poll.records", Roles: "c", Type: "INT", Default: "500", Action: ActionWarn,
		Note: "no librdkafka equivalent; kmm sizes its own batches"},
	{Java: "max.request.size", Roles: "p", Type: "INT", Default: "1048576", Action: ActionMap, Rdkafka: "message.max.bytes",
		Note: "Renamed (librdkafka's maximum request size)."},
	{Java: "metadata.max.age.ms", Roles: "pca", Type: "LONG", Default: "300000", Action: ActionMap, Rdkafka: "topic.metadata.refresh.interval.ms",
		Note: "Java's periodic metadata refresh is librdkafka's topic.metadata.refresh.interval.ms (librdkafka's own metadata.max.age.ms is a cache expiry derived from it: 3x)."},
	{Java: "metadata.max.idle.ms", Roles: "p", Type: "LONG", Default: "300000", Action: ActionWarn,
		Note: "no librdkafka equivalent"},
	{Java: "metadata.recovery.rebootstrap.trigger.ms", Roles: "pca", Type: "LONG", Default: "300000", Action: ActionMap, Rdkafka: "metadata.recovery.rebootstrap.trigger.ms",
		Note: "Same name."},
	{Java: "metadata.recovery.strategy", Roles: "pca", Type: "STRING", Default: "rebootstrap", Action: ActionMap, Rdkafka: "metadata.recovery.strategy",
		Note: "Same name and values (none, rebootstrap).", conv: convEnum("none", "rebootstrap")},
	{Java: "metric.reporters", Roles: "pca", Type: "LIST", Default: "org.apache.kafka.common.metrics.JmxReporter", Action: ActionWarn,
		noop: []string{""}, Note: "Java metrics reporter classes cannot run in kmm; kmm has its own metrics"},
	{Java: "metrics.num.samples", Roles: "pca", Type: "INT", Default: "2", Action: ActionWarn, Note: noteJavaMetrics},
	{Java: "metrics.recording.level", Roles: "pca", Type: "STRING", Default: "INFO", Action: ActionWarn, Note: noteJavaMetrics},
	{Java: "metrics.sample.window.ms", Roles: "pca", Type: "LONG", Default: "30000", Action: ActionWarn, Note: noteJavaMetrics},
	{Java: "partition.assignment.strategy", Roles: "c", Type: "LIST",
		Default: defaultAssignors,
		Action:  ActionMap, Rdkafka: "partition.assignment.strategy",
		Note: "Java assignor classes become librdkafka names: RangeAssignor=range, RoundRobinAssignor=roundrobin, CooperativeStickyAssignor=cooperative-sticky; StickyAssignor and custom classes are dropped with a warning.",
		conv: convAssignors},
	{Java: "partitioner.adaptive.partitioning.enable", Roles: "p", Type: "BOOLEAN", Default: "true", Action: ActionWarn,
		Note: "librdkafka has no adaptive partitioning"},
	{Java: "partitioner.availability.timeout.ms", Roles: "p", Type: "LONG", Default: "0", Action: ActionWarn,
		Note: "librdkafka has no adaptive partitioning"},
	{Java: "partitioner.class", Roles: "p", Type: "CLASS", Default: "", Action: ActionSpecial, Rdkafka: "partitioner",
		Note: "DefaultPartitioner becomes murmur2_random, UniformStickyPartitioner becomes random; RoundRobinPartitioner and custom classes cannot run (warning: MM2 sends replicated records to explicit partitions, so the partitioner is not consulted for them)."},
	{Java: "partitioner.ignore.keys", Roles: "p", Type: "BOOLEAN", Default: "false", Action: ActionSpecial, Rdkafka: "partitioner",
		Note: "true becomes partitioner=random."},
	{Java: "receive.buffer.bytes", Roles: "pca", Type: "INT", Default: "32768", Action: ActionMap, Rdkafka: "socket.receive.buffer.bytes",
		Note: "Renamed; -1 (OS default) becomes 0.", conv: convSocketBuf},
	{Java: "reconnect.backoff.max.ms", Roles: "pca", Type: "LONG", Default: "1000", Action: ActionMap, Rdkafka: "reconnect.backoff.max.ms",
		Note: "Same name (raised to reconnect.backoff.ms if lower, which librdkafka requires)."},
	{Java: "reconnect.backoff.ms", Roles: "pca", Type: "LONG", Default: "50", Action: ActionMap, Rdkafka: "reconnect.backoff.ms",
		Note: "Same name."},
	{Java: "request.timeout.ms", Roles: "pca", Type: "INT", Default: "30000", Action: ActionMap, Rdkafka: "request.timeout.ms (producer), socket.timeout.ms (consumer, admin)",
		Note: "Producer: same name (the produce request timeout). Consumer and admin: socket.timeout.ms, librdkafka's network request timeout.",
		target: func(r Role) string {
			if r == Producer {
				return "request.timeout.ms"
			}
			return "socket.timeout.ms"
		}},
	{Java: "retries", Roles: "pa", Type: "INT", Default: "2147483647", Action: ActionSpecial, Rdkafka: "retries",
		Note: "Producer: same name. Admin: no librdkafka equivalent (warning unless the default)."},
	{Java: "retry.backoff.max.ms", Roles: "pca", Type: "LONG", Default: "1000", Action: ActionMap, Rdkafka: "retry.backoff.max.ms",
		Note: "Same name."},
	{Java: "retry.backoff.ms", Roles: "pca", Type: "LONG", Default: "100", Action: ActionMap, Rdkafka: "retry.backoff.ms",
		Note: "Same name."},

	// SASL
	{Java: "sasl.client.callback.handler.class", Roles: "pca", Type: "CLASS", Default: "", Action: ActionRefuse,
		Note: "custom Java SASL client callback handlers cannot run in kmm"},
	{Java: "sasl.jaas.config", Roles: "pca", Type: "PASSWORD", Default: "", Action: ActionSpecial, Rdkafka: "sasl.username, sasl.password, sasl.oauthbearer.*",
		Note: "Parsed like Java's JAAS parser. PlainLoginModule/ScramLoginModule username and password become sasl.username/sasl.password; OAuthBearerLoginModule options become sasl.oauthbearer.* (see the SASL section of docs/client-settings.md). Exactly one login module."},
	{Java: "sasl.kerberos.kinit.cmd", Roles: "pca", Type: "STRING", Default: "/usr/bin/kinit", Action: ActionDrop, Note: noteKerberos},
	{Java: "sasl.kerberos.min.time.before.relogin", Roles: "pca", Type: "LONG", Default: "60000", Action: ActionDrop, Note: noteKerberos},
	{Java: "sasl.kerberos.service.name", Roles: "pca", Type: "STRING", Default: "", Action: ActionDrop, Note: noteKerberos},
	{Java: "sasl.kerberos.ticket.renew.jitter", Roles: "pca", Type: "DOUBLE", Default: "0.05", Action: ActionDrop, Note: noteKerberos},
	{Java: "sasl.kerberos.ticket.renew.window.factor", Roles: "pca", Type: "DOUBLE", Default: "0.8", Action: ActionDrop, Note: noteKerberos},
	{Java: "sasl.login.callback.handler.class", Roles: "pca", Type: "CLASS", Default: "", Action: ActionSpecial, Rdkafka: "sasl.oauthbearer.method",
		Note: "OAuthBearerLoginCallbackHandler selects OIDC (sasl.oauthbearer.method=oidc); any other class is an error (Java classes cannot run in kmm)."},
	{Java: "sasl.login.class", Roles: "pca", Type: "CLASS", Default: "", Action: ActionRefuse,
		Note: "custom Java SASL login classes cannot run in kmm"},
	{Java: "sasl.login.connect.timeout.ms", Roles: "pca", Type: "INT", Default: "", Action: ActionWarn, mech: oauthMech,
		Note: "librdkafka's token request has no separate connect timeout"},
	{Java: "sasl.login.read.timeout.ms", Roles: "pca", Type: "INT", Default: "", Action: ActionWarn, mech: oauthMech,
		Note: "librdkafka's token request has no separate read timeout"},
	{Java: "sasl.login.refresh.buffer.seconds", Roles: "pca", Type: "SHORT", Default: "300", Action: ActionWarn, mech: oauthMech, Note: noteOAuthLogin},
	{Java: "sasl.login.refresh.min.period.seconds", Roles: "pca", Type: "SHORT", Default: "60", Action: ActionWarn, mech: oauthMech, Note: noteOAuthLogin},
	{Java: "sasl.login.refresh.window.factor", Roles: "pca", Type: "DOUBLE", Default: "0.8", Action: ActionWarn, mech: oauthMech, Note: noteOAuthLogin},
	{Java: "sasl.login.refresh.window.jitter", Roles: "pca", Type: "DOUBLE", Default: "0.05", Action: ActionWarn, mech: oauthMech, Note: noteOAuthLogin},
	{Java: "sasl.login.retry.backoff.max.ms", Roles: "pca", Type: "LONG", Default: "10000", Action: ActionWarn, mech: oauthMech, Note: noteOAuthRetry},
	{Java: "sasl.login.retry.backoff.ms", Roles: "pca", Type: "LONG", Default: "100", Action: ActionWarn, mech: oauthMech, Note: noteOAuthRetry},
	{Java: "sasl.mechanism", Roles: "pca", Type: "STRING", Default: "GSSAPI", Action: ActionSpecial, Rdkafka: "sasl.mechanisms",
		Note: "Renamed. PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER. GSSAPI (Java's default) is an error: this build has no Kerberos."},
	{Java: "sasl.oauthbearer.assertion.algorithm", Roles: "pca", Type: "STRING", Default: "RS256", Action: ActionSpecial, Rdkafka: "sasl.oauthbearer.assertion.algorithm", mech: oauthMech,
		Note: "Same name; used with JwtBearerJwtRetriever."},
	{Java: "sasl.oauthbearer.assertion.claim.aud", Roles: "pca", Type: "STRING", Default: "", Action: ActionSpecial, Rdkafka: "sasl.oauthbearer.assertion.claim.aud", mech: oauthMech,
		Note: "Same name; used with JwtBearerJwtRetriever."},
	{Java: "sasl.oauthbearer.assertion.claim.exp.seconds", Roles: "pca", Type: "INT", Default: "300", Action: ActionSpecial, Rdkafka: "sasl.oauthbearer.assertion.claim.exp.seconds", mech: oauthMech,
		Note: "Same name; used with JwtBearerJwtRetriever."},
	{Java: "sasl.oauthbearer.assertion.claim.iss", Roles: "pca", Type: "STRING", Default: "", Action: ActionSpecial, Rdkafka: "sasl.oauthbearer.assertion.claim.iss", mech: oauthMech,
		Note: "Same name; used with JwtBearerJwtRetriever."},
	{Java: "sasl.oauthbearer.assertion.claim.jti.include", Roles: "pca", Type: "BOOLEAN", Default: "false", Action: ActionSpecial, Rdkafka: "sasl.oauthbearer.assertion.claim.jti.include", mech: oauthMech,
		Note: "Same name; used with JwtBearerJwtRetriever."},
	{Java: "sasl.oauthbearer.assertion.claim.nbf.seconds", Roles: "pca", Type: "INT", Default: "60", Action: ActionSpecial, Rdkafka: "sasl.oauthbearer.assertion.claim.nbf.seconds", mech: oauthMech,
		Note: "Same name; used with JwtBearerJwtRetriever."},
	{Java: "sasl.oauthbearer.assertion.claim.sub", Roles: "pca", Type: "STRING", Default: "", Action: ActionSpecial, Rdkafka: "sasl.oauthbearer.assertion.claim.sub", mech: oauthMech,
		Note: "Same name; used with JwtBearerJwtRetriever."},
	{Java: "sasl.oauthbearer.assertion.file", Roles: "pca", Type: "STRING", Default: "", Action: ActionSpecial, Rdkafka: "sasl.oauthbearer.assertion.file", mech: oauthMech,
		Note: "Same name; used with JwtBearerJwtRetriever."},
	{Java: "sasl.oauthbearer.assertion.private.key.file", Roles: "pca", Type: "STRING", Default: "", Action: ActionSpecial, Rdkafka: "sasl.oauthbearer.assertion.private.key.file", mech: oauthMech,
		Note: "Same name; used with JwtBearerJwtRetriever."},
	{Java: "sasl.oauthbearer.assertion.private.key.passphrase", Roles: "pca", Type: "PASSWORD", Default: "", Action: ActionSpecial, Rdkafka: "sasl.oauthbearer.assertion.private.key.passphrase", mech: oauthMech,
		Note: "Same name (secret); used with JwtBearerJwtRetriever."},
	{Java: "sasl.oauthbearer.assertion.template.file", Roles: "pca", Type: "STRING", Default: "", Action: ActionSpecial, Rdkafka: "sasl.oauthbearer.assertion.jwt.template.file", mech: oauthMech,
		Note: "Renamed; used with JwtBearerJwtRetriever."},
	{Java: "sasl.oauthbearer.client.credentials.client.id", Roles: "pca", Type: "STRING", Default: "", Action: ActionSpecial, Rdkafka: "sasl.oauthbearer.client.id", mech: oauthMech,
		Note: "Becomes sasl.oauthbearer.client.id (takes precedence over the JAAS option clientId, as in Java)."},
	{Java: "sasl.oauthbearer.client.credentials.client.secret", Roles: "pca", Type: "PASSWORD", Default: "", Action: ActionSpecial, Rdkafka: "sasl.oauthbearer.client.secret", mech: oauthMech,
		Note: "Becomes sasl.oauthbearer.client.secret (takes precedence over the JAAS option clientSecret)."},
	{Java: "sasl.oauthbearer.clock.skew.seconds", Roles: "pca", Type: "INT", Default: "30", Action: ActionWarn, mech: oauthMech, Note: noteTokenCheck},
	{Java: "sasl.oauthbearer.expected.audience", Roles: "pca", Type: "LIST", Default: "", Action: ActionWarn, mech: oauthMech, Note: noteBrokerOnly},
	{Java: "sasl.oauthbearer.expected.issuer", Roles: "pca", Type: "STRING", Default: "", Action: ActionWarn, mech: oauthMech, Note: noteBrokerOnly},
	{Java: "sasl.oauthbearer.header.urlencode", Roles: "pca", Type: "BOOLEAN", Default: "false", Action: ActionWarn, mech: oauthMech,
		Note: "librdkafka cannot URL-encode the client credentials it sends to the token endpoint"},
	{Java: "sasl.oauthbearer.jwks.endpoint.refresh.ms", Roles: "pca", Type: "LONG", Default: "3600000", Action: ActionWarn, mech: oauthMech, Note: noteBrokerOnly},
	{Java: "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms", Roles: "pca", Type: "LONG", Default: "10000", Action: ActionWarn, mech: oauthMech, Note: noteBrokerOnly},
	{Java: "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", Roles: "pca", Type: "LONG", Default: "100", Action: ActionWarn, mech: oauthMech, Note: noteBrokerOnly},
	{Java: "sasl.oauthbearer.jwks.endpoint.url", Roles: "pca", Type: "STRING", Default: "", Action: ActionWarn, mech: oauthMech, Note: noteBrokerOnly},
	{Java: "sasl.oauthbearer.jwt.retriever.class", Roles: "pca", Type: "CLASS", Default: "org.apache.kafka.common.security.oauthbearer.DefaultJwtRetriever", Action: ActionSpecial, Rdkafka: "sasl.oauthbearer.grant.type", mech: oauthMech,
		Note: "DefaultJwtRetriever and ClientCredentialsJwtRetriever: client credentials; JwtBearerJwtRetriever: grant.type urn:ietf:params:oauth:grant-type:jwt-bearer; FileJwtRetriever and custom classes are errors."},
	{Java: "sasl.oauthbearer.jwt.validator.class", Roles: "pca", Type: "CLASS", Default: "org.apache.kafka.common.security.oauthbearer.DefaultJwtValidator", Action: ActionWarn, mech: oauthMech,
		noop: []string{"org.apache.kafka.common.security.oauthbearer.ClientJwtValidator"}, Note: noteTokenCheck},
	{Java: "sasl.oauthbearer.scope", Roles: "pca", Type: "STRING", Default: "", Action: ActionSpecial, Rdkafka: "sasl.oauthbearer.scope", mech: oauthMech,
		Note: "Same name (takes precedence over the JAAS option scope)."},
	{Java: "sasl.oauthbearer.scope.claim.name", Roles: "pca", Type: "STRING", Default: "scope", Action: ActionWarn, mech: oauthMech, Note: noteTokenCheck},
	{Java: "sasl.oauthbearer.sub.claim.name", Roles: "pca", Type: "STRING", Default: "sub", Action: ActionWarn, mech: oauthMech, Note: noteTokenCheck},
	{Java: "sasl.oauthbearer.token.endpoint.url", Roles: "pca", Type: "STRING", Default: "", Action: ActionSpecial, Rdkafka: "sasl.oauthbearer.token.endpoint.url", mech: oauthMech,
		Note: "Same name; selects OIDC. file:// URLs (token read from a file) are an error."},

	{Java: "security.protocol", Roles: "pca", Type: "STRING", Default: "PLAINTEXT", Action: ActionSpecial, Rdkafka: "security.protocol",
		Note: "Same name and values (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL). Decides whether ssl.* and sasl.* are read at all."},
	{Java: "security.providers", Roles: "pca", Type: "STRING", Default: "", Action: ActionWarn, Note: noteJavaTLS},
	{Java: "send.buffer.bytes", Roles: "pca", Type: "INT", Default: "131072", Action: ActionMap, Rdkafka: "socket.send.buffer.bytes",
		Note: "Renamed; -1 (OS default) becomes 0.", conv: convSocketBuf},
	{Java: "session.timeout.ms", Roles: "c", Type: "INT", Default: "45000", Action: ActionMap, Rdkafka: "session.timeout.ms",
		Note: "Same name (dropped with a warning when group.protocol=consumer, where the broker sets it)."},
	{Java: "share.acknowledgement.mode", Roles: "c", Type: "STRING", Default: "implicit", Action: ActionWarn,
		Note: "share groups (KIP-932) are not used by kmm"},
	{Java: "socket.connection.setup.timeout.max.ms", Roles: "pca", Type: "LONG", Default: "30000", Action: ActionMap, Rdkafka: "socket.connection.setup.timeout.ms",
		Note: "Java's cap on the connection setup timeout is librdkafka's (fixed) socket.connection.setup.timeout.ms."},
	{Java: "socket.connection.setup.timeout.ms", Roles: "pca", Type: "LONG", Default: "10000", Action: ActionWarn,
		Note: "Java's first-attempt connection timeout has no librdkafka equivalent (librdkafka uses one fixed timeout, taken from socket.connection.setup.timeout.max.ms)"},

	// TLS
	{Java: "ssl.cipher.suites", Roles: "pca", Type: "LIST", Default: "", Action: ActionSpecial, Rdkafka: "ssl.cipher.suites",
		Note: "Java (IANA) suite names are translated to OpenSSL names; TLS 1.3 suites cannot be restricted (warning); unknown names are dropped (warning)."},
	{Java: "ssl.enabled.protocols", Roles: "pca", Type: "LIST", Default: "TLSv1.2,TLSv1.3", Action: ActionSpecial,
		Note: "librdkafka 2.11 cannot restrict TLS versions: a warning unless the value is Java's default."},
	{Java: "ssl.endpoint.identification.algorithm", Roles: "pca", Type: "STRING", Default: "https", Action: ActionSpecial, Rdkafka: "ssl.endpoint.identification.algorithm",
		Note: "https stays https (also when unset: Java's default); empty becomes none."},
	{Java: "ssl.engine.factory.class", Roles: "pca", Type: "CLASS", Default: "", Action: ActionRefuse,
		Note: "custom Java SSL engine factories cannot run in kmm"},
	{Java: "ssl.key.password", Roles: "pca", Type: "PASSWORD", Default: "", Action: ActionSpecial, Rdkafka: "ssl.key.pem",
		Note: "Decrypts the private key of a JKS or PEM key store (JKS: defaults to the store password). Never passed on: the key is handed over unencrypted, in memory."},
	{Java: "ssl.keymanager.algorithm", Roles: "pca", Type: "STRING", Default: "SunX509", Action: ActionWarn, noop: []string{"PKIX", "NewSunX509"}, Note: noteJavaTLS},
	{Java: "ssl.keystore.alias", Roles: "pca", Type: "STRING", Default: "", Action: ActionSpecial, Rdkafka: "ssl.certificate.pem, ssl.key.pem",
		Note: "Selects the private key entry of a JKS key store (newer Kafka clients)."},
	{Java: "ssl.keystore.certificate.chain", Roles: "pca", Type: "PASSWORD", Default: "", Action: ActionSpecial, Rdkafka: "ssl.certificate.pem",
		Note: "Inline PEM certificate chain (ssl.keystore.type=PEM)."},
	{Java: "ssl.keystore.key", Roles: "pca", Type: "PASSWORD", Default: "", Action: ActionSpecial, Rdkafka: "ssl.key.pem",
		Note: "Inline PEM private key (ssl.keystore.type=PEM), decrypted with ssl.key.password when encrypted."},
	{Java: "ssl.keystore.location", Roles: "pca", Type: "STRING", Default: "", Action: ActionSpecial, Rdkafka: "ssl.certificate.pem, ssl.key.pem",
		Note: "Read by kmm (JKS, PKCS12 or PEM) and handed over as PEM."},
	{Java: "ssl.keystore.password", Roles: "pca", Type: "PASSWORD", Default: "", Action: ActionSpecial,
		Note: "Opens the key store; never passed on."},
	{Java: "ssl.keystore.type", Roles: "pca", Type: "STRING", Default: "JKS", Action: ActionSpecial,
		Note: "JKS, PKCS12 or PEM. The file content decides between JKS and PKCS12 (as Java 9+ does), with a warning when it disagrees."},
	{Java: "ssl.protocol", Roles: "pca", Type: "STRING", Default: "TLSv1.3", Action: ActionWarn, noop: []string{"TLSv1.2", "TLS"},
		Note: "librdkafka negotiates the highest TLS version both sides support; it cannot be pinned"},
	{Java: "ssl.provider", Roles: "pca", Type: "STRING", Default: "", Action: ActionWarn, Note: noteJavaTLS},
	{Java: "ssl.secure.random.implementation", Roles: "pca", Type: "STRING", Default: "", Action: ActionWarn, Note: noteJavaTLS},
	{Java: "ssl.trustmanager.algorithm", Roles: "pca", Type: "STRING", Default: "PKIX", Action: ActionWarn, noop: []string{"SunX509"}, Note: noteJavaTLS},
	{Java: "ssl.truststore.certificates", Roles: "pca", Type: "PASSWORD", Default: "", Action: ActionSpecial, Rdkafka: "ssl.ca.pem",
		Note: "Inline PEM CA certificates (ssl.truststore.type=PEM)."},
	{Java: "ssl.truststore.location", Roles: "pca", Type: "STRING", Default: "", Action: ActionSpecial, Rdkafka: "ssl.ca.pem",
		Note: "Read by kmm (JKS, PKCS12 or PEM) and handed over as PEM. Unset: the system CA store (Java: the JVM's cacerts)."},
	{Java: "ssl.truststore.password", Roles: "pca", Type: "PASSWORD", Default: "", Action: ActionSpecial,
		Note: "Opens the trust store (optional for JKS, as in Java); never passed on."},
	{Java: "ssl.truststore.type", Roles: "pca", Type: "STRING", Default: "JKS", Action: ActionSpecial,
		Note: "JKS, PKCS12 or PEM, as for ssl.keystore.type."},

	{Java: "transaction.timeout.ms", Roles: "p", Type: "INT", Default: "60000", Action: ActionMap, Rdkafka: "transaction.timeout.ms",
		Note: "Same name."},
	{Java: "transaction.two.phase.commit.enable", Roles: "p", Type: "BOOLEAN", Default: "false", Action: ActionRefuse,
		Note: "two-phase commit transactions (KIP-939) are not supported by librdkafka"},
	{Java: "transactional.id", Roles: "p", Type: "STRING", Default: "", Action: ActionMap, Rdkafka: "transactional.id",
		Note: "Same name."},
	{Java: "value.deserializer", Roles: "c", Type: "CLASS", Default: "", Action: ActionWarn,
		noop: []string{"org.apache.kafka.common.serialization.ByteArrayDeserializer"},
		Note: "kmm copies raw bytes; deserializer classes do not apply (ByteArrayDeserializer is accepted silently)"},
	{Java: "value.serializer", Roles: "p", Type: "CLASS", Default: "", Action: ActionWarn,
		noop: []string{"org.apache.kafka.common.serialization.ByteArraySerializer"},
		Note: "kmm copies raw bytes; serializer classes do not apply (ByteArraySerializer is accepted silently)"},
}
