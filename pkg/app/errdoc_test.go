package app

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kmmproject/kmm/e2e/testbed/netfault"
	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/output"
)

// oneJSONDocument decodes stdout as exactly one JSON value into v.
func oneJSONDocument(stdout string, v any) error {
	dec := json.NewDecoder(strings.NewReader(stdout))
	if err := dec.Decode(v); err != nil {
		return err
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return errors.New("more than one JSON value on stdout")
	}
	return nil
}

// Every command with -o json that fails without its own document prints one JSON error
// document on stdout (kind "error", the exit code, its class, the cause and the hint), and
// the message on stderr as without -o json: clusters refusing connections, a missing file, bad
// flags (parsed or refused by the parser after -o json). A command whose document says why
// (status with every cluster down) prints only that document.
func TestJSONErrorDocument(t *testing.T) {
	a, b := netfault.RefusedAddr(t), netfault.RefusedAddr(t)
	f := pairFile(t, a, b)
	missing := filepath.Join(t.TempDir(), "missing.properties")
	for _, c := range []struct {
		args  []string
		code  int
		class string
		cause string // in the document's cause
	}{
		{[]string{"verify", f, "-o", "json"}, 4, "unreachable", "cluster A (" + a + "): connection refused; cluster B (" + b + "): connection refused"},
		{[]string{"lag", f, "-o", "json"}, 4, "unreachable", "cluster B (" + b + "): connection refused"},
		{[]string{"lag", f, "-o", "json", "--watch"}, 4, "unreachable", "cluster A (" + a + "): connection refused"},
		{[]string{"failover", f, "-o", "json", "--dry-run"}, 4, "unreachable", "cluster A (" + a + "): connection refused"},
		{[]string{"failover", f, "-o", "json", "--mode", "emergency", "--dry-run"}, 4, "unreachable", "cluster B (" + b + "): connection refused"},
		{[]string{"failback", f, "-o", "json", "--yes"}, 4, "unreachable", "cluster A (" + a + "): connection refused"},
		{[]string{"translate-offsets", f, "-o", "json"}, 4, "unreachable", "cluster B (" + b + "): connection refused"},
		{[]string{"config", "explain", f, "--list-topics", "-o", "json"}, 4, "unreachable", "cluster A (" + a + "): connection refused"},
		{[]string{"replicate", f, "-o", "json"}, 4, "unreachable", "cluster A (" + a + "): connection refused"},
		{[]string{"config", "explain", f, "--section", "nosuch", "-o", "json"}, 2, "usage", `--section "nosuch": no such section`},
		{[]string{"status", missing, "-o", "json"}, 2, "usage", "missing.properties"},
		{[]string{"status", f, "-o", "json", "--max-lag-records", "-1"}, 2, "usage", "--max-lag-records must be 0 or more"},
		{[]string{"lag", f, "-o", "json", "--bogus"}, 2, "usage", "bogus"},
		{[]string{"lag", f, "-o", "json", "--topic", "--watch"}, 2, "usage", `--topic needs a value, but "--watch" follows it`},
		{[]string{"failback", f, "-o", "json"}, 2, "usage", "needs confirmation"},
	} {
		io, _, stdout, stderr := iostreams.Test()
		code := Run(context.Background(), append([]string{"kmm"}, c.args...), io)
		name := strings.Join(c.args[:1], " ")
		if c.args[0] == "config" {
			name = "config " + c.args[1]
		}
		var doc output.ErrorDoc
		var raw map[string]any
		if err := oneJSONDocument(stdout.String(), &doc); err != nil || json.Unmarshal(stdout.Bytes(), &raw) != nil {
			t.Errorf("%v: exit %d, stdout is not one JSON document (%v):\n%s\nstderr %s", c.args, code, err, stdout, stderr)
			continue
		}
		if code != c.code || doc.Kind != "error" || doc.SchemaVersion != 1 || doc.ExitCode != c.code || doc.Class != c.class ||
			doc.Command != "kmm "+name || !strings.Contains(doc.Cause, c.cause) || doc.GeneratedAt.IsZero() {
			t.Errorf("%v: exit %d, document %+v; want exit %d, class %s, command %q and %q in the cause", c.args, code, doc, c.code, c.class, "kmm "+name, c.cause)
		}
		if _, ok := raw["hint"]; !ok {
			t.Errorf("%v: the document has no hint key (null when none): %s", c.args, stdout)
		}
		if c.class == "unreachable" && doc.Hint == nil {
			t.Errorf("%v: no hint in %s", c.args, stdout)
		}
		if strings.Count(stdout.String(), "\n") != 1 {
			t.Errorf("%v: the document is not one line (it may end an NDJSON stream): %q", c.args, stdout)
		}
		if !strings.Contains(stderr.String(), "kmm: error: ") {
			t.Errorf("%v: no human message on stderr: %q", c.args, stderr)
		}
	}

	// replicate's document is its last NDJSON event, the engine's schema with the document's fields.
	io, _, stdout, _ := iostreams.Test()
	Run(context.Background(), []string{"kmm", "replicate", f, "-o", "json"}, io)
	var ev map[string]any
	if json.Unmarshal(stdout.Bytes(), &ev) != nil || ev["type"] != "error" || ev["kind"] != "error" || ev["message"] != ev["cause"] || ev["exit_code"] != float64(4) {
		t.Errorf("replicate -o json: %s, want one error event with the document's fields", stdout)
	}

	// status prints its document (every flow DOWN, with the reasons), not a second one.
	io, _, stdout, _ = iostreams.Test()
	code := Run(context.Background(), []string{"kmm", "status", f, "-o", "json"}, io)
	var env struct{ Kind string }
	if err := oneJSONDocument(stdout.String(), &env); code != 4 || err != nil || env.Kind != "status" {
		t.Errorf("status -o json, clusters down: exit %d, stdout (%v):\n%s\nwant the status document alone", code, err, stdout)
	}

	// config check reports a missing file in its own document (its diagnostics), alone.
	io, _, stdout, _ = iostreams.Test()
	code = Run(context.Background(), []string{"kmm", "config", "check", missing, "-o", "json"}, io)
	if err := oneJSONDocument(stdout.String(), &env); code != 2 || err != nil || env.Kind != "config-check" {
		t.Errorf("config check -o json, missing file: exit %d, stdout (%v):\n%s\nwant the config-check document alone", code, err, stdout)
	}

	// Without -o json, stdout stays empty.
	io, _, stdout, _ = iostreams.Test()
	if code := Run(context.Background(), []string{"kmm", "lag", f}, io); code != 4 || stdout.Len() != 0 {
		t.Errorf("lag: exit %d, stdout %q; want 4 and nothing", code, stdout)
	}
}

