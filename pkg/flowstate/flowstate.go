// Package flowstate holds the record types kmm keeps per flow in its state topic (__kmm_state,
// pkg/plan.StateTopic) beside the plan journal, and their encoding: the flow's DR state
// (flow/<S>-><T>), the source end-offset snapshot `kmm replicate` stores on the target
// (ends/<S>-><T>) and a running replicator's lease (replicator/<S>-><T>/<instance>).
//
// It is pure: values in, bytes out. Reading and writing the topic is the caller's (plan.ReadState
// reads every key; Writer-side code lives with the commands that write).
//
// # The flow state machine
//
//	REPLICATING (no record, epoch 0)
//	   │ failover: mark FAILING_OVER (the running replicator stops the flow)
//	   ▼
//	FAILING_OVER ──(failover completes)──▶ FAILED_OVER (with the cut)
//	                                            │ failback: mark FAILING_BACK
//	                                            ▼
//	                                        FAILING_BACK ──(failback completes)──▶ REPLICATING
//
// Every transition increments Epoch by one. The record is written to the target always and to
// the source when it is reachable; a reader takes the highest epoch of the copies it can read
// (Newest). `kmm replicate` runs a flow only in REPLICATING.
package flowstate

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// FormatVersion is the version ("v") of the records this package writes. A reader refuses a
// newer one rather than misreading it.
const FormatVersion = 1

// State is a flow's DR state.
type State string

// The states. No record means Replicating at epoch 0.
const (
	Replicating State = "REPLICATING"
	FailingOver State = "FAILING_OVER"
	FailedOver  State = "FAILED_OVER"
	FailingBack State = "FAILING_BACK"
)

// Valid reports whether s is one of the states.
func (s State) Valid() bool {
	switch s {
	case Replicating, FailingOver, FailedOver, FailingBack:
		return true
	}
	return false
}

// Runs reports whether `kmm replicate` may run the flow in this state.
func (s State) Runs() bool { return s == Replicating || s == "" }

// Keys of the state topic.

// FlowKey is the key of a flow's state record: flow/<S>-><T>.
func FlowKey(src, tgt string) string { return "flow/" + src + "->" + tgt }

// EndsKey is the key of a flow's source end-offset snapshot: ends/<S>-><T>.
func EndsKey(src, tgt string) string { return "ends/" + src + "->" + tgt }

// LeasePrefix is the key prefix of a flow's replicator leases: replicator/<S>-><T>/.
func LeasePrefix(src, tgt string) string { return "replicator/" + src + "->" + tgt + "/" }

// LeaseKey is the key of one replicator's lease on a flow.
func LeaseKey(src, tgt, instance string) string { return LeasePrefix(src, tgt) + instance }

// PartitionCut is one source partition at the cut of a failover.
type PartitionCut struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// SourceEnd is the source's log end offset at the cut, -1 when the source was not readable.
	SourceEnd int64 `json:"source_end"`
	// Replicated is the next source offset not replicated (the replicated position), with how it
	// was known (see pkg/lag.Position).
	Replicated       int64  `json:"replicated"`
	ReplicatedSource string `json:"replicated_source,omitempty"`
	// TargetEnd is the end offset of the remote partition on the target at the cut.
	TargetEnd int64 `json:"target_end"`
}

// TopicEnd is a partition's end offset.
type TopicEnd struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	End       int64  `json:"end"`
}

// FlowRecord is the value of flow/<S>-><T>.
type FlowRecord struct {
	Version int       `json:"v"`
	Type    string    `json:"type"` // "flow"
	Flow    string    `json:"flow"` // "S->T"
	State   State     `json:"state"`
	Epoch   int64     `json:"epoch"`
	At      time.Time `json:"at"`
	Mode    string    `json:"mode,omitempty"` // planned | emergency (failover), failback's own
	By      string    `json:"by,omitempty"`   // user@host
	RunID   string    `json:"run_id,omitempty"`
	// Cut is, for FAILED_OVER, every source partition of the flow at the cut.
	Cut []PartitionCut `json:"cut,omitempty"`
	// ReverseEnds are the target's end offsets, at the cut, of the topics the reverse flow T->S
	// would copy: failback stores reverse progress from them even when S was down at failover.
	ReverseEnds []TopicEnd `json:"reverse_ends,omitempty"`
	// Fence is how failover fenced the source's writers; for the acl method the DENY bindings it
	// created, which failback removes.
	Fence *Fence `json:"fence,omitempty"`
	// Note is free text for people (a --force reason, the gate that was accepted).
	Note string `json:"note,omitempty"`
}

