package verify

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kmmproject/kmm/pkg/checkpoint"
	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/flow"
	"github.com/kmmproject/kmm/pkg/metasync"
	"github.com/kmmproject/kmm/pkg/mm2read"
	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/offsetsync"
)

// Levels of verification.
const (
	LevelMetadata = "metadata"
	LevelSample   = "sample"
	LevelFull     = "full"
)

// Progress receives the progress of the sample and full scans (a bar on a terminal, log lines
// otherwise).
type Progress interface {
	Start(what string, total int64)
	Add(n int64)
	Done()
}

type noProgress struct{}

func (noProgress) Start(string, int64) {}
func (noProgress) Add(int64)           {}
func (noProgress) Done()               {}

// Options tune a verify run.
type Options struct {
	Level      string
	Topics     func(string) bool // --topics (source topic names); nil: all the flow selects
	Groups     func(string) bool // --groups; nil: all the flow selects
	Samples    int               // sample: anchors per partition (default 5)
	Seed       uint64            // sample: seed of the anchor choice
	FromGroups bool              // full: only from each group's translated position
	Parallel   int               // full: partitions compared at once (default 4)
	Thresholds Thresholds
	Progress   Progress
	State      FlowStateReader // nil: StateTopicReader
	Now        func() time.Time
}

// part is what metadata learned of one selected source partition.
type part struct {
	tp, remote         cluster.TP
	srcStart, srcEnd   int64
	tgtStart, tgtEnd   int64
	stored             int64 // last replicated source offset, -1 none
	hasRemote          bool
	compacted, logTime bool
}

// next is the next source offset to replicate.
func (p *part) next() int64 {
	if p.stored >= 0 {
		return p.stored + 1
	}
	return p.srcStart
}

// state is what the levels share.
type state struct {
	f        *flow.Flow
	o        Options
	src, tgt cluster.Cluster
	parts    []*part
	syncs    *offsetsync.Store
	ckpts    *checkpoint.Store
	rep      *Report
	now      time.Time
	// srcReaders and tgtReaders hand out the full level's scan readers.
	srcReaders, tgtReaders *readers
}

func (s *state) add(f Finding) { s.rep.Add(f) }

// Run verifies flow f at o.Level. Unreachable clusters are kerr.Unreachable errors; every other
// problem is a finding.
func Run(ctx context.Context, open cluster.Opener, f *flow.Flow, o Options) (*Report, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Progress == nil {
		o.Progress = noProgress{}
	}
	if o.State == nil {
		o.State = StateTopicReader{}
	}
	if o.Samples <= 0 {
		o.Samples = 5
	}
	if o.Parallel <= 0 {
		o.Parallel = 4
	}
	if o.Level == "" {
		o.Level = LevelMetadata
	}
	s := &state{f: f, o: o, rep: &Report{Flow: f.Name(), Level: o.Level, StartedAt: o.Now().UTC()}, now: o.Now()}
	var err error
	if s.src, s.tgt, err = openBoth(ctx, open, f); err != nil {
		return nil, err
	}
	defer s.src.Close()
	defer s.tgt.Close()
	s.add(Finding{Check: CheckReachable, Status: OK, Reason: fmt.Sprintf("source %s and target %s answer", f.Source, f.Target)})
	s.rep.Seconds = map[string]float64{}
	phase := func(name string, fn func(context.Context) error) error {
		t0 := time.Now()
		err := fn(ctx)
		s.rep.Seconds[name] = time.Since(t0).Seconds()
		return err
	}
	if err := phase(LevelMetadata, s.metadata); err != nil {
		return nil, err
	}
	switch o.Level {
	case LevelSample:
		if err := phase(LevelSample, s.sample); err != nil {
			return nil, err
		}
	case LevelFull:
		if err := phase(LevelFull, s.full); err != nil {
			return nil, err
		}
	}
	s.rep.Finish(o.Now().UTC())
	return s.rep, nil
}

func openBoth(ctx context.Context, open cluster.Opener, f *flow.Flow) (cluster.Cluster, cluster.Cluster, error) {
	cs, err := cluster.OpenAll(ctx, open, f, 10*time.Second, "verify reads both clusters of "+f.Name(), flow.Source, flow.Target)
	if err != nil {
		return nil, nil, err
	}
	return cs[0], cs[1], nil
}

