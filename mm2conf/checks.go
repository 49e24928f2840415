package mm2conf

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/kmmproject/kmm/mm2conf/clientconf"
)

// checkKeys classifies every input key the way MM2 would use it and reports
// keys MM2 ignores, misspellings, removed and MM1-only keys.
func checkKeys(c *Config, sink *diagSink) {
	aliases := map[string]bool{}
	for _, a := range c.Clusters {
		aliases[a] = true
	}
	topCands := knownTopLevelCandidates()
	clusterCands := knownClusterCandidates()
	targetsOf := func() string {
		if len(c.Clusters) == 0 {
			return "B"
		}
		return c.Clusters[len(c.Clusters)-1]
	}
	for _, e := range c.raw.all() {
		k := e.Key
		checkInlineComment(e, sink)
		checkLostEscape(e, c.Clusters, sink)
		// Flow keys: S->T.rest
		if i := strings.Index(k, "->"); i > 0 {
			if s, t, rest, ok := splitFlowKey(k, c.Clusters); ok {
				checkFlowKey(c, e, s, t, rest, sink)
				continue
			}
			src := k[:i]
			tgt := k[i+2:]
			if j := strings.IndexByte(tgt, '.'); j >= 0 {
				tgt = tgt[:j]
			}
			var missing []string
			for _, a := range []string{src, tgt} {
				if !aliases[a] {
					missing = append(missing, a)
				}
			}
			msg := fmt.Sprintf("%s names %s, which is not in clusters (%s); MM2 ignores the flow", k, strings.Join(missing, " and "), strings.Join(c.Clusters, ", "))
			hint := suggestAlias(missing, c.Clusters)
			if strings.HasSuffix(k, ".enabled") {
				sink.err("unknown-flow-alias", e.Pos, k, msg, hint)
			} else {
				sink.warn("unknown-flow-alias", e.Pos, k, msg, hint)
			}
			continue
		}
		// Cluster keys: alias.rest (longest matching alias first). A key that is a connector
		// key as a whole (source.cluster.alias beside an alias "source") is a top-level
		// connector key for MM2 too: MirrorMakerConfig keeps it for every flow.
		if a := aliasOf(k, c.Clusters); a != "" && !isConnectorKey(k) {
			checkClusterKey(e, a, k[len(a)+1:], clusterCands, c, sink)
			continue
		}
		checkTopLevelKey(e, topCands, aliases, targetsOf(), c, sink)
	}
}

var inlineComment = regexp.MustCompile(`[ \t\f][#!]`)

// checkInlineComment warns about "value   # comment": Java keeps the comment.
func checkInlineComment(e rawEntry, sink *diagSink) {
	loc := inlineComment.FindStringIndex(e.Value)
	if loc == nil || e.Pos.IsZero() {
		return
	}
	if clientconf.IsSecretKey(e.Key) || HasVariables(e.Value) {
		sink.warn("inline-comment", e.Pos, e.Key, fmt.Sprintf("the value of %s contains a '%c' after whitespace: '#' and '!' start a comment only at the beginning of a line, so Java keeps it in the value", e.Key, e.Value[loc[1]-1]), "move the comment to its own line")
		return
	}
	sink.warn("inline-comment", e.Pos, e.Key, fmt.Sprintf("the value of %s is %q: '#' and '!' start a comment only at the beginning of a line, so Java keeps %q in the value", e.Key, e.Value, e.Value[loc[0]:]),
		fmt.Sprintf("move the comment to its own line: %s = %s", e.Key, strings.TrimRight(e.Value[:loc[0]], " \t\f")))
}

// regexListKeys hold Java regex lists.
var regexListKeys = map[string]bool{
	"topics": true, "topics.exclude": true, "groups": true, "groups.exclude": true, "config.properties.exclude": true,
	"topics.blacklist": true, "groups.blacklist": true, "config.properties.blacklist": true,
}

