package checkpoint

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kmmproject/kmm/pkg/offsetmap"
	"github.com/kmmproject/kmm/pkg/offsetsync"
	"github.com/kmmproject/kmm/pkg/policy"
)

// Derivation says where a translated offset comes from.
type Derivation string

// Derivations.
const (
	FromCheckpoint Derivation = "checkpoint" // the stored checkpoint's downstream offset
	FromMapping    Derivation = "mapping"    // translated now from the offset-sync mapping
	FromMap        Derivation = "offset-map" // translated now from kmm's offset map: where the copies landed
)

// Row is one translated partition of a group.
type Row struct {
	Group       string
	SourceTopic string // upstream topic; derived from the target topic name when not known
	Partition   int32
	// SourceOffset is the group's committed offset on S: the live one when the caller read S,
	// otherwise the checkpoint's upstream offset.
	SourceOffset int64
	TargetTopic  string
	TargetOffset int64 // committable on T
	Metadata     string
	Derived      Derivation
	// Age is how old the source offset the row rests on is: now minus the checkpoint's time
	// (even when the mapping re-translated it), 0 for a live source offset, -1 when unknown.
	Age time.Duration
	// Exact and Bound as in offsetsync.Translation; Bound is -1 when unknown (a checkpoint the
	// kept mapping does not account for, or no mapping readable).
	Exact bool
	Bound int64
	// Checkpoint is the stored checkpoint's downstream offset, -1 when there is none.
	Checkpoint int64
	// Why says how TargetOffset was found when the offset map found it ("" otherwise).
	Why string
}

// ProblemKind is why a group, or one of its partitions, cannot be translated.
type ProblemKind string

// Problem kinds.
const (
	NoCheckpoint       ProblemKind = "no_checkpoint"        // no checkpoint (and no mapping translation) for the group
	ActiveOnTarget     ProblemKind = "active_on_target"     // the group has members on T: offsets cannot be applied
	NoMapping          ProblemKind = "no_mapping"           // a partition has no usable sync and no valid checkpoint
	PolicyMismatch     ProblemKind = "policy_mismatch"      // names do not match the configured replication policy
	BeyondTargetEnd    ProblemKind = "beyond_target_end"    // translated offset past the end of the target partition
	TargetStateUnknown ProblemKind = "target_state_unknown" // the group could not be described on T
)

// Problem is one reason; Topic is "" and Partition -1 for a group-level problem.
type Problem struct {
	Kind      ProblemKind
	Topic     string
	Partition int32
	Detail    string
}

// GroupTranslation is the result for one group.
type GroupTranslation struct {
	Group    string
	Rows     []Row
	Problems []Problem
	// Target state of the group, when described.
	TargetState   string
	TargetMembers int
}

// OK reports whether the group translated without any problem.
func (g GroupTranslation) OK() bool { return len(g.Problems) == 0 && len(g.Rows) > 0 }

// TranslateInput is everything Translate reads. Only Checkpoints, the aliases and Policy are
// required; each optional input adds precision or checks.
type TranslateInput struct {
	Source, Target string
	Policy         policy.Policy
	// Checkpoints is the store loaded from <S>.checkpoints.internal on T.
	Checkpoints *Store
	// Mapping is the offset-sync mapping, nil when not readable (the offset syncs live on S by
	// default; with offset-syncs.topic.location=target they are on T). It must be marked
	// loaded to translate; it is also used to qualify checkpoints (exact or bound).
	Mapping *offsetsync.Store
	// SourceOffsets are live committed offsets per group on S, nil when S is not read.
	SourceOffsets map[string][]SourceOffset
	// Groups are the requested groups; empty means every group with checkpoints or live
	// source offsets.
	Groups []string
	// Topics, if not nil, keeps only rows and problems whose source or target topic passes.
	Topics func(sourceTopic, targetTopic string) bool
	// TargetTopics, if not nil, are the topics that exist on T (policy check).
	TargetTopics map[string]bool
	// TargetEnds, if not nil, are log-end offsets of target partitions.
	TargetEnds map[TP]int64
	// Maps, if not nil, are kmm's offset maps per source partition (where every copied record
	// landed, pkg/offsetmap): an exact translation at any lag, preferred to the checkpoints and
	// the offset syncs wherever it knows the position.
	Maps map[TP]*offsetmap.Map
	// TargetGroups, if not nil, describe the groups on T.
	TargetGroups map[string]TargetGroup
	Now          time.Time
}

