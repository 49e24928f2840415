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
	"github.com/kmmproject/kmm/pkg/consumeroffsets"
	"github.com/kmmproject/kmm/pkg/rdkafka"
)

// translate-offsets --apply runs on the plan core: --dry-run -o json prints the plan as JSON
// and commits nothing; a run killed (SIGKILL) between two groups leaves its journal in
// __kmm_state on the target, and the re-run says it resumes, completes, and commits nothing
// twice: every partition of both groups has exactly one commit in the target's
// __consumer_offsets.
func TestTranslateApplyResumesAfterSIGKILL(t *testing.T) {
	bed := testbed.Attach(t)
	ctx := context.Background()
	topic := testbed.Unique(t, "tra")
	g1, g2 := testbed.Unique(t, "ga"), testbed.Unique(t, "gb")
	bed.A.CreateTopic(t, topic, 2, nil)
	bed.A.Produce(t, seqRecords(topic, 2, 0, 400))
	props := writeProps(t, "clusters = A, B", "A->B.enabled = true", "A->B.topics = "+regexp.QuoteMeta(topic))
	remote := "A." + topic
	rep := startKMM(t, "replicate", props)
	waitCount(t, bed.B, remote, 2, 400, time.Minute)
	for g, offs := range map[string][2]int64{g1: {200, 57}, g2: {150, 90}} {
		if err := bed.A.Admin(t).AlterGroupOffsets(ctx, g, map[rdkafka.TP]rdkafka.OffsetMeta{
			{Topic: topic, Partition: 0}: {Offset: offs[0]}, {Topic: topic, Partition: 1}: {Offset: offs[1]}}); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"translate-offsets", props, "--group", g1, "--group", g2}
	testbed.Eventually(t, 30*time.Second, func() error {
		if r := Run(t, args...); r.Code != 0 {
			return fmt.Errorf("exit %d: %s", r.Code, r.Stderr)
		}
		return nil
	})
	if code := rep.stop(t, syscall.SIGTERM, 40*time.Second); code != 0 {
		t.Fatalf("replicate exit %d", code)
	}

	// --dry-run -o json: the plan as JSON, one step per group, nothing written.
	r := Run(t, append(args, "--apply", "--dry-run", "-o", "json", "--flow", "A->B")...)
	var env struct {
		Kind  string            `json:"kind"`
		Items []json.RawMessage `json:"items"`
		Plan  struct {
			Command string `json:"command"`
			Flow    string `json:"flow"`
			Steps   []struct {
				ID      string           `json:"id"`
				Kind    string           `json:"kind"`
				Cluster string           `json:"cluster"`
				Expect  map[string]int64 `json:"expect"`
				Skip    string           `json:"skip"`
			} `json:"steps"`
		} `json:"plan"`
		Report json.RawMessage `json:"report"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &env); err != nil || r.Code != 0 {
		t.Fatalf("--dry-run -o json: exit %d, %v\n%s\n%s", r.Code, err, r.Stdout, r.Stderr)
	}
	if env.Kind != "translate-offsets" || len(env.Items) != 2 || env.Plan.Command != "translate-offsets" || env.Plan.Flow != "A->B" ||
		len(env.Plan.Steps) != 2 || env.Report != nil {
		t.Fatalf("dry-run JSON: %s", r.Stdout)
	}
	for _, s := range env.Plan.Steps {
		if s.Kind != "commit-group-offsets" || s.Cluster != "B" || s.Expect["partitions"] != 2 || s.Skip != "" || !strings.HasPrefix(s.ID, "commit-offsets/") {
			t.Fatalf("step %+v", s)
		}
	}
	if !strings.Contains(r.Stderr, "--dry-run: nothing committed") {
		t.Fatalf("dry-run stderr: %s", r.Stderr)
	}
	b := bed.B.Admin(t)
	for _, g := range []string{g1, g2} {
		if offs, _ := b.ListGroupOffsets(ctx, g); len(offs) != 0 {
			t.Fatalf("dry run committed %s: %v", g, offs)
		}
	}
	ts, err := b.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := consumerOffsetsEnds(t, b, ts["__consumer_offsets"].Partitions)

	// The first run pauses after its first step (test-only hook) and is SIGKILLed there.
	first := killAtPause(t, 1, 60*time.Second, append(args, "--apply", "--yes")...)
	done := map[string]bool{}
	for _, g := range []string{g1, g2} {
		offs, err := b.ListGroupOffsets(ctx, g)
		if err != nil {
			t.Fatal(err)
		}
		done[g] = len(offs) == 2
	}
	if done[g1] == done[g2] {
		t.Fatalf("after the kill, exactly one group should be committed: %v\n%s", done, first.Stderr())
	}

	// The re-run resumes the journaled run and completes it.
	r = Run(t, append(args, "--apply", "--yes")...)
	if r.Code != 0 || !regexp.MustCompile(`resuming run \S+ started at \S+( on \S+)?: 1 of 2 steps done`).MatchString(r.Stderr) {
		t.Fatalf("re-run: exit %d\n%s", r.Code, r.Stderr)
	}
	if !strings.Contains(r.Stdout, "done-before") || !strings.Contains(r.Stdout, "applied") {
		t.Fatalf("report:\n%s", r.Stdout)
	}

	// From the outside: the commits of both groups in B's __consumer_offsets since the first run.
	commits := readCommits(t, bed.B, start, map[string]bool{g1: true, g2: true})
	for _, g := range []string{g1, g2} {
		for p := int32(0); p < 2; p++ {
			key := fmt.Sprintf("%s %s[%d]", g, remote, p)
			if n := commits[key]; n != 1 {
				t.Errorf("%s committed %d times, want once (all commits: %v)", key, n, commits)
			}
		}
	}
	// And a third run finds the finished run, starts afresh, and finds both groups in effect.
	r = Run(t, append(args, "--apply", "--yes")...)
	if r.Code != 0 || strings.Contains(r.Stderr, "resuming") || strings.Count(r.Stdout, "already-done") != 2 {
		t.Fatalf("third run: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if again := readCommits(t, bed.B, start, map[string]bool{g1: true, g2: true}); len(again) != len(commits) {
		t.Fatalf("third run committed: %v", again)
	}
}

func consumerOffsetsEnds(t *testing.T, a *rdkafka.Admin, n int) map[rdkafka.TP]int64 {
	t.Helper()
	var tps []rdkafka.TP
	for p := 0; p < n; p++ {
		tps = append(tps, rdkafka.TP{Topic: "__consumer_offsets", Partition: int32(p)})
	}
	ends, err := a.ListOffsets(context.Background(), tps, rdkafka.Latest)
	if err != nil {
		t.Fatal(err)
	}
	out := map[rdkafka.TP]int64{}
	for tp, e := range ends {
		out[tp] = e.Offset
	}
	return out
}

// readCommits decodes the offset commits of groups in c's __consumer_offsets from start to the
// current end, counted per "group topic[partition]".
func readCommits(t *testing.T, c testbed.Cluster, start map[rdkafka.TP]int64, groups map[string]bool) map[string]int {
	t.Helper()
	ends := consumerOffsetsEnds(t, c.Admin(t), len(start))
	assign, want := map[rdkafka.TP]int64{}, 0
	for tp, s := range start {
		if ends[tp] > s {
			assign[tp] = s
			want++
		}
	}
	out := map[string]int{}
	if want == 0 {
		return out
	}
	cons, err := rdkafka.NewConsumer("B", c.Config())
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	if err := cons.Assign(assign); err != nil {
		t.Fatal(err)
	}
	next := map[rdkafka.TP]int64{}
	for tp, s := range assign {
		next[tp] = s
	}
	deadline := time.Now().Add(30 * time.Second)
	for reached := 0; reached < want; {
		if time.Now().After(deadline) {
			t.Fatalf("__consumer_offsets not read to its end within 30s (%d of %d partitions)", reached, want)
		}
		recs, err := cons.Poll(context.Background(), 1000, 500*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			tp := rdkafka.TP{Topic: r.Topic, Partition: r.Partition}
			if next[tp] < ends[tp] && r.Offset+1 >= ends[tp] {
				reached++
			}
			next[tp] = r.Offset + 1
			if r.Offset >= ends[tp] {
				continue
			}
			cm, err := consumeroffsets.Decode(r.Key, r.Value)
			if err != nil || !groups[cm.Group] || cm.Deleted {
				continue
			}
			out[fmt.Sprintf("%s %s[%d]", cm.Group, cm.Topic, cm.Partition)]++
		}
	}
	return out
}
