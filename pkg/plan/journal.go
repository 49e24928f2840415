package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// FormatVersion is the version of the journal's record values ("v"). A reader refuses values of a
// newer version rather than misreading them.
const FormatVersion = 1

// RunState is the state of a run.
type RunState string

// Run states. A run that is not Done is unfinished: the next run of the same command and flow
// resumes it.
const (
	Running   RunState = "running"
	RunFailed RunState = "failed" // a step failed (or the run was interrupted in one)
	Done      RunState = "done"
)

// StepRecord is a step's outcome in a run.
type StepRecord struct {
	ID       string           `json:"id"`
	Kind     string           `json:"kind"`
	Cluster  string           `json:"cluster"`
	Outcome  Outcome          `json:"outcome"`
	Started  *time.Time       `json:"started_at,omitempty"`
	Finished *time.Time       `json:"finished_at,omitempty"`
	Numbers  map[string]int64 `json:"numbers,omitempty"`
	Detail   string           `json:"detail,omitempty"` // skip reason, error, or the run a done-before step was done in
}

// Run is one execution of a plan as the journal holds it: the value of key
// run/<command>/<S>-><T> in __kmm_state.
type Run struct {
	Version    int          `json:"v"`
	Type       string       `json:"type"` // "run"
	ID         string       `json:"run_id"`
	Command    string       `json:"command"`
	Flow       string       `json:"flow"`
	State      RunState     `json:"state"`
	Started    time.Time    `json:"started_at"`
	Updated    time.Time    `json:"updated_at"`
	Finished   *time.Time   `json:"finished_at,omitempty"`
	PlanDigest string       `json:"plan_digest"`
	Host       string       `json:"host,omitempty"`
	KMM        string       `json:"kmm_version,omitempty"`
	Resumes    []string     `json:"resumed_by,omitempty"` // hosts and times of the runs that resumed it
	Steps      []StepRecord `json:"steps"`
	// StepChunks: in the state topic, a run of more than JournalChunk steps keeps its steps in
	// records "<key>/steps/<i>" (i < StepChunks) instead of Steps (TopicJournal).
	StepChunks int `json:"step_chunks,omitempty"`
}

// JournalChunk is how many step records one record of the state topic holds: a run of
// thousands of steps (one per group) is split, so that no record nears Kafka's 1 MB message
// limit and a save rewrites only the part that changed (not the whole run after every step).
const JournalChunk = 200

// stepChunk is the value of a "<key>/steps/<i>" record.
type stepChunk struct {
	Version int          `json:"v"`
	Type    string       `json:"type"` // "run-steps"
	RunID   string       `json:"run_id"`
	Index   int          `json:"chunk"`
	Steps   []StepRecord `json:"steps"`
}

// ChunkKey is the state topic key of chunk i of the steps of the run under key.
func ChunkKey(key string, i int) string { return fmt.Sprintf("%s/steps/%d", key, i) }

// Unfinished reports whether a re-run resumes r.
func (r *Run) Unfinished() bool { return r != nil && r.State != Done }

// DoneSteps counts the steps recorded as done.
func (r *Run) DoneSteps() int {
	n := 0
	for _, s := range r.Steps {
		if s.Outcome.Done() {
			n++
		}
	}
	return n
}

// EncodeRun is the record value of r.
func EncodeRun(r *Run) ([]byte, error) {
	r.Version, r.Type = FormatVersion, "run"
	return json.Marshal(r)
}

// DecodeRun reads a run record value; a value of a newer format version is an error.
func DecodeRun(b []byte) (*Run, error) {
	var r Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("run record: %w", err)
	}
	if r.Version > FormatVersion || r.Version < 1 {
		return nil, fmt.Errorf("run record of format version %d (this kmm reads version %d): written by another kmm version", r.Version, FormatVersion)
	}
	if r.Type != "run" {
		return nil, fmt.Errorf("record of type %q is not a run", r.Type)
	}
	return &r, nil
}

// Journal keeps runs where a re-run finds them.
type Journal interface {
	// Load returns the run recorded under key, or nil.
	Load(ctx context.Context, key string) (*Run, error)
	// Save records r under key (replacing what was there).
	Save(ctx context.Context, key string, r *Run) error
	// Where says where the runs are kept, for messages ("__kmm_state on cluster B").
	Where() string
}

// MemJournal is a Journal in memory (tests; commands use StateTopic).
type MemJournal struct {
	mu   sync.Mutex
	runs map[string][]byte
	// Saves counts Save calls.
	Saves int
}

// Load implements Journal.
func (m *MemJournal) Load(_ context.Context, key string) (*Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.runs[key]
	if !ok {
		return nil, nil
	}
	return DecodeRun(b)
}

// Save implements Journal.
func (m *MemJournal) Save(_ context.Context, key string, r *Run) error {
	b, err := EncodeRun(r)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.runs == nil {
		m.runs = map[string][]byte{}
	}
	m.runs[key] = b
	m.Saves++
	return nil
}

// Where implements Journal.
func (m *MemJournal) Where() string { return "memory" }
