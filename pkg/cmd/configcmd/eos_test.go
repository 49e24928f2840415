package configcmd

import (
	"strings"
	"testing"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/kerr"
)

// Exactly-once: settings it cannot run with are errors at their line (exit 2, Usage); a valid
// exactly-once file checks clean, and explain shows the transactional settings.
func TestCheckExactlyOnce(t *testing.T) {
	bad := write(t, `clusters = A, B
A.bootstrap.servers = a:9092
B.bootstrap.servers = b:9092
A->B.enabled = true
exactly.once.source.support = enabled
B.producer.acks = 1
A.consumer.isolation.level = read_uncommitted
kmm.transaction.interval.ms = 40000
B.producer.enable.idempotence = false
A->B.kmm.workers.enabled = true
`)
	f, _, errOut := factory()
	err := RunCheck(&CheckOptions{File: mm2conf.LoadOptions{ConfigFile: bad}, Output: "table"}, f)
	if kerr.KindOf(err) != kerr.Usage {
		t.Fatalf("want a usage error (exit 2), got %v\n%s", err, errOut)
	}
	for _, want := range []string{
		bad + ":5: warning: exactly.once.source.support at top level",
		bad + ":6: error: B.producer.acks = 1 with exactly-once",
		bad + ":7: error: A.consumer.isolation.level = read_uncommitted with exactly-once",
		bad + ":8: error: kmm.transaction.interval.ms = 40000 is more than half",
		bad + ":9: error: B.producer.enable.idempotence = false with exactly-once",
		bad + ":10: error: kmm.workers.enabled = true with exactly-once",
	} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("missing %q in:\n%s", want, errOut)
		}
	}

	good := write(t, "clusters = A, B\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\nA->B.enabled = true\nB.exactly.once.source.support = enabled\nB.producer.transaction.timeout.ms = 120000\n")
	f, out, _ := factory()
	if err := RunCheck(&CheckOptions{File: mm2conf.LoadOptions{ConfigFile: good}, Output: "table"}, f); err != nil || !strings.Contains(out.String(), "0 error(s), 0 warning(s)") {
		t.Fatalf("a valid exactly-once file: %v\n%s", err, out)
	}
	stdout, _, err := runConfig(t, false, "explain", "--wide", good)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"A-mm2-MirrorSourceConnector-<task>", "transaction.timeout.ms", "120000", "kmm.transaction.interval.ms"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("explain lacks %q:\n%s", want, stdout)
		}
	}
}
