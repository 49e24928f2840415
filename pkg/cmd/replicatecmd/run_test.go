package replicatecmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed/kfakebed"
	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// replicate in process against kfake clusters: records arrive, -o json writes NDJSON events on
// stdout, the first signal drains and Run returns nil; a non-loopback --listen is refused.
func TestReplicateRunAndDrain(t *testing.T) {
	a, b := kfakebed.Start(t, "A"), kfakebed.Start(t, "B")
	a.CreateTopic(t, "orders", 2)
	var recs []cluster.Record
	for i := 0; i < 100; i++ {
		recs = append(recs, cluster.Record{Topic: "orders", Partition: int32(i % 2), Value: []byte("v")})
	}
	a.Produce(t, recs)
	props := kfakebed.WriteProps(t, []kfakebed.Cluster{a, b}, "A->B.enabled = true", "A->B.topics = orders", "emit.checkpoints.enabled = false")
	io, _, out, errOut := iostreams.Test()
	fac := cmdutil.NewTestFactory(io, rdkafka.Opener{}, time.Now)
	sigs := make(chan os.Signal, 2)
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), &Options{File: mm2conf.LoadOptions{ConfigFile: props}, Output: "json", ShutdownTimeout: 10 * time.Second,
			ProgressInterval: time.Hour, Signals: sigs}, fac)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if n := len(b.ReadAll(t, "A.orders")); n >= 100 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("records not replicated within 30s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	sigs <- syscall.SIGTERM
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("drain: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no drain within 30s of the signal")
	}
	// Wait for the renderer to finish before reading the buffers.
	for _, want := range []string{`"type":"flow_started"`, `"type":"flow_stopped"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %s:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut.String(), "draining") || !strings.Contains(errOut.String(), "flow A->B") {
		t.Errorf("stderr:\n%s", errOut)
	}

	io2, _, _, _ := iostreams.Test()
	err := Run(context.Background(), &Options{File: mm2conf.LoadOptions{ConfigFile: props}, Output: "text", Listen: "0.0.0.0:0", ProgressInterval: time.Hour,
		Signals: make(chan os.Signal)}, cmdutil.NewTestFactory(io2, rdkafka.Opener{}, time.Now))
	if err == nil || !strings.Contains(kerr.HintOf(err), "--listen-allow-remote") {
		t.Fatalf("non-loopback --listen: %v", err)
	}
}

// Interrupted before any flow started (clusters unreachable): exit 130, not 0.
func TestReplicateInterruptedBeforeStartIs130(t *testing.T) {
	p := writeUnreachable(t, "A->B.enabled = true\n")
	io, _, _, _ := iostreams.Test()
	sigs := make(chan os.Signal, 2)
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), &Options{File: mm2conf.LoadOptions{ConfigFile: p}, Output: "text", ShutdownTimeout: time.Second,
			ProgressInterval: time.Hour, Signals: sigs}, cmdutil.NewTestFactory(io, rdkafka.Opener{}, time.Now))
	}()
	time.Sleep(300 * time.Millisecond)
	sigs <- syscall.SIGINT
	select {
	case err := <-done:
		if kerr.KindOf(err) != kerr.Interrupted {
			t.Fatalf("interrupted before start: %v (kind %v), want exit 130", err, kerr.KindOf(err))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no return within 20s of the signal")
	}
}

// -o json: a start-up failure is one JSON error event on stdout, with the message and hint.
func TestReplicateJSONErrorEventAtStart(t *testing.T) {
	p := writeUnreachable(t, "") // no flow enabled: refused at start
	io, _, out, _ := iostreams.Test()
	err := Run(context.Background(), &Options{File: mm2conf.LoadOptions{ConfigFile: p}, Output: "json", ProgressInterval: time.Hour, Signals: make(chan os.Signal)},
		cmdutil.NewTestFactory(io, rdkafka.Opener{}, time.Now))
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var ev struct{ Type, Message string }
	if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &ev) != nil || ev.Type != "error" || ev.Message != err.Error() {
		t.Fatalf("stdout is not one error event for %q:\n%s", err, out)
	}
}

func writeUnreachable(t *testing.T, extra string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "mm2.properties")
	if err := os.WriteFile(p, []byte("clusters = A, B\nA.bootstrap.servers = 127.0.0.1:1\nB.bootstrap.servers = 127.0.0.1:1\n"+extra), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
