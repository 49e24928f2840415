package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
)

// The binary's side of issue 12's items that have command-tier tests too: what an operator
// meets with the built kmm (exit code, time, message). None needs the test bed: the clusters
// are 127.0.0.1:1, where nothing listens.

// propsWith writes the unreachable base file plus lines.
func propsWith(t *testing.T, name string, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	base := "clusters = A, B\nA.bootstrap.servers = 127.0.0.1:1\nB.bootstrap.servers = 127.0.0.1:1\nA->B.enabled = true\n"
	if err := os.WriteFile(p, []byte(base+strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// runTimed runs kmm and fails the test when it takes longer than max.
func runTimed(t *testing.T, max time.Duration, args ...string) Result {
	t.Helper()
	start := time.Now()
	r := Run(t, args...)
	if took := time.Since(start); took > max {
		t.Errorf("%v took %s, want at most %s", args, took, max)
	}
	return r
}

// config check: a replication loop (A->B and B->A, IdentityReplicationPolicy, overlapping
// topics) is a warning naming it; tasks.max beyond what kmm runs is capped and said; negative
// intervals are off as in MM2, and shown as off.
func TestConfigCheckLoopsLimitsIntervals(t *testing.T) {
	Bin(t)
	identity := "replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
	loop := propsWith(t, "loop.properties", "B->A.enabled = true", identity)
	r := runTimed(t, 5*time.Second, "config", "check", loop)
	if r.Code != 0 || !strings.Contains(r.Stderr, "replication loop: A->B and B->A") || !strings.Contains(r.Stderr, "MM2 cannot prevent it") {
		t.Errorf("loop: exit %d, want 0 with the loop warning\n%s", r.Code, r.Stderr)
	}
	// Disjoint filters, or the default policy (remote topics are prefixed): no loop.
	for name, lines := range map[string][]string{
		"disjoint": {"B->A.enabled = true", identity, "A->B.topics = orders", "B->A.topics = payments"},
		"default":  {"B->A.enabled = true"},
	} {
		r := runTimed(t, 5*time.Second, "config", "check", propsWith(t, name+".properties", lines...))
		if r.Code != 0 || strings.Contains(r.Stderr, "replication loop") {
			t.Errorf("%s: exit %d, a loop warning where there is no loop:\n%s", name, r.Code, r.Stderr)
		}
	}

	tasks := propsWith(t, "tasks.properties", "tasks.max = 2147483647")
	r = runTimed(t, 5*time.Second, "config", "check", tasks, "-o", "json")
	var rep struct {
		Flows []struct {
			Name      string `json:"name"`
			TasksMax  int64  `json:"tasks_max"`
			Pipelines int64  `json:"pipelines"`
		} `json:"flows"`
		Diagnostics []struct {
			Code, Position, Message string
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || r.Code != 0 || len(rep.Flows) == 0 {
		t.Fatalf("tasks.max: exit %d, %v\n%s\n%s", r.Code, err, r.Stdout, r.Stderr)
	}
	for _, f := range rep.Flows {
		if f.TasksMax != 2147483647 || f.Pipelines != 64 {
			t.Errorf("flow %s: tasks_max %d pipelines %d, want 2147483647 capped to 64", f.Name, f.TasksMax, f.Pipelines)
		}
	}
	if len(rep.Diagnostics) != 1 || !strings.HasSuffix(rep.Diagnostics[0].Position, "tasks.properties:5") || !strings.Contains(rep.Diagnostics[0].Message, "kmm runs at most 64 pipelines") {
		t.Errorf("tasks.max: diagnostics %+v, want the cap at tasks.properties:5", rep.Diagnostics)
	}
	// The table and the warning on stderr, as a person sees them.
	r = runTimed(t, 5*time.Second, "config", "check", tasks)
	if r.Code != 0 || !strings.Contains(r.Stderr, "tasks.properties:5: warning: tasks.max = 2147483647: kmm runs at most 64 pipelines") {
		t.Errorf("tasks.max: exit %d, no warning with file:line:\n%s", r.Code, r.Stderr)
	}

	neg := propsWith(t, "neg.properties", "emit.checkpoints.interval.seconds = -1", "emit.heartbeats.interval.seconds = -5", "refresh.topics.interval.seconds = -1")
	r = runTimed(t, 5*time.Second, "config", "check", neg)
	if r.Code != 0 {
		t.Fatalf("negative intervals: exit %d\n%s", r.Code, r.Stderr)
	}
	for _, w := range []string{"neg.properties:5: warning: emit.checkpoints.interval.seconds = -1: MM2 treats a negative interval as off",
		"neg.properties:6: warning: emit.heartbeats.interval.seconds = -5", "neg.properties:7: warning: refresh.topics.interval.seconds = -1"} {
		if !strings.Contains(r.Stderr, w) {
			t.Errorf("negative intervals: no %q:\n%s", w, r.Stderr)
		}
	}
	var ab string
	for _, l := range strings.Split(r.Stdout, "\n") {
		if strings.HasPrefix(l, "A->B ") {
			ab = l
		}
	}
	if ab == "" || strings.Contains(ab, "checkpoints") || strings.Contains(ab, "heartbeats") || strings.Contains(ab, "-1000ms") || !strings.Contains(ab, "topics off") {
		t.Errorf("negative intervals: flow A->B shown as %q, want no checkpoints or heartbeats and 'topics off'", ab)
	}
}

// config explain shows what replicate uses: kmm's defaults and forced producer settings with
// their reason, heartbeats-only flows summarised (--wide shows them), unknown sections and keys
// are errors.
func TestExplainShowsWhatReplicateUses(t *testing.T) {
	props := unreachableProps(t)
	Bin(t)
	r := runTimed(t, 5*time.Second, "config", "explain", props)
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	row := func(out, key string) string {
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 1 && f[0] == key && strings.Contains(l, "kmm replicate") {
				return l
			}
		}
		return ""
	}
	for key, want := range map[string]string{
		"refresh.topics.interval.seconds": "10 ",
		"offset.flush.interval.ms":        "1000 ",
		"acks":                            "all ",
		"enable.idempotence":              "true ",
	} {
		l := row(r.Stdout, key)
		if l == "" || !strings.Contains(l, want) {
			t.Errorf("%s: row %q, want the value replicate uses (%q) with kmm's reason", key, l, strings.TrimSpace(want))
		}
	}
	if !strings.Contains(r.Stdout, "== flow B->A (heartbeats only") || !strings.Contains(r.Stdout, "--wide shows them") {
		t.Errorf("the heartbeats-only flow is not summarised:\n%s", tail(r.Stdout, 5))
	}
	wide := runTimed(t, 5*time.Second, "config", "explain", props, "--wide")
	if wide.Code != 0 || len(wide.Stdout) <= len(r.Stdout) || strings.Contains(wide.Stdout, "--wide shows them") {
		t.Errorf("--wide: exit %d, %d bytes against %d without it", wide.Code, len(wide.Stdout), len(r.Stdout))
	}
	// A long value is elided (the table fits a terminal); --wide shows it whole.
	long := "orders-" + strings.Repeat("x", 200)
	lp := propsWith(t, "long.properties", "A->B.topics = "+long)
	r = runTimed(t, 5*time.Second, "config", "explain", lp, "topics")
	if r.Code != 0 || strings.Contains(r.Stdout, long) || !strings.Contains(r.Stdout, "(207 chars, --wide shows all)") {
		t.Errorf("long value: exit %d, not elided:\n%s", r.Code, r.Stdout)
	}
	if r := runTimed(t, 5*time.Second, "config", "explain", lp, "topics", "--wide"); r.Code != 0 || !strings.Contains(r.Stdout, long) {
		t.Errorf("long value with --wide: exit %d, not whole:\n%s", r.Code, r.Stdout)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"config", "explain", props, "--section", "nonsense"}, `--section "nonsense": no such section`},
		{[]string{"config", "explain", props, "no.such.key"}, `no setting matches "no.such.key"`},
	} {
		r := runTimed(t, 5*time.Second, c.args...)
		if r.Code != 2 || r.Stdout != "" || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 with %q", c.args[2:], r.Code, r.Stdout, r.Stderr, c.want)
		}
	}
}

// replicate interrupted before any flow started (its clusters do not answer) exits 130 within
// a second and says nothing was replicated; with -o json a failure at start is a JSON error
// event on stdout.
func TestReplicateInterruptAndJSONErrorAtStart(t *testing.T) {
	props := unreachableProps(t)
	Bin(t)
	p := startKMM(t, "replicate", props)
	testbed.Eventually(t, 10*time.Second, func() error {
		if !strings.Contains(p.Stderr(), "pipeline(s)") {
			return os.ErrNotExist
		}
		return nil
	})
	time.Sleep(300 * time.Millisecond) // waiting for the clusters now
	sent := time.Now()
	code := p.stop(t, syscall.SIGINT, 5*time.Second)
	if took := time.Since(sent); code != 130 || took > time.Second {
		t.Errorf("exit %d %s after SIGINT, want 130 within 1s\n%s", code, took, p.Stderr())
	}
	if !strings.Contains(p.Stderr(), "interrupted before any flow started") || p.stdout.Len() != 0 {
		t.Errorf("stderr lacks the reason, or stdout is not empty (%q):\n%s", p.stdout.String(), p.Stderr())
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"replicate", "-o", "json", props, "--shutdown-timeout", "-1s"}, "--shutdown-timeout must be 0 or more"},
		{[]string{"replicate", "-o", "json", filepath.Join(t.TempDir(), "missing.properties")}, "configuration error(s); nothing was written"},
	} {
		r := runTimed(t, 5*time.Second, c.args...)
		lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
		var ev map[string]any
		if r.Code != 2 || len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &ev) != nil || ev["type"] != "error" || !strings.Contains(ev["message"].(string), c.want) {
			t.Errorf("%v: exit %d, stdout %q; want exit 2 and one JSON error event with %q", c.args[3:], r.Code, r.Stdout, c.want)
		}
	}
}