// Translate computes, for every requested group, its rows and problems, sorted by group, then
// target topic and partition. Per partition it takes the stored checkpoint (valid unless the
// live source offset is behind it: the group rewound on S since) and, when the mapping can
// translate the live offset (or else the checkpoint's upstream offset), the mapping's answer;
// the higher target offset wins (both never skip a record), the checkpoint on a tie.
func Translate(in TranslateInput) []GroupTranslation {
	groups := in.Groups
	if len(groups) == 0 {
		set := map[string]bool{}
		for _, g := range in.Checkpoints.Groups() {
			set[g] = true
		}
		for g := range in.SourceOffsets {
			set[g] = true
		}
		for g := range set {
			groups = append(groups, g)
		}
		slices.Sort(groups)
	}
	mapping := in.Mapping
	if mapping != nil && !mapping.Loaded() {
		mapping = nil
	}
	nm := newNamer(in, mapping)
	out := make([]GroupTranslation, 0, len(groups))
	for _, g := range groups {
		out = append(out, translateGroup(in, mapping, nm, g))
	}
	return out
}

// namer relates source and target topic names under the policy.
type namer struct {
	in      TranslateInput
	reverse map[string]string // target topic -> known source topic
	known   map[string]bool   // source topics known from the mapping or live offsets
}

func newNamer(in TranslateInput, m *offsetsync.Store) *namer {
	n := &namer{in: in, reverse: map[string]string{}, known: map[string]bool{}}
	add := func(src string) {
		if n.known[src] {
			return
		}
		n.known[src] = true
		n.reverse[n.target(src)] = src
	}
	if m != nil {
		for _, t := range m.Topics() {
			add(t)
		}
	}
	for _, offs := range in.SourceOffsets {
		for _, o := range offs {
			add(o.Topic)
		}
	}
	return n
}

func (n *namer) target(src string) string {
	return policy.RenameCheckpointTopic(n.in.Policy, n.in.Source, n.in.Target, src)
}

// source returns the source topic of target topic t and whether t is a name the policy gives
// a topic of this flow. Unknown names are inverted by the policy: <S><sep>x comes from x; any
// other name came from T (MM2 checkpoints a topic that came from T under its original name),
// one hop assumed.
func (n *namer) source(t string) (string, bool) {
	if s, ok := n.reverse[t]; ok {
		return s, true
	}
	p := n.in.Policy
	var s string
	if src, ok := p.TopicSource(t); ok && src == n.in.Source {
		s, _ = p.UpstreamTopic(t)
	} else {
		s = p.FormatRemoteTopic(n.in.Target, t)
	}
	return s, n.target(s) == t
}

// mismatch explains a target topic name that does not fit the policy, or "".
func (n *namer) mismatch(t string) string {
	_, ok := n.source(t)
	if !ok {
		return fmt.Sprintf("checkpoint topic %s is not a name the configured replication policy gives in flow %s->%s (it names source topic x %s); the checkpoints were written under another replication.policy.class or separator",
			t, n.in.Source, n.in.Target, n.target("x"))
	}
	if n.in.TargetTopics != nil && !n.in.TargetTopics[t] {
		return fmt.Sprintf("checkpoint topic %s does not exist on %s: the checkpoints were written under another replication policy or separator, or the topic was deleted", t, n.in.Target)
	}
	if _, known := n.reverse[t]; !known {
		// A known source topic that the checkpoint names differently: identity naming (t == k)
		// or another separator (t == <S><other sep><k>).
		for _, k := range slices.Sorted(maps.Keys(n.known)) {
			other := strings.HasPrefix(t, n.in.Source) && strings.HasSuffix(t, k) && len(t) > len(n.in.Source)+len(k)
			if t == k || other {
				return fmt.Sprintf("source topic %s is named %s on %s by the configured replication policy, but the checkpoints name it %s: the checkpoints were written under another replication.policy.class or separator",
					k, n.target(k), n.in.Target, t)
			}
		}
	}
	return ""
}

