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
	"github.com/kmmproject/kmm/pkg/flowstate"
	"github.com/kmmproject/kmm/pkg/plan"
	"github.com/kmmproject/kmm/pkg/rdkafka"
	"github.com/kmmproject/kmm/pkg/switchover"
)

// recordAt reads the record at offset off of topic[p] on c.
func recordAt(t *testing.T, c testbed.Cluster, topic string, p int32, off int64) rdkafka.Record {
	t.Helper()
	cons, err := rdkafka.NewConsumer("at "+c.Name, rdkafka.Config{"bootstrap.servers": c.Bootstrap})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	if err := cons.Assign(map[rdkafka.TP]int64{{Topic: topic, Partition: p}: off}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		recs, err := cons.Poll(ctx, 1, 500*time.Millisecond)
		if err != nil {
			t.Fatalf("reading %s[%d]@%d on %s: %v", topic, p, off, c.Name, err)
		}
		if len(recs) > 0 {
			return recs[0]
		}
	}
}

func setOffsets(t *testing.T, c testbed.Cluster, group, topic string, offs ...int64) {
	t.Helper()
	m := map[rdkafka.TP]rdkafka.OffsetMeta{}
	for p, o := range offs {
		m[rdkafka.TP{Topic: topic, Partition: int32(p)}] = rdkafka.OffsetMeta{Offset: o}
	}
	if err := c.Admin(t).AlterGroupOffsets(context.Background(), group, m); err != nil {
		t.Fatal(err)
	}
}

func produceValues(t *testing.T, c testbed.Cluster, topic string, parts, n int, prefix string) {
	t.Helper()
	recs := make([]rdkafka.Record, n)
	for i := range recs {
		recs[i] = rdkafka.Record{Topic: topic, Partition: int32(i % parts), Value: []byte(fmt.Sprintf("%s-%d", prefix, i))}
	}
	c.Produce(t, recs)
}

// walkKills runs args kills times, each run SIGKILLed after the one step it applied (the test
// hook pauses after the first step of each execution): run k resumes the run killed before it
// with k-1 of total steps done, so a crash after every step but the last is survived in turn.
func walkKills(t *testing.T, kills, total int, args ...string) {
	t.Helper()
	for k := 1; k <= kills; k++ {
		p := killAtPause(t, 1, 2*time.Minute, args...)
		if k > 1 && !strings.Contains(p.Stderr(), fmt.Sprintf(": %d of %d steps done", k-1, total)) {
			t.Fatalf("kill %d: the run did not resume after %d of %d steps:\n%s", k, k-1, total, p.Stderr())
		}
		if strings.Contains(p.Stderr(), "the plan changed since") {
			t.Errorf("kill %d: the plan of the resumed run changed:\n%s", k, p.Stderr())
		}
		if m := regexp.MustCompile(`step (\d+)/(\d+) \S+: (applied|already-done)`).FindStringSubmatch(p.Stderr()); m == nil || m[1] != fmt.Sprint(k) || m[2] != fmt.Sprint(total) {
			t.Fatalf("kill %d: want step %d/%d applied before the kill:\n%s", k, k, total, p.Stderr())
		}
	}
}

// A planned failover and a failback with both sides up, under both replication policies:
// records written on A after the cut are stranded (Default: quarantined, the failback SIGKILLed
// after each step in turn; Identity: --stranded deliver, a group at the cut reads them, and
// --stranded skip's plan, dry); B's post-failover writes come
// back to A (into the same topic under Identity, into B.<topic> under Default) and nothing of A's
// own is echoed; a group behind the cut and a group that read post-failover records on B resume
// on A at the copy of the record they would have read next on B (0 lost, 0 re-read); the flow is
// REPLICATING again, and A->B then copies only new writes.
func TestFailbackRoundTrip(t *testing.T) {
	for _, pol := range []string{"identity", "default"} {
		t.Run(pol, func(t *testing.T) { failbackRoundTrip(t, pol) })
	}
}

