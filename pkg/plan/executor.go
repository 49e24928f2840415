package plan

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/kmmproject/kmm/pkg/kerr"
)

// Action checks and applies the steps of one kind.
type Action interface {
	// Check reports whether the step is already in effect on its cluster.
	Check(ctx context.Context, s Step) (inEffect bool, err error)
	// Apply makes the change and returns the numbers of what it wrote.
	Apply(ctx context.Context, s Step) (numbers map[string]int64, err error)
}

// Concurrent is an Action whose steps are independent of each other (one group's offsets per
// step): a series of consecutive steps of its kind runs up to Concurrency() at a time.
type Concurrent interface {
	Concurrency() int
}

// Executor applies plans: check each step, apply it unless in effect, journal every outcome,
// resume an interrupted run.
type Executor struct {
	Journal Journal
	Actions map[string]Action // by Step.Kind
	Now     func() time.Time
	NewID   func(now time.Time) string // run ids; default: time-based
	Host    string                     // recorded in runs (which machine ran or resumed them)
	Version string                     // kmm version, recorded in runs
	// Restart: an unfinished run of the same command and flow is not resumed; a new run
	// replaces it in the journal. For plans that measure one moment (failover --mode rehearse),
	// whose first step undoes what an interrupted run left behind.
	Restart bool

	// SaveEvery bounds how often the journal is written within a series of consecutive steps
	// of one kind (one commit step per group: hundreds of them). 0 means DefaultSaveEvery; a
	// negative value journals every step. The journal is always written when a run starts,
	// before a step of another kind, when a step fails, when the run is interrupted or ends, and
	// before AfterStep. A step applied but not yet journaled when the process dies is found in
	// effect by its Check on the re-run (every Action checks before applying), so it is never
	// applied twice; what a crash can cost is that Check, not a repeated change.
	SaveEvery time.Duration

	// OnStep is told every outcome as soon as it is recorded (progress lines).
	OnStep func(i, total int, rec StepRecord)
	// AfterStep is called after the n-th step this execution applied or found in effect has
	// been journaled; an error stops the run there (left unfinished). Test hook.
	AfterStep func(ctx context.Context, n int) error
}

// DefaultSaveEvery is how often, at most, the journal is written within a series of steps of
// one kind: with 500 groups, per-step saves cost 500 round trips to the target.
const DefaultSaveEvery = 500 * time.Millisecond

// Resume describes the unfinished run an execution continues.
type Resume struct {
	RunID       string
	Started     time.Time
	Host        string
	Done, Total int  // steps recorded as done, of the steps that were to be executed
	PlanChanged bool // the new plan's steps differ from the interrupted run's
}

func (r *Resume) String() string {
	s := fmt.Sprintf("resuming run %s started at %s", r.RunID, r.Started.UTC().Format(time.RFC3339))
	if r.Host != "" {
		s += " on " + r.Host
	}
	s += fmt.Sprintf(": %d of %d steps done", r.Done, r.Total)
	if r.PlanChanged {
		s += " (the plan changed since: steps recorded as done are not repeated, the others are checked on the cluster first)"
	}
	return s
}

func (e *Executor) now() time.Time {
	if e.Now == nil {
		return time.Now()
	}
	return e.Now()
}

// Begin reads the journal and returns the run an execution of p continues: the unfinished run
// of the same command and flow (with a Resume saying so), or a new run. It writes nothing.
func (e *Executor) Begin(ctx context.Context, p *Plan) (*Run, *Resume, error) {
	if err := p.Validate(); err != nil {
		return nil, nil, err
	}
	prev, err := e.Journal.Load(ctx, p.Key())
	if err != nil {
		return nil, nil, fmt.Errorf("reading runs of %s %s from %s: %w", p.Command, p.Flow, e.Journal.Where(), err)
	}
	if prev.Unfinished() && !e.Restart {
		total := 0
		for _, s := range prev.Steps {
			if s.Outcome != Skipped {
				total++
			}
		}
		return prev, &Resume{RunID: prev.ID, Started: prev.Started, Host: prev.Host, Done: prev.DoneSteps(), Total: total,
			PlanChanged: prev.PlanDigest != p.Digest()}, nil
	}
	now := e.now()
	id := fmt.Sprintf("%s-%04x", now.UTC().Format("20060102T150405Z"), now.Nanosecond()&0xffff)
	if e.NewID != nil {
		id = e.NewID(now)
	}
	return &Run{ID: id, Command: p.Command, Flow: p.Flow, State: Running, Started: now, Host: e.Host, KMM: e.Version}, nil, nil
}

