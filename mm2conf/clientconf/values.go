package clientconf

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// checkType validates v against the Java ConfigDef type, as Java would when building the client.
func (s *state) checkType(key string, st tableEntry, v string) bool {
	var err error
	what := ""
	switch st.Type {
	case "INT":
		_, err = strconv.ParseInt(v, 10, 32)
		what = "an int"
	case "LONG":
		_, err = strconv.ParseInt(v, 10, 64)
		what = "a long"
	case "SHORT":
		_, err = strconv.ParseInt(v, 10, 16)
		what = "a short"
	case "DOUBLE":
		_, err = strconv.ParseFloat(v, 64)
		what = "a double"
	case "BOOLEAN":
		if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
			err = fmt.Errorf("not a boolean")
		}
		what = "true or false"
	}
	if err != nil {
		s.errorf(key, "", "invalid value %s: expected %s", s.show(key, v), what)
		return false
	}
	return true
}

// show quotes a value for a message, or hides it if the key is a secret.
func (s *state) show(key, v string) string {
	if IsSecretKey(key) {
		return hidden
	}
	return strconv.Quote(v)
}

// mapValue handles Action Map.
func (s *state) mapValue(key string, st tableEntry, v string) {
	out := v
	if st.conv != nil {
		var ok bool
		if out, ok = st.conv(s, key, v); !ok {
			return
		}
	}
	target := st.TargetFor(s.role)
	if target == "" {
		return
	}
	out, ok := s.fitRange(key, target, out)
	if !ok {
		return
	}
	if IsSecretKey(key) {
		s.setSecret(target, out, key)
	} else {
		s.set(target, out, key)
	}
}

// fitRange checks a value against the librdkafka property's documented range: numbers out of
// range are clamped with a warning; enum values must be one of the documented ones.
func (s *state) fitRange(key, target, v string) (string, bool) {
	p, ok := rdkafkaProps[target]
	if !ok {
		return v, true
	}
	if p.numeric {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return v, true // conversions produce numbers; Java types were checked before
		}
		switch {
		case n < p.min:
			s.warnf(key, "", "value %d is below librdkafka's minimum for %s (%d); using %d", n, target, p.min, p.min)
			return strconv.FormatInt(p.min, 10), true
		case n > p.max:
			s.warnf(key, "", "value %d is above librdkafka's maximum for %s (%d); using %d", n, target, p.max, p.max)
			return strconv.FormatInt(p.max, 10), true
		}
		return v, true
	}
	if len(p.enum) > 0 {
		for _, e := range p.enum {
			if strings.EqualFold(e, v) {
				return v, true
			}
		}
		s.errorf(key, "", "value %s has no librdkafka equivalent (%s accepts %s)", s.show(key, v), target, strings.Join(p.enum, ", "))
		return "", false
	}
	return v, true
}

// convEnum accepts the given values case-insensitively and lower-cases them.
func convEnum(allowed ...string) func(s *state, key, v string) (string, bool) {
	return func(s *state, key, v string) (string, bool) {
		for _, a := range allowed {
			if strings.EqualFold(a, v) {
				return a, true
			}
		}
		s.errorf(key, "", "invalid value %s: expected one of %s", s.show(key, v), strings.Join(allowed, ", "))
		return "", false
	}
}

func convBool(_ *state, _ string, v string) (string, bool) { return strings.ToLower(v), true }

func convAutoOffsetReset(s *state, key, v string) (string, bool) {
	switch lv := strings.ToLower(v); {
	case lv == "earliest" || lv == "latest":
		return lv, true
	case lv == "none":
		return "error", true
	case strings.HasPrefix(lv, "by_duration:"):
		s.errorf(key, "use earliest or latest", "auto.offset.reset=by_duration (KIP-1106) is not supported by librdkafka")
		return "", false
	}
	s.errorf(key, "", "invalid value %s: expected earliest, latest or none", s.show(key, v))
	return "", false
}

