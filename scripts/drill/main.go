// Command drill is `make drill`: a planned failover and failback on the local test bed
// (scripts/testbed.sh) with an application that keeps running across both, and the count of
// what it lost and read twice. It is a walkthrough of docs/runbook.md's planned drill, not part
// of kmm.
//
// The flow is testdata/runbook/mirror-maker.properties' A->B (IdentityReplicationPolicy: the
// topic is `orders` on both clusters, so the application moves by changing its bootstrap
// servers). The application stand-in is a producer that keeps a ledger of every record the
// cluster acknowledged (key <run>-<seq>) and the consumer group `orders-app`, which commits
// after every poll and logs every record it reads. The drill:
//
//  1. runs `bin/kmm replicate` (A->B) and the application on A;
//  2. stops the application, `bin/kmm failover --flow 'A->B' --yes` (planned), stops A->B;
//  3. runs the reverse copy (`bin/kmm replicate --flow 'B->A'`) and the application on B;
//  4. stops the application, `bin/kmm failback --flow 'A->B' --yes`, stops B->A, starts A->B;
//  5. runs the application on A again until its group has read everything;
//  6. prints produced, consumed, lost (acknowledged, never read) and read twice, and exits 1
//     when a record was lost.
//
// KMM_TESTBED_PORT_OFFSET (scripts/testbed.sh) is honoured: the properties file is then a copy
// with the bed's ports. Files (ledger, reads, kmm's logs and reports): $KMM_TESTBED_DIR/drill
// (default .testbed/drill).
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kmmproject/kmm/pkg/rdkafka"
)

const (
	topic      = "orders"
	group      = "orders-app"
	partitions = 3
	rate       = 200 // records per second while the application runs
	propsFile  = "testdata/runbook/mirror-maker.properties"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "drill:", err)
		os.Exit(1)
	}
}

type drill struct {
	dir, props, run string
	boot            map[string]string // cluster alias -> bootstrap
	ledger          *os.File          // one line per acknowledged record
	reads           *os.File          // one line per record the group read
	acked           map[int64]string  // seq -> cluster it was acknowledged by
	read            map[int64]int     // seq -> times read
	phases          []phase
	mu              sync.Mutex
}

type phase struct {
	name               string
	produced, consumed int
}

