package e2e

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand"
	"net"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// Exactly-once mode (exactly.once.source.support = enabled; docs/mm2-compat.md,
// "Exactly-once"): every check reads the target as a read_committed consumer does, to the end
// of each partition (its last stable offset), and counts each source record's copies there.

// eosProps is the flow A->B of topic with exactly-once on (MM2's per-target worker key). Its
// progress records go to an offsets topic of its own (named after the source topic, so every
// eosProps of a test shares it): a kmm killed mid-transaction leaves the transaction open until
// it is fenced or times out, and read_committed readers of those partitions wait behind it; the
// bed's shared mm2-offsets.A.internal is read by most other tests. Heartbeats stay replicated:
// they are what makes an idle, fenced kmm notice (TestEOSFencing).
func eosProps(t *testing.T, topic string, extra ...string) string {
	t.Helper()
	return writeProps(t, append([]string{"A->B.enabled = true", "A->B.topics = " + regexp.QuoteMeta(topic),
		"B.exactly.once.source.support = enabled", "kmm.transaction.interval.ms = 500",
		"B.offset.storage.topic = mm2-offsets-" + topic}, extra...)...)
}

// committedSeqs reads topic on c with read_committed to its end and returns, per partition, the
// sequence number at value[off:off+8] of each record in offset order.
func committedSeqs(t *testing.T, c testbed.Cluster, topic string, parts, off int) [][]uint64 {
	t.Helper()
	out := make([][]uint64, parts)
	cl := c.Open(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := cl.ReadCommittedToEnd(ctx, topic, 3*time.Minute, func(r rdkafka.Record) {
		if int(r.Partition) < parts && len(r.Value) >= off+8 {
			out[r.Partition] = append(out[r.Partition], binary.BigEndian.Uint64(r.Value[off:]))
		}
	}); err != nil {
		t.Fatalf("reading %s on %s (read_committed): %v", topic, c.Name, err)
	}
	return out
}

// compareCommitted compares topic on src with remote on dst as read_committed readers see them:
// source records missing on the target, extra copies, and the order of first copies.
func compareCommitted(t *testing.T, src testbed.Cluster, topic string, dst testbed.Cluster, remote string, parts, off int) (missing, dups, total int) {
	t.Helper()
	return compareSeqs(t, committedSeqs(t, src, topic, parts, off), committedSeqs(t, dst, remote, parts, off), dst.Name)
}

// assertCommittedOnce fails the test unless a read_committed reader of remote on B sees each of
// the n source records of topic on A exactly once (compareCommitted; off: the sequence number's
// place in the value); note ends the log line.
func assertCommittedOnce(t *testing.T, bed *testbed.Bed, topic, remote string, parts, off, n int, note string) {
	t.Helper()
	missing, dups, total := compareCommitted(t, bed.A, topic, bed.B, remote, parts, off)
	t.Logf("%d source records: %d lost, %d duplicated to a read_committed reader%s", total, missing, dups, note)
	if missing != 0 || dups != 0 || total != n {
		t.Fatalf("%d of %d records: %d lost, %d duplicated (want 0 and 0)", total, n, missing, dups)
	}
}

// committedAt reads topic on c with read_committed and returns, per partition, the sequence
// number (value[0:8]) of the record at each offset.
func committedAt(t *testing.T, c testbed.Cluster, topic string) map[int32]map[int64]uint64 {
	t.Helper()
	out := map[int32]map[int64]uint64{}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := c.Open(t).ReadCommittedToEnd(ctx, topic, 3*time.Minute, func(r rdkafka.Record) {
		if out[r.Partition] == nil {
			out[r.Partition] = map[int64]uint64{}
		}
		if len(r.Value) >= 8 {
			out[r.Partition][r.Offset] = binary.BigEndian.Uint64(r.Value)
		}
	}); err != nil {
		t.Fatalf("reading %s on %s (read_committed): %v", topic, c.Name, err)
	}
	return out
}

// checkSyncsCommitted fails unless every offset sync of topic (mm2-offset-syncs.B.internal on A)
// pairs a source record with its committed copy: the target offset holds, for a read_committed
// reader, the copy of the record at the source offset. A sync for a record of an aborted
// transaction names an offset no read_committed reader receives. It returns the syncs checked.
func checkSyncsCommitted(t *testing.T, src, dst testbed.Cluster, topic, remote string) int {
	t.Helper()
	srcAt, dstAt := committedAt(t, src, topic), committedAt(t, dst, remote)
	syncs := "mm2-offset-syncs." + dst.Name + ".internal"
	n := 0
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := src.Open(t).ReadCommittedToEnd(ctx, syncs, 3*time.Minute, func(r rdkafka.Record) {
		s, err := mm2wire.DecodeOffsetSync(r.Key, r.Value)
		if err != nil || s.Topic != topic {
			return
		}
		n++
		want, ok := srcAt[s.Partition][s.UpstreamOffset]
		if !ok {
			t.Errorf("offset sync %s[%d] %d -> %d: no source record at %d", topic, s.Partition, s.UpstreamOffset, s.DownstreamOffset, s.UpstreamOffset)
			return
		}
		if got, ok := dstAt[s.Partition][s.DownstreamOffset]; !ok || got != want {
			t.Errorf("offset sync %s[%d] %d -> %d: the committed record at %s[%d] %d is %d (present %v), want the copy of %d (a sync for an aborted record?)",
				topic, s.Partition, s.UpstreamOffset, s.DownstreamOffset, remote, s.Partition, s.DownstreamOffset, got, ok, want)
		}
	}); err != nil {
		t.Fatalf("reading %s on %s: %v", syncs, src.Name, err)
	}
	return n
}

// rawCount is the number of offsets remote's partitions hold on c (records of committed and
// aborted transactions, and transaction markers).
func rawCount(t *testing.T, c testbed.Cluster, topic string, parts int) int64 {
	t.Helper()
	var n int64
	for _, e := range endOffsets(t, c, topic, parts) {
		n += e
	}
	return n
}

// produceSeq writes n records numbered from..from+n-1 (8-byte big-endian values) round-robin to
// topic's parts partitions.
func produceSeq(t *testing.T, c testbed.Cluster, topic string, parts, from, n int) {
	t.Helper()
	for at := from; at < from+n; at += 50_000 {
		m := min(50_000, from+n-at)
		recs := make([]rdkafka.Record, m)
		for i := range recs {
			v := make([]byte, 8)
			binary.BigEndian.PutUint64(v, uint64(at+i))
			recs[i] = rdkafka.Record{Topic: topic, Partition: int32((at + i) % parts), Value: v}
		}
		c.Produce(t, recs)
	}
}

// TestFaultKill9EOS: kmm replicate in exactly-once mode is killed with SIGKILL 6 times at random
// (seeded) moments while it copies 300k records (50k produced before each run), and restarted
// each time: a read_committed reader of the target sees every source record exactly once.
func TestFaultKill9EOS(t *testing.T) {
	bed := testbed.Attach(t)
	seed := faultSeed(t)
	rng := rand.New(rand.NewSource(seed))
	const parts, total, kills = 3, 300_000, 6
	topic := testbed.Unique(t, "fk9eos")
	bed.A.CreateTopic(t, topic, parts, nil)
	// A rate limit (400 KB of records per run at 100 KB/s) keeps each run copying for seconds, so
	// every kill lands while transactions are open.
	props := eosProps(t, topic, "kmm.rate.limit.bytes.per.second = 100000")
	remote := "A." + topic
	const chunk = total / kills
	var moments []string
	start := time.Now()
	for i := 0; i < kills; i++ {
		before := int64(-1)
		if i > 0 {
			before = rawCount(t, bed.B, remote, parts)
		}
		produceSeq(t, bed.A, topic, parts, i*chunk, chunk)
		p := startKMM(t, "replicate", props, "--progress-interval", "1s")
		began := time.Now()
		testbed.Eventually(t, time.Minute, func() error {
			select {
			case <-p.done:
				t.Fatalf("kmm run %d exited by itself (code %d):\n%s", i+1, p.cmd.ProcessState.ExitCode(), tail(p.Stderr(), 20))
			default:
			}
			if i == 0 {
				if !strings.Contains(p.Stderr(), "pipelines") {
					return fmt.Errorf("run 1 not started yet")
				}
				before = 0
			}
			if n := rawCount(t, bed.B, remote, parts); n <= before {
				return fmt.Errorf("run %d wrote nothing yet (target %d offsets, %d before it)", i+1, n, before)
			}
			return nil
		})
		moments = append(moments, killMidCopy(p, rng, began))
	}
	t.Logf("SIGKILL of each run at (first write seen + random delay): %s; %d records produced and %d kills in %s",
		strings.Join(moments, ", "), total, kills, time.Since(start).Round(100*time.Millisecond))
	lastKill := time.Now()
	// The last run copies the rest without the rate limit.
	final := eosProps(t, topic)
	p := startKMM(t, "replicate", final, "--listen", "127.0.0.1:0", "--progress-interval", "5s")
	f := &faultFlow{src: bed.A, dst: bed.B, topic: topic, remote: remote, props: final, p: p, base: listenBase(t, p)}
	ends := f.sourceEnds(t)
	f.waitStored(t, ends, lastKill, 3*time.Minute)
	recover := time.Since(lastKill)
	if code := p.stop(t, syscall.SIGTERM, outageShutdown+20*time.Second); code != 0 {
		t.Fatalf("graceful stop: exit %d\n%s", code, tail(p.Stderr(), 20))
	}
	raw := rawCount(t, bed.B, remote, parts)
	missing, dups, n := compareCommitted(t, bed.A, topic, bed.B, remote, parts, 0)
	t.Logf("the target holds %d offsets for %d committed copies: the rest are aborted records of the killed runs and transaction markers", raw, n-missing)
	syncs := checkSyncsCommitted(t, bed.A, bed.B, topic, remote)
	t.Logf("%d offset syncs, each pairing a source record with its committed copy", syncs)
	if syncs == 0 {
		t.Errorf("no offset syncs for %s", topic)
	}
	assertDelivery(t, exactlyOnce, faultResult{Scenario: "kill9-eos", Fault: fmt.Sprintf("exactly-once mode: SIGKILL of kmm %d times, each run 0-1.5 s after it started writing, during %dk records (%dk produced before each run)", kills, total/1000, chunk/1000),
		Records: n, Lost: missing, Duplicated: dups, RecoverSec: recover.Seconds(), KMMRuns: kills + 1, Seed: seed,
		Note: fmt.Sprintf("read_committed reader; recovery: last restart -> all committed; target offsets %d for %d records (aborted copies and markers)", raw, n)})
}

// TestEOSFencing: a second kmm replicate of the same exactly-once flow fences the first: the first
// stops with an error that says so, the second finishes the copy, and a read_committed reader
// sees every record once.
func TestEOSFencing(t *testing.T) {
	bed := testbed.Attach(t)
	const parts, total = 3, 200_000
	topic := testbed.Unique(t, "eosfence")
	bed.A.CreateTopic(t, topic, parts, nil)
	props := eosProps(t, topic)
	remote := "A." + topic
	produceSeq(t, bed.A, topic, parts, 0, total/2)
	first := startKMM(t, "replicate", props)
	testbed.Eventually(t, time.Minute, func() error {
		select {
		case <-first.done:
			t.Fatalf("kmm exited by itself (code %d):\n%s", first.cmd.ProcessState.ExitCode(), tail(first.Stderr(), 20))
		default:
		}
		if n := committedCount(t, bed.B, remote, parts); n == 0 {
			return fmt.Errorf("nothing committed on B yet")
		}
		return nil
	})
	produceSeq(t, bed.A, topic, parts, total/2, total/2)
	// --force: a deliberate takeover (without it the second refuses while the first's lease is
	// refreshed, TestSecondReplicatorRefused); exactly-once fences the first.
	second := startKMM(t, "replicate", props, "--listen", "127.0.0.1:0", "--force")
	select {
	case <-first.done:
	case <-time.After(90 * time.Second):
		t.Fatalf("the first kmm still runs 90 s after the second started:\n%s", tail(first.Stderr(), 20))
	}
	code := first.cmd.ProcessState.ExitCode()
	if code == 0 || !strings.Contains(first.Stderr(), "fenced") || !strings.Contains(first.Stderr(), "A-mm2-MirrorSourceConnector-0") {
		t.Fatalf("the fenced kmm exited %d without naming the fencing and its transactional.id:\n%s", code, tail(first.Stderr(), 20))
	}
	t.Logf("the first kmm stopped (exit %d): %s", code, lastLine(first.Stderr(), "fenced"))
	f := &faultFlow{src: bed.A, dst: bed.B, topic: topic, remote: remote, props: props, p: second, base: listenBase(t, second)}
	f.waitStored(t, f.sourceEnds(t), time.Now(), 2*time.Minute)
	if code := second.stop(t, syscall.SIGTERM, outageShutdown+20*time.Second); code != 0 {
		t.Fatalf("graceful stop of the second kmm: exit %d\n%s", code, tail(second.Stderr(), 20))
	}
	assertCommittedOnce(t, bed, topic, remote, parts, 0, total, "")
}

// committedCount is the number of records a read_committed reader sees in topic on c.
func committedCount(t *testing.T, c testbed.Cluster, topic string, parts int) int {
	t.Helper()
	n := 0
	for _, s := range committedSeqs(t, c, topic, parts, 0) {
		n += len(s)
	}
	return n
}

// lastLine returns the last line of s that contains sub.
func lastLine(s, sub string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], sub) {
			return lines[i]
		}
	}
	return ""
}

