package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
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
			Partition    int32 `json:"partition"`
			TargetOffset int64 `json:"target_offset"`
			Rereads      int64 `json:"rereads"`
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
	for _, l := range strings.Split(k.Stderr(), "\n") {
		if strings.Contains(l, "level=") {
			t.Logf("replicate: %s", l)
		}
	}
	if !strings.Contains(k.Stderr(), "marked FAILING_OVER") {
		t.Logf("the replicate did not log the mark (it may have stopped on the outage):\n%s", tail(k.Stderr(), 10))
	}
	t.Logf("stored progress on B after the failover: %v", sourcePositions(t, bed.B, al.A, topic))
	st, _ := flowstate.DecodeFlow(readState(t, bed.B)[flowstate.FlowKey(al.A, al.B)])
	if st == nil || st.State != flowstate.FailedOver || st.Mode != "emergency" || len(st.Cut) != parts {
		t.Fatalf("flow state: %+v", st)
	}
	tEnds := endOffsets(t, bed.B, remote, parts)
	var bound int64
	for _, it := range env.Items {
		if it.Rereads < 0 {
			bound = -1
			break
		}
		bound += it.Rereads
	}
	// The group resumes on B.
	cB, err := app.StartConsumer(bed.B.Bootstrap, group, remote, 0)
	if err != nil {
		t.Fatal(err)
	}
	var onB int64
	for _, e := range tEnds {
		onB += e
	}
	testbed.Eventually(t, time.Minute, func() error {
		if got := int64(len(seenA)) + cB.Read(); got < onB {
			return fmt.Errorf("read %d of the %d records on B", got, onB)
		}
		return nil
	})
	time.Sleep(time.Second)
	seenB, err := cB.Stop()
	if err != nil {
		t.Fatal(err)
	}
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
	// and quarantines them, and the group resumes on A past them.
	var revEnds int64
	for _, e := range st.ReverseEnds {
		if e.Topic == topic {
			revEnds += e.End
		}
	}
	if revEnds != 10 {
		t.Errorf("reverse_ends %+v: want B's %s at 10 records", st.ReverseEnds, topic)
	}
	if code := k.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Logf("replicate A->B exit %d", code)
	}
	produceValues(t, bed.B, topic, parts, 40, "post")
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
		N int64 `json:"stranded_records"`
	}
	if err := json.Unmarshal(fb.stdout.Bytes(), &fenv); err != nil {
		t.Fatalf("%v\n%s", err, fb.stdout)
	}
	var stranded int64
	for p := 0; p < parts; p++ {
		stranded += aEnds[p] - tEnds[p]
	}
	if fenv.N != stranded {
		t.Errorf("failback counted %d stranded records, A holds %d beyond what reached B", fenv.N, stranded)
	}
	if stranded > 0 {
		if got := bed.A.ConsumeN(t, "kmm.stranded."+topic, parts, int(stranded), time.Minute); int64(len(got)) != stranded {
			t.Errorf("quarantine holds %d records, want %d", len(got), stranded)
		}
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
	if ends := endOffsets(t, bed.A, al.B+"."+topic, parts); ends[0]+ends[1] != 40 {
		t.Errorf("B->A copied %v records, want the 40 written on B after the cut (none of the 10 before)", ends)
	}
	t.Logf("failback: %d stranded record(s) quarantined, 40 copied back", stranded)
}
