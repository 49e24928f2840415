package plan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeAction keeps "cluster state" as a set of applied step ids.
type fakeAction struct {
	state   map[string]bool
	applied []string
	checks  []string
	failOn  string
}

func (a *fakeAction) Check(_ context.Context, s Step) (bool, error) {
	a.checks = append(a.checks, s.ID)
	return a.state[s.ID], nil
}

func (a *fakeAction) Apply(_ context.Context, s Step) (map[string]int64, error) {
	if s.ID == a.failOn {
		return nil, errors.New("broker said no")
	}
	a.state[s.ID] = true
	a.applied = append(a.applied, s.ID)
	return map[string]int64{"partitions": 2}, nil
}

func testPlan(ids ...string) *Plan {
	p := &Plan{Command: "test-cmd", Flow: "A->B", Journal: "B"}
	for _, id := range ids {
		s := Step{ID: id, Kind: "fake", Cluster: "B", Writes: "x", Params: json.RawMessage(`{}`)}
		if strings.HasPrefix(id, "skip") {
			s.Skip = "active"
		}
		p.Steps = append(p.Steps, s)
	}
	return p
}

func clock() func() time.Time {
	t := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Second); return t }
}

func newExec(j Journal, a *fakeAction) *Executor {
	return &Executor{Journal: j, Actions: map[string]Action{"fake": a}, Now: clock(), Host: "h1"}
}

func outcomes(r *Run) string {
	var o []string
	for _, s := range r.Steps {
		o = append(o, s.ID+"="+string(s.Outcome))
	}
	return strings.Join(o, " ")
}

func TestExecuteChecksBeforeApplying(t *testing.T) {
	j := &MemJournal{}
	a := &fakeAction{state: map[string]bool{"s2": true}}
	ex := newExec(j, a)
	p := testPlan("s1", "s2", "skip3", "s4")
	r, resume, err := ex.Begin(context.Background(), p)
	if err != nil || resume != nil {
		t.Fatalf("begin: %v %v", resume, err)
	}
	r, err = ex.Execute(context.Background(), p, r)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := outcomes(r), "s1=applied s2=already-done skip3=skipped s4=applied"; got != want {
		t.Fatalf("outcomes %s, want %s", got, want)
	}
	if strings.Join(a.applied, ",") != "s1,s4" || strings.Join(a.checks, ",") != "s1,s2,s4" {
		t.Fatalf("applied %v checked %v", a.applied, a.checks)
	}
	if r.State != Done || r.Finished == nil || r.Steps[0].Started == nil || r.Steps[0].Numbers["partitions"] != 2 {
		t.Fatalf("run %+v", r)
	}
	// One save when the run starts, one per executed step, one at the end.
	if j.Saves != 1+3+1 {
		t.Fatalf("%d saves", j.Saves)
	}
	stored, _ := j.Load(context.Background(), p.Key())
	if stored.State != Done || outcomes(stored) != outcomes(r) || stored.ID != r.ID {
		t.Fatalf("journal holds %+v", stored)
	}
	// A finished run is not resumed: the next run is new, and finds everything in effect.
	r2, resume, _ := ex.Begin(context.Background(), p)
	if resume != nil || r2.ID == r.ID {
		t.Fatalf("finished run resumed: %v", resume)
	}
	r2, _ = ex.Execute(context.Background(), p, r2)
	if got := outcomes(r2); got != "s1=already-done s2=already-done skip3=skipped s4=already-done" || len(a.applied) != 2 {
		t.Fatalf("second run: %s, applied %v", got, a.applied)
	}
}

