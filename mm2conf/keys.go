package mm2conf

import (
	"sort"
	"strconv"
	"strings"
)

// keyDef is one ConfigDef entry: name, Kafka type and default.
type keyDef struct {
	Name        string
	Type        string // BOOLEAN, INT, LONG, SHORT, DOUBLE, STRING, LIST, CLASS, PASSWORD
	Default     string
	NullDefault bool // default is null (no value)
	Required    bool // no default at all
}

// ConnectorKey describes one connector configuration key that kmm knows,
// as defined by the three MM2 connector ConfigDefs (Kafka 4.1.1).
type ConnectorKey struct {
	Name    string
	Type    string
	Default string
	// HasDefault is false when the default is null or the key is required.
	HasDefault bool
	// Connectors lists the connector simple names whose ConfigDef has it.
	Connectors []string
	// Security is true for security.protocol, ssl.* and sasl.*.
	Security bool
}

var (
	connectorKeyIndex   = map[string]*ConnectorKey{}
	connectorKeyNames   []string // sorted, all (MM2 allConfigNames())
	clientSecuritySet   = map[string]bool{}
	clientSecurityNames []string
	workerKeyIndex      = map[string]keyDef{}
	mm2KeyIndex         = map[string]keyDef{}
	producerKeySet      = map[string]bool{}
	consumerKeySet      = map[string]bool{}
	adminKeySet         = map[string]bool{}
)

func init() {
	add := func(defs []keyDef, conn string) {
		for _, d := range defs {
			k := connectorKeyIndex[d.Name]
			if k == nil {
				k = &ConnectorKey{Name: d.Name, Type: d.Type, Default: d.Default,
					HasDefault: !d.NullDefault && !d.Required, Security: isSecurityKey(d.Name)}
				connectorKeyIndex[d.Name] = k
				connectorKeyNames = append(connectorKeyNames, d.Name)
			}
			k.Connectors = append(k.Connectors, conn)
		}
	}
	add(sourceConnectorKeys, "MirrorSourceConnector")
	add(checkpointConnectorKeys, "MirrorCheckpointConnector")
	add(heartbeatConnectorKeys, "MirrorHeartbeatConnector")
	sort.Strings(connectorKeyNames)
	for _, d := range clientConfigDefKeys {
		clientSecuritySet[d.Name] = true
		clientSecurityNames = append(clientSecurityNames, d.Name)
	}
	for _, d := range workerKeys {
		workerKeyIndex[d.Name] = d
	}
	for _, d := range mirrorMakerKeys {
		mm2KeyIndex[d.Name] = d
	}
	for _, n := range producerKeys {
		producerKeySet[n] = true
	}
	for _, n := range consumerKeys {
		consumerKeySet[n] = true
	}
	for _, n := range adminKeys {
		adminKeySet[n] = true
	}
}

func isSecurityKey(k string) bool {
	return k == "security.protocol" || strings.HasPrefix(k, "ssl.") || strings.HasPrefix(k, "sasl.")
}

// ConnectorKeys returns the MM2 connector keys kmm knows (the union of the
// MirrorSource/Checkpoint/Heartbeat ConfigDefs), sorted by name.
// Security keys are included; callers may skip them with k.Security.
func ConnectorKeys() []ConnectorKey {
	out := make([]ConnectorKey, 0, len(connectorKeyNames))
	for _, n := range connectorKeyNames {
		out = append(out, *connectorKeyIndex[n])
	}
	return out
}

// isConnectorKey is MirrorMakerConfig.allConfigNames().contains(k).
func isConnectorKey(k string) bool { return connectorKeyIndex[k] != nil }

// topLevelWorkerPrefixes are the only top-level prefixes MirrorMakerConfig
// copies into every worker config (entriesWithPrefix, so "task" also matches
// "tasks.max").
var topLevelWorkerPrefixes = []string{
	"offset.storage", "config.storage", "status.storage",
	"key.converter", "value.converter", "header.converter",
	"task", "worker", "replication.policy",
}

func topLevelWorkerPrefix(k string) (string, bool) {
	for _, p := range topLevelWorkerPrefixes {
		if strings.HasPrefix(k, p) {
			return p, true
		}
	}
	return "", false
}

