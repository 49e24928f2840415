package mm2conf_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/cmd/configcmd"
)

// TestRenderGoldens pins the text and JSON renderings the CLI prints (mm2conf builds the
// reports, pkg/cmd/configcmd renders them).
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
			c, tmp := LoadCorpusCase(t, tc.kase)
			var buf bytes.Buffer
			var err error
			switch {
			case tc.explain != nil:
				r, xerr := NewExplainReport(c, *tc.explain)
				if xerr != nil {
					t.Fatal(xerr)
				}
				ScrubPEM(r.Flows)
				if tc.json {
					err = configcmd.RenderJSON(&buf, r)
				} else {
					err = configcmd.RenderExplainText(&buf, r)
				}
			case tc.json:
				err = configcmd.RenderJSON(&buf, NewCheckReport(c, ReportOptions{}))
			default:
				err = configcmd.RenderCheckText(&buf, NewCheckReport(c, ReportOptions{}))
			}
			if err != nil {
				t.Fatal(err)
			}
			got := Normalise(buf.String(), tmp)
			if tc.json && !json.Valid([]byte(got)) {
				t.Fatal("invalid JSON")
			}
			path := filepath.Join(CorpusDir, "render", tc.name)
			if *Update {
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
	c, _ := LoadCorpusCase(t, "minimal")
	_, err := NewExplainReport(c, ExplainOptions{Flow: "x->y"})
	if err == nil || err.Error() != `no flow "x->y" (flows: primary->backup, backup->primary)` {
		t.Fatalf("err = %v", err)
	}
}