// verify --junit FILE: a run that fails before its checks (clusters unreachable, a bad file)
// writes a JUnit file with one failing test case naming the cause, not an empty file.
func TestVerifyJUnitOnEarlyFailure(t *testing.T) {
	a, b := netfault.RefusedAddr(t), netfault.RefusedAddr(t)
	f := pairFile(t, a, b)
	bad := filepath.Join(t.TempDir(), "bad.properties")
	if err := os.WriteFile(bad, []byte("clusters = A\nA.bootstrap.servers = 127.0.0.1:1\nA->B.enabled = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		props string
		code  int
		typ   string
		cause string
	}{
		{f, 4, "unreachable", "cluster A (" + a + "): connection refused"},
		{bad, 2, "usage", "configuration error"},
	} {
		junit := filepath.Join(t.TempDir(), "verify.xml")
		io, _, stdout, stderr := iostreams.Test()
		code := Run(context.Background(), []string{"kmm", "verify", c.props, "--junit", junit, "-o", "json"}, io)
		body, err := os.ReadFile(junit)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Suites   []struct {
				Cases []struct {
					Name    string `xml:"name,attr"`
					Failure *struct {
						Message string `xml:"message,attr"`
						Type    string `xml:"type,attr"`
					} `xml:"failure"`
				} `xml:"testcase"`
			} `xml:"testsuite"`
		}
		if code != c.code || xml.Unmarshal(body, &doc) != nil || doc.Tests != 1 || doc.Failures != 1 || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 1 ||
			doc.Suites[0].Cases[0].Failure == nil || doc.Suites[0].Cases[0].Failure.Type != c.typ || !strings.Contains(doc.Suites[0].Cases[0].Failure.Message, c.cause) {
			t.Errorf("%s: exit %d, JUnit file:\n%s\nwant exit %d and one failing case of type %s naming %q\nstderr %s", filepath.Base(c.props), code, body, c.code, c.typ, c.cause, stderr)
		}
		if !bytes.Contains(stdout.Bytes(), []byte(`"kind":"error"`)) {
			t.Errorf("%s: stdout %q, want the JSON error document too", filepath.Base(c.props), stdout)
		}
	}
}