// freePort returns a TCP port free on 127.0.0.1 right now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// eosInteropProps is interopProps for the flow A->B of topic with MM2's exactly-once settings
// (KIP-618 in dedicated mode: the per-target worker key, the internal REST server for zombie
// fencing, a read_committed source consumer).
func eosInteropProps(t *testing.T, bed *testbed.Bed, al aliases, topic string) string {
	t.Helper()
	flow := al.A + "->" + al.B
	return interopProps(t, bed, al, 2, flow+".enabled = true", flow+".topics = "+regexp.QuoteMeta(topic),
		al.B+".exactly.once.source.support = enabled", "dedicated.mode.enable.internal.rest = true",
		fmt.Sprintf("listeners = http://127.0.0.1:%d", freePort(t)), al.A+".consumer.isolation.level = read_committed",
		"kmm.transaction.interval.ms = 500")
}

// waitCommitted waits until a read_committed reader sees n records in topic on c.
func waitCommitted(t *testing.T, c testbed.Cluster, topic string, parts, n int, within time.Duration) {
	t.Helper()
	testbed.Eventually(t, within, func() error {
		if got := committedCount(t, c, topic, parts); got < n {
			return fmt.Errorf("%s on %s: %d of %d records committed", topic, c.Name, got, n)
		}
		return nil
	})
}