// KMMKeys are kmm's own flow-level keys, in the kmm.* namespace that no MM2, Connect or Kafka
// client key uses: set at top level (every flow) or per flow (A->B.kmm.…), like connector keys.
// MM2 ignores them (it logs them as unused); kmm reads, type-checks and lists them in
// `config explain`.
var KMMKeys = []keyDef{
	// The bytes of records one flow may hold in librdkafka's queues, over all its pipelines
	// (tasks): half for the source consumers' prefetch, half for the target producers' queues
	// (pkg/flow sizes them). More allows more throughput over long round trips; less, less
	// memory.
	{Name: "kmm.memory.budget.bytes", Type: "LONG", Default: "16777216"},
	// Workers: every `kmm replicate` of the flow with this key set shares the flow's source
	// partitions with the others through a consumer group on the source (kmm-<S>-><T>-workers)
	// and runs the singleton duties only while it leads (docs/workers.md). Off: one process
	// copies every partition, as before.
	{Name: "kmm.workers.enabled", Type: "BOOLEAN", Default: "false"},
	// The bytes per second (keys, values and headers of the records copied) all pipelines of one
	// flow may copy together; 0 = no limit. `kmm replicate --rate-limit` overrides it.
	{Name: "kmm.rate.limit.bytes.per.second", Type: "LONG", Default: "0"},
	// Which code copies the records: "go" (every record through confluent-kafka-go's Go API) or
	// "c" (records stay in librdkafka, C code moves them from the consumer to the producer;
	// docs/benchmarks.md). The environment variable KMM_DATA_PLANE overrides it.
	{Name: "kmm.data.plane", Type: "STRING", Default: "c"},
	// The offset map: where every copied record landed on the target, kept on the target with
	// the progress (mm2-offset-map.<S>.internal), so checkpoints, translate-offsets, lag
	// --group, failover and failback translate exactly at any lag. Off: translation falls back
	// to the offset syncs, as MM2's does (nearest older sync, re-reads bounded by
	// offset.lag.max), and maps stored earlier are deleted (tombstoned) so none goes stale.
	// For measuring the map's cost (make bench BENCH_ONLY=map) and for a target where the map
	// topic cannot be created.
	{Name: "kmm.offset.map.enabled", Type: "BOOLEAN", Default: "true"},
	// Exactly-once mode (exactly.once.source.support = enabled): how often each pipeline commits
	// its transaction, the records copied since the last commit and their progress record in
	// mm2-offsets.<S>.internal. Longer: fewer commits (more throughput), more records re-read
	// after a crash and a later view for read_committed readers. It must stay well below the
	// target producer's transaction.timeout.ms.
	{Name: "kmm.transaction.interval.ms", Type: "LONG", Default: "1000"},
}

func isKMMKey(k string) bool {
	for _, d := range KMMKeys {
		if d.Name == k {
			return true
		}
	}
	return false
}

// flowOnlyKeys are connector-level keys that are not in MM2's connector
// ConfigDefs: MirrorMakerConfig drops them at top level, so they only work
// flow-prefixed (A->B.key).
var flowOnlyKeys = map[string]string{
	"use.defaults.from":                "read by DefaultConfigPropertyFilter, KIP-894",
	"exactly.once.support":             "a Connect source-connector key, KIP-618",
	"transaction.boundary":             "a Connect source-connector key, KIP-618",
	"transaction.boundary.interval.ms": "a Connect source-connector key, KIP-618",
	"offsets.storage.topic":            "a Connect source-connector key, KIP-618",
	"topic.creation.groups":            "a Connect source-connector key, KIP-158",
}

// removedKeys are keys that earlier MM2 versions read and 4.0 removed.
type removedKey struct {
	replacement string // the key that replaces it, if any
	history     string
}

var removedKeys = map[string]removedKey{
	"topics.blacklist":              {"topics.exclude", "the exclude list in MM2 2.4–2.6, a deprecated alias of topics.exclude in 2.7–3.9, removed in Kafka 4.0"},
	"groups.blacklist":              {"groups.exclude", "the exclude list in MM2 2.4–2.6, a deprecated alias of groups.exclude in 2.7–3.9, removed in Kafka 4.0"},
	"config.properties.blacklist":   {"config.properties.exclude", "the exclude list in MM2 2.4–2.6, a deprecated alias of config.properties.exclude in 2.7–3.9, removed in Kafka 4.0"},
	"use.incremental.alter.configs": {"", "read by MM2 3.5–3.9 (requested/required/never), removed in Kafka 4.0, which always uses IncrementalAlterConfigs (as kmm does)"},
	"add.source.alias.to.metrics":   {"", "read by MM2 3.5–3.9, removed in Kafka 4.0, where the source tag is always present"},
	"auto.include.jmx.reporter":     {"", "removed in Kafka 4.0"},
}

// blacklistAliases maps the legacy exclude key to its replacement.
var blacklistAliases = map[string]string{
	"topics.blacklist":            "topics.exclude",
	"groups.blacklist":            "groups.exclude",
	"config.properties.blacklist": "config.properties.exclude",
}

// whitelistKeys: MM2 never had them (MM1's --whitelist).
var whitelistKeys = map[string]string{
	"topics.whitelist":            "topics",
	"groups.whitelist":            "groups",
	"config.properties.whitelist": "",
	"whitelist":                   "topics",
}

