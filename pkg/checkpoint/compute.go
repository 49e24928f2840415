package checkpoint

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/offsetsync"
	"github.com/kmmproject/kmm/pkg/policy"
)

// Config is what checkpointing needs to know about the flow S->T.
type Config struct {
	Source, Target string // cluster aliases
	Policy         policy.Policy
	// TopicFilter is the flow's topic filter (topics / topics.exclude) on source topic names;
	// nil accepts every topic. MM2 applies only this filter here; topics that are not
	// replicated have no syncs and are dropped by the translation.
	TopicFilter func(topic string) bool
	// Exact, if set, translates a source offset from where the copied records landed (kmm's
	// offset map, pkg/offsetmap), before the offset syncs are asked: ok false when it does not
	// know the position. MM2 has only the syncs (the nearest older sync: a checkpoint of a group
	// past it re-reads the records between); kmm's checkpoints carry the exact position.
	Exact func(tp TP, upstream int64) (offsetsync.Translation, bool)
}

// SourceOffset is a group's committed offset on a source partition.
type SourceOffset struct {
	Topic     string
	Partition int32
	Offset    int64 // -1: none committed
	Metadata  string
}

// TP returns the source topic-partition.
func (o SourceOffset) TP() TP { return TP{Topic: o.Topic, Partition: o.Partition} }

// Outcome is what Compute decided for one source partition of a group.
type Outcome uint8

// Outcomes.
const (
	Emit           Outcome = iota // write Checkpoint
	FilteredTopic                 // the topic does not pass the topic filter
	NoOffset                      // no committed offset
	NotTranslated                 // the mapping cannot translate it (see Translation.Status)
	NotNewer                      // the same downstream offset was already checkpointed
	WouldRewind                   // the downstream offset would move backwards without an upstream rewind
	StoreNotLoaded                // the checkpoint store is not loaded yet (MM2 emits nothing either)
	Collision                     // another source topic of the group renames to the same target topic
)

var outcomeNames = [...]string{"emit", "filtered_topic", "no_offset", "not_translated", "not_newer", "would_rewind", "store_not_loaded", "collision"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "unknown"
}

// EmitReason says why a checkpoint is emitted (MM2's three cases).
type EmitReason uint8

// Emit reasons.
const (
	NotEmitted         EmitReason = iota
	FirstCheckpoint               // no checkpoint yet for this group and partition
	UpstreamRewound               // the group's source offset went backwards (rewound on S)
	DownstreamAdvanced            // the translated offset moved forward
)

var reasonNames = [...]string{"", "first", "upstream_rewind", "downstream_advanced"}

func (r EmitReason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return "unknown"
}

// Decision is the result for one source partition of one group.
type Decision struct {
	Group   string
	Source  SourceOffset
	Outcome Outcome
	Reason  EmitReason
	// Translation is the mapping's answer (with its exactness and bound) when one was asked.
	Translation offsetsync.Translation
	// Checkpoint is the checkpoint to write (Outcome Emit) or the one that was not newer.
	Checkpoint mm2wire.Checkpoint
	// Previous is the stored checkpoint it was compared with, if any.
	Previous *Entry
}

// Compute is MirrorCheckpointTask.checkpointsForGroup for one group: one decision per given
// source offset, sorted by topic and partition. It reads m and st and changes neither; write
// the emitted checkpoints, then record them with st.Put (or Tracker.Written).
func Compute(cfg Config, m *offsetsync.Store, st *Store, group string, offsets []SourceOffset) []Decision {
	out := make([]Decision, 0, len(offsets))
	loaded := st.Loaded()
	for _, o := range offsets {
		out = append(out, decide(cfg, m, st, loaded, group, o))
	}
	slices.SortFunc(out, func(a, b Decision) int { return compareTP(a.Source.TP(), b.Source.TP()) })
	// Two source topics renamed to one target topic (e.g. "B.x" and "x" under a policy that
	// maps both to "x"): MM2's Collectors.toMap throws and the group gets no checkpoint at
	// all; kmm withholds only the colliding ones.
	seen := map[TP]int{}
	for i := range out {
		if out[i].Checkpoint.Topic == "" {
			continue
		}
		k := TP{Topic: out[i].Checkpoint.Topic, Partition: out[i].Checkpoint.Partition}
		if j, dup := seen[k]; dup {
			out[i].Outcome, out[i].Reason = Collision, NotEmitted
			out[j].Outcome, out[j].Reason = Collision, NotEmitted
			continue
		}
		seen[k] = i
	}
	return out
}

