package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// New topics and partitions on the source are picked up while running; an excluded topic is
// not; heartbeats and offset syncs decode with MM2's own formatters.
func TestReplicateDiscoversTopicsAndPartitions(t *testing.T) {
	bed := testbed.Attach(t)
	prefix := testbed.Unique(t, "disc")
	first, later, skipped := prefix+"-first", prefix+"-later", prefix+"-skip"
	bed.A.CreateTopic(t, first, 2, map[string]string{"retention.ms": "12345678", "message.timestamp.type": "LogAppendTime"})
	props := writeProps(t, "A->B.enabled = true", "A->B.topics = "+regexp.QuoteMeta(prefix)+"-.*",
		"A->B.topics.exclude = .*-skip", "A->B.emit.heartbeats.interval.seconds = 1")
	// The offset-syncs topic is the bed's, shared by every test: this test's syncs come after
	// its end now (read below from there: other tests may have written 100,000s before).
	syncsTopic := "mm2-offset-syncs.B.internal"
	syncsFrom := int64(0)
	if ends, err := bed.A.Admin(t).ListOffsets(context.Background(), []rdkafka.TP{{Topic: syncsTopic}}, rdkafka.Latest); err == nil {
		syncsFrom = max(ends[rdkafka.TP{Topic: syncsTopic}].Offset, 0)
	}
	p := startKMM(t, "replicate", props, "-o", "json", "--progress-interval", "1s")
	bed.A.Produce(t, seqRecords(first, 2, 0, 1000))
	waitCount(t, bed.B, "A."+first, 2, 1000, time.Minute)

	bed.A.CreateTopic(t, later, 3, nil)
	bed.A.CreateTopic(t, skipped, 1, nil)
	bed.A.Produce(t, seqRecords(later, 3, 0, 900))
	bed.A.Produce(t, seqRecords(skipped, 1, 0, 10))
	waitCount(t, bed.B, "A."+later, 3, 900, time.Minute)

	// Grow the first topic from 2 to 4 partitions and write to the new ones.
	if err := bed.A.Admin(t).CreatePartitions(context.Background(), first, 4); err != nil {
		t.Fatal(err)
	}
	testbed.Eventually(t, 30*time.Second, func() error {
		ts, err := bed.A.Admin(t).ListTopics(context.Background())
		if err != nil || ts[first].Partitions != 4 {
			return fmt.Errorf("source partitions %d %v", ts[first].Partitions, err)
		}
		return nil
	})
	bed.A.Produce(t, seqRecords(first, 4, 1000, 400))
	waitCount(t, bed.B, "A."+first, 4, 1400, time.Minute)
	if code := p.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
	ts, err := bed.B.Admin(t).ListTopics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if ts["A."+first].Partitions != 4 {
		t.Fatalf("remote topic has %d partitions, want 4", ts["A."+first].Partitions)
	}
	if _, ok := ts["A."+skipped]; ok {
		t.Fatal("excluded topic was replicated")
	}
	// Topic configs: synced, except MM2's default config.properties.exclude.
	cfgs, err := bed.B.Admin(t).DescribeTopicConfigs(context.Background(), "A."+first)
	if err != nil {
		t.Fatal(err)
	}
	if c := cfgs["A."+first]; c["retention.ms"].Value != "12345678" || c["message.timestamp.type"].Value != "CreateTime" {
		t.Fatalf("target configs: retention.ms=%+v message.timestamp.type=%+v", c["retention.ms"], c["message.timestamp.type"])
	}
	// stdout is NDJSON only: every line is a JSON event.
	lines := strings.Split(strings.TrimSpace(p.stdout.String()), "\n")
	types := map[string]int{}
	for _, l := range lines {
		var ev struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("stdout line is not JSON: %q", l)
		}
		types[ev.Type]++
	}
	for _, want := range []string{"flow_started", "topic_created", "partitions_added", "progress", "flow_stopped"} {
		if types[want] == 0 {
			t.Errorf("no %s event in %v", want, types)
		}
	}

	// MM2's own formatters read kmm's heartbeats and offset syncs.
	// The heartbeats topic on B is shared with other tests' flows: look for this flow's key
	// (again while the console consumer times out on a busy machine).
	testbed.Eventually(t, 90*time.Second, func() error {
		hb := bed.JavaConsole(t, bed.B, "heartbeats", "org.apache.kafka.connect.mirror.formatters.HeartbeatFormatter", 1000000)
		for _, l := range hb {
			if strings.Contains(l, "sourceClusterAlias=A, targetClusterAlias=B, timestamp=") {
				return nil
			}
		}
		return fmt.Errorf("HeartbeatFormatter shows no heartbeat keyed (A, B) in %d lines; first: %q", len(hb), hb[:min(len(hb), 3)])
	})
	// The same for the offset syncs (the console consumer may time out on a busy machine).
	testbed.Eventually(t, 90*time.Second, func() error {
		syncs := bed.JavaConsoleFrom(t, bed.A, syncsTopic, syncsFrom, "org.apache.kafka.connect.mirror.formatters.OffsetSyncFormatter", 100000)
		for _, l := range syncs {
			if strings.Contains(l, "topicPartition="+later+"-") && strings.Contains(l, "upstreamOffset=") && strings.Contains(l, "downstreamOffset=") {
				return nil
			}
		}
		return fmt.Errorf("OffsetSyncFormatter shows no sync for %s among %d lines; first: %q", later, len(syncs), syncs[:min(3, len(syncs))])
	})
}

