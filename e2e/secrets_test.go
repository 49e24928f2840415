package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
)

// The secret values of the file below: written inline, read through ${env:...} and
// ${file:...} providers, and mixed (a provider reference and an inline password in one value).
const (
	secretInline     = "kmmInlineS3cr3tA"
	secretEnv        = "kmmEnvS3cr3tB"
	secretFile       = "kmmFileS3cr3tC"
	secretMixed      = "kmmMixedS3cr3tD"
	secretUnknownKey = "kmmUnknownKeyS3cr3tE"
)

var allSecrets = []string{secretInline, secretEnv, secretFile, secretMixed, secretUnknownKey}

// secretRuns is how every kmm command is run over the file with secrets. Each entry is a list
// of argument lists (FILE is replaced by the file's path; each one also runs with
// --log-level debug --log-format json). TestNoSecretInAnyOutput walks kmm's command tree from
// its help and fails for a command that has no entry here: a new command adds its runs here,
// in every output format it has (table, -o json, plans with --dry-run, reports after --yes).
// replicate (a long-running process with --listen endpoints) is run by secretReplicate.
var secretRuns = map[string][][]string{
	"config":         {{"config"}},
	"config check":   {{"config", "check", "FILE"}, {"config", "check", "FILE", "-o", "json"}},
	"config explain": {{"config", "explain", "FILE"}, {"config", "explain", "FILE", "-o", "json"}, {"config", "explain", "FILE", "--flow", "A->B", "sasl.jaas.config", "ssl.*"}, {"config", "explain", "FILE", "--topic", "orders", "--group", "billing", "-o", "json"}, {"config", "explain", "FILE", "--list-topics"}},
	"status":         {{"status", "FILE"}, {"status", "FILE", "-o", "json"}},
	"lag":            {{"lag", "FILE"}, {"lag", "FILE", "-o", "json", "--group", "billing"}},
	"translate-offsets": {{"translate-offsets", "FILE"}, {"translate-offsets", "FILE", "-o", "json"},
		{"translate-offsets", "FILE", "--apply", "--all-groups", "--dry-run"}, {"translate-offsets", "FILE", "--apply", "--all-groups", "--yes", "-o", "json"}},
	"replicate": nil, // secretReplicate
	// Not implemented yet: add their plan, --dry-run, --yes and report runs when they land.
	"failover":   {{"failover", "FILE"}, {"failover", "FILE", "--help"}},
	"failback":   {{"failback", "FILE"}, {"failback", "FILE", "--help"}},
	"verify":     {{"verify", "FILE"}, {"verify", "FILE", "-o", "json"}, {"verify", "FILE", "--level", "sample", "-o", "json"}},
	"help":       {{"help", "config", "explain"}},
	"completion": {{"completion", "bash"}},
}

// helpCommands lists the commands of `kmm [path] --help` (its COMMANDS section).
func helpCommands(t *testing.T, path []string) []string {
	t.Helper()
	r := Run(t, append(append([]string{}, path...), "--help")...)
	if r.Code != 0 {
		t.Fatalf("kmm %s --help: exit %d\n%s", strings.Join(path, " "), r.Code, r.Stderr)
	}
	var out []string
	in := false
	for _, line := range strings.Split(r.Stdout, "\n") {
		switch {
		case line == "COMMANDS:":
			in = true
		case in && strings.TrimSpace(line) == "":
			in = false
		case in && strings.HasPrefix(line, "    "):
			// a usage wrapped to the terminal's width
		case in:
			name := strings.TrimSuffix(strings.Fields(line)[0], ",")
			out = append(out, name)
		}
	}
	return out
}

// commandTree is every command path kmm's help lists ("status", "config check", ...).
func commandTree(t *testing.T, path []string) []string {
	var out []string
	for _, c := range helpCommands(t, path) {
		p := append(append([]string{}, path...), c)
		out = append(out, strings.Join(p, " "))
		out = append(out, commandTree(t, p)...)
	}
	return out
}