func convBatchSize(s *state, key, v string) (string, bool) {
	if n, _ := strconv.ParseInt(v, 10, 64); n <= 0 {
		// Java: batch.size=0 disables batching, one record per request.
		s.set("batch.num.messages", "1", key)
		return "", false
	}
	return v, true
}

func convDNSLookup(s *state, key, v string) (string, bool) {
	switch lv := strings.ToLower(v); lv {
	case "use_all_dns_ips", "resolve_canonical_bootstrap_servers_only":
		return lv, true
	case "default":
		s.warnf(key, "remove the setting or use use_all_dns_ips", "the pre-3.0 value \"default\" no longer exists (Java 3.0+ rejects it); using use_all_dns_ips")
		return "use_all_dns_ips", true
	}
	s.errorf(key, "", "invalid value %s: expected use_all_dns_ips or resolve_canonical_bootstrap_servers_only", s.show(key, v))
	return "", false
}

func convIdle(_ *state, _ string, v string) (string, bool) {
	if n, _ := strconv.ParseInt(v, 10, 64); n < 0 {
		return "0", true
	}
	return v, true
}

func convSocketBuf(_ *state, _ string, v string) (string, bool) {
	if n, _ := strconv.ParseInt(v, 10, 64); n < 0 {
		return "0", true
	}
	return v, true
}

// hostPortPattern is Kafka's Utils.HOST_PORT_PATTERN (4.1.1), which ClientUtils applies with
// Matcher.matches() to every bootstrap.servers entry: an optional scheme, a host made of letters,
// digits and "-%._:" (IPv6 in brackets), and a decimal port.
var hostPortPattern = regexp.MustCompile(`^(?:[0-9a-zA-Z\-%._]*://)?\[?([0-9a-zA-Z\-%._:]*)\]?:([0-9]+)$`)