func run() error {
	off := 0
	if s := os.Getenv("KMM_TESTBED_PORT_OFFSET"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return fmt.Errorf("KMM_TESTBED_PORT_OFFSET must be a non-negative integer, not %q", s)
		}
		off = n
	}
	bedDir := os.Getenv("KMM_TESTBED_DIR")
	if bedDir == "" {
		bedDir = ".testbed"
	}
	d := &drill{dir: filepath.Join(bedDir, "drill"), props: propsFile, run: time.Now().UTC().Format("20060102T150405"),
		boot:  map[string]string{"A": fmt.Sprintf("127.0.0.1:%d", 19092+off), "B": fmt.Sprintf("127.0.0.1:%d", 29092+off)},
		acked: map[int64]string{}, read: map[int64]int{}}
	if err := os.MkdirAll(d.dir, 0o755); err != nil {
		return err
	}
	if off != 0 {
		// The same file with the bed's ports.
		data, err := os.ReadFile(propsFile)
		if err != nil {
			return err
		}
		s := strings.NewReplacer("127.0.0.1:19092", d.boot["A"], "127.0.0.1:29092", d.boot["B"]).Replace(string(data))
		d.props = filepath.Join(d.dir, "mirror-maker.properties")
		if err := os.WriteFile(d.props, []byte(s), 0o644); err != nil {
			return err
		}
		fmt.Printf("drill: KMM_TESTBED_PORT_OFFSET=%d: %s is a copy of %s with the bed's ports\n", off, d.props, propsFile)
	}
	var err error
	if d.ledger, err = os.Create(filepath.Join(d.dir, "ledger-"+d.run+".txt")); err != nil {
		return err
	}
	defer d.ledger.Close()
	if d.reads, err = os.Create(filepath.Join(d.dir, "reads-"+d.run+".txt")); err != nil {
		return err
	}
	defer d.reads.Close()
	ctx := context.Background()
	if err := d.createTopic(ctx); err != nil {
		return err
	}

	say("1. replication A->B runs; the application produces to and consumes from A")
	ab, err := d.kmmBackground("replicate-A-B.log", "replicate", d.props)
	if err != nil {
		return err
	}
	defer ab.stop()
	if err := d.app(ctx, "on A", "A", 8*time.Second, false); err != nil {
		return err
	}

	say("2. planned failover: the application is stopped; kmm drains A->B and moves group " + group + " to B")
	if err := d.kmm("failover", d.props, "--flow", "A->B", "--group", group, "--quiet-for", "2s", "--timeout", "2m",
		"--report", filepath.Join(d.dir, "failover-report-"+d.run+".md"), "--yes"); err != nil {
		return d.halfway(err)
	}
	if err := ab.stop(); err != nil {
		return err
	}

	say("3. the application on B; the reverse copy B->A runs")
	ba, err := d.kmmBackground("replicate-B-A.log", "replicate", d.props, "--flow", "B->A")
	if err != nil {
		return err
	}
	defer ba.stop()
	if err := d.app(ctx, "on B", "B", 8*time.Second, false); err != nil {
		return err
	}

	say("4. failback: the application is stopped; kmm drains B->A and moves group " + group + " back to A; B->A stops")
	if err := d.kmm("failback", d.props, "--flow", "A->B", "--group", group, "--quiet-for", "2s", "--timeout", "2m",
		"--report", filepath.Join(d.dir, "failback-report-"+d.run+".md"), "--yes"); err != nil {
		return d.halfway(err)
	}
	if err := ba.stop(); err != nil {
		return err
	}

	say("5. replication A->B runs again; the application on A, until its group has read every acknowledged record")
	ab2, err := d.kmmBackground("replicate-A-B.log", "replicate", d.props)
	if err != nil {
		return err
	}
	defer ab2.stop()
	if err := d.app(ctx, "on A again", "A", 5*time.Second, true); err != nil {
		return err
	}
	if err := ab2.stop(); err != nil {
		return err
	}
	return d.summary()
}

func say(s string) { fmt.Printf("\ndrill: %s\n", s) }

// halfway adds what to do when failover or failback stopped the drill half-way.
func (d *drill) halfway(err error) error {
	return fmt.Errorf("%w\nThe flow may be left failed over: see docs/runbook.md (\"When a step fails\"); `bin/kmm status %s` shows its state, "+
		"and `scripts/testbed.sh reset` starts the bed from scratch", err, d.props)
}

func (d *drill) createTopic(ctx context.Context) error {
	a, err := rdkafka.NewAdmin("cluster A", rdkafka.Config{"bootstrap.servers": d.boot["A"]})
	if err != nil {
		return err
	}
	defer a.Close()
	ts, err := a.ListTopics(ctx)
	if err != nil {
		return fmt.Errorf("cluster A (%s): %w (is the bed up? make testbed-up)", d.boot["A"], err)
	}
	if _, ok := ts[topic]; ok {
		return nil
	}
	res, err := a.CreateTopics(ctx, []rdkafka.NewTopic{{Name: topic, Partitions: partitions, RF: 1}})
	if err != nil {
		return err
	}
	if err := res[topic]; err != nil {
		return err
	}
	fmt.Printf("drill: created %s on A (%d partitions)\n", topic, partitions)
	return nil
}