// secretProps writes an MM2 file for the test bed whose clusters carry secrets in every form.
func secretProps(t *testing.T, topic string) string {
	dir := t.TempDir()
	secretsFile := filepath.Join(dir, "secrets.properties")
	if err := os.WriteFile(secretsFile, []byte("keypass="+secretFile+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KMM_E2E_USER", "alice")
	t.Setenv("KMM_E2E_SECRET", secretEnv)
	return writeProps(t,
		"A->B.enabled = true",
		"A->B.topics = "+regexp.QuoteMeta(topic),
		"groups = billing",
		"config.providers = env, file",
		"config.providers.env.class = org.apache.kafka.common.config.provider.EnvVarConfigProvider",
		"config.providers.file.class = org.apache.kafka.common.config.provider.FileConfigProvider",
		// mixed: a provider reference beside an inline password
		`A.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="${env:KMM_E2E_USER}" password="`+secretMixed+`";`,
		// through a provider
		`B.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="${env:KMM_E2E_SECRET}";`,
		"A.ssl.key.password = ${file:"+secretsFile+":keypass}",
		// inline
		"B.ssl.key.password = "+secretInline,
		"A->B.producer.ssl.truststore.password = "+secretInline,
		// a key kmm does not know, with a secret-looking name
		"B.sasl.password = "+secretUnknownKey,
	)
}

func leaks(out string) []string {
	var found []string
	for _, s := range allSecrets {
		if strings.Contains(out, s) {
			found = append(found, s)
		}
	}
	return found
}

// TestNoSecretInAnyOutput runs every command of kmm in every output format over a file whose
// secrets are given inline, through config providers and mixed, against the real test bed,
// and greps stdout, stderr, logs at debug (text and JSON) and the --listen endpoints for them.
func TestNoSecretInAnyOutput(t *testing.T) {
	bed := testbed.Attach(t)
	topic := testbed.Unique(t, "secrets")
	bed.A.CreateTopic(t, topic, 1, nil)
	bed.A.Produce(t, seqRecords(topic, 1, 0, 20))
	props := secretProps(t, topic)

	// Every command listed in kmm's help has runs here.
	tree := commandTree(t, nil)
	if len(tree) < 10 {
		t.Fatalf("only %d commands found in kmm's help: %v", len(tree), tree)
	}
	for _, c := range tree {
		if _, ok := secretRuns[c]; !ok {
			t.Errorf("kmm %s has no entry in secretRuns (e2e/secrets_test.go): add its runs in every output format", c)
		}
	}
	var extra []string
	for c := range secretRuns {
		if !contains(tree, c) {
			extra = append(extra, c)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("secretRuns has commands kmm does not list: %v", extra)
	}

	hidden := 0
	for _, c := range tree {
		for _, args := range secretRuns[c] {
			for _, prefix := range [][]string{nil, {"--log-level", "debug", "--log-format", "json"}} {
				full := append(append([]string{}, prefix...), args...)
				for i, a := range full {
					if a == "FILE" {
						full[i] = props
					}
				}
				r := Run(t, full...)
				if l := leaks(r.Stdout + r.Stderr); len(l) > 0 {
					t.Errorf("kmm %s (exit %d) prints secret(s) %v:\n--- stdout ---\n%s\n--- stderr ---\n%s", strings.Join(full, " "), r.Code, l, r.Stdout, r.Stderr)
				}
				if c == "config explain" {
					hidden += strings.Count(r.Stdout, "[hidden]")
				}
			}
		}
	}
	// The secrets reached the commands (explain hides them where they are).
	if hidden == 0 {
		t.Error("config explain showed no [hidden] value: the file's secrets did not reach kmm")
	}
	secretReplicate(t, props, topic)
}

// secretReplicate runs replicate at debug with -o json and --listen, reads every endpoint
// (and status --endpoint) while it copies, stops it, and greps everything.
func secretReplicate(t *testing.T, props, topic string) {
	bed := testbed.Attach(t)
	for _, out := range []string{"json", "text"} {
		p := startKMM(t, "--log-level", "debug", "replicate", props, "--listen", "127.0.0.1:0", "-o", out)
		var base string
		addr := regexp.MustCompile(`serving http://(127\.0\.0\.1:\d+)`)
		testbed.Eventually(t, 30*time.Second, func() error {
			if m := addr.FindStringSubmatch(p.stderr.String()); m != nil {
				base = "http://" + m[1]
				return nil
			}
			return fmt.Errorf("no listen address yet:\n%s", p.stderr.String())
		})
		waitCount(t, bed.B, "A."+topic, 1, 20, time.Minute)
		var bodies strings.Builder
		get := func(path string, accept ...string) string {
			req, err := http.NewRequest(http.MethodGet, base+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range accept {
				req.Header.Set("Accept", a)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			fmt.Fprintf(&bodies, "GET %s -> %d\n%s\n", path, resp.StatusCode, b)
			return string(b)
		}
		list := get("/connectors")
		const browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" // the status page
		for _, path := range []string{"/metrics", "/healthz", "/readyz", "/connectors?expand=status&expand=info",
			"/", "/?fragment=1", "/api/status", "/static/status.js", "/static/status.css"} {
			get(path)
		}
		get("/", browser)
		// The status page's background reading of the clusters (the cost of failing over now),
		// which opens clients with the flow's secret settings: what it shows, error or numbers.
		testbed.Eventually(t, time.Minute, func() error {
			if s := get("/api/status"); strings.Contains(s, `"status":"computing"`) {
				return fmt.Errorf("no background reading yet")
			}
			return nil
		})
		get("/", browser)
		names := regexp.MustCompile(`"([^"]*Connector)"`).FindAllStringSubmatch(list, -1)
		if len(names) == 0 {
			t.Fatalf("no connector in /connectors: %s", list)
		}
		for _, n := range names {
			for _, suffix := range []string{"", "/config", "/status", "/tasks/0/status", "/offsets"} {
				get("/connectors/" + n[1] + suffix)
			}
		}
		if !strings.Contains(bodies.String(), "sasl.jaas.config") && !strings.Contains(bodies.String(), "ssl.key.password") {
			t.Errorf("the connector configs show no secret key at all: did the endpoints change?\n%s", bodies.String())
		}
		st := Run(t, "--log-level", "debug", "status", props, "--endpoint", base, "-o", "json")
		fmt.Fprintf(&bodies, "status --endpoint:\n%s\n%s\n", st.Stdout, st.Stderr)
		code := p.stop(t, syscall.SIGINT, time.Minute)
		all := p.stdout.String() + p.stderr.String() + bodies.String()
		if l := leaks(all); len(l) > 0 {
			t.Errorf("replicate -o %s (exit %d) or its endpoints print secret(s) %v:\n%s", out, code, l, all)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