// checkLostEscape warns when the properties format dropped a backslash.
func checkLostEscape(e rawEntry, clusters []string, sink *diagSink) {
	if e.LostEscape == "" {
		return
	}
	base := e.Key
	if _, _, rest, ok := splitFlowKey(e.Key, clusters); ok {
		base = rest
	} else if a := aliasOf(e.Key, clusters); a != "" {
		base = e.Key[len(a)+1:]
	}
	if regexListKeys[base] || strings.HasSuffix(base, "allowlist.pattern") {
		sink.warn("lost-backslash", e.Pos, e.Key, fmt.Sprintf("the properties format drops the backslash of %s (Java reads it as %q), so MM2 uses the regex list %q", e.LostEscape, e.LostEscape[1:], e.Value),
			`double every regex backslash in a properties file: write \\. to match a literal dot`)
		return
	}
	if clientconf.IsSecretKey(e.Key) {
		sink.warn("lost-backslash", e.Pos, e.Key, "the properties format drops a backslash in this value (Java reads \\x as x)", `write \\ for a literal backslash`)
		return
	}
	sink.warn("lost-backslash", e.Pos, e.Key, fmt.Sprintf("the properties format drops the backslash of %s (Java reads it as %q)", e.LostEscape, e.LostEscape[1:]), `write \\ for a literal backslash`)
}

// splitFlowKey finds S and T in "S->T.rest" among the known aliases.
func splitFlowKey(k string, clusters []string) (string, string, string, bool) {
	for _, s := range clusters {
		if !strings.HasPrefix(k, s+"->") {
			continue
		}
		rest := k[len(s)+2:]
		for _, t := range clusters {
			if t != s && strings.HasPrefix(rest, t+".") {
				return s, t, rest[len(t)+1:], true
			}
		}
	}
	return "", "", "", false
}

func aliasOf(k string, clusters []string) string {
	best := ""
	for _, a := range clusters {
		if strings.HasPrefix(k, a+".") && len(a) > len(best) {
			best = a
		}
	}
	return best
}

func suggestAlias(missing, clusters []string) string {
	for _, m := range missing {
		if s := didYouMean(m, clusters, true); s != "" {
			return fmt.Sprintf("did you mean %q? (aliases are case-sensitive)", s)
		}
	}
	return fmt.Sprintf("add the alias to clusters, or fix the name (clusters = %s)", strings.Join(clusters, ", "))
}

// removedKeyDiag reports a key removed from MM2 (base: the key without its prefix; where: the
// flow prefix "S->T." or ""; cluster: the key is cluster-prefixed).
func removedKeyDiag(c *Config, e rawEntry, base, where string, cluster bool, sink *diagSink) bool {
	if r, ok := removedKeys[base]; ok {
		msg := fmt.Sprintf("%s is not an MM2 4.x key: %s", e.Key, r.history)
		hint := "remove it"
		switch {
		case r.replacement != "" && cluster:
			msg += fmt.Sprintf("; cluster-prefixed, it did nothing in any version (it becomes source.cluster.%s / target.cluster.%s), and kmm ignores it too", base, base)
			hint = fmt.Sprintf("write %s (all flows) or %s.%s (one flow)", r.replacement, flowExample(firstAlias(c), c), r.replacement)
		case r.replacement != "":
			if x, set := c.raw.get(where + r.replacement); set {
				msg += fmt.Sprintf(". %s (line %d) is set, which wins in every MM2 version: MM2 4.x and kmm ignore this line", x.Key, x.Pos.Line)
				break
			}
			msg += fmt.Sprintf(". MM2 4.x ignores it and uses %s; kmm applies it as %s, as MM2 2.7–3.9 did, because a file that holds it was written for those versions (docs/mm2-compat.md)", legacyExcludeShown(c, where, r.replacement), r.replacement)
			hint = "for the same result with MM2 4.x and kmm, replace the line with: " + propertyLine(where+r.replacement, e.Value)
		}
		sink.warn("removed-key", e.Pos, e.Key, msg, hint)
		return true
	}
	if r, ok := whitelistKeys[base]; ok {
		msg := fmt.Sprintf("%s is not an MM2 key: MM2 never had a whitelist key (that was MirrorMaker 1's --whitelist flag); MM2 ignores it", e.Key)
		hint := "remove it"
		if r != "" {
			hint = fmt.Sprintf("the MM2 include list is %s%s (comma-separated regexes)", where, r)
		}
		sink.warn("mm1-key", e.Pos, e.Key, msg, hint)
		return true
	}
	return false
}

