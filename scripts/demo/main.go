// Command demo is `make demo`: on the local test bed it creates sample topics with data on
// cluster A, runs `bin/kmm replicate testdata/demo/mirror-maker.properties` (A->B), waits until
// B holds every record, prints a side-by-side count, and stops kmm with SIGTERM (a graceful
// drain). It is a walkthrough, not part of kmm. KMM_TESTBED_PORT_OFFSET (scripts/testbed.sh) is
// honoured: the properties file is then a copy with the bed's ports, in $KMM_TESTBED_DIR/demo
// (default .testbed/demo).
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kmmproject/kmm/pkg/rdkafka"
)

var topics = []struct {
	name       string
	partitions int
	records    int
}{{"demo-orders", 6, 60_000}, {"demo-payments", 3, 30_000}}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

const propsFile = "testdata/demo/mirror-maker.properties"

func run() error {
	ctx := context.Background()
	bootA, bootB, props, err := bed()
	if err != nil {
		return err
	}
	a, err := rdkafka.NewAdmin("cluster A", rdkafka.Config{"bootstrap.servers": bootA})
	if err != nil {
		return err
	}
	defer a.Close()
	b, err := rdkafka.NewAdmin("cluster B", rdkafka.Config{"bootstrap.servers": bootB})
	if err != nil {
		return err
	}
	defer b.Close()
	existing, err := a.ListTopics(ctx)
	if err != nil {
		return err
	}
	p, err := rdkafka.NewProducer("cluster A", rdkafka.Config{"bootstrap.servers": bootA, "linger.ms": "10"})
	if err != nil {
		return err
	}
	for _, t := range topics {
		if _, ok := existing[t.name]; !ok {
			if _, err := a.CreateTopics(ctx, []rdkafka.NewTopic{{Name: t.name, Partitions: t.partitions, RF: 1, Configs: map[string]string{"retention.ms": "604800000"}}}); err != nil {
				return err
			}
			time.Sleep(500 * time.Millisecond)
		}
		recs := make([]rdkafka.Record, t.records)
		for i := range recs {
			recs[i] = rdkafka.Record{Topic: t.name, Partition: -1, Key: []byte(fmt.Sprintf("customer-%d", i%997)),
				Value:   []byte(fmt.Sprintf(`{"id":%d,"amount":%d}`, i, i%500)),
				Headers: []rdkafka.Header{{Key: "source", Value: []byte("demo")}}}
		}
		if _, err := p.ProduceSync(ctx, recs); err != nil {
			return err
		}
		fmt.Printf("demo: wrote %d records to %s on A (%d partitions)\n", t.records, t.name, t.partitions)
	}
	p.Close()

	cmd := exec.Command("bin/kmm", "replicate", props, "--progress-interval", "2s")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	fmt.Println("demo: $ bin/kmm replicate " + props)
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	deadline := time.Now().Add(3 * time.Minute)
	var rows []string
	for {
		rows = rows[:0]
		complete := true
		for _, t := range topics {
			src, err := total(ctx, a, t.name, t.partitions)
			if err != nil {
				return err
			}
			dst, _ := total(ctx, b, "A."+t.name, t.partitions)
			if dst < src {
				complete = false
			}
			rows = append(rows, fmt.Sprintf("  %-16s %10d   %-18s %10d", t.name, src, "A."+t.name, dst))
		}
		if complete {
			break
		}
		select {
		case err := <-done:
			return fmt.Errorf("kmm exited early: %v", err)
		case <-time.After(time.Second):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			return fmt.Errorf("B did not catch up within 3 minutes")
		}
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	err = <-done
	fmt.Println()
	fmt.Println("demo: result (records per topic)")
	fmt.Printf("  %-16s %10s   %-18s %10s\n", "on A", "records", "on B", "records")
	fmt.Println(strings.Join(rows, "\n"))
	fmt.Println("demo: kmm stopped gracefully; run it again and it resumes from mm2-offsets.A.internal on B")
	return err
}

// bed returns A's and B's bootstrap servers and the properties file to run: the demo's, or with
// KMM_TESTBED_PORT_OFFSET a copy of it with the bed's ports.
func bed() (bootA, bootB, props string, err error) {
	off := 0
	if s := os.Getenv("KMM_TESTBED_PORT_OFFSET"); s != "" {
		if off, err = strconv.Atoi(s); err != nil || off < 0 {
			return "", "", "", fmt.Errorf("KMM_TESTBED_PORT_OFFSET must be a non-negative integer, not %q", s)
		}
	}
	bootA, bootB, props = fmt.Sprintf("127.0.0.1:%d", 19092+off), fmt.Sprintf("127.0.0.1:%d", 29092+off), propsFile
	if off == 0 {
		return bootA, bootB, props, nil
	}
	data, err := os.ReadFile(propsFile)
	if err != nil {
		return "", "", "", err
	}
	dir := os.Getenv("KMM_TESTBED_DIR")
	if dir == "" {
		dir = ".testbed"
	}
	dir = filepath.Join(dir, "demo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", "", err
	}
	props = filepath.Join(dir, "mirror-maker.properties")
	s := strings.NewReplacer("127.0.0.1:19092", bootA, "127.0.0.1:29092", bootB).Replace(string(data))
	if err := os.WriteFile(props, []byte(s), 0o644); err != nil {
		return "", "", "", err
	}
	fmt.Printf("demo: KMM_TESTBED_PORT_OFFSET=%d: %s is a copy of %s with the bed's ports\n", off, props, propsFile)
	return bootA, bootB, props, nil
}

func total(ctx context.Context, a *rdkafka.Admin, topic string, parts int) (int64, error) {
	var tps []rdkafka.TP
	for p := 0; p < parts; p++ {
		tps = append(tps, rdkafka.TP{Topic: topic, Partition: int32(p)})
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	res, err := a.ListOffsets(ctx, tps, rdkafka.Latest)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, r := range res {
		n += r.Offset
	}
	return n, nil
}
