package e2e

import (
	"context"
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
	"github.com/kmmproject/kmm/pkg/plan"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// kmm failover refuses bad input with the right exit code and writes nothing (no flow state, no
// journal, no group offset on B); a run SIGKILLed between two group commits completes on the
// next run, and no group is committed twice (counted in B's __consumer_offsets).
func TestFailoverBadInputAndResume(t *testing.T) {
	bed := testbed.Attach(t)
	ctx := context.Background()
	al := newAliases()
	topic := testbed.Unique(t, "fobad")
	const parts = 2
	bed.A.CreateTopic(t, topic, parts, nil)
	ab := al.A + "->" + al.B
	props := interopProps(t, bed, al, 2, ab+".enabled = true", ab+".topics = "+regexp.QuoteMeta(topic))
	remote := al.A + "." + topic
	bed.A.Produce(t, seqRecords(topic, parts, 0, 600))
	groups := []string{testbed.Unique(t, "g1"), testbed.Unique(t, "g2"), testbed.Unique(t, "g3")}
	for i, g := range groups {
		offs := map[rdkafka.TP]rdkafka.OffsetMeta{}
		for p := int32(0); p < parts; p++ {
			offs[rdkafka.TP{Topic: topic, Partition: p}] = rdkafka.OffsetMeta{Offset: int64(100 * (i + 1))}
		}
		if err := bed.A.Admin(t).AlterGroupOffsets(ctx, g, offs); err != nil {
			t.Fatal(err)
		}
	}
	k := startKMM(t, "replicate", props)
	waitCount(t, bed.B, remote, parts, 600, 2*time.Minute)

	nothingWritten := func(what string) {
		t.Helper()
		st := readState(t, bed.B)
		if v, ok := st[flowstate.FlowKey(al.A, al.B)]; ok && v != nil {
			t.Errorf("%s: flow state written: %s", what, v)
		}
		if v, ok := st[plan.RunKey("failover", ab)]; ok && v != nil {
			t.Errorf("%s: a run was journaled: %s", what, v)
		}
		for _, g := range groups {
			if offs, _ := bed.B.Admin(t).ListGroupOffsets(ctx, g); len(offs) != 0 {
				t.Errorf("%s: group %s committed on B: %v", what, g, offs)
			}
		}
	}
	base := []string{"failover", props, "--mode", "planned", "--fence", "none", "--quiet-for", "1s", "--timeout", "1m"}
	badDrill := filepath.Join(t.TempDir(), "drill.toml")
	if err := os.WriteFile(badDrill, []byte("flow = \""+ab+"\"\n[fence]\nmethod = \"none\"\nquiet = \"10s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"unknown flow", []string{"--flow", "X->Y", "--yes"}, 2, "X->Y"},
		{"regex matching nothing", []string{"--flow", ab, "--groups", "nomatch-.*", "--yes"}, 2, "matches no group"},
		{"unknown group", []string{"--flow", ab, "--group", "nosuchgroup", "--yes"}, 2, "nosuchgroup"},
		{"no --yes without a terminal", []string{"--flow", ab}, 2, "--yes"},
		{"malformed drill file", []string{"--drill", badDrill, "--yes"}, 2, badDrill + ":4: unknown key \"fence.quiet\""},
		{"emergency mode with the source up", []string{"--flow", ab, "--mode", "emergency", "--yes"}, 3, "is reachable"},
		// The groups filter (A-nogroup) leaves these groups without checkpoints on B.
		{"stale checkpoints (planned preflight)", []string{"--flow", ab, "--group", groups[0], "--max-checkpoint-age", "1m", "--yes"}, 3, "group " + groups[0] + " has no checkpoint on " + al.B},
		{"acl fence without a principal", []string{"--flow", ab, "--fence", "acl", "--yes"}, 2, "--fence-principal"},
		{"acl fence with a malformed principal", []string{"--flow", ab, "--fence", "acl", "--fence-principal", "alice", "--yes"}, 2, "TYPE:NAME"},
		{"hook fence without a command", []string{"--flow", ab, "--fence", "hook", "--yes"}, 2, "--fence-command"},
	} {
		r := Run(t, append(base, c.args...)...)
		if r.Code != c.code || !strings.Contains(r.Stderr, c.msg) {
			t.Errorf("%s: exit %d (want %d), stderr:\n%s", c.name, r.Code, c.code, r.Stderr)
		}
		nothingWritten(c.name)
	}
	// A group active on B.
	cons, err := rdkafka.NewConsumer("B", rdkafka.Config{"bootstrap.servers": bed.B.Bootstrap, "group.id": groups[0], "session.timeout.ms": "10000"})
	if err != nil {
		t.Fatal(err)
	}
	if err := cons.Subscribe(remote); err != nil {
		t.Fatal(err)
	}
	pctx, stopPoll := context.WithCancel(ctx)
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for pctx.Err() == nil {
			_, _ = cons.Poll(pctx, 10, 100*time.Millisecond)
		}
	}()
	testbed.Eventually(t, 30*time.Second, func() error {
		ds, err := bed.B.Admin(t).DescribeGroups(ctx, groups[0])
		if err != nil || len(ds) != 1 || ds[0].Members == 0 {
			return fmt.Errorf("consumer not in the group yet: %v %v", ds, err)
		}
		return nil
	})
	all := []string{"--group", groups[0], "--group", groups[1], "--group", groups[2]}
	r := Run(t, append(append(base, "--flow", ab, "--yes"), all...)...)
	stopPoll()
	<-polled
	cons.Close()
	if r.Code != 3 || !strings.Contains(r.Stderr, "member(s) on "+al.B) || !strings.Contains(r.Stderr, "nothing was changed") {
		t.Errorf("active group on B: exit %d\n%s", r.Code, r.Stderr)
	}
	// (The test consumer commits nothing: rdkafka.NewConsumer turns auto-commit off.)
	nothingWritten("active group on B")

	// Interrupted between two group commits, then re-run.
	b := bed.B.Admin(t)
	ts, err := b.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := consumerOffsetsEnds(t, b, ts["__consumer_offsets"].Partitions)
	// Steps: quiet, drain, mark, replicators, g1, g2, g3, reverse progress, mark: pause after g1's commit.
	killAtPause(t, 5, 2*time.Minute, append(append(base, "--flow", ab, "--yes"), all...)...)
	if st, _ := flowstate.DecodeFlow(readState(t, bed.B)[flowstate.FlowKey(al.A, al.B)]); st == nil || st.State != flowstate.FailingOver {
		t.Fatalf("after the kill the flow should be FAILING_OVER: %+v", st)
	}
	r = Run(t, append(append(base, "--flow", ab, "--yes"), all...)...)
	if r.Code != 0 || !regexp.MustCompile(`resuming run \S+ started at \S+( on \S+)?: 5 of 9 steps done`).MatchString(r.Stderr) {
		t.Fatalf("re-run: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	commits := readCommits(t, bed.B, start, map[string]bool{groups[0]: true, groups[1]: true, groups[2]: true})
	for i, g := range groups {
		for p := int32(0); p < parts; p++ {
			key := fmt.Sprintf("%s %s[%d]", g, remote, p)
			if n := commits[key]; n != 1 {
				t.Errorf("%s committed %d times, want once (all: %v)", key, n, commits)
			}
		}
		offs, err := b.ListGroupOffsets(ctx, g)
		if err != nil {
			t.Fatal(err)
		}
		for p := int32(0); p < parts; p++ {
			// Every record copied once, in order, from offset 0: the same offsets on B.
			if got := offs[rdkafka.TP{Topic: remote, Partition: p}].Offset; got != int64(100*(i+1)) {
				t.Errorf("%s on B partition %d: %d, want %d", g, p, got, 100*(i+1))
			}
		}
	}
	if st, _ := flowstate.DecodeFlow(readState(t, bed.B)[flowstate.FlowKey(al.A, al.B)]); st == nil || st.State != flowstate.FailedOver || st.Epoch != 2 {
		t.Fatalf("after the re-run: %+v", st)
	}
	if code := k.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Errorf("replicate exit %d", code)
	}
}
