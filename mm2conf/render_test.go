package mm2conf

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRenderGoldens pins the text and JSON renderings the CLI prints.
func TestRenderGoldens(t *testing.T) {
	for _, tc := range []struct {
		name, kase string
		explain    *ExplainOptions
		json       bool
	}{
		{name: "seed-form1.check.txt", kase: "seed-form1"},
		{name: "seed-form2.check.txt", kase: "seed-form2"},
		{name: "seed-form2.check.json", kase: "seed-form2", json: true},
		{name: "seed-form2.explain-bootstrap.txt", kase: "seed-form2", explain: &ExplainOptions{Flow: "SOURCE->TARGET", Keys: []string{"bootstrap.servers", "ssl.truststore.*"}}},
		{name: "sasl-plain.explain-producer.txt", kase: "sasl-plain", explain: &ExplainOptions{Sections: []string{"target-producer"}}},
		{name: "providers-file.explain.json", kase: "providers-file", explain: &ExplainOptions{Flow: "onprem->cloud", Keys: []string{"sasl.*"}}, json: true},
		{name: "unknown-keys.check.txt", kase: "unknown-keys"},
		{name: "malformed-regex-comma.check.txt", kase: "malformed-regex-comma"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cc corpusCase
			for _, c := range corpusCases(t) {
				if c.name == tc.kase {
					cc = c
				}
			}
			c, _, tmp := loadCase(t, cc)
			var buf bytes.Buffer
			var err error
			switch {
			case tc.explain != nil:
				r, xerr := NewExplainReport(c, *tc.explain)
				if xerr != nil {
					t.Fatal(xerr)
				}
				scrubPEM(r.Flows)
				if tc.json {
					err = r.RenderJSON(&buf)
				} else {
					err = r.RenderText(&buf)
				}
			case tc.json:
				err = NewCheckReport(c, ReportOptions{}).RenderJSON(&buf)
			default:
				err = NewCheckReport(c, ReportOptions{}).RenderText(&buf)
			}
			if err != nil {
				t.Fatal(err)
			}
			got := normalise(buf.String(), tmp)
			if tc.json && !json.Valid([]byte(got)) {
				t.Fatal("invalid JSON")
			}
			path := filepath.Join(corpusDir, "render", tc.name)
			if *update {
				_ = os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if got != string(want) {
				t.Errorf("rendering differs from %s:\n%s", path, got)
			}
			for _, l := range strings.Split(got, "\n") {
				if strings.HasSuffix(l, " ") {
					t.Errorf("trailing blank in %q", l)
				}
			}
		})
	}
}

func TestExplainUnknownFlow(t *testing.T) {
	c, _, _ := loadCase(t, corpusCase{name: "minimal", spec: caseSpec{Config: "minimal.properties"}})
	_, err := NewExplainReport(c, ExplainOptions{Flow: "x->y"})
	if err == nil || err.Error() != `no flow "x->y" (flows: primary->backup, backup->primary)` {
		t.Fatalf("err = %v", err)
	}
}
