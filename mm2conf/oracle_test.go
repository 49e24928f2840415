package mm2conf

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/kmmproject/kmm/pkg/mm2wire/javatest"
)

// The MM2 oracle: testdata/mm2/javacheck/MM2Oracle.java asks Kafka 4.1.1's own classes
// (MirrorMakerConfig, connectorBaseConfig, workerConfig, each connector's validate(), the
// connector configs, the topic and group filters, the replication policy, the clients' own
// checks) how they read a file, without dialing a broker; the tests here compare kmm's reading
// with it: start or refuse, the herders, the raw connector and worker maps, every typed connector
// setting, seven client configs per flow, the names the connectors make, and what each flow does
// with a set of topic and group names.

var updateCompat = flag.Bool("update-compat", false, "rewrite the verdict table of docs/mm2-compat.md from TestMM2OracleRealFiles")

// envMM2Real names the directory of the real MM2 files (default: ../shared/mm2-real beside the
// repository).
const envMM2Real = "KMM_MM2_REAL_DIR"

// oracleEnv is the whole environment of both readers (the JVM gets nothing else, kmm's
// LookupEnv only this): the corpus cases' variables and those the real files reference.
var oracleEnvVars = map[string]string{
	"NEON_BOOTSTRAP_SERVER": "neon-broker:9092",
	"NEON_USERNAME":         "neon-user",
	"NEON_PASSWORD":         "neon-password",
	"MIRROR_MM2_PASSWORD":   "mirror-password",
}

// deliberate lists where kmm reads a file differently from MM2 4.1.1 on purpose, keyed by case
// name; docs/mm2-compat.md gives the same reasons. The legacy *.blacklist keys are not listed:
// they are compared with MM2 2.7-3.9's reading (see TestMM2Oracle).
var deliberate = map[string]string{
	"25-ibm-eventstreams-sasl-plain": "empty SASL password: MM2 starts and fails at authentication; librdkafka cannot send an empty password, so kmm refuses the file at check time with the line",
	"malformed-empty-password":       "empty SASL password: MM2 starts and fails at authentication; librdkafka cannot send an empty password, so kmm refuses the file at check time with the line",
	"strimzi-k8s-secret-provider":    "an unused config provider whose class is missing: MM2 (without the jar) fails, kmm warns because nothing references it",
	"malformed-transforms":           "single message transforms: MM2 runs them, kmm copies records unchanged and refuses the file",
	"malformed-converter":            "a converter other than ByteArrayConverter: MM2 re-encodes records, kmm copies bytes and refuses the file",
	"malformed-gssapi":               "SASL GSSAPI (Kerberos): not supported by kmm's build of librdkafka",
	"malformed-regex-possessive":     "a Java regex feature kmm's regex engine cannot run exactly (possessive quantifier): kmm refuses rather than guess",
	"malformed-no-enabled-flow":      "no flow is enabled: MM2 runs heartbeats only, kmm refuses a file that replicates nothing",
	"malformed-flow-unknown-alias":   "a flow key naming an alias that is not in clusters: MM2 ignores the flow, kmm refuses the file (the flow the author asked for would silently not run)",
	"malformed-no-bootstrap":         "a cluster without bootstrap.servers: MM2 connects to localhost:9092, kmm refuses the file",
	"malformed-provider-missing-key": "a ${provider:path:key} reference that cannot be resolved: MM2 keeps the text literally, kmm refuses the file",
	"malformed-provider-undeclared":  "a ${provider:...} reference to an undeclared provider: MM2 keeps the text literally, kmm refuses the file",
	"seed-form1":                     "no flow is enabled: MM2 runs heartbeats only, kmm refuses a file that replicates nothing",
}

type oracleIn struct {
	Name     string   `json:"name"`
	File     string   `json:"file"`
	Clusters []string `json:"clusters"`
	Topics   []string `json:"topics"`
	Groups   []string `json:"groups"`
}

type oracleTopic struct {
	Name       string `json:"name"`
	Replicated bool   `json:"replicated"`
	Reason     string `json:"reason"`
	Target     string `json:"target"`
}

type oracleGroup struct {
	Name         string `json:"name"`
	Checkpointed bool   `json:"checkpointed"`
	Synced       bool   `json:"synced"`
	Reason       string `json:"reason"`
}

