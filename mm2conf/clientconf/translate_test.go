package clientconf

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// props builds a Prop map with positions "t.properties:N" in argument order.
func props(kv ...string) map[string]Prop {
	m := map[string]Prop{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = Prop{Value: kv[i+1], Pos: fmt.Sprintf("t.properties:%d", i/2+1)}
	}
	return m
}

func withBootstrap(m map[string]Prop) map[string]Prop {
	if _, ok := m["bootstrap.servers"]; !ok {
		m["bootstrap.servers"] = Prop{Value: "h:9092", Pos: "t.properties:99"}
	}
	return m
}

func diagStrings(ds []Diag) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.String())
	}
	return out
}

// expectDiags checks that each want ("E:substr" or "W:substr") matches a distinct diagnostic
// and that there are no others.
func expectDiags(t *testing.T, got []Diag, want []string) {
	t.Helper()
	used := make([]bool, len(got))
	for _, w := range want {
		sev, sub := Warning, w
		if strings.HasPrefix(w, "E:") {
			sev, sub = Error, w[2:]
		} else if strings.HasPrefix(w, "W:") {
			sub = w[2:]
		}
		found := false
		for i, d := range got {
			if !used[i] && d.Severity == sev && strings.Contains(d.String(), sub) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			t.Errorf("missing diagnostic %s\n got: %s", w, strings.Join(diagStrings(got), "\n      "))
		}
	}
	for i, d := range got {
		if !used[i] {
			t.Errorf("unexpected diagnostic: %s", d)
		}
	}
}

var sampleValues = map[string]string{
	"bootstrap.servers":     "h1:9092,h2:9093",
	"client.id":             "cid",
	"client.rack":           "rack-1",
	"group.id":              "g1",
	"group.instance.id":     "i1",
	"group.remote.assignor": "uniform",
	"transactional.id":      "tx-1",
}

func sampleValue(s Setting) string {
	if v, ok := sampleValues[s.Java]; ok {
		return v
	}
	if s.Default != "" {
		return s.Default
	}
	switch s.Type {
	case "INT", "LONG", "SHORT":
		return "1234"
	case "BOOLEAN":
		return "true"
	case "DOUBLE":
		return "0.5"
	}
	return "x"
}

func nonDefaultValue(s Setting) string {
	switch s.Type {
	case "INT", "LONG", "SHORT":
		return "7"
	case "DOUBLE":
		return "0.5"
	case "BOOLEAN":
		if strings.EqualFold(s.Default, "true") {
			return "false"
		}
		return "true"
	}
	return "com.example.Custom"
}

// contextFor adds what a key needs to be read at all (a security protocol, a SASL mechanism).
func contextFor(s Setting) []string {
	switch {
	case s.mech == "OAUTHBEARER":
		return []string{"security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "OAUTHBEARER",
			"sasl.login.callback.handler.class", oidcHandler, "sasl.oauthbearer.token.endpoint.url", "https://idp/token",
			"sasl.jaas.config", oauthModule + ` required clientId="c" clientSecret="s";`}
	case strings.HasPrefix(s.Java, "sasl."):
		return []string{"security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "PLAIN",
			"sasl.jaas.config", plainMod + ` required username="u" password="p";`}
	case strings.HasPrefix(s.Java, "ssl."):
		return []string{"security.protocol", "SSL"}
	}
	return nil
}

func roles(s Setting) []Role {
	var out []Role
	m := s.rolesMask()
	for _, r := range []Role{Producer, Consumer, Admin} {
		if m.has(r) {
			out = append(out, r)
		}
	}
	return out
}

// TestEveryMapSetting feeds each Map setting, in each role that defines it, a valid value and
// checks that it reaches its librdkafka property with its origin recorded.
func TestEveryMapSetting(t *testing.T) {
	for _, s := range Settings() {
		if s.Action != ActionMap {
			continue
		}
		for _, r := range roles(s) {
			t.Run(s.Java+"/"+string(r), func(t *testing.T) {
				v := sampleValue(s)
				res := Translate(withBootstrap(props(append(contextFor(s), s.Java, v)...)), r, Options{})
				for _, d := range res.Diags {
					t.Errorf("unexpected diagnostic: %s", d)
				}
				target := s.TargetFor(r)
				got, ok := res.Config[target]
				if !ok {
					t.Fatalf("%s=%s: %s not set; config %v", s.Java, v, target, res.Config)
				}
				if !strings.Contains(res.Origin[target], s.Java) {
					t.Errorf("origin of %s = %q, want it to name %s", target, res.Origin[target], s.Java)
				}
				if s.conv == nil && got != v {
					t.Errorf("%s=%s gave %s=%s", s.Java, v, target, got)
				}
			})
		}
	}
}

// TestEveryJavaOnlySetting: Warn settings warn with a non-default value and stay quiet with the
// default; Refuse settings are errors with a non-default value; Drop settings are ignored.
func TestEveryJavaOnlySetting(t *testing.T) {
	for _, s := range Settings() {
		if s.Action != ActionWarn && s.Action != ActionRefuse && s.Action != ActionDrop {
			continue
		}
		for _, r := range roles(s) {
			t.Run(s.Java+"/"+string(r), func(t *testing.T) {
				res := Translate(withBootstrap(props(append(contextFor(s), s.Java, nonDefaultValue(s))...)), r, Options{})
				switch s.Action {
				case ActionWarn:
					expectDiags(t, res.Diags, []string{"W:" + s.Java + ": "})
				case ActionRefuse:
					expectDiags(t, res.Diags, []string{"E:" + s.Java + ": "})
				case ActionDrop:
					expectDiags(t, res.Diags, nil)
					if _, ok := res.Ignored[s.Java]; !ok {
						t.Errorf("%s not listed as ignored", s.Java)
					}
				}
				if s.Action == ActionDrop || (s.Default == "" && s.Type != "STRING" && s.Type != "LIST" && s.Type != "CLASS" && s.Type != "PASSWORD") {
					return // (an empty value is not a valid Java number)
				}
				res = Translate(withBootstrap(props(append(contextFor(s), s.Java, s.Default)...)), r, Options{})
				expectDiags(t, res.Diags, nil)
				if _, ok := res.Ignored[s.Java]; !ok {
					t.Errorf("%s=<default> not listed as ignored", s.Java)
				}
				// A supplied default (Pos "default") never warns.
				if s.Action == ActionWarn {
					p := withBootstrap(props(contextFor(s)...))
					p[s.Java] = Prop{Value: nonDefaultValue(s), Pos: "default"}
					expectDiags(t, Translate(p, r, Options{}).Diags, nil)
				}
			})
		}
	}
}