func checkFlowKey(c *Config, e rawEntry, s, t, rest string, sink *diagSink) {
	flow := s + "->" + t
	switch {
	case rest == "enabled" || rest == "emit.heartbeats.enabled":
		return
	case isConnectorKey(rest), flowOnlyKeys[rest] != "", isKMMKey(rest):
		return
	case strings.HasPrefix(rest, "producer.override.") || strings.HasPrefix(rest, "consumer.override.") || strings.HasPrefix(rest, "admin.override."):
		return
	case clientPrefixOf(rest) != "" || strings.HasPrefix(rest, "source.") || strings.HasPrefix(rest, "target."):
		return
	case strings.HasPrefix(rest, "transforms.") || strings.HasPrefix(rest, "predicates.") || strings.HasPrefix(rest, "errors."):
		return
	case strings.HasPrefix(rest, "config.providers") || strings.HasPrefix(rest, "replication.policy"):
		return
	}
	if removedKeyDiag(c, e, rest, flow+".", false, sink) {
		return
	}
	if _, ok := workerKeyIndex[rest]; ok {
		sink.warn("worker-key-in-flow", e.Pos, e.Key, fmt.Sprintf("%s is a Connect worker setting; flow-prefixed keys only reach the connectors, so MM2 ignores it here", rest), fmt.Sprintf("write it for the target cluster: %s.%s", t, rest))
		return
	}
	unknownKey(e, rest, knownTopLevelCandidates(), flow+".", sink)
}

func checkClusterKey(e rawEntry, alias, rest string, cands []string, c *Config, sink *diagSink) {
	if cp := clientPrefixOf(rest); cp != "" {
		// Client settings: checked by clientconf when translated.
		return
	}
	switch {
	case clientSecuritySet[rest], strings.HasPrefix(rest, "config.providers"):
		return
	}
	if _, ok := workerKeyIndex[rest]; ok {
		return
	}
	if isConnectorKey(rest) || flowOnlyKeys[rest] != "" || isKMMKey(rest) || rest == "groups" || rest == "topics" {
		sink.warn("connector-key-on-cluster", e.Pos, e.Key, fmt.Sprintf("%s does not work in MM2: cluster-prefixed keys become source.cluster.%s / target.cluster.%s, which no connector reads", e.Key, rest, rest),
			fmt.Sprintf("write it at top level (%s, all flows) or per flow (%s.%s)", rest, flowExample(alias, c), rest))
		return
	}
	if removedKeyDiag(c, e, rest, "", true, sink) {
		return
	}
	if isClientKey(rest) {
		var roles []string
		if consumerKeySet[rest] {
			roles = append(roles, alias+".consumer."+rest)
		}
		if producerKeySet[rest] {
			roles = append(roles, alias+".producer."+rest)
		}
		if adminKeySet[rest] && len(roles) == 0 {
			roles = append(roles, alias+".admin."+rest)
		}
		sink.warn("client-key-on-cluster", e.Pos, e.Key, fmt.Sprintf("%s reaches no client: MM2 copies only bootstrap.servers, security.protocol, ssl.* and sasl.* from %s.* to its clients", e.Key, alias),
			"write "+strings.Join(roles, " or "))
		return
	}
	unknownKey(e, rest, cands, alias+".", sink)
}

func flowExample(alias string, c *Config) string {
	for _, o := range c.Clusters {
		if o != alias {
			return alias + "->" + o
		}
	}
	return alias + "->B"
}