type oracleTyped struct {
	Settings      map[string]any    `json:"settings"`
	Names         map[string]string `json:"names"`
	Topics        []oracleTopic     `json:"topics"`
	Groups        []oracleGroup     `json:"groups"`
	SettingsError string            `json:"settings_error"`
}

type oracleFlow struct {
	oracleTyped
	Connector      map[string]string              `json:"connector"`
	Worker         map[string]string              `json:"worker"`
	WorkerProblems []string                       `json:"worker_problems"`
	Rejected       map[string]map[string][]string `json:"rejected"`
	ClientProblems map[string]string              `json:"client_problems"`
	Clients        map[string]map[string]string   `json:"clients"`
	Legacy         *oracleTyped                   `json:"legacy"`
}

type oracleOut struct {
	Name  string                 `json:"name"`
	Fatal string                 `json:"fatal"`
	Pairs []string               `json:"pairs"`
	Flows map[string]*oracleFlow `json:"flows"`
	Ms    int64                  `json:"ms"`
}

// runOracle runs MM2Oracle.java over the inputs (dir: its working directory).
func runOracle(t *testing.T, ins []oracleIn, dir string) map[string]*oracleOut {
	t.Helper()
	classes := javatest.Compile(t, "testdata/mm2/javacheck/MM2Oracle.java", "testdata/mm2/javacheck/WorkerProducerOracle.java")
	var stdin bytes.Buffer
	for _, in := range ins {
		b, _ := json.Marshal(in)
		stdin.Write(b)
		stdin.WriteByte('\n')
	}
	env := []string{"PATH=" + os.Getenv("PATH")}
	for _, k := range []string{"JAVA_HOME", "HOME", "LANG"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for k, v := range oracleEnvVars {
		env = append(env, k+"="+v)
	}
	outFile := filepath.Join(t.TempDir(), "oracle.jsonl")
	classes.Run(t, "org.apache.kafka.connect.mirror.MM2Oracle", javatest.RunOptions{Stdin: stdin.Bytes(), Env: env, Dir: dir}, outFile)
	f, err := os.Open(outFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]*oracleOut{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<24), 1<<24)
	var total int64
	for sc.Scan() {
		var o oracleOut
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			t.Fatalf("oracle output: %v", err)
		}
		total += o.Ms
		out[o.Name] = &o
	}
	if len(out) != len(ins) {
		t.Fatalf("the oracle answered %d of %d inputs", len(out), len(ins))
	}
	t.Logf("MM2 oracle: %d files in %d ms of JVM time", len(ins), total)
	return out
}

func oracleLookupEnv(k string) (string, bool) { v, ok := oracleEnvVars[k]; return v, ok }

var plainName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// askNames builds the topic and group names to ask both readers about: fixed names that
// exercise every rule, names derived from the aliases (remote topics, cycles, heartbeats), and
// the plain names the file's include lists mention.
func askNames(c *Config) (topics, groups []string) {
	seen := map[string]bool{}
	addT := func(ns ...string) {
		for _, n := range ns {
			if n != "" && !seen["t"+n] {
				seen["t"+n] = true
				topics = append(topics, n)
			}
		}
	}
	addG := func(ns ...string) {
		for _, n := range ns {
			if n != "" && !seen["g"+n] {
				seen["g"+n] = true
				groups = append(groups, n)
			}
		}
	}
	addT("orders", "heartbeats", "__consumer_offsets", "_schemas", ".hidden", "connect-offsets", "orders.replica", "orders-internal",
		"orders.internal", "ordersinternal", "checkpointsinternal", "mm2-offsets.A.internal", "payments.v1")
	addG("app", "orders-service", "console-consumer-42", "connect-mm2", "__internal", "mm2-group")
	aliases := append([]string{}, c.Clusters...)
	for _, f := range c.Flows {
		aliases = append(aliases, f.Settings.SourceClusterAlias, f.Settings.TargetClusterAlias)
	}
	for _, a := range aliases {
		for _, sep := range []string{".", "_", ""} {
			addT(a+sep+"orders", a+sep+"heartbeats")
		}
		addT("mm2-offset-syncs."+a+".internal", a+".checkpoints.internal")
		addG(a + "-mm2")
		for _, b := range c.Clusters {
			addT(a + "." + b + ".orders")
		}
	}
	for _, f := range c.Flows {
		for _, e := range f.Settings.Topics {
			if plainName.MatchString(e) {
				addT(e)
			}
		}
		for _, e := range f.Settings.Groups {
			if plainName.MatchString(e) {
				addG(e)
			}
		}
	}
	return topics, groups
}