// Execute applies p's steps in order as run r (from Begin): steps recorded as done by r are
// not repeated, every other step is checked on its cluster and applied only when not in
// effect, and each outcome is journaled before the next step starts. It returns the final run
// (the report) and, when a step fails or ctx ends, that error with the run left unfinished.
func (e *Executor) Execute(ctx context.Context, p *Plan, r *Run) (*Run, error) {
	now := e.now()
	if r.State != Running || len(r.Steps) > 0 {
		r.Resumes = append(r.Resumes, fmt.Sprintf("%s at %s", hostOr(e.Host), now.UTC().Format(time.RFC3339)))
	}
	r.State, r.Updated, r.PlanDigest, r.Finished = Running, now, p.Digest(), nil
	old := r.Steps
	r.Steps = make([]StepRecord, 0, len(p.Steps))
	for _, s := range p.Steps {
		rec := StepRecord{ID: s.ID, Kind: s.Kind, Cluster: s.Cluster, Outcome: Pending}
		switch o := find(old, s.ID); {
		case s.Skip != "":
			rec.Outcome, rec.Detail = Skipped, s.Skip
		case o != nil && o.Outcome.Done():
			rec = *o
			if rec.Outcome != DoneBefore {
				rec.Outcome, rec.Detail = DoneBefore, fmt.Sprintf("%s before run %s was interrupted", o.Outcome, r.ID)
			}
		}
		r.Steps = append(r.Steps, rec)
	}
	if err := e.save(ctx, p, r); err != nil {
		return r, err
	}
	every := e.SaveEvery
	if every == 0 {
		every = DefaultSaveEvery
	}
	lastSave := e.now()
	executed := 0
	for i := 0; i < len(p.Steps); i++ {
		s := p.Steps[i]
		rec := &r.Steps[i]
		if rec.Outcome != Pending {
			continue
		}
		if batch := e.concurrentBatch(p, r, i); len(batch) > 1 {
			n, err := e.runConcurrent(ctx, p, r, batch, &lastSave, every)
			executed += n
			if err != nil {
				return r, err
			}
			i = batch[len(batch)-1]
			continue
		}
		err := e.runStep(ctx, s, rec)
		finished := *rec.Finished
		if err != nil {
			rec.Outcome, rec.Detail, rec.Numbers = Failed, err.Error(), nil
			r.State = RunFailed
			if serr := e.save(ctx, p, r); serr != nil {
				err = fmt.Errorf("%w (and recording it failed: %v)", err, serr)
			}
			e.notify(i, p, *rec)
			return r, fmt.Errorf("step %s: %w", s.ID, err)
		}
		if every < 0 || e.AfterStep != nil || ctx.Err() != nil || finished.Sub(lastSave) >= every || nextKindDiffers(p, r, i) {
			if err := e.save(ctx, p, r); err != nil {
				return r, fmt.Errorf("step %s was %s but recording it failed (a re-run finds it in effect): %w", s.ID, rec.Outcome, err)
			}
			lastSave = e.now()
		}
		e.notify(i, p, *rec)
		executed++
		if e.AfterStep != nil {
			if err := e.AfterStep(ctx, executed); err != nil {
				return r, err
			}
		}
		if err := ctx.Err(); err != nil {
			return r, kerr.Wrap(kerr.Interrupted, fmt.Errorf("interrupted after step %s; run %s resumes from the next step: %w", s.ID, r.ID, err))
		}
	}
	finished := e.now()
	r.State, r.Finished = Done, &finished
	if err := e.save(ctx, p, r); err != nil {
		return r, fmt.Errorf("every step is done but recording the run's end failed: %w", err)
	}
	return r, nil
}

// runStep checks step s and applies it unless in effect, filling rec (started, outcome,
// numbers, finished); on error rec is left for the caller to mark failed.
func (e *Executor) runStep(ctx context.Context, s Step, rec *StepRecord) error {
	act := e.Actions[s.Kind]
	started := e.now()
	rec.Started = &started
	var err error
	if act == nil {
		err = fmt.Errorf("no action for steps of kind %q", s.Kind)
	}
	var inEffect bool
	if err == nil {
		inEffect, err = act.Check(ctx, s)
	}
	if err == nil && inEffect {
		rec.Outcome, rec.Detail = AlreadyDone, "found in effect on "+s.Cluster+": not applied again"
	} else if err == nil {
		rec.Numbers, err = act.Apply(ctx, s)
		rec.Outcome = Applied
	}
	finished := e.now()
	rec.Finished = &finished
	return err
}