func translateGroup(in TranslateInput, m *offsetsync.Store, nm *namer, group string) GroupTranslation {
	gt := GroupTranslation{Group: group}
	keep := func(src, tgt string) bool { return in.Topics == nil || in.Topics(src, tgt) }
	addProblem := func(k ProblemKind, topic string, part int32, format string, args ...any) {
		gt.Problems = append(gt.Problems, Problem{Kind: k, Topic: topic, Partition: part, Detail: fmt.Sprintf(format, args...)})
	}
	if tg, ok := in.TargetGroups[group]; ok {
		gt.TargetState, gt.TargetMembers = tg.State, tg.Members
		switch {
		case tg.Err != nil:
			addProblem(TargetStateUnknown, "", -1, "cannot describe group %s on %s: %v", group, in.Target, tg.Err)
		case !tg.Idle():
			addProblem(ActiveOnTarget, "", -1, "group %s is not idle on %s: %s; stop its consumers there before applying offsets", group, in.Target, tg.Active())
		}
	}

	// The partitions to translate: every checkpoint, and every live source offset.
	type part struct {
		cp       *Entry
		live     *SourceOffset
		src      string
		mismatch string
	}
	parts := map[TP]*part{}
	for _, e := range in.Checkpoints.Entries(group) {
		e := e
		src, _ := nm.source(e.Topic)
		parts[e.TP()] = &part{cp: &e, src: src, mismatch: nm.mismatch(e.Topic)}
	}
	for _, o := range in.SourceOffsets[group] {
		o := o
		if o.Offset < 0 {
			continue
		}
		k := TP{Topic: nm.target(o.Topic), Partition: o.Partition}
		p := parts[k]
		if p == nil {
			p = &part{src: o.Topic}
			parts[k] = p
		}
		p.live, p.src = &o, o.Topic
	}
	if len(parts) == 0 {
		what := "no checkpoint in " + in.Policy.CheckpointsTopic(in.Source) + " on " + in.Target
		if in.SourceOffsets != nil {
			what += " and no committed offsets on " + in.Source
		}
		addProblem(NoCheckpoint, "", -1, "group %s: %s (is the group selected by the flow's groups filter, has it committed offsets on topics the flow replicates, and have checkpoints been emitted yet?)", group, what)
		return gt
	}
	keys := make([]TP, 0, len(parts))
	for k := range parts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareTP)
	for _, k := range keys {
		p := parts[k]
		if !keep(p.src, k.Topic) {
			continue
		}
		if p.mismatch != "" {
			addProblem(PolicyMismatch, k.Topic, k.Partition, "%s", p.mismatch)
		}
		srcTP := TP{Topic: p.src, Partition: k.Partition}
		row, ok := Row{}, false
		if p.cp != nil && (p.live == nil || p.live.Offset >= p.cp.UpstreamOffset) {
			row, ok = checkpointRow(in, m, group, srcTP, k, p.cp, p.live), true
		}
		if m != nil && (p.live != nil || p.cp != nil) {
			o, age, md := int64(0), time.Duration(0), ""
			if p.live != nil {
				o, md = p.live.Offset, p.live.Metadata
			} else {
				o, md, age = p.cp.UpstreamOffset, p.cp.Metadata, ageOf(in.Now, p.cp.Time)
			}
			if tr := m.Translate(srcTP, o); tr.Status == offsetsync.Translated && (!ok || tr.Downstream > row.TargetOffset) {
				cpOff := int64(-1)
				if p.cp != nil {
					cpOff = p.cp.DownstreamOffset
				}
				row, ok = Row{Group: group, SourceTopic: p.src, Partition: k.Partition, SourceOffset: o, TargetTopic: k.Topic,
					TargetOffset: tr.Downstream, Metadata: md, Derived: FromMapping, Age: age, Exact: tr.Exact, Bound: tr.Bound, Checkpoint: cpOff}, true
			}
		}
		if mp := in.Maps[srcTP]; mp != nil && (p.live != nil || p.cp != nil) {
			o, age, md := int64(0), time.Duration(0), ""
			if p.live != nil {
				o, md = p.live.Offset, p.live.Metadata
			} else {
				o, md, age = p.cp.UpstreamOffset, p.cp.Metadata, ageOf(in.Now, p.cp.Time)
			}
			end, hasEnd := in.TargetEnds[k]
			if !hasEnd {
				end = -1
			}
			// The map's exact answer wins; otherwise the higher target offset (none of the three
			// ever skips).
			if tr := mp.Translate(o, end); tr.Known && (tr.Exact || !ok || (!row.Exact && tr.Target > row.TargetOffset)) {
				cpOff := int64(-1)
				if p.cp != nil {
					cpOff = p.cp.DownstreamOffset
				}
				row, ok = Row{Group: group, SourceTopic: p.src, Partition: k.Partition, SourceOffset: o, TargetTopic: k.Topic,
					TargetOffset: tr.Target, Metadata: md, Derived: FromMap, Age: age, Exact: tr.Exact, Bound: tr.Rereads, Checkpoint: cpOff, Why: tr.Why}, true
			}
		}
		if !ok {
			addProblem(NoMapping, k.Topic, k.Partition, "%s", noMappingDetail(in, m, srcTP, p.cp, p.live))
			continue
		}
		if end, has := in.TargetEnds[k]; has && row.TargetOffset > end {
			addProblem(BeyondTargetEnd, k.Topic, k.Partition, "translated offset %d is past the end (%d) of %s[%d] on %s: the checkpoint cannot be right (MM2 before 3.5 could overshoot, or the target was truncated); not applied",
				row.TargetOffset, end, k.Topic, k.Partition, in.Target)
		}
		gt.Rows = append(gt.Rows, row)
	}
	return gt
}