// oracleVerdict is MM2's start-or-refuse verdict from the oracle's answer: it refuses when
// MirrorMakerConfig or the herder set fails, when a herder's worker config or its clients fail
// their checks, or when a connector that would run is rejected by its validate() (the checkpoint
// connector's rejection for emit.checkpoints.enabled=false or emit.offset-syncs.enabled=false
// only means "no checkpoints").
func oracleVerdict(o *oracleOut) string {
	if o.Fatal != "" {
		return "refuses: " + o.Fatal
	}
	var reasons []string
	for _, name := range sortedKeys(o.Flows) {
		f := o.Flows[name]
		for _, p := range f.WorkerProblems {
			reasons = append(reasons, name+": "+p)
		}
		for _, conn := range []string{"MirrorSourceConnector", "MirrorCheckpointConnector", "MirrorHeartbeatConnector"} {
			errs := f.Rejected[conn]
			for _, k := range sortedKeys(errs) {
				if conn == "MirrorCheckpointConnector" && (k == "emit.checkpoints.enabled" || k == "emit.offset-syncs.enabled") {
					continue
				}
				if conn != "MirrorHeartbeatConnector" && !oracleEnabled(f) {
					continue
				}
				reasons = append(reasons, fmt.Sprintf("%s: %s rejected: %s", name, conn, strings.Join(errs[k], "; ")))
				break
			}
		}
		if f.SettingsError != "" && oracleEnabled(f) {
			// The connector's start() builds its filters and policy from the config and fails.
			reasons = append(reasons, name+": MirrorSourceConnector fails to start: "+f.SettingsError)
		}
		for _, role := range sortedKeys(f.ClientProblems) {
			reasons = append(reasons, name+": "+role+": "+f.ClientProblems[role])
		}
	}
	if len(reasons) == 0 {
		return "runs"
	}
	return "refuses: " + reasons[0]
}

