package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/e2e/testbed/app"
	"github.com/kmmproject/kmm/pkg/flowstate"
	"github.com/kmmproject/kmm/pkg/plan"
	"github.com/kmmproject/kmm/pkg/rdkafka"
	"github.com/kmmproject/kmm/pkg/switchover"
)

// TestRunbook runs docs/runbook.md against the bed: every ```sh block under its two runbooks
// ("Planned drill", "Outage: A is down"), command by command, verbatim, in one bash per runbook
// (so `kmm replicate ... & replicator=$!` and a later `kill $replicator; wait $replicator` work as
// they do in a terminal), from a scratch directory holding testdata/runbook/ with the bed's ports
// (the one substitution: KMM_TESTBED_PORT_OFFSET), with the kmm under test first on PATH. Each
// command must exit 0, or what its `# exit N` comment says. Between the blocks an application
// stand-in (e2e/testbed/app: a producer of sequence numbers, the group orders-app committing after
// every poll) does what the text tells the application to do: it runs on A, stops for the
// failover, runs on B, stops for the failback, runs on A again; in the outage kmm replicate is
// frozen (SIGSTOP) for 3 s so that it falls behind, A's broker is killed with SIGKILL under the
// producer, and A is restarted before step 5. Then:
//   - planned: every acknowledged record read exactly once;
//   - outage: records stranded (the failback counts them), and every acknowledged record read or
//     in kmm.stranded.orders on A (re-reads allowed: the emergency failover places the group from
//     its checkpoint).
//
// A sh block outside the two runbooks, a step without a block, a command kmm does not know, an
// unexpected exit code or a missing key output fails it. Background jobs (kmm replicate) are
// stopped by pid at the end of each runbook.
func TestRunbook(t *testing.T) {
	bed := testbed.Attach(t)
	doc := parseRunbook(t, filepath.Join(testbed.Root(), "docs", "runbook.md"))
	dir := runbookScratch(t, bed)
	ensureTopic(t, bed.A, "orders", 3)
	t.Cleanup(func() {
		if t.Failed() {
			// Leave the bed's A->B flow (other tests replicate A->B) replicating.
			forgetFlow(t, bed, "A->B")
		}
	})
	// The application's sequence numbers: distinct from any earlier run's on the same topic.
	base := time.Now().Unix() % 100_000 * 1_000_000
	rb := &runbookRun{t: t, bed: bed, dir: dir, from: base}
	t.Cleanup(rb.stopApp)

	planned := map[string]func(*runbookRun, []string){
		"after 0": func(r *runbookRun, _ []string) {
			r.startApp(bed.A)
			r.waitRead(300)
			waitCount(t, bed.B, "orders", 3, 300, 2*time.Minute)
		},
		"before 3": func(r *runbookRun, _ []string) { r.stopApp() },
		"after 3": func(r *runbookRun, out []string) {
			mustContain(t, out[1], "RPO 0 records (drained: every source record is on B)", "TRANSLATION")
			r.wantFlow(flowstate.FailedOver)
		},
		"after 4": func(r *runbookRun, _ []string) { r.startApp(bed.B) },
		"before 6": func(r *runbookRun, _ []string) {
			r.waitRead(300)
			r.stopApp()
		},
		"after 6": func(r *runbookRun, out []string) {
			mustContain(t, out[1], "stranded: 0 record(s) written on A never reached B", "mark/REPLICATING")
			r.wantFlow(flowstate.Replicating)
			r.startApp(bed.A)
		},
		"after 7": func(r *runbookRun, out []string) {
			mustContain(t, out[0], "0 FAIL", "replicating (epoch")
			lost, dup := r.finish(0)
			if len(lost) != 0 || len(dup) != 0 {
				t.Errorf("planned drill: %d acknowledged record(s) never read (%v), %d read twice (%v)", len(lost), first(lost), len(dup), first(dup))
			}
		},
	}
	var stranded, rpo int
	outage := map[string]func(*runbookRun, []string){
		"after 0": func(r *runbookRun, _ []string) {
			r.startApp(bed.A)
			r.waitRead(300)
			waitCount(t, bed.B, "orders", 3, 300, 2*time.Minute)
			time.Sleep(3 * time.Second) // checkpoints of the group's latest commits
			// The outage: the consumers stop with their last commit; replication falls behind
			// (kmm replicate frozen with SIGSTOP for 3 s while the producer goes on: the records
			// it has not copied when A dies are the loss); A's broker dies under the producer
			// (what it had not acknowledged is not in the ledger).
			seen, err := r.cons.Stop()
			if err != nil {
				t.Fatal(err)
			}
			r.consSeen, r.cons = append(r.consSeen, seen), nil
			pids := r.sh.jobs()
			if len(pids) != 1 {
				t.Fatalf("want one background job (kmm replicate), have %v", pids)
			}
			cont := func() { _ = syscall.Kill(pids[0], syscall.SIGCONT) }
			t.Cleanup(cont)
			if err := syscall.Kill(pids[0], syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			time.Sleep(3 * time.Second)
			r.killed = true
			t.Cleanup(func() {
				if r.killed {
					bed.Restart(t, "A")
				}
			})
			bed.KillBroker(t, "A")
			cont()
			r.stopApp()
		},
		"after 1": func(r *runbookRun, out []string) { mustContain(t, out[0], "is unreachable") },
		"after 2": func(r *runbookRun, out []string) { mustContain(t, out[0], "RPO") },
		"after 3": func(r *runbookRun, out []string) {
			m := regexp.MustCompile(`RPO (\d+) record\(s\) known written on A and not on B`).FindStringSubmatch(out[0])
			if m == nil {
				t.Fatalf("the emergency failover stated no RPO:\n%s", out[0])
			}
			rpo, _ = strconv.Atoi(m[1])
			mustContain(t, out[0], "TRANSLATION")
			r.wantFlow(flowstate.FailedOver)
		},
		"after 4": func(r *runbookRun, _ []string) { r.startApp(bed.B) },
		"before 5": func(r *runbookRun, _ []string) {
			r.waitRead(300)
			bed.Restart(t, "A")
			r.killed = false
		},
		"before 6": func(r *runbookRun, _ []string) { r.stopApp() },
		"after 6": func(r *runbookRun, out []string) {
			m := regexp.MustCompile(`stranded: (\d+) record\(s\) written on A never reached B`).FindStringSubmatch(out[1])
			if m == nil {
				t.Fatalf("failback did not count the stranded records:\n%s", out[1])
			}
			stranded, _ = strconv.Atoi(m[1])
			mustContain(t, out[1], "B->A drained and stopped", "mark/REPLICATING")
			r.wantFlow(flowstate.Replicating)
			r.startApp(bed.A)
		},
		"after 7": func(r *runbookRun, out []string) {
			mustContain(t, out[0], "0 FAIL", "replicating (epoch")
			lost, dup := r.finish(stranded)
			// Every acknowledged record not read is in the quarantine, with its headers.
			q := map[int64]bool{}
			if stranded > 0 {
				for _, rec := range bed.A.ConsumeN(t, switchover.StrandedTopic("orders"), 3, stranded, time.Minute) {
					for _, h := range rec.Headers {
						if h.Key == "seq" {
							n, _ := strconv.ParseInt(string(h.Value), 10, 64)
							q[n] = true
						}
					}
				}
			}
			if rpo > stranded {
				t.Errorf("outage: the failover's RPO (%d known lost) is above the records the failback found stranded (%d)", rpo, stranded)
			}
			if stranded == 0 || len(lost) > stranded {
				t.Errorf("outage: %d record(s) stranded, %d acknowledged record(s) never read: want some stranded (replication was frozen), and no more lost", stranded, len(lost))
			}
			for _, s := range lost {
				if !q[s] {
					t.Errorf("outage: acknowledged record %d was neither read nor quarantined in %s", s, switchover.StrandedTopic("orders"))
				}
			}
			t.Logf("outage: RPO stated %d, %d record(s) stranded and quarantined (%d of them this run's), %d read twice", rpo, stranded, len(lost), len(dup))
		},
	}
	for _, want := range []struct {
		title string
		hooks map[string]func(*runbookRun, []string)
	}{{"Planned drill", planned}, {"Outage: A is down", outage}} {
		var steps []runbookStep
		for _, b := range doc {
			if b.title == want.title {
				steps = b.steps
			}
		}
		if len(steps) == 0 {
			t.Fatalf("docs/runbook.md has no runbook %q with sh blocks", want.title)
		}
		t.Logf("=== runbook %q", want.title)
		rb.runbook(steps, want.hooks)
	}
}

// runbookStep is one `### N. ...` step: its commands in order.
type runbookStep struct {
	num   int
	title string
	cmds  []runbookCmd
}

type runbookCmd struct {
	line string
	want []int // exit codes allowed (default 0)
	at   int   // line in docs/runbook.md
}

type runbookSection struct {
	title string
	steps []runbookStep
}

var exitComment = regexp.MustCompile(`\s#\s*exit\s+(\d+(?:\s*(?:,|or)\s*\d+)*)`)

// parseRunbook reads the ```sh blocks of path by `## runbook` and `### N. step`. A sh block
// outside a numbered step, or a step without one, fails the test.
func parseRunbook(t *testing.T, path string) []runbookSection {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []runbookSection
	var cur *runbookStep
	inSh, inOther := false, false
	pending := ""
	stepRe := regexp.MustCompile(`^### (\d+)\. (.+)$`)
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		switch {
		case inSh && strings.HasPrefix(line, "```"):
			inSh = false
			if pending != "" {
				t.Fatalf("docs/runbook.md:%d: a command continued past the end of its block", n)
			}
		case inSh:
			l := strings.TrimSpace(line)
			if pending == "" && (l == "" || strings.HasPrefix(l, "#")) {
				continue
			}
			if strings.HasSuffix(l, "\\") {
				pending += strings.TrimSuffix(l, "\\") + " "
				continue
			}
			c := runbookCmd{line: pending + l, want: []int{0}, at: n}
			pending = ""
			if m := exitComment.FindStringSubmatch(c.line); m != nil {
				c.want = nil
				for _, f := range regexp.MustCompile(`\d+`).FindAllString(m[1], -1) {
					v, _ := strconv.Atoi(f)
					c.want = append(c.want, v)
				}
			}
			cur.cmds = append(cur.cmds, c)
		case inOther && strings.HasPrefix(line, "```"):
			inOther = false
		case inOther:
		case strings.HasPrefix(line, "```sh"):
			if cur == nil {
				t.Fatalf("docs/runbook.md:%d: a sh block outside a runbook's numbered step (TestRunbook runs every sh block of the runbooks; use another info string for the rest)", n)
			}
			inSh = true
		case strings.HasPrefix(line, "```"):
			inOther = true
		case strings.HasPrefix(line, "## "):
			out = append(out, runbookSection{title: strings.TrimPrefix(line, "## ")})
			cur = nil
		case strings.HasPrefix(line, "### "):
			m := stepRe.FindStringSubmatch(line)
			if m == nil || len(out) == 0 {
				cur = nil
				continue
			}
			num, _ := strconv.Atoi(m[1])
			s := &out[len(out)-1]
			s.steps = append(s.steps, runbookStep{num: num, title: m[2]})
			cur = &s.steps[len(s.steps)-1]
		}
	}
	for _, s := range out {
		for _, st := range s.steps {
			if len(st.cmds) == 0 {
				t.Fatalf("docs/runbook.md: %q step %d. %s has no sh block", s.title, st.num, st.title)
			}
		}
	}
	return out
}

