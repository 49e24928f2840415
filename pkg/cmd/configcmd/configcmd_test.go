package configcmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/kerr"
)

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "mm2.properties")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func factory() (*cmdutil.Factory, *bytes.Buffer, *bytes.Buffer) {
	io, _, out, errOut := iostreams.Test()
	return cmdutil.NewTestFactory(io, nil, func() time.Time { return time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC) }), out, errOut
}

func TestCheck(t *testing.T) {
	p := write(t, "clusters = A, B\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\nA->B.enabled = true\nA->B.topics = orders.*\n")
	f, out, _ := factory()
	if err := RunCheck(&CheckOptions{File: mm2conf.LoadOptions{ConfigFile: p}, Output: "table"}, f); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "A->B") || !strings.Contains(out.String(), "orders.*") || !strings.Contains(out.String(), "0 error(s)") {
		t.Fatalf("check:\n%s", out)
	}
	bad := write(t, "clusters = A, B\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\nA->B.enabled = true\nA->B.topics = orders[\n")
	f, _, errOut := factory()
	err := RunCheck(&CheckOptions{File: mm2conf.LoadOptions{ConfigFile: bad}, Output: "table"}, f)
	if kerr.KindOf(err) != kerr.Usage || !strings.Contains(errOut.String(), bad+":5") {
		t.Fatalf("bad file: %v\n%s", err, errOut)
	}
	f, out, _ = factory()
	if err := RunCheck(&CheckOptions{File: mm2conf.LoadOptions{ConfigFile: p}, Output: "json"}, f); err != nil || !strings.Contains(out.String(), `"generated_at": "2026-11-30T03:00:00Z"`) {
		t.Fatalf("json: %v\n%s", err, out)
	}
}

// A secret-typed value that also holds a ${provider:...} reference is hidden in both renderings
// (the reference can sit beside an inline password).
func TestExplainHidesSecrets(t *testing.T) {
	p := write(t, `clusters = A, B
A.bootstrap.servers = 127.0.0.1:1
B.bootstrap.servers = 127.0.0.1:1
A->B.enabled = true
config.providers = env
config.providers.env.class = org.apache.kafka.common.config.provider.EnvVarConfigProvider
A.security.protocol = SASL_PLAINTEXT
A.sasl.mechanism = PLAIN
A.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="${env:KMM_TEST_USER}" password="LEAK-inline-7f3a";
B.ssl.key.password = ${env:KMM_TEST_KEYPASS}
`)
	t.Setenv("KMM_TEST_USER", "alice")
	t.Setenv("KMM_TEST_KEYPASS", "LEAK-env-91c2")
	for _, output := range []string{"table", "json"} {
		f, out, errOut := factory()
		if err := RunExplain(&ExplainOptions{File: mm2conf.LoadOptions{ConfigFile: p}, Output: output}, f); err != nil {
			t.Fatalf("%s: %v\n%s", output, err, errOut)
		}
		for _, secret := range []string{"LEAK-inline-7f3a", "LEAK-env-91c2"} {
			if strings.Contains(out.String()+errOut.String(), secret) {
				t.Errorf("%s output shows secret %q", output, secret)
			}
		}
		if !strings.Contains(out.String(), "sasl.jaas.config") {
			t.Errorf("%s output lost the sasl.jaas.config entry:\n%s", output, out)
		}
	}
	f, _, _ := factory()
	if err := RunExplain(&ExplainOptions{File: mm2conf.LoadOptions{ConfigFile: p}, Output: "table", Flow: "x->y"}, f); kerr.KindOf(err) != kerr.Usage {
		t.Fatalf("unknown flow: %v", err)
	}
}