// Input limits: files kmm refuses at once with exit 2 and a message, without reading them into
// memory (a 1 GiB sparse file, /dev/zero: the process stays small).
func TestInputLimitsBinary(t *testing.T) {
	Bin(t)
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		t.Fatalf("GNU time (/usr/bin/time, Debian package `time`) measures the peak RSS: %v", err)
	}
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.properties")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	empty := filepath.Join(dir, "empty.properties")
	binary := filepath.Join(dir, "binary.properties")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(binary, []byte("clusters = A\x00\x01\x02\xff\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"config", "check", huge}, "is 1073741824 bytes, over kmm's limit of"},
		{[]string{"replicate", huge}, "over kmm's limit of"},
		{[]string{"config", "check", "/dev/zero"}, "is not a regular file"},
		{[]string{"status", "/dev/zero"}, "is not a regular file"},
		{[]string{"config", "check", empty}, "is empty"},
		{[]string{"config", "check", binary}, "is not a text file"},
		{[]string{"config", "check", dir}, "is a directory"},
	} {
		// The peak RSS comes from GNU time, not from this process's wait4: Go starts children
		// with CLONE_VM, and Linux then reports a child's ru_maxrss as at least this test
		// process's own peak (795 MiB in a long e2e run), whatever the child used.
		rssFile := filepath.Join(dir, "rss")
		cmd := exec.Command("/usr/bin/time", append([]string{"-f", "%M", "-o", rssFile, Bin(t)}, c.args...)...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		start := time.Now()
		_ = cmd.Run()
		took := time.Since(start)
		rss := int64(-1)
		if b, err := os.ReadFile(rssFile); err == nil {
			// GNU time writes "Command exited with non-zero status 2" first: the last line is %M.
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			rss, _ = strconv.ParseInt(strings.TrimSpace(lines[len(lines)-1]), 10, 64) // KiB
		}
		if rss < 0 {
			t.Errorf("%v: no peak RSS from /usr/bin/time", c.args)
		}
		if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(errOut.String(), c.want) || took > 3*time.Second || rss > 200<<10 {
			t.Errorf("%v: exit %d after %s, max RSS %d KiB, stderr %q; want exit 2 at once with %q, under 200 MiB",
				c.args, code, took, rss, errOut.String(), c.want)
		}
	}
}

// Flags validated before anything connects: each exits 2 at once with its message (more
// cases than TestBadInputExit2Fast).
func TestFlagValidationBinary(t *testing.T) {
	props := unreachableProps(t)
	Bin(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"lag", props, "--max-lag-records", "-5"}, "--max-lag-records must be 0 or more"},
		{[]string{"translate-offsets", props, "--yes"}, "--yes only goes with --apply"},
		{[]string{"translate-offsets", props, "--apply", "--dry-run", "--group", "g", "--groups", "g.*"}, "--group and --groups do not go together"},
		{[]string{"status", props, "--endpoint", "ftp://x"}, "--endpoint must be an http:// or https:// URL"},
		{[]string{"--log-format", "yaml", "status", props}, "--log-format must be text or json"},
		{[]string{"status", props, "--log-level", "loud"}, "--log-level must be debug, info, warn or error"},
		{[]string{"status", props, "--color", "pink"}, "--color must be auto, always or never"},
	} {
		r := runTimed(t, 3*time.Second, c.args...)
		if r.Code != 2 || r.Stdout != "" || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 with %q", c.args, r.Code, r.Stdout, r.Stderr, c.want)
		}
	}
}