func checkTopLevelKey(e rawEntry, cands []string, aliases map[string]bool, target string, c *Config, sink *diagSink) {
	k := e.Key
	switch {
	case k == "clusters", mm2KeyIndex[k].Name != "", clientSecuritySet[k]:
		return
	case strings.HasPrefix(k, "config.providers"), strings.HasPrefix(k, "listeners.https."), strings.HasPrefix(k, "admin.listeners"):
		return
	case isConnectorKey(k), k == "emit.heartbeats.enabled", isKMMKey(k):
		return
	case strings.HasPrefix(k, "transforms.") || strings.HasPrefix(k, "predicates."):
		return
	}
	if _, ok := topLevelWorkerPrefix(k); ok {
		return
	}
	if removedKeyDiag(c, e, k, "", false, sink) {
		return
	}
	if why, ok := flowOnlyKeys[k]; ok {
		sink.warn("flow-only-key", e.Pos, k, fmt.Sprintf("%s is not an MM2 connector key (it is %s), so MM2 drops it at top level", k, why), fmt.Sprintf("write it per flow: %s.%s", flowExample(firstAlias(c), c), k))
		return
	}
	if k == "plugin.path" || k == "plugin.discovery" {
		return // MirrorMakerConfig builds its plugin loader from these top-level keys
	}
	if k == eosKey {
		return // kmm honours it at top level; checkExactlyOnce explains what MM2 does
	}
	if _, ok := workerKeyIndex[k]; ok {
		sink.warn("worker-key-top-level", e.Pos, k, fmt.Sprintf("%s is a Connect worker setting, which MM2 ignores at top level (only offset.storage*, config.storage*, status.storage*, *.converter*, task*, worker* and replication.policy* are copied)", k),
			fmt.Sprintf("write it per target cluster, e.g. %s.%s", target, k))
		return
	}
	if cp := clientPrefixOf(k); cp != "" && strings.HasPrefix(k, cp+".") {
		rest := k[len(cp)+1:]
		side := target
		if cp == "consumer" {
			side = firstAlias(c)
		}
		sink.warn("client-key-top-level", e.Pos, k, fmt.Sprintf("%s is ignored at top level: MM2 reads client settings per cluster", k), fmt.Sprintf("write %s.%s.%s (per cluster)", side, cp, rest))
		return
	}
	if isClientKey(k) {
		sink.warn("client-key-top-level", e.Pos, k, fmt.Sprintf("%s is a Kafka client setting, which MM2 ignores at top level", k), fmt.Sprintf("write it per cluster and client, e.g. %s.producer.%s or %s.consumer.%s", target, k, firstAlias(c), k))
		return
	}
	if i := strings.IndexByte(k, '.'); i > 0 {
		if a := didYouMean(k[:i], c.Clusters, true); a != "" && !aliases[k[:i]] {
			sink.warn("unknown-alias", e.Pos, k, fmt.Sprintf("%s: %q is not a cluster alias (clusters = %s), so MM2 ignores the key", k, k[:i], strings.Join(c.Clusters, ", ")), fmt.Sprintf("did you mean %s.%s? (aliases are case-sensitive)", a, k[i+1:]))
			return
		}
	}
	unknownKey(e, k, cands, "", sink)
}

func firstAlias(c *Config) string {
	if len(c.Clusters) > 0 {
		return c.Clusters[0]
	}
	return "A"
}

func unknownKey(e rawEntry, k string, cands []string, prefix string, sink *diagSink) {
	msg := fmt.Sprintf("unknown key %s: not an MM2, Connect or Kafka client setting here; MM2 ignores it", e.Key)
	hint := ""
	if s := didYouMean(k, cands, false); s != "" {
		hint = fmt.Sprintf("did you mean %s%s?", prefix, s)
	}
	sink.warn("unknown-key", e.Pos, e.Key, msg, hint)
}