// concurrentBatch returns the indexes of the pending steps from i on that are of step i's kind,
// when that kind's Action is Concurrent (and no AfterStep test hook wants steps one by one);
// nil otherwise.
func (e *Executor) concurrentBatch(p *Plan, r *Run, i int) []int {
	if e.AfterStep != nil {
		return nil
	}
	c, ok := e.Actions[p.Steps[i].Kind].(Concurrent)
	if !ok || c.Concurrency() < 2 {
		return nil
	}
	var out []int
	for j := i; j < len(p.Steps); j++ {
		if r.Steps[j].Outcome == Skipped || r.Steps[j].Outcome.Done() {
			continue
		}
		if p.Steps[j].Kind != p.Steps[i].Kind {
			break
		}
		out = append(out, j)
	}
	return out
}

// runConcurrent executes the steps batch (pending, one Concurrent kind) up to Concurrency() at
// a time. Outcomes are recorded as they come, the journal written as in the sequential loop
// (at most every `every`, and once the batch is over). The first failure stops new steps from
// starting; the steps already running finish and are recorded; the run is then failed. An
// interrupt likewise lets running steps finish and leaves the run unfinished.
func (e *Executor) runConcurrent(ctx context.Context, p *Plan, r *Run, batch []int, lastSave *time.Time, every time.Duration) (int, error) {
	width := e.Actions[p.Steps[batch[0]].Kind].(Concurrent).Concurrency()
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		firstErr error
		failedAt int
		executed int
		saveErr  error
	)
	next := make(chan int)
	for w := 0; w < min(width, len(batch)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				var rec StepRecord
				rec.ID, rec.Kind, rec.Cluster = p.Steps[i].ID, p.Steps[i].Kind, p.Steps[i].Cluster
				err := e.runStep(ctx, p.Steps[i], &rec)
				mu.Lock()
				if err != nil {
					rec.Outcome, rec.Detail, rec.Numbers = Failed, err.Error(), nil
					if firstErr == nil {
						firstErr, failedAt = err, i
					}
				} else {
					executed++
				}
				r.Steps[i] = rec
				if err == nil && saveErr == nil && (every < 0 || rec.Finished.Sub(*lastSave) >= every) {
					if serr := e.save(ctx, p, r); serr != nil {
						saveErr = fmt.Errorf("step %s was %s but recording it failed (a re-run finds it in effect): %w", rec.ID, rec.Outcome, serr)
					} else {
						*lastSave = e.now()
					}
				}
				e.notify(i, p, rec)
				mu.Unlock()
			}
		}()
	}
	for _, i := range batch {
		mu.Lock()
		stop := firstErr != nil || saveErr != nil
		mu.Unlock()
		if stop || ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		r.State = RunFailed
		err := firstErr
		if serr := e.save(ctx, p, r); serr != nil {
			err = fmt.Errorf("%w (and recording it failed: %v)", err, serr)
		}
		return executed, fmt.Errorf("step %s: %w", p.Steps[failedAt].ID, err)
	}
	if saveErr != nil {
		return executed, saveErr
	}
	if err := e.save(ctx, p, r); err != nil {
		return executed, fmt.Errorf("steps up to %s were done but recording them failed (a re-run finds them in effect): %w", p.Steps[batch[len(batch)-1]].ID, err)
	}
	*lastSave = e.now()
	if err := ctx.Err(); err != nil {
		return executed, kerr.Wrap(kerr.Interrupted, fmt.Errorf("interrupted during the %s steps; run %s resumes from the first step not done: %w", p.Steps[batch[0]].Kind, r.ID, err))
	}
	return executed, nil
}

// nextKindDiffers reports whether the next step still to execute after step i is of another
// kind than step i (or there is none): the journal is written before a different kind of change.
func nextKindDiffers(p *Plan, r *Run, i int) bool {
	for j := i + 1; j < len(p.Steps); j++ {
		if r.Steps[j].Outcome == Pending {
			return p.Steps[j].Kind != p.Steps[i].Kind
		}
	}
	return true
}

func (e *Executor) notify(i int, p *Plan, rec StepRecord) {
	if e.OnStep != nil {
		e.OnStep(i, len(p.Steps), rec)
	}
}

// save journals r; it is not cancelled with ctx, so an interrupted step is still recorded.
func (e *Executor) save(ctx context.Context, p *Plan, r *Run) error {
	r.Updated = e.now()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	return e.Journal.Save(sctx, p.Key(), r)
}

func find(recs []StepRecord, id string) *StepRecord {
	for i := range recs {
		if recs[i].ID == id {
			return &recs[i]
		}
	}
	return nil
}

func hostOr(h string) string {
	if h == "" {
		return "?"
	}
	return h
}
