package mm2conf

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// memFS adapts an fstest.MapFS (paths without a leading slash) to FileSystem.
type memFS struct{ m fstest.MapFS }

func (f memFS) ReadFile(name string) ([]byte, error) {
	return fs.ReadFile(f.m, strings.TrimPrefix(name, "/"))
}
func (f memFS) Stat(name string) (fs.FileInfo, error) {
	return fs.Stat(f.m, strings.TrimPrefix(name, "/"))
}

func load(t *testing.T, files map[string]string, opts LoadOptions) (*Config, error) {
	t.Helper()
	m := fstest.MapFS{}
	for k, v := range files {
		m[k] = &fstest.MapFile{Data: []byte(v)}
	}
	opts.FS = memFS{m}
	if opts.LookupEnv == nil {
		opts.LookupEnv = func(string) (string, bool) { return "", false }
	}
	if opts.ConfigFile == "" && opts.SourceClusterConfig == "" {
		opts.ConfigFile = "mm2.properties"
	}
	return Load(opts)
}

func diagStrings(c *Config) string {
	var b strings.Builder
	for _, d := range c.Diagnostics {
		b.WriteString(d.String())
		b.WriteByte('\n')
	}
	return b.String()
}

const base = "clusters = A, B\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\n"

func TestPrecedence(t *testing.T) {
	c, err := load(t, map[string]string{"mm2.properties": base + `A->B.enabled = true
topics = top.*
A->B.topics = flow.*
security.protocol = SSL
A.security.protocol = PLAINTEXT
B.producer.security.protocol = SASL_SSL
B.sasl.mechanism = PLAIN
B.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";
B.key.converter = org.apache.kafka.connect.converters.ByteArrayConverter
offset.storage.topic = custom-offsets
B.offset.storage.topic = ignored-because-top-level-wins
A.consumer.max.poll.records = 10
`}, LoadOptions{})
	if err != nil {
		t.Fatalf("%v\n%s", err, diagStrings(c))
	}
	f := c.Flow("A->B")
	if f == nil || !f.Enabled || f.HerderReason != "enabled" {
		t.Fatalf("flow: %+v", f)
	}
	if got := strings.Join(f.Settings.Topics, ","); got != "flow.*" {
		t.Errorf("topics = %q", got)
	}
	if o := f.Connector["topics"].Origin; o.Key != "A->B.topics" || o.Pos.Line != 6 || !strings.Contains(o.Rule, "flow override") {
		t.Errorf("topics origin = %+v", o)
	}
	if v, _ := f.Worker.Get("offset.storage.topic"); v != "custom-offsets" {
		t.Errorf("top-level offset.storage.topic must beat B.offset.storage.topic, got %q", v)
	}
	if v, _ := f.Worker.Get("producer.security.protocol"); v != "SASL_SSL" {
		t.Errorf("explicit B.producer.security.protocol must win, got %q", v)
	}
	if v, _ := f.Worker.Get("consumer.security.protocol"); v != "SSL" {
		t.Errorf("top-level fallback for B's consumer, got %q", v)
	}
	sc := f.ClientConfig(RoleSourceConsumer)
	if v, _ := sc.Java.Get("security.protocol"); v != "PLAINTEXT" {
		t.Errorf("A's own protocol must beat the top-level fallback, got %q", v)
	}
	if v, _ := sc.Java.Get("max.poll.records"); v != "10" {
		t.Errorf("A.consumer.max.poll.records = %q", v)
	}
	if v, _ := sc.Java.Get("enable.auto.commit"); v != "false" {
		t.Errorf("enable.auto.commit = %q", v)
	}
	tp := f.ClientConfig(RoleTargetProducer)
	if v, _ := tp.Java.Get("acks"); v != "all" {
		t.Errorf("worker producer acks = %q", v)
	}
	if tp.Librdkafka.Config["sasl.password"] == "" || !tp.Librdkafka.Secret["sasl.password"] {
		t.Errorf("SASL password not translated as a secret: %v", tp.Librdkafka.Secret)
	}
	if f.ClientConfig("bogus") != nil {
		t.Error("unknown role")
	}
	// B->A exists for heartbeats only.
	if r := c.Flow("B->A"); r == nil || r.Enabled || r.HerderReason != "heartbeats" || !r.Features.Heartbeats {
		t.Errorf("B->A: %+v", r)
	}
}