func failbackRoundTrip(t *testing.T, pol string) {
	bed := testbed.Attach(t)
	al := newAliases()
	topic := testbed.Unique(t, "fb")
	const parts = 2
	bed.A.CreateTopic(t, topic, parts, nil)
	ab, ba := al.A+"->"+al.B, al.B+"->"+al.A
	q := regexp.QuoteMeta(topic)
	var lines []string
	remote, back := topic, topic // the topic on B the groups read, the topic B->A writes on A
	if pol == "identity" {
		lines = append(lines, "replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy")
	} else {
		remote, back = al.A+"."+topic, al.B+"."+topic
		bed.B.CreateTopic(t, topic, parts, nil) // B's own topic: the writes after the failover
	}
	props := interopProps(t, bed, al, 2, append(lines, ab+".enabled = true", ab+".topics = "+q, ba+".topics = "+q)...)
	revProps := interopProps(t, bed, al, 2, append(lines, ab+".enabled = false", ba+".enabled = true", ba+".topics = "+q)...)
	behind, caught := testbed.Unique(t, "behind"), testbed.Unique(t, "caught")
	groups := []string{"--group", behind, "--group", caught}
	atCut := testbed.Unique(t, "atcut") // Identity: a group at the cut, --stranded deliver
	if pol == "identity" {
		groups = append(groups, "--group", atCut)
	}
	// Failback of a flow that is not failed over: exit 3 naming the state, nothing written.
	if r := Run(t, "failback", props, "--flow", ab, "--yes"); r.Code != 3 || !strings.Contains(r.Stderr, "is REPLICATING") {
		t.Errorf("failback before failover: exit %d\n%s", r.Code, r.Stderr)
	}
	if v := readState(t, bed.B)[flowstate.FlowKey(al.A, al.B)]; v != nil {
		t.Errorf("the refused failback wrote a flow state: %s", v)
	}
	k := startKMM(t, "replicate", props)
	produceValues(t, bed.A, topic, parts, 300, "pre")
	setOffsets(t, bed.A, behind, topic, 50, 50)
	setOffsets(t, bed.A, caught, topic, 150, 150)
	if pol == "identity" {
		setOffsets(t, bed.A, atCut, topic, 150, 150)
	}
	waitCount(t, bed.B, remote, parts, 300, 2*time.Minute)
	r := Run(t, append(append([]string{"failover", props, "--flow", ab}, groups...), "--quiet-for", "1s", "--timeout", "2m", "--yes", "-o", "json")...)
	if r.Code != 0 {
		t.Fatalf("failover: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if code := k.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Errorf("replicate A->B exit %d", code)
	}

	// After the cut: 20 records written on A never reach B (stranded); 100 written on B (into the
	// remote topic under Identity, B's own topic under Default); the caught-up group reads 20 of
	// them per partition on B.
	produceValues(t, bed.A, topic, parts, 20, "stranded")
	produceValues(t, bed.B, topic, parts, 100, "post")
	// Where each group reads on B, and where it must resume on A (Identity: A's topic holds 150
	// records from before the cut, 10 stranded, then the copies; Default: the copies are in
	// B.<topic> on A, and the caught-up group moves past the stranded records in <topic>).
	type at struct {
		onB      string
		bOff     int64
		onA      string
		wantOffA int64
		stranded bool // --stranded deliver: the next record on A is the first stranded one
	}
	var want map[string][]at
	if pol == "identity" {
		setOffsets(t, bed.B, caught, topic, 170, 170)
		want = map[string][]at{behind: {{topic, 50, topic, 50, false}}, caught: {{topic, 170, topic, 180, false}}, atCut: {{topic, 150, topic, 150, true}}}
	} else {
		setOffsets(t, bed.B, caught, topic, 20, 20)
		// 4 records produced on B into the remote topic: they cannot flow back (reported).
		produceValues(t, bed.B, remote, parts, 4, "into-remote")
		want = map[string][]at{behind: {{remote, 50, topic, 50, false}}, caught: {{remote, 150, topic, 160, false}, {topic, 20, back, 20, false}}}
	}
	if pol == "identity" {
		// A group with a member on A: exit 3, nothing written (the flow stays FAILED_OVER, no run).
		cons, err := rdkafka.NewConsumer("A", rdkafka.Config{"bootstrap.servers": bed.A.Bootstrap, "group.id": behind, "session.timeout.ms": "10000"})
		if err != nil {
			t.Fatal(err)
		}
		if err := cons.Subscribe(topic); err != nil {
			t.Fatal(err)
		}
		pctx, stopPoll := context.WithCancel(context.Background())
		polled := make(chan struct{})
		go func() {
			defer close(polled)
			for pctx.Err() == nil {
				_, _ = cons.Poll(pctx, 10, 100*time.Millisecond) // auto-commit is off: it commits nothing
			}
		}()
		testbed.Eventually(t, 30*time.Second, func() error {
			ds, err := bed.A.Admin(t).DescribeGroups(context.Background(), behind)
			if err != nil || len(ds) != 1 || ds[0].Members == 0 {
				return fmt.Errorf("consumer not in the group yet: %v %v", ds, err)
			}
			return nil
		})
		r := Run(t, append(append([]string{"failback", props, "--flow", ab}, groups...), "--yes")...)
		// The reverse flow has not copied B's 100 new records: over the gate.
		lr := Run(t, append(append([]string{"failback", props, "--flow", ab}, groups...), "--max-reverse-lag", "10", "--force", "--yes")...)
		stopPoll()
		<-polled
		cons.Close()
		if r.Code != 3 || !strings.Contains(r.Stderr, "member(s) on "+al.A) || !strings.Contains(r.Stderr, "nothing was changed") {
			t.Errorf("active group on A: exit %d\n%s", r.Code, r.Stderr)
		}
		if lr.Code != 3 || !strings.Contains(lr.Stderr, "100 record(s) left to copy") || !strings.Contains(lr.Stderr, "nothing was changed") {
			t.Errorf("reverse lag over the gate: exit %d\n%s", lr.Code, lr.Stderr)
		}
		state := readState(t, bed.B)
		if st, _ := flowstate.DecodeFlow(state[flowstate.FlowKey(al.A, al.B)]); st == nil || st.State != flowstate.FailedOver {
			t.Errorf("after the refused failback: %+v", st)
		}
		if v := state[plan.RunKey("failback", ab)]; v != nil {
			t.Errorf("the refused failback journaled a run: %s", v)
		}
	}
	mode := map[string]string{"identity": "deliver", "default": "quarantine"}[pol]
	args := append(append([]string{"failback", props, "--flow", ab}, groups...), "--stranded", mode,
		"--quiet-for", "1s", "--timeout", "2m", "--yes", "-o", "json")
	// Default: the user runs B->A; Identity: failback runs it in process (--start-reverse: the
	// file leaves B->A disabled), drains it and stops it.
	var kr *proc
	if pol == "default" {
		kr = startKMM(t, "replicate", revProps)
	} else {
		args = append(args, "--start-reverse")
	}
	if pol == "identity" {
		// --stranded skip, dry: no copy step, the 20 records counted and the note says the groups
		// move past them (the move itself is quarantine's, checked under Default).
		d := Run(t, append(append([]string{"failback", props, "--flow", ab}, groups...), "--stranded", "skip", "--dry-run", "-o", "json")...)
		var dry struct {
			Plan struct {
				Steps []struct{ Kind string } `json:"steps"`
				Notes []string                `json:"notes"`
			} `json:"plan"`
			N    int64  `json:"stranded_records"`
			Mode string `json:"stranded_mode"`
		}
		if err := json.Unmarshal([]byte(d.Stdout), &dry); d.Code != 0 || err != nil || dry.N != 20 || dry.Mode != "skip" ||
			!strings.Contains(strings.Join(dry.Plan.Notes, "\n"), "--stranded skip: 20 stranded record(s) on "+al.A+" are not copied (groups at the cut move past them)") {
			t.Errorf("--stranded skip --dry-run: exit %d, %v, %+v\n%s", d.Code, err, dry, d.Stderr)
		}
		for _, s := range dry.Plan.Steps {
			if s.Kind == switchover.KindStranded {
				t.Errorf("--stranded skip plans a copy step: %+v", dry.Plan.Steps)
			}
		}
	}
	if pol == "default" {
		// --dry-run prints the plan as data and changes nothing.
		d := Run(t, append(args, "--dry-run")...)
		var dry struct {
			Plan struct {
				Steps []struct{ ID string } `json:"steps"`
			} `json:"plan"`
			N int64 `json:"stranded_records"`
		}
		if err := json.Unmarshal([]byte(d.Stdout), &dry); d.Code != 0 || err != nil || len(dry.Plan.Steps) != 9 || dry.N != 20 {
			t.Errorf("--dry-run: exit %d, %v, %+v\n%s", d.Code, err, dry, d.Stderr)
		}
		if st, _ := flowstate.DecodeFlow(readState(t, bed.B)[flowstate.FlowKey(al.A, al.B)]); st == nil || st.State != flowstate.FailedOver {
			t.Errorf("after --dry-run: %+v", st)
		}
		// SIGKILLed after each step in turn (mark, quarantine copy, reverse progress, quiet, drain,
		// two commits, forward progress): every run resumes the same run one step further, nothing
		// is done twice (the quarantine holds each stranded record once, asserted below).
		walkStart := time.Now()
		walkKills(t, 8, 9, args...)
		t.Logf("8 runs killed after a step each: %s", time.Since(walkStart).Round(time.Millisecond))
		if st, _ := flowstate.DecodeFlow(readState(t, bed.B)[flowstate.FlowKey(al.A, al.B)]); st == nil || st.State != flowstate.FailingBack || len(st.Cut) != parts {
			t.Fatalf("after the kills the flow should be FAILING_BACK with the cut: %+v", st)
		}
	}
	r = Run(t, args...)
	if pol == "default" && !regexp.MustCompile(`resuming run \S+ started at \S+( on \S+)?: 8 of 9 steps done`).MatchString(r.Stderr) {
		t.Errorf("the re-run did not resume:\n%s", r.Stderr)
	}
	if r.Code != 0 {
		t.Fatalf("failback: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if kr != nil {
		if code := kr.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
			t.Errorf("replicate B->A exit %d", code)
		}
	} else {
		// The in-process B->A stopped after the drain with its progress at B's ends (200 per partition).
		if !strings.Contains(r.Stderr, "starting "+ba+" in this process (--start-reverse)") || !strings.Contains(r.Stderr, ba+" drained and stopped") {
			t.Errorf("--start-reverse did not say it ran and stopped %s:\n%s", ba, r.Stderr)
		}
		if pos := sourcePositionsOf(t, bed.A, al.B, al.B, topic); pos[0] != 199 || pos[1] != 199 {
			t.Errorf("B->A's stored progress on A after --start-reverse: %v, want 199 per partition (B's ends)", pos)
		}
	}
	var env struct {
		Items []switchover.ExactOffset              `json:"items"`
		Strd  []switchover.StrandedRange            `json:"stranded"`
		N     int64                                 `json:"stranded_records"`
		RW    int64                                 `json:"remote_writes_records"`
		Plan  struct{ Steps []struct{ ID string } } `json:"plan"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &env); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	t.Logf("failback:\n%s", tail(r.Stderr, 20))
	if wantRW := map[string]int64{"identity": 0, "default": 4}[pol]; env.RW != wantRW {
		t.Errorf("records written into the remote topic on B after the cut: reported %d, want %d", env.RW, wantRW)
	}
	if env.N != 20 || len(env.Strd) != parts {
		t.Errorf("stranded: %d records %+v, want 20 over %d partitions", env.N, env.Strd, parts)
	}
	if pol == "default" {
		// The quarantine holds exactly the stranded records, with their original offsets.
		qrecs := bed.A.ConsumeN(t, switchover.StrandedTopic(topic), parts, 20, time.Minute)
		for _, x := range qrecs {
			var off string
			for _, h := range x.Headers {
				if h.Key == switchover.HeaderStrandedOffset {
					off = string(h.Value)
				}
			}
			if !strings.HasPrefix(string(x.Value), "stranded-") || off == "" {
				t.Errorf("quarantined record %q (offset header %q)", x.Value, off)
			}
		}
		if len(qrecs) != 20 {
			t.Errorf("quarantine holds %d records, want 20", len(qrecs))
		}
	} else if ts, err := bed.A.Admin(t).ListTopics(context.Background()); err != nil || ts[switchover.StrandedTopic(topic)].Partitions != 0 {
		t.Errorf("--stranded deliver created %s on A (%v)", switchover.StrandedTopic(topic), err)
	}
	// B's post-failover writes are on A once, A's own records not echoed.
	if pol == "identity" {
		if ends := endOffsets(t, bed.A, topic, parts); ends[0] != 210 || ends[1] != 210 {
			t.Errorf("A's %s ends %v, want [210 210] (150 before the cut, 10 stranded, 50 copied back per partition)", topic, ends)
		}
	} else {
		if ends := endOffsets(t, bed.A, topic, parts); ends[0] != 160 || ends[1] != 160 {
			t.Errorf("A's %s ends %v, want [160 160] (150 before the cut, 10 stranded)", topic, ends)
		}
		if ends := endOffsets(t, bed.A, back, parts); ends[0] != 50 || ends[1] != 50 {
			t.Errorf("A's %s ends %v, want [50 50] (B's writes, copied back)", back, ends)
		}
	}
	// Each group resumes on A at the copy of the record it would have read next on B.
	nItems := 0
	for _, w := range want {
		nItems += len(w) * parts
	}
	if pol == "default" {
		nItems = 0 // the killed runs made the translations; this one only marked the flow
	}
	if len(env.Items) != nItems {
		t.Fatalf("translations: %+v", env.Items)
	}
	for _, e := range env.Items {
		if !e.Exact || e.Rereads != 0 || e.Skips != 0 {
			t.Errorf("not exact: %+v", e)
		}
	}
	for g, ws := range want {
		offs, err := bed.A.Admin(t).ListGroupOffsets(context.Background(), g)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			for p := int32(0); p < parts; p++ {
				got := offs[rdkafka.TP{Topic: w.onA, Partition: p}].Offset
				if got != w.wantOffA {
					t.Errorf("group %s %s[%d] on A: %d, want %d (from %s@%d on B)", g, w.onA, p, got, w.wantOffA, w.onB, w.bOff)
					continue
				}
				// The same next record (records written into a remote topic on B after the cut
				// never reach A: there, the group is at A's end).
				if w.stranded {
					if have := recordAt(t, bed.A, w.onA, p, got); !strings.HasPrefix(string(have.Value), "stranded-") {
						t.Errorf("group %s partition %d (--stranded deliver): on A at %d reads %q next, want the first stranded record", g, p, got, have.Value)
					}
					continue
				}
				if bEnd, aEnd := endOffsets(t, bed.B, w.onB, parts)[p], endOffsets(t, bed.A, w.onA, parts)[p]; w.bOff < bEnd && got < aEnd {
					if have, wantRec := recordAt(t, bed.A, w.onA, p, got), recordAt(t, bed.B, w.onB, p, w.bOff); string(have.Value) != string(wantRec.Value) {
						t.Errorf("group %s partition %d: on A at %d reads %q next, on B it would have read %q", g, p, got, have.Value, wantRec.Value)
					}
				}
			}
		}
	}
	for _, c := range []testbed.Cluster{bed.A, bed.B} {
		st, err := flowstate.DecodeFlow(readState(t, c)[flowstate.FlowKey(al.A, al.B)])
		if err != nil || st == nil || st.State != flowstate.Replicating || st.Epoch != 4 {
			t.Errorf("flow state on %s: %+v (%v)", c.Name, st, err)
		}
	}
	// A->B runs again and copies only new writes (B's remote topic held 300 from before the cut,
	// and under Identity the 100 written there after it).
	before := int64(304) // + the 4 written into the remote topic on B
	if pol == "identity" {
		before = 400
	}
	k2 := startKMM(t, "replicate", props)
	produceValues(t, bed.A, topic, parts, 6, "new")
	waitCount(t, bed.B, remote, parts, int(before)+6, 2*time.Minute)
	time.Sleep(2 * time.Second) // a copy of anything else would arrive within the refresh
	if code := k2.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Errorf("replicate A->B after failback exit %d\n%s", code, tail(k2.Stderr(), 20))
	}
	if ends := endOffsets(t, bed.B, remote, parts); ends[0]+ends[1] != before+6 {
		t.Errorf("B's %s ends %v after A->B resumed: want %d records (%d + 6 new, nothing echoed, no stranded record)", remote, ends, before+6, before)
	}
}
