package switchover

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/plan"
	"github.com/kmmproject/kmm/pkg/snapshot"
)

// Step kinds of `kmm failover --mode rehearse`: a drill that writes only shadow groups on the
// target and deletes them again.
const (
	// KindDeleteShadow deletes shadow groups (kmm-rehearse.<group>) on the target: first those
	// an interrupted rehearsal left, at the end the ones this rehearsal committed.
	KindDeleteShadow = "delete-shadow-groups"
	// KindCommitShadow commits a group's translated offsets to its shadow group on the target.
	KindCommitShadow = "commit-shadow-offsets"
	// KindVerifyShadow reads the record at each shadow position on the target and compares it
	// with the record at the group's position on the source. It writes nothing.
	KindVerifyShadow = "verify-shadow-positions"
)

// RehearseCommand is the journal's command name of rehearsals (run/failover-rehearse/<S>-><T>),
// apart from planned and emergency runs: an interrupted rehearsal never mixes with a failover.
const RehearseCommand = "failover-rehearse"

// ShadowPrefix prefixes the shadow groups of rehearsals.
const ShadowPrefix = "kmm-rehearse."

// ShadowGroup is the shadow group of group g.
func ShadowGroup(g string) string { return ShadowPrefix + g }

// ShadowGroupsOf returns the shadow groups a rehearsal run committed, from its journal record
// (the ids of its commit steps): what an interrupted rehearsal may have left on the target.
func ShadowGroupsOf(r *plan.Run) []string {
	if r == nil {
		return nil
	}
	var out []string
	for _, s := range r.Steps {
		if s.Kind == KindCommitShadow {
			out = append(out, ShadowGroup(strings.TrimPrefix(s.ID, "shadow/commit/")))
		}
	}
	return out
}

// RehearsePartition is what a failover now would cost on one source partition.
type RehearsePartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	SourceEnd int64  `json:"source_end"`
	// Replicated is the replicated position (next source offset not on the target) and how it
	// is known (issue 21's one definition).
	Replicated       int64  `json:"replicated"`
	ReplicatedSource string `json:"replicated_source"`
	ReplicatedExact  bool   `json:"replicated_exact"`
	// NotReplicated: records not known to be on the target (source end − replicated position):
	// what a planned failover would wait for (drain) and an emergency failover now would lose at
	// most (its RPO on this partition). Exactly that many when ReplicatedExact; an upper bound
	// otherwise (the replicated position is a lower bound of the truth).
	NotReplicated int64 `json:"not_replicated"`
}

// ShadowCheck is the comparison of one shadow position with the group's position on the source.
type ShadowCheck struct {
	Group        string `json:"group"`
	ShadowGroup  string `json:"shadow_group"`
	Topic        string `json:"topic"`
	Partition    int32  `json:"partition"`
	RemoteTopic  string `json:"remote_topic"`
	SourceOffset int64  `json:"source_offset"`
	// ShadowOffset is what the shadow group holds on the target (read back after the commit).
	ShadowOffset int64 `json:"shadow_offset"`
	// Result: equal (the record at the shadow position is the copy of the group's next record:
	// key, value, headers, timestamp), at-end (both positions at their partition's end), differs,
	// not-replicated (the group's next record is not on the target yet), missing (the shadow
	// group holds no offset for the partition).
	Result string `json:"result"`
	Detail string `json:"detail,omitempty"`
}

// Rehearsal is `kmm failover --mode rehearse`: everything planned mode computes, committed to
// shadow groups, proved by reading the records back, then deleted.
type Rehearsal struct {
	Fo *Failover // F, Src, Tgt, Groups, TPs; its options' Progress
	// Leftover are shadow groups an interrupted rehearsal may have left: deleted first.
	Leftover []string

	mu          sync.Mutex
	translated  []ExactOffset
	partitions  []RehearsePartition
	checks      []ShadowCheck
	translateMs int64
}

// ShadowParams are the Params of a commit-shadow-offsets step.
type ShadowParams struct {
	Group   string         `json:"group"`
	Shadow  string         `json:"shadow_group"`
	Offsets []OffsetCommit `json:"offsets"`
}

