package configcmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/kerr"
)

func runConfig(t *testing.T, tty bool, args ...string) (string, string, error) {
	t.Helper()
	io, _, out, errOut := iostreams.Test()
	if tty {
		io.SetTTY(true, true, true)
	}
	app := &cli.App{Name: "kmm", Writer: io.Out, ErrWriter: io.ErrOut, Commands: []*cli.Command{Command(cmdutil.NewTestFactory(io, nil, time.Now))}, ExitErrHandler: func(*cli.Context, error) {}}
	err := app.RunContext(context.Background(), append([]string{"kmm", "config"}, args...))
	return out.String(), errOut.String(), err
}

func props(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "mm2.properties")
	// One warning: a MirrorMaker 1 key.
	if err := os.WriteFile(p, []byte("clusters = A, B\nA.bootstrap.servers = 127.0.0.1:1\nB.bootstrap.servers = 127.0.0.1:1\nA->B.enabled = true\nA->B.topics.blacklist = x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// On a terminal each diagnostic appears once (the report shows them); piped, stderr repeats
// them for the person watching.
func TestDiagnosticsOnceOnATerminal(t *testing.T) {
	f := props(t)
	for _, sub := range []string{"check", "explain"} {
		out, errOut, err := runConfig(t, true, sub, f)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(out+errOut, "topics.blacklist"); n != 1 && sub == "check" {
			t.Errorf("%s on a terminal: the warning appears %d times:\n%s\n---\n%s", sub, n, out, errOut)
		}
		if strings.Contains(errOut, "topics.blacklist") {
			t.Errorf("%s on a terminal: diagnostics repeated on stderr:\n%s", sub, errOut)
		}
		_, errOut, _ = runConfig(t, false, sub, f)
		if !strings.Contains(errOut, "topics.blacklist") {
			t.Errorf("%s piped: no diagnostics on stderr", sub)
		}
	}
}

func TestExplainRefusesUnknownSectionsAndKeys(t *testing.T) {
	f := props(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"explain", "--section", "nonsense", f}, `--section "nonsense": no such section`},
		{[]string{"explain", f, "no.such.key"}, `no setting matches "no.such.key"`},
	} {
		_, _, err := runConfig(t, false, c.args...)
		if err == nil || kerr.KindOf(err) != kerr.Usage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want usage error %q", c.args, err, c.want)
		}
	}
	for _, args := range [][]string{{"explain", "--section", "connector", f}, {"explain", f, "bootstrap.servers"}, {"explain", "--section", "source-consumer", f, "ssl.*"}} {
		if _, _, err := runConfig(t, false, args...); err != nil {
			t.Errorf("%v: valid selection refused: %v", args, err)
		}
	}
}

// explain shows what `kmm replicate` uses, not MM2's defaults: kmm's own defaults (refresh
// 10 s, offset flush 1 s) and the producer settings it forces, each with its reason.
func TestExplainShowsWhatReplicateUses(t *testing.T) {
	p := filepath.Join(t.TempDir(), "mm2.properties")
	if err := os.WriteFile(p, []byte("clusters = A, B\nA.bootstrap.servers = 127.0.0.1:1\nB.bootstrap.servers = 127.0.0.1:1\nA->B.enabled = true\n"+
		"B.producer.acks = 1\nA.producer.acks = 1\nB.producer.max.in.flight.requests.per.connection = 50\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err := runConfig(t, false, "explain", "--flow", "A->B", p)
	if err != nil {
		t.Fatal(err)
	}
	row := func(key string) string {
		section := ""
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "-- ") {
				section = l
			}
			producerKey := key == "acks" || strings.Contains(key, "idempotence") || strings.HasPrefix(key, "max.in.flight")
			if producerKey && section != "-- target-producer (librdkafka)" {
				continue
			}
			if key == "offset-syncs acks" {
				if section != "-- offset-syncs-producer (librdkafka)" {
					continue
				}
				if strings.HasPrefix(l, "acks ") {
					return "offset-syncs " + l
				}
				continue
			}
			if f := strings.Fields(l); len(f) > 1 && f[0] == key {
				return l
			}
		}
		return ""
	}
	for _, c := range []struct{ key, value, why string }{
		{"refresh.topics.interval.seconds", "10", "kmm replicate default (MM2's: 600)"},
		{"emit.checkpoints.interval.seconds", "5", "kmm replicate default (MM2's: 60)"},
		{"offset.flush.interval.ms", "1000", "kmm replicate default (MM2's: 60000)"},
		{"acks", "all", "kmm replicate forces acks=all"},
		{"enable.idempotence", "true", "kmm replicate forces enable.idempotence=true"},
		{"max.in.flight.requests.per.connection", "5", "caps max.in.flight"},
		{"offset-syncs acks", "all", "kmm replicate forces acks=all (1 replaced); offset syncs are written with acks=all"},
	} {
		r := row(c.key)
		if f := strings.Fields(strings.TrimPrefix(r, "offset-syncs ")); len(f) < 2 || f[1] != c.value || !strings.Contains(r, c.why) {
			t.Errorf("%s: row %q, want value %s with origin %q\n%s", c.key, r, c.value, c.why, out)
		}
	}
	// A key filter does not drag in the forced keys.
	out, _, err = runConfig(t, false, "explain", "--flow", "A->B", p, "bootstrap.servers")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "enable.idempotence") {
		t.Errorf("filtered explain shows enable.idempotence:\n%s", out)
	}
}

// The default output fits a terminal: a heartbeats-only flow is one line and long values are
// elided; --wide (or --flow naming the flow) shows everything.
func TestExplainHeartbeatsOnlyFlowsOneLineUnlessWide(t *testing.T) {
	p := filepath.Join(t.TempDir(), "mm2.properties")
	long := strings.Repeat("x", 100)
	if err := os.WriteFile(p, []byte("clusters = A, B\nA.bootstrap.servers = 127.0.0.1:1\nB.bootstrap.servers = 127.0.0.1:1\nA->B.enabled = true\nA->B.topics = "+long+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err := runConfig(t, false, "explain", p)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "== flow B->A"); n != 1 || !strings.Contains(out, "== flow B->A (heartbeats only: MM2 emits heartbeats into A, every 1 s;") {
		t.Errorf("B->A is not one line:\n%s", out)
	}
	if strings.Count(out, "== flow ") != 2 || strings.Count(out, "\n-- connector") != 1 {
		t.Errorf("heartbeats-only flow shows sections:\n%s", out)
	}
	if strings.Contains(out, long) || !strings.Contains(out, "(100 chars, --wide shows all)") {
		t.Errorf("long value not elided:\n%s", out)
	}
	for _, args := range [][]string{{"explain", "--wide", p}, {"explain", "--flow", "B->A", p}} {
		out, _, err := runConfig(t, false, args...)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "== flow B->A (heartbeats only)\n") || strings.Contains(out, "--wide shows") {
			t.Errorf("%v: not in full:\n%s", args, out)
		}
		if args[1] == "--wide" && !strings.Contains(out, long) {
			t.Errorf("--wide: long value elided")
		}
	}
}