// TestOtherRoleKeysIgnored: a key Java defines only for other roles is dropped quietly.
func TestOtherRoleKeysIgnored(t *testing.T) {
	for _, s := range Settings() {
		for _, r := range []Role{Producer, Consumer, Admin} {
			if s.rolesMask().has(r) {
				continue
			}
			res := Translate(withBootstrap(props(s.Java, sampleValue(s))), r, Options{})
			expectDiags(t, res.Diags, nil)
			if !strings.Contains(res.Ignored[s.Java], "does not define it") {
				t.Errorf("%s in %s: ignored reason %q", s.Java, r, res.Ignored[s.Java])
			}
		}
	}
}

type tcase struct {
	name    string
	role    Role
	in      []string
	want    map[string]string // librdkafka key -> value; "-" means must be absent
	diags   []string
	ignored []string
}

const absent = "-" // in tcase.want: the property must not be set; "*": set to anything

func runCases(t *testing.T, cases []tcase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			role := c.role
			if role == "" {
				role = Producer
			}
			res := Translate(withBootstrap(props(c.in...)), role, Options{})
			keys := make([]string, 0, len(c.want))
			for k := range c.want {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				w := c.want[k]
				got, ok := res.Config[k]
				switch {
				case w == absent && ok:
					t.Errorf("%s = %q, want it absent", k, got)
				case w != absent && !ok:
					t.Errorf("%s not set, want %q (config: %v)", k, w, redacted(res))
				case w != absent && w != "*" && got != w:
					t.Errorf("%s = %q, want %q", k, got, w)
				}
			}
			expectDiags(t, res.Diags, c.diags)
			for _, k := range c.ignored {
				if _, ok := res.Ignored[k]; !ok {
					t.Errorf("%s not in Ignored (%v)", k, res.Ignored)
				}
			}
		})
	}
}

func redacted(r Result) map[string]string {
	m := map[string]string{}
	for k, v := range r.Config {
		if r.Secret[k] {
			v = hidden
		}
		m[k] = v
	}
	return m
}