// An interrupted run is resumed by the next one: steps recorded as done are not checked or
// applied again, the rest continue from the first step not recorded as done.
func TestResumeAfterInterruption(t *testing.T) {
	j := &MemJournal{}
	a := &fakeAction{state: map[string]bool{}}
	ex := newExec(j, a)
	p := testPlan("s1", "s2", "s3", "s4", "s5")
	ctx, cancel := context.WithCancel(context.Background())
	ex.AfterStep = func(ctx context.Context, n int) error {
		if n == 3 {
			cancel()
			return ctx.Err()
		}
		return nil
	}
	r, _, _ := ex.Begin(ctx, p)
	r, err := ex.Execute(ctx, p, r)
	if err == nil {
		t.Fatal("interrupted run returned no error")
	}
	stored, _ := j.Load(context.Background(), p.Key())
	if !stored.Unfinished() || stored.DoneSteps() != 3 || outcomes(stored) != "s1=applied s2=applied s3=applied s4=pending s5=pending" {
		t.Fatalf("journal after interruption: %s (%s)", outcomes(stored), stored.State)
	}

	// The re-run ("from another machine": a new executor, the same journal).
	a.checks = nil
	ex2 := newExec(j, a)
	ex2.Host = "h2"
	r2, resume, err := ex2.Begin(context.Background(), p)
	if err != nil || resume == nil {
		t.Fatalf("no resume: %v", err)
	}
	if resume.RunID != r.ID || resume.Done != 3 || resume.Total != 5 || resume.PlanChanged || resume.Host != "h1" {
		t.Fatalf("resume %+v", resume)
	}
	if msg := resume.String(); !strings.Contains(msg, "resuming run "+r.ID+" started at 2026-11-30T03:00:01Z on h1: 3 of 5 steps done") {
		t.Fatalf("message %q", msg)
	}
	r2, err = ex2.Execute(context.Background(), p, r2)
	if err != nil {
		t.Fatal(err)
	}
	if got := outcomes(r2); got != "s1=done-before s2=done-before s3=done-before s4=applied s5=applied" {
		t.Fatalf("resumed run: %s", got)
	}
	if strings.Join(a.checks, ",") != "s4,s5" || strings.Join(a.applied, ",") != "s1,s2,s3,s4,s5" {
		t.Fatalf("checks %v applied %v", a.checks, a.applied)
	}
	if r2.ID != r.ID || len(r2.Resumes) != 1 || !strings.HasPrefix(r2.Resumes[0], "h2 at ") {
		t.Fatalf("resumed run id %s resumes %v", r2.ID, r2.Resumes)
	}
}

// A step applied but not journaled (killed between the two) is found in effect by the re-run.
func TestStepAppliedButNotJournaled(t *testing.T) {
	j := &MemJournal{}
	a := &fakeAction{state: map[string]bool{}}
	p := testPlan("s1", "s2")
	ex := newExec(j, a)
	r, _, _ := ex.Begin(context.Background(), p)
	_ = j.Save(context.Background(), p.Key(), &Run{ID: r.ID, Command: p.Command, Flow: p.Flow, State: Running, Started: r.Started,
		Steps: []StepRecord{{ID: "s1", Outcome: Pending}, {ID: "s2", Outcome: Pending}}})
	a.state["s1"] = true // applied by the killed run, not recorded
	r2, resume, _ := ex.Begin(context.Background(), p)
	if resume == nil || resume.Done != 0 {
		t.Fatalf("resume %+v", resume)
	}
	r2, err := ex.Execute(context.Background(), p, r2)
	if err != nil || outcomes(r2) != "s1=already-done s2=applied" || len(a.applied) != 1 {
		t.Fatalf("%s %v applied %v", outcomes(r2), err, a.applied)
	}
}

func TestFailedStepStopsAndResumes(t *testing.T) {
	j := &MemJournal{}
	a := &fakeAction{state: map[string]bool{}, failOn: "s2"}
	p := testPlan("s1", "s2", "s3")
	ex := newExec(j, a)
	r, _, _ := ex.Begin(context.Background(), p)
	r, err := ex.Execute(context.Background(), p, r)
	if err == nil || !strings.Contains(err.Error(), "step s2: broker said no") {
		t.Fatalf("err %v", err)
	}
	if r.State != RunFailed || outcomes(r) != "s1=applied s2=failed s3=pending" || r.Steps[1].Detail != "broker said no" {
		t.Fatalf("%s %s", r.State, outcomes(r))
	}
	a.failOn = ""
	r2, resume, _ := ex.Begin(context.Background(), p)
	if resume == nil || resume.Done != 1 {
		t.Fatalf("failed run not resumed: %+v", resume)
	}
	if r2, err = ex.Execute(context.Background(), p, r2); err != nil || outcomes(r2) != "s1=done-before s2=applied s3=applied" {
		t.Fatalf("%s %v", outcomes(r2), err)
	}
}

func TestPlanChangedAndValidate(t *testing.T) {
	j := &MemJournal{}
	a := &fakeAction{state: map[string]bool{}, failOn: "s2"}
	ex := newExec(j, a)
	p := testPlan("s1", "s2")
	r, _, _ := ex.Begin(context.Background(), p)
	_, _ = ex.Execute(context.Background(), p, r)
	p2 := testPlan("s1", "s2", "s9")
	_, resume, _ := ex.Begin(context.Background(), p2)
	if resume == nil || !resume.PlanChanged || !strings.Contains(resume.String(), "the plan changed") {
		t.Fatalf("resume %+v", resume)
	}
	if p.Digest() == p2.Digest() || p.Digest() != testPlan("s1", "s2").Digest() {
		t.Fatal("digest")
	}
	bad := testPlan("s1", "s1")
	if _, _, err := ex.Begin(context.Background(), bad); err == nil {
		t.Fatal("duplicate step ids accepted")
	}
	if _, _, err := (&Executor{Journal: j}).Begin(context.Background(), &Plan{Command: "c", Flow: "A->B", Steps: []Step{{ID: "x"}}}); err == nil {
		t.Fatal("step without kind accepted")
	}
}

