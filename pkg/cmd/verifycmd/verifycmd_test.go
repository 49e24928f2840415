package verifycmd

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/verify"
)

func TestDrill(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, "drill.toml")
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	none := func(string) bool { return false }
	o := &Options{Level: verify.LevelMetadata}
	p := write("[verify]\nlevel = \"full\"\nmax_lag_records = 10\nmax_lag_time = \"1m\"\nmax_checkpoint_age = \"5m\"\nmax_duplicates = 0\n")
	if err := applyDrill(p, o, none); err != nil {
		t.Fatal(err)
	}
	if o.Level != "full" || o.Thresholds.MaxLagRecords != 10 || o.Thresholds.MaxLagTime != time.Minute || o.Thresholds.MaxCheckpointAge != 5*time.Minute ||
		o.Thresholds.MaxDuplicates == nil || *o.Thresholds.MaxDuplicates != 0 {
		t.Fatalf("%+v", o)
	}
	// Flags given on the command line win.
	o = &Options{Level: verify.LevelSample, Thresholds: verify.Thresholds{MaxLagRecords: 99}}
	if err := applyDrill(p, o, func(n string) bool { return n == "level" || n == "max-lag-records" }); err != nil {
		t.Fatal(err)
	}
	if o.Level != verify.LevelSample || o.Thresholds.MaxLagRecords != 99 || o.Thresholds.MaxLagTime != time.Minute {
		t.Fatalf("flags did not win: %+v", o)
	}
	for _, tc := range []struct{ text, want string }{
		{"[verify]\nmax_lag_records = 10\nmax_lag_time = \n", p + ":3"},
		{"[verify]\nmax_lag_time = \"soon\"\n", p + ":2: verify.max_lag_time: \"soon\" is not a duration"},
		{"[verify]\n\nmax_lag_records = \"ten\"\n", p + ":3: verify.max_lag_records: incompatible types"},
		{"[verify]\nmax_lag = 5\n", p + ":2: unknown key \"verify.max_lag\""},
	} {
		err := applyDrill(write(tc.text), &Options{}, none)
		if kerr.KindOf(err) != kerr.Usage || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v (kind %v), want usage error with %q", tc.text, err, kerr.KindOf(err), tc.want)
		}
	}
}

func sampleReport() *verify.Report {
	r := &verify.Report{Flow: "A->B", Level: "full", StartedAt: time.Unix(0, 0).UTC()}
	r.Add(verify.Finding{Check: verify.CheckTopics, Status: verify.OK, Topic: "orders", Reason: "remote topic exists"})
	r.Add(verify.Finding{Check: verify.CheckTopics, Status: verify.OK, Topic: "payments", Reason: "remote topic exists"})
	r.Add(verify.Finding{Check: verify.CheckFull, Status: verify.Fail, Topic: "orders", Partition: verify.P(int32(2)), TargetOffset: verify.P(int64(41)), Reason: "1 extra at target offset 41"})
	r.Add(verify.Finding{Check: verify.CheckHeartbeats, Status: verify.Warn, Reason: "no heartbeat"})
	r.Finish(time.Unix(3, 0).UTC())
	return r
}

func TestRender(t *testing.T) {
	var b bytes.Buffer
	if err := renderTable(&b, []*verify.Report{sampleReport()}, false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"flow A->B, level full: 2 OK, 1 WARN, 1 FAIL", "orders[2]", "1 extra at target offset 41", "all 2", "no heartbeat"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\033[") {
		t.Errorf("colour without a terminal:\n%s", out)
	}
	b.Reset()
	_ = renderTable(&b, []*verify.Report{sampleReport()}, true)
	if !strings.Contains(b.String(), "\033[") {
		t.Errorf("no colour when enabled:\n%s", b.String())
	}
	p := filepath.Join(t.TempDir(), "v.xml")
	if err := writeJUnit(p, []*verify.Report{sampleReport()}); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(p)
	var d struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
				Failure   *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
				Out string `xml:"system-out"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	if d.Tests != 4 || d.Failures != 1 || len(d.Suites) != 1 {
		t.Fatalf("%+v\n%s", d, raw)
	}
	var failed, warned bool
	for _, c := range d.Suites[0].Cases {
		if c.Classname == "kmm.verify.full" && c.Name == "orders[2]" && c.Failure != nil && c.Failure.Message == "1 extra at target offset 41" {
			failed = true
		}
		if c.Classname == "kmm.verify.heartbeats" && c.Failure == nil && strings.Contains(c.Out, "WARN") {
			warned = true
		}
	}
	if !failed || !warned {
		t.Fatalf("cases: %+v", d.Suites[0].Cases)
	}
}

func TestProgress(t *testing.T) {
	ios, _, _, errb := iostreams.Test()
	p := newProgress(cmdutil.NewTestFactory(ios, nil, time.Now))
	p.Start("full: records read on both sides", 100)
	p.Add(40)
	p.Done()
	if out := errb.String(); !strings.Contains(out, "kmm: full: records read on both sides: 40/100 (40%) done") || strings.Contains(out, "\r") {
		t.Fatalf("plain progress: %q", out)
	}
	ios, _, _, errb = iostreams.Test()
	ios.SetTTY(false, false, true)
	p = newProgress(cmdutil.NewTestFactory(ios, nil, time.Now))
	p.Start("sample: anchors", 10)
	p.Add(5)
	p.Done()
	if out := errb.String(); !strings.Contains(out, "\r") || !strings.Contains(out, "sample: anchors") || strings.Contains(out, "kmm: sample") {
		t.Fatalf("terminal progress: %q", out)
	}
}

func readJUnitFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