func (s *state) metadata(ctx context.Context) error {
	f := s.f
	// The reads of kmm's and MM2's internal topics each cost a consumer and a round trip or two:
	// they run at once, beside the topic and offset listings.
	var wg sync.WaitGroup
	bg := func(fn func()) {
		wg.Add(1)
		go func() { defer wg.Done(); fn() }()
	}
	var (
		fst       FlowState
		fstFound  bool
		fstErr    error
		stored    map[cluster.TP]int64
		storedErr error
		syncErr   error
		ckptErr   error
		newestHB  time.Time
	)
	_, syncTopic := f.OffsetSyncs()
	s.syncs = offsetsync.NewStore(offsetsync.Options{})
	bg(func() { fst, fstFound, fstErr = s.o.State.FlowState(ctx, []cluster.Cluster{s.tgt, s.src}, f.Name()) })
	bg(func() { stored, storedErr = mm2read.ReadSourcePositions(ctx, s.tgt, f.OffsetsTopic, f.SourceAlias) })
	bg(func() { _, syncErr = mm2read.LoadFlowOffsetSyncs(ctx, f, s.src, s.tgt, s.syncs) })
	if f.EmitCheckpoints {
		s.ckpts = checkpoint.NewStore()
		keep := func(g string) bool { return f.GroupFilter(g) && (s.o.Groups == nil || s.o.Groups(g)) }
		bg(func() {
			_, ckptErr = mm2read.LoadCheckpoints(ctx, s.tgt, f.CheckpointsTopic(), s.ckpts, keep)
		})
	}
	if f.EmitHeartbeats {
		bg(func() { newestHB = s.newestHeartbeat(ctx) })
	}
	waited := false
	wait := func() {
		if !waited {
			wg.Wait()
			waited = true
		}
	}
	defer wait()

	srcTopics, err := s.src.ListTopics(ctx)
	if err != nil {
		return err
	}
	tgtTopics, err := s.tgt.ListTopics(ctx)
	if err != nil {
		return err
	}
	wait()
	if st, found, err := fst, fstFound, fstErr; err != nil {
		s.add(Finding{Check: CheckFlowState, Status: Warn, Reason: "cannot read the flow state: " + err.Error()})
	} else if !found || st.State == "" || st.State == "REPLICATING" {
		reason := "replicating (no failover recorded)"
		if found {
			reason = fmt.Sprintf("replicating (epoch %d)", st.Epoch)
		}
		s.add(Finding{Check: CheckFlowState, Status: OK, Reason: reason})
	} else {
		s.add(Finding{Check: CheckFlowState, Status: Fail, Reason: fmt.Sprintf("flow %s is %s (epoch %d%s): the target is no longer a copy being replicated; verify the reverse flow instead",
			f.Name(), st.State, st.Epoch, since(st.At))})
	}
	var selected []string
	for t := range srcTopics {
		if f.Selected(t) && (s.o.Topics == nil || s.o.Topics(t)) {
			selected = append(selected, t)
		}
	}
	sort.Strings(selected)
	if len(selected) == 0 {
		s.add(Finding{Check: CheckTopics, Status: Warn, Reason: "no source topic is selected by the flow's topics filter" + map[bool]string{true: " and --topics", false: ""}[s.o.Topics != nil]})
	}
	var srcTPs, tgtTPs []cluster.TP
	var present []string
	for _, t := range selected {
		remote := f.RemoteTopic(t)
		si := srcTopics[t]
		ti, ok := tgtTopics[remote]
		if !ok {
			s.add(Finding{Check: CheckTopics, Status: Fail, Topic: t, RemoteTopic: remote, Reason: fmt.Sprintf("remote topic %s does not exist on %s", remote, f.Target)})
			continue
		}
		present = append(present, t)
		s.add(Finding{Check: CheckTopics, Status: OK, Topic: t, RemoteTopic: remote, Reason: "remote topic exists"})
		if ti.Partitions < si.Partitions {
			s.add(Finding{Check: CheckPartitions, Status: Fail, Topic: t, RemoteTopic: remote,
				Reason: fmt.Sprintf("%d partition(s) on the source, %d on the target: partitions %d..%d are not replicated", si.Partitions, ti.Partitions, ti.Partitions, si.Partitions-1),
				Counts: map[string]int64{"source": int64(si.Partitions), "target": int64(ti.Partitions)}})
		} else {
			s.add(Finding{Check: CheckPartitions, Status: OK, Topic: t, RemoteTopic: remote, Reason: fmt.Sprintf("%d partition(s) on both sides", si.Partitions)})
		}
		want := f.ReplicationFactor
		if want > 0 && ti.RF < want {
			s.add(Finding{Check: CheckRF, Status: Fail, Topic: t, RemoteTopic: remote, Reason: fmt.Sprintf("replication factor %d on the target, the flow configures %d", ti.RF, want)})
		} else {
			s.add(Finding{Check: CheckRF, Status: OK, Topic: t, RemoteTopic: remote, Reason: fmt.Sprintf("replication factor %d", ti.RF)})
		}
		for p := 0; p < si.Partitions; p++ {
			pt := &part{tp: cluster.TP{Topic: t, Partition: int32(p)}, remote: cluster.TP{Topic: remote, Partition: int32(p)}, stored: -1, hasRemote: p < ti.Partitions}
			s.parts = append(s.parts, pt)
			srcTPs = append(srcTPs, pt.tp)
			if pt.hasRemote {
				tgtTPs = append(tgtTPs, pt.remote)
			}
		}
	}
	if err := s.configs(ctx, present); err != nil {
		return err
	}
	if err := s.acls(ctx, present); err != nil {
		return err
	}
	// Offsets: the target's first (its end must not pass the source's read afterwards).
	var tStart, tEnd, sStart, sEnd map[cluster.TP]cluster.OffsetResult
	if len(tgtTPs) > 0 {
		if tStart, err = s.tgt.ListOffsets(ctx, tgtTPs, cluster.Earliest); err != nil {
			return err
		}
		if tEnd, err = s.tgt.ListOffsets(ctx, tgtTPs, cluster.Latest); err != nil {
			return err
		}
	}
	if storedErr != nil {
		return storedErr
	}
	if len(srcTPs) > 0 {
		if sStart, err = s.src.ListOffsets(ctx, srcTPs, cluster.Earliest); err != nil {
			return err
		}
		if sEnd, err = s.src.ListOffsets(ctx, srcTPs, cluster.Latest); err != nil {
			return err
		}
	}
	for _, p := range s.parts {
		p.srcStart, p.srcEnd = sStart[p.tp].Offset, sEnd[p.tp].Offset
		p.tgtStart, p.tgtEnd = tStart[p.remote].Offset, tEnd[p.remote].Offset
		if st, ok := stored[p.tp]; ok {
			p.stored = st
		}
	}
	if syncErr != nil && !errors.Is(syncErr, cluster.ErrNoTopic) {
		return syncErr
	}
	s.syncs.MarkLoaded()
	if ckptErr != nil && !errors.Is(ckptErr, cluster.ErrNoTopic) {
		return ckptErr
	}
	s.progress(ctx)
	s.targetStart()
	s.offsetSyncs(syncTopic, syncErr)
	s.heartbeats(newestHB)
	return s.checkpoints(ctx)
}