func TestRunRecordFormat(t *testing.T) {
	r := &Run{ID: "r1", Command: "translate-offsets", Flow: "A->B", State: Running, Steps: []StepRecord{{ID: "s", Outcome: Applied}}}
	b, err := EncodeRun(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"v":1`, `"type":"run"`, `"run_id":"r1"`, `"state":"running"`, `"outcome":"applied"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("record %s lacks %s", b, want)
		}
	}
	if _, err := DecodeRun([]byte(strings.Replace(string(b), `"v":1`, `"v":2`, 1))); err == nil || !strings.Contains(err.Error(), "version 2") {
		t.Fatalf("newer format accepted: %v", err)
	}
	if _, err := DecodeRun([]byte(`{"v":1,"type":"flow"}`)); err == nil {
		t.Fatal("flow record read as a run")
	}
	if RunKey("translate-offsets", "A->B") != "run/translate-offsets/A->B" || FlowKey("A->B") != "flow/A->B" {
		t.Fatal("keys")
	}
}

// With Restart, an unfinished run is not resumed: a new run checks every step on the cluster
// again (a rehearsal measures one moment; its first step undoes what the interrupted run left).
func TestRestartDoesNotResume(t *testing.T) {
	j := &MemJournal{}
	a := &fakeAction{state: map[string]bool{}, failOn: "s2"}
	ex := newExec(j, a)
	p := testPlan("s1", "s2", "s3")
	r, _, _ := ex.Begin(context.Background(), p)
	if _, err := ex.Execute(context.Background(), p, r); err == nil {
		t.Fatal("no error from the failing step")
	}
	a.failOn, a.checks = "", nil
	ex2 := newExec(j, a)
	ex2.Restart = true
	r2, resume, err := ex2.Begin(context.Background(), p)
	if err != nil || resume != nil || len(r2.Steps) != 0 || len(r2.Resumes) != 0 {
		t.Fatalf("restart: resume %+v, run %s (was %s), %v", resume, r2.ID, r.ID, err)
	}
	r2, err = ex2.Execute(context.Background(), p, r2)
	if err != nil {
		t.Fatal(err)
	}
	if got := outcomes(r2); got != "s1=already-done s2=applied s3=applied" || strings.Join(a.checks, ",") != "s1,s2,s3" {
		t.Fatalf("restarted run: %s, checks %v", got, a.checks)
	}
}

// snapJournal is a MemJournal that keeps every saved value: a "crash" resumes from any of them.
type snapJournal struct {
	MemJournal
	snaps [][]byte
}

func (j *snapJournal) Save(ctx context.Context, key string, r *Run) error {
	b, err := EncodeRun(r)
	if err != nil {
		return err
	}
	j.snaps = append(j.snaps, b)
	return j.MemJournal.Save(ctx, key, r)
}

