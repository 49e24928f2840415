package plan_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kmmproject/kmm/e2e/testbed/kfakebed"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/plan"
)

// stateRecords counts every record of the state topic (not only the newest per key).
func stateRecords(t *testing.T, c cluster.Cluster) int {
	t.Helper()
	r, err := cluster.OpenPartition(context.Background(), c, plan.StateTopic, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for {
		_, ok, err := r.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return n
		}
		n++
	}
}

// A run of many steps is kept as a run record plus chunks of JournalChunk step records; a save
// after one step rewrites that step's chunk and the run record, not the whole run; a chunk of
// another run (a crash during a new run's first save) is left out, so those steps are checked
// on the cluster again instead of trusted.
func TestTopicJournalChunksLargeRuns(t *testing.T) {
	b := kfakebed.Start(t, "B")
	cl := b.Open(t)
	j := &plan.TopicJournal{C: cl, RF: 1, RFKey: "checkpoints.topic.replication.factor"}
	t.Cleanup(j.Close)
	ctx := context.Background()
	key := plan.RunKey("failover", "A->B")
	n := 2*plan.JournalChunk + 50
	r := &plan.Run{ID: "run-1", Command: "failover", Flow: "A->B", State: plan.Running, Started: time.Now().UTC()}
	for i := 0; i < n; i++ {
		r.Steps = append(r.Steps, plan.StepRecord{ID: fmt.Sprintf("commit-group-%04d", i), Kind: "commit-offsets", Cluster: "B", Outcome: plan.Pending})
	}
	if err := j.Save(ctx, key, r); err != nil {
		t.Fatal(err)
	}
	if got := stateRecords(t, cl); got != 3+1 {
		t.Fatalf("first save wrote %d records, want 3 chunks + the run", got)
	}
	r.Steps[n-1].Outcome = plan.Applied
	r.Steps[n-1].Numbers = map[string]int64{"partitions": 50}
	if err := j.Save(ctx, key, r); err != nil {
		t.Fatal(err)
	}
	if got := stateRecords(t, cl); got != 4+2 {
		t.Fatalf("second save wrote %d records, want the changed chunk + the run", got-4)
	}
	got, err := j.Load(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "run-1" || len(got.Steps) != n || got.Steps[n-1].Outcome != plan.Applied || got.Steps[n-1].Numbers["partitions"] != 50 || got.Steps[0].ID != "commit-group-0000" || got.DoneSteps() != 1 {
		t.Fatalf("loaded run %s with %d steps (last %+v)", got.ID, len(got.Steps), got.Steps[len(got.Steps)-1])
	}
	// A new run's first chunk landed, its run record did not: run-1's chunk 0 is replaced by one
	// of run-2, and run-1 is read without those steps.
	j2 := &plan.TopicJournal{C: cl, RF: 1, RFKey: "checkpoints.topic.replication.factor"}
	t.Cleanup(j2.Close)
	p, err := cl.NewProducer(map[string]string{"acks": "all"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	forged := []byte(`{"v":1,"type":"run-steps","run_id":"run-2","chunk":0,"steps":[]}`)
	if _, err := p.ProduceSync(ctx, []cluster.Record{{Topic: plan.StateTopic, Key: []byte(plan.ChunkKey(key, 0)), Value: forged, Timestamp: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	got, err = j2.Load(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Steps) != n-plan.JournalChunk || got.Steps[0].ID != fmt.Sprintf("commit-group-%04d", plan.JournalChunk) {
		t.Fatalf("a chunk of another run was used: %d steps, first %s", len(got.Steps), got.Steps[0].ID)
	}
	// Small runs stay one record, as before.
	small := &plan.Run{ID: "run-3", Command: "translate-offsets", Flow: "A->B", State: plan.Done, Steps: r.Steps[:3]}
	if err := j.Save(ctx, plan.RunKey("translate-offsets", "A->B"), small); err != nil {
		t.Fatal(err)
	}
	recs, _ := plan.ReadState(ctx, cl)
	if dr, err := plan.DecodeRun(recs[plan.RunKey("translate-offsets", "A->B")]); err != nil || len(dr.Steps) != 3 || dr.StepChunks != 0 {
		t.Fatalf("small run: %v %+v", err, dr)
	}
}