// TestEOSInteropTakeoverFromMM2: MM2 in exactly-once mode (dedicated, KIP-618) replicates part of
// a stream and is stopped; kmm in exactly-once mode, on the same file, resumes from the
// positions MM2 committed in mm2-offsets.A.internal: every record exactly once to a
// read_committed reader.
func TestEOSInteropTakeoverFromMM2(t *testing.T) {
	bed := testbed.Attach(t)
	al := newAliases()
	topic := testbed.Unique(t, "eostakeover")
	const parts = 3
	bed.A.CreateTopic(t, topic, parts, nil)
	props := eosInteropProps(t, bed, al, topic)
	remote := al.A + "." + topic

	bed.A.Produce(t, seqRecords(topic, parts, 0, 5000))
	start := time.Now()
	m := startMM2(t, bed, props)
	waitCommitted(t, bed.B, remote, parts, 5000, 2*time.Minute)
	t.Logf("MM2 (exactly-once) committed the first 5000 records %s after its start", time.Since(start).Round(time.Millisecond))
	if len(m.grep("ExactlyOnceWorkerSourceTask")) == 0 && len(m.grep("transactional")) == 0 {
		t.Fatalf("MM2 does not run its source task exactly-once (no ExactlyOnceWorkerSourceTask nor transactional producer in its log)")
	}
	bed.A.Produce(t, seqRecords(topic, parts, 5000, 5000))
	took := m.stop(t)
	mm2Copied := committedCount(t, bed.B, remote, parts)
	t.Logf("MM2 stopped in %s with %d of 10000 records committed", took.Round(time.Millisecond), mm2Copied)

	bed.A.Produce(t, seqRecords(topic, parts, 10000, 2000))
	k := startTool(t, bed, "kmm", props)
	waitCommitted(t, bed.B, remote, parts, 12000, 2*time.Minute)
	k.stop(t)
	assertCommittedOnce(t, bed, topic, remote, parts, 8, 12000, fmt.Sprintf(" (MM2 copied %d, kmm the rest)", mm2Copied))
}

