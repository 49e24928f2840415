package e2e

// Helpers for the interop tests against real Apache MirrorMaker 2 (dedicated mode, run by
// scripts/mm2.sh from the test bed's Maven jars): start/stop/log tail of one MM2 JVM, MM2 property
// files with per-test cluster aliases, the Connect offsets MM2 and kmm share, and a small Java
// probe that asks MM2's own classes (Admin.describeClassicGroups, RemoteClusterUtils, Heartbeat).

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// mm2Heap keeps the one MM2 JVM of a test small.
const mm2Heap = "-Xms64m -Xmx384m"

// aliases are per-test cluster aliases for A, B and C. MM2 names everything after the aliases
// (remote topics, heartbeats keys, the Connect group <S>-mm2, mm2-offsets.<S>.internal), so
// unique aliases keep the interop tests apart from every other user of the shared bed.
type aliases struct{ A, B, C string }

func newAliases() aliases {
	var b [3]byte
	_, _ = rand.Read(b[:])
	s := hex.EncodeToString(b[:])
	return aliases{A: "A" + s, B: "B" + s, C: "C" + s}
}

// normalize replaces the per-test aliases in s by A, B and C.
func (al aliases) normalize(s string) string {
	return strings.NewReplacer(al.A, "A", al.B, "B", al.C, "C").Replace(s)
}

func (al aliases) all() []string { return []string{al.A, al.B, al.C} }

func (al aliases) has(a string) bool { return a == al.A || a == al.B || a == al.C }