func decide(cfg Config, m *offsetsync.Store, st *Store, loaded bool, group string, o SourceOffset) Decision {
	d := Decision{Group: group, Source: o}
	switch {
	case cfg.TopicFilter != nil && !cfg.TopicFilter(o.Topic):
		d.Outcome = FilteredTopic
		return d
	case o.Offset < 0:
		d.Outcome = NoOffset
		return d
	case !loaded:
		d.Outcome = StoreNotLoaded
		return d
	}
	if tr, ok := exact(cfg, o); ok {
		d.Translation = tr
		// The map knows the position only within a bound (target records it does not account
		// for: after a failback, the target's own writes between the cut and the copy's
		// resumption): the syncs may know a later one. Both never skip a record, so the higher
		// target offset wins, as in Translate.
		if !tr.Exact && m != nil {
			if st := m.Translate(o.TP(), o.Offset); st.Status == offsetsync.Translated && st.Downstream > tr.Downstream {
				d.Translation = st
			}
		}
	} else {
		d.Translation = m.Translate(o.TP(), o.Offset)
	}
	if d.Translation.Status != offsetsync.Translated {
		d.Outcome = NotTranslated
		return d
	}
	d.Checkpoint = mm2wire.Checkpoint{
		Group:            group,
		Topic:            policy.RenameCheckpointTopic(cfg.Policy, cfg.Source, cfg.Target, o.Topic),
		Partition:        o.Partition,
		UpstreamOffset:   o.Offset,
		DownstreamOffset: d.Translation.Downstream,
		Metadata:         o.Metadata,
	}
	prev, ok := st.Get(group, TP{Topic: d.Checkpoint.Topic, Partition: o.Partition})
	switch {
	case !ok:
		d.Outcome, d.Reason = Emit, FirstCheckpoint
		return d
	case d.Checkpoint.UpstreamOffset < prev.UpstreamOffset:
		d.Outcome, d.Reason = Emit, UpstreamRewound
	case d.Checkpoint.DownstreamOffset > prev.DownstreamOffset:
		d.Outcome, d.Reason = Emit, DownstreamAdvanced
	case d.Checkpoint.DownstreamOffset == prev.DownstreamOffset:
		d.Outcome = NotNewer
	default:
		d.Outcome = WouldRewind
	}
	d.Previous = &prev
	return d
}

func exact(cfg Config, o SourceOffset) (offsetsync.Translation, bool) {
	if cfg.Exact == nil {
		return offsetsync.Translation{}, false
	}
	return cfg.Exact(o.TP(), o.Offset)
}

// Emitted returns the checkpoints of the decisions whose outcome is Emit.
func Emitted(ds []Decision) []mm2wire.Checkpoint {
	var out []mm2wire.Checkpoint
	for _, d := range ds {
		if d.Outcome == Emit {
			out = append(out, d.Checkpoint)
		}
	}
	return out
}

// Tracker is the incremental form of Compute for `kmm replicate`: it remembers each group's
// latest committed source offsets and re-evaluates only what a change touches. It is safe for
// concurrent use; decisions are returned, never written.
type Tracker struct {
	cfg Config
	m   *offsetsync.Store
	st  *Store

	mu     sync.Mutex
	groups map[string]map[TP]SourceOffset
	byTP   map[TP]map[string]struct{}
}

// NewTracker returns a tracker over the mapping m and the checkpoint store st.
func NewTracker(cfg Config, m *offsetsync.Store, st *Store) *Tracker {
	return &Tracker{cfg: cfg, m: m, st: st, groups: map[string]map[TP]SourceOffset{}, byTP: map[TP]map[string]struct{}{}}
}

// Mapping returns the tracker's offset mapping.
func (t *Tracker) Mapping() *offsetsync.Store { return t.m }

// Store returns the tracker's checkpoint store.
func (t *Tracker) Store() *Store { return t.st }

// SetGroup replaces everything known about group with a full listing of its committed source
// offsets (what a poll of ListConsumerGroupOffsets returns) and evaluates all of them.
func (t *Tracker) SetGroup(group string, offsets []SourceOffset) []Decision {
	t.mu.Lock()
	t.forget(group)
	g := make(map[TP]SourceOffset, len(offsets))
	t.groups[group] = g
	for _, o := range offsets {
		t.set(group, g, o)
	}
	t.mu.Unlock()
	return Compute(t.cfg, t.m, t.st, group, offsets)
}