func TestTranslateValues(t *testing.T) {
	runCases(t, []tcase{
		{name: "renames", role: Consumer, in: []string{"fetch.max.wait.ms", "250", "receive.buffer.bytes", "-1", "send.buffer.bytes", "65536", "metadata.max.age.ms", "60000", "request.timeout.ms", "40000"},
			want: map[string]string{"fetch.wait.max.ms": "250", "socket.receive.buffer.bytes": "0", "socket.send.buffer.bytes": "65536",
				"topic.metadata.refresh.interval.ms": "60000", "metadata.max.age.ms": absent, "socket.timeout.ms": "40000", "request.timeout.ms": absent}},
		{name: "producer request timeout", role: Producer, in: []string{"request.timeout.ms", "40000"},
			want: map[string]string{"request.timeout.ms": "40000", "socket.timeout.ms": absent}},
		{name: "admin request timeout", role: Admin, in: []string{"request.timeout.ms", "40000"},
			want: map[string]string{"socket.timeout.ms": "40000"}},
		{name: "max.request.size", in: []string{"max.request.size", "10485760"}, want: map[string]string{"message.max.bytes": "10485760"}},
		{name: "values are trimmed", in: []string{"linger.ms", " 20 \t", "client.id", "  me  "}, want: map[string]string{"linger.ms": "20", "client.id": "me"}},
		{name: "bootstrap list", in: []string{"bootstrap.servers", " a:1 , b:2,SASL_SSL://c:3 "}, want: map[string]string{"bootstrap.servers": "a:1,b:2,SASL_SSL://c:3"}},
		{name: "bootstrap without port", in: []string{"bootstrap.servers", "a:1,b"}, diags: []string{"E:bootstrap.servers: invalid address \"b\""}},
		{name: "bootstrap empty", in: []string{"bootstrap.servers", " "}, diags: []string{"E:bootstrap.servers is empty"}},
		// Real files: what Kafka's HOST_PORT_PATTERN refuses ("Invalid url in bootstrap.servers").
		{name: "bootstrap template variable", in: []string{"bootstrap.servers", "cell-1.streaming.${SOURCE_REGION}.oci.oraclecloud.com:9092"}, diags: []string{`E:bootstrap.servers: invalid address "cell-1.streaming.${SOURCE_REGION}.oci.oraclecloud.com:9092": Kafka's client refuses it ("Invalid url in bootstrap.servers")`}},
		{name: "bootstrap placeholder", in: []string{"bootstrap.servers", "<your-enventhubs-namespace>.servicebus.windows.net:9093"}, diags: []string{`E:bootstrap.servers: invalid address "<your-enventhubs-namespace>.servicebus.windows.net:9093"`}},
		{name: "bootstrap double equals", in: []string{"bootstrap.servers", "=kafka4:9092,kafka5:9092"}, diags: []string{`E:bootstrap.servers: invalid address "=kafka4:9092"`}},
		{name: "bootstrap port too big", in: []string{"bootstrap.servers", "a:65536"}, diags: []string{`E:bootstrap.servers: invalid port in address "a:65536"`}},
		{name: "bootstrap scheme and dots", in: []string{"bootstrap.servers", "SASL_SSL://kafka-source:9092,b_1.x%y:0"}, want: map[string]string{"bootstrap.servers": "SASL_SSL://kafka-source:9092,b_1.x%y:0"}},
		{name: "bootstrap IPv6", in: []string{"bootstrap.servers", "[::1]:9092"}, want: map[string]string{"bootstrap.servers": "[::1]:9092"}},
		{name: "acks all", in: []string{"acks", "ALL"}, want: map[string]string{"acks": "all"}},
		{name: "acks 1 turns off default idempotence", in: []string{"acks", "1"}, want: map[string]string{"acks": "1", "enable.idempotence": absent}},
		{name: "acks invalid", in: []string{"acks", "2"}, diags: []string{"E:acks: invalid value \"2\""}},
		{name: "compression", in: []string{"compression.type", "ZSTD", "compression.zstd.level", "15", "compression.gzip.level", "5"},
			want:    map[string]string{"compression.type": "zstd", "compression.level": "12"},
			diags:   []string{"W:compression.zstd.level: level 15 is above librdkafka's maximum"},
			ignored: []string{"compression.gzip.level"}},
		{name: "compression gzip level", in: []string{"compression.type", "gzip", "compression.gzip.level", "9"}, want: map[string]string{"compression.level": "9"}},
		{name: "compression lz4 level", in: []string{"compression.type", "lz4", "compression.lz4.level", "17"}, want: map[string]string{"compression.level": "12"},
			diags: []string{"W:level 17"}},
		{name: "compression zstd negative level", in: []string{"compression.type", "zstd", "compression.zstd.level", "-5"}, want: map[string]string{"compression.level": "1"},
			diags: []string{"W:fast level"}},
		{name: "compression invalid", in: []string{"compression.type", "brotli"}, diags: []string{"E:compression.type: invalid value"}},
		{name: "batch.size 0", in: []string{"batch.size", "0"}, want: map[string]string{"batch.num.messages": "1", "batch.size": absent}},
		{name: "int type error", in: []string{"linger.ms", "soon"}, diags: []string{"E:linger.ms: invalid value \"soon\": expected a long"}},
		{name: "int overflow", in: []string{"batch.size", "3000000000"}, diags: []string{"E:batch.size: invalid value"}},
		{name: "bool type error", in: []string{"enable.idempotence", "yes"}, diags: []string{"E:enable.idempotence: invalid value \"yes\": expected true or false"}},
		{name: "clamped to librdkafka range", in: []string{"linger.ms", "2000000"}, want: map[string]string{"linger.ms": "900000"},
			diags: []string{"W:linger.ms: value 2000000 is above librdkafka's maximum"}},
		{name: "retry backoff 0 clamped", in: []string{"retry.backoff.ms", "0"}, want: map[string]string{"retry.backoff.ms": "1"}, diags: []string{"W:below librdkafka's minimum"}},
		{name: "idle -1", in: []string{"connections.max.idle.ms", "-1"}, want: map[string]string{"connections.max.idle.ms": "0"}},
		{name: "dns default", in: []string{"client.dns.lookup", "default"}, want: map[string]string{"client.dns.lookup": "use_all_dns_ips"}, diags: []string{"W:pre-3.0 value"}},
		{name: "reconnect backoff above librdkafka max", in: []string{"reconnect.backoff.ms", "20000"}, want: map[string]string{"reconnect.backoff.max.ms": "20000"}},
		{name: "delivery timeout", in: []string{"delivery.timeout.ms", "2147483647"}, want: map[string]string{"delivery.timeout.ms": "2147483647"}},
		{name: "metadata refresh", in: []string{"metadata.max.age.ms", "7200000"}, want: map[string]string{"topic.metadata.refresh.interval.ms": "3600000"}, diags: []string{"W:above librdkafka's maximum"}},
		{name: "setup timeouts", in: []string{"socket.connection.setup.timeout.max.ms", "45000", "socket.connection.setup.timeout.ms", "10000"},
			want: map[string]string{"socket.connection.setup.timeout.ms": "45000"}, ignored: []string{"socket.connection.setup.timeout.ms"}},
		{name: "two-phase commit", in: []string{"transaction.two.phase.commit.enable", "true"}, diags: []string{"E:two-phase commit"}},
		{name: "buffer.memory", in: []string{"buffer.memory", "67108864"}, diags: []string{"W:buffer.memory: no librdkafka equivalent"}},
		{name: "max.block.ms", in: []string{"max.block.ms", "120000"}, diags: []string{"W:max.block.ms: no librdkafka equivalent"}},
		{name: "serializers", in: []string{"key.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer", "value.serializer", "io.confluent.kafka.serializers.KafkaAvroSerializer"},
			diags: []string{"W:value.serializer: kmm copies raw bytes"}, ignored: []string{"key.serializer"}},
		{name: "interceptors", role: Consumer, in: []string{"interceptor.classes", "io.confluent.monitoring.clients.interceptor.MonitoringConsumerInterceptor"}, diags: []string{"W:interceptor.classes: Java interceptor classes"}},
		{name: "metric reporters default", in: []string{"metric.reporters", "org.apache.kafka.common.metrics.JmxReporter"}, ignored: []string{"metric.reporters"}},
		{name: "metric reporters custom", in: []string{"metric.reporters", "com.example.Prom"}, diags: []string{"W:metric.reporters"}},
		{name: "admin retries default", role: Admin, in: []string{"retries", "2147483647"}, ignored: []string{"retries"}},
		{name: "admin retries", role: Admin, in: []string{"retries", "5"}, diags: []string{"W:retries: the admin client's retries"}},
		{name: "producer retries", in: []string{"retries", "5"}, want: map[string]string{"retries": "5"}},
		{name: "bootstrap.controllers", role: Admin, in: []string{"bootstrap.controllers", "c:9093"}, diags: []string{"E:bootstrap.controllers: kmm's admin client talks to brokers only"}},
		{name: "missing bootstrap", in: []string{"bootstrap.servers", ""}, diags: []string{"E:bootstrap.servers is empty"}},
		{name: "unknown key", in: []string{"foo.bar", "1"}, diags: []string{"W:t.properties:1: warning: foo.bar: not a Kafka client setting, ignored"}},
		{name: "librdkafka name hint", in: []string{"queue.buffering.max.ms", "5"}, diags: []string{`W:MM2 files use Java client names: write "linger.ms"`}},
		{name: "librdkafka-only name hint", in: []string{"queue.buffering.max.kbytes", "5"}, diags: []string{`W:MM2 files take Java client settings only`}},
		{name: "unknown supplied default is quiet", in: nil, want: map[string]string{}},
	})
}