// app runs the application stand-in against cluster c for d: the producer first stops, then
// the consumer (which, with drain, first reads everything the ledger holds).
func (d *drill) app(ctx context.Context, name, c string, dur time.Duration, drain bool) error {
	p, err := rdkafka.NewProducer("app "+c, rdkafka.Config{"bootstrap.servers": d.boot[c], "linger.ms": "5",
		"enable.idempotence": "true", "message.timeout.ms": "15000"})
	if err != nil {
		return err
	}
	cons, err := rdkafka.NewConsumer("app "+c, rdkafka.Config{"bootstrap.servers": d.boot[c], "group.id": group,
		"auto.offset.reset": "earliest", "session.timeout.ms": "10000"})
	if err != nil {
		p.Close()
		return err
	}
	if err := cons.Subscribe(topic); err != nil {
		p.Close()
		cons.Close()
		return err
	}
	ph := phase{name: name}
	stopProduce := make(chan struct{})
	produced := make(chan error, 1)
	go func() { produced <- d.produce(ctx, p, c, stopProduce, &ph) }()
	stopConsume := make(chan struct{})
	consumed := make(chan error, 1)
	go func() { consumed <- d.consume(ctx, cons, c, stopConsume, &ph) }()

	time.Sleep(dur)
	close(stopProduce)
	perr := <-produced
	p.Close()
	if drain {
		deadline := time.Now().Add(2 * time.Minute)
		for d.unread() > 0 && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
		}
	}
	close(stopConsume)
	cerr := <-consumed
	cons.Close() // leaves the group: failover and failback need it without members
	d.phases = append(d.phases, ph)
	fmt.Printf("drill: application %s: %d records produced (acknowledged), %d read by group %s\n", name, ph.produced, ph.consumed, group)
	return errors.Join(perr, cerr)
}

var seq int64

func (d *drill) produce(ctx context.Context, p *rdkafka.Producer, c string, stop chan struct{}, ph *phase) error {
	const tick = 50 * time.Millisecond
	tk := time.NewTicker(tick)
	defer tk.Stop()
	batch := rate / int(time.Second/tick)
	failed := 0
	for {
		select {
		case <-stop:
			if failed > 0 {
				fmt.Printf("drill: %d records on %s were not acknowledged (not in the ledger)\n", failed, c)
			}
			return nil
		case <-tk.C:
		}
		recs := make([]rdkafka.Record, batch)
		seqs := make([]int64, batch)
		for i := range recs {
			seq++
			seqs[i] = seq
			recs[i] = rdkafka.Record{Topic: topic, Partition: -1, Key: []byte(fmt.Sprintf("%s-%d", d.run, seq)),
				Value: []byte(fmt.Sprintf(`{"run":%q,"seq":%d,"produced_on":%q}`, d.run, seq, c))}
		}
		pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		offs, err := p.ProduceSync(pctx, recs)
		cancel()
		d.mu.Lock()
		timedOut := errors.Is(err, context.DeadlineExceeded)
		for i, o := range offs {
			// -1: failed; 0 after a timeout: not known (it may still arrive: then it is read
			// but not in the ledger, which is not a loss).
			if o < 0 || timedOut && o == 0 {
				failed++
				continue
			}
			d.acked[seqs[i]] = c
			ph.produced++
			fmt.Fprintf(d.ledger, "%d %s %s\n", seqs[i], c, recs[i].Key)
		}
		d.mu.Unlock()
	}
}

func (d *drill) consume(ctx context.Context, cons *rdkafka.Consumer, c string, stop chan struct{}, ph *phase) error {
	key := regexp.MustCompile("^" + regexp.QuoteMeta(d.run) + `-(\d+)$`)
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		// A consumer slower than the producer (about 150 records/s against 200): the group is
		// behind when the application stops, so the failover and the failback translate
		// positions in the middle of the topic, not only its end.
		recs, err := cons.Poll(ctx, 15, 200*time.Millisecond)
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			continue
		}
		time.Sleep(100 * time.Millisecond)
		next := map[rdkafka.TP]int64{}
		d.mu.Lock()
		for _, r := range recs {
			next[rdkafka.TP{Topic: r.Topic, Partition: r.Partition}] = r.Offset + 1
			m := key.FindSubmatch(r.Key)
			if m == nil {
				continue // an earlier drill's record
			}
			s, _ := strconv.ParseInt(string(m[1]), 10, 64)
			d.read[s]++
			ph.consumed++
			fmt.Fprintf(d.reads, "%d %s %s[%d]@%d\n", s, c, r.Topic, r.Partition, r.Offset)
		}
		d.mu.Unlock()
		if err := cons.Commit(next); err != nil {
			return err
		}
	}
}