// convBootstrap validates bootstrap.servers as Java's ClientUtils.parseAndValidateAddresses
// does before any connection (the DNS lookup aside): an entry the pattern refuses is "Invalid
// url", a port Java cannot take is "Invalid port"; either way MM2 fails at start-up.
func convBootstrap(s *state, key, v string) (string, bool) {
	var out []string
	for _, e := range splitList(v) {
		if e == "" {
			continue
		}
		m := hostPortPattern.FindStringSubmatch(e)
		if m == nil {
			s.errorf(key, bootstrapHint(e), "invalid address %q: Kafka's client refuses it (\"Invalid url in bootstrap.servers\"), so MM2 fails at start-up", e)
			return "", false
		}
		if m[1] == "" {
			s.errorf(key, "write host:port, for example broker1:9092", "invalid address %q: no host", e)
			return "", false
		}
		if n, err := strconv.Atoi(m[2]); err != nil || n > 65535 {
			s.errorf(key, "write host:port with a port from 0 to 65535", "invalid port in address %q (\"Invalid port in bootstrap.servers\")", e)
			return "", false
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		s.errorf(key, "set bootstrap.servers to the cluster's brokers, for example A.bootstrap.servers=broker1:9092", "bootstrap.servers is empty")
		return "", false
	}
	return strings.Join(out, ","), true
}

// bootstrapHint says how to fix an address Kafka refuses, for the mistakes real files make.
func bootstrapHint(e string) string {
	switch {
	case strings.HasPrefix(e, "="):
		return "the line has one '=' too many: write the address without the leading '=' (" + strings.TrimLeft(e, "=") + ")"
	case strings.Contains(e, "${"):
		return "a ${NAME} left by a template is not a config-provider reference (those read ${provider:[path:]key} with config.providers declared, e.g. ${env:NAME}); fill in the template first, e.g. with envsubst"
	case strings.ContainsAny(e, "<>"):
		return "replace the placeholder <...> with the broker's host name"
	case !strings.Contains(e, ":"):
		return "write host:port, for example broker1:9092"
	}
	return "write host:port with letters, digits, '-', '.', '_' and '%' in the host, for example broker1:9092"
}

// defaultAssignors is Java's default partition.assignment.strategy (3.0+).
const defaultAssignors = "org.apache.kafka.clients.consumer.RangeAssignor,org.apache.kafka.clients.consumer.CooperativeStickyAssignor"

var assignorNames = map[string]string{
	"org.apache.kafka.clients.consumer.RangeAssignor":             "range",
	"org.apache.kafka.clients.consumer.RoundRobinAssignor":        "roundrobin",
	"org.apache.kafka.clients.consumer.CooperativeStickyAssignor": "cooperative-sticky",
	"range":              "range",
	"roundrobin":         "roundrobin",
	"cooperative-sticky": "cooperative-sticky",
}

func convAssignors(s *state, key, v string) (string, bool) {
	var out, dropped []string
	for _, c := range splitList(v) {
		c = strings.TrimPrefix(c, "class ")
		if n, ok := assignorNames[c]; ok {
			out = append(out, n)
		} else if c != "" {
			dropped = append(dropped, c)
		}
	}
	if len(dropped) > 0 {
		s.warnf(key, "", "assignor(s) %s have no librdkafka equivalent; dropped (StickyAssignor is eager and librdkafka only has cooperative-sticky)", strings.Join(dropped, ", "))
	}
	if len(out) == 0 {
		return "", false
	}
	// librdkafka cannot mix eager and cooperative assignors. Java's group uses the protocol of
	// the first assignor (the default "range, cooperative-sticky" runs eager range until every
	// member drops range), so keep the assignors of the first one's kind.
	firstCoop := out[0] == "cooperative-sticky"
	var kept []string
	for _, n := range out {
		if (n == "cooperative-sticky") == firstCoop {
			kept = append(kept, n)
		}
	}
	if len(kept) < len(out) && normValue("LIST", v) != defaultAssignors {
		s.warnf(key, "", "librdkafka cannot mix cooperative-sticky with eager assignors; using %s", strings.Join(kept, ","))
	}
	return strings.Join(kept, ","), true
}

// specialHandlers translate single Special keys outside the security section.
var specialHandlers = map[string]func(s *state, key, v string){
	"retries": func(s *state, key, v string) {
		if s.role == Producer {
			out, ok := s.fitRange(key, "retries", v)
			if ok {
				s.set("retries", out, key)
			}
			return
		}
		st := settingByKey[key]
		if st.isDefault(v) || s.props[key].Pos == "default" {
			s.ignore(key, "the admin client's retries have no librdkafka equivalent")
			return
		}
		s.warnf(key, "", "the admin client's retries have no librdkafka equivalent (kmm retries admin calls itself); ignored")
	},
	"partitioner.class":       func(s *state, key, v string) { s.partitioner() },
	"partitioner.ignore.keys": func(s *state, key, v string) { s.partitioner() },
}

const (
	partDefault       = "org.apache.kafka.clients.producer.internals.DefaultPartitioner"
	partUniformSticky = "org.apache.kafka.clients.producer.UniformStickyPartitioner"
	partRoundRobin    = "org.apache.kafka.clients.producer.RoundRobinPartitioner"
)

// partitioner translates partitioner.class and partitioner.ignore.keys (once).
func (s *state) partitioner() {
	if _, done := s.res.Config["partitioner"]; done {
		return
	}
	cls := normValue("CLASS", s.val("partitioner.class"))
	ignoreKeys := strings.EqualFold(s.val("partitioner.ignore.keys"), "true")
	switch {
	case cls == "" && ignoreKeys:
		s.set("partitioner", "random", "partitioner.ignore.keys")
	case cls == "":
		if s.has("partitioner.ignore.keys") {
			s.set("partitioner", "murmur2_random", "partitioner.ignore.keys")
		}
	case cls == partDefault:
		s.set("partitioner", "murmur2_random", "partitioner.class")
	case cls == partUniformSticky:
		s.set("partitioner", "random", "partitioner.class")
	default:
		what := "custom partitioner classes cannot run in kmm"
		if cls == partRoundRobin {
			what = "librdkafka has no round-robin partitioner"
		}
		s.warnf("partitioner.class", "", "%s; MM2 writes replicated records to explicit partitions, so kmm uses Java's default (murmur2) partitioner for the few records without one", what)
		s.set("partitioner", "murmur2_random", "partitioner.class")
	}
}

// compound handles settings that depend on each other, after the per-key pass.
func (s *state) compound() {
	switch s.role {
	case Producer:
		s.compressionLevel()
		s.idempotence()
	case Consumer:
		s.consumerLimits()
	}
	s.backoffLimits()
	if _, ok := s.props["bootstrap.servers"]; !ok {
		s.errorf("bootstrap.servers", "set <cluster>.bootstrap.servers in the MM2 file", "bootstrap.servers is not set")
	}
}

func (s *state) compressionLevel() {
	codec := strings.ToLower(s.val("compression.type"))
	levelKeys := map[string]string{"gzip": "compression.gzip.level", "lz4": "compression.lz4.level", "zstd": "compression.zstd.level"}
	for c, k := range levelKeys {
		if c != codec {
			s.ignore(k, "only used when compression.type="+c)
		}
	}
	k, ok := levelKeys[codec]
	if !ok || !s.has(k) {
		return
	}
	n, err := strconv.ParseInt(s.val(k), 10, 32)
	if err != nil {
		return // reported by checkType
	}
	lo, hi := int64(-1), int64(12)
	switch codec {
	case "gzip":
		hi = 9
	case "zstd":
		if n != -1 && n < 1 {
			s.warnf(k, "", "zstd level %d (a fast level) has no librdkafka equivalent; using 1", n)
			n = 1
		}
	}
	if n > hi {
		s.warnf(k, "", "level %d is above librdkafka's maximum for %s (%d); using %d", n, codec, hi, hi)
		n = hi
	}
	if n < lo {
		n = lo
	}
	s.set("compression.level", strconv.FormatInt(n, 10), k)
}

// idempotence reproduces Java's enable.idempotence rules (3.0+ default true, quietly turned
// off by conflicting settings unless explicitly requested).
func (s *state) idempotence() {
	acks := strings.ToLower(s.val("acks"))
	if acks == "" {
		acks = "all"
	}
	retries := int64(math.MaxInt32)
	if v, ok := s.get("retries"); ok {
		retries, _ = strconv.ParseInt(v.Value, 10, 64)
	}
	inflight := int64(5)
	if v, ok := s.get("max.in.flight.requests.per.connection"); ok {
		inflight, _ = strconv.ParseInt(v.Value, 10, 64)
	}
	var conflicts []string
	if acks != "all" && acks != "-1" {
		conflicts = append(conflicts, "acks="+acks)
	}
	if retries == 0 {
		conflicts = append(conflicts, "retries=0")
	}
	if inflight > 5 {
		conflicts = append(conflicts, fmt.Sprintf("max.in.flight.requests.per.connection=%d", inflight))
	}
	explicit, set := s.get("enable.idempotence")
	enabled := !set || strings.EqualFold(explicit.Value, "true")
	if set && enabled && len(conflicts) > 0 {
		s.errorf("enable.idempotence", "set acks=all, retries>0 and max.in.flight.requests.per.connection<=5, or enable.idempotence=false",
			"enable.idempotence=true conflicts with %s (Java refuses this too)", strings.Join(conflicts, ", "))
		return
	}
	if !set {
		enabled = len(conflicts) == 0
		if enabled {
			s.setDefault("enable.idempotence", "true")
		}
	}
	if s.has("transactional.id") && !enabled {
		s.errorf("transactional.id", "remove the conflicting settings or transactional.id",
			"transactional.id needs idempotence, which is off (%s)", idemReason(set, conflicts))
	}
}

func idemReason(set bool, conflicts []string) string {
	if set {
		return "enable.idempotence=false"
	}
	return strings.Join(conflicts, ", ")
}

// consumerLimits keeps librdkafka's cross-property checks from rejecting Java-valid settings.
func (s *state) consumerLimits() {
	if v, ok := s.res.Config["fetch.max.bytes"]; ok {
		n, _ := strconv.ParseInt(v, 10, 64)
		if n < 1000000 { // librdkafka: fetch.max.bytes >= message.max.bytes (default 1000000)
			m := n
			if m < 1000 {
				m = 1000
				s.set("fetch.max.bytes", "1000", "fetch.max.bytes")
				s.warnf("fetch.max.bytes", "", "librdkafka needs fetch.max.bytes >= 1000; using 1000")
			}
			s.set("message.max.bytes", strconv.FormatInt(m, 10), "fetch.max.bytes")
		}
	}
	if strings.EqualFold(s.val("group.protocol"), "consumer") {
		for _, k := range []string{"session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy"} {
			if _, ok := s.res.Config[k]; ok {
				delete(s.res.Config, k)
				delete(s.res.Origin, k)
				s.warnf(k, "", "not a client setting with group.protocol=consumer (the broker decides); ignored")
			}
		}
		return
	}
	sess, okS := s.res.Config["session.timeout.ms"]
	poll, okP := s.res.Config["max.poll.interval.ms"]
	if okS {
		ns, _ := strconv.ParseInt(sess, 10, 64)
		np := int64(300000)
		if okP {
			np, _ = strconv.ParseInt(poll, 10, 64)
		}
		if np < ns {
			s.set("max.poll.interval.ms", sess, "session.timeout.ms")
			key := "session.timeout.ms"
			if okP {
				key = "max.poll.interval.ms"
			}
			s.warnf(key, "", "librdkafka requires max.poll.interval.ms >= session.timeout.ms; using %s", sess)
		}
	}
}

func (s *state) backoffLimits() {
	b, okB := s.res.Config["reconnect.backoff.ms"]
	if !okB {
		return
	}
	nb, _ := strconv.ParseInt(b, 10, 64)
	nm := int64(10000) // librdkafka default
	if m, ok := s.res.Config["reconnect.backoff.max.ms"]; ok {
		nm, _ = strconv.ParseInt(m, 10, 64)
	}
	if nm < nb {
		s.set("reconnect.backoff.max.ms", b, "reconnect.backoff.ms")
	}
}

// JavaDefault is a Java client default that kmm sets explicitly because librdkafka's
// default differs in a way that changes what is read or written.
type JavaDefault struct {
	Role    Role
	Rdkafka string
	Value   string
	Why     string
}

var javaDefaults = []JavaDefault{
	{Consumer, "isolation.level", "read_uncommitted", "Java consumers read uncommitted records unless told otherwise; librdkafka's default is read_committed"},
	{Producer, "partitioner", "murmur2_random", "Java's default partitioner hashes keys with murmur2; librdkafka's default (consistent_random) uses CRC32, which would put keyed records in other partitions"},
	{Producer, "enable.idempotence", "true", "Java 3.0+ producers are idempotent by default unless acks, retries or max.in.flight conflict; librdkafka's default is false"},
}

// JavaDefaults lists the Java defaults Translate sets when the setting is absent.
func JavaDefaults() []JavaDefault {
	out := make([]JavaDefault, len(javaDefaults))
	copy(out, javaDefaults)
	return out
}

func (s *state) javaDefaults() {
	for _, d := range javaDefaults {
		if d.Role != s.role || d.Rdkafka == "enable.idempotence" { // idempotence(): conditional
			continue
		}
		s.setDefault(d.Rdkafka, d.Value)
	}
	if _, ok := s.res.Config["security.protocol"]; !ok {
		s.setDefault("security.protocol", "plaintext")
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
