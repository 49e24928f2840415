package mm2conf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Provider errors say what to do: set the variable, create the file, add the key.
func TestProviderErrorsHaveHints(t *testing.T) {
	dir := t.TempDir()
	secrets := filepath.Join(dir, "s.properties")
	if err := os.WriteFile(secrets, []byte("present=x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "mm2.properties")
	text := "clusters = A, B\nA.bootstrap.servers = 127.0.0.1:1\nB.bootstrap.servers = 127.0.0.1:1\nA->B.enabled = true\n" +
		"config.providers = env, file\n" +
		"config.providers.env.class = " + EnvVarConfigProviderClass + "\n" +
		"config.providers.file.class = " + FileConfigProviderClass + "\n" +
		"A.ssl.key.password = ${env:KMM_TEST_NO_SUCH_VARIABLE}\n" +
		"B.ssl.key.password = ${file:" + filepath.Join(dir, "missing.properties") + ":k}\n" +
		"B.ssl.truststore.password = ${file:" + secrets + ":absent}\n"
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(LoadOptions{ConfigFile: p})
	if err == nil {
		t.Fatal("accepted")
	}
	want := map[int]string{8: "set KMM_TEST_NO_SUCH_VARIABLE in the environment", 9: "create " + filepath.Join(dir, "missing.properties"), 10: "add a line absent=... to"}
	for line, hint := range want {
		found := false
		for _, d := range cfg.Diagnostics {
			if d.Severity == SeverityError && d.Pos.Line == line && strings.Contains(d.Hint, hint) {
				found = true
			}
		}
		if !found {
			t.Errorf("line %d: no error with hint %q: %v", line, hint, cfg.Diagnostics)
		}
	}
}