// DeleteShadowParams are the Params of a delete-shadow-groups step.
type DeleteShadowParams struct {
	Groups []string `json:"groups"`
}

// Prepare measures the flow now (source ends, replicated positions) and translates every group
// as planned mode would at a cut taken now; nothing is written.
func (r *Rehearsal) Prepare(ctx context.Context) error {
	fo := r.Fo
	start := time.Now()
	ends, err := fo.ends(ctx)
	if err != nil {
		return err
	}
	pos, err := snapshot.Positions(ctx, snapshot.PositionQuery{Flow: fo.F, Source: fo.Src, Target: fo.Tgt, TPs: fo.TPs, SourceEnds: ends})
	if err != nil {
		return err
	}
	var parts []RehearsePartition
	next := map[cluster.TP]int64{} // exact replicated positions, or the most an estimate can be
	for _, tp := range fo.TPs {
		p := pos[tp].Position
		switch {
		case p.Exact:
			next[tp] = p.Next
		case p.Max >= 0:
			next[tp] = p.Max // a group past it is surely ahead of replication
		}
		parts = append(parts, RehearsePartition{Topic: tp.Topic, Partition: tp.Partition, SourceEnd: ends[tp], Replicated: p.Next,
			ReplicatedSource: p.Source, ReplicatedExact: p.Exact, NotReplicated: max(0, ends[tp]-p.Next)})
	}
	tr, err := fo.translate(ctx)
	if err != nil {
		return err
	}
	// With traffic, the group may be ahead of replication: its position is not on the target yet,
	// so nothing can be exact about it now. The shadow gets what an emergency failover now
	// would commit (the target's end, the records between lost); a planned failover drains them
	// first, then it is exact. The source's end is raised to the groups' offsets (they read up to
	// there: the source held at least that), so the partition's row and the group's agree.
	tends := map[cluster.TP]int64{}
	for tp, c := range fo.cut {
		tends[tp] = c.TargetEnd
	}
	ahead := map[cluster.TP]int64{}
	for i, e := range tr {
		tp := cluster.TP{Topic: e.Topic, Partition: e.Partition}
		ahead[tp] = max(ahead[tp], e.SourceOffset) // the source held at least that
		n, ok := next[tp]
		if !ok || e.SourceOffset <= n {
			continue
		}
		k := e.SourceOffset - n
		tr[i].Exact, tr[i].Rereads, tr[i].Ahead = false, 0, k
		if end, ok := tends[tp]; ok {
			tr[i].TargetOffset = end
		}
		tr[i].Why = fmt.Sprintf("the group is %d record(s) ahead of replication (replicated to %d): not on %s yet, so not exact now; a planned failover drains them first (then exact), an emergency failover now resumes it at %s's end (%d) and loses them",
			k, n, fo.F.Target, fo.F.Target, tr[i].TargetOffset)
	}
	for i, pt := range parts {
		tp := cluster.TP{Topic: pt.Topic, Partition: pt.Partition}
		if g, ok := ahead[tp]; ok && g > pt.SourceEnd {
			parts[i].SourceEnd = g
			parts[i].NotReplicated = max(0, g-pt.Replicated)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.translated, r.partitions, r.translateMs = tr, parts, time.Since(start).Milliseconds()
	return nil
}

// Translated returns the translations (what planned mode would commit now).
func (r *Rehearsal) Translated() []ExactOffset {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]ExactOffset(nil), r.translated...)
}

// Partitions returns the predicted cost per source partition.
func (r *Rehearsal) Partitions() []RehearsePartition {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]RehearsePartition(nil), r.partitions...)
}

// Checks returns the shadow positions compared by the verify step.
func (r *Rehearsal) Checks() []ShadowCheck {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]ShadowCheck(nil), r.checks...)
}

// TranslateMillis is how long measuring and translating took (a part of a planned failover's RTO).
func (r *Rehearsal) TranslateMillis() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.translateMs
}

