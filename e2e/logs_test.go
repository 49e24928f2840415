package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
)

// rawRdkafka is the start of a line librdkafka prints itself: "%3|1700000000.123|FAIL|...".
var rawRdkafka = regexp.MustCompile(`(^|[^0-9])%[0-7]\|[0-9]`)

// jsonStderr checks that every stderr line of a --log-format json run is a JSON record with a
// level and a message, and that no line is librdkafka's raw output. It returns the records.
func jsonStderr(t *testing.T, what, stderr string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimRight(stderr, "\n"), "\n") {
		if line == "" {
			continue
		}
		if rawRdkafka.MatchString(line) {
			t.Errorf("%s: raw librdkafka line on stderr: %s", what, line)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil || m["level"] == nil || m["msg"] == nil {
			t.Errorf("%s: stderr line is not a JSON log record: %q", what, line)
			continue
		}
		recs = append(recs, m)
	}
	return recs
}

func hasLibrdkafkaRecord(recs []map[string]any) bool {
	for _, r := range recs {
		if m, _ := r["msg"].(string); strings.HasPrefix(m, "librdkafka ") && r["client"] != nil {
			return true
		}
	}
	return false
}

// With --log-format json and debug logging, every stderr line of replicate, status, lag,
// verify, translate-offsets and failover against clusters that refuse connections is a JSON record:
// librdkafka's own lines (Connection refused) are records of kmm's logger, never raw, and the
// final error is a record with its exit code; replicate -o json also emits a JSON error event
// on stdout. The commands run at once (refused connections are reported within 2 s; the DNS
// failure takes the 10 s bound).
func TestLibrdkafkaLogsJSONUnreachable(t *testing.T) {
	props := unreachableProps(t)
	bin := Bin(t)
	dns := filepath.Join(t.TempDir(), "dns.properties")
	if err := os.WriteFile(dns, []byte("clusters = A, B\nA.bootstrap.servers = kmm-e2e-no-such-host.invalid:9092\nB.bootstrap.servers = kmm-e2e-no-such-host.invalid:9092\nA->B.enabled = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmds := [][]string{{"replicate", props, "-o", "json"}, {"status", props}, {"lag", props}, {"verify", props}, {"translate-offsets", props}, {"failover", props, "--dry-run"}, {"status", dns}}
	type result struct {
		code           int
		took           time.Duration
		stdout, stderr string
	}
	res := make([]result, len(cmds))
	var wg sync.WaitGroup
	for i, args := range cmds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(bin, append([]string{"--log-format", "json", "--log-level", "debug"}, args...)...)
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			start := time.Now()
			_ = cmd.Start()
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
			res[i] = result{cmd.ProcessState.ExitCode(), time.Since(start), out.String(), errOut.String()}
		}()
	}
	wg.Wait()
	for i, args := range cmds {
		r := res[i]
		if r.code != 4 || r.took > 45*time.Second {
			t.Errorf("%s: exit %d after %s, want 4\n%s", args[0], r.code, r.took, tail(r.stderr, 10))
			continue
		}
		recs := jsonStderr(t, args[0], r.stderr)
		if !hasLibrdkafkaRecord(recs) {
			t.Errorf("%s: no librdkafka record at debug level:\n%s", args[0], tail(r.stderr, 10))
		}
		if len(recs) == 0 {
			continue
		}
		last := recs[len(recs)-1]
		if last["level"] != "ERROR" || last["exit_code"] != float64(4) || last["hint"] == nil {
			t.Errorf("%s: last record %v, want the error (level ERROR, exit_code 4, a hint)", args[0], last)
		}
		if args[0] == "replicate" {
			// -o json: the failure at start is a JSON error event on stdout too.
			var ev map[string]any
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			if json.Unmarshal([]byte(lines[len(lines)-1]), &ev) != nil || ev["type"] != "error" || !strings.Contains(fmt.Sprint(ev["message"]), "connection refused") {
				t.Errorf("replicate -o json: stdout %q, want a JSON error event naming the unreachable cluster", r.stdout)
			}
		}
		cause := "Connection refused"
		if args[1] == dns {
			cause = "Failed to resolve 'kmm-e2e-no-such-host.invalid:9092'" // the real cause, DNS, not only "no answer"
		}
		if !strings.Contains(r.stderr+r.stdout, cause) {
			t.Errorf("%s: the cause %q is not said:\n%s", args[0], cause, tail(r.stderr, 10))
		}
	}
}

// The same against the real bed: a replicate run (started, some records copied, stopped by
// SIGINT) and the read commands over its flow write JSON records only to stderr.
func TestLogsJSONOnBed(t *testing.T) {
	bed := testbed.Attach(t)
	topic := testbed.Unique(t, "logjson")
	bed.A.CreateTopic(t, topic, 2, nil)
	bed.A.Produce(t, seqRecords(topic, 2, 0, 20))
	props := writeProps(t, "A->B.enabled = true", "A->B.topics = "+topic, "A->B.groups = "+topic+"-g", "emit.checkpoints.interval.seconds = 1", "sync.topic.configs.enabled = false", "sync.topic.acls.enabled = false")
	flags := []string{"--log-format", "json", "--log-level", "debug"}
	p := startKMM(t, append(flags, "replicate", props, "--clusters", "B")...)
	testbed.Eventually(t, 60*time.Second, func() error {
		if !strings.Contains(p.Stderr(), `"msg":"progress"`) && !strings.Contains(p.Stderr(), "flow started") {
			return errors.New("no flow started yet")
		}
		return nil
	})
	if code := p.stop(t, syscall.SIGINT, 30*time.Second); code != 0 {
		t.Errorf("replicate: exit %d after SIGINT", code)
	}
	recs := jsonStderr(t, "replicate", p.Stderr())
	if len(recs) < 3 {
		t.Errorf("replicate: %d records", len(recs))
	}
	for _, args := range [][]string{{"status", props, "--flow", "A->B"}, {"lag", props, "--flow", "A->B"}, {"verify", props, "--flow", "A->B"}, {"translate-offsets", props, "--flow", "A->B"}} {
		r := Run(t, append(flags, args...)...)
		if r.Code == 2 || r.Code == 4 {
			t.Errorf("%s: exit %d\n%s", args[0], r.Code, tail(r.Stderr, 10))
		}
		jsonStderr(t, args[0], r.Stderr)
	}
}