// UpdateOffsets merges commits of group (e.g. read from __consumer_offsets) and evaluates only
// those. An offset < 0 removes the partition (its committed offset was deleted).
func (t *Tracker) UpdateOffsets(group string, offsets []SourceOffset) []Decision {
	t.mu.Lock()
	g := t.groups[group]
	if g == nil {
		g = map[TP]SourceOffset{}
		t.groups[group] = g
	}
	var eval []SourceOffset
	for _, o := range offsets {
		if o.Offset < 0 {
			delete(g, o.TP())
			if s := t.byTP[o.TP()]; s != nil {
				delete(s, group)
			}
			continue
		}
		t.set(group, g, o)
		eval = append(eval, o)
	}
	t.mu.Unlock()
	return Compute(t.cfg, t.m, t.st, group, eval)
}

func (t *Tracker) set(group string, g map[TP]SourceOffset, o SourceOffset) {
	g[o.TP()] = o
	s := t.byTP[o.TP()]
	if s == nil {
		s = map[string]struct{}{}
		t.byTP[o.TP()] = s
	}
	s[group] = struct{}{}
}

// RemoveGroup forgets group (deleted on the source, or no longer selected by the groups
// filter). Its stored checkpoints stay, as in MM2.
func (t *Tracker) RemoveGroup(group string) {
	t.mu.Lock()
	t.forget(group)
	t.mu.Unlock()
}

func (t *Tracker) forget(group string) {
	for tp := range t.groups[group] {
		if s := t.byTP[tp]; s != nil {
			delete(s, group)
			if len(s) == 0 {
				delete(t.byTP, tp)
			}
		}
	}
	delete(t.groups, group)
}

// Groups lists the tracked groups, sorted.
func (t *Tracker) Groups() []string {
	t.mu.Lock()
	out := make([]string, 0, len(t.groups))
	for g := range t.groups {
		out = append(out, g)
	}
	t.mu.Unlock()
	slices.Sort(out)
	return out
}

// AddSync adds an offset sync to the mapping and re-evaluates the groups with an offset on that
// source partition (a caught-up group becomes exact when the sync of the last record arrives).
func (t *Tracker) AddSync(tp TP, s offsetsync.Sync, at time.Time) (offsetsync.Change, []Decision) {
	c := t.m.Add(tp, s, at)
	if c == offsetsync.Repeated || c == offsetsync.Rejected {
		return c, nil
	}
	return c, t.Reevaluate(tp)
}

// Reevaluate evaluates every tracked group's offset on source partition tp.
func (t *Tracker) Reevaluate(tp TP) []Decision {
	t.mu.Lock()
	type item struct {
		group string
		o     SourceOffset
	}
	var items []item
	for g := range t.byTP[tp] {
		items = append(items, item{g, t.groups[g][tp]})
	}
	t.mu.Unlock()
	slices.SortFunc(items, func(a, b item) int { return cmp.Compare(a.group, b.group) })
	var out []Decision
	for _, it := range items {
		out = append(out, Compute(t.cfg, t.m, t.st, it.group, []SourceOffset{it.o})...)
	}
	return out
}

// Recompute evaluates every tracked group (MM2's periodic pass; also the retry after a failed
// write, since nothing is recorded until Written).
func (t *Tracker) Recompute() []Decision {
	var out []Decision
	for _, g := range t.Groups() {
		t.mu.Lock()
		offs := make([]SourceOffset, 0, len(t.groups[g]))
		for _, o := range t.groups[g] {
			offs = append(offs, o)
		}
		t.mu.Unlock()
		out = append(out, Compute(t.cfg, t.m, t.st, g, offs)...)
	}
	return out
}

// Written records checkpoints that were written to the checkpoints topic (in write order), so
// the monotonic filter compares with them from now on.
func (t *Tracker) Written(cps []mm2wire.Checkpoint, at time.Time) {
	for _, cp := range cps {
		t.st.Put(Entry{Checkpoint: cp, Time: at})
	}
}

// Record returns the key and value bytes of a checkpoint record (MM2's v0 format).
func Record(cp mm2wire.Checkpoint) (key, value []byte, err error) {
	if key, err = cp.AppendKey(nil); err != nil {
		return nil, nil, err
	}
	if value, err = cp.AppendValue(nil); err != nil {
		return nil, nil, err
	}
	return key, value, nil
}