// TestEOSInteropHandBackToMM2: kmm in exactly-once mode replicates part of a stream and stops on
// SIGTERM (its last transaction committed); MM2 in exactly-once mode resumes from kmm's committed
// positions: every record exactly once to a read_committed reader.
func TestEOSInteropHandBackToMM2(t *testing.T) {
	bed := testbed.Attach(t)
	al := newAliases()
	topic := testbed.Unique(t, "eoshandback")
	const parts = 3
	bed.A.CreateTopic(t, topic, parts, nil)
	props := eosInteropProps(t, bed, al, topic)
	remote := al.A + "." + topic

	bed.A.Produce(t, seqRecords(topic, parts, 0, 5000))
	k := startTool(t, bed, "kmm", props)
	waitCommitted(t, bed.B, remote, parts, 5000, 2*time.Minute)
	bed.A.Produce(t, seqRecords(topic, parts, 5000, 5000))
	k.stop(t)
	kmmCopied := committedCount(t, bed.B, remote, parts)
	t.Logf("kmm stopped with %d of 10000 records committed", kmmCopied)

	bed.A.Produce(t, seqRecords(topic, parts, 10000, 2000))
	start := time.Now()
	m := startMM2(t, bed, props)
	waitCommitted(t, bed.B, remote, parts, 12000, 2*time.Minute)
	t.Logf("MM2 (exactly-once) caught up %s after its start", time.Since(start).Round(time.Millisecond))
	m.stop(t)
	assertCommittedOnce(t, bed, topic, remote, parts, 8, 12000, fmt.Sprintf(" (kmm copied %d, MM2 the rest)", kmmCopied))
}