// Fence is a failover's fence of the source's writers.
type Fence struct {
	Method  string `json:"method"`            // none | acl | hook
	Cluster string `json:"cluster,omitempty"` // the alias of the fenced cluster
	// ACLs (method acl) are the bindings created: DENY WRITE on each topic for each principal.
	ACLs []FenceACL `json:"acls,omitempty"`
	// Command (method hook) is the hook that was run.
	Command string `json:"command,omitempty"`
}

// FenceACL is one DENY binding of an acl fence (resource type TOPIC, operation WRITE).
type FenceACL struct {
	Topic       string `json:"topic"`
	PatternType string `json:"pattern_type"` // LITERAL
	Principal   string `json:"principal"`    // User:alice, or User:* for every non-super user
	Host        string `json:"host"`         // *
}

// Ends is the value of ends/<S>-><T>: the flow's source log end offsets and when they were read.
// kmm replicate writes it every second while the source answers: each partition's end is the
// higher of the last ListOffsets answer and the high watermark of the consumer's last fetch
// response, and PartAt says when each was last confirmed; when the source stops answering, the
// record stops changing (its age is the outage's).
type Ends struct {
	Version int       `json:"v"`
	Type    string    `json:"type"` // "ends"
	Flow    string    `json:"flow"`
	At      time.Time `json:"at"` // when the source ends were read (the newest confirmation)
	// Ends maps topic -> partition end offsets (index = partition).
	Ends map[string][]int64 `json:"ends"`
	// PartAt maps topic -> when each partition's end was last confirmed (unix ms; 0 unknown).
	PartAt map[string][]int64 `json:"part_at_ms,omitempty"`
	// Prev and PrevAt are the ends about RateWindow earlier: the write rate of the source is
	// (Ends - Prev) / (At - PrevAt).
	Prev   map[string][]int64 `json:"prev,omitempty"`
	PrevAt time.Time          `json:"prev_at,omitempty"`
	// SourceDownSince, when set, is when the replicator declared the source unreachable (the
	// first failure of the outage).
	SourceDownSince *time.Time `json:"source_down_since,omitempty"`
}

// RateWindow is how far apart Ends.Prev and Ends.Ends are.
const RateWindow = 10 * time.Second

// PartitionAt returns when the snapshot's end of topic[partition] was last confirmed (At when
// the record has no per-partition times).
func (e *Ends) PartitionAt(topic string, partition int32) time.Time {
	if e == nil {
		return time.Time{}
	}
	if ps, ok := e.PartAt[topic]; ok && int(partition) < len(ps) && partition >= 0 && ps[partition] > 0 {
		return time.UnixMilli(ps[partition]).UTC()
	}
	return e.At
}

// Rate returns topic[partition]'s write rate on the source in records per second over the
// snapshot's window (ok false when unknown).
func (e *Ends) Rate(topic string, partition int32) (float64, bool) {
	if e == nil || e.PrevAt.IsZero() || !e.At.After(e.PrevAt) {
		return 0, false
	}
	cur, ok := e.End(topic, partition)
	ps, ok2 := e.Prev[topic]
	if !ok || !ok2 || int(partition) >= len(ps) {
		return 0, false
	}
	return float64(max(0, cur-ps[partition])) / e.At.Sub(e.PrevAt).Seconds(), true
}

// End returns the snapshot's end offset of topic[partition].
func (e *Ends) End(topic string, partition int32) (int64, bool) {
	if e == nil {
		return 0, false
	}
	ps, ok := e.Ends[topic]
	if !ok || int(partition) >= len(ps) || partition < 0 {
		return 0, false
	}
	return ps[partition], true
}

// Lease is the value of replicator/<S>-><T>/<instance>, refreshed by a running `kmm replicate`
// every LeaseRefresh; a tombstone on clean stop. A lease older than its TTL is not alive.
type Lease struct {
	Version   int       `json:"v"`
	Type      string    `json:"type"` // "lease"
	Flow      string    `json:"flow"`
	Instance  string    `json:"instance"`
	Host      string    `json:"host"`
	PID       int       `json:"pid"`
	Started   time.Time `json:"started_at"`
	Refreshed time.Time `json:"refreshed_at"`
	TTL       Duration  `json:"ttl"`
	KMM       string    `json:"kmm_version,omitempty"`
	Listen    string    `json:"listen,omitempty"` // the --listen URL, when there is one
	// Workers is the replicator's share of the flow when it runs as one of its workers
	// (kmm.workers.enabled); nil otherwise.
	Workers *LeaseWorkers `json:"workers,omitempty"`
}

// LeaseWorkers is one worker's share of a flow, as of its lease's refresh.
type LeaseWorkers struct {
	Group      string   `json:"group"`
	Leader     bool     `json:"leader"`
	Partitions []string `json:"partitions"` // topic[partition] the worker copies
}

// Alive reports whether the lease was refreshed within its TTL at now.
func (l *Lease) Alive(now time.Time) bool {
	return l != nil && now.Sub(l.Refreshed) <= time.Duration(l.TTL)
}

