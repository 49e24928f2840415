// Package plan is kmm's core for changes to clusters: a Plan is data (steps with a stable id, a
// kind, the cluster each touches, what it writes and why, and the numbers it expects), and an
// Executor applies it idempotently: before each step it asks the step's Action whether the step
// is already in effect on the cluster (then it is recorded as already done, never re-applied),
// it records every outcome with timestamps in a Journal, and a re-run of an interrupted run of
// the same command and flow resumes at the first step not recorded as done.
//
// The journal kmm uses lives on the flow's target cluster, in the compacted topic __kmm_state
// (StateTopic), so a re-run from another machine finds it. Its record format is documented in
// docs/architecture.md.
//
// It knows nothing of what a step does (Actions do: pkg/switchover), of flags, terminals or
// rendering (pkg/cmd/cmdutil), and imports no Kafka client: the journal speaks pkg/cluster.
package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Step is one change to one cluster.
type Step struct {
	// ID is stable across runs of the same command and flow: a re-run recognises a step
	// recorded as done by it (e.g. "commit-offsets/billing").
	ID string `json:"id"`
	// Kind names the Action that checks and applies the step (e.g. "commit-group-offsets").
	Kind string `json:"kind"`
	// Cluster is the alias of the cluster the step writes.
	Cluster string `json:"cluster"`
	// Writes says in words what the step writes; Why, why.
	Writes string `json:"writes"`
	Why    string `json:"why"`
	// Expect are the numbers the step expects to write (e.g. partitions: 3).
	Expect map[string]int64 `json:"expect,omitempty"`
	// Skip, when set, says why the step is planned but not applied (e.g. the group is active).
	Skip string `json:"skip,omitempty"`
	// Params is what the Action needs, kind-specific JSON (a plan can be stored and applied).
	Params json.RawMessage `json:"params,omitempty"`
}

// Plan is what a command will change, as data: rendered as a table, as JSON (-o json) and as the
// --dry-run output.
type Plan struct {
	Command string    `json:"command"` // e.g. "translate-offsets"
	Flow    string    `json:"flow"`    // "S->T"
	Journal string    `json:"journal"` // the cluster alias whose __kmm_state holds the runs
	Created time.Time `json:"created_at"`
	Steps   []Step    `json:"steps"`
	// Notes are findings that are not steps (e.g. partitions refused).
	Notes []string `json:"notes,omitempty"`
}

// Key is the journal key of the plan's runs: "run/<command>/<S>-><T>".
func (p *Plan) Key() string { return RunKey(p.Command, p.Flow) }

// RunKey is the journal key of the current run of a command on a flow.
func RunKey(command, flow string) string { return "run/" + command + "/" + flow }

// FlowKey is the journal key reserved for a flow's state (REPLICATING, FAILED_OVER, ...),
// written by failover and failback.
func FlowKey(flow string) string { return "flow/" + flow }

// Executable returns the steps that are not skipped.
func (p *Plan) Executable() []Step {
	var out []Step
	for _, s := range p.Steps {
		if s.Skip == "" {
			out = append(out, s)
		}
	}
	return out
}

// Digest identifies the plan's steps (ids, kinds, clusters, params): equal digests mean the
// same changes.
func (p *Plan) Digest() string {
	h := sha256.New()
	for _, s := range p.Steps {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%s\x00", s.ID, s.Kind, s.Cluster, s.Skip, s.Params)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Validate checks that step ids are unique and every step has a kind and a cluster.
func (p *Plan) Validate() error {
	seen := map[string]bool{}
	for _, s := range p.Steps {
		switch {
		case s.ID == "" || s.Kind == "" || s.Cluster == "":
			return fmt.Errorf("plan %s %s: step %q lacks an id, kind or cluster", p.Command, p.Flow, s.ID)
		case seen[s.ID]:
			return fmt.Errorf("plan %s %s: step id %q twice", p.Command, p.Flow, s.ID)
		}
		seen[s.ID] = true
	}
	return nil
}

// Outcome is what happened to a step.
type Outcome string

// Outcomes.
const (
	Pending     Outcome = "pending"      // not reached (yet)
	Applied     Outcome = "applied"      // applied by this run
	AlreadyDone Outcome = "already-done" // found in effect on the cluster: not applied again
	DoneBefore  Outcome = "done-before"  // recorded as done by the interrupted run this one resumed
	Skipped     Outcome = "skipped"      // planned as skipped (Step.Skip)
	Failed      Outcome = "failed"
)

// Done reports whether the outcome leaves the step in effect.
func (o Outcome) Done() bool { return o == Applied || o == AlreadyDone || o == DoneBefore }

// Numbers formats a map of numbers as "a=1 b=2", sorted by name.
func Numbers(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%d", k, m[k])
	}
	return b.String()
}
