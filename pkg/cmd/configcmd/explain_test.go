package configcmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kmmproject/kmm/mm2conf"
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
	// --wide: one line per setting, as the rows are read here.
	out, _, err := runConfig(t, false, "explain", "--flow", "A->B", "--wide", p)
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
	if n := strings.Count(out, "== flow B->A"); n != 1 || !strings.Contains(out, "== flow B->A (heartbeats only, into A every 1 s;") {
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

// config explain fits the terminal (COLUMNS, else 100 when not a terminal): long cells wrap in
// their column; --wide keeps one line per setting whatever its length. Diagnostics keep their
// one-line compiler form (file:line: severity: message). Today's main printed lines of 352
// columns.
func TestExplainFitsTheTerminal(t *testing.T) {
	p := filepath.Join(t.TempDir(), "mm2.properties")
	if err := os.WriteFile(p, []byte("clusters = A, B\nA.bootstrap.servers = 127.0.0.1:1\nB.bootstrap.servers = 127.0.0.1:1\nA->B.enabled = true\n"+
		"A->B.topics = "+strings.Repeat("orders-[a-z]+, ", 8)+"payments\nA->B.topics.blacklist = x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	explain := func(columns string, args ...string) string {
		t.Helper()
		io, _, out, _ := iostreams.Test()
		io.SetEnv(func(k string) string {
			if k == "COLUMNS" {
				return columns
			}
			return ""
		})
		err := RunExplain(&ExplainOptions{File: mm2conf.LoadOptions{ConfigFile: p}, Output: "table", Wide: len(args) > 0 && args[0] == "--wide",
			Flow: map[bool]string{true: "A->B"}[len(args) > 0 && args[0] == "--flow"]}, cmdutil.NewTestFactory(io, nil, time.Now))
		if err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	longest := func(s string) (n int) {
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, ": warning: ") || strings.HasPrefix(l, "  hint: ") {
				continue // a diagnostic
			}
			n = max(n, len([]rune(l)))
		}
		return n
	}
	for _, c := range []struct {
		columns string
		args    []string
		limit   int
	}{{"", nil, 100}, {"100", nil, 100}, {"80", nil, 80}, {"72", []string{"--flow"}, 72}} {
		out := explain(c.columns, c.args...)
		if n := longest(out); n > c.limit {
			t.Errorf("COLUMNS=%q %v: a line of %d columns, want at most %d:\n%s", c.columns, c.args, n, c.limit, out)
		}
		if !strings.Contains(out, "== flow A->B (enabled)") || !strings.Contains(out, "KEY") {
			t.Errorf("COLUMNS=%q: %s", c.columns, out)
		}
	}
	// The origin of emit.checkpoints.interval.seconds (kmm's default and why) wraps under ORIGIN.
	out := explain("100")
	i := strings.Index(out, "\nemit.checkpoints.interval.seconds ")
	if i < 0 {
		t.Fatalf("no emit.checkpoints.interval.seconds row:\n%s", out)
	}
	rowLines := strings.SplitN(out[i+1:], "\n", 3)
	if strings.TrimSpace(rowLines[1]) == "" || strings.Fields(rowLines[1])[0] == "emit.heartbeats.enabled" || !strings.HasPrefix(rowLines[1], "      ") {
		t.Errorf("the long origin does not wrap under its column:\n%s\n%s", rowLines[0], rowLines[1])
	}
	// --wide: one line per setting, however long.
	wide := explain("80", "--wide")
	if longest(wide) <= 100 {
		t.Errorf("--wide wraps: longest line %d", longest(wide))
	}
	for _, l := range strings.Split(wide, "\n") {
		if strings.HasPrefix(l, "emit.checkpoints.interval.seconds ") && !strings.Contains(l, "this is only its polling fallback") {
			t.Errorf("--wide: the setting is not on one line: %q", l)
		}
		if strings.HasPrefix(l, "          ") {
			t.Errorf("--wide: a continuation line %q", l)
		}
	}
}