// Duration is a time.Duration written as a Go duration string ("15s").
type Duration time.Duration

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Encode returns the record value of v (*FlowRecord, *Ends or *Lease), setting its version and type.
func Encode(v any) ([]byte, error) {
	switch r := v.(type) {
	case *FlowRecord:
		r.Version, r.Type = FormatVersion, "flow"
		if !r.State.Valid() {
			return nil, fmt.Errorf("flow state %q is not one of REPLICATING, FAILING_OVER, FAILED_OVER, FAILING_BACK", r.State)
		}
	case *Ends:
		r.Version, r.Type = FormatVersion, "ends"
	case *Lease:
		r.Version, r.Type = FormatVersion, "lease"
	default:
		return nil, fmt.Errorf("flowstate: cannot encode %T", v)
	}
	return json.Marshal(v)
}

func decode(b []byte, typ string, into any) error {
	var head struct {
		V    int    `json:"v"`
		Type string `json:"type"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return fmt.Errorf("%s record: %w", typ, err)
	}
	if head.V > FormatVersion || head.V < 1 {
		return fmt.Errorf("%s record of format version %d (this kmm reads version %d): written by another kmm version", typ, head.V, FormatVersion)
	}
	if head.Type != typ {
		return fmt.Errorf("record of type %q is not a %s record", head.Type, typ)
	}
	if err := json.Unmarshal(b, into); err != nil {
		return fmt.Errorf("%s record: %w", typ, err)
	}
	return nil
}

// DecodeFlow reads a flow state value. A nil value (tombstone) is nil, nil.
func DecodeFlow(b []byte) (*FlowRecord, error) {
	if b == nil {
		return nil, nil
	}
	var f FlowRecord
	if err := decode(b, "flow", &f); err != nil {
		return nil, err
	}
	if !f.State.Valid() {
		return nil, fmt.Errorf("flow record %s: unknown state %q", f.Flow, f.State)
	}
	return &f, nil
}

// DecodeEnds reads an end-offset snapshot value.
func DecodeEnds(b []byte) (*Ends, error) {
	if b == nil {
		return nil, nil
	}
	var e Ends
	if err := decode(b, "ends", &e); err != nil {
		return nil, err
	}
	return &e, nil
}

// DecodeLease reads a lease value.
func DecodeLease(b []byte) (*Lease, error) {
	if b == nil {
		return nil, nil
	}
	var l Lease
	if err := decode(b, "lease", &l); err != nil {
		return nil, err
	}
	return &l, nil
}

// ReplicatingFor is the state of a flow without a record.
func ReplicatingFor(flowName string) *FlowRecord {
	return &FlowRecord{Version: FormatVersion, Type: "flow", Flow: flowName, State: Replicating}
}

// Newest returns the copy with the highest epoch (nil copies are skipped; on a tie the first);
// with no copy, the flow is REPLICATING at epoch 0.
func Newest(flowName string, copies ...*FlowRecord) *FlowRecord {
	var best *FlowRecord
	for _, c := range copies {
		if c != nil && (best == nil || c.Epoch > best.Epoch) {
			best = c
		}
	}
	if best == nil {
		return ReplicatingFor(flowName)
	}
	return best
}

// Next returns the record of the transition from cur to state: epoch+1, the given time, mode,
// who and run id. It refuses transitions the state machine does not have (see the package
// comment); a transition to the state the flow is already in is allowed (a resumed run).
func Next(cur *FlowRecord, state State, at time.Time, mode, by, runID string) (*FlowRecord, error) {
	from := cur.State
	if from == "" {
		from = Replicating
	}
	ok := from == state
	switch state {
	case FailingOver:
		ok = ok || from == Replicating
	case FailedOver:
		ok = ok || from == FailingOver
	case FailingBack:
		ok = ok || from == FailedOver
	case Replicating:
		ok = ok || from == FailingBack
	}
	if !ok {
		return nil, fmt.Errorf("flow %s is %s: it cannot become %s", cur.Flow, from, state)
	}
	return &FlowRecord{Version: FormatVersion, Type: "flow", Flow: cur.Flow, State: state, Epoch: cur.Epoch + 1, At: at.UTC(),
		Mode: mode, By: by, RunID: runID}, nil
}

// Leases returns the decoded leases of flow S->T among the state topic's keys (as plan.ReadState
// returns them: key -> newest value, nil for a tombstone). Undecodable values are skipped.
func Leases(state map[string][]byte, src, tgt string) []*Lease {
	var out []*Lease
	prefix := LeasePrefix(src, tgt)
	for k, v := range state {
		if !strings.HasPrefix(k, prefix) || v == nil {
			continue
		}
		if l, err := DecodeLease(v); err == nil && l != nil {
			out = append(out, l)
		}
	}
	return out
}