func TestClustersFlagAndHeartbeats(t *testing.T) {
	files := map[string]string{"mm2.properties": "clusters = A, B, C\nA.bootstrap.servers=a:1\nB.bootstrap.servers=b:1\nC.bootstrap.servers=c:1\nA->B.enabled=true\nC->A.emit.heartbeats.enabled=false\n"}
	c, err := load(t, files, LoadOptions{Clusters: []string{"A C"}})
	if err == nil || !strings.Contains(diagStrings(c), "no flow is enabled") {
		t.Fatalf("targets A,C have no enabled flow: %v\n%s", err, diagStrings(c))
	}
	var names []string
	for _, f := range c.Flows {
		names = append(names, f.Name())
	}
	if got := strings.Join(names, " "); got != "A->C B->A B->C" {
		t.Errorf("herders = %q", got)
	}
	c, err = load(t, files, LoadOptions{Clusters: []string{"B"}})
	if err != nil || len(c.EnabledFlows()) != 1 || c.EnabledFlows()[0].Name() != "A->B" {
		t.Fatalf("--clusters B: %v %s", err, diagStrings(c))
	}
}

func TestForm2Merge(t *testing.T) {
	files := map[string]string{
		"mm2.properties": "clusters = S, T\nS.bootstrap.servers = file-s:9092\nT.bootstrap.servers = t:9092\ntopics = from-file\n",
		"s.properties":   "bootstrap.servers = flag-s:9092\nsecurity.protocol = PLAINTEXT\n",
	}
	wl := "orders.*"
	c, err := load(t, files, LoadOptions{ConfigFile: "mm2.properties", Clusters: []string{"S,T"}, SourceClusterConfig: "s.properties", Whitelist: &wl})
	if err != nil {
		t.Fatalf("%v\n%s", err, diagStrings(c))
	}
	f := c.Flow("S->T")
	if f == nil || !f.Enabled {
		t.Fatalf("implied flow missing: %s", diagStrings(c))
	}
	if v, _ := c.ClusterProps("S").Get("bootstrap.servers"); v != "flag-s:9092" {
		t.Errorf("cluster file must win: %q", v)
	}
	if o := c.ClusterProps("S")["bootstrap.servers"].Origin; o.Pos != (Pos{"s.properties", 1}) {
		t.Errorf("origin = %+v", o)
	}
	if got := strings.Join(f.Settings.Topics, ","); got != "orders.*" {
		t.Errorf("--whitelist must give S->T.topics, got %q", got)
	}
	d := diagStrings(c)
	for _, want := range []string{"add this line to mm2.properties: S->T.enabled = true", "s.properties (--source-cluster-config) replaces 1 setting(s)", "--whitelist is a MirrorMaker 1 flag"} {
		if !strings.Contains(d, want) && !strings.Contains(func() string {
			var b strings.Builder
			for _, x := range c.Diagnostics {
				b.WriteString(x.Hint + "\n")
			}
			return b.String()
		}(), want) {
			t.Errorf("missing %q in\n%s", want, d)
		}
	}
	// The file disables the implied flow explicitly: the file wins.
	files["mm2.properties"] += "S->T.enabled = false\n"
	c, err = load(t, files, LoadOptions{ConfigFile: "mm2.properties", Clusters: []string{"S,T"}, SourceClusterConfig: "s.properties"})
	if err == nil || c.Flow("S->T").Enabled {
		t.Fatalf("the file's S->T.enabled = false must win: %s", diagStrings(c))
	}
}

