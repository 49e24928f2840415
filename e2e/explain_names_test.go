package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
)

type nameVerdict struct {
	Topic       string `json:"topic"`
	Group       string `json:"group"`
	Flow        string `json:"flow"`
	Replicated  bool   `json:"replicated"`
	Synced      *bool  `json:"synced"`
	TargetTopic string `json:"target_topic"`
	TargetGroup string `json:"target_group"`
	Code        string `json:"code"`
	Reason      string `json:"reason"`
	Rule        *struct {
		Key  string `json:"key"`
		Line int    `json:"line"`
	} `json:"rule"`
}

func explainNames(t *testing.T, args ...string) []nameVerdict {
	t.Helper()
	r := Run(t, append([]string{"config", "explain"}, append(args, "-o", "json")...)...)
	if r.Code != 0 {
		t.Fatalf("kmm config explain %v: exit %d\n%s", args, r.Code, r.Stderr)
	}
	var env struct {
		Kind  string        `json:"kind"`
		Items []nameVerdict `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &env); err != nil || env.Kind != "config-explain-names" {
		t.Fatalf("not a config-explain-names document (%v):\n%s", err, r.Stdout)
	}
	return env.Items
}

// `kmm config explain FILE --list-topics` lists every topic of the source cluster of the bed with
// what the flow does with it and the rule (file:line) that decided; --topic/--group answer
// offline, fast, for names that need not exist; an unreachable source exits 4.
func TestExplainTopicsOnTheBed(t *testing.T) {
	bed := testbed.Attach(t)
	p := testbed.Unique(t, "xpl")
	orders, scratch, remote := p+"-orders", p+"-scratch", "B."+p+"-back"
	for _, tp := range []string{orders, scratch, remote} {
		bed.A.CreateTopic(t, tp, 1, nil)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "mm2.properties")
	body := strings.Join([]string{
		"clusters = A, B",
		"A.bootstrap.servers = " + bed.A.Bootstrap,
		"B.bootstrap.servers = " + bed.B.Bootstrap,
		"A->B.enabled = true",
		"A->B.topics = " + regexp.QuoteMeta(p) + ".*, B\\\\." + regexp.QuoteMeta(p) + ".*",
		"A->B.topics.exclude = .*-scratch",
		"A->B.groups = app-.*",
		"A->B.sync.group.offsets.enabled = true",
	}, "\n") + "\n"
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}

	all := explainNames(t, file, "--list-topics")
	got := map[string]nameVerdict{}
	for _, v := range all {
		if v.Flow != "A->B" || v.Topic == "" {
			t.Fatalf("unexpected item %+v", v)
		}
		got[v.Topic] = v
	}
	if _, ok := got["__consumer_offsets"]; !ok {
		t.Errorf("--topics did not list __consumer_offsets of A (got %d topics)", len(got))
	}
	for topic, want := range map[string]struct {
		replicated bool
		code       string
		target     string
		line       int
	}{
		orders:               {true, "included", "A." + orders, 5},
		scratch:              {false, "excluded", "", 6},
		remote:               {false, "cycle", "", 0},
		"__consumer_offsets": {false, "not-included", "", 5},
	} {
		v := got[topic]
		line := 0
		if v.Rule != nil {
			line = v.Rule.Line
		}
		if v.Replicated != want.replicated || v.Code != want.code || v.TargetTopic != want.target || line != want.line {
			t.Errorf("%s: replicated=%v code=%s target=%q line %d; want %v %s %q line %d (%s)", topic, v.Replicated, v.Code, v.TargetTopic, line,
				want.replicated, want.code, want.target, want.line, v.Reason)
		}
	}

	// Offline: any name, topics and groups, well under a second.
	start := time.Now()
	vs := explainNames(t, file, "--topic", "nope-"+p, "--topic", orders, "--group", "app-1", "--group", "other")
	took := time.Since(start)
	t.Logf("kmm config explain --topic --group (offline): %s", took.Round(time.Millisecond))
	if took > 2*time.Second {
		t.Errorf("--topic/--group took %s offline", took)
	}
	if len(vs) != 4 || vs[0].Code != "not-included" || !vs[1].Replicated || vs[2].Group != "app-1" || !vs[2].Replicated || vs[2].Synced == nil || !*vs[2].Synced ||
		vs[2].TargetGroup != "app-1" || vs[3].Code != "not-included" {
		t.Errorf("offline verdicts: %+v", vs)
	}

	// An unreachable source cluster: exit 4, promptly.
	bad := filepath.Join(dir, "bad.properties")
	if err := os.WriteFile(bad, []byte(strings.Replace(body, bed.A.Bootstrap, "127.0.0.1:1", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	r := Run(t, "config", "explain", bad, "--topics") // the old name of --list-topics, still accepted
	if r.Code != 4 || time.Since(start) > 30*time.Second {
		t.Errorf("unreachable source: exit %d after %s, want 4 within 30 s\n%s", r.Code, time.Since(start), r.Stderr)
	}
}