// Help that teaches, from the shipped binary: every command's help is its golden file (the
// command-tier test pins them), implemented commands have EXAMPLES naming themselves, `kmm help
// X` is `kmm X --help`, mistyped commands exit 2 with "did you mean", usage hints name the full
// command, global flags work after the command, provider errors carry a hint.
func TestHelpAndMistakesBinary(t *testing.T) {
	Bin(t)
	paths := append([]string{""}, commandTree(t, nil)...)
	if len(paths) < 12 {
		t.Fatalf("only %d commands in the help tree: %v", len(paths), paths)
	}
	for _, p := range paths {
		args := append(strings.Fields(p), "--help")
		r := Run(t, args...)
		if r.Code != 0 || r.Stderr != "" {
			t.Errorf("kmm %s --help: exit %d, stderr %q", p, r.Code, r.Stderr)
			continue
		}
		golden := filepath.Join(testbed.Root(), "testdata", "golden", "help", "kmm"+strings.ReplaceAll(" "+p, " ", "-")+".txt")
		if want, err := os.ReadFile(golden); err != nil || string(want) != r.Stdout {
			t.Errorf("kmm %s --help differs from %s (%v):\n%s", p, filepath.Base(golden), err, r.Stdout)
		}
		for _, bad := range []string{"(default: false)", "(default: 0s)", "(default: 0)", "--endpoint kmm replicate", "--whitelist topics"} {
			if strings.Contains(r.Stdout, bad) {
				t.Errorf("kmm %s --help: urfave/cli's guessed value name or a doubled/zero default %q", p, bad)
			}
		}
		for _, l := range strings.Split(r.Stdout, "\n") {
			if flag, _, _ := strings.Cut(strings.TrimSpace(l), "  "); strings.HasPrefix(flag, "--") && strings.Contains(flag+" ", " value ") {
				t.Errorf("kmm %s --help: urfave/cli's placeholder 'value' in %q", p, flag)
			}
		}
		if p == "status" && !strings.Contains(r.Stdout, "--max-lag-records N") && !strings.Contains(r.Stdout, "(0 = off)") {
			t.Errorf("kmm status --help does not say --max-lag-records 0 = off")
		}
		if p == "" {
			continue
		}
		if !strings.Contains(r.Stdout, "\nEXAMPLES:\n") || !strings.Contains(r.Stdout, "\n   kmm "+p) {
			t.Errorf("kmm %s --help has no EXAMPLES of itself", p)
		}
		if h := Run(t, append([]string{"help"}, strings.Fields(p)...)...); h.Code != 0 || h.Stdout != r.Stdout {
			t.Errorf("kmm help %s: exit %d, not the text of kmm %s --help", p, h.Code, p)
		}
	}

	props := unreachableProps(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"stauts", props}, "did you mean 'kmm status'?"},
		{[]string{"config", "chek", props}, "did you mean 'kmm config check'?"},
		{[]string{"help", "config", "explian"}, "did you mean 'kmm config explain'?"},
		{[]string{"translate", props}, "did you mean 'kmm translate-offsets'?"},
		{[]string{"config", "check"}, "usage: kmm config check mirror-maker.properties"},
		{[]string{"status"}, "usage: kmm status mirror-maker.properties"},
		{[]string{"completion", "powershell"}, `unknown shell "powershell"`},
	} {
		r := runTimed(t, 3*time.Second, c.args...)
		if r.Code != 2 || r.Stdout != "" || !strings.Contains(r.Stderr, c.want) || strings.Contains(r.Stderr, "kmm kmm") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 with %q", c.args, r.Code, r.Stdout, r.Stderr, c.want)
		}
	}

	// Global flags after the command (and its file).
	r := runTimed(t, 5*time.Second, "config", "check", props, "--log-level", "debug", "--color", "never", "-o", "json")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "{") {
		t.Errorf("global flags after the command: exit %d, stdout %.80q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}

	// Provider errors name the line and say what to do.
	prov := propsWith(t, "prov.properties",
		"config.providers = env, file",
		"config.providers.env.class = org.apache.kafka.common.config.provider.EnvVarConfigProvider",
		"config.providers.file.class = org.apache.kafka.common.config.provider.FileConfigProvider",
		"A.ssl.key.password = ${env:KMM_E2E_NO_SUCH_VAR}",
		"B.ssl.key.password = ${file:"+filepath.Join(t.TempDir(), "none.properties")+":pw}")
	r = runTimed(t, 5*time.Second, "config", "check", prov)
	for _, w := range []string{"prov.properties:8: error: ${env:KMM_E2E_NO_SUCH_VAR}: environment variable KMM_E2E_NO_SUCH_VAR is not set",
		"hint: set KMM_E2E_NO_SUCH_VAR in the environment", "prov.properties:9: error:", "none.properties", "hint: create "} {
		if r.Code != 2 || !strings.Contains(r.Stderr, w) {
			t.Errorf("provider errors: exit %d, no %q:\n%s", r.Code, w, r.Stderr)
		}
	}
}

// kmm completion: each shell's script lists the commands and flags; the bash one completes in a
// real bash.
func TestCompletionBinary(t *testing.T) {
	Bin(t)
	scripts := map[string]string{}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		r := runTimed(t, 3*time.Second, "completion", sh)
		if r.Code != 0 || r.Stderr != "" {
			t.Fatalf("completion %s: exit %d, %q", sh, r.Code, r.Stderr)
		}
		for _, w := range []string{"translate-offsets", "explain", "max-lag-time", "failover"} {
			if !strings.Contains(r.Stdout, w) {
				t.Errorf("completion %s lacks %q", sh, w)
			}
		}
		scripts[sh] = r.Stdout
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to try the script in")
	}
	for _, c := range []struct {
		words string
		want  string
	}{
		{"kmm tra", "translate-offsets"},
		{"kmm config ex", "explain"},
		{"kmm config check --cl", "--clusters"},
		{"kmm lag --max-lag-t", "--max-lag-time"},
	} {
		w := strings.Fields(c.words)
		script := scripts["bash"] + "\nCOMP_WORDS=(" + c.words + "); COMP_CWORD=" + string(rune('0'+len(w)-1)) + "; _kmm; echo \"${COMPREPLY[*]}\""
		out, err := exec.Command("bash", "-c", script).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != c.want {
			t.Errorf("bash completion of %q: %q (%v), want %q", c.words, out, err, c.want)
		}
	}
}

// On a terminal each diagnostic of config check and explain is printed once (the report on
// stdout; not again on stderr). script(1) gives kmm a pseudo-terminal for both streams.
func TestDiagnosticsOnceOnATerminal(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("no script(1) to run kmm on a pseudo-terminal")
	}
	bin := Bin(t)
	props := propsWith(t, "old.properties", "topics.blacklist = x")
	for _, cmd := range [][]string{{"config", "check"}, {"config", "explain"}} {
		line := bin + " " + strings.Join(cmd, " ") + " " + props
		c := exec.Command("script", "-qec", line, "/dev/null")
		c.Env = append(os.Environ(), "TERM=dumb", "NO_COLOR=1")
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
		if n := strings.Count(string(out), "warning: topics.blacklist is not an MM2 4.x key"); n != 1 {
			t.Errorf("kmm %s on a terminal: the warning printed %d times, want once:\n%s", strings.Join(cmd, " "), n, out)
		}
	}
}
