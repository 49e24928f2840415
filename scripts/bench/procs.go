package main

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

const clkTck = 100 // sysconf(_SC_CLK_TCK) on Linux (checked in machineFacts)

// procCPU returns user+system CPU seconds of pid (all its threads) from /proc/<pid>/stat.
func procCPU(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	f := strings.Fields(s[i+1:])
	// fields after ")": state(3) ppid ... utime is field 14, stime 15 (1-based over the whole line)
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / clkTck, nil
}

// procStatusKB returns a "Vm..." field of /proc/<pid>/status in kB.
func procStatusKB(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, field+":") {
			f := strings.Fields(line[len(field)+1:])
			if len(f) > 0 {
				return strconv.ParseInt(f[0], 10, 64)
			}
		}
	}
	return 0, fmt.Errorf("%s not in /proc/%d/status", field, pid)
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// machineBusy returns total busy and total jiffies from /proc/stat (all CPUs).
func machineBusy() (busy, total float64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	for i, v := range f[1:] {
		x, _ := strconv.ParseFloat(v, 64)
		if i == 7 || i == 8 { // guest, guest_nice are already in user/nice
			continue
		}
		total += x
		if i != 3 && i != 4 { // idle, iowait
			busy += x
		}
	}
	return busy / clkTck, total / clkTck
}

func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return ""
}

// brokerPIDs returns the pids of the test bed's brokers (.testbed/<X>/broker.pid).
func brokerPIDs(bed string) map[string]int {
	out := map[string]int{}
	for _, c := range []string{"A", "B", "C"} {
		b, err := os.ReadFile(filepath.Join(bed, c, "broker.pid"))
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			out[c] = pid
		}
	}
	return out
}

// replicator is a running kmm or MM2 process.
type replicator struct {
	tool   string // "kmm" or "mm2"
	name   string
	pid    int
	start  time.Time
	cmd    *exec.Cmd // kmm only
	waited chan struct{}
	logDir string
	live   string // log file while running
	cancel func() // engine (in-process) only
}

var (
	runningMu sync.Mutex
	running   = map[*replicator]bool{}
)

func register(r *replicator)   { runningMu.Lock(); running[r] = true; runningMu.Unlock() }
func unregister(r *replicator) { runningMu.Lock(); delete(running, r); runningMu.Unlock() }

// stopAll stops every replicator this driver started (used on abort).
func stopAll(cfg *config) {
	runningMu.Lock()
	list := make([]*replicator, 0, len(running))
	for r := range running {
		list = append(list, r)
	}
	runningMu.Unlock()
	for _, r := range list {
		r.stop(cfg)
	}
}