func since(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return ", since " + t.UTC().Format(time.RFC3339)
}

// configs compares each remote topic's configs with what the config sync makes them
// (metasync.CompareConfigs: the replicated entries, modulo config.properties.exclude); it also
// learns which topics are compacted and which remote topics stamp LogAppendTime.
func (s *state) configs(ctx context.Context, topics []string) error {
	if len(topics) == 0 {
		return nil
	}
	remotes := make([]string, len(topics))
	for i, t := range topics {
		remotes[i] = s.f.RemoteTopic(t)
	}
	sc, err := s.src.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		return err
	}
	tc, err := s.tgt.DescribeTopicConfigs(ctx, remotes...)
	if err != nil {
		return err
	}
	compacted, logTime := map[string]bool{}, map[string]bool{}
	for i, t := range topics {
		compacted[t] = strings.Contains(sc[t]["cleanup.policy"].Value, "compact")
		logTime[t] = tc[remotes[i]]["message.timestamp.type"].Value == "LogAppendTime"
		var diffs []string
		for _, d := range metasync.CompareConfigs(s.f, sc[t], tc[remotes[i]]) {
			diffs = append(diffs, d.String())
		}
		switch {
		case len(diffs) == 0:
			s.add(Finding{Check: CheckConfigs, Status: OK, Topic: t, RemoteTopic: remotes[i], Reason: "topic configs equal (modulo config.properties.exclude)"})
		case s.f.SyncTopicConfigs:
			s.add(Finding{Check: CheckConfigs, Status: Fail, Topic: t, RemoteTopic: remotes[i], Reason: strings.Join(diffs, "; ")})
		default:
			s.add(Finding{Check: CheckConfigs, Status: Warn, Topic: t, RemoteTopic: remotes[i], Reason: strings.Join(diffs, "; ") + " (sync.topic.configs.enabled=false)"})
		}
	}
	for _, p := range s.parts {
		p.compacted, p.logTime = compacted[p.tp.Topic], logTime[p.tp.Topic]
	}
	return nil
}

