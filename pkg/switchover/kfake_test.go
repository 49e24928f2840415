package switchover_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kmmproject/kmm/e2e/testbed/kfakebed"
	"github.com/kmmproject/kmm/pkg/checkpoint"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/plan"
	"github.com/kmmproject/kmm/pkg/switchover"
)

// commitCounter counts the OffsetCommit requests (AlterConsumerGroupOffsets) a kfake cluster
// receives per group: what "committed twice" means, seen from the broker.
type commitCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func countCommits(c kfakebed.Cluster) *commitCounter {
	cc := &commitCounter{n: map[string]int{}}
	c.ControlKey(int16(kmsg.OffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		cc.mu.Lock()
		cc.n[req.(*kmsg.OffsetCommitRequest).Group]++
		cc.mu.Unlock()
		return nil, nil, false // observe only: the cluster handles it
	})
	return cc
}

func (cc *commitCounter) get() map[string]int {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	out := map[string]int{}
	for k, v := range cc.n {
		out[k] = v
	}
	return out
}

func groupPlans(topic string, groups ...string) []checkpoint.GroupPlan {
	var out []checkpoint.GroupPlan
	for i, g := range groups {
		if strings.HasPrefix(g, "active") {
			out = append(out, checkpoint.GroupPlan{Group: g, Skipped: checkpoint.SkipActive, Detail: "group " + g + " not synced: it has 1 active member(s) on the target"})
			continue
		}
		out = append(out, checkpoint.GroupPlan{Group: g, Commits: []checkpoint.Commit{
			{TP: checkpoint.TP{Topic: topic, Partition: 0}, Offset: int64(10 + i), Current: -1, Metadata: "m"},
			{TP: checkpoint.TP{Topic: topic, Partition: 1}, Offset: int64(20 + i), Current: -1}}})
	}
	return out
}

func executor(t *testing.T, b kfakebed.Cluster, now func() time.Time) (*plan.Executor, *plan.TopicJournal) {
	cl := b.Open(t)
	j := &plan.TopicJournal{C: cl, RF: 1, RFKey: "checkpoints.topic.replication.factor", Now: now}
	t.Cleanup(j.Close)
	return &plan.Executor{Journal: j, Actions: map[string]plan.Action{switchover.KindCommitOffsets: switchover.CommitOffsets{Groups: cl}}, Now: now, Host: "test"}, j
}