// Within a series of steps of one kind the journal is written at most every SaveEvery, always
// before a step of another kind and at the end; a process that dies between two saves leaves
// steps applied but not journaled, and the re-run finds them in effect: nothing applied twice.
func TestSavesBatchedWithinAKindAndCrashBetweenSaves(t *testing.T) {
	j := &snapJournal{}
	a := &fakeAction{state: map[string]bool{}}
	ex := newExec(j, a)
	ex.SaveEvery = time.Hour // the fake clock advances 1 s per reading: only kind changes and the end save
	p := testPlan("g1", "g2", "g3", "g4", "g5", "g6")
	p.Steps[5].Kind = "other"
	ex.Actions["other"] = a
	r, _, _ := ex.Begin(context.Background(), p)
	if _, err := ex.Execute(context.Background(), p, r); err != nil {
		t.Fatal(err)
	}
	// start, before the kind changes (after g5), after g6 (the last step), at the end
	if len(j.snaps) != 4 {
		t.Fatalf("%d saves, want 4", len(j.snaps))
	}
	crashed, err := DecodeRun(j.snaps[0]) // died after applying g1..g4, before any step was journaled
	if err != nil || crashed.DoneSteps() != 0 || !crashed.Unfinished() {
		t.Fatalf("snapshot: %v %+v", err, crashed)
	}
	j2 := &MemJournal{}
	if err := j2.Save(context.Background(), p.Key(), crashed); err != nil {
		t.Fatal(err)
	}
	delete(a.state, "g5") // g5 and g6 never reached the cluster
	delete(a.state, "g6")
	a.applied = nil
	ex2 := newExec(j2, a)
	ex2.Actions["other"] = a
	r2, resume, err := ex2.Begin(context.Background(), p)
	if err != nil || resume == nil {
		t.Fatalf("no resume: %v", err)
	}
	r2, err = ex2.Execute(context.Background(), p, r2)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := outcomes(r2), "g1=already-done g2=already-done g3=already-done g4=already-done g5=applied g6=applied"; got != want {
		t.Fatalf("re-run: %s, want %s", got, want)
	}
	if strings.Join(a.applied, ",") != "g5,g6" {
		t.Fatalf("applied again: %v", a.applied)
	}

	// SaveEvery < 0: every step journaled.
	j3 := &MemJournal{}
	ex3 := newExec(j3, &fakeAction{state: map[string]bool{}})
	ex3.SaveEvery = -1
	ex3.Actions["other"] = ex3.Actions["fake"]
	r3, _, _ := ex3.Begin(context.Background(), p)
	if _, err := ex3.Execute(context.Background(), p, r3); err != nil {
		t.Fatal(err)
	}
	if j3.Saves != 1+6+1 {
		t.Fatalf("%d saves with SaveEvery<0, want 8", j3.Saves)
	}
}

// concAction is a Concurrent action over a locked "cluster state"; it counts the steps that
// ran at the same time and applies each step at most once per state.
type concAction struct {
	mu              sync.Mutex
	state           map[string]int // applications per step id
	running, maxRun int
	failOn          string
	delay           time.Duration
}

func (a *concAction) Concurrency() int { return 4 }

func (a *concAction) Check(_ context.Context, s Step) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.state[s.ID] > 0, nil
}

func (a *concAction) Apply(_ context.Context, s Step) (map[string]int64, error) {
	a.mu.Lock()
	a.running++
	a.maxRun = max(a.maxRun, a.running)
	a.mu.Unlock()
	time.Sleep(a.delay)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.running--
	if s.ID == a.failOn {
		return nil, errors.New("coordinator said no")
	}
	a.state[s.ID]++
	return map[string]int64{"partitions": 1}, nil
}

// Steps of a Concurrent kind run several at a time; every outcome is journaled; a failure stops
// new steps, fails the run, and the re-run applies only what was not applied (never twice).
func TestConcurrentStepsFailAndResume(t *testing.T) {
	var ids []string
	for i := 0; i < 40; i++ {
		ids = append(ids, fmt.Sprintf("g%02d", i))
	}
	p := testPlan(ids...)
	for i := range p.Steps {
		p.Steps[i].Kind = "conc"
	}
	a := &concAction{state: map[string]int{}, failOn: "g10", delay: 5 * time.Millisecond}
	j := &MemJournal{}
	ex := &Executor{Journal: j, Actions: map[string]Action{"conc": a}, Host: "h1"}
	r, _, _ := ex.Begin(context.Background(), p)
	r, err := ex.Execute(context.Background(), p, r)
	if err == nil || !strings.Contains(err.Error(), "step g10") {
		t.Fatalf("want the failure of g10, got %v", err)
	}
	if a.maxRun < 2 || a.maxRun > 4 {
		t.Fatalf("%d steps ran at once, want 2..4", a.maxRun)
	}
	stored, _ := j.Load(context.Background(), p.Key())
	if stored.State != RunFailed || stored.DoneSteps() != len(a.state) || len(a.state) >= 40 {
		t.Fatalf("journal: state %s, %d done, %d applied", stored.State, stored.DoneSteps(), len(a.state))
	}
	a.failOn = ""
	ex2 := &Executor{Journal: j, Actions: map[string]Action{"conc": a}, Host: "h2"}
	r2, resume, err := ex2.Begin(context.Background(), p)
	if err != nil || resume == nil {
		t.Fatalf("no resume: %v", err)
	}
	if r2, err = ex2.Execute(context.Background(), p, r2); err != nil {
		t.Fatal(err)
	}
	if r2.State != Done || r2.DoneSteps() != 40 {
		t.Fatalf("re-run: %s, %d done", r2.State, r2.DoneSteps())
	}
	for _, id := range ids {
		if a.state[id] != 1 {
			t.Fatalf("step %s applied %d times", id, a.state[id])
		}
	}
}