// clientRoleKind tells which Java client config names a key belongs to.
func isClientKey(k string) bool {
	return producerKeySet[k] || consumerKeySet[k] || adminKeySet[k]
}

// clientPrefixOf returns "producer", "consumer" or "admin" when k starts with
// it, the way MirrorMakerConfig's regex (^consumer.*|^producer.*|^admin.*)
// with matches() decides it: a plain prefix test with no line terminator in
// the rest (Java's '.' does not match them).
func clientPrefixOf(k string) string {
	for _, p := range []string{"consumer", "producer", "admin"} {
		if strings.HasPrefix(k, p) && !strings.ContainsAny(k[len(p):], "\n\r\u0085\u2028\u2029") {
			return p
		}
	}
	return ""
}

// knownTopLevelCandidates is the vocabulary for "did you mean" on top-level
// and flow-level keys.
func knownTopLevelCandidates() []string {
	seen := map[string]bool{}
	var out []string
	addAll := func(names ...string) {
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	addAll(connectorKeyNames...)
	for _, d := range mirrorMakerKeys {
		addAll(d.Name)
	}
	for k := range flowOnlyKeys {
		addAll(k)
	}
	addAll("config.providers", "emit.heartbeats.enabled", "use.defaults.from", "sync.group.offsets.enabled",
		"offset.storage.topic", "status.storage.topic", "config.storage.topic",
		"offset.storage.replication.factor", "status.storage.replication.factor", "config.storage.replication.factor")
	sort.Strings(out)
	return out
}

// knownClusterCandidates is the vocabulary for "did you mean" on
// <alias>.<key> keys.
func knownClusterCandidates() []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range workerKeys {
		if !seen[d.Name] {
			seen[d.Name] = true
			out = append(out, d.Name)
		}
	}
	for _, n := range clientSecurityNames {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, n := range []string{"consumer.", "producer.", "admin."} {
		var set []string
		switch n {
		case "consumer.":
			set = consumerKeys
		case "producer.":
			set = producerKeys
		default:
			set = adminKeys
		}
		for _, k := range set {
			if !seen[n+k] {
				seen[n+k] = true
				out = append(out, n+k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// connectorValidators are the validators of the MM2 connector ConfigDefs (Kafka 4.1.1) beyond
// the value types, with Kafka's messages. Each returns "" for a valid (typed, trimmed) value.
// Left out: the converter, transforms and predicates validators (kmm refuses those keys
// anyway) and the *.plugin.version ones. The MM2 oracle test (mm2conf/oracle_test.go) checks
// them against the connectors' own validate().
var connectorValidators = map[string]func(string) string{
	"config.action.reload":                         validString(false, "none", "restart"),
	"errors.tolerance":                             validString(false, "none", "all"),
	"offset-syncs.topic.location":                  validString(false, "source", "target"),
	"security.protocol":                            validString(true, "SASL_SSL", "PLAINTEXT", "SSL", "SASL_PLAINTEXT"),
	"sasl.oauthbearer.assertion.algorithm":         validString(true, "ES256", "RS256"),
	"tasks.max":                                    validRange("1", ""),
	"sasl.login.refresh.buffer.seconds":            validRange("0", "3600"),
	"sasl.login.refresh.min.period.seconds":        validRange("0", "900"),
	"sasl.login.refresh.window.factor":             validRange("0.5", "1.0"),
	"sasl.login.refresh.window.jitter":             validRange("0.0", "0.25"),
	"sasl.oauthbearer.assertion.claim.exp.seconds": validRange("0", "86400"),
	"sasl.oauthbearer.assertion.claim.nbf.seconds": validRange("0", "3600"),
	"name": func(v string) string {
		if v == "" {
			return "String may not be empty"
		}
		for _, r := range v {
			if r < 0x20 || r >= 0x7f && r <= 0x9f {
				return "String may not contain control sequences"
			}
		}
		return ""
	},
}

// validString is ConfigDef.ValidString (caseInsensitive: CaseInsensitiveValidString).
func validString(caseInsensitive bool, allowed ...string) func(string) string {
	return func(v string) string {
		for _, a := range allowed {
			if v == a || caseInsensitive && strings.EqualFold(v, a) {
				return ""
			}
		}
		if caseInsensitive {
			return "String must be one of (case insensitive): " + strings.Join(allowed, ", ")
		}
		return "String must be one of: " + strings.Join(allowed, ", ")
	}
}

// validRange is ConfigDef.Range with Java's rendering of its bounds ("" for none).
func validRange(min, max string) func(string) string {
	return func(v string) string {
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return ""
		}
		if lo, err := strconv.ParseFloat(min, 64); min != "" && err == nil && n < lo {
			return "Value must be at least " + min
		}
		if hi, err := strconv.ParseFloat(max, 64); max != "" && err == nil && n > hi {
			return "Value must be no more than " + max
		}
		return ""
	}
}