// unread is the number of acknowledged records the group has not read yet.
func (d *drill) unread() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for s := range d.acked {
		if d.read[s] == 0 {
			n++
		}
	}
	return n
}

func (d *drill) summary() error {
	var lost []int64
	twice := 0
	consumed := 0
	for s := range d.acked {
		if d.read[s] == 0 {
			lost = append(lost, s)
		}
	}
	for _, n := range d.read {
		consumed += n
		if n > 1 {
			twice++
		}
	}
	sort.Slice(lost, func(i, j int) bool { return lost[i] < lost[j] })
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(w, "\ndrill: result (run %s, topic %s, group %s)\n", d.run, topic, group)
	fmt.Fprintf(w, "  %-12s %10s %10s\n", "application", "produced", "read")
	for _, p := range d.phases {
		fmt.Fprintf(w, "  %-12s %10d %10d\n", p.name, p.produced, p.consumed)
	}
	fmt.Fprintf(w, "  produced (acknowledged)  %d\n", len(d.acked))
	fmt.Fprintf(w, "  consumed                 %d\n", consumed)
	fmt.Fprintf(w, "  lost                     %d   (acknowledged, never read)\n", len(lost))
	fmt.Fprintf(w, "  read twice               %d\n", twice)
	fmt.Fprintf(w, "  ledger %s, reads %s, kmm's logs and the failover and failback reports in %s\n", d.ledger.Name(), d.reads.Name(), d.dir)
	_ = w.Flush()
	if len(lost) > 0 {
		show := lost
		if len(show) > 10 {
			show = show[:10]
		}
		return fmt.Errorf("%d acknowledged record(s) were never read (first: %v)", len(lost), show)
	}
	return nil
}

// kmm runs bin/kmm in the foreground, its output passed through.
func (d *drill) kmm(args ...string) error {
	fmt.Printf("drill: $ bin/kmm %s\n", quote(args))
	cmd := exec.Command("bin/kmm", args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("bin/kmm %s: %w", args[0], err)
	}
	return nil
}

type bg struct {
	cmd  *exec.Cmd
	done chan error
	log  string
	once sync.Once
	err  error
}

// kmmBackground starts bin/kmm (kmm replicate) with its output in log under the drill's dir.
func (d *drill) kmmBackground(log string, args ...string) (*bg, error) {
	path := filepath.Join(d.dir, log)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Printf("drill: $ bin/kmm %s >%s 2>&1 &\n", quote(args), path)
	cmd := exec.Command("bin/kmm", args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	b := &bg{cmd: cmd, done: make(chan error, 1), log: path}
	go func() { b.done <- cmd.Wait(); f.Close() }()
	return b, nil
}

// stop sends SIGTERM (kmm replicate drains and stores its progress) and waits for the exit.
func (b *bg) stop() error {
	b.once.Do(func() {
		_ = b.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-b.done:
			if err != nil {
				b.err = fmt.Errorf("bin/kmm %s: %w (log: %s)", b.cmd.Args[1], err, b.log)
			}
		case <-time.After(45 * time.Second):
			_ = b.cmd.Process.Kill()
			b.err = fmt.Errorf("bin/kmm %s did not stop within 45 s (log: %s)", b.cmd.Args[1], b.log)
		}
		fmt.Printf("drill: stopped bin/kmm %s (pid %d)\n", quote(b.cmd.Args[1:]), b.cmd.Process.Pid)
	})
	return b.err
}

func quote(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, "<>|&;$ *'\"") {
			a = "'" + a + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}