// interopProps writes an MM2 properties file for clusters (aliases of the bed's A, B, C, in that
// order) with tight intervals, then lines. Every key is one MM2 reads from where it is written,
// so `kmm config check` must not warn about any of them. Topics named after the aliases are
// deleted at test end.
func interopProps(t *testing.T, bed *testbed.Bed, al aliases, n int, lines ...string) string {
	t.Helper()
	names := al.all()[:n]
	boots := []string{bed.A.Bootstrap, bed.B.Bootstrap, bed.C.Bootstrap}
	base := []string{
		"clusters = " + strings.Join(names, ", "),
		"replication.factor = 1",
		"checkpoints.topic.replication.factor = 1",
		"heartbeats.topic.replication.factor = 1",
		"offset-syncs.topic.replication.factor = 1",
		"refresh.topics.interval.seconds = 1",
		"emit.heartbeats.interval.seconds = 1",
		"emit.checkpoints.interval.seconds = 1",
		// Only this test's (unused) group: the checkpoint connector leaves other tests' groups alone.
		"groups = " + names[0] + "-nogroup",
	}
	for i, a := range names {
		base = append(base,
			a+".bootstrap.servers = "+boots[i],
			a+".offset.storage.replication.factor = 1",
			a+".config.storage.replication.factor = 1",
			a+".status.storage.replication.factor = 1",
			a+".offset.flush.interval.ms = 500",
			// The herders' Connect workers skip the slow reflective plugin scan.
			a+".plugin.discovery = service_load")
	}
	p := filepath.Join(t.TempDir(), "mm2.properties")
	if err := os.WriteFile(p, []byte(strings.Join(append(base, lines...), "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	deleteAliasTopics(t, bed, al)
	return p
}

// deleteAliasTopics deletes, at test end, every topic on A, B and C named after the aliases
// (remote topics, heartbeats copies, Connect internal topics, offset syncs).
func deleteAliasTopics(t *testing.T, bed *testbed.Bed, al aliases) {
	t.Cleanup(func() {
		for _, c := range bed.Clusters() {
			a, err := rdkafka.NewAdmin("cleanup "+c.Name, c.Config())
			if err != nil {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			if ts, err := a.ListTopics(ctx); err == nil {
				var del []string
				for name := range ts {
					for _, x := range al.all() {
						if strings.Contains(name, x) {
							del = append(del, name)
							break
						}
					}
				}
				if len(del) > 0 {
					_ = a.DeleteTopics(ctx, del...)
				}
			}
			cancel()
			a.Close()
		}
	})
}

// mm2Proc is one Apache MM2 JVM started by scripts/mm2.sh.
type mm2Proc struct {
	name, dir, file string
	bedDir          string
	args            []string
	pid             int
	running         bool
}

func mm2Script() string { return filepath.Join(testbed.Root(), "scripts", "mm2.sh") }

// startMM2 starts MM2 on file (args: e.g. --clusters B). It is stopped at test end; on failure
// the tail of its log is printed.
func startMM2(t *testing.T, bed *testbed.Bed, file string, args ...string) *mm2Proc {
	t.Helper()
	m := &mm2Proc{name: testbed.Unique(t, "mm2"), file: file, args: args, bedDir: bed.Dir}
	m.dir = filepath.Join(bed.Dir, "mm2", m.name)
	cmd := exec.Command(mm2Script(), append([]string{"start", m.name, file}, args...)...)
	cmd.Env = append(os.Environ(), "MM2_HEAP="+mm2Heap, "KMM_TESTBED_DIR="+bed.Dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mm2.sh start: %v\n%s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(m.dir, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	if m.pid, err = strconv.Atoi(strings.TrimSpace(string(data))); err != nil {
		t.Fatal(err)
	}
	m.running = true
	t.Cleanup(func() {
		if m.running {
			m.stopQuiet()
		}
		if t.Failed() {
			t.Logf("MM2 %s %v (%s), tail of its log:\n%s", m.name, m.args, m.file, m.logTail(60))
			if errs := m.grep("ERROR"); len(errs) > 0 {
				t.Logf("MM2 %s ERROR lines (last %d):\n%s", m.name, min(len(errs), 15), strings.Join(errs[max(0, len(errs)-15):], "\n"))
			}
			return
		}
		_ = os.RemoveAll(m.dir)
	})
	return m
}

func (m *mm2Proc) stopQuiet() {
	cmd := exec.Command(mm2Script(), "stop", m.name)
	cmd.Env = append(os.Environ(), "KMM_TESTBED_DIR="+m.bedDir)
	_, _ = cmd.CombinedOutput()
	m.running = false
}

// stop stops MM2 gracefully (scripts/mm2.sh stop: SIGTERM, then waits for the process to
// exit) and fails unless the JVM is gone and finished its shutdown, which includes every
// source task's final offset commit. It returns how long the stop took.
func (m *mm2Proc) stop(t *testing.T) time.Duration {
	t.Helper()
	start := time.Now()
	m.stopQuiet()
	took := time.Since(start)
	if syscall.Kill(m.pid, 0) == nil {
		t.Fatalf("MM2 %s (pid %d) still runs after mm2.sh stop", m.name, m.pid)
	}
	if !strings.Contains(m.log(), "Kafka MirrorMaker stopped.") {
		t.Fatalf("MM2 %s did not finish a graceful shutdown within mm2.sh's 30 s (no 'Kafka MirrorMaker stopped.' in its log)", m.name)
	}
	if !strings.Contains(m.log(), "WorkerSourceTask{id=MirrorSourceConnector-0} Committing offsets") {
		t.Logf("MM2 %s: no final offset commit line for MirrorSourceConnector-0 in its log", m.name)
	}
	return took
}

func (m *mm2Proc) log() string {
	data, _ := os.ReadFile(filepath.Join(m.dir, "mm2.log"))
	return string(data)
}

func (m *mm2Proc) logTail(n int) string {
	out, err := exec.Command(mm2Script(), "logs", m.name, strconv.Itoa(n)).CombinedOutput()
	if err != nil {
		return tail(m.log(), n)
	}
	return string(out)
}

func (m *mm2Proc) grep(s string) []string {
	var out []string
	for _, l := range strings.Split(m.log(), "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}

// Java probe: MM2's own client classes, compiled once per test binary.

const probeSource = `
import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.connect.mirror.Heartbeat;
import org.apache.kafka.connect.mirror.RemoteClusterUtils;

// InteropProbe asks MM2's and Kafka's Java classes what kmm's Go client cannot:
//   members BOOTSTRAP GROUP                       Admin.describeClassicGroups (Connect groups too)
//   topology BOOTSTRAP ALIAS,... [TOPIC@FROM ...]  RemoteClusterUtils answers, and the heartbeats
//                                                 of each TOPIC (partition 0, from offset FROM to
//                                                 its end) decoded by Heartbeat.deserializeRecord
public class InteropProbe {
    public static void main(String[] args) throws Exception {
        Map<String, Object> props = new HashMap<>();
        props.put("bootstrap.servers", args[1]);
        switch (args[0]) {
            case "members": {
                try (Admin a = Admin.create(props)) {
                    ClassicGroupDescription d = a.describeClassicGroups(List.of(args[2])).all().get().get(args[2]);
                    System.out.println("probe members=" + d.members().size() + " state=" + d.state() + " protocol=" + d.protocol());
                } catch (java.util.concurrent.ExecutionException e) {
                    // An empty group without offsets (a Connect group after its workers left)
                    // is removed by the coordinator: no group, no member.
                    if (!(e.getCause() instanceof org.apache.kafka.common.errors.GroupIdNotFoundException)) throw e;
                    System.out.println("probe members=0 state=Dead protocol=none");
                }
                break;
            }
            case "topology": {
                System.out.println("probe heartbeatTopics=" + String.join(",", new TreeSet<>(RemoteClusterUtils.heartbeatTopics(props))));
                System.out.println("probe upstreamClusters=" + String.join(",", new TreeSet<>(RemoteClusterUtils.upstreamClusters(props))));
                for (String alias : args[2].split(",")) {
                    System.out.println("probe replicationHops " + alias + "=" + RemoteClusterUtils.replicationHops(props, alias));
                }
                Map<String, Object> cp = new HashMap<>(props);
                cp.put("key.deserializer", ByteArrayDeserializer.class.getName());
                cp.put("value.deserializer", ByteArrayDeserializer.class.getName());
                cp.put("enable.auto.commit", "false");
                try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(cp)) {
                    for (int i = 3; i < args.length; i++) {
                        int at = args[i].lastIndexOf('@');
                        String topic = args[i].substring(0, at);
                        TopicPartition tp = new TopicPartition(topic, 0);
                        c.assign(List.of(tp));
                        long end = c.endOffsets(List.of(tp)).get(tp);
                        c.seek(tp, Long.parseLong(args[i].substring(at + 1)));
                        TreeSet<String> pairs = new TreeSet<>();
                        long deadline = System.currentTimeMillis() + 60_000;
                        while (c.position(tp) < end && System.currentTimeMillis() < deadline) {
                            for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) {
                                Heartbeat hb = Heartbeat.deserializeRecord(r);
                                pairs.add(hb.sourceClusterAlias() + "->" + hb.targetClusterAlias());
                            }
                        }
                        System.out.println("probe heartbeats " + topic + "=" + String.join(",", pairs));
                    }
                }
                break;
            }
            default:
                throw new IllegalArgumentException(args[0]);
        }
    }
}
`

var (
	probeOnce sync.Once
	probeDir  string
	probeCP   string
	probeErr  error
)

// runProbe runs InteropProbe with args and returns its "probe ..." lines without the prefix.
func runProbe(t *testing.T, bed *testbed.Bed, args ...string) []string {
	t.Helper()
	probeOnce.Do(func() {
		probeCP = bed.Classpath(t)
		if probeDir, probeErr = os.MkdirTemp("", "kmm-probe-"); probeErr != nil {
			return
		}
		src := filepath.Join(probeDir, "InteropProbe.java")
		if probeErr = os.WriteFile(src, []byte(probeSource), 0o600); probeErr != nil {
			return
		}
		if out, err := exec.Command("javac", "-cp", probeCP, "-d", probeDir, src).CombinedOutput(); err != nil {
			probeErr = fmt.Errorf("javac InteropProbe: %v\n%s", err, out)
		}
	})
	if probeErr != nil {
		t.Fatal(probeErr)
	}
	cmd := exec.Command("java", append([]string{"-cp", probeDir + string(os.PathListSeparator) + probeCP, "-Dlog4j2.level=ERROR", "InteropProbe"}, args...)...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("InteropProbe %v: %v\n%s%s", args, err, tail(out.String(), 10), tail(errOut.String(), 20))
	}
	var lines []string
	for _, l := range strings.Split(out.String(), "\n") {
		if s, ok := strings.CutPrefix(l, "probe "); ok {
			lines = append(lines, s)
		}
	}
	return lines
}

// connectGroupMembers returns the member count and state of a Connect group (MM2's <S>-mm2)
// as Java's Admin.describeClassicGroups reports them.
func connectGroupMembers(t *testing.T, bed *testbed.Bed, c testbed.Cluster, group string) (int, string) {
	t.Helper()
	lines := runProbe(t, bed, "members", c.Bootstrap, group)
	if len(lines) != 1 {
		t.Fatalf("probe members: %q", lines)
	}
	var n int
	var state, proto string
	if _, err := fmt.Sscanf(lines[0], "members=%d state=%s protocol=%s", &n, &state, &proto); err != nil {
		t.Fatalf("probe members: %q: %v", lines[0], err)
	}
	return n, state
}

// endOffsets returns the end offset of partitions 0..parts-1 of topic (0 where it has none).
func endOffsets(t *testing.T, c testbed.Cluster, topic string, parts int) []int64 {
	t.Helper()
	a := c.Admin(t)
	var tps []rdkafka.TP
	for p := 0; p < parts; p++ {
		tps = append(tps, rdkafka.TP{Topic: topic, Partition: int32(p)})
	}
	res, err := a.ListOffsets(context.Background(), tps, rdkafka.Latest)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int64, parts)
	for i, tp := range tps {
		out[i] = res[tp].Offset
	}
	return out
}

// sourcePositions reads Connect's offsets topic mm2-offsets.<src>.internal on c the way MM2's
// KafkaOffsetBackingStore does (every partition to its end, later records win, null deletes)
// and returns the stored last-replicated offset per partition of source topic.
func sourcePositions(t *testing.T, c testbed.Cluster, src, topic string) map[int32]int64 {
	t.Helper()
	return sourcePositionsOf(t, c, src, src, topic)
}

// sourcePositionsOf is sourcePositions for the source partitions of cluster (the connector's
// source.cluster.alias, which the file may override) in mm2-offsets.<src>.internal.
func sourcePositionsOf(t *testing.T, c testbed.Cluster, src, cluster, topic string) map[int32]int64 {
	t.Helper()
	offsets := "mm2-offsets." + src + ".internal"
	a := c.Admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ts, err := a.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	n := ts[offsets].Partitions
	if n == 0 {
		return out
	}
	var tps []rdkafka.TP
	for p := 0; p < n; p++ {
		tps = append(tps, rdkafka.TP{Topic: offsets, Partition: int32(p)})
	}
	ends, err := a.ListOffsets(ctx, tps, rdkafka.Latest)
	if err != nil {
		t.Fatal(err)
	}
	start := map[rdkafka.TP]int64{}
	for _, tp := range tps {
		if ends[tp].Offset > 0 {
			start[tp] = int64(rdkafka.Earliest)
		}
	}
	if len(start) == 0 {
		return out
	}
	cons, err := rdkafka.NewConsumer("offsets "+c.Name, rdkafka.Config{"bootstrap.servers": c.Bootstrap})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	if err := cons.Assign(start); err != nil {
		t.Fatal(err)
	}
	pos := map[rdkafka.TP]int64{}
	done := func() bool {
		for tp := range start {
			if pos[tp] < ends[tp].Offset {
				return false
			}
		}
		return true
	}
	for !done() {
		recs, err := cons.Poll(ctx, 5000, 200*time.Millisecond)
		if err != nil {
			t.Fatalf("reading %s on %s: %v", offsets, c.Name, err)
		}
		for _, r := range recs {
			pos[rdkafka.TP{Topic: r.Topic, Partition: r.Partition}] = r.Offset + 1
			var key []json.RawMessage
			if json.Unmarshal(r.Key, &key) != nil || len(key) != 2 || string(key[0]) != `"MirrorSourceConnector"` {
				continue
			}
			var k struct {
				Cluster   string `json:"cluster"`
				Partition int32  `json:"partition"`
				Topic     string `json:"topic"`
			}
			if json.Unmarshal(key[1], &k) != nil || k.Cluster != cluster || k.Topic != topic {
				continue
			}
			if r.Value == nil {
				delete(out, k.Partition)
				continue
			}
			var v struct {
				Offset *int64 `json:"offset"`
			}
			if json.Unmarshal(r.Value, &v) == nil && v.Offset != nil {
				out[k.Partition] = *v.Offset
			}
		}
	}
	return out
}

// checkPositions fails unless the positions stored for topic in mm2-offsets.<src>.internal on
// tgt are exactly the last offsets of remote on tgt: the tool that just stopped stored every
// record it wrote and no more, so whoever resumes copies nothing twice and skips nothing.
func checkPositions(t *testing.T, who string, tgt testbed.Cluster, src, topic, remote string, parts int) []int64 {
	t.Helper()
	return checkPositionsOf(t, who, tgt, src, src, topic, remote, parts)
}

// checkPositionsOf is checkPositions for the source partitions of cluster (see
// sourcePositionsOf).
func checkPositionsOf(t *testing.T, who string, tgt testbed.Cluster, src, cluster, topic, remote string, parts int) []int64 {
	t.Helper()
	ends := endOffsets(t, tgt, remote, parts)
	pos := sourcePositionsOf(t, tgt, src, cluster, topic)
	for p := 0; p < parts; p++ {
		got, ok := pos[int32(p)]
		switch {
		case ends[p] == 0 && ok:
			t.Fatalf("after %s stopped: stored position %d for %s[%d], but %s[%d] on %s is empty", who, got, topic, p, remote, p, tgt.Name)
		case ends[p] > 0 && (!ok || got != ends[p]-1):
			t.Fatalf("after %s stopped: stored position for %s[%d] is %d (present %v), but %s[%d] on %s ends at %d (want %d): "+
				"%s wrote records it did not store, so the next tool would copy them again",
				who, topic, p, got, ok, remote, p, tgt.Name, ends[p], ends[p]-1, who)
		}
	}
	return ends
}

// assertExactlyOnce checks that remote on tgt holds the n source records of topic exactly once:
// the per-partition audit (lost, duplicates, order) and per-partition digests (key, value,
// headers, timestamp in offset order) of source and target.
func assertExactlyOnce(t *testing.T, bed *testbed.Bed, src, tgt testbed.Cluster, topic, remote string, parts, n int) {
	t.Helper()
	lost, dups := audit(t, tgt, remote, parts, n)
	t.Logf("%s on %s: %d source records, %d lost, %d duplicates", remote, tgt.Name, n, lost, dups)
	if lost != 0 || dups != 0 {
		t.Fatalf("%s on %s: %d lost, %d duplicated (want 0 and 0)", remote, tgt.Name, lost, dups)
	}
	srcEnds := endOffsets(t, src, topic, parts)
	tgtEnds := endOffsets(t, tgt, remote, parts)
	want := make([]int, parts)
	for p := range want {
		want[p] = int(srcEnds[p])
		if tgtEnds[p] != srcEnds[p] {
			t.Fatalf("partition %d: source %s ends at %d, target %s at %d", p, topic, srcEnds[p], remote, tgtEnds[p])
		}
	}
	sd := src.Digests(t, topic, parts, want, 2*time.Minute)
	var td []testbed.Digest
	if remote == topic {
		// Names kept (Identity, or an empty separator and alias): kmm's copies carry its
		// provenance header last (docs/mm2-compat.md), which is not content; MM2's do not.
		recs := tgt.ConsumeN(t, remote, parts, sum64(want), 2*time.Minute)
		for i := range recs {
			recs[i].Headers = cluster.WithoutOrigin(recs[i].Headers)
		}
		td = testbed.DigestRecords(recs, parts)
	} else {
		td = tgt.Digests(t, remote, parts, want, 2*time.Minute)
	}
	for p := range sd {
		if sd[p] != td[p] {
			t.Fatalf("partition %d: source digest %d records %x, target %d records %x", p, sd[p].Count, sd[p].Sum[:8], td[p].Count, td[p].Sum[:8])
		}
	}
}

// heartbeatPairs decodes MM2 heartbeat keys (INT16-length source and target alias) of
// partition 0 of topic on c from offset from to the end and returns "src->tgt" pairs. It is the
// cheap poll; the final word comes from MM2's own Heartbeat class (runProbe topology).
func heartbeatPairs(a *rdkafka.Admin, c testbed.Cluster, topic string, from int64) (map[string]bool, error) {
	out := map[string]bool{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tp := rdkafka.TP{Topic: topic}
	res, err := a.ListOffsets(ctx, []rdkafka.TP{tp}, rdkafka.Latest)
	if err != nil {
		return nil, err
	}
	end := res[tp].Offset
	if end <= from {
		return out, nil
	}
	cons, err := rdkafka.NewConsumer("heartbeats "+c.Name, rdkafka.Config{"bootstrap.servers": c.Bootstrap})
	if err != nil {
		return nil, err
	}
	defer cons.Close()
	if err := cons.Assign(map[rdkafka.TP]int64{tp: from}); err != nil {
		return nil, err
	}
	for pos := from; pos < end; {
		recs, err := cons.Poll(ctx, 10000, 200*time.Millisecond)
		if err != nil {
			return nil, fmt.Errorf("reading %s on %s: %w", topic, c.Name, err)
		}
		for _, r := range recs {
			pos = r.Offset + 1
			k := r.Key
			if len(k) < 2 {
				continue
			}
			n := int(binary.BigEndian.Uint16(k))
			if len(k) < 2+n+2 {
				continue
			}
			s := string(k[2 : 2+n])
			m := int(binary.BigEndian.Uint16(k[2+n:]))
			if len(k) < 4+n+m {
				continue
			}
			out[s+"->"+string(k[4+n:4+n+m])] = true
		}
	}
	return out, nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sum64(ns []int) int {
	t := 0
	for _, n := range ns {
		t += n
	}
	return t
}
