package mm2conf

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A secret-typed value that also holds a ${provider:...} reference must still be hidden: the
// reference can sit beside an inline password (issue: config explain printed password="LEAK").
func TestExplainHidesSecretsBesideProviderReferences(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mm2.properties")
	body := `clusters = A, B
A.bootstrap.servers = 127.0.0.1:1
B.bootstrap.servers = 127.0.0.1:1
A->B.enabled = true
config.providers = env
config.providers.env.class = org.apache.kafka.common.config.provider.EnvVarConfigProvider
A.security.protocol = SASL_PLAINTEXT
A.sasl.mechanism = PLAIN
A.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="${env:KMM_TEST_USER}" password="LEAK-inline-7f3a";
B.ssl.key.password = ${env:KMM_TEST_KEYPASS}
`
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"KMM_TEST_USER": "alice", "KMM_TEST_KEYPASS": "LEAK-env-91c2"}
	c, err := Load(LoadOptions{ConfigFile: file, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	r, err := NewExplainReport(c, ExplainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The report is data; what is not in it cannot be rendered (configcmd's tests check the
	// text rendering too).
	var js bytes.Buffer
	if err := writeJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"report": js.String()} {
		for _, secret := range []string{"LEAK-inline-7f3a", "LEAK-env-91c2"} {
			if n := strings.Count(out, secret); n > 0 {
				t.Errorf("%s output shows secret %q %d time(s)", name, secret, n)
			}
		}
		if !strings.Contains(out, "sasl.jaas.config") {
			t.Errorf("%s output lost the sasl.jaas.config entry", name)
		}
	}
}

// A non-secret value from a config provider is shown as its effective value, with the
// reference in its origin; a secret one stays hidden.
func TestExplainShowsResolvedProviderValues(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mm2.properties")
	body := "clusters = A, B\nA.bootstrap.servers = ${env:KMM_TEST_BOOT}\nB.bootstrap.servers = b:9092\nA->B.enabled = true\n" +
		"config.providers = env\nconfig.providers.env.class = org.apache.kafka.common.config.provider.EnvVarConfigProvider\n" +
		"B.ssl.truststore.password = ${env:KMM_TEST_TSPASS}\n"
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"KMM_TEST_BOOT": "a-1.example:9092", "KMM_TEST_TSPASS": "LEAK-ts-55e1"}
	c, err := Load(LoadOptions{ConfigFile: file, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	r, err := NewExplainReport(c, ExplainOptions{Flow: "A->B", Keys: []string{"bootstrap.servers", "ssl.truststore.password"}, Sections: []string{"source-consumer", "worker"}})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := writeJSON(&text, r); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	if !strings.Contains(out, "a-1.example:9092") || !strings.Contains(out, "resolved from ${env:KMM_TEST_BOOT}") {
		t.Errorf("the source consumer's bootstrap.servers is not shown resolved with its reference:\n%s", out)
	}
	if strings.Contains(out, "LEAK-ts-55e1") {
		t.Errorf("explain shows a secret from a provider:\n%s", out)
	}
}
