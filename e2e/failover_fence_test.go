package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed"
	"github.com/kmmproject/kmm/pkg/flowstate"
	"github.com/kmmproject/kmm/pkg/rdkafka"
	"github.com/kmmproject/kmm/pkg/switchover"
)

// aliceProducer produces as User:alice (an ordinary principal of the bed's SASL listener).
func aliceProducer(t *testing.T, c testbed.Cluster) *rdkafka.Producer {
	t.Helper()
	p, err := rdkafka.NewProducer("alice", rdkafka.Config{"bootstrap.servers": c.SASL, "security.protocol": "SASL_PLAINTEXT",
		"sasl.mechanisms": "PLAIN", "sasl.username": "alice", "sasl.password": "alice-secret", "enable.idempotence": "false",
		"acks": "all", "message.timeout.ms": "10000"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func aliceWrite(p *rdkafka.Producer, topic string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := p.ProduceSync(ctx, []rdkafka.Record{{Topic: topic, Partition: 0, Key: []byte("alice"), Value: []byte("alice")}})
	return err
}

// Planned failover with --fence acl (Identity policy, where the reverse flow would echo A's own
// records): a producer on A is refused after the fence, the flow state records the DENY ACLs and
// B's ends (reverse_ends), the reverse flow's progress is stored on A at B's ends, and kmm
// replicate B->A then copies exactly the records written on B after the failover, none before.
func TestFailoverFenceACLAndReverseProgress(t *testing.T) {
	bed := testbed.Attach(t)
	al := newAliases()
	topic := testbed.Unique(t, "fence")
	const parts = 2
	bed.A.CreateTopic(t, topic, parts, nil)
	ab, ba := al.A+"->"+al.B, al.B+"->"+al.A
	identity := "replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
	props := interopProps(t, bed, al, 2, identity, ab+".enabled = true", ab+".topics = "+regexp.QuoteMeta(topic), ba+".topics = "+regexp.QuoteMeta(topic))
	k := startKMM(t, "replicate", props)

	const before, after = 400, 250
	recs := make([]rdkafka.Record, before)
	for i := range recs {
		recs[i] = rdkafka.Record{Topic: topic, Partition: int32(i % parts), Value: []byte(fmt.Sprintf("pre-%d", i))}
	}
	bed.A.Produce(t, recs)
	alice := aliceProducer(t, bed.A)
	if err := aliceWrite(alice, topic); err != nil {
		t.Fatalf("alice cannot write before the fence: %v", err)
	}
	acl := rdkafka.ACL{ResourceType: "TOPIC", ResourceName: topic, PatternType: "LITERAL", Principal: "User:alice", Host: "*", Operation: "WRITE", Permission: "DENY"}
	t.Cleanup(func() { _ = bed.A.Admin(t).DeleteACLs(context.Background(), acl) })

	testbed.Eventually(t, 2*time.Minute, func() error { // replicated (the drain would wait too, but needs the remote topic)
		tps := []rdkafka.TP{{Topic: topic, Partition: 0}, {Topic: topic, Partition: 1}}
		res, err := bed.B.Admin(t).ListOffsets(context.Background(), tps, rdkafka.Latest)
		if err != nil {
			return err
		}
		var n int64
		for _, tp := range tps {
			n += res[tp].Offset
		}
		if n < before+1 { // + alice's first record
			return fmt.Errorf("%d of %d records on B", n, before+1)
		}
		return nil
	})
	// A fence hook that fails stops the failover with exit 3 before anything else changed; it
	// sees the flow and its topics in its environment.
	seen := filepath.Join(t.TempDir(), "hook.env")
	r := Run(t, "failover", props, "--flow", ab, "--mode", "planned", "--fence", "hook", "--fence-command",
		`echo "$KMM_FLOW $KMM_TOPICS" > `+seen+`; exit 7`, "--timeout", "1m", "--yes")
	if r.Code != 3 || !strings.Contains(r.Stderr, "exited with status 7") {
		t.Errorf("failing fence hook: exit %d\n%s", r.Code, r.Stderr)
	}
	if b, err := os.ReadFile(seen); err != nil || strings.TrimSpace(string(b)) != ab+" "+topic {
		t.Errorf("the hook saw %q (%v), want %q", b, err, ab+" "+topic)
	}
	if v := readState(t, bed.B)[flowstate.FlowKey(al.A, al.B)]; v != nil {
		t.Errorf("the failed hook left a flow state: %s", v)
	}
	if err := aliceWrite(alice, topic); err != nil {
		t.Fatalf("alice cannot write after the failed hook: %v", err)
	}
	const written = before + 2 // alice's records before the fence

	// The ACL fence (the run resumes the hook's unfinished one: its plan changed).
	r = Run(t, "failover", props, "--flow", ab, "--mode", "planned", "--fence", "acl", "--fence-principal", "User:alice",
		"--timeout", "2m", "--yes", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("failover: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	var env struct {
		Plan struct {
			Steps []struct {
				ID   string `json:"id"`
				Kind string `json:"kind"`
			} `json:"steps"`
		} `json:"plan"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &env); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	var kinds []string
	for _, s := range env.Plan.Steps {
		kinds = append(kinds, s.Kind)
	}
	if len(kinds) < 2 || kinds[0] != switchover.KindFence || !strings.Contains(strings.Join(kinds, ","), switchover.KindStoreReverse) {
		t.Errorf("plan steps: %v", kinds)
	}
	// The fence holds: alice is refused on A.
	if err := aliceWrite(alice, topic); err == nil || !strings.Contains(strings.ToLower(err.Error()), "authoriz") {
		t.Errorf("alice's write after the fence: %v (want an authorization error)", err)
	}
	st, err := flowstate.DecodeFlow(readState(t, bed.B)[flowstate.FlowKey(al.A, al.B)])
	if err != nil || st == nil || st.State != flowstate.FailedOver {
		t.Fatalf("flow state on B: %+v (%v)", st, err)
	}
	if st.Fence == nil || st.Fence.Method != "acl" || len(st.Fence.ACLs) != 1 || st.Fence.ACLs[0].Principal != "User:alice" || st.Fence.ACLs[0].Topic != topic {
		t.Errorf("fence in the flow state: %+v", st.Fence)
	}
	// The reverse flow copies the topic and, as MM2 does, heartbeats topics (of every test on
	// the shared bed): only the topic's ends are known here.
	var revTotal int64
	revParts := 0
	for _, e := range st.ReverseEnds {
		if e.Topic == topic {
			revTotal += e.End
			revParts++
		} else if !strings.HasSuffix(e.Topic, "heartbeats") {
			t.Errorf("reverse_ends names %s (the reverse flow copies %s and heartbeats)", e.Topic, topic)
		}
	}
	if revParts != parts || revTotal != written {
		t.Errorf("reverse_ends %+v: want %d partitions holding %d records", st.ReverseEnds, parts, written)
	}
	cutEnds := endOffsets(t, bed.B, topic, parts)
	pos := sourcePositionsOf(t, bed.A, al.B, al.B, topic)
	for p := 0; p < parts; p++ {
		if pos[int32(p)] != cutEnds[p]-1 {
			t.Errorf("reverse progress on A for %s[%d]: %d, want %d (B's end at the cut - 1)", topic, p, pos[int32(p)], cutEnds[p]-1)
		}
	}
	if code := k.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Errorf("replicate A->B exit %d", code)
	}

	// Writes on B after the failover; then kmm replicate B->A copies exactly those.
	post := make([]rdkafka.Record, after)
	for i := range post {
		post[i] = rdkafka.Record{Topic: topic, Partition: int32(i % parts), Value: []byte(fmt.Sprintf("post-%d", i))}
	}
	bed.B.Produce(t, post)
	aEnds := endOffsets(t, bed.A, topic, parts)
	bEnds := endOffsets(t, bed.B, topic, parts)
	rev := interopProps(t, bed, al, 2, identity, ab+".enabled = false", ba+".enabled = true", ba+".topics = "+regexp.QuoteMeta(topic))
	kr := startKMM(t, "replicate", rev)
	testbed.Eventually(t, 2*time.Minute, func() error {
		pos := sourcePositionsOf(t, bed.A, al.B, al.B, topic)
		for p := 0; p < parts; p++ {
			if pos[int32(p)] != bEnds[p]-1 {
				return fmt.Errorf("B->A progress %v, B's ends %v", pos, bEnds)
			}
		}
		return nil
	})
	if code := kr.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Errorf("replicate B->A exit %d\n%s", code, tail(kr.Stderr(), 20))
	}
	now := endOffsets(t, bed.A, topic, parts)
	copied := int64(0)
	for p := 0; p < parts; p++ {
		copied += now[p] - aEnds[p]
	}
	if copied != after {
		t.Fatalf("B->A copied %d record(s) to A, want exactly the %d written on B after the failover", copied, after)
	}
	got := bed.A.ConsumeN(t, topic, parts, written+after, time.Minute)
	posts := 0
	for _, rec := range got {
		if strings.HasPrefix(string(rec.Value), "post-") {
			posts++
		}
	}
	if len(got) != written+after || posts != after {
		t.Errorf("A's %s holds %d records, %d of them post-failover: want %d and %d (no echo of A's own records)", topic, len(got), posts, written+after, after)
	}
	t.Logf("reverse flow copied %d post-failover record(s), 0 of the %d before the cut", copied, written)

	// Failback fences B (--fence acl): killed right after its fence step, alice is refused on
	// B; the re-run completes, removes both fences (failover's on A, its own on B) before the
	// flow replicates again: alice writes to A and B again; no fence ACL is left on either.
	fbArgs := []string{"failback", props, "--flow", ab, "--fence", "acl", "--fence-principal", "User:alice", "--timeout", "1m", "--yes"}
	d := Run(t, append(fbArgs, "--dry-run", "-o", "json")...)
	var dry struct {
		Plan struct {
			Steps []struct{ ID, Kind, Cluster string } `json:"steps"`
		} `json:"plan"`
	}
	if err := json.Unmarshal([]byte(d.Stdout), &dry); d.Code != 0 || err != nil {
		t.Fatalf("failback --dry-run: exit %d %v\n%s", d.Code, err, d.Stderr)
	}
	fenceStep := 0
	for i, s := range dry.Plan.Steps {
		if s.ID == "fence/acl" && s.Cluster == al.B {
			fenceStep = i + 1
		}
	}
	if fenceStep == 0 {
		t.Fatalf("no fence/acl step on %s in the failback plan: %+v", al.B, dry.Plan.Steps)
	}
	aliceB := aliceProducer(t, bed.B) // (no write before: the drain would wait for its copy)
	aclB := acl
	t.Cleanup(func() { _ = bed.B.Admin(t).DeleteACLs(context.Background(), aclB) })
	killAtPause(t, fenceStep, 2*time.Minute, fbArgs...)
	if err := aliceWrite(aliceB, topic); err == nil || !strings.Contains(strings.ToLower(err.Error()), "authoriz") {
		t.Errorf("alice's write to B during the failback: %v (want an authorization error)", err)
	}
	r = Run(t, fbArgs...)
	if r.Code != 0 || !strings.Contains(r.Stderr, "remove-fence: applied (acls=1)") || !strings.Contains(r.Stderr, "remove-fence/"+al.B+": applied (acls=1)") {
		t.Fatalf("failback: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if err := aliceWrite(alice, topic); err != nil {
		t.Errorf("alice cannot write after failback removed the fence: %v", err)
	}
	if err := aliceWrite(aliceB, topic); err != nil {
		t.Errorf("alice cannot write to B after failback removed its fence: %v", err)
	}
	aclsB, err := bed.B.Admin(t).DescribeTopicACLs(context.Background(), []string{aclB.ResourceName})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range aclsB {
		if a == aclB {
			t.Errorf("failback's fence ACL is still on B: %s", a)
		}
	}
	acls, err := bed.A.Admin(t).DescribeTopicACLs(context.Background(), []string{acl.ResourceName})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range acls {
		if a == acl {
			t.Errorf("the fence ACL is still on A after failback: %s", a)
		}
	}
}