func oracleEnabled(f *oracleFlow) bool {
	if v, ok := f.Settings["enabled"].(string); ok {
		return v == "true"
	}
	b, err := ParseBool(f.Connector["enabled"])
	return err == nil && b
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func kmmVerdict(c *Config) string {
	errs := c.Diagnostics.Errors()
	if len(errs) == 0 {
		return "runs"
	}
	d := errs[0]
	if d.Pos.Line > 0 {
		return fmt.Sprintf("refuses: line %d: %s", d.Pos.Line, d.Msg)
	}
	return "refuses: " + d.Msg
}

// canonical renders a kmm setting the way the oracle renders MM2's typed value.
func canonical(typ string, v Value) any {
	r := v.Resolved()
	switch typ {
	case "LIST":
		return ParseList(r)
	case "BOOLEAN":
		b, err := ParseBool(r)
		if err != nil {
			return "invalid: " + r
		}
		return fmt.Sprint(b)
	case "INT", "LONG", "SHORT":
		n, err := ParseLong(r)
		if err != nil {
			return "invalid: " + r
		}
		return fmt.Sprint(n)
	}
	return javaTrim(r)
}

func normJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// oracleCase is one file read by both.
type oracleCase struct {
	name string
	c    *Config
	// repl maps strings of kmm's reading to what the JVM saw (test-time paths).
	repl map[string]string
}

func (oc oracleCase) norm(s string) string {
	for k, v := range oc.repl {
		s = strings.ReplaceAll(s, k, v)
	}
	return s
}

// compareOracle returns the differences between kmm's reading and MM2's.
func compareOracle(oc oracleCase, o *oracleOut) []string {
	var diffs []string
	add := func(format string, args ...any) { diffs = append(diffs, fmt.Sprintf(format, args...)) }
	mv, kv := oracleVerdict(o), kmmVerdict(oc.c)
	if strings.HasPrefix(mv, "runs") != strings.HasPrefix(kv, "runs") {
		add("start or refuse: MM2 %s; kmm %s", mv, kv)
	}
	if o.Fatal != "" {
		return diffs
	}
	var got []string
	for _, f := range oc.c.Flows {
		got = append(got, f.Name())
	}
	sort.Strings(got)
	if !reflect.DeepEqual(nonNil(got), nonNil(o.Pairs)) {
		add("herders: MM2 %v, kmm %v", o.Pairs, got)
		return diffs
	}
	for _, f := range oc.c.Flows {
		of := o.Flows[f.Name()]
		conn := map[string]string{}
		for k, v := range f.Connector {
			conn[k] = oc.norm(v.Raw)
		}
		if !reflect.DeepEqual(conn, of.Connector) {
			add("%s: connector config:\n%s", f.Name(), mapDiff(of.Connector, conn))
		}
		if of.Worker != nil {
			worker := map[string]string{}
			for k, v := range f.Worker {
				worker[k] = oc.norm(v.Resolved())
			}
			if !reflect.DeepEqual(worker, of.Worker) {
				add("%s: worker config:\n%s", f.Name(), mapDiff(of.Worker, worker))
			}
		}
		if of.Settings == nil || f.TopicFilter == nil || f.GroupFilter == nil {
			continue // MM2 or kmm cannot build this flow's connector settings (both refuse it)
		}
		if _, err := f.Policy(); err != nil {
			continue
		}
		typed := of.oracleTyped
		legacy := of.Legacy != nil
		if legacy {
			typed = *of.Legacy // kmm applies *.blacklist as MM2 2.7-3.9 did
		}
		types := map[string]string{}
		vals := map[string]Value{}
		for _, s := range f.Effective {
			types[s.Key], vals[s.Key] = s.Type, s.Value
		}
		for _, k := range sortedKeys(typed.Settings) {
			mv := typed.Settings[k]
			if mv == nil {
				continue
			}
			v, ok := vals[k]
			if !ok {
				add("%s: setting %s: MM2 %s, kmm has none", f.Name(), k, normJSON(mv))
				continue
			}
			if a, b := normJSON(mv), oc.norm(normJSON(canonical(types[k], v))); a != b {
				add("%s: setting %s: MM2 %s, kmm %s", f.Name(), k, a, b)
			}
		}
		names, err := f.Names()
		if err != nil {
			add("%s: names: %v", f.Name(), err)
			continue
		}
		var part map[string]any
		_ = json.Unmarshal([]byte(typed.Names["source_partition"]), &part)
		for k, pair := range map[string][2]string{
			"source alias":        {typed.Names["source_alias"], names.SourceAlias},
			"target alias":        {typed.Names["target_alias"], names.TargetAlias},
			"offset-syncs topic":  {typed.Names["offset_syncs_topic"], names.OffsetSyncsTopic},
			"checkpoints topic":   {typed.Names["checkpoints_topic"], names.CheckpointsTopic},
			"heartbeats topic":    {typed.Names["heartbeats_topic"], names.HeartbeatsTopic},
			"partition's cluster": {fmt.Sprint(part["cluster"]), names.PartitionCluster},
		} {
			if pair[0] != pair[1] {
				add("%s: %s: MM2 %q, kmm %q", f.Name(), k, pair[0], pair[1])
			}
		}
		if _, rejected := of.Rejected["MirrorSourceConnector"]; rejected && oc.c.Diagnostics.HasErrors() {
			continue // the flow runs in neither
		}
		for _, ot := range typed.Topics {
			v := f.Topic(ot.Name)
			if v.Replicated != ot.Replicated || v.Code != ot.Reason || v.Replicated && v.TargetTopic != ot.Target {
				add("%s: topic %q: MM2 replicated=%v (%s) as %q; kmm replicated=%v (%s) as %q", f.Name(), ot.Name, ot.Replicated, ot.Reason, ot.Target, v.Replicated, v.Code, v.TargetTopic)
			}
		}
		for _, og := range typed.Groups {
			v := f.Group(og.Name)
			if v.Checkpointed != og.Checkpointed || v.Synced != og.Synced || v.Code != og.Reason {
				add("%s: group %q: MM2 checkpointed=%v synced=%v (%s); kmm checkpointed=%v synced=%v (%s)", f.Name(), og.Name, og.Checkpointed, og.Synced, og.Reason, v.Checkpointed, v.Synced, v.Code)
			}
		}
		if legacy {
			continue
		}
		for _, role := range Roles() {
			mc, ok := of.Clients[role]
			if !ok {
				continue
			}
			cc := f.ClientConfig(role)
			// Effective settings are those the Java client knows (it ignores the others, e.g.
			// MM2 hands "override.acks" of producer.override.acks to its offset-syncs producer).
			known := clientKeySetOf(role)
			kc := map[string]string{}
			for k, v := range cc.Java {
				if k != "client.id" && known[k] {
					kc[k] = oc.norm(v.Resolved())
				}
			}
			m := map[string]string{}
			for k, v := range mc {
				if known[k] {
					m[k] = v
				}
			}
			if role == RoleTargetProducer {
				// The worker joins its parsed bootstrap list with commas.
				for _, x := range []map[string]string{m, kc} {
					if bs, ok := x["bootstrap.servers"]; ok {
						x["bootstrap.servers"] = strings.Join(ParseList(bs), ",")
					}
				}
			}
			if !reflect.DeepEqual(kc, m) {
				add("%s: client %s:\n%s", f.Name(), role, mapDiff(m, kc))
			}
		}
	}
	return diffs
}

func clientKeySetOf(role string) map[string]bool {
	switch role {
	case RoleSourceConsumer, RoleTargetConsumer:
		return consumerKeySet
	case RoleSourceAdmin, RoleTargetAdmin:
		return adminKeySet
	}
	return producerKeySet
}

// TestMM2Oracle reads every case of the project's corpus (testdata/mm2) with kmm and with MM2's
// own classes and compares the readings. It runs in CI, so that the oracle machinery is proven
// whatever happens to the real files of TestMM2OracleRealFiles.
func TestMM2Oracle(t *testing.T) {
	cases := corpusCases(t)
	work := t.TempDir()
	var ins []oracleIn
	byName := map[string]oracleCase{}
	for _, cc := range cases {
		if cc.spec.Env != nil {
			for k, v := range cc.spec.Env {
				if ov, ok := oracleEnvVars[k]; ok && ov != v {
					t.Fatalf("%s: env %s=%s conflicts with %s", cc.name, k, v, ov)
				}
			}
		}
	}
	for _, cc := range cases {
		for k, v := range cc.spec.Env {
			oracleEnvVars[k] = v
		}
	}
	for _, cc := range cases {
		cc.spec.Env = oracleEnvVars
		c, _, tmp := loadCase(t, cc)
		if c.raw == nil || len(c.Files) == 0 {
			continue // kmm could not read the file (a syntax error): no MM2 map to compare
		}
		oc := oracleCase{name: cc.name, c: c, repl: map[string]string{}}
		if tmp != "" {
			for k, v := range seedStorePaths(tmp) {
				oc.repl[k] = v
			}
		}
		var entries []Entry
		for _, e := range c.Entries() {
			e.Value = oc.norm(e.Value)
			entries = append(entries, e)
		}
		file := filepath.Join(work, cc.name+".properties")
		if err := os.WriteFile(file, SerializeProperties(entries), 0o644); err != nil {
			t.Fatal(err)
		}
		topics, groups := askNames(c)
		ins = append(ins, oracleIn{Name: cc.name, File: file, Clusters: c.Targets, Topics: topics, Groups: groups})
		byName[cc.name] = oc
	}
	dir, _ := filepath.Abs(corpusDir) // relative provider paths resolve like in the corpus
	outs := runOracle(t, ins, dir)
	checked := 0
	for _, in := range ins {
		oc, o := byName[in.Name], outs[in.Name]
		diffs := compareOracle(oc, o)
		checked++
		if why, ok := deliberate[in.Name]; ok {
			if len(diffs) == 0 {
				t.Errorf("%s: listed as a deliberate difference (%s) but kmm and MM2 agree: remove it from the list", in.Name, why)
			}
			continue
		}
		for _, d := range diffs {
			t.Errorf("%s: %s", in.Name, d)
		}
	}
	if checked < 60 {
		t.Errorf("only %d corpus cases compared with MM2", checked)
	}
}

// realDir returns the directory of the real MM2 files, or "" when it is absent.
func realDir(t *testing.T) string {
	if d := os.Getenv(envMM2Real); d != "" {
		if _, err := os.Stat(d); err != nil {
			t.Fatalf("%s=%s: %v", envMM2Real, d, err)
		}
		return d
	}
	d, _ := filepath.Abs("../../shared/mm2-real")
	if _, err := os.Stat(d); err != nil {
		return ""
	}
	return d
}

// verdictRow is one line of the table in docs/mm2-compat.md.
type verdictRow struct {
	File, MM2, KMM, Note string
}

// TestMM2OracleRealFiles compares kmm's reading of the real MM2 files (../shared/mm2-real, or
// $KMM_MM2_REAL_DIR) with MM2's, and checks the verdict table of docs/mm2-compat.md against it
// (-update-compat rewrites the table). The files are read where they are, never copied.
func TestMM2OracleRealFiles(t *testing.T) {
	dir := realDir(t)
	if dir == "" {
		t.Skipf("the real MM2 files are not here (../shared/mm2-real beside the repository); set %s to their directory to compare them with MM2 4.1.1", envMM2Real)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.properties"))
	if len(files) == 0 {
		t.Fatalf("no .properties files in %s", dir)
	}
	sort.Strings(files)
	var ins []oracleIn
	byName := map[string]oracleCase{}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".properties")
		c, _ := Load(LoadOptions{ConfigFile: file, LookupEnv: oracleLookupEnv})
		if c.raw == nil || len(c.Files) == 0 {
			t.Errorf("%s: kmm cannot read the file", name)
			continue
		}
		topics, groups := askNames(c)
		ins = append(ins, oracleIn{Name: name, File: file, Topics: topics, Groups: groups})
		byName[name] = oracleCase{name: name, c: c}
	}
	outs := runOracle(t, ins, dir)
	var rows []verdictRow
	for _, in := range ins {
		oc, o := byName[in.Name], outs[in.Name]
		diffs := compareOracle(oc, o)
		row := verdictRow{File: in.Name, MM2: oracleVerdict(o), KMM: kmmVerdict(oc.c)}
		var notes []string
		for _, f := range o.Flows {
			if f.Legacy != nil {
				notes = append(notes, "legacy *.blacklist applied as MM2 2.7-3.9 did (see below)")
				break
			}
		}
		if why, ok := deliberate[in.Name]; ok {
			if len(diffs) == 0 {
				t.Errorf("%s: listed as a deliberate difference (%s) but kmm and MM2 agree", in.Name, why)
			}
			notes = append(notes, "deliberate: "+why)
		} else {
			for _, d := range diffs {
				t.Errorf("%s: %s", in.Name, d)
			}
		}
		row.Note = strings.Join(notes, "; ")
		rows = append(rows, row)
	}
	checkCompatTable(t, rows, len(files))
}