// A->B and B->A both enabled with the default policy: A.x reaches B, B.y reaches A, and
// nothing loops back (no A.B.* or B.A.*).
func TestActiveActiveNoLoop(t *testing.T) {
	bed := testbed.Attach(t)
	prefix := testbed.Unique(t, "aa")
	onA, onB := prefix+"-ona", prefix+"-onb"
	bed.A.CreateTopic(t, onA, 1, nil)
	bed.B.CreateTopic(t, onB, 1, nil)
	re := `(A\.|B\.)*` + regexp.QuoteMeta(prefix) + `-.*`
	props := writeProps(t, "A->B.enabled = true", "B->A.enabled = true", "topics = "+re)
	p := startKMM(t, "replicate", props)
	bed.A.Produce(t, seqRecords(onA, 1, 0, 100))
	bed.B.Produce(t, seqRecords(onB, 1, 0, 100))
	waitCount(t, bed.B, "A."+onA, 1, 100, time.Minute)
	waitCount(t, bed.A, "B."+onB, 1, 100, time.Minute)
	// Give the refresh (1 s) several rounds to make a loop if it would.
	time.Sleep(4 * time.Second)
	if code := p.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, c := range []testbed.Cluster{bed.A, bed.B} {
		ts, err := c.Admin(t).ListTopics(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for name := range ts {
			if strings.Contains(name, prefix) && (strings.HasPrefix(name, "A.B.") || strings.HasPrefix(name, "B.A.")) {
				t.Fatalf("loop: %s exists on %s", name, c.Name)
			}
		}
	}
}

// The target broker stops for 30 s mid-stream: kmm warns, keeps retrying and loses nothing.
func TestReplicateSurvivesTargetOutage(t *testing.T) {
	bed := testbed.Attach(t)
	topic := testbed.Unique(t, "outage")
	const parts = 3
	bed.A.CreateTopic(t, topic, parts, nil)
	props := writeProps(t, "A->B.enabled = true", "A->B.topics = "+regexp.QuoteMeta(topic))
	p := startKMM(t, "replicate", props, "--progress-interval", "1s")
	bed.A.Produce(t, seqRecords(topic, parts, 0, 30_000))
	waitCount(t, bed.B, "A."+topic, parts, 30_000, time.Minute)

	testbed.Script(t, "down", "B")
	restarted := false
	defer func() {
		if !restarted {
			testbed.Script(t, "up", "B")
		}
	}()
	bed.A.Produce(t, seqRecords(topic, parts, 30_000, 30_000))
	time.Sleep(30 * time.Second) // the outage itself
	testbed.Script(t, "up", "B")
	restarted = true
	waitCopied(t, bed.B, "A."+topic, parts, 60_000, 3*time.Minute)
	if code := p.stop(t, syscall.SIGTERM, 60*time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(p.stderr.String(), "cluster B") {
		t.Errorf("no warning naming cluster B during the outage:\n%s", tail(p.stderr.String(), 20))
	}
	lost, dups := audit(t, bed.B, "A."+topic, parts, 60_000)
	t.Logf("target outage: %d lost, %d duplicates", lost, dups)
	if lost != 0 {
		t.Fatalf("%d records lost", lost)
	}
}

// An unreachable cluster fails fast with exit 4, naming alias and bootstrap; a bad file exits 2
// before touching any cluster.
func TestReplicateExitCodes(t *testing.T) {
	testbed.Attach(t)
	props := writeProps(t, "D.bootstrap.servers = 127.0.0.1:9", "clusters = A, D", "A->D.enabled = true")
	start := time.Now()
	r := Run(t, "replicate", props)
	if r.Code != 4 || !strings.Contains(r.Stderr, "cluster D") || !strings.Contains(r.Stderr, "127.0.0.1:9") {
		t.Fatalf("unreachable: exit %d\n%s", r.Code, r.Stderr)
	}
	if d := time.Since(start); d > 40*time.Second {
		t.Fatalf("took %s to report an unreachable cluster", d)
	}
	bad := writeProps(t, "A->B.enabled = true", "A->B.topics = ab(c")
	r = Run(t, "replicate", bad)
	if r.Code != 2 || !strings.Contains(r.Stderr, "mm2.properties:") {
		t.Fatalf("bad regex: exit %d\n%s", r.Code, r.Stderr)
	}
	none := writeProps(t)
	r = Run(t, "replicate", none)
	if r.Code != 2 || !strings.Contains(r.Stderr, ".enabled") {
		t.Fatalf("no flow: exit %d\n%s", r.Code, r.Stderr)
	}
	_ = rdkafka.Earliest
}

// Records deleted on the source before they were replicated are reported loudly, with the lost
// range, and replication goes on from the log start.
func TestReplicateReportsRetentionGap(t *testing.T) {
	bed := testbed.Attach(t)
	topic := testbed.Unique(t, "gap")
	bed.A.CreateTopic(t, topic, 1, nil)
	props := writeProps(t, "A->B.enabled = true", "A->B.topics = "+regexp.QuoteMeta(topic))
	bed.A.Produce(t, seqRecords(topic, 1, 0, 1000))
	p := startKMM(t, "replicate", props)
	waitCount(t, bed.B, "A."+topic, 1, 1000, time.Minute)
	if code := p.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
	bed.A.Produce(t, seqRecords(topic, 1, 1000, 1000))
	if err := bed.A.Admin(t).DeleteRecords(context.Background(), rdkafka.TP{Topic: topic}, 1500); err != nil {
		t.Fatal(err)
	}
	p = startKMM(t, "replicate", props, "-o", "json")
	waitCount(t, bed.B, "A."+topic, 1, 1500, time.Minute)
	testbed.Eventually(t, 20*time.Second, func() error {
		if !strings.Contains(p.stdout.String(), `"type":"retention_gap"`) {
			return fmt.Errorf("no retention_gap event yet")
		}
		return nil
	})
	if code := p.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
	var gap struct {
		Topic     string `json:"topic"`
		Partition int32  `json:"partition"`
		From      int64  `json:"from_offset"`
		To        int64  `json:"to_offset"`
		Count     int64  `json:"count"`
	}
	for _, l := range strings.Split(p.stdout.String(), "\n") {
		if strings.Contains(l, `"type":"retention_gap"`) {
			if err := json.Unmarshal([]byte(l), &gap); err != nil {
				t.Fatal(err)
			}
		}
	}
	if gap.Topic != topic || gap.Partition != 0 || gap.From != 1000 || gap.To != 1499 || gap.Count != 500 {
		t.Fatalf("gap event %+v, want %s[0] 1000..1499 (500)", gap, topic)
	}
	if !strings.Contains(p.stderr.String(), "level=ERROR") || !strings.Contains(p.stderr.String(), "records 1000..1499") {
		t.Fatalf("no error log line naming the lost range:\n%s", tail(p.stderr.String(), 20))
	}
}

// A->B and B->A both running under IdentityReplicationPolicy on the same topic: every copy
// carries the provenance header naming the cluster the record was first written to, and the
// echo guard never writes a record back to that cluster, so each side ends with its own records
// and the other side's once (no bounce, no growth), and both flows' stored positions reach the
// end (the skipped echoes at the end of each log are acknowledged: lag 0).
func TestActiveActiveIdentityNoEcho(t *testing.T) {
	bed := testbed.Attach(t)
	topic := testbed.Unique(t, "aaid")
	bed.A.CreateTopic(t, topic, 1, nil)
	bed.B.CreateTopic(t, topic, 1, nil)
	props := writeProps(t, "A->B.enabled = true", "B->A.enabled = true", "topics = "+regexp.QuoteMeta(topic),
		"replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy")
	p := startKMM(t, "replicate", props)
	bed.A.Produce(t, seqRecords(topic, 1, 0, 50))
	bed.B.Produce(t, seqRecords(topic, 1, 1000, 30))
	waitCount(t, bed.B, topic, 1, 80, time.Minute)
	waitCount(t, bed.A, topic, 1, 80, time.Minute)
	// Give both flows several rounds to bounce a record if they would.
	time.Sleep(3 * time.Second)
	if code := p.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Fatalf("exit %d\n%s", code, tail(p.Stderr(), 20))
	}
	for _, side := range []struct {
		c            testbed.Cluster
		own, other   string
		ownN, otherN int
	}{{bed.A, "A", "B", 50, 30}, {bed.B, "B", "A", 30, 50}} {
		if ends := endOffsets(t, side.c, topic, 1); ends[0] != 80 {
			t.Errorf("%s holds %d records of %s, want 80 (its %d and the %d of %s, each once)", side.c.Name, ends[0], topic, side.ownN, side.otherN, side.other)
		}
		origins := map[string]int{}
		for _, r := range side.c.ConsumeN(t, topic, 1, 80, time.Minute) {
			o := "none"
			for _, h := range r.Headers {
				if h.Key == rdkafka.HeaderOrigin {
					o = string(h.Value)
				}
			}
			origins[o]++
		}
		if origins["none"] != side.ownN || origins[side.other] != side.otherN || len(origins) != 2 {
			t.Errorf("records on %s by provenance header: %v, want %d without (its own) and %d from %s", side.c.Name, origins, side.ownN, side.otherN, side.other)
		}
	}
	// Both flows stored their position at the last offset (79): the echoes at the end count as done.
	for _, x := range []struct {
		on  testbed.Cluster
		src string
	}{{bed.B, "A"}, {bed.A, "B"}} {
		if pos := sourcePositions(t, x.on, x.src, topic); pos[0] != 79 {
			t.Errorf("flow %s->: stored position %v on %s, want 79 (the end, echoes included)", x.src, pos, x.on.Name)
		}
	}
}