func TestProviders(t *testing.T) {
	dir := t.TempDir()
	secrets := filepath.Join(dir, "secrets")
	if err := os.MkdirAll(secrets, 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(secrets, "pw"), []byte("hunter2"), 0o600)
	_ = os.WriteFile(filepath.Join(dir, "creds.properties"), []byte("user=alice\n"), 0o600)
	cfg := base + `A->B.enabled = true
config.providers = file, env, dir
config.providers.file.class = org.apache.kafka.common.config.provider.FileConfigProvider
config.providers.file.param.allowed.paths = ` + dir + `
config.providers.env.class = org.apache.kafka.common.config.provider.EnvVarConfigProvider
config.providers.env.param.allowlist.pattern = KMM_.*
config.providers.dir.class = org.apache.kafka.common.config.provider.DirectoryConfigProvider
A->B.tasks.max = ${env:KMM_TASKS}
B.sasl.jaas.config = x username="${file:` + dir + `/creds.properties:user}" password="${dir:` + secrets + `:pw}";
B.ssl.key.password = ${env:HOME}
B.ssl.keystore.password = ${file:/etc/passwd:x}
`
	path := filepath.Join(dir, "mm2.properties")
	_ = os.WriteFile(path, []byte(cfg), 0o600)
	env := map[string]string{"KMM_TASKS": "7", "HOME": "/root"}
	c, _ := Load(LoadOptions{ConfigFile: path, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	f := c.Flow("A->B")
	if f.Settings.TasksMax != 7 {
		t.Errorf("tasks.max from env = %d", f.Settings.TasksMax)
	}
	jaas := f.Connector["target.cluster.sasl.jaas.config"]
	if !jaas.FromProvider || !strings.Contains(jaas.Resolved(), `username="alice" password="hunter2"`) {
		t.Errorf("jaas = %q", jaas.Resolved())
	}
	d := diagStrings(c)
	if !strings.Contains(d, "${env:HOME}: environment variable HOME does not match the provider's allowlist.pattern") {
		t.Errorf("allowlist not honoured:\n%s", d)
	}
	if !strings.Contains(d, "${file:/etc/passwd:x}: path /etc/passwd is outside allowed.paths") {
		t.Errorf("allowed.paths not honoured:\n%s", d)
	}
	// Never in the reports (data: what they do not hold cannot be rendered).
	r, _ := NewExplainReport(c, ExplainOptions{})
	var b strings.Builder
	_ = writeJSON(&b, r)
	_ = writeJSON(&b, NewCheckReport(c, ReportOptions{}))
	if strings.Contains(b.String(), "hunter2") || strings.Contains(b.String(), "alice") {
		t.Error("a provider-resolved value was rendered")
	}
}

func TestTyped(t *testing.T) {
	if l := ParseList("  a , b,\tc ,"); strings.Join(l, "|") != "a|b|c|" {
		t.Errorf("list = %q", l)
	}
	if l := ParseList("   "); len(l) != 0 {
		t.Errorf("blank list = %q", l)
	}
	if b, err := ParseBool(" TRUE "); !b || err != nil {
		t.Error("bool")
	}
	if _, err := ParseBool("yes"); err == nil {
		t.Error("yes is not a boolean")
	}
	if JavaParseBoolean("true ") || !JavaParseBoolean("TrUe") {
		t.Error("Boolean.parseBoolean")
	}
	if n, err := ParseInt(" +12 "); n != 12 || err != nil {
		t.Error("int")
	}
	for _, bad := range []string{"0x10", "1_000", "99999999999", "", "1.5"} {
		if _, err := ParseInt(bad); err == nil {
			t.Errorf("ParseInt(%q) accepted", bad)
		}
	}
	if _, err := ParseShort("40000"); err == nil {
		t.Error("short overflow")
	}
}

func TestDidYouMean(t *testing.T) {
	cands := knownTopLevelCandidates()
	for in, want := range map[string]string{
		"sync.acls.enabled":              "sync.topic.acls.enabled",
		"refresh.topic.interval.seconds": "refresh.topics.interval.seconds",
		"emit.checkpoint.enabled":        "emit.checkpoints.enabled",
		"replication.factr":              "replication.factor",
		"completely.unrelated.thing":     "",
	} {
		if got := didYouMean(in, cands, false); got != want {
			t.Errorf("didYouMean(%q) = %q, want %q", in, got, want)
		}
	}
	if got := didYouMean("source", []string{"SOURCE", "TARGET"}, true); got != "SOURCE" {
		t.Errorf("alias fold = %q", got)
	}
	if got := didYouMean("C", []string{"A", "B"}, true); got != "" {
		t.Errorf("short aliases must not be suggested: %q", got)
	}
}

func TestSettingsDefaults(t *testing.T) {
	c, err := load(t, map[string]string{"mm2.properties": base + "A->B.enabled=true\n"}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := c.Flow("A->B").Settings
	if s.RefreshTopicsInterval != 10*time.Minute || s.EmitCheckpointsInterval != time.Minute || s.EmitHeartbeatsInterval != time.Second ||
		s.SyncGroupOffsets || s.ReplicationFactor != 2 || s.TasksMax != 1 || s.OffsetSyncsTopicLocation != "source" ||
		s.ReplicationPolicySeparator != "." || s.InternalSeparator != "." || s.OffsetLagMax != 100 || s.UseDefaultsFrom != "target" {
		t.Errorf("defaults: %+v", s)
	}
	if strings.Join(s.TopicsExclude, ", ") != `mm2.*\.internal, .*\.replica, __.*` {
		t.Errorf("topics.exclude default = %q", s.TopicsExclude)
	}
	f := c.Flow("A->B")
	if f.TopicFilter.Match("mm2-offsets.A.internal") || !f.TopicFilter.Match("orders.internal") || f.GroupFilter.Match("console-consumer-1") {
		t.Error("default filters")
	}
	if f.ConfigPropertyFilter.Match("min.insync.replicas") || !f.ConfigPropertyFilter.Match("retention.ms") {
		t.Error("config property filter")
	}
}

// TestPackageHygiene: mm2conf never prints, never imports
// confluent-kafka-go, a logger or the CLI.
func TestPackageHygiene(t *testing.T) {
	fset := token.NewFileSet()
	files, _ := filepath.Glob("*.go")
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range []string{"confluent-kafka-go", "log", "log/slog", "github.com/urfave/cli", "github.com/fatih/color", "C"} {
				if p == bad || strings.Contains(p, "confluent-kafka-go") || strings.HasPrefix(p, "github.com/urfave/cli") {
					t.Errorf("%s imports %s", name, p)
				}
			}
		}
		src, _ := os.ReadFile(name)
		for _, bad := range []string{"os.Stdout", "os.Stderr", "fmt.Print", "println(", "os.Exit"} {
			if strings.Contains(string(src), bad) {
				t.Errorf("%s uses %s", name, bad)
			}
		}
	}
}

// The ISO-8859-1 warning names keys and values written as UTF-8 and quotes what they become;
// comments and genuine ISO-8859-1 bytes do not warn.
func TestEncodingWarning(t *testing.T) {
	base := "clusters = A, B\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\nA->B.enabled = true\n"
	for name, c := range map[string]struct {
		body string
		want string // "" = no encoding warning
	}{
		"utf8 comment":  {"# caf\xc3\xa9\n" + base, ""},
		"latin1 value":  {base + "A->B.topics = caf\xe9.*\n", ""},
		"escaped value": {base + "A->B.topics = caf\\u00e9.*\n", ""},
		"utf8 value":    {base + "A->B.topics = caf\xc3\xa9.*\n", `mm2.properties:5: warning: the value of A->B.topics was written as UTF-8 ("café.*"), but MM2 reads properties files as ISO-8859-1, so it becomes "cafÃ©.*" (kmm does the same)`},
		"utf8 secret":   {base + "B.ssl.truststore.password = s\xc3\xa9cret\n", `mm2.properties:5: warning: the value of B.ssl.truststore.password holds non-ASCII characters written as UTF-8, but MM2 reads properties files as ISO-8859-1, so each of their bytes becomes a character of its own (kmm does the same)`},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, _ := load(t, map[string]string{"mm2.properties": c.body}, LoadOptions{ConfigFile: "mm2.properties"})
			var got []string
			for _, d := range cfg.Diagnostics {
				if d.Code == "encoding-utf8" {
					got = append(got, d.String())
				}
			}
			switch {
			case c.want == "" && len(got) > 0:
				t.Errorf("unexpected warning: %v", got)
			case c.want != "" && (len(got) != 1 || got[0] != c.want):
				t.Errorf("got %v, want %q", got, c.want)
			}
		})
	}
}