// acls checks that every principal allowed to read a selected topic on the source may read its
// remote topic on the target (the consumers that must read there after a failover); writers are
// a warning (MM2 never syncs WRITE: producers need it granted on the target before a failover).
// The rule is metasync.CompareACLs.
func (s *state) acls(ctx context.Context, topics []string) error {
	if len(topics) == 0 {
		return nil
	}
	remotes := make([]string, len(topics))
	for i, t := range topics {
		remotes[i] = s.f.RemoteTopic(t)
	}
	sa, err := s.src.DescribeTopicACLs(ctx, topics)
	if err != nil {
		s.add(Finding{Check: CheckACLs, Status: Warn, Reason: "cannot describe ACLs on the source: " + firstLine(err.Error())})
		return nil
	}
	ta, err := s.tgt.DescribeTopicACLs(ctx, remotes)
	if err != nil {
		s.add(Finding{Check: CheckACLs, Status: Warn, Reason: "cannot describe ACLs on the target: " + firstLine(err.Error())})
		return nil
	}
	for i, t := range topics {
		remote := remotes[i]
		cov := metasync.CompareACLs(t, remote, sa, ta)
		missRead, missWrite := cov.MissingRead, cov.MissingWrite
		switch {
		case len(missRead) > 0:
			s.add(Finding{Check: CheckACLs, Status: Fail, Topic: t, RemoteTopic: remote,
				Reason: fmt.Sprintf("%s may READ %s on %s but not %s on %s", strings.Join(missRead, ", "), t, s.f.Source, remote, s.f.Target)})
		case len(missWrite) > 0:
			s.add(Finding{Check: CheckACLs, Status: Warn, Topic: t, RemoteTopic: remote,
				Reason: fmt.Sprintf("%s may WRITE %s on %s but not %s on %s (MM2 never syncs WRITE; grant it before producers fail over)", strings.Join(missWrite, ", "), t, s.f.Source, remote, s.f.Target)})
		case cov.Pairs == 0:
			s.add(Finding{Check: CheckACLs, Status: OK, Topic: t, RemoteTopic: remote, Reason: "no ALLOW READ/WRITE ACL on the source for this topic"})
		default:
			s.add(Finding{Check: CheckACLs, Status: OK, Topic: t, RemoteTopic: remote, Reason: fmt.Sprintf("every principal allowed on the source is allowed on the target (%d principal/operation pairs)", cov.Pairs)})
		}
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// progress: per partition the replicated position, retention gaps and lag.
func (s *state) progress(ctx context.Context) {
	th := s.o.Thresholds
	need := map[cluster.TP]int64{}
	for _, p := range s.parts {
		// The oldest record not copied: at the replicated position, or at the log start when
		// retention deleted records before they were copied.
		if from := max(p.next(), p.srcStart); p.hasRemote && from < p.srcEnd {
			need[p.tp] = from
		}
	}
	oldest := cluster.Timestamps(ctx, s.src, need)
	for _, p := range s.parts {
		if !p.hasRemote {
			s.add(Finding{Check: CheckPartitions, Status: Fail, Topic: p.tp.Topic, RemoteTopic: p.remote.Topic, Partition: P(p.tp.Partition),
				Reason: fmt.Sprintf("partition %d exists on the source but not on the target", p.tp.Partition), Counts: map[string]int64{"records": p.srcEnd - p.srcStart}})
			continue
		}
		fd := Finding{Topic: p.tp.Topic, RemoteTopic: p.remote.Topic, Partition: P(p.tp.Partition), SourceOffset: P(p.next()),
			Counts: map[string]int64{"source_log_start": p.srcStart, "source_end": p.srcEnd, "target_log_start": p.tgtStart, "target_end": p.tgtEnd, "replicated_next": p.next()}}
		pr := fd
		pr.Check = CheckProgress
		switch {
		case p.stored < 0 && p.srcEnd > p.srcStart:
			pr.Status, pr.Reason = Warn, fmt.Sprintf("no replicated position stored on %s: not replicated yet", s.f.Target)
		case p.stored < 0:
			pr.Status, pr.Reason = OK, "empty partition, nothing to replicate"
		default:
			pr.Status, pr.Reason = OK, fmt.Sprintf("replicated up to source offset %d of %d", p.next(), p.srcEnd)
		}
		s.add(pr)
		rg := fd
		rg.Check = CheckRetention
		if p.stored >= 0 && p.next() < p.srcStart {
			rg.Status = Fail
			rg.Reason = fmt.Sprintf("source log starts at %d but only offsets before %d were replicated: %d record(s) deleted on the source before they were copied",
				p.srcStart, p.next(), p.srcStart-p.next())
			rg.Counts["lost"] = p.srcStart - p.next()
		} else {
			rg.Status, rg.Reason = OK, "no record deleted on the source before it was copied"
		}
		s.add(rg)
		lg := fd
		lg.Check = CheckLag
		recs := p.srcEnd - max(p.next(), p.srcStart)
		if recs < 0 {
			recs = 0
		}
		var age time.Duration
		ms, ageKnown := oldest[p.tp]
		if ageKnown && recs > 0 {
			age = s.now.Sub(time.UnixMilli(ms)).Round(time.Millisecond)
		}
		ageKnown = ageKnown || recs == 0
		lg.Counts["lag_records"] = recs
		if ageKnown {
			lg.Counts["lag_ms"] = age.Milliseconds() // absent when not known, never 0
		}
		lg.Status, lg.Reason = OK, fmt.Sprintf("%d record(s) behind", recs)
		switch {
		case !ageKnown:
			lg.Reason += ", the oldest one's age is not known (its timestamp could not be read)"
		case recs > 0 && age > 0:
			lg.Reason += fmt.Sprintf(", oldest %s old", age)
		}
		switch {
		case th.MaxLagRecords > 0 && recs > th.MaxLagRecords:
			lg.Status, lg.Reason = Fail, lg.Reason+fmt.Sprintf(" (over --max-lag-records %d)", th.MaxLagRecords)
		case th.MaxLagTime > 0 && age > th.MaxLagTime:
			lg.Status, lg.Reason = Fail, lg.Reason+fmt.Sprintf(" (over --max-lag-time %s)", th.MaxLagTime)
		case th.MaxLagTime > 0 && !ageKnown:
			lg.Status, lg.Reason = Warn, lg.Reason+fmt.Sprintf(" (--max-lag-time %s could not be checked)", th.MaxLagTime)
		}
		s.add(lg)
	}
}

// targetStart: a source record that still exists was copied to a target offset the target has
// deleted (DeleteRecords, or retention shorter on the target): those records are gone there.
func (s *state) targetStart() {
	for _, p := range s.parts {
		if !p.hasRemote {
			continue
		}
		fd := Finding{Check: CheckTargetStart, Status: OK, Topic: p.tp.Topic, RemoteTopic: p.remote.Topic, Partition: P(p.tp.Partition),
			Reason: "every replicated source record still on the source is still on the target"}
		for _, sy := range s.syncs.History(offsetsync.TP{Topic: p.tp.Topic, Partition: p.tp.Partition}) {
			if sy.Upstream < p.srcStart || sy.Upstream >= p.next() {
				continue
			}
			if sy.Downstream < p.tgtStart {
				fd.Status = Fail
				fd.SourceOffset, fd.TargetOffset = P(sy.Upstream), P(sy.Downstream)
				fd.Reason = fmt.Sprintf("source offset %d was copied to target offset %d, but the target log starts at %d: at least %d record(s) still on the source are gone from the target (deleted or expired there)",
					sy.Upstream, sy.Downstream, p.tgtStart, p.tgtStart-sy.Downstream)
				fd.Counts = map[string]int64{"missing_at_least": p.tgtStart - sy.Downstream}
			}
			break // the oldest sync of a record still on the source decides
		}
		s.add(fd)
	}
}

func (s *state) offsetSyncs(topic string, loadErr error) {
	if !s.f.EmitOffsetSyncs {
		s.add(Finding{Check: CheckOffsetSyncs, Status: Warn, Reason: "emit.offset-syncs.enabled=false: consumer groups cannot be translated"})
		return
	}
	if loadErr != nil {
		s.add(Finding{Check: CheckOffsetSyncs, Status: Warn, Reason: fmt.Sprintf("offset-syncs topic %s does not exist yet", topic)})
	}
	for _, p := range s.parts {
		if !p.hasRemote || p.stored < 0 {
			continue
		}
		fd := Finding{Check: CheckOffsetSyncs, Topic: p.tp.Topic, RemoteTopic: p.remote.Topic, Partition: P(p.tp.Partition)}
		sy, at, ok := s.syncs.Latest(offsetsync.TP{Topic: p.tp.Topic, Partition: p.tp.Partition})
		switch {
		case !ok:
			fd.Status, fd.Reason = Warn, "no offset sync for a replicated partition: groups cannot be translated"
		case p.next()-1-sy.Upstream > 10*max(s.f.OffsetLagMax, 1) && s.now.Sub(at) > 2*time.Minute:
			fd.Status, fd.Reason = Warn, fmt.Sprintf("newest offset sync (%d->%d, %s old) is %d records behind the replicated position", sy.Upstream, sy.Downstream,
				s.now.Sub(at).Round(time.Second), p.next()-1-sy.Upstream)
			fd.SourceOffset, fd.TargetOffset = P(sy.Upstream), P(sy.Downstream)
		default:
			fd.Status, fd.Reason = OK, fmt.Sprintf("newest offset sync %d->%d", sy.Upstream, sy.Downstream)
			fd.SourceOffset, fd.TargetOffset = P(sy.Upstream), P(sy.Downstream)
		}
		s.add(fd)
	}
}

// newestHeartbeat is the newest heartbeat (S,T) among the last records of T's heartbeats topic.
func (s *state) newestHeartbeat(ctx context.Context) time.Time {
	f := s.f
	var newest time.Time
	for _, r := range tail(ctx, s.tgt, f.Policy.HeartbeatsTopic(), 200) {
		hb, err := mm2wire.DecodeHeartbeat(r.Key, r.Value)
		if err == nil && hb.SourceClusterAlias == f.SourceAlias && hb.TargetClusterAlias == f.TargetAlias && hb.Timestamp > newest.UnixMilli() {
			newest = time.UnixMilli(hb.Timestamp)
		}
	}
	return newest
}

func (s *state) heartbeats(newest time.Time) {
	f := s.f
	if !f.EmitHeartbeats {
		s.add(Finding{Check: CheckHeartbeats, Status: OK, Reason: "emit.heartbeats.enabled=false: not checked"})
		return
	}
	limit := max(time.Minute, 10*f.HeartbeatInterval)
	switch {
	case newest.IsZero():
		s.add(Finding{Check: CheckHeartbeats, Status: Warn, Reason: fmt.Sprintf("no heartbeat %s->%s in %s on %s: is the flow replicating?", f.Source, f.Target, f.Policy.HeartbeatsTopic(), f.Target)})
	case s.now.Sub(newest) > limit:
		s.add(Finding{Check: CheckHeartbeats, Status: Warn, Reason: fmt.Sprintf("newest heartbeat is %s old (over %s): the replicator may be stopped", s.now.Sub(newest).Round(time.Second), limit)})
	default:
		s.add(Finding{Check: CheckHeartbeats, Status: OK, Reason: fmt.Sprintf("newest heartbeat %s old", s.now.Sub(newest).Round(time.Millisecond))})
	}
}

// checkpoints: per group, the age of its newest checkpoint (stopped while the group commits on
// the source is a failure past --max-checkpoint-age) and whether its translated offsets lie
// within the target's [log start, end].
func (s *state) checkpoints(ctx context.Context) error {
	f := s.f
	if !f.EmitCheckpoints {
		s.add(Finding{Check: CheckCheckpoints, Status: Warn, Reason: "emit.checkpoints.enabled=false: consumer groups have no translated offsets on the target"})
		return nil
	}
	byRemote := map[cluster.TP]*part{}
	for _, p := range s.parts {
		byRemote[p.remote] = p
	}
	maxAge := s.o.Thresholds.MaxCheckpointAge
	for _, g := range s.ckpts.Groups() {
		var newest time.Time
		upstream := map[cluster.TP]int64{}
		for _, e := range s.ckpts.Entries(g) {
			if e.Time.After(newest) {
				newest = e.Time
			}
			p := byRemote[cluster.TP{Topic: e.Topic, Partition: e.Partition}]
			if p == nil {
				continue
			}
			upstream[p.tp] = e.UpstreamOffset
			fd := Finding{Check: CheckGroups, Group: g, Topic: p.tp.Topic, RemoteTopic: p.remote.Topic, Partition: P(p.tp.Partition),
				SourceOffset: P(e.UpstreamOffset), TargetOffset: P(e.DownstreamOffset)}
			if e.DownstreamOffset < p.tgtStart || e.DownstreamOffset > p.tgtEnd {
				fd.Status, fd.Reason = Fail, fmt.Sprintf("translated offset %d is outside the target's [%d, %d]: the group would reset after a failover", e.DownstreamOffset, p.tgtStart, p.tgtEnd)
			} else {
				fd.Status, fd.Reason = OK, fmt.Sprintf("translated offset %d within [%d, %d]", e.DownstreamOffset, p.tgtStart, p.tgtEnd)
			}
			s.add(fd)
		}
		behind := false
		if offs, err := s.src.ListGroupOffsets(ctx, g); err == nil {
			for tp, om := range offs {
				if up, ok := upstream[tp]; ok && om.Offset > up {
					behind = true
				}
			}
		}
		age := s.now.Sub(newest).Round(time.Second)
		fd := Finding{Check: CheckCheckpoints, Group: g, Counts: map[string]int64{"age_ms": s.now.Sub(newest).Milliseconds()}}
		switch {
		case maxAge > 0 && behind && s.now.Sub(newest) > maxAge:
			fd.Status, fd.Reason = Fail, fmt.Sprintf("newest checkpoint is %s old (over --max-checkpoint-age %s) and the group has committed past it on the source: checkpoints stopped", age, maxAge)
		case behind && s.now.Sub(newest) > 2*time.Minute:
			fd.Status, fd.Reason = Warn, fmt.Sprintf("newest checkpoint is %s old and the group has committed past it on the source", age)
		default:
			fd.Status, fd.Reason = OK, fmt.Sprintf("newest checkpoint %s old", age)
		}
		s.add(fd)
	}
	if len(s.ckpts.Groups()) == 0 {
		s.add(Finding{Check: CheckCheckpoints, Status: OK, Reason: "no group has checkpoints for this flow"})
	}
	return nil
}

// tail reads up to n last records of every partition of topic.
func tail(ctx context.Context, c cluster.Cluster, topic string, n int64) []cluster.Record {
	ts, err := c.ListTopics(ctx)
	if err != nil || ts[topic].Partitions == 0 {
		return nil
	}
	var tps []cluster.TP
	for p := 0; p < ts[topic].Partitions; p++ {
		tps = append(tps, cluster.TP{Topic: topic, Partition: int32(p)})
	}
	starts, err1 := c.ListOffsets(ctx, tps, cluster.Earliest)
	ends, err2 := c.ListOffsets(ctx, tps, cluster.Latest)
	if err1 != nil || err2 != nil {
		return nil
	}
	var out []cluster.Record
	pool := newReaders(c, MinReaderPrefetch)
	pool.keep = false
	for _, tp := range tps {
		from := max(starts[tp].Offset, ends[tp].Offset-n)
		st, err := openStream(pool, tp, from, ends[tp].Offset, false)
		if err != nil {
			continue
		}
		st.idle = 2 * time.Second
		st.recs = func(r *cluster.Record) { out = append(out, *r) }
		for {
			if _, ok, err := st.Next(ctx); !ok || err != nil {
				break
			}
		}
		st.Close()
	}
	return out
}
