package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/e2e/testbed/app"
	"github.com/kmmproject/kmm/pkg/flowstate"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// Emergency failover: cluster A's broker is stopped while the application writes; kmm failover
// --mode emergency proves A unreachable, states the RPO per partition from the end-offset
// snapshot kmm replicate stored on B, commits the group's offsets from the checkpoints and marks
// the flow. The group resumes on B with nothing lost among the replicated records and re-reads
// within the reported bound; after A is back, the reported RPO is checked against the records
// actually missing on B. With A up, emergency mode refuses (exit 3, nothing written).
func TestFailoverEmergency(t *testing.T) {
	bed := testbed.Attach(t)
	al := newAliases()
	topic := testbed.Unique(t, "foem")
	const parts = 2
	bed.A.CreateTopic(t, topic, parts, nil)
	ab, ba := al.A+"->"+al.B, al.B+"->"+al.A
	group := testbed.Unique(t, "g")
	q := regexp.QuoteMeta(topic)
	props := interopProps(t, bed, al, 2, ab+".enabled = true", ab+".topics = "+q, ba+".topics = "+q)
	// B's own topic of the same name (DefaultReplicationPolicy): 10 records before the cut, which
	// the reverse flow must never copy to A.
	bed.B.CreateTopic(t, topic, parts, nil)
	produceValues(t, bed.B, topic, parts, 10, "b-before")
	data, err := os.ReadFile(props)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(props, []byte(strings.Replace(string(data), "groups = "+al.A+"-nogroup", "groups = "+regexp.QuoteMeta(group), 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	remote := al.A + "." + topic
	k := startKMM(t, "replicate", props)
	prod, err := app.StartProducer(bed.A.Bootstrap, topic, parts, 500, 0)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := app.StartConsumer(bed.A.Bootstrap, group, topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	testbed.Eventually(t, time.Minute, func() error {
		if cons.Read() < 2000 {
			return fmt.Errorf("consumer read %d", cons.Read())
		}
		return nil
	})
	seenA, err := cons.Stop()
	if err != nil {
		t.Fatal(err)
	}
	// With A up, emergency mode refuses and writes nothing.
	if r := Run(t, "failover", props, "--flow", ab, "--mode", "emergency", "--group", group, "--yes"); r.Code != 3 || !strings.Contains(r.Stderr, "is reachable") {
		t.Fatalf("emergency with the source up: exit %d\n%s", r.Code, r.Stderr)
	}
	if v := readState(t, bed.B)[flowstate.FlowKey(al.A, al.B)]; v != nil {
		t.Fatalf("flow state written: %s", v)
	}
	time.Sleep(3 * time.Second) // the group's last commit reaches a checkpoint (emitted every second)

	// The replicator stops (a lagging replication, seen from B) while the producer keeps
	// writing: at least 100 records are on A and not on B when A's broker goes down (stranded).
	if code := k.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Logf("replicate A->B exit %d", code)
	}
	replicatedAtStop := endOffsets(t, bed.B, remote, parts)
	testbed.Eventually(t, time.Minute, func() error {
		if a := endOffsets(t, bed.A, topic, parts); a[0]+a[1] < replicatedAtStop[0]+replicatedAtStop[1]+100 {
			return fmt.Errorf("A at %v, B at %v", a, replicatedAtStop)
		}
		return nil
	})
	// A goes down while the producer writes.
	testbed.Script(t, "down", "A")
	defer testbed.Script(t, "up", "A")
	if _, err := prod.Stop(); err != nil {
		t.Logf("producer stopped with %v (A is down)", err)
	}
	// The checkpoint-age gate refuses (exit 3) and writes nothing; --accept-loss passes it.
	offsBefore := groupOffsetsOn(t, bed.B, group)
	if r := Run(t, "failover", props, "--flow", ab, "--mode", "emergency", "--group", group, "--max-checkpoint-age", "1ms", "--yes"); r.Code != 3 ||
		!strings.Contains(r.Stderr, "stale checkpoints") || !strings.Contains(r.Stderr, "group "+group+": its newest checkpoint on "+al.B+" is") {
		t.Fatalf("emergency with stale checkpoints: exit %d\n%s", r.Code, r.Stderr)
	}
	if v := readState(t, bed.B)[flowstate.FlowKey(al.A, al.B)]; v != nil {
		t.Fatalf("flow state written by the refused failover: %s", v)
	}
	if after := groupOffsetsOn(t, bed.B, group); fmt.Sprint(after) != fmt.Sprint(offsBefore) {
		t.Fatalf("the refused failover changed group %s on B: %v -> %v", group, offsBefore, after)
	}
	r := Run(t, "failover", props, "--flow", ab, "--mode", "emergency", "--group", group, "--timeout", "1m", "--max-checkpoint-age", "1ms", "--accept-loss", "--yes", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("emergency failover: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	var env struct {
		Items []struct {
			Partition    int32  `json:"partition"`
			TargetOffset int64  `json:"target_offset"`
			Rereads      *int64 `json:"rereads"` // null: not known
		} `json:"items"`
		RPO []struct {
			Partition  int32 `json:"partition"`
			SourceEnd  int64 `json:"source_end_snapshot"`
			Replicated int64 `json:"replicated"`
			RPO        int64 `json:"rpo_records"`
		} `json:"rpo"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &env); err != nil || len(env.RPO) != parts || len(env.Items) != parts {
		t.Fatalf("%v\n%s\n%s", err, r.Stdout, r.Stderr)
	}
	t.Logf("emergency failover: %s", tail(r.Stderr, 12))
	if !strings.Contains(r.Stderr, "--accept-loss: failing over despite stale checkpoints") {
		t.Errorf("--accept-loss did not say it passed the stale checkpoints:\n%s", r.Stderr)
	}
	t.Logf("stored progress on B after the failover: %v", sourcePositions(t, bed.B, al.A, topic))
	st, _ := flowstate.DecodeFlow(readState(t, bed.B)[flowstate.FlowKey(al.A, al.B)])
	if st == nil || st.State != flowstate.FailedOver || st.Mode != "emergency" || len(st.Cut) != parts {
		t.Fatalf("flow state: %+v", st)
	}
	tEnds := endOffsets(t, bed.B, remote, parts)
	var bound int64
	for _, it := range env.Items {
		if it.Rereads == nil {
			bound = -1
			break
		}
		bound += *it.Rereads
	}
	// The application runs on B: it writes into B's own topic (sequence numbers from 1e6: 40 or
	// so before the group resumes, 40 or so after it stopped again) and the group reads the
	// replicated records and the first batch of new ones (a regex subscription over both topics).
	const bSeq0 = 1_000_000
	produceSeq := func(from int64, n int64) int64 {
		pr, err := app.StartProducer(bed.B.Bootstrap, topic, parts, 400, from)
		if err != nil {
			t.Fatal(err)
		}
		testbed.Eventually(t, time.Minute, func() error {
			if pr.Produced() < from+n {
				return fmt.Errorf("produced %d of %d on B", pr.Produced()-from, n)
			}
			return nil
		})
		next, err := pr.Stop()
		if err != nil {
			t.Fatal(err)
		}
		return next
	}
	b1 := produceSeq(bSeq0, 40)
	cB, err := app.StartConsumer(bed.B.Bootstrap, group, "^("+regexp.QuoteMeta(remote)+"|"+regexp.QuoteMeta(topic)+")$", 0)
	if err != nil {
		t.Fatal(err)
	}
	var onB int64
	for _, e := range tEnds {
		onB += e
	}
	testbed.Eventually(t, time.Minute, func() error { // + B's 10 records from before the cut (no sequence number)
		if got, want := int64(len(seenA))+cB.Read(), onB+10+(b1-bSeq0); got < want {
			return fmt.Errorf("read %d of the %d records on B", got, want)
		}
		return nil
	})
	time.Sleep(time.Second)
	seenB, err := cB.Stop()
	if err != nil {
		t.Fatal(err)
	}
	b2 := produceSeq(b1, 40)
	// B holds, per partition p, the first tEnds[p] records of A's partition p: seq p, p+2, ...
	var lost, dup int64
	for p := int64(0); p < parts; p++ {
		for i := int64(0); i < tEnds[p]; i++ {
			seq := p + parts*i
			switch n := seenA[seq] + seenB[seq]; {
			case n == 0:
				lost++
			case n > 1:
				dup += int64(n - 1)
			}
		}
	}
	if lost > 0 || (bound >= 0 && dup > bound) {
		t.Errorf("group on B: %d lost among the replicated records, %d re-read (bound %d)", lost, dup, bound)
	}
	t.Logf("re-read %d (reported bound %d)", dup, bound)

	// A back: the records written on A and missing on B are what the report said, plus those
	// written after the snapshot (which it says it cannot know).
	testbed.Script(t, "up", "A")
	aEnds := endOffsets(t, bed.A, topic, parts)
	for _, row := range env.RPO {
		p := row.Partition
		if row.Replicated != tEnds[p] {
			t.Errorf("partition %d: reported replicated position %d, B holds %d records", p, row.Replicated, tEnds[p])
		}
		actual := aEnds[p] - tEnds[p]
		afterSnapshot := aEnds[p] - max(row.SourceEnd, row.Replicated)
		if actual != row.RPO+afterSnapshot {
			t.Errorf("partition %d: %d records missing on B, reported RPO %d + %d written after the snapshot", p, actual, row.RPO, afterSnapshot)
		}
		t.Logf("partition %d: RPO reported %d, missing on B %d (%d written after the snapshot)", p, row.RPO, actual, afterSnapshot)
	}

	// Failback (issue 14's full cycle): failback stores the reverse flow's progress from the flow
	// state's reverse_ends (A was down at the failover), counts the records stranded on A exactly
	// (per partition: A's end minus what reached B), quarantines them with their original
	// offsets, and the group resumes on A past them and at the copies of B's records it had not
	// read: across A -> B -> A it reads every record but the stranded ones exactly once.
	var revEnds int64
	for _, e := range st.ReverseEnds {
		if e.Topic == topic {
			revEnds += e.End
		}
	}
	if revEnds != 10 {
		t.Errorf("reverse_ends %+v: want B's %s at 10 records", st.ReverseEnds, topic)
	}
	fb := startKMM(t, "failback", props, "--flow", ab, "--group", group, "--stranded", "quarantine", "--quiet-for", "1s", "--timeout", "2m", "--yes", "-o", "json")
	testbed.Eventually(t, 2*time.Minute, func() error { // the reverse positions are stored before B->A starts
		if !strings.Contains(fb.Stderr(), "step 3/") {
			return fmt.Errorf("failback not past its reverse-progress step:\n%s", fb.Stderr())
		}
		return nil
	})
	kr := startKMM(t, "replicate", interopProps(t, bed, al, 2, ab+".enabled = false", ba+".enabled = true", ba+".topics = "+q))
	select {
	case <-fb.done:
	case <-time.After(3 * time.Minute):
		t.Fatalf("failback did not finish:\n%s", fb.Stderr())
	}
	if code := fb.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("failback: exit %d\n%s", code, fb.Stderr())
	}
	if code := kr.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Errorf("replicate B->A exit %d", code)
	}
	t.Logf("failback: %s", tail(fb.Stderr(), 14))
	var fenv struct {
		N        int64 `json:"stranded_records"`
		Stranded []struct {
			Partition int32 `json:"partition"`
			From      int64 `json:"from"`
			To        int64 `json:"to"`
			Records   int64 `json:"records"`
		} `json:"stranded"`
	}
	if err := json.Unmarshal(fb.stdout.Bytes(), &fenv); err != nil {
		t.Fatalf("%v\n%s", err, fb.stdout)
	}
	var stranded int64
	for p := 0; p < parts; p++ {
		stranded += aEnds[p] - tEnds[p]
	}
	if stranded < 100 || fenv.N != stranded || len(fenv.Stranded) != parts {
		t.Errorf("failback counted %d stranded records %+v, A holds %d beyond what reached B (at least 100)", fenv.N, fenv.Stranded, stranded)
	}
	for _, r := range fenv.Stranded {
		if r.From != tEnds[r.Partition] || r.To != aEnds[r.Partition] || r.Records != r.To-r.From {
			t.Errorf("stranded in partition %d: %+v, want [%d, %d)", r.Partition, r, tEnds[r.Partition], aEnds[r.Partition])
		}
	}
	// The quarantine holds each stranded record once, its original partition and offset in the
	// headers (A's records carry seq p + 2*offset in partition p).
	strandedSeq := map[int64]bool{}
	for _, x := range bed.A.ConsumeN(t, "kmm.stranded."+topic, parts, int(stranded), time.Minute) {
		hs := map[string]string{}
		for _, h := range x.Headers {
			hs[h.Key] = string(h.Value)
		}
		p, _ := strconv.ParseInt(hs["kmm.stranded.partition"], 10, 32)
		off, err1 := strconv.ParseInt(hs["kmm.stranded.offset"], 10, 64)
		seq, err2 := strconv.ParseInt(hs["seq"], 10, 64)
		switch {
		case err1 != nil || err2 != nil || hs["kmm.stranded.topic"] != topic || p != int64(x.Partition):
			t.Errorf("quarantined record without its origin: headers %v", hs)
		case off < tEnds[p] || off >= aEnds[p] || seq != p+parts*off:
			t.Errorf("quarantined record seq %d from %s[%d]@%d: not a stranded record ([%d, %d))", seq, topic, p, off, tEnds[p], aEnds[p])
		case strandedSeq[seq]:
			t.Errorf("record seq %d quarantined twice", seq)
		}
		strandedSeq[seq] = true
	}
	if int64(len(strandedSeq)) != stranded {
		t.Errorf("quarantine holds %d distinct records, want %d", len(strandedSeq), stranded)
	}
	offs, err := bed.A.Admin(t).ListGroupOffsets(context.Background(), group)
	if err != nil {
		t.Fatal(err)
	}
	for p := 0; p < parts; p++ {
		if got := offs[rdkafka.TP{Topic: topic, Partition: int32(p)}].Offset; got != aEnds[p] {
			t.Errorf("group on A partition %d: %d, want %d (the cut %d, past %d stranded)", p, got, aEnds[p], tEnds[p], aEnds[p]-tEnds[p])
		}
	}
	back := al.B + "." + topic
	if ends := endOffsets(t, bed.A, back, parts); ends[0]+ends[1] != b2-bSeq0 {
		t.Errorf("B->A copied %v records, want the %d written on B after the cut (none of the 10 before)", ends, b2-bSeq0)
	}
	// The group on A: nothing more of A's topic, the copies of B's second batch.
	cA, err := app.StartConsumer(bed.A.Bootstrap, group, "^("+regexp.QuoteMeta(topic)+"|"+regexp.QuoteMeta(back)+")$", 0)
	if err != nil {
		t.Fatal(err)
	}
	testbed.Eventually(t, time.Minute, func() error {
		if cA.Read() < b2-b1 {
			return fmt.Errorf("read %d of B's %d records on A", cA.Read(), b2-b1)
		}
		return nil
	})
	time.Sleep(time.Second) // anything else it would read (a stranded record, a copy twice) arrives
	seenA2, err := cA.Stop()
	if err != nil {
		t.Fatal(err)
	}
	lost, dup = 0, 0
	var strandedRead, aRereadOnA int64
	for p := int64(0); p < parts; p++ {
		for i := int64(0); i < aEnds[p]; i++ {
			seq := p + parts*i
			n := seenA[seq] + seenB[seq] + seenA2[seq]
			switch {
			case i >= tEnds[p]:
				strandedRead += int64(n)
				if !strandedSeq[seq] {
					t.Errorf("stranded record seq %d not in the quarantine", seq)
				}
			case n == 0:
				lost++
			case n > 1:
				dup += int64(n - 1)
			}
			aRereadOnA += int64(seenA2[seq])
		}
	}
	bLost, bDup := app.Check(b2-bSeq0, shift(seenB, bSeq0), shift(seenA2, bSeq0))
	if lost > 0 || (bound >= 0 && dup > bound) || strandedRead > 0 || aRereadOnA > 0 || len(bLost) > 0 || len(bDup) > 0 {
		t.Errorf("across A -> B -> A: %d of A's replicated records lost, %d re-read (the emergency bound %d), %d stranded read, %d of A's records read again on A; B's records: lost %v, read twice %v",
			lost, dup, bound, strandedRead, aRereadOnA, bLost, bDup)
	}
	t.Logf("failback: %d stranded record(s) quarantined; %d records written on B copied back, %d of them read on A", stranded, b2-bSeq0, b2-b1)
}

// shift returns seen with every sequence number minus d (B's records start at d).
func shift(seen map[int64]int, d int64) map[int64]int {
	out := map[int64]int{}
	for k, v := range seen {
		if k >= d {
			out[k-d] = v
		}
	}
	return out
}