// checkpointRow is the row a stored checkpoint gives, qualified by the mapping when it can.
func checkpointRow(in TranslateInput, m *offsetsync.Store, group string, srcTP, k TP, cp *Entry, live *SourceOffset) Row {
	r := Row{Group: group, SourceTopic: srcTP.Topic, Partition: k.Partition, SourceOffset: cp.UpstreamOffset, TargetTopic: k.Topic,
		TargetOffset: cp.DownstreamOffset, Metadata: cp.Metadata, Derived: FromCheckpoint, Age: ageOf(in.Now, cp.Time), Bound: -1,
		Checkpoint: cp.DownstreamOffset}
	if m != nil {
		if tr, ok := m.Explain(srcTP, cp.UpstreamOffset, cp.DownstreamOffset); ok {
			r.Exact, r.Bound = tr.Exact, tr.Bound
		}
	}
	if live != nil && live.Offset > cp.UpstreamOffset {
		// The group moved on since the checkpoint: the records between are re-read too.
		r.SourceOffset, r.Metadata, r.Age = live.Offset, live.Metadata, 0
		if r.Bound >= 0 {
			r.Bound += live.Offset - cp.UpstreamOffset
			r.Exact = r.Bound == 0
		}
	}
	return r
}

func ageOf(now, t time.Time) time.Duration {
	if t.IsZero() || now.IsZero() {
		return -1
	}
	return now.Sub(t)
}

func noMappingDetail(in TranslateInput, m *offsetsync.Store, srcTP TP, cp *Entry, live *SourceOffset) string {
	var b strings.Builder
	where := fmt.Sprintf("%s[%d]", srcTP.Topic, srcTP.Partition)
	switch {
	case cp != nil && live != nil:
		fmt.Fprintf(&b, "group rewound on %s to offset %d of %s after its last checkpoint (upstream %d), so the checkpoint would skip records; ", in.Source, live.Offset, where, cp.UpstreamOffset)
	case live != nil:
		fmt.Fprintf(&b, "no checkpoint for %s (committed offset %d on %s); ", where, live.Offset, in.Source)
	}
	if m == nil {
		b.WriteString("the offset-sync mapping is not available (the offset syncs are on the source cluster unless offset-syncs.topic.location=target)")
		return b.String()
	}
	o := int64(-1)
	if live != nil {
		o = live.Offset
	} else if cp != nil {
		o = cp.UpstreamOffset
	}
	tr := m.Translate(srcTP, o)
	switch tr.Status {
	case offsetsync.NoSyncs:
		fmt.Fprintf(&b, "no offset sync for %s (not replicated yet, or not by this flow)", where)
	case offsetsync.TooOld:
		fmt.Fprintf(&b, "offset %d is before the earliest offset sync kept for %s (%d)", o, where, tr.Sync.Upstream)
	default:
		fmt.Fprintf(&b, "the mapping cannot translate offset %d of %s (%s)", o, where, tr.Status)
	}
	return b.String()
}

// CheckpointsTopicReport says whether the checkpoints topic the policy expects exists on T and
// which other topics look like checkpoints topics of the same source cluster under another
// separator (a policy mismatch between the writer and the reader).
type CheckpointsTopicReport struct {
	Expected string
	Exists   bool
	Others   []string
}

// DiagnoseCheckpointsTopic inspects the topic names of T for source alias source.
func DiagnoseCheckpointsTopic(p policy.Policy, source string, topics []string) CheckpointsTopicReport {
	r := CheckpointsTopicReport{Expected: p.CheckpointsTopic(source)}
	for _, t := range topics {
		if t == r.Expected {
			r.Exists = true
			continue
		}
		rest, ok := strings.CutPrefix(t, source)
		if !ok {
			continue
		}
		// rest = <sep>checkpoints<sep>internal for some non-empty separator.
		i := strings.Index(rest, "checkpoints")
		if i <= 0 {
			continue
		}
		sep := rest[:i]
		if rest[i+len("checkpoints"):] == sep+"internal" {
			r.Others = append(r.Others, t)
		}
	}
	slices.Sort(r.Others)
	return r
}