// runbookScratch is a directory with testdata/runbook/ as in the repository, the bed's ports in
// its properties files.
func runbookScratch(t *testing.T, bed *testbed.Bed) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(testbed.Root(), "testdata", "runbook")
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "testdata", "runbook")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ports := strings.NewReplacer("127.0.0.1:19092", bed.A.Bootstrap, "127.0.0.1:29092", bed.B.Bootstrap)
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), []byte(ports.Replace(string(data))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func ensureTopic(t *testing.T, c testbed.Cluster, topic string, parts int) {
	t.Helper()
	ts, err := c.Admin(t).ListTopics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if ts[topic].Partitions == 0 {
		c.CreateTopic(t, topic, parts, nil)
	}
}

// forgetFlow deletes a flow's state and its runs' journals from __kmm_state on A and B
// (tombstones), so a run that failed half-way does not leave the flow failed over.
func forgetFlow(t *testing.T, bed *testbed.Bed, flow string) {
	for _, c := range []testbed.Cluster{bed.A, bed.B} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		st, err := plan.ReadState(ctx, c.Open(t))
		cancel()
		if err != nil {
			t.Logf("forgetting %s on %s: %v", flow, c.Name, err)
			continue
		}
		var recs []rdkafka.Record
		for k := range st {
			if k == plan.FlowKey(flow) || strings.HasPrefix(k, "run/") && strings.HasSuffix(k, "/"+flow) {
				recs = append(recs, rdkafka.Record{Topic: plan.StateTopic, Partition: 0, Key: []byte(k)})
			}
		}
		if len(recs) > 0 {
			c.Produce(t, recs)
			t.Logf("forgot %d key(s) of %s in __kmm_state on %s", len(recs), flow, c.Name)
		}
	}
}