// startKMM starts `kmm replicate`; env is added to its environment after BENCH_KMM_ENV (a later
// value of the same variable wins).
func startKMM(cfg *config, name, propsFile, target, logDir string, env ...string) (*replicator, error) {
	out, err := os.Create(filepath.Join(logDir, "kmm.ndjson"))
	if err != nil {
		return nil, err
	}
	errf, err := os.Create(filepath.Join(logDir, "kmm.stderr"))
	if err != nil {
		return nil, err
	}
	args := []string{"replicate", "--clusters", target, "-o", "json", "--progress-interval", "5s"}
	if cfg.kmmForce {
		// kmm refuses a flow while an MM2 Connect group <S>-mm2 has members on the target; other
		// tests sharing the bed may run MM2 A->B with that default group.
		args = append(args, "--force")
	}
	cmd := exec.Command(cfg.KMMBin, append(args, propsFile)...)
	cmd.Stdout, cmd.Stderr = out, errf
	if extra := os.Getenv("BENCH_KMM_ENV"); extra != "" {
		// experiments only, e.g. BENCH_KMM_ENV="GOGC=200 GLIBC_TUNABLES=glibc.malloc.trim_threshold=268435456"
		cmd.Env = append(os.Environ(), strings.Fields(extra)...)
	}
	if len(env) > 0 {
		if cmd.Env == nil {
			cmd.Env = os.Environ()
		}
		cmd.Env = append(cmd.Env, env...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	r := &replicator{tool: "kmm", name: name, pid: cmd.Process.Pid, start: start, cmd: cmd, waited: make(chan struct{}), logDir: logDir,
		live: filepath.Join(logDir, "kmm.stderr")}
	go func() { _ = cmd.Wait(); out.Close(); errf.Close(); close(r.waited) }()
	register(r)
	return r, nil
}

func startMM2(cfg *config, name, propsFile, target, logDir string) (*replicator, error) {
	cmd := exec.Command(filepath.Join(cfg.Root, "scripts", "mm2.sh"), "start", name, propsFile, "--clusters", target)
	cmd.Env = append(os.Environ(), "MM2_HEAP="+cfg.MM2Heap)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("scripts/mm2.sh start %s: %v: %s", name, err, buf.String())
	}
	// t0 is when mm2.sh returned: the JVM was just spawned (mm2.sh first computes the classpath).
	start := time.Now()
	b, err := os.ReadFile(filepath.Join(cfg.Bed, "mm2", name, "pid"))
	if err != nil {
		return nil, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, err
	}
	r := &replicator{tool: "mm2", name: name, pid: pid, start: start, logDir: logDir,
		live: filepath.Join(cfg.Bed, "mm2", name, "mm2.log")}
	register(r)
	return r, nil
}

// stop ends the process gracefully (kmm: SIGTERM, drain, SIGKILL after 40 s; MM2: mm2.sh stop).
func (r *replicator) stop(cfg *config) {
	defer unregister(r)
	switch r.tool {
	case "engine":
		r.cancel()
		<-r.waited
	case "kmm":
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-r.waited:
		case <-time.After(40 * time.Second):
			_ = r.cmd.Process.Kill()
			<-r.waited
		}
	case "mm2":
		cmd := exec.Command(filepath.Join(cfg.Root, "scripts", "mm2.sh"), "stop", r.name)
		_ = cmd.Run()
		// keep its log beside the run's other files, drop the mm2.sh state directory
		dir := filepath.Join(cfg.Bed, "mm2", r.name)
		if b, err := os.ReadFile(filepath.Join(dir, "mm2.log")); err == nil {
			_ = os.WriteFile(filepath.Join(r.logDir, "mm2.log"), b, 0o644)
		}
		_ = os.RemoveAll(dir)
	}
}

func (r *replicator) exited() bool {
	if r.tool == "kmm" || r.tool == "engine" {
		select {
		case <-r.waited:
			return true
		default:
			return false
		}
	}
	return !alive(r.pid)
}

// logFile is the process's log: the live one while it runs, MM2's copy in the run's directory
// once mm2.sh has removed its state directory.
func (r *replicator) logFile() string {
	if _, err := os.Stat(r.live); err != nil {
		return filepath.Join(r.logDir, "mm2.log")
	}
	return r.live
}