const (
	tableStart = "<!-- verdict table: generated by TestMM2OracleRealFiles (go test ./mm2conf -run TestMM2OracleRealFiles -update-compat) -->"
	tableEnd   = "<!-- end of verdict table -->"
	compatDoc  = "../docs/mm2-compat.md"
)

func verdictCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 220 {
		s = s[:217] + "..."
	}
	return s
}

func checkCompatTable(t *testing.T, rows []verdictRow, nfiles int) {
	t.Helper()
	var b strings.Builder
	b.WriteString(tableStart + "\n\n")
	agree := 0
	for _, r := range rows {
		if strings.HasPrefix(r.MM2, "runs") == strings.HasPrefix(r.KMM, "runs") {
			agree++
		}
	}
	fmt.Fprintf(&b, "%d files; MM2 and kmm agree on start-or-refuse for %d.\n\n", nfiles, agree)
	b.WriteString("| file | MM2 4.1.1 | kmm | note |\n|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.File, verdictCell(r.MM2), verdictCell(r.KMM), verdictCell(r.Note))
	}
	b.WriteString("\n" + tableEnd)
	table := b.String()
	doc, err := os.ReadFile(compatDoc)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i, j := strings.Index(s, tableStart), strings.Index(s, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no verdict table markers", compatDoc)
	}
	cur := s[i : j+len(tableEnd)]
	if *updateCompat {
		if err := os.WriteFile(compatDoc, []byte(s[:i]+table+s[j+len(tableEnd):]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if cur != table {
		t.Errorf("the verdict table of %s is not what the oracle says now; rerun with -update-compat and review the diff:\n%s", compatDoc, table)
	}
}