func mustContain(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

func first(s []int64) []int64 { return s[:min(len(s), 10)] }

// runbookRun is the application stand-in and the shell of one TestRunbook.
type runbookRun struct {
	t        *testing.T
	bed      *testbed.Bed
	dir      string
	from     int64 // the first sequence number
	next     int64 // the next one to write
	prod     *app.Producer
	cons     *app.Consumer
	consSeen []map[int64]int
	killed   bool          // A's broker is down
	sh       *runbookShell // the running runbook's shell
}

func (r *runbookRun) startApp(c testbed.Cluster) {
	r.t.Helper()
	if r.next == 0 {
		r.next = r.from
	}
	var err error
	if r.prod, err = app.StartProducer(c.Bootstrap, "orders", 3, 200, r.next); err != nil {
		r.t.Fatal(err)
	}
	if r.cons, err = app.StartConsumer(c.Bootstrap, "orders-app", "orders", 0); err != nil {
		r.t.Fatal(err)
	}
	r.t.Logf("application on %s from sequence number %d", c.Name, r.next)
}

// waitRead waits until the running consumer has read n records.
func (r *runbookRun) waitRead(n int64) {
	r.t.Helper()
	testbed.Eventually(r.t, 2*time.Minute, func() error {
		if got := r.cons.Read(); got < n {
			return fmt.Errorf("the application read %d of %d records", got, n)
		}
		return nil
	})
}

// stopApp stops the producer (every record before its next sequence number was acknowledged),
// then the consumer (it leaves the group).
func (r *runbookRun) stopApp() {
	if r.prod != nil {
		next, err := r.prod.Stop()
		r.next = max(r.next, next)
		if err != nil && !r.killed {
			r.t.Errorf("application producer: %v", err)
		}
		r.prod = nil
	}
	if r.cons != nil {
		seen, err := r.cons.Stop()
		if err != nil {
			r.t.Errorf("application consumer: %v", err)
		}
		r.consSeen = append(r.consSeen, seen)
		r.cons = nil
	}
}

// finish lets the consumer read until at most unread acknowledged records are left, stops the
// application and returns the acknowledged records never read and those read twice.
func (r *runbookRun) finish(unread int) (lost, dup []int64) {
	r.t.Helper()
	if r.prod != nil {
		next, err := r.prod.Stop()
		if err != nil {
			r.t.Errorf("application producer: %v", err)
		}
		r.next, r.prod = max(r.next, next), nil
	}
	check := func() ([]int64, []int64) {
		seen := append([]map[int64]int(nil), r.consSeen...)
		seen = append(seen, r.cons.Seen())
		return checkRange(r.from, r.next, seen...)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		lost, _ = check()
		if len(lost) <= unread || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	r.stopApp()
	lost, dup = checkRange(r.from, r.next, r.consSeen...)
	r.t.Logf("application: %d record(s) acknowledged, %d never read, %d read twice", r.next-r.from, len(lost), len(dup))
	return lost, dup
}

func checkRange(from, next int64, seen ...map[int64]int) (lost, dup []int64) {
	total := map[int64]int{}
	for _, s := range seen {
		for k, v := range s {
			total[k] += v
		}
	}
	for i := from; i < next; i++ {
		switch c := total[i]; {
		case c == 0:
			lost = append(lost, i)
		case c > 1:
			dup = append(dup, i)
		}
	}
	return lost, dup
}

func (r *runbookRun) wantFlow(state flowstate.State) {
	r.t.Helper()
	st, err := flowstate.DecodeFlow(readState(r.t, r.bed.B)[flowstate.FlowKey("A", "B")])
	if err != nil || st == nil || st.State != state {
		r.t.Fatalf("flow A->B on B: %+v (%v), want %s", st, err, state)
	}
}

// runbook runs the steps' commands in one bash, calling hooks["before N"] and hooks["after N"]
// around step N with the outputs of its commands.
func (r *runbookRun) runbook(steps []runbookStep, hooks map[string]func(*runbookRun, []string)) {
	t := r.t
	sh := startRunbookShell(t, r.dir)
	defer sh.close()
	r.sh = sh
	for _, st := range steps {
		if h := hooks[fmt.Sprintf("before %d", st.num)]; h != nil {
			h(r, nil)
		}
		var outs []string
		for _, c := range st.cmds {
			start := time.Now()
			out, code := sh.run(c.line, 7*time.Minute)
			t.Logf("step %d. %s: $ %s\n(exit %d after %s)\n%s", st.num, st.title, c.line, code, time.Since(start).Round(time.Millisecond), tail(out, 60))
			ok := false
			for _, w := range c.want {
				ok = ok || code == w
			}
			if !ok {
				t.Fatalf("docs/runbook.md:%d (step %d. %s): exit %d, want %v:\n$ %s\n%s", c.at, st.num, st.title, code, c.want, c.line, out)
			}
			if bgOp.MatchString(c.line) {
				sh.alive(c, 3*time.Second)
			}
			outs = append(outs, out)
		}
		if h := hooks[fmt.Sprintf("after %d", st.num)]; h != nil {
			h(r, outs)
		}
	}
	sh.stopJobs()
}

// bgOp matches a command line that starts a background job (`&`, not `&&`, `>&` or `&>`).
var bgOp = regexp.MustCompile(`(?:^|[^&>])&(?:[^&>]|$)`)

// alive fails the test when the background job c started has ended within d (a command that
// does not exist, a refused flag, a flow kmm refuses): a job's exit code is not the line's.
func (s *runbookShell) alive(c runbookCmd, d time.Duration) {
	s.t.Helper()
	last, _ := s.run("echo $!", time.Minute)
	time.Sleep(d)
	running, _ := s.run("jobs -rp", time.Minute)
	for _, f := range strings.Fields(running) {
		if f == strings.TrimSpace(last) {
			return
		}
	}
	out, code := s.run("wait $!", time.Minute)
	if m := regexp.MustCompile(`>>?\s*([^\s&;]+)`).FindStringSubmatch(c.line); m != nil {
		if log, err := os.ReadFile(filepath.Join(s.dir, m[1])); err == nil {
			out += "\n" + m[1] + ":\n" + tail(string(log), 30)
		}
	}
	s.t.Fatalf("docs/runbook.md:%d: the background job of\n$ %s\nended within %s (exit %d)\n%s", c.at, c.line, d, code, out)
}

// runbookShell is one bash fed the runbook's commands on stdin; stdout and stderr are one pipe.
type runbookShell struct {
	t     *testing.T
	dir   string
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
	done  chan struct{}
}

const rcMark = "__RUNBOOK_RC__"

func startRunbookShell(t *testing.T, dir string) *runbookShell {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "--noprofile", "--norc")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(Bin(t))+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its background jobs too: killed together on failure
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	sh := &runbookShell{t: t, dir: dir, cmd: cmd, in: in, lines: make(chan string, 1024), done: make(chan struct{})}
	go func() {
		defer close(sh.lines)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			sh.lines <- sc.Text()
		}
	}()
	go func() { _ = cmd.Wait(); pr.Close(); close(sh.done) }()
	t.Cleanup(sh.kill)
	return sh
}