func (r *replicator) logTail(n int) string {
	b, _ := os.ReadFile(r.logFile())
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// propsSpec is what differs between the generated MM2 properties files.
type propsSpec struct {
	Target, TargetBootstrap string
	Topic                   string // source topic (exact name)
	TopicsRegex             string // a regular expression of source topics, used instead of Topic when set
	RunName                 string // unique prefix of the per-run Connect topics and group
	Tasks                   int
	Batching                bool // the high-volume producer batching (batch.size, linger.ms)
	// SourceBootstrap replaces A's bootstrap (the WAN rows: a link in front of A); "" = cfg.A.
	SourceBootstrap string
	// Defaults leaves out the high-volume client tuning: each tool runs its own defaults (WAN rows).
	Defaults bool
	Extra    []string // lines appended (a row's own settings: exactly-once)
	// Checkpoints emits checkpoints every 5 s for the groups bench-<id>-g.* (the many-partitions
	// rows measure their freshness) instead of leaving them off.
	Checkpoints bool
}

// checkpointLines is the file's checkpoint block: off, or on for the run's groups with short
// intervals (MM2 finds new groups only every refresh.groups.interval).
func checkpointLines(cfg *config, s propsSpec) string {
	if !s.Checkpoints {
		return "# checkpoints and group offset sync are not part of this benchmark (no consumer groups to translate)\nemit.checkpoints.enabled = false\n"
	}
	return fmt.Sprintf(`# checkpoints of the benchmark's groups (their freshness is measured); no group offset sync
emit.checkpoints.enabled = true
emit.checkpoints.interval.seconds = 5
refresh.groups.interval.seconds = 5
groups = %s.*
`, regexp.QuoteMeta(groupPrefix(cfg)))
}

// mm2Props renders one MM2 dedicated-mode file for the flow A->target. kmm and MM2 get the same
// text apart from the target alias and bootstrap.
func mm2Props(cfg *config, s propsSpec) string {
	t := s.Target
	src := s.SourceBootstrap
	if src == "" {
		src = cfg.A
	}
	var b strings.Builder
	fmt.Fprintf(&b, `# generated by scripts/bench (kmm benchmark): flow A->%[1]s
clusters = A, %[1]s
A.bootstrap.servers = %[2]s
%[1]s.bootstrap.servers = %[3]s
A->%[1]s.enabled = true
A->%[1]s.topics = %[4]s
tasks.max = %[5]d
%[7]ssync.group.offsets.enabled = false
# only the benchmark topic: the bed's shared heartbeats topics are not copied along
heartbeats.replication.enabled = false

# single-broker test bed
replication.factor = 1
checkpoints.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
offset-syncs.topic.replication.factor = 1
%[1]s.offset.storage.replication.factor = 1
%[1]s.status.storage.replication.factor = 1
%[1]s.config.storage.replication.factor = 1

# per-run Connect state so every run starts from scratch (and never meets another test's MM2)
%[1]s.group.id = %[6]s-group
%[1]s.offset.storage.topic = %[6]s-offsets
%[1]s.status.storage.topic = %[6]s-status
%[1]s.config.storage.topic = %[6]s-configs

`, t, src, s.TargetBootstrap, cmp.Or(s.TopicsRegex, regexp.QuoteMeta(s.Topic)), s.Tasks, s.RunName, checkpointLines(cfg, s))
	if s.Defaults {
		b.WriteString("# WAN rows: each tool with its default client settings\n")
	} else {
		fmt.Fprintf(&b, `# high-volume tuning as in the public MM2 guides (Red Hat Streams for Apache Kafka / Strimzi,
# "Handling high volumes of messages"), compression off
%[1]s.offset.flush.timeout.ms = 10000
%[1]s.producer.compression.type = none
A.consumer.fetch.max.bytes = 52428800
A.consumer.max.partition.fetch.bytes = 1048576
A.consumer.max.poll.records = 500
`, t)
	}
	if s.Batching && !s.Defaults {
		fmt.Fprintf(&b, "%[1]s.producer.batch.size = 327680\n%[1]s.producer.linger.ms = 100\n", t)
	} else {
		b.WriteString("# latency runs: producer batching left at the clients' defaults (linger.ms 5 in Kafka 4 and librdkafka)\n")
	}
	if len(s.Extra) > 0 {
		b.WriteString("# this row's own settings\n" + strings.Join(s.Extra, "\n") + "\n")
	}
	if extra := os.Getenv("BENCH_EXTRA_PROPS"); extra != "" { // experiments: "key=value,key=value" appended (both tools)
		b.WriteString("# BENCH_EXTRA_PROPS\n")
		for _, kv := range strings.Split(extra, ",") {
			b.WriteString(strings.TrimSpace(kv) + "\n")
		}
	}
	return b.String()
}
