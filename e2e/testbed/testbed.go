// Package testbed attaches Go tests to the real Apache Kafka clusters started by
// scripts/testbed.sh (A 127.0.0.1:19092, B :29092, C :14092). It gives each test unique topic and
// group names, produce/consume helpers built on kmm's own librdkafka adapter, Eventually with
// deadlines instead of sleeps, and on failure prints the clusters' addresses and broker log
// tails. Tests skip when the bed is down unless KMM_REQUIRE_TESTBED=1 (set by `make test`), in
// which case they fail.
package testbed

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kmmproject/kmm/pkg/rdkafka"
	"github.com/kmmproject/kmm/scripts/wanlink"
)

// Cluster is one test-bed cluster.
type Cluster struct {
	Name      string // A, B or C
	Bootstrap string // PLAINTEXT listener (super user)
	SASL      string // SASL_PLAINTEXT listener (PLAIN, SCRAM-SHA-512)
	SSL       string // SSL listener (client certificate required)
	SASLSSL   string // SASL_SSL listener (SCRAM-SHA-512, PLAIN; TLS without client certificate)
}

// Bed is the set of clusters.
type Bed struct {
	A, B, C Cluster
	Dir     string // test bed directory (.testbed)
}

var (
	attachOnce sync.Once
	attachErr  error
	theBed     *Bed
)

// PortOffset is KMM_TESTBED_PORT_OFFSET (scripts/testbed.sh adds it to every port of the bed so
// two checkouts can run their beds side by side); 0 when unset or invalid.
func PortOffset() int { return wanlink.PortOffset() }

// Root returns the repository root (the directory holding go.mod).
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

func cluster(name string, base int) Cluster {
	return Cluster{Name: name,
		Bootstrap: fmt.Sprintf("127.0.0.1:%d", base),
		SASL:      fmt.Sprintf("127.0.0.1:%d", base+2),
		SSL:       fmt.Sprintf("127.0.0.1:%d", base+3),
		SASLSSL:   fmt.Sprintf("127.0.0.1:%d", base+4)}
}

// Attach returns the running bed, or skips (fails under KMM_REQUIRE_TESTBED=1) when any
// cluster does not answer.
func Attach(t testing.TB) *Bed {
	t.Helper()
	// -short first: make unit never waits for a bed it will not use (the ping of an absent
	// cluster takes its full timeout).
	if testing.Short() && os.Getenv("KMM_REQUIRE_TESTBED") != "1" {
		t.Skip("-short (make unit): real-cluster tests run in make test")
	}
	attachOnce.Do(func() {
		dir := os.Getenv("KMM_TESTBED_DIR")
		if dir == "" {
			dir = filepath.Join(Root(), ".testbed")
		}
		off := PortOffset()
		b := &Bed{A: cluster("A", wanlink.BasePort("A")+off), B: cluster("B", wanlink.BasePort("B")+off), C: cluster("C", wanlink.BasePort("C")+off), Dir: dir}
		for _, c := range []Cluster{b.A, b.B, b.C} {
			if err := ping(c.Bootstrap); err != nil {
				attachErr = fmt.Errorf("test bed cluster %s (%s) not reachable: %v (start it with `make testbed-up`)", c.Name, c.Bootstrap, err)
				return
			}
		}
		theBed = b
	})
	if attachErr != nil {
		if os.Getenv("KMM_REQUIRE_TESTBED") == "1" {
			t.Fatal(attachErr)
		}
		t.Skip(attachErr)
	}
	t.Cleanup(func() {
		if t.Failed() {
			theBed.dumpLogs(t)
		}
	})
	return theBed
}

func ping(bootstrap string) error {
	a, err := rdkafka.NewAdmin("ping", rdkafka.Config{"bootstrap.servers": bootstrap})
	if err != nil {
		return err
	}
	defer a.Close()
	_, err = a.Ping(context.Background(), 5*time.Second)
	return err
}

// Clusters lists A, B and C.
func (b *Bed) Clusters() []Cluster { return []Cluster{b.A, b.B, b.C} }

func (b *Bed) dumpLogs(t testing.TB) {
	for _, c := range b.Clusters() {
		t.Logf("cluster %s: %s (SASL %s, SSL %s)\n--- tail of broker log ---\n%s", c.Name, c.Bootstrap, c.SASL, c.SSL, b.LogTail(c.Name, 30))
	}
}