// run runs one command line (stdin /dev/null) and returns its output and exit code.
func (s *runbookShell) run(line string, timeout time.Duration) (string, int) {
	s.t.Helper()
	if _, err := fmt.Fprintf(s.in, "{ %s\n} </dev/null\nprintf '\\n%s %%d\\n' $?\n", line, rcMark); err != nil {
		s.t.Fatalf("writing to the shell: %v", err)
	}
	var out strings.Builder
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				s.t.Fatalf("the shell ended during %q:\n%s", line, out.String())
			}
			if rest, found := strings.CutPrefix(l, rcMark+" "); found {
				code, _ := strconv.Atoi(rest)
				return strings.TrimSuffix(out.String(), "\n"), code
			}
			out.WriteString(l + "\n")
		case <-timer.C:
			s.t.Fatalf("%q did not end within %s:\n%s", line, timeout, out.String())
		}
	}
}

// jobs returns the pids of the shell's background jobs.
func (s *runbookShell) jobs() []int {
	out, _ := s.run("jobs -p", time.Minute)
	var pids []int
	for _, f := range strings.Fields(out) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// stopJobs sends SIGTERM to the shell's background jobs by pid and waits for them.
func (s *runbookShell) stopJobs() {
	pids := s.jobs()
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	if out, code := s.run("wait", 2*time.Minute); code != 0 {
		s.t.Errorf("background jobs %v: exit %d\n%s", pids, code, out)
	}
}

func (s *runbookShell) close() {
	_ = s.in.Close()
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
	}
	s.kill() // background jobs left by a runbook that failed half-way
}