func TestTranslateConsumer(t *testing.T) {
	runCases(t, []tcase{
		{name: "Java isolation default", role: Consumer, in: nil, want: map[string]string{"isolation.level": "read_uncommitted"}},
		{name: "isolation explicit", role: Consumer, in: []string{"isolation.level", "READ_COMMITTED"}, want: map[string]string{"isolation.level": "read_committed"}},
		{name: "auto.offset.reset", role: Consumer, in: []string{"auto.offset.reset", "Earliest"}, want: map[string]string{"auto.offset.reset": "earliest"}},
		{name: "auto.offset.reset none", role: Consumer, in: []string{"auto.offset.reset", "none"}, want: map[string]string{"auto.offset.reset": "error"}},
		{name: "auto.offset.reset by_duration", role: Consumer, in: []string{"auto.offset.reset", "by_duration:PT1H"}, diags: []string{"E:by_duration"}},
		{name: "small fetch.max.bytes", role: Consumer, in: []string{"fetch.max.bytes", "500000"}, want: map[string]string{"fetch.max.bytes": "500000", "message.max.bytes": "500000"}},
		{name: "fetch.min.bytes 0", role: Consumer, in: []string{"fetch.min.bytes", "0"}, want: map[string]string{"fetch.min.bytes": "1"}, diags: []string{"W:below librdkafka's minimum"}},
		{name: "assignors", role: Consumer, in: []string{"partition.assignment.strategy", "org.apache.kafka.clients.consumer.RangeAssignor, org.apache.kafka.clients.consumer.RoundRobinAssignor"},
			want: map[string]string{"partition.assignment.strategy": "range,roundrobin"}},
		{name: "assignors sticky", role: Consumer, in: []string{"partition.assignment.strategy", "org.apache.kafka.clients.consumer.StickyAssignor"},
			want: map[string]string{"partition.assignment.strategy": absent}, diags: []string{"W:StickyAssignor"}},
		{name: "assignors mixed cooperative", role: Consumer, in: []string{"partition.assignment.strategy", "org.apache.kafka.clients.consumer.RoundRobinAssignor,org.apache.kafka.clients.consumer.CooperativeStickyAssignor"},
			want: map[string]string{"partition.assignment.strategy": "roundrobin"}, diags: []string{"W:cannot mix"}},
		{name: "assignors Java default", role: Consumer, in: []string{"partition.assignment.strategy", "org.apache.kafka.clients.consumer.RangeAssignor, org.apache.kafka.clients.consumer.CooperativeStickyAssignor"},
			want: map[string]string{"partition.assignment.strategy": "range"}},
		{name: "assignors cooperative first", role: Consumer, in: []string{"partition.assignment.strategy", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor,org.apache.kafka.clients.consumer.RangeAssignor"},
			want: map[string]string{"partition.assignment.strategy": "cooperative-sticky"}, diags: []string{"W:cannot mix"}},
		{name: "session above max.poll", role: Consumer, in: []string{"session.timeout.ms", "400000"}, want: map[string]string{"max.poll.interval.ms": "400000"}, diags: []string{"W:max.poll.interval.ms >= session.timeout.ms"}},
		{name: "consumer group protocol", role: Consumer, in: []string{"group.protocol", "CONSUMER", "session.timeout.ms", "30000", "heartbeat.interval.ms", "2000"},
			want:  map[string]string{"group.protocol": "consumer", "session.timeout.ms": absent, "heartbeat.interval.ms": absent},
			diags: []string{"W:session.timeout.ms: not a client setting with group.protocol=consumer", "W:heartbeat.interval.ms: not a client setting"}},
		{name: "consumer keys in producer", role: Producer, in: []string{"fetch.max.bytes", "1", "group.id", "g"}, want: map[string]string{"fetch.max.bytes": absent, "group.id": absent},
			ignored: []string{"fetch.max.bytes", "group.id"}},
		{name: "max.poll.records", role: Consumer, in: []string{"max.poll.records", "2000"}, diags: []string{"W:max.poll.records: no librdkafka equivalent"}},
		{name: "client.rack", role: Consumer, in: []string{"client.rack", "eu-1a"}, want: map[string]string{"client.rack": "eu-1a"}},
		{name: "deserializers", role: Consumer, in: []string{"key.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer", "value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer"},
			diags: []string{"W:value.deserializer"}},
	})
}

func TestTranslateProducerDefaults(t *testing.T) {
	runCases(t, []tcase{
		{name: "Java defaults", in: nil, want: map[string]string{"enable.idempotence": "true", "partitioner": "murmur2_random", "security.protocol": "plaintext"}},
		{name: "explicit false", in: []string{"enable.idempotence", "false"}, want: map[string]string{"enable.idempotence": "false"}},
		{name: "in-flight conflicts quietly", in: []string{"max.in.flight.requests.per.connection", "10"}, want: map[string]string{"enable.idempotence": absent}},
		{name: "retries 0 conflicts quietly", in: []string{"retries", "0"}, want: map[string]string{"enable.idempotence": absent}},
		{name: "explicit true with conflict", in: []string{"enable.idempotence", "true", "acks", "1"}, diags: []string{"E:enable.idempotence=true conflicts with acks=1"}},
		{name: "transactional needs idempotence", in: []string{"transactional.id", "t", "acks", "0"}, diags: []string{"E:transactional.id needs idempotence"}},
		{name: "transactional explicit off", in: []string{"transactional.id", "t", "enable.idempotence", "false"}, diags: []string{"E:transactional.id needs idempotence, which is off (enable.idempotence=false)"}},
		{name: "MM2 worker producer", in: []string{"acks", "all", "max.in.flight.requests.per.connection", "1", "enable.idempotence", "false", "delivery.timeout.ms", "2147483647", "max.block.ms", "9223372036854775807"},
			want:  map[string]string{"acks": "all", "max.in.flight.requests.per.connection": "1", "enable.idempotence": "false", "delivery.timeout.ms": "2147483647"},
			diags: []string{"W:max.block.ms"}},
		{name: "DefaultPartitioner", in: []string{"partitioner.class", "org.apache.kafka.clients.producer.internals.DefaultPartitioner"}, want: map[string]string{"partitioner": "murmur2_random"}},
		{name: "UniformStickyPartitioner", in: []string{"partitioner.class", "org.apache.kafka.clients.producer.UniformStickyPartitioner"}, want: map[string]string{"partitioner": "random"}},
		{name: "RoundRobinPartitioner", in: []string{"partitioner.class", "org.apache.kafka.clients.producer.RoundRobinPartitioner"}, want: map[string]string{"partitioner": "murmur2_random"},
			diags: []string{"W:librdkafka has no round-robin partitioner"}},
		{name: "custom partitioner", in: []string{"partitioner.class", "com.acme.P"}, want: map[string]string{"partitioner": "murmur2_random"}, diags: []string{"W:custom partitioner classes cannot run"}},
		{name: "ignore keys", in: []string{"partitioner.ignore.keys", "true"}, want: map[string]string{"partitioner": "random"}},
	})
}

func TestTranslateSASL(t *testing.T) {
	plain := plainMod + ` required username="alice" password="alice-secret";`
	scram := scramModule + ` required username='bob' password="b\"ob";`
	runCases(t, []tcase{
		{name: "PLAIN", in: []string{"security.protocol", "sasl_plaintext", "sasl.mechanism", "PLAIN", "sasl.jaas.config", plain},
			want: map[string]string{"security.protocol": "sasl_plaintext", "sasl.mechanisms": "PLAIN", "sasl.username": "alice", "sasl.password": "alice-secret"}},
		{name: "SCRAM", in: []string{"security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "SCRAM-SHA-512", "sasl.jaas.config", scram},
			want: map[string]string{"sasl.mechanisms": "SCRAM-SHA-512", "sasl.username": "bob", "sasl.password": `b"ob`}},
		{name: "SCRAM-SHA-256 options reversed", in: []string{"security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "SCRAM-SHA-256", "sasl.jaas.config", scramModule + ` required password=pw username=u;`},
			want: map[string]string{"sasl.mechanisms": "SCRAM-SHA-256", "sasl.username": "u", "sasl.password": "pw"}},
		{name: "PLAIN module with SCRAM works as in Java", in: []string{"security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "SCRAM-SHA-256", "sasl.jaas.config", plain},
			want: map[string]string{"sasl.username": "alice"}, diags: []string{"W:login module PlainLoginModule is meant for PLAIN"}},
		{name: "OAuth module with PLAIN", in: []string{"security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "PLAIN", "sasl.jaas.config", oauthModule + ` required;`},
			want: map[string]string{"sasl.username": absent}, diags: []string{"E:OAuthBearerLoginModule is for OAUTHBEARER and cannot authenticate with sasl.mechanism=PLAIN"}},
		{name: "PLAIN module with OAUTHBEARER", in: []string{"security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "OAUTHBEARER", "sasl.jaas.config", plain},
			diags: []string{"E:PlainLoginModule is for PLAIN and cannot authenticate with sasl.mechanism=OAUTHBEARER"}},
		{name: "Krb5 module with PLAIN", in: []string{"security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "PLAIN", "sasl.jaas.config", krb5Module + ` required useKeyTab=true;`},
			diags: []string{"E:Krb5LoginModule is for GSSAPI"}},
		{name: "custom module", in: []string{"security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "PLAIN", "sasl.jaas.config", `com.acme.Login required username=u password=p;`},
			diags: []string{"E:login module com.acme.Login cannot run in kmm"}},
		{name: "missing password", in: []string{"security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "PLAIN", "sasl.jaas.config", plainMod + ` required username=u;`},
			diags: []string{"E:PlainLoginModule has no password option"}},
		{name: "unknown option", in: []string{"security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "PLAIN", "sasl.jaas.config", plainMod + ` required username=u password=p user_x=y;`},
			want: map[string]string{"sasl.username": "u"}, diags: []string{"W:PlainLoginModule ignores option(s) user_x"}},
		{name: "tokenauth", in: []string{"security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "SCRAM-SHA-256", "sasl.jaas.config", scramModule + ` required username=u password=p tokenauth=true;`},
			diags: []string{"E:delegation token"}},
		{name: "two modules", in: []string{"security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "PLAIN", "sasl.jaas.config", plain + " " + plain},
			diags: []string{"E:contains 2 login modules"}},
		{name: "malformed JAAS", in: []string{"security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "PLAIN", "sasl.jaas.config", plainMod + ` required username="u" password="p"`},
			diags: []string{"E:sasl.jaas.config: malformed JAAS configuration: login module " + plainMod + ": entry not terminated by a semicolon"}},
		{name: "unquoted numeric password", in: []string{"security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "PLAIN", "sasl.jaas.config", plainMod + ` required username=u password=123;`},
			diags: []string{`E:value not specified for option "password"`}},
		{name: "no JAAS", in: []string{"security.protocol", "SASL_SSL", "sasl.mechanism", "PLAIN"},
			diags: []string{"E:sasl.jaas.config is not set"}},
		{name: "GSSAPI explicit", in: []string{"security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "GSSAPI", "sasl.kerberos.service.name", "kafka", "sasl.jaas.config", krb5Module + ` required;`},
			diags: []string{"E:sasl.mechanism: Kerberos (GSSAPI) is not supported by this build of kmm (bundled librdkafka has no sasl_gssapi)"}, ignored: []string{"sasl.kerberos.service.name"}},
		{name: "GSSAPI by default", in: []string{"security.protocol", "SASL_PLAINTEXT", "sasl.jaas.config", krb5Module + ` required;`},
			diags: []string{"E:security.protocol: sasl.mechanism is not set, so Java's default GSSAPI applies: Kerberos (GSSAPI) is not supported"}},
		{name: "unknown mechanism", in: []string{"security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "DIGEST-MD5", "sasl.jaas.config", plain},
			diags: []string{"E:SASL mechanism \"DIGEST-MD5\" is not supported"}},
		{name: "lower-case mechanism", in: []string{"security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "plain", "sasl.jaas.config", plain},
			want: map[string]string{"sasl.mechanisms": "PLAIN"}, diags: []string{"W:case-sensitively"}},
		{name: "custom login callback handler with PLAIN", in: []string{"security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "PLAIN", "sasl.jaas.config", plain, "sasl.login.callback.handler.class", "com.acme.H"},
			diags: []string{"E:sasl.login.callback.handler.class: custom Java login callback handlers cannot run in kmm"}},
		{name: "client callback handler", in: []string{"security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "PLAIN", "sasl.jaas.config", plain, "sasl.client.callback.handler.class", "com.acme.H"},
			diags: []string{"E:sasl.client.callback.handler.class"}},
		{name: "login class", in: []string{"security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "PLAIN", "sasl.jaas.config", plain, "sasl.login.class", "com.acme.L"},
			diags: []string{"E:sasl.login.class"}},
		{name: "SASL keys without SASL protocol", in: []string{"security.protocol", "SSL", "sasl.mechanism", "PLAIN", "sasl.jaas.config", plain},
			want: map[string]string{"sasl.username": absent, "sasl.mechanisms": absent}, ignored: []string{"sasl.jaas.config", "sasl.mechanism"}},
		{name: "SASL keys without any protocol", in: []string{"sasl.mechanism", "PLAIN", "sasl.jaas.config", plain},
			want: map[string]string{"sasl.username": absent}, diags: []string{"W:sasl.* settings are present but security.protocol is not set"}},
		{name: "OAuth-only keys with PLAIN", in: []string{"security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "PLAIN", "sasl.jaas.config", plain, "sasl.login.refresh.buffer.seconds", "60", "sasl.oauthbearer.scope", "x"},
			ignored: []string{"sasl.login.refresh.buffer.seconds", "sasl.oauthbearer.scope"}},
		{name: "bad protocol", in: []string{"security.protocol", "TLS"}, diags: []string{"E:security.protocol: invalid value \"TLS\""}},
	})
}

func TestTranslateOAuth(t *testing.T) {
	base := []string{"security.protocol", "SASL_SSL", "sasl.mechanism", "OAUTHBEARER"}
	oidc := append(append([]string{}, base...), "sasl.login.callback.handler.class", oidcHandler, "sasl.oauthbearer.token.endpoint.url", "https://idp.example/token")
	with := func(a []string, more ...string) []string { return append(append([]string{}, a...), more...) }
	runCases(t, []tcase{
		{name: "OIDC client credentials", in: with(oidc, "sasl.jaas.config", oauthModule+` required clientId="kmm" clientSecret="s3" scope="kafka" extension_logicalCluster="lkc-1" extension_identityPoolId="p-2";`),
			want: map[string]string{"sasl.mechanisms": "OAUTHBEARER", "sasl.oauthbearer.method": "oidc", "sasl.oauthbearer.client.id": "kmm", "sasl.oauthbearer.client.secret": "s3",
				"sasl.oauthbearer.scope": "kafka", "sasl.oauthbearer.token.endpoint.url": "https://idp.example/token",
				"sasl.oauthbearer.extensions": "identityPoolId=p-2,logicalCluster=lkc-1", "enable.sasl.oauthbearer.unsecure.jwt": absent}},
		{name: "OIDC 3.x handler package", in: with(base, "sasl.login.callback.handler.class", oidcHandler3, "sasl.oauthbearer.token.endpoint.url", "https://idp/t",
			"sasl.jaas.config", oauthModule+` required clientId=kmm clientSecret=s;`),
			want: map[string]string{"sasl.oauthbearer.method": "oidc", "sasl.oauthbearer.client.id": "kmm"}},
		{name: "OIDC 4.1 settings win over JAAS", in: with(oidc, "sasl.oauthbearer.client.credentials.client.id", "cfg-id", "sasl.oauthbearer.client.credentials.client.secret", "cfg-s",
			"sasl.oauthbearer.scope", "cfg-scope", "sasl.jaas.config", oauthModule+` required clientId=jaas clientSecret=jaas scope=jaas;`),
			want: map[string]string{"sasl.oauthbearer.client.id": "cfg-id", "sasl.oauthbearer.client.secret": "cfg-s", "sasl.oauthbearer.scope": "cfg-scope"}},
		{name: "OIDC missing secret", in: with(oidc, "sasl.jaas.config", oauthModule+` required clientId=kmm;`), diags: []string{"E:OIDC client credentials need a client secret"}},
		{name: "OIDC without endpoint", in: with(base, "sasl.login.callback.handler.class", oidcHandler, "sasl.jaas.config", oauthModule+` required clientId=a clientSecret=b;`),
			diags: []string{"E:needs sasl.oauthbearer.token.endpoint.url"}},
		{name: "endpoint without handler", in: with(base, "sasl.oauthbearer.token.endpoint.url", "https://idp/t", "sasl.jaas.config", oauthModule+` required clientId=a clientSecret=b;`),
			want: map[string]string{"sasl.oauthbearer.method": "oidc"}, diags: []string{"W:Java would use unsecured JWTs"}},
		{name: "file endpoint", in: with(oidc[:len(oidc)-1], "file:///etc/token", "sasl.jaas.config", oauthModule+` required;`), diags: []string{"E:file: URL"}},
		{name: "JWT bearer", in: with(oidc, "sasl.oauthbearer.jwt.retriever.class", retrieverBearer, "sasl.oauthbearer.assertion.private.key.file", "/k.pem",
			"sasl.oauthbearer.assertion.private.key.passphrase", "pp", "sasl.oauthbearer.assertion.claim.sub", "me", "sasl.oauthbearer.assertion.template.file", "/t.json",
			"sasl.jaas.config", oauthModule+` required;`),
			want: map[string]string{"sasl.oauthbearer.grant.type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "sasl.oauthbearer.assertion.private.key.file": "/k.pem",
				"sasl.oauthbearer.assertion.private.key.passphrase": "pp", "sasl.oauthbearer.assertion.claim.sub": "me", "sasl.oauthbearer.assertion.jwt.template.file": "/t.json",
				"sasl.oauthbearer.client.secret": absent}},
		{name: "JWT bearer without key", in: with(oidc, "sasl.oauthbearer.jwt.retriever.class", retrieverBearer, "sasl.jaas.config", oauthModule+` required;`),
			diags: []string{"E:JwtBearerJwtRetriever needs an assertion"}},
		{name: "assertion keys ignored with client credentials", in: with(oidc, "sasl.oauthbearer.assertion.claim.sub", "me", "sasl.jaas.config", oauthModule+` required clientId=a clientSecret=b;`),
			want: map[string]string{"sasl.oauthbearer.assertion.claim.sub": absent}, ignored: []string{"sasl.oauthbearer.assertion.claim.sub"}},
		{name: "file retriever", in: with(oidc, "sasl.oauthbearer.jwt.retriever.class", retrieverFile, "sasl.jaas.config", oauthModule+` required;`), diags: []string{"E:FileJwtRetriever"}},
		{name: "custom handler", in: with(base, "sasl.login.callback.handler.class", "io.strimzi.kafka.oauth.client.JaasClientOauthLoginCallbackHandler", "sasl.jaas.config", oauthModule+` required;`),
			diags: []string{"E:custom Java login callback handlers cannot run in kmm"}},
		{name: "unsecured JWT", in: with(base, "sasl.jaas.config", oauthModule+` required unsecuredLoginStringClaim_sub="alice" unsecuredLoginListClaim_scope=",read,write" unsecuredLoginLifetimeSeconds="600" unsecuredLoginExtension_traceId="123";`),
			want: map[string]string{"enable.sasl.oauthbearer.unsecure.jwt": "true", "sasl.oauthbearer.method": absent,
				"sasl.oauthbearer.config": "principalClaimName=sub principal=alice scope=read,write lifeSeconds=600 extension_traceId=123"},
			diags: []string{"W:sasl.mechanism: OAUTHBEARER without a token endpoint uses unsecured JWTs"}},
		{name: "unsecured JWT custom claims", in: with(base, "sasl.jaas.config", oauthModule+` required unsecuredLoginPrincipalClaimName=azp unsecuredLoginStringClaim_azp=svc unsecuredLoginScopeClaimName=roles unsecuredLoginStringClaim_roles="r1 r2" unsecuredLoginNumberClaim_n="1";`),
			want:  map[string]string{"sasl.oauthbearer.config": "principalClaimName=azp principal=svc scopeClaimName=roles scope=r1,r2 lifeSeconds=3600"},
			diags: []string{"W:unsecuredLoginNumberClaim_n cannot be expressed", "W:unsecured JWTs"}},
		{name: "unsecured JWT without principal", in: with(base, "sasl.jaas.config", oauthModule+` required;`), diags: []string{"E:needs the principal claim unsecuredLoginStringClaim_sub"}},
		{name: "OAuth validation knobs", in: with(oidc, "sasl.oauthbearer.expected.audience", "a", "sasl.oauthbearer.scope.claim.name", "scope", "sasl.jaas.config", oauthModule+` required clientId=a clientSecret=b;`),
			diags: []string{"W:sasl.oauthbearer.expected.audience: a broker-side"}, ignored: []string{"sasl.oauthbearer.scope.claim.name"}},
	})
}

// TestSecretsNeverInDiags puts a recognisable secret into every secret-bearing setting, in
// broken configurations that produce many diagnostics, and checks none of them shows it.
func TestSecretsNeverInDiags(t *testing.T) {
	const secret = "S3CRET"
	configs := [][]string{
		{"security.protocol", "SASL_SSL", "sasl.mechanism", "PLAIN", "sasl.jaas.config", plainMod + ` required username=u password=S3CRET user_S3CRET=x S3CRET`,
			"ssl.truststore.location", "/nope", "ssl.truststore.password", secret, "ssl.keystore.location", "/nope2", "ssl.keystore.password", secret, "ssl.key.password", secret},
		{"security.protocol", "SASL_SSL", "sasl.mechanism", "SCRAM-SHA-256", "sasl.jaas.config", scramModule + ` required username=u password="S3CRET" "S3CRET";`},
		{"security.protocol", "SASL_SSL", "sasl.mechanism", "SCRAM-SHA-256", "sasl.jaas.config", `S3CRET.x S3CRET;`},
		{"security.protocol", "SASL_SSL", "sasl.mechanism", "OAUTHBEARER", "sasl.jaas.config", oauthModule + ` required clientSecret=S3CRET unsecuredLoginStringClaim_sub="a S3CRET";`},
		{"security.protocol", "SSL", "ssl.keystore.type", "PEM", "ssl.keystore.key", "-----BEGIN PRIVATE KEY-----S3CRET-----END PRIVATE KEY-----", "ssl.keystore.certificate.chain", "S3CRET", "ssl.key.password", secret},
		{"security.protocol", "SSL", "ssl.truststore.type", "PEM", "ssl.truststore.certificates", "S3CRET", "ssl.truststore.password", secret},
		{"ssl.key.password", secret, "sasl.jaas.config", secret, "sasl.oauthbearer.client.credentials.client.secret", secret, "basic.auth.user.info", secret},
		{"security.protocol", "SASL_SSL", "sasl.mechanism", "OAUTHBEARER", "sasl.jaas.config", oauthModule + ` required extension_a="S3CRET,";`,
			"sasl.login.callback.handler.class", oidcHandler, "sasl.oauthbearer.token.endpoint.url", "https://x", "sasl.oauthbearer.client.credentials.client.secret", secret},
	}
	for i, c := range configs {
		for _, r := range []Role{Producer, Consumer, Admin} {
			res := Translate(withBootstrap(props(c...)), r, Options{})
			if len(res.Diags) == 0 {
				t.Errorf("config %d: expected diagnostics", i)
			}
			for _, d := range res.Diags {
				if strings.Contains(d.String(), secret) {
					t.Errorf("config %d (%s): diagnostic leaks a secret: %s", i, r, d)
				}
			}
			for k, v := range res.Origin {
				if strings.Contains(v, secret) {
					t.Errorf("origin of %s leaks a secret", k)
				}
			}
			for k, v := range res.Config {
				if strings.Contains(v, secret) && !res.Secret[k] {
					t.Errorf("config %s holds a secret but is not marked secret", k)
				}
			}
		}
	}
}

func TestIsSecretKey(t *testing.T) {
	for k, want := range map[string]bool{
		"sasl.jaas.config": true, "ssl.key.password": true, "ssl.keystore.password": true, "ssl.truststore.password": true,
		"ssl.keystore.key": true, "ssl.keystore.certificate.chain": true, "ssl.truststore.certificates": true,
		"basic.auth.user.info": true, "value.converter.basic.auth.user.info": true, "B.consumer.ssl.key.password": true,
		"producer.override.sasl.jaas.config": true, "sasl.oauthbearer.client.credentials.client.secret": true,
		"sasl.oauthbearer.assertion.private.key.passphrase": true, "my.api.key": true, "bearer.auth.token": true,
		"sasl.password": true, "ssl.key.pem": true,

		"ssl.keystore.location": false, "ssl.truststore.location": false, "ssl.keystore.type": false, "key.serializer": false,
		"sasl.oauthbearer.client.credentials.client.id": false, "sasl.oauthbearer.token.endpoint.url": false, "bootstrap.servers": false,
		"sasl.oauthbearer.assertion.private.key.file": false, "ssl.keymanager.algorithm": false, "sasl.mechanism": false,
		"ssl.keystore.alias": false, "sasl.username": false,
	} {
		if got := IsSecretKey(k); got != want {
			t.Errorf("IsSecretKey(%q) = %v, want %v", k, got, want)
		}
	}
	if Redact("ssl.key.password", "x") != "[hidden]" || Redact("client.id", "x") != "x" {
		t.Error("Redact")
	}
}

func TestDiagOrderAndFormat(t *testing.T) {
	in := map[string]Prop{
		"bootstrap.servers": {"h:1", "b.properties:3"},
		"zz.unknown":        {"1", "a.properties:10"},
		"aa.unknown":        {"1", "a.properties:9"},
		"mm.unknown":        {"1", "a.properties:100"},
	}
	res := Translate(in, Producer, Options{})
	got := diagStrings(res.Diags)
	want := []string{
		"a.properties:9: warning: aa.unknown: not a Kafka client setting, ignored",
		"a.properties:10: warning: zz.unknown: not a Kafka client setting, ignored",
		"a.properties:100: warning: mm.unknown: not a Kafka client setting, ignored",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if res.HasErrors() {
		t.Fatal("HasErrors")
	}
	if r := Translate(map[string]Prop{}, "stream", Options{}); !r.HasErrors() {
		t.Fatal("unknown role must be an error")
	}
}

// FuzzTranslate: Translate never panics, whatever the SASL and TLS settings say.
func FuzzTranslate(f *testing.F) {
	f.Add("SASL_SSL", "PLAIN", plainMod+` required username=u password=p;`, "PEM", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----", "1")
	f.Add("SASL_PLAINTEXT", "OAUTHBEARER", oauthModule+` required unsecuredLoginStringClaim_sub=a;`, "JKS", "", "-1")
	f.Add("SSL", "", "", "PEM", "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----", "x")
	f.Fuzz(func(t *testing.T, proto, mech, jaas, typ, pemText, num string) {
		in := withBootstrap(props("security.protocol", proto, "sasl.mechanism", mech, "sasl.jaas.config", jaas,
			"ssl.keystore.type", typ, "ssl.keystore.key", pemText, "ssl.keystore.certificate.chain", pemText,
			"ssl.truststore.type", typ, "ssl.truststore.certificates", pemText, "linger.ms", num, "fetch.max.bytes", num))
		for _, r := range []Role{Producer, Consumer, Admin} {
			_ = Translate(in, r, Options{ReadFile: func(string) ([]byte, error) { return []byte(pemText), nil }})
		}
	})
}
