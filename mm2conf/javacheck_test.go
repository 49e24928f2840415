package mm2conf

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

var updateJava = flag.Bool("update-java", false, "re-record testdata/mm2/javacheck/mm2_expected.jsonl with the real MirrorMakerConfig (needs java and .testbed/kafka-4.1.1)")

type loadedCase struct {
	c   *Config
	err error
	tmp string
}

// knownDivergences are cases where kmm deliberately differs from MM2.
var knownDivergences = map[string]string{
	// MM2 instantiates every declared ConfigProvider at startup and fails
	// when a class is missing, even if nothing references it; kmm cannot
	// load Java classes and only warns when the provider is unused.
	"strimzi-k8s-secret-provider": "unused unsupported provider class: kmm warns, MM2 (without the jar) fails",
}

// mm2Expected is what MM2's own MirrorMakerConfig builds for a corpus case.
type mm2Expected struct {
	Name  string   `json:"name"`
	Error string   `json:"error,omitempty"`
	Pairs []string `json:"pairs,omitempty"`
	Flows map[string]struct {
		Connector map[string]string `json:"connector"`
		Worker    map[string]string `json:"worker"`
	} `json:"flows,omitempty"`
}

const expectedFile = corpusDir + "/javacheck/mm2_expected.jsonl"

// TestJavaCrossCheck compares, for every corpus case, the flows and the raw
// connector and worker maps kmm builds with what Kafka 4.1.1's
// MirrorMakerConfig builds from the same (merged) properties. The Java
// answers are recorded in testdata/mm2/javacheck/mm2_expected.jsonl
// (go test ./mm2conf -run TestJavaCrossCheck -update-java re-records them).
func TestJavaCrossCheck(t *testing.T) {
	cases := corpusCases(t)
	byName := map[string]loadedCase{}
	work := t.TempDir()
	var input bytes.Buffer
	for _, cc := range cases {
		c, lerr, tmp := loadCase(t, cc)
		if c.raw == nil || len(c.Files) == 0 {
			continue
		}
		byName[cc.name] = loadedCase{c, lerr, tmp}
		if !*updateJava {
			continue
		}
		// The merged input (after the command-line forms), as MM2 would
		// read it from one file.
		f := filepath.Join(work, cc.name+".properties")
		if err := os.WriteFile(f, SerializeProperties(c.Entries()), 0o644); err != nil {
			t.Fatal(err)
		}
		line, _ := json.Marshal(map[string]any{"name": cc.name, "file": f, "clusters": c.Targets})
		input.Write(line)
		input.WriteByte('\n')
	}
	if *updateJava {
		recordJava(t, &input, byName)
	}
	f, err := os.Open(expectedFile)
	if err != nil {
		t.Fatalf("%v (record it with -update-java)", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<22), 1<<22)
	checked := 0
	for sc.Scan() {
		var exp mm2Expected
		if err := json.Unmarshal(sc.Bytes(), &exp); err != nil {
			t.Fatal(err)
		}
		l, ok := byName[exp.Name]
		if !ok {
			continue
		}
		checked++
		if why, ok := knownDivergences[exp.Name]; ok {
			t.Logf("%s: known divergence: %s", exp.Name, why)
			continue
		}
		if exp.Error != "" && l.err != nil {
			// Both refuse the configuration.
			continue
		}
		if exp.Error != "" {
			t.Errorf("%s: MM2 refuses it (%s), kmm accepts it", exp.Name, exp.Error)
			continue
		}
		var got []string
		for _, fl := range l.c.Flows {
			got = append(got, fl.Name())
		}
		sort.Strings(got)
		if !reflect.DeepEqual(nonNil(got), nonNil(exp.Pairs)) {
			t.Errorf("%s: MM2 creates herders %v, kmm %v (MM2 error: %s)", exp.Name, exp.Pairs, got, exp.Error)
			continue
		}
		for _, fl := range l.c.Flows {
			e := exp.Flows[fl.Name()]
			conn := map[string]string{}
			for k, v := range fl.Connector {
				conn[k] = normalise(v.Raw, l.tmp)
			}
			if !reflect.DeepEqual(conn, e.Connector) {
				t.Errorf("%s %s: connector config differs from MM2's:\n%s", exp.Name, fl.Name(), mapDiff(e.Connector, conn))
			}
			worker := map[string]string{}
			for k, v := range fl.Worker {
				worker[k] = normalise(v.Resolved(), l.tmp)
			}
			if e.Worker != nil && !reflect.DeepEqual(worker, e.Worker) {
				t.Errorf("%s %s: worker config differs from MM2's:\n%s", exp.Name, fl.Name(), mapDiff(e.Worker, worker))
			}
		}
	}
	if checked < 40 {
		t.Errorf("only %d cases cross-checked", checked)
	}
}

func mapDiff(mm2, kmm map[string]string) string {
	var b strings.Builder
	keys := map[string]bool{}
	for k := range mm2 {
		keys[k] = true
	}
	for k := range kmm {
		keys[k] = true
	}
	var ks []string
	for k := range keys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, k := range ks {
		a, aok := mm2[k]
		b2, bok := kmm[k]
		if a != b2 || aok != bok {
			b.WriteString("  " + k + ": mm2=")
			if aok {
				b.WriteString(strconvQuote(a))
			} else {
				b.WriteString("(absent)")
			}
			b.WriteString(" kmm=")
			if bok {
				b.WriteString(strconvQuote(b2))
			} else {
				b.WriteString("(absent)")
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

func recordJava(t *testing.T, input *bytes.Buffer, byName map[string]loadedCase) {
	t.Helper()
	libs, _ := filepath.Abs("../.testbed/kafka-4.1.1/libs")
	if _, err := os.Stat(libs); err != nil {
		t.Fatalf("-update-java needs %s", libs)
	}
	classes := t.TempDir()
	src, _ := filepath.Abs(corpusDir + "/javacheck/MM2Dump.java")
	if out, err := exec.Command("javac", "-d", classes, "-cp", libs+"/*", src).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	cmd := exec.Command("java", "-cp", libs+"/*:"+classes, "MM2Dump")
	cmd.Dir = corpusDir // relative provider paths resolve like in the corpus
	cmd.Stdin = input
	cmd.Env = append(os.Environ(), "MM2_A_BOOTSTRAP=a-1:9092,a-2:9092", "MM2_B_USER=mm2", "MM2_B_PASSWORD=hunter2", "MM2_TASKS=6")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("java MM2Dump: %v", err)
	}
	// Normalise the test-time directory so the file is stable.
	var norm bytes.Buffer
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.HasPrefix(line, `{"`) {
			continue // a log line
		}
		var e mm2Expected
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		tmp := byName[e.Name].tmp
		if tmp != "" {
			line = strings.ReplaceAll(line, tmp, "@TMP@")
		}
		norm.WriteString(line)
		norm.WriteByte('\n')
	}
	if err := os.WriteFile(expectedFile, norm.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