// Plan is the rehearsal's plan (after Prepare): delete leftover shadow groups, commit each
// group's translation to its shadow group, verify the shadow positions, delete the shadow groups.
func (r *Rehearsal) Plan() (*plan.Plan, error) {
	fo := r.Fo
	f := fo.F
	p := &plan.Plan{Command: RehearseCommand, Flow: f.Name(), Journal: f.Target, Created: fo.now(), Steps: []plan.Step{}, Notes: fo.Opt.Drift}
	add := func(s plan.Step, params any) {
		if params != nil {
			s.Params, _ = json.Marshal(params)
		}
		p.Steps = append(p.Steps, s)
	}
	var shadows []string
	byGroup := map[string][]OffsetCommit{}
	for _, e := range r.Translated() {
		byGroup[e.Group] = append(byGroup[e.Group], OffsetCommit{Topic: e.RemoteTopic, Partition: e.Partition, Offset: e.TargetOffset, Metadata: e.Metadata, Current: -1})
	}
	for _, g := range fo.Groups {
		if len(byGroup[g]) > 0 {
			shadows = append(shadows, ShadowGroup(g))
		}
	}
	before := append(append([]string(nil), shadows...), r.Leftover...)
	sort.Strings(before)
	before = compactStrings(before)
	add(plan.Step{ID: "shadow/clean-before", Kind: KindDeleteShadow, Cluster: f.Target,
		Writes: fmt.Sprintf("deletes %d shadow group(s) if they exist (left by an interrupted rehearsal)", len(before)),
		Why:    "a rehearsal measures one moment: it starts from no shadow group"}, DeleteShadowParams{Groups: before})
	for _, g := range fo.Groups {
		offs := byGroup[g]
		if len(offs) == 0 {
			continue
		}
		add(plan.Step{ID: "shadow/commit/" + g, Kind: KindCommitShadow, Cluster: f.Target,
			Writes: fmt.Sprintf("committed offsets of shadow group %s on %s: %d partition(s) (group %s is not touched)", ShadowGroup(g), f.Target, len(offs), g),
			Why:    "what planned failover would commit to the group now", Expect: map[string]int64{"partitions": int64(len(offs))}},
			ShadowParams{Group: g, Shadow: ShadowGroup(g), Offsets: offs})
	}
	add(plan.Step{ID: "shadow/verify", Kind: KindVerifyShadow, Cluster: f.Target,
		Writes: "nothing: reads the record at each shadow position and the record at the group's position on " + f.Source,
		Why:    "equal records prove the translation is aligned (no re-read, no skip)"}, nil)
	add(plan.Step{ID: "shadow/delete", Kind: KindDeleteShadow, Cluster: f.Target,
		Writes: fmt.Sprintf("deletes the %d shadow group(s) of this rehearsal", len(shadows)),
		Why:    "a rehearsal leaves nothing behind"}, DeleteShadowParams{Groups: shadows})
	return p, p.Validate()
}