// kill ends the shell and whatever it started: its process group, which its background jobs
// stay in after the shell itself has ended (a runbook that failed half-way: kmm replicate).
func (s *runbookShell) kill() {
	pg := -s.cmd.Process.Pid
	if syscall.Kill(pg, syscall.SIGTERM) != nil {
		return // no process left in the group
	}
	deadline := time.Now().Add(40 * time.Second)
	for syscall.Kill(pg, 0) == nil {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pg, syscall.SIGKILL)
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	<-s.done
}

// README's ten-line drill is docs/runbook.md's planned drill, shortened: each of its commands is
// one of the runbook's, verbatim, so TestRunbook runs it too. No bed needed.
func TestRunbookREADMEDrill(t *testing.T) {
	doc := parseRunbook(t, filepath.Join(testbed.Root(), "docs", "runbook.md"))
	have := map[string]bool{}
	for _, s := range doc {
		for _, st := range s.steps {
			for _, c := range st.cmds {
				have[c.line] = true
			}
		}
	}
	data, err := os.ReadFile(filepath.Join(testbed.Root(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "\n## A drill in ten lines\n")
	if !ok {
		t.Fatal(`README.md has no section "## A drill in ten lines"`)
	}
	_, block, ok := strings.Cut(rest, "\n```sh\n")
	if !ok {
		t.Fatal("README.md's drill has no sh block")
	}
	block, _, _ = strings.Cut(block, "\n```")
	n := 0
	for _, l := range strings.Split(block, "\n") {
		if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		n++
		if !have[l] {
			t.Errorf("README.md's drill runs a command docs/runbook.md does not (so TestRunbook does not test it):\n%s", l)
		}
	}
	if n == 0 || n > 10 {
		t.Errorf("README.md's drill has %d commands, want 1 to 10", n)
	}
}
