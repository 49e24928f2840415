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

// Many partitions (issue 38): one flow over 100 topics × 100 partitions = 10,000 partitions.
// Creating their remote topics in one CreateTopics request needs 10,100 controller records, which
// a KRaft controller refuses whole ("Unable to perform excessively large batch operation"):
// kmm replicate must create them in requests the controller accepts, copy every record, resume
// after a kill -9 without losing one, and a planned failover of a group spread over 100
// partitions must complete with every position exact.
func TestManyPartitions(t *testing.T) {
	bed := testbed.Attach(t)
	al := newAliases()
	const topics, parts, perPart = 100, 100, 10
	prefix := testbed.Unique(t, "many")
	names := make([]string, topics)
	var specs []rdkafka.NewTopic
	for i := range names {
		names[i] = fmt.Sprintf("%s-%03d", prefix, i)
		specs = append(specs, rdkafka.NewTopic{Name: names[i], Partitions: parts, RF: 1})
	}
	aAdm, bAdm := bed.A.Admin(t), bed.B.Admin(t)
	ctx := context.Background()
	t.Cleanup(func() {
		dctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		_ = aAdm.DeleteTopics(dctx, names...)
	})
	start := time.Now()
	res, err := aAdm.CreateTopics(ctx, specs) // chunked by pkg/rdkafka, as kmm's own creation
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if res[n] != nil {
			t.Fatalf("creating %s on A: %v", n, res[n])
		}
	}
	t.Logf("created %d partitions on A in %s", topics*parts, time.Since(start).Round(time.Millisecond))
	// The broker leads 10,000 new partitions some seconds after CreateTopics returns (on a busy
	// machine: a produce right away got "Unknown topic or partition"): wait until every one
	// answers ListOffsets (which retries unknown partitions) before loading.
	var all []rdkafka.TP
	for _, n := range names {
		for p := range parts {
			all = append(all, rdkafka.TP{Topic: n, Partition: int32(p)})
		}
	}
	lctx, lcancel := context.WithTimeout(ctx, 3*time.Minute)
	_, err = aAdm.ListOffsets(lctx, all, rdkafka.Latest)
	lcancel()
	if err != nil {
		t.Fatalf("the %d new partitions on A do not all answer: %v", len(all), err)
	}
	t.Logf("all %d partitions served on A after %s", len(all), time.Since(start).Round(time.Millisecond))

	produce := func(round int) {
		var recs []rdkafka.Record
		for i, n := range names {
			for p := range parts {
				for k := range perPart {
					recs = append(recs, rdkafka.Record{Topic: n, Partition: int32(p), Value: fmt.Appendf(nil, "%d/%d/%d/%d", round, i, p, k)})
				}
			}
		}
		bed.A.Produce(t, recs)
	}
	produce(0)

	ab := al.A + "->" + al.B
	props := interopProps(t, bed, al, 2, ab+".enabled = true", ab+".topics = "+regexp.QuoteMeta(prefix)+"-.*",
		al.B+".offset.flush.interval.ms = 500")
	remotes := make([]string, topics)
	for i, n := range names {
		remotes[i] = al.A + "." + n
	}
	k := startKMM(t, "replicate", props)
	created := waitRemoteRecords(t, bAdm, remotes, parts, int64(topics*parts*perPart), k, 4*time.Minute)
	t.Logf("first copy of %d records: %s", topics*parts*perPart, created)
	if strings.Contains(k.Stderr(), "excessively large") {
		t.Fatalf("a request the controller refused:\n%s", tail(k.Stderr(), 20))
	}

	// kill -9 while the second round is being copied, then a restart resumes it.
	produce(1)
	time.Sleep(500 * time.Millisecond)
	if code := k.stop(t, syscall.SIGKILL, 10*time.Second); code != -1 {
		t.Fatalf("SIGKILL: exit %d", code)
	}
	k2 := startKMM(t, "replicate", props)
	want := int64(2 * topics * parts * perPart)
	waitRemoteRecords(t, bAdm, remotes, parts, want, k2, 4*time.Minute)
	// At least once: a partition may hold its count with duplicates and still wait for a record
	// the restart copies a moment later; a record missing for a minute is lost.
	lost := missingOnB(t, bed, names, remotes, parts)
	for deadline := time.Now().Add(time.Minute); lost != "" && time.Now().Before(deadline); {
		time.Sleep(2 * time.Second)
		lost = missingOnB(t, bed, names, remotes, parts)
	}
	if lost != "" {
		t.Fatalf("records lost after the restart: %s", lost)
	}

	// A group over the 100 partitions of one topic, committed on A, then a planned failover.
	group := testbed.Unique(t, "many-g")
	offs := map[rdkafka.TP]rdkafka.OffsetMeta{}
	for p := range parts {
		offs[rdkafka.TP{Topic: names[7], Partition: int32(p)}] = rdkafka.OffsetMeta{Offset: int64(3 + p%15)}
	}
	if err := aAdm.AlterGroupOffsets(ctx, group, offs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = aAdm.DeleteGroups(context.Background(), group)
		_ = bAdm.DeleteGroups(context.Background(), group)
	})
	if code := k2.stop(t, syscall.SIGTERM, time.Minute); code != 0 {
		t.Fatalf("replicate after SIGTERM: exit %d\n%s", code, tail(k2.Stderr(), 20))
	}
	fo := time.Now()
	r := Run(t, "failover", props, "--flow", ab, "--mode", "planned", "--group", group, "--fence", "none",
		"--quiet-for", "1s", "--timeout", "5m", "--yes", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("failover: exit %d\n%s\n%s", r.Code, tail(r.Stdout, 40), tail(r.Stderr, 40))
	}
	t.Logf("planned failover of %d partitions: %s", topics*parts, time.Since(fo).Round(time.Millisecond))
	var env struct {
		Items []translation `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &env); err != nil {
		t.Fatalf("%v\n%s", err, tail(r.Stdout, 40))
	}
	if len(env.Items) != parts {
		t.Fatalf("%d translations, want %d", len(env.Items), parts)
	}
	onB := groupOffsetsOn(t, bed.B, group)
	// Exact, and the re-reads are the copies the kill -9 left twice on B past the position:
	// the records from TargetOffset on B beyond those from SourceOffset on A.
	var aTPs, bTPs []rdkafka.TP
	for p := range parts {
		aTPs = append(aTPs, rdkafka.TP{Topic: names[7], Partition: int32(p)})
		bTPs = append(bTPs, rdkafka.TP{Topic: remotes[7], Partition: int32(p)})
	}
	aEnds, err := aAdm.ListOffsets(ctx, aTPs, rdkafka.Latest)
	if err != nil {
		t.Fatal(err)
	}
	bEnds, err := bAdm.ListOffsets(ctx, bTPs, rdkafka.Latest)
	if err != nil {
		t.Fatal(err)
	}
	withDups := 0
	for _, it := range env.Items {
		aEnd, bEnd := aEnds[aTPs[it.Partition]].Offset, bEnds[bTPs[it.Partition]].Offset
		want := (bEnd - it.TargetOffset) - (aEnd - it.SourceOffset)
		if !it.Exact || it.Rereads != want {
			t.Fatalf("not exact, or re-reads not the %d copies past the position (A end %d, B end %d): %+v", want, aEnd, bEnd, it)
		}
		if want > 0 {
			withDups++
		}
		// The record the group reads next on B is the one it would have read next on A.
		key := fmt.Sprintf("%s %s[%d]", group, remotes[7], it.Partition)
		if got, ok := onB[key]; !ok || got != it.TargetOffset {
			t.Fatalf("%s committed on B at %d (present %v), the plan says %d", key, got, ok, it.TargetOffset)
		}
		a := recordAt(t, bed.A, names[7], it.Partition, it.SourceOffset)
		b := recordAt(t, bed.B, remotes[7], it.Partition, it.TargetOffset)
		if string(a.Value) != string(b.Value) {
			t.Fatalf("partition %d: next record on A %q (offset %d), on B %q (offset %d)", it.Partition, a.Value, it.SourceOffset, b.Value, it.TargetOffset)
		}
	}
	t.Logf("all %d group partitions exact; %d hold copies the kill -9 made twice past the position (counted in rereads)", len(env.Items), withDups)
}

// waitRemoteRecords waits until the remote topics on the target hold at least want records in all
// (their end offsets' sum), failing early when the replicator exits; it returns how long it took.
func waitRemoteRecords(t *testing.T, adm *rdkafka.Admin, remotes []string, parts int, want int64, k *proc, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	var tps []rdkafka.TP
	for _, r := range remotes {
		for p := range parts {
			tps = append(tps, rdkafka.TP{Topic: r, Partition: int32(p)})
		}
	}
	testbed.Eventually(t, within, func() error {
		select {
		case <-k.done:
			t.Fatalf("kmm replicate exited (%d):\n%s", k.cmd.ProcessState.ExitCode(), tail(k.Stderr(), 30))
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		res, err := adm.ListOffsets(ctx, tps, rdkafka.Latest)
		if err != nil {
			return err
		}
		// Every partition holds at least its share (a total could be reached with a restart's
		// duplicates in some partitions while others still wait for records).
		var n int64
		short := 0
		for _, tp := range tps {
			n += max(res[tp].Offset, 0)
			if res[tp].Offset < want/int64(len(tps)) {
				short++
			}
		}
		if n < want || short > 0 {
			return fmt.Errorf("%d of %d records on the target, %d partition(s) short", n, want, short)
		}
		return nil
	})
	return time.Since(start).Round(time.Millisecond)
}

// missingOnB reads every remote topic from the start and reports the first source records
// (by value) it does not hold, "" when none is missing.
func missingOnB(t *testing.T, bed *testbed.Bed, names, remotes []string, parts int) string {
	t.Helper()
	want := map[string]bool{}
	seen := map[string]int{}
	for _, recs := range consumeAll(t, bed.B, remotes, parts) {
		seen[string(recs.Value)]++
	}
	for _, recs := range consumeAll(t, bed.A, names, parts) {
		want[string(recs.Value)] = true
	}
	var missing []string
	for v := range want {
		if seen[v] == 0 {
			missing = append(missing, v)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d, e.g. %v", len(missing), len(want), missing[:min(5, len(missing))])
}

// consumeAll reads every partition 0..parts-1 of topics on c from offset 0 to its end offset as of
// the call (topics without compaction, retention or transactions: end offset = record count).
func consumeAll(t *testing.T, c testbed.Cluster, topics []string, parts int) []rdkafka.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var tps []rdkafka.TP
	start := map[rdkafka.TP]int64{}
	for _, tp := range topics {
		for p := range parts {
			k := rdkafka.TP{Topic: tp, Partition: int32(p)}
			tps = append(tps, k)
			start[k] = 0 // not Earliest: librdkafka asks the broker for a logical offset with one request per partition
		}
	}
	ends, err := c.Admin(t).ListOffsets(ctx, tps, rdkafka.Latest)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, tp := range tps {
		total += max(ends[tp].Offset, 0)
	}
	cons, err := rdkafka.NewConsumer("all "+c.Name, rdkafka.Config{"bootstrap.servers": c.Bootstrap, "fetch.queue.backoff.ms": "10"})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	if err := cons.Assign(start); err != nil {
		t.Fatal(err)
	}
	// Only records below each partition's end as of the call count: a partition still being
	// written may deliver more, and counting those would end the read before a slower
	// partition reached its end.
	var out []rdkafka.Record
	for int64(len(out)) < total {
		recs, err := cons.Poll(ctx, 10000, 200*time.Millisecond)
		if err != nil {
			t.Fatalf("reading %d topics on %s after %d/%d records: %v", len(topics), c.Name, len(out), total, err)
		}
		for _, r := range recs {
			if r.Offset < ends[rdkafka.TP{Topic: r.Topic, Partition: r.Partition}].Offset {
				out = append(out, r)
			}
		}
	}
	return out
}
