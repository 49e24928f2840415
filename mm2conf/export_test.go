package mm2conf

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
)

// writeJSON is how kmm prints JSON documents (pkg/output.WriteJSON): indented, no HTML escaping.
// mm2conf returns data; its tests pin that data in this form.
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// For the external tests (render_test.go renders reports with pkg/cmd/configcmd, which imports
// this package): the corpus loader and its helpers.

// Update is the -update flag of this package's golden tests.
var Update = update

// CorpusDir is the corpus directory (testdata/mm2).
const CorpusDir = corpusDir

// LoadCorpusCase loads the corpus case name and returns the configuration and the temporary
// directory its stores were written to.
func LoadCorpusCase(t *testing.T, name string) (*Config, string) {
	t.Helper()
	for _, cc := range corpusCases(t) {
		if cc.name == name {
			c, _, tmp := loadCase(t, cc)
			return c, tmp
		}
	}
	t.Fatalf("no corpus case %s", name)
	return nil, ""
}

// ScrubPEM replaces inline PEM material in explain flows (it differs per run).
func ScrubPEM(flows []ExplainFlow) { scrubPEM(flows) }

// Normalise replaces the temporary directory in s.
func Normalise(s, tmp string) string { return normalise(s, tmp) }