// The plan core end to end through librdkafka: a run interrupted after its first group is
// resumed from __kmm_state by a new executor (another process), which commits the remaining
// groups; no group is committed twice (counted at the broker), and a group whose offsets are
// already in effect is recorded as such, not committed again.
func TestCommitOffsetsRunResumesWithoutDoubleCommits(t *testing.T) {
	t.Parallel() // own in-process clusters: waits overlap with the other tests of the package
	a, b := kfakebed.Start(t, "A"), kfakebed.Start(t, "B")
	f := kfakebed.Flow(a, b, "orders")
	b.CreateTopic(t, "A.orders", 2)
	commits := countCommits(b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	p, err := switchover.CommitOffsetsPlan("translate-offsets", f, groupPlans("A.orders", "g2", "g1", "active-g", "g3"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(ids(p)); got != "[commit-offsets/active-g commit-offsets/g1 commit-offsets/g2 commit-offsets/g3]" || p.Steps[0].Skip == "" {
		t.Fatalf("plan steps %s", got)
	}
	if p.Steps[1].Expect["partitions"] != 2 || p.Steps[1].Expect["new"] != 2 || p.Journal != "B" || p.Flow != "A->B" {
		t.Fatalf("plan %+v", p.Steps[1])
	}

	// g3's offsets are already what the plan wants (a run killed after committing, before
	// journaling): the check must find it.
	if err := b.Open(t).AlterGroupOffsets(ctx, "g3", map[cluster.TP]cluster.OffsetMeta{{Topic: "A.orders", Partition: 0}: {Offset: 13}, {Topic: "A.orders", Partition: 1}: {Offset: 23}}); err != nil {
		t.Fatal(err)
	}

	// First run: interrupted once g1 is committed and journaled.
	ex1, _ := executor(t, b, time.Now)
	errStop := errors.New("killed")
	ex1.AfterStep = func(_ context.Context, n int) error {
		if n == 1 {
			return errStop
		}
		return nil
	}
	r1, resume, err := ex1.Begin(ctx, p)
	if err != nil || resume != nil {
		t.Fatalf("begin: %v %v", resume, err)
	}
	if _, err := ex1.Execute(ctx, p, r1); !errors.Is(err, errStop) {
		t.Fatalf("first run: %v", err)
	}
	if got := commits.get(); got["g1"] != 1 || got["g2"] != 0 {
		t.Fatalf("after the first run: commits %v", got)
	}

	// Second run, as a new process: it finds the unfinished run in __kmm_state on B.
	ex2, _ := executor(t, b, time.Now)
	r2, resume, err := ex2.Begin(ctx, p)
	if err != nil || resume == nil {
		t.Fatalf("no resume: %v", err)
	}
	if resume.RunID != r1.ID || resume.Done != 1 || resume.Total != 3 {
		t.Fatalf("resume %+v", resume)
	}
	r2, err = ex2.Execute(ctx, p, r2)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]plan.Outcome{"commit-offsets/active-g": plan.Skipped, "commit-offsets/g1": plan.DoneBefore,
		"commit-offsets/g2": plan.Applied, "commit-offsets/g3": plan.AlreadyDone}
	for _, s := range r2.Steps {
		if s.Outcome != want[s.ID] {
			t.Errorf("%s: %s, want %s", s.ID, s.Outcome, want[s.ID])
		}
	}
	// Each group committed exactly once: g1 by the first run, g2 by the second, g3 by the test.
	if got := commits.get(); got["g1"] != 1 || got["g2"] != 1 || got["g3"] != 1 || got["active-g"] != 0 {
		t.Fatalf("commits per group %v", got)
	}
	for g, off := range map[string]int64{"g1": 11, "g2": 10, "g3": 13} {
		have, err := b.Open(t).ListGroupOffsets(ctx, g)
		if err != nil || have[cluster.TP{Topic: "A.orders", Partition: 0}].Offset != off {
			t.Fatalf("group %s offsets %v %v", g, have, err)
		}
	}
	// The journal is a compacted one-partition topic holding the run, done.
	info, _ := b.Open(t).ListTopics(ctx)
	if info[plan.StateTopic].Partitions != 1 {
		t.Fatalf("%s: %+v", plan.StateTopic, info[plan.StateTopic])
	}
	cfgs, err := b.Open(t).DescribeTopicConfigs(ctx, plan.StateTopic)
	if err != nil || cfgs[plan.StateTopic]["cleanup.policy"].Value != "compact" {
		t.Fatalf("cleanup.policy %v %v", cfgs[plan.StateTopic]["cleanup.policy"], err)
	}
	state, err := plan.ReadState(ctx, b.Open(t))
	if err != nil {
		t.Fatal(err)
	}
	run, err := plan.DecodeRun(state["run/translate-offsets/A->B"])
	if err != nil || run.State != plan.Done || run.ID != r1.ID || len(run.Resumes) != 1 {
		t.Fatalf("journal: %+v %v", run, err)
	}
	// A third run starts afresh and finds every group in effect: still no new commit.
	ex3, _ := executor(t, b, time.Now)
	r3, resume, _ := ex3.Begin(ctx, p)
	if resume != nil || r3.ID == r1.ID {
		t.Fatalf("finished run resumed: %+v", resume)
	}
	if _, err := ex3.Execute(ctx, p, r3); err != nil {
		t.Fatal(err)
	}
	if got := commits.get(); got["g1"] != 1 || got["g2"] != 1 || got["g3"] != 1 {
		t.Fatalf("third run committed again: %v", got)
	}
}

// A commit the broker refuses fails its step, leaves the run unfinished in the journal, and the
// next run retries that step (and only it).
func TestCommitOffsetsFailureIsRecorded(t *testing.T) {
	t.Parallel() // own in-process clusters: waits overlap with the other tests of the package
	a, b := kfakebed.Start(t, "A"), kfakebed.Start(t, "B")
	f := kfakebed.Flow(a, b, "orders")
	b.CreateTopic(t, "A.orders", 2)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := switchover.CommitOffsetsPlan("translate-offsets", f, groupPlans("A.orders", "g1", "g2"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	b.ControlKey(int16(kmsg.OffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		r := req.(*kmsg.OffsetCommitRequest)
		if r.Group != "g2" {
			return nil, nil, false // not handled: kept for the next request
		}
		resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
		for _, tp := range r.Topics {
			rt := kmsg.NewOffsetCommitResponseTopic()
			rt.Topic = tp.Topic
			for _, pp := range tp.Partitions {
				rp := kmsg.NewOffsetCommitResponseTopicPartition()
				rp.Partition = pp.Partition
				rp.ErrorCode = 30 // GROUP_AUTHORIZATION_FAILED
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil, true
	})
	ex, _ := executor(t, b, time.Now)
	r, _, _ := ex.Begin(ctx, p)
	r, err = ex.Execute(ctx, p, r)
	if err == nil || !strings.Contains(err.Error(), "commit-offsets/g2") {
		t.Fatalf("err %v", err)
	}
	if r.State != plan.RunFailed || r.Steps[0].Outcome != plan.Applied || r.Steps[1].Outcome != plan.Failed || r.Steps[1].Detail == "" {
		t.Fatalf("run %+v", r.Steps)
	}
	ex2, _ := executor(t, b, time.Now)
	r2, resume, _ := ex2.Begin(ctx, p)
	if resume == nil || resume.Done != 1 {
		t.Fatalf("resume %+v", resume)
	}
	if r2, err = ex2.Execute(ctx, p, r2); err != nil || r2.Steps[1].Outcome != plan.Applied || r2.Steps[0].Outcome != plan.DoneBefore {
		t.Fatalf("retry: %v %+v", err, r2.Steps)
	}
}

func ids(p *plan.Plan) []string {
	var out []string
	for _, s := range p.Steps {
		out = append(out, s.ID)
	}
	return out
}