func compactStrings(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// Actions are the rehearsal's step actions.
func (r *Rehearsal) Actions() map[string]plan.Action {
	return map[string]plan.Action{
		KindDeleteShadow: deleteShadow{r},
		KindCommitShadow: commitShadow{r},
		KindVerifyShadow: verifyShadow{r},
	}
}

type deleteShadow struct{ r *Rehearsal }

func (a deleteShadow) groups(s plan.Step) ([]string, error) {
	var p DeleteShadowParams
	if err := json.Unmarshal(s.Params, &p); err != nil {
		return nil, fmt.Errorf("step %s: params: %w", s.ID, err)
	}
	for _, g := range p.Groups { // never anything but kmm's own shadow groups
		if !strings.HasPrefix(g, ShadowPrefix) {
			return nil, fmt.Errorf("step %s: %q is not a shadow group", s.ID, g)
		}
	}
	return p.Groups, nil
}

func (a deleteShadow) existing(ctx context.Context, s plan.Step) ([]string, error) {
	gs, err := a.groups(s)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, g := range gs {
		offs, err := a.r.Fo.Tgt.ListGroupOffsets(ctx, g)
		if err != nil {
			return nil, err
		}
		if len(offs) > 0 {
			out = append(out, g)
		}
	}
	return out, nil
}

func (a deleteShadow) Check(ctx context.Context, s plan.Step) (bool, error) {
	ex, err := a.existing(ctx, s)
	return len(ex) == 0, err
}

func (a deleteShadow) Apply(ctx context.Context, s plan.Step) (map[string]int64, error) {
	ex, err := a.existing(ctx, s)
	if err != nil {
		return nil, err
	}
	if err := a.r.Fo.Tgt.DeleteGroups(ctx, ex...); err != nil {
		return nil, fmt.Errorf("deleting shadow groups on %s: %w", a.r.Fo.F.Target, err)
	}
	return map[string]int64{"deleted": int64(len(ex))}, nil
}

type commitShadow struct{ r *Rehearsal }

func shadowParams(s plan.Step) (ShadowParams, map[cluster.TP]cluster.OffsetMeta, error) {
	var p ShadowParams
	if err := json.Unmarshal(s.Params, &p); err != nil {
		return p, nil, fmt.Errorf("step %s: params: %w", s.ID, err)
	}
	if p.Shadow != ShadowGroup(p.Group) {
		return p, nil, fmt.Errorf("step %s: %q is not the shadow group of %s", s.ID, p.Shadow, p.Group)
	}
	want := map[cluster.TP]cluster.OffsetMeta{}
	for _, o := range p.Offsets {
		want[cluster.TP{Topic: o.Topic, Partition: o.Partition}] = cluster.OffsetMeta{Offset: o.Offset, Metadata: o.Metadata}
	}
	return p, want, nil
}

// Concurrency implements plan.Concurrent (one shadow group per step).
func (commitShadow) Concurrency() int { return groupConcurrency }

func (a commitShadow) Check(ctx context.Context, s plan.Step) (bool, error) {
	p, want, err := shadowParams(s)
	if err != nil {
		return false, err
	}
	return offsetsInEffect(ctx, a.r.Fo.Tgt, p.Shadow, want)
}

func (a commitShadow) Apply(ctx context.Context, s plan.Step) (map[string]int64, error) {
	p, want, err := shadowParams(s)
	if err != nil {
		return nil, err
	}
	if err := a.r.Fo.Tgt.AlterGroupOffsets(ctx, p.Shadow, want); err != nil {
		return nil, fmt.Errorf("committing offsets of shadow group %s on %s: %w", p.Shadow, a.r.Fo.F.Target, err)
	}
	return map[string]int64{"partitions": int64(len(want))}, nil
}

type verifyShadow struct{ r *Rehearsal }

func (verifyShadow) Check(context.Context, plan.Step) (bool, error) { return false, nil }

func (a verifyShadow) Apply(ctx context.Context, _ plan.Step) (map[string]int64, error) {
	r := a.r
	fo := r.Fo
	tr := r.Translated()
	shadow := map[string]map[cluster.TP]cluster.OffsetMeta{}
	for _, e := range tr {
		if _, ok := shadow[e.Group]; ok {
			continue
		}
		offs, err := fo.Tgt.ListGroupOffsets(ctx, ShadowGroup(e.Group))
		if err != nil {
			return nil, fmt.Errorf("reading shadow group %s on %s: %w", ShadowGroup(e.Group), fo.F.Target, err)
		}
		shadow[e.Group] = offs
	}
	type at struct {
		c   cluster.Cluster
		tp  cluster.TP
		off int64
	}
	cache := map[at]*cluster.Record{}
	read := func(c cluster.Cluster, tp cluster.TP, off int64) (*cluster.Record, error) {
		k := at{c, tp, off}
		if v, ok := cache[k]; ok {
			return v, nil
		}
		v, err := recordAt(ctx, c, tp, off)
		if err != nil {
			return nil, err
		}
		cache[k] = v
		return v, nil
	}
	n := map[string]int64{}
	var checks []ShadowCheck
	for _, e := range tr {
		c := ShadowCheck{Group: e.Group, ShadowGroup: ShadowGroup(e.Group), Topic: e.Topic, Partition: e.Partition, RemoteTopic: e.RemoteTopic,
			SourceOffset: e.SourceOffset, ShadowOffset: -1}
		rtp := cluster.TP{Topic: e.RemoteTopic, Partition: e.Partition}
		om, ok := shadow[e.Group][rtp]
		if !ok {
			c.Result, c.Detail = "missing", "the shadow group holds no offset for this partition"
		} else {
			c.ShadowOffset = om.Offset
			s, err := read(fo.Src, cluster.TP{Topic: e.Topic, Partition: e.Partition}, e.SourceOffset)
			if err != nil {
				return nil, fmt.Errorf("reading %s[%d] at %d on %s: %w", e.Topic, e.Partition, e.SourceOffset, fo.F.Source, err)
			}
			t, err := read(fo.Tgt, rtp, om.Offset)
			if err != nil {
				return nil, fmt.Errorf("reading %s[%d] at %d on %s: %w", rtp.Topic, rtp.Partition, om.Offset, fo.F.Target, err)
			}
			switch {
			case s == nil && t == nil:
				c.Result = "at-end"
			case s != nil && t == nil:
				c.Result, c.Detail = "not-replicated", fmt.Sprintf("the record at %d on %s is not on %s yet", s.Offset, fo.F.Source, fo.F.Target)
			case s == nil:
				c.Result, c.Detail = "differs", fmt.Sprintf("the group is at the end of %s but the shadow position %d on %s holds a record", fo.F.Source, t.Offset, fo.F.Target)
			default:
				if d := recordDiff(*s, *t); d != "" {
					c.Result, c.Detail = "differs", fmt.Sprintf("record %d on %s and record %d on %s differ in %s", s.Offset, fo.F.Source, t.Offset, fo.F.Target, d)
				} else {
					c.Result, c.Detail = "equal", fmt.Sprintf("record %d on %s equals record %d on %s", s.Offset, fo.F.Source, t.Offset, fo.F.Target)
				}
			}
		}
		n[strings.ReplaceAll(c.Result, "-", "_")]++
		checks = append(checks, c)
	}
	n["compared"] = int64(len(checks))
	r.mu.Lock()
	r.checks = checks
	r.mu.Unlock()
	return n, nil
}

// recordDiff names what differs between two records (key, value, headers, timestamp); "" when
// they are equal.
func recordDiff(a, b cluster.Record) string {
	var d []string
	if !bytes.Equal(a.Key, b.Key) || (a.Key == nil) != (b.Key == nil) {
		d = append(d, "key")
	}
	if !bytes.Equal(a.Value, b.Value) || (a.Value == nil) != (b.Value == nil) {
		d = append(d, "value")
	}
	ah, bh := cluster.WithoutOrigin(a.Headers), cluster.WithoutOrigin(b.Headers) // kmm's provenance header is not content
	if len(ah) != len(bh) {
		d = append(d, "headers")
	} else {
		for i := range ah {
			if ah[i].Key != bh[i].Key || !bytes.Equal(ah[i].Value, bh[i].Value) {
				d = append(d, "headers")
				break
			}
		}
	}
	if a.Timestamp.UnixMilli() != b.Timestamp.UnixMilli() {
		d = append(d, "timestamp")
	}
	return strings.Join(d, ", ")
}

// recordAt reads the first record at or after off on tp (nil at the partition's end; offsets
// without a record, such as transaction markers, are passed over).
func recordAt(ctx context.Context, c cluster.Cluster, tp cluster.TP, off int64) (*cluster.Record, error) {
	ends, err := c.ListOffsets(ctx, []cluster.TP{tp}, cluster.Latest)
	if err != nil {
		return nil, err
	}
	end := ends[tp].Offset
	if off >= end {
		return nil, nil
	}
	rs, err := c.NewReader()
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	if err := rs.Assign(map[cluster.TP]int64{tp: off}); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(30 * time.Second)
	idleSince := time.Now()
	for {
		if err := ctx.Err(); err != nil {
			return nil, kerr.Wrap(kerr.Interrupted, err)
		}
		recs, err := rs.Poll(ctx, 1, 300*time.Millisecond)
		if err != nil {
			return nil, err
		}
		for _, x := range recs {
			if x.Offset >= off {
				if x.Offset >= end {
					return nil, nil
				}
				return &x, nil
			}
		}
		if len(recs) > 0 {
			idleSince = time.Now()
		} else if time.Since(idleSince) > cluster.DefaultIdle {
			return nil, nil // no readable record in [off, end)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no record read at %d within 30 s", off)
		}
	}
}