// didYouMean returns the best candidate for s, or "". Candidates qualify
// by edit distance or when one's dot-separated words are a subsequence of
// the other's (sync.acls.enabled ⊂ sync.topic.acls.enabled).
func didYouMean(s string, cands []string, fold bool) string {
	type scored struct {
		c     string
		score int
	}
	var best []scored
	sw := strings.Split(s, ".")
	for _, c := range cands {
		a, b := s, c
		if fold {
			a, b = strings.ToLower(a), strings.ToLower(b)
		}
		if a == b {
			if fold && s != c {
				return c
			}
			continue
		}
		d := levenshtein(a, b)
		limit := 2
		if len(a) > 12 {
			limit = 3
		}
		if fold {
			// Aliases are short: only near-identical names qualify.
			switch {
			case len(a) >= 8:
				limit = 2
			case len(a) >= 4:
				limit = 1
			default:
				limit = 0
			}
		}
		score := -1
		if d <= limit {
			score = d
		}
		cw := strings.Split(c, ".")
		if len(sw) >= 2 && (isSubsequence(sw, cw) || isSubsequence(cw, sw)) && abs(len(sw)-len(cw)) <= 1 {
			if score < 0 || score > 1 {
				score = 1
			}
		}
		if score >= 0 {
			best = append(best, scored{c, score*100 + d})
		}
	}
	if len(best) == 0 {
		return ""
	}
	sort.Slice(best, func(i, j int) bool {
		if best[i].score != best[j].score {
			return best[i].score < best[j].score
		}
		return best[i].c < best[j].c
	})
	return best[0].c
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func isSubsequence(short, long []string) bool {
	if len(short) > len(long) {
		return false
	}
	i := 0
	for _, w := range long {
		if i < len(short) && short[i] == w {
			i++
		}
	}
	return i == len(short)
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Known classes kmm implements.
var (
	supportedPolicies = map[string]bool{
		"org.apache.kafka.connect.mirror.DefaultReplicationPolicy":  true,
		"org.apache.kafka.connect.mirror.IdentityReplicationPolicy": true,
	}
	defaultClasses = map[string]string{
		"topic.filter.class":           "org.apache.kafka.connect.mirror.DefaultTopicFilter",
		"group.filter.class":           "org.apache.kafka.connect.mirror.DefaultGroupFilter",
		"config.property.filter.class": "org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter",
		"forwarding.admin.class":       "org.apache.kafka.clients.admin.ForwardingAdmin",
	}
)

// checkFlow reports what kmm cannot honour in a flow, and the connector
// configs MM2 itself would reject.
func (c *Config) checkFlow(f *FlowConfig, sink *diagSink) {
	conn := f.Connector
	at := func(k string) (Pos, string) {
		v := conn[k]
		return v.Origin.Pos, v.Origin.Key
	}
	if v, ok := conn["replication.policy.class"]; ok {
		cls := javaTrim(v.Resolved())
		if !supportedPolicies[cls] {
			sink.err("unsupported-class", v.Origin.Pos, v.Origin.Key, fmt.Sprintf("replication.policy.class %s is not supported by kmm (it cannot load Java classes)", cls),
				"kmm implements DefaultReplicationPolicy and IdentityReplicationPolicy; if yours keeps topic names unchanged (a \"prefixless\" policy), write replication.policy.class = "+IdentityPolicyClass+" (it names MM2's internal topics as DefaultReplicationPolicy does)")
		}
	}
	if !f.Enabled {
		return
	}
	if n := f.Settings.TasksMax; n > MaxPipelines {
		pos, key := at("tasks.max")
		sink.warn("tasks-max-capped", pos, key,
			fmt.Sprintf("tasks.max = %d: kmm runs at most %d pipelines per flow (each is a librdkafka consumer and producer with their own threads and connections); MM2 caps its task count at run time at the number of partitions it replicates, which kmm does not know before it starts, so partitions are spread over %d pipelines and any beyond the partition count stay idle", n, MaxPipelines, MaxPipelines),
			fmt.Sprintf("set tasks.max to at most the number of partitions the flow replicates (kmm uses up to %d)", MaxPipelines))
	}
	for k, def := range defaultClasses {
		if v, ok := conn[k]; ok && javaTrim(v.Resolved()) != def {
			pos, key := at(k)
			sink.err("unsupported-class", pos, key, fmt.Sprintf("%s %s is not supported by kmm (it cannot load Java classes)", k, javaTrim(v.Resolved())), fmt.Sprintf("remove it to use %s's built-in behaviour", def[strings.LastIndexByte(def, '.')+1:]))
		}
	}
	for _, k := range []string{"transforms", "predicates"} {
		if v, ok := conn[k]; ok && len(nonEmpty(ParseList(v.Resolved()))) > 0 {
			pos, key := at(k)
			sink.err("unsupported-smt", pos, key, fmt.Sprintf("%s = %s: kmm does not run Connect single message transforms, which would change the replicated records", k, v.Resolved()), "remove it, or keep this flow on MM2")
		}
	}
	for _, k := range []string{"key.converter", "value.converter", "header.converter"} {
		if v, ok := conn[k]; ok && javaTrim(v.Resolved()) != byteArrayConverter {
			pos, key := at(k)
			sink.err("unsupported-converter", pos, key, fmt.Sprintf("%s = %s: MM2 would re-encode the replicated records with it; kmm always copies the raw bytes (ByteArrayConverter)", k, javaTrim(v.Resolved())), "remove it (MM2's default is ByteArrayConverter)")
		}
	}
	if v, ok := conn["metric.reporters"]; ok && javaTrim(v.Resolved()) != "org.apache.kafka.common.metrics.JmxReporter" {
		pos, key := at("metric.reporters")
		sink.warn("metric-reporters", pos, key, "metric.reporters: kmm does not load Java metric reporters; it exposes its own metrics", "")
	}
	// MirrorSourceConnector.validate (3.9+): offset-syncs keys with
	// emit.offset-syncs.enabled=false (raw compare) reject the whole config.
	if v, ok := conn["emit.offset-syncs.enabled"]; ok && v.Resolved() == "false" {
		var offending []string
		for k := range conn {
			if strings.HasPrefix(k, "offset-syncs-") || strings.HasPrefix(k, "offset-syncs.topic.") {
				offending = append(offending, k)
			}
		}
		sort.Strings(offending)
		if len(offending) > 0 {
			pos, key := at("emit.offset-syncs.enabled")
			sink.err("mm2-rejects", pos, key, fmt.Sprintf("MM2 rejects this MirrorSourceConnector config (\"can't setup offset-syncs feature while emit.offset-syncs.enabled set to false\") because the flow also sets %s: no data is replicated", strings.Join(offending, ", ")), "remove the offset-syncs.* settings, or emit.offset-syncs.enabled = false")
		}
		pos, key := at("emit.offset-syncs.enabled")
		sink.warn("mm2-rejects", pos, key, "with emit.offset-syncs.enabled = false MM2 rejects the MirrorCheckpointConnector config (\"can't run without offset syncs\"): no checkpoints and no group offset sync for this flow", "")
	}
	if v, ok := conn["emit.checkpoints.enabled"]; ok && v.Resolved() == "false" && f.Settings.SyncGroupOffsets {
		pos, key := at("emit.checkpoints.enabled")
		sink.warn("checkpoints-off", pos, key, "emit.checkpoints.enabled = false stops the checkpoint connector, so sync.group.offsets.enabled = true has no effect", "")
	}
	c.checkReplicationProducer(f, sink)
	if v, ok := conn["exactly.once.support"]; ok && javaTrim(v.Resolved()) == "required" {
		pos, key := at("exactly.once.support")
		if !f.Settings.ExactlyOnce {
			sink.warn("exactly-once", pos, key, "exactly.once.support = required, but exactly.once.source.support is not enabled for "+f.Target+": kmm (like MM2's worker) replicates this flow at least once", "write "+f.Target+".exactly.once.source.support = enabled")
		}
	}
	c.checkExactlyOnce(f, sink)
}

// checkNaming explains names MM2 makes differently from its defaults: an empty
// replication.policy.separator (once per line that sets it) and source.cluster.alias /
// target.cluster.alias overrides (once per line), for the flows that replicate.
func (c *Config) checkNaming(sink *diagSink) {
	type group struct {
		origin Origin
		flows  []*FlowConfig
	}
	var seps []*group
	aliasKeys := map[string]*group{}
	var aliasOrder []string
	for _, f := range c.Flows {
		if !f.Enabled || f.TopicFilter == nil {
			continue
		}
		if _, err := f.Policy(); err != nil {
			continue
		}
		s := f.Settings
		if s.ReplicationPolicySeparatorSet && s.ReplicationPolicySeparator == "" {
			o := f.Connector["replication.policy.separator"].Origin
			var g *group
			for _, x := range seps {
				if x.origin.Pos == o.Pos && x.origin.Key == o.Key {
					g = x
				}
			}
			if g == nil {
				g = &group{origin: o}
				seps = append(seps, g)
			}
			g.flows = append(g.flows, f)
			continue
		}
		for _, k := range []string{"source.cluster.alias", "target.cluster.alias"} {
			own := f.Source
			if k == "target.cluster.alias" {
				own = f.Target
			}
			v := f.Connector[k]
			if v.Origin.IsDefault() || javaTrim(v.Resolved()) == own {
				continue
			}
			id := v.Origin.Pos.String() + " " + v.Origin.Key
			if aliasKeys[id] == nil {
				aliasKeys[id] = &group{origin: v.Origin}
				aliasOrder = append(aliasOrder, id)
			}
			aliasKeys[id].flows = append(aliasKeys[id].flows, f)
		}
	}
	for _, g := range seps {
		var per []string
		var reverse []string
		for _, f := range g.flows {
			per = append(per, namingLine(f))
			if rf := c.Flow(f.Target + "->" + f.Source); rf == nil || !rf.Enabled {
				reverse = append(reverse, f.Target+"->"+f.Source)
			}
		}
		msg := "replication.policy.separator is empty: MM2 4.1.1 accepts this and kmm reads it the same way, so it finds the topics an MM2 with this file wrote. " +
			strings.Join(per, " ") +
			" Without a separator a topic's name cannot say which cluster it came from, so MM2's cycle detection cannot work:"
		if len(reverse) < len(g.flows) {
			msg += " the flows in both directions copy every topic back and forth forever."
		} else {
			msg += " a flow in the other direction (" + strings.Join(reverse, ", ") + ") would copy every topic back and forth forever."
		}
		sink.warn("separator-empty", g.origin.Pos, g.origin.Key, msg,
			"to keep topic names, use the supported replication.policy.class = "+IdentityPolicyClass+
				" (with the default separator); it names the internal topics differently, so an MM2 or kmm that switches starts without these offset syncs and checkpoints")
	}
	for _, id := range aliasOrder {
		g := aliasKeys[id]
		var per []string
		for _, f := range g.flows {
			per = append(per, namingLine(f))
		}
		sink.warn("cluster-alias-override", g.origin.Pos, g.origin.Key,
			fmt.Sprintf("%s replaces the flow's own alias in every name MM2's connectors make (MM2 uses it, and so does kmm): %s", g.origin.Key, strings.Join(per, " ")),
			"remove it unless the names above are what you want: by default MM2 names everything after the flow's own aliases")
	}
}

// namingLine says what names a flow makes: a topic's remote name and the internal topics.
func namingLine(f *FlowConfig) string {
	p, _ := f.Policy()
	n, _ := f.Names()
	remote := p.FormatRemoteTopic(n.SourceAlias, "orders")
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ", f.Name())
	switch {
	case f.Topic("orders").Code == VerdictCycle:
		fmt.Fprintf(&b, "every topic counts as a cycle (the policy says it came from %q, the target's alias here), so nothing but heartbeats is replicated", n.TargetAlias)
	case remote == "orders":
		b.WriteString("topics keep their names (orders -> orders)")
	default:
		fmt.Fprintf(&b, "orders -> %s", remote)
	}
	if v := f.Connector["source.cluster.alias"]; !v.Origin.IsDefault() {
		fmt.Fprintf(&b, ", as source.cluster.alias = %q", n.SourceAlias)
		if p := v.Origin.Pos; p.Line > 0 {
			fmt.Fprintf(&b, " (line %d)", p.Line)
		}
	}
	fmt.Fprintf(&b, "; offset syncs in %s on %s; checkpoints in %s and heartbeats in %s (keyed %q, %q) on %s.",
		n.OffsetSyncsTopic, map[bool]string{true: f.Source, false: f.Target}[n.OffsetSyncsLocation == "source"],
		n.CheckpointsTopic, n.HeartbeatsTopic, n.SourceAlias, n.TargetAlias, f.Target)
	return b.String()
}

// checkReplicationProducer: kmm's replication producer is idempotent with acks=all (records
// once and in order), which librdkafka allows only with at most 5 requests in flight and with
// retries; the engine replaces other values, and this says so at their line.
func (c *Config) checkReplicationProducer(f *FlowConfig, sink *diagSink) {
	cc := f.ClientConfig(RoleTargetProducer)
	if cc == nil {
		return
	}
	at := func(rdKey string) (Pos, string) {
		for _, jk := range strings.Split(cc.Librdkafka.Origin[rdKey], ",") {
			if v, ok := cc.Java[strings.TrimSpace(jk)]; ok {
				return v.Origin.Pos, v.Origin.Key
			}
		}
		return Pos{}, rdKey
	}
	if n, err := strconv.Atoi(cc.Librdkafka.Config["max.in.flight.requests.per.connection"]); err == nil && n > 5 {
		pos, key := at("max.in.flight.requests.per.connection")
		sink.warn("replication-producer", pos, key, fmt.Sprintf("%s = %d: kmm's replication producer is idempotent (records once and in order), and librdkafka allows at most 5 requests in flight then: kmm uses 5 for it", key, n),
			"write 5 or less")
	}
	if cc.Librdkafka.Config["retries"] == "0" {
		pos, key := at("retries")
		sink.warn("replication-producer", pos, key, key+" = 0: kmm's replication producer is idempotent (records once and in order), which needs retries: kmm keeps librdkafka's default for it",
			"remove it")
	}
}

// checkFlowSecurityKeys: a valid flow-level security.protocol, ssl.* or sasl.* key reaches no
// client in MM2 (its clients read them per cluster: source.cluster.*, target.cluster.*, and the
// consumer./producer./admin. prefixes), so it changes nothing; say which key would.
func (c *Config) checkFlowSecurityKeys(f *FlowConfig, sink *diagSink) {
	prefix := f.Name() + "."
	for _, k := range f.Connector.Keys() {
		v := f.Connector[k]
		if !isSecurityKey(k) || !strings.HasPrefix(v.Origin.Key, prefix) || sink.hasErrorAt(v.Origin.Pos, v.Origin.Key) {
			continue
		}
		sink.warn("flow-security-key", v.Origin.Pos, v.Origin.Key,
			fmt.Sprintf("%s changes nothing: MM2's clients take %s from each cluster's settings, not from the flow's (the connectors only check its value)", v.Origin.Key, k),
			fmt.Sprintf("write %s.%s for the source cluster and %s.%s for the target", f.Source, k, f.Target, k))
	}
}

// legacyExcludeShown renders what MM2 4.x uses instead of a legacy blacklist key: the exclude
// key set elsewhere (top level for a flow key), or its default.
func legacyExcludeShown(c *Config, where, key string) string {
	if where != "" {
		if x, ok := c.raw.get(key); ok {
			return fmt.Sprintf("%s = %s (line %d)", key, x.Value, x.Pos.Line)
		}
	}
	if k := connectorKeyIndex[key]; k != nil {
		return fmt.Sprintf("the default %s = %s", key, k.Default)
	}
	return key
}

// propertyLine writes key = value as a properties line that reads back as exactly key and
// value: backslashes doubled, leading whitespace and control characters escaped, non-ASCII
// characters as \uXXXX.
func propertyLine(key, value string) string {
	var b strings.Builder
	saveConvert(&b, key, true)
	b.WriteString(" = ")
	for i, r := range value {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case (r == ' ' || r == '\t' || r == '\f') && i == 0:
			b.WriteString(`\`)
			b.WriteRune(r)
		case r < 0x20 || r > 0x7e:
			var tmp strings.Builder
			saveConvert(&tmp, string(r), false)
			b.WriteString(tmp.String())
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