// TestEOSAbortRewind: in exactly-once mode the target refuses a record for a while (larger than
// the remote topic's max.message.bytes): kmm aborts the transaction that holds it, rewinds to the
// last committed positions and copies again, transaction after transaction, without stopping;
// once the limit is raised it goes on. A read_committed reader sees every record exactly once,
// although the aborted attempts left copies in the target's log.
func TestEOSAbortRewind(t *testing.T) {
	bed := testbed.Attach(t)
	const parts, n, big = 3, 30_000, 15_000
	topic := testbed.Unique(t, "eosabort")
	remote := "A." + topic
	bed.A.CreateTopic(t, topic, parts, nil)
	bed.B.CreateTopic(t, remote, parts, map[string]string{"max.message.bytes": "100000"})
	var recs []rdkafka.Record
	for i := 0; i < n; i++ {
		v := make([]byte, 8)
		if i == big {
			v = make([]byte, 150_000) // refused by the remote topic until its limit is raised
		}
		binary.BigEndian.PutUint64(v, uint64(i))
		recs = append(recs, rdkafka.Record{Topic: topic, Partition: int32(i % parts), Value: v})
	}
	bed.A.Produce(t, recs)
	// The config sync would drop the remote topic's override (the source's is a default). The
	// budget is set (to its default) so that a loaded machine's slow loopback (B measured 20 ms
	// away once) does not size the queues for a long link: batches then grew past the remote
	// topic's 100 kB limit, every transaction was refused whole, and no aborted copy appeared.
	props := eosProps(t, topic, "sync.topic.configs.enabled = false", "kmm.memory.budget.bytes = 16777216")
	p := startKMM(t, "replicate", props, "--listen", "127.0.0.1:0")
	f := &faultFlow{src: bed.A, dst: bed.B, topic: topic, remote: remote, props: props, p: p, base: listenBase(t, p)}
	// Several aborts in a row while kmm keeps running (kmm_flow_transactions_aborted_total).
	// Not the target's log size: how many records an aborted transaction held depends on where
	// the last commit left partition 0 (CI once committed up to the refused record, and every
	// abort after that held it alone), so aborted copies in the log are not certain.
	testbed.Eventually(t, 90*time.Second, func() error {
		f.alive(t, "while the target refuses a record")
		v, err := metricValue(f.base, `kmm_flow_transactions_aborted_total{source="A",target="B"}`)
		if err != nil {
			return err
		}
		if v < 3 {
			return fmt.Errorf("%v transactions aborted, want at least 3", v)
		}
		return nil
	})
	testbed.Eventually(t, 30*time.Second, func() error {
		if !strings.Contains(p.Stderr(), "transaction aborted (") {
			return fmt.Errorf("kmm did not warn about an aborted transaction")
		}
		return nil
	})
	t.Logf("kmm: %s", lastLine(p.Stderr(), "transaction aborted"))
	f.alive(t, "after several aborts")
	a := bed.B.Admin(t)
	if err := a.IncrementalAlterTopicConfigs(context.Background(), map[string][]rdkafka.ConfigOp{remote: {{Name: "max.message.bytes", Value: "1048588"}}}); err != nil {
		t.Fatal(err)
	}
	f.waitStored(t, f.sourceEnds(t), time.Now(), 2*time.Minute)
	committed, _ := metricValue(f.base, `kmm_flow_transactions_committed_total{source="A",target="B"}`)
	aborted, _ := metricValue(f.base, `kmm_flow_transactions_aborted_total{source="A",target="B"}`)
	if code := p.stop(t, syscall.SIGTERM, outageShutdown+20*time.Second); code != 0 {
		t.Fatalf("graceful stop: exit %d\n%s", code, tail(p.Stderr(), 20))
	}
	raw := rawCount(t, bed.B, remote, parts)
	assertCommittedOnce(t, bed, topic, remote, parts, 0, n, fmt.Sprintf("; %v transactions committed, %v aborted; the target's log holds %d offsets (aborted copies and markers)", committed, aborted, raw))
}