// LogTail returns the last n lines of a cluster's broker log.
func (b *Bed) LogTail(name string, n int) string {
	data, err := os.ReadFile(filepath.Join(b.Dir, name, "logs", "broker.log"))
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

var unsafeChars = regexp.MustCompile(`[^a-zA-Z0-9_-]+`)

// Unique returns a name unique to this test and run: prefix-testname-random.
func Unique(t testing.TB, prefix string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := unsafeChars.ReplaceAllString(t.Name(), "_")
	if len(name) > 40 {
		name = name[len(name)-40:]
	}
	return fmt.Sprintf("%s-%s-%s", prefix, strings.ToLower(name), hex.EncodeToString(b[:]))
}

// Eventually calls f until it returns nil or timeout passes, then fails with f's last error.
func Eventually(t testing.TB, timeout time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	wait := 20 * time.Millisecond
	var err error
	for {
		if err = f(); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s: %v", timeout, err)
		}
		time.Sleep(wait)
		if wait < 500*time.Millisecond {
			wait *= 2
		}
	}
}

// Config returns librdkafka settings for the cluster's PLAINTEXT listener.
func (c Cluster) Config() rdkafka.Config { return rdkafka.Config{"bootstrap.servers": c.Bootstrap} }

// Admin returns an admin client closed at test end.
func (c Cluster) Admin(t testing.TB) *rdkafka.Admin {
	t.Helper()
	a, err := rdkafka.NewAdmin("cluster "+c.Name, c.Config())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

// Open returns the cluster as kmm's commands see it (pkg/cluster), with plain bootstrap
// settings, closed at the end of the test.
func (c Cluster) Open(t testing.TB) *rdkafka.Cluster {
	t.Helper()
	cl, err := rdkafka.NewCluster(c.Name, c.Bootstrap, c.Config(), c.Config(), c.Config())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// CreateTopic creates a topic and waits until its metadata is visible.
func (c Cluster) CreateTopic(t testing.TB, name string, partitions int, configs map[string]string) {
	t.Helper()
	a := c.Admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := a.CreateTopics(ctx, []rdkafka.NewTopic{{Name: name, Partitions: partitions, RF: 1, Configs: configs}})
	if err != nil {
		t.Fatal(err)
	}
	if err := res[name]; err != nil {
		t.Fatalf("create topic %s on %s: %v", name, c.Name, err)
	}
	Eventually(t, 15*time.Second, func() error {
		ts, err := a.ListTopics(ctx)
		if err != nil {
			return err
		}
		if ts[name].Partitions != partitions {
			return fmt.Errorf("topic %s has %d partitions, want %d", name, ts[name].Partitions, partitions)
		}
		return nil
	})
	t.Cleanup(func() { _ = a.DeleteTopics(context.Background(), name) })
}

// Produce sends records and waits for all acknowledgements; it returns their offsets.
func (c Cluster) Produce(t testing.TB, recs []rdkafka.Record) []int64 {
	t.Helper()
	p, err := rdkafka.NewProducer("cluster "+c.Name, rdkafka.Config{"bootstrap.servers": c.Bootstrap, "linger.ms": "5", "enable.idempotence": "true"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	offs, err := p.ProduceSync(ctx, recs)
	if err != nil {
		t.Fatal(err)
	}
	return offs
}

// ConsumeN reads partitions 0..partitions-1 of topic from the beginning until it has n records
// or timeout passes (then fails). Extra records arriving in the same poll are returned too.
func (c Cluster) ConsumeN(t testing.TB, topic string, partitions int, n int, timeout time.Duration) []rdkafka.Record {
	t.Helper()
	cons, err := rdkafka.NewConsumer("cluster "+c.Name, rdkafka.Config{"bootstrap.servers": c.Bootstrap, "fetch.queue.backoff.ms": "10"})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	start := map[rdkafka.TP]int64{}
	for p := 0; p < partitions; p++ {
		start[rdkafka.TP{Topic: topic, Partition: int32(p)}] = int64(rdkafka.Earliest)
	}
	if err := cons.Assign(start); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var out []rdkafka.Record
	for len(out) < n {
		recs, err := cons.Poll(ctx, 10000, 200*time.Millisecond)
		if err != nil {
			t.Fatalf("consume %s from %s after %d/%d records: %v", topic, c.Name, len(out), n, err)
		}
		out = append(out, recs...)
	}
	return out
}

// Script runs scripts/testbed.sh with args and returns its combined output.
func Script(t testing.TB, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(Root(), "scripts", "testbed.sh"), args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("testbed.sh %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// Digest is a per-partition digest of a topic: record count and a SHA-256 over every record's
// key, value (null distinct from empty), headers and timestamp, in offset order.
type Digest struct {
	Count int
	Sum   [32]byte
}

// Digests reads partitions 0..partitions-1 of topic until it holds want[p] records in each
// (or timeout passes, then fails) and returns the digest per partition.
func (c Cluster) Digests(t testing.TB, topic string, partitions int, want []int, timeout time.Duration) []Digest {
	t.Helper()
	total := 0
	for _, n := range want {
		total += n
	}
	recs := c.ConsumeN(t, topic, partitions, total, timeout)
	return DigestRecords(recs, partitions)
}

// DigestRecords digests records per partition in the order given.
func DigestRecords(recs []rdkafka.Record, partitions int) []Digest {
	hs := make([]hash.Hash, partitions)
	out := make([]Digest, partitions)
	for i := range hs {
		hs[i] = sha256.New()
	}
	var buf [8]byte
	wb := func(h hash.Hash, b []byte) {
		if b == nil {
			binary.BigEndian.PutUint64(buf[:], ^uint64(0))
			h.Write(buf[:])
			return
		}
		binary.BigEndian.PutUint64(buf[:], uint64(len(b)))
		h.Write(buf[:])
		h.Write(b)
	}
	for _, r := range recs {
		if int(r.Partition) >= partitions {
			continue
		}
		h := hs[r.Partition]
		out[r.Partition].Count++
		wb(h, r.Key)
		wb(h, r.Value)
		binary.BigEndian.PutUint64(buf[:], uint64(len(r.Headers)))
		h.Write(buf[:])
		for _, hd := range r.Headers {
			wb(h, []byte(hd.Key))
			wb(h, hd.Value)
		}
		binary.BigEndian.PutUint64(buf[:], uint64(r.Timestamp.UnixMilli()))
		h.Write(buf[:])
	}
	for i := range hs {
		copy(out[i].Sum[:], hs[i].Sum(nil))
	}
	return out
}

// Classpath returns the Java classpath of the bed's Kafka jars.
func (b *Bed) Classpath(t testing.TB) string {
	t.Helper()
	return strings.TrimSpace(Script(t, "classpath"))
}

// JavaConsole reads up to n records of topic from the beginning with Apache Kafka's own console
// consumer, formatting them with formatter (e.g. MM2's
// org.apache.kafka.connect.mirror.formatters.HeartbeatFormatter). It returns the output lines.
// The consumer gives up after 30 s without a record (5 s timed out on a loaded 2-core machine
// while the JVM was still joining: TimeoutException with the records there).
func (b *Bed) JavaConsole(t testing.TB, c Cluster, topic, formatter string, n int) []string {
	t.Helper()
	return b.javaConsole(t, c, topic, formatter, n, "--from-beginning")
}

// JavaConsoleFrom is JavaConsole from offset on partition 0 of topic (a topic shared by every
// test of the bed, such as an offset-syncs topic, is read from where a test's records start).
func (b *Bed) JavaConsoleFrom(t testing.TB, c Cluster, topic string, offset int64, formatter string, n int) []string {
	t.Helper()
	return b.javaConsole(t, c, topic, formatter, n, "--partition", "0", "--offset", fmt.Sprint(offset))
}

func (b *Bed) javaConsole(t testing.TB, c Cluster, topic, formatter string, n int, from ...string) []string {
	t.Helper()
	args := []string{"-cp", b.Classpath(t), "-Dlog4j2.level=WARN",
		"org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", c.Bootstrap, "--topic", topic}
	args = append(args, from...)
	args = append(args, "--max-messages", fmt.Sprint(n), "--timeout-ms", "30000", "--formatter", formatter)
	cmd := exec.Command("java", args...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil && out.Len() == 0 {
		t.Fatalf("console consumer on %s/%s: %v\n%s", c.Name, topic, err, errOut.String())
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// KillBroker kills the only broker of cluster name with SIGKILL, as a crash would (no
// controlled shutdown), waits until the process is gone, and returns when the signal was sent.
// The caller must bring it back with Restart (defer it: the tests after this one need the bed).
func (b *Bed) KillBroker(t testing.TB, name string) time.Time {
	t.Helper()
	pid := b.brokerPID(t, name)
	at := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %d (cluster %s): %v", pid, name, err)
	}
	Eventually(t, 30*time.Second, func() error {
		if syscall.Kill(pid, 0) == nil {
			return fmt.Errorf("broker of %s (pid %d) still alive", name, pid)
		}
		return nil
	})
	return at
}

// PauseBroker stops the only broker of cluster name with SIGSTOP: its connections stay open
// and nothing answers, as with a hung broker or a link that drops packets. It returns the
// function that resumes it (SIGCONT); defer it.
func (b *Bed) PauseBroker(t testing.TB, name string) (resume func()) {
	t.Helper()
	pid := b.brokerPID(t, name)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("kill -STOP %d (cluster %s): %v", pid, name, err)
	}
	var once sync.Once
	return func() { once.Do(func() { _ = syscall.Kill(pid, syscall.SIGCONT) }) }
}

func (b *Bed) brokerPID(t testing.TB, name string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(b.Dir, name, "broker.pid"))
	if err != nil {
		t.Fatalf("cluster %s: no pid file: %v", name, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("cluster %s: pid file: %v", name, err)
	}
	return pid
}

// Restart starts cluster name again after KillBroker (same data directory, same ports) and
// waits until it answers.
func (b *Bed) Restart(t testing.TB, name string) {
	t.Helper()
	Script(t, "up", name)
}

// Load produces numbered records to topic at about perSecond records per second, round
// robin over its partitions, until Stop. It keeps going through outages of the cluster
// (records it could not deliver may still arrive later, or never): compare a copy with what
// the cluster holds, not with what Load sent. Each value is 8 bytes of sequence number.
type Load struct {
	stop context.CancelFunc
	done chan struct{}
	sent atomic.Int64
	errs atomic.Int64
}

// StartLoad starts a Load on the cluster; Stop it before reading the topic for a final count.
func (c Cluster) StartLoad(t testing.TB, topic string, parts, perSecond int) *Load {
	t.Helper()
	p, err := rdkafka.NewProducer("load "+c.Name, rdkafka.Config{"bootstrap.servers": c.Bootstrap, "linger.ms": "5",
		"enable.idempotence": "true", "message.timeout.ms": "20000", "log_level": "0"})
	if err != nil {
		t.Fatal(err)
	}
	all, stop := context.WithCancel(context.Background())
	l := &Load{stop: stop, done: make(chan struct{})}
	const tick = 50 * time.Millisecond
	batch := max(perSecond/int(time.Second/tick), 1)
	go func() {
		defer close(l.done)
		defer p.CloseWithin(0)
		seq := 0
		tk := time.NewTicker(tick)
		defer tk.Stop()
		for {
			select {
			case <-all.Done():
				return
			case <-tk.C:
			}
			recs := make([]rdkafka.Record, batch)
			for i := range recs {
				v := make([]byte, 8)
				binary.BigEndian.PutUint64(v, uint64(seq))
				recs[i] = rdkafka.Record{Topic: topic, Partition: int32(seq % parts), Value: v}
				seq++
			}
			ctx, cancel := context.WithTimeout(all, 5*time.Second)
			if _, err := p.ProduceSync(ctx, recs); err != nil {
				l.errs.Add(1)
			} else {
				l.sent.Add(int64(len(recs)))
			}
			cancel()
		}
	}()
	t.Cleanup(func() { l.Stop() })
	return l
}

// Stop ends the load and returns how many records were acknowledged.
func (l *Load) Stop() int64 {
	l.stop()
	<-l.done
	return l.sent.Load()
}

// Sent is the number of records acknowledged so far.
func (l *Load) Sent() int64 { return l.sent.Load() }
