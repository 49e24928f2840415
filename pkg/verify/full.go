package verify

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/cespare/xxhash/v2"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/offsetsync"
)

// MaxKeys bounds the keys a compacted comparison keeps per side; past it the comparison keeps a
// deterministic sample of the keys (those whose digest has its k low bits zero, k raised until
// the sample fits), the same sample on both sides.
const MaxKeys = 200_000

type job struct {
	p                *part
	srcFrom, tgtFrom int64
	why              string // how the start was paired
	// unpaired counts the source records before the oldest offset sync that could not be
	// paired with their copies (so were not compared).
	unpaired int64
}

// full streams both sides of every partition (o.Parallel partitions at once) and compares
// their content digests.
func (s *state) full(ctx context.Context) error {
	var jobs []job
	var total int64
	for _, p := range s.parts {
		if !p.hasRemote {
			continue
		}
		j, ok := s.start(p)
		if !ok {
			continue
		}
		jobs = append(jobs, j)
		total += max(0, p.srcEnd-j.srcFrom) + max(0, p.tgtEnd-j.tgtFrom)
	}
	// The largest partitions first: the scan ends when its last partition does, so a big one
	// started last would run alone while the other workers idle.
	size := func(j job) int64 { return max(0, j.p.srcEnd-j.srcFrom) + max(0, j.p.tgtEnd-j.tgtFrom) }
	sort.SliceStable(jobs, func(a, b int) bool { return size(jobs[a]) > size(jobs[b]) })
	s.o.Progress.Start("full: records read on both sides", total)
	defer s.o.Progress.Done()
	var mu sync.Mutex
	var firstErr error
	work := make(chan job)
	var wg sync.WaitGroup
	workers := min(s.o.Parallel, max(1, len(jobs)))
	// Each worker holds a reader per side: the prefetch budget is shared among them.
	s.srcReaders = newReaders(s.src, ScanBudget/(2*workers))
	s.tgtReaders = newReaders(s.tgt, ScanBudget/(2*workers))
	defer s.srcReaders.close()
	defer s.tgtReaders.close()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				fd, err := s.comparePartition(ctx, j)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if err == nil {
					s.add(fd)
				}
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		if ctx.Err() != nil {
			break
		}
		work <- j
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// start pairs the first source and target offsets of a partition's comparison. A compacted
// topic is read whole on both sides (it is compared by key). Otherwise the newest offset sync at
// or below the source log start pairs them (the target skips the records whose source records
// are gone), or the oldest sync when every sync is above it, or both log starts without syncs;
// the target side starts no earlier than its log start (records deleted there show as missing).
// With --from groups, the pairing starts at the newest sync at or below the lowest position any
// group has translated on the partition: everything a consumer reads after a failover.
func (s *state) start(p *part) (job, bool) {
	j := job{p: p}
	hist := s.syncs.History(offsetsync.TP{Topic: p.tp.Topic, Partition: p.tp.Partition})
	from := p.srcStart
	if p.compacted {
		j.srcFrom, j.tgtFrom, j.why = p.srcStart, p.tgtStart, "whole partition"
		return j, true
	}
	if s.o.FromGroups {
		found := false
		var gd int64
		if s.ckpts != nil {
			for _, g := range s.ckpts.Groups() {
				e, ok := s.ckpts.Get(g, offsetsync.TP{Topic: p.remote.Topic, Partition: p.remote.Partition})
				if ok && (!found || e.UpstreamOffset < from) {
					from, gd, found = e.UpstreamOffset, e.DownstreamOffset, true
					j.why = "from group " + g + "'s translated position"
				}
			}
		}
		if !found {
			s.add(Finding{Check: CheckFull, Status: OK, Topic: p.tp.Topic, RemoteTopic: p.remote.Topic, Partition: P(p.tp.Partition),
				Reason: "no group has a translated position here (--from groups): not compared"})
			return j, false
		}
		j.srcFrom, j.tgtFrom = from, gd
	} else {
		j.srcFrom, j.tgtFrom, j.why = p.srcStart, p.tgtStart, "log starts paired (no offset sync)"
	}
	var anchor *offsetsync.Sync
	for i := range hist {
		if hist[i].Upstream <= from {
			anchor = &hist[i]
		}
	}
	if anchor == nil && len(hist) > 0 && !s.o.FromGroups {
		anchor = &hist[0]
		// Every sync is above the log start (MM2 and kmm may drop syncs under load, and the
		// syncs topic is compacted): the records before the oldest one are paired by the log
		// starts when the sync is the same distance from both (what a copy from the start gives;
		// the comparison then checks that record by record), else they cannot be compared.
		if gap := anchor.Upstream - p.srcStart; gap > 0 {
			if anchor.Downstream-p.tgtStart == gap {
				j.srcFrom, j.tgtFrom = p.srcStart, p.tgtStart
				j.why = fmt.Sprintf("log starts paired (the oldest offset sync %d->%d is %d records from both)", anchor.Upstream, anchor.Downstream, gap)
				return j, true
			}
			j.unpaired = gap
		}
	}
	if anchor != nil {
		j.srcFrom, j.tgtFrom = anchor.Upstream, anchor.Downstream
		j.why += fmt.Sprintf(", paired by offset sync %d->%d", anchor.Upstream, anchor.Downstream)
		if s.o.FromGroups {
			j.why = strings.TrimPrefix(j.why, ", ")
		} else {
			j.why = fmt.Sprintf("paired by offset sync %d->%d", anchor.Upstream, anchor.Downstream)
		}
		if anchor.Upstream < p.srcStart {
			// Records between the sync and the log start are gone from the source: skip their copies.
			j.tgtFrom += p.srcStart - anchor.Upstream
			j.srcFrom = p.srcStart
		}
	}
	j.srcFrom = max(j.srcFrom, p.srcStart)
	j.tgtFrom = min(max(j.tgtFrom, p.tgtStart), max(p.tgtEnd, p.tgtStart))
	return j, true
}

func (s *state) comparePartition(ctx context.Context, j job) (Finding, error) {
	p := j.p
	fd := Finding{Check: CheckFull, Topic: p.tp.Topic, RemoteTopic: p.remote.Topic, Partition: P(p.tp.Partition)}
	srcStream, err := openStream(s.srcReaders, p.tp, j.srcFrom, p.srcEnd, !p.logTime)
	if err != nil {
		return fd, err
	}
	defer srcStream.Close()
	tgtStream, err := openStream(s.tgtReaders, p.remote, j.tgtFrom, p.tgtEnd, !p.logTime)
	if err != nil {
		return fd, err
	}
	defer tgtStream.Close()
	if p.compacted {
		return s.compareCompacted(ctx, j, fd, srcStream, tgtStream)
	}
	upTo := p.next()
	if p.stored < 0 {
		upTo = j.srcFrom
	}
	c := Comparer{ReplicatedUpTo: upTo, Progress: func(a, b int64) { s.o.Progress.Add(a + b) }}
	res, err := c.Compare(ctx, srcStream, tgtStream)
	if err != nil {
		return fd, err
	}
	fd.Counts = map[string]int64{"source_records": res.SourceRecords, "target_records": res.TargetRecords, "matched": res.Matched, "missing": res.Missing,
		"extra": res.Extra, "diverged": res.Diverged, "duplicates": res.Duplicates, "not_yet_replicated": res.NotYetReplicated,
		"ranges_equal": res.RangesEqual, "bisections": res.Bisections}
	var parts []string
	for _, d := range res.Differences {
		if d.Kind == Duplicate {
			continue
		}
		if fd.SourceOffset == nil && fd.TargetOffset == nil {
			if d.SourceOffset >= 0 {
				fd.SourceOffset = P(d.SourceOffset)
			}
			if d.TargetOffset >= 0 {
				fd.TargetOffset = P(d.TargetOffset)
			}
		}
		if len(parts) < 3 {
			parts = append(parts, describe(d))
		}
	}
	bad := res.Missing + res.Extra + res.Diverged
	var stalled []string
	if srcStream.stalled {
		stalled = append(stalled, fmt.Sprintf("the source read returned nothing for %s at offset %d of end %d", streamIdle, srcStream.last, p.srcEnd))
	}
	if tgtStream.stalled {
		stalled = append(stalled, fmt.Sprintf("the target read returned nothing for %s at offset %d of end %d", streamIdle, tgtStream.last, p.tgtEnd))
	}
	if len(stalled) > 0 && res.Diverged == 0 && res.Missing+res.Extra > 0 {
		// Missing or extra records past a stalled read are unverified, not proven gone.
		fd.Status = Warn
		fd.Reason = fmt.Sprintf("%s: %d record(s) matched, %d missing and %d extra not verified (offsets without readable records, or a slow broker; run again)",
			strings.Join(stalled, "; "), res.Matched, res.Missing, res.Extra)
		return fd, nil
	}
	dupOver := s.o.Thresholds.MaxDuplicates != nil && res.Duplicates > *s.o.Thresholds.MaxDuplicates
	switch {
	case bad > 0:
		fd.Status = Fail
		fd.Reason = fmt.Sprintf("%d missing, %d extra, %d diverged of %d compared: %s", res.Missing, res.Extra, res.Diverged, res.SourceRecords, strings.Join(parts, "; "))
	case dupOver:
		fd.Status = Fail
		fd.Reason = fmt.Sprintf("%d duplicate(s) on the target (over --max-duplicates %d)", res.Duplicates, *s.o.Thresholds.MaxDuplicates)
	case j.unpaired > 0:
		fd.Status = Warn
		fd.Reason = fmt.Sprintf("%d record(s) identical (%s); %d record(s) from the source log start %d to the oldest offset sync not compared (no sync pairs them with their copies)",
			res.Matched, j.why, j.unpaired, p.srcStart)
	default:
		fd.Status = OK
		fd.Reason = fmt.Sprintf("%d record(s) identical (%s)", res.Matched, j.why)
	}
	if res.Duplicates > 0 && !dupOver {
		for _, d := range res.Differences {
			if d.Kind == Duplicate {
				fd.Reason += fmt.Sprintf("; %d duplicate(s) (at-least-once, counted; first at target offset %d repeats source %d)", res.Duplicates, d.TargetOffset, d.SourceOffset)
				break
			}
		}
	}
	if res.NotYetReplicated > 0 {
		fd.Reason += fmt.Sprintf("; %d record(s) not replicated yet", res.NotYetReplicated)
	}
	return fd, nil
}

func describe(d Difference) string {
	switch d.Kind {
	case Missing:
		return fmt.Sprintf("%d missing from source offset %d", d.Count, d.SourceOffset)
	case Extra:
		return fmt.Sprintf("%d extra at target offset %d", d.Count, d.TargetOffset)
	case Diverged:
		return fmt.Sprintf("source offset %d differs from target offset %d", d.SourceOffset, d.TargetOffset)
	}
	return fmt.Sprintf("%d %s", d.Count, d.Kind)
}

// keyState is the newest record of a key on one side.
type keyState struct {
	value  uint64
	offset int64
	tomb   bool
}

// keyMap keeps the newest record per key, sampled to stay within MaxKeys.
type keyMap struct {
	m     map[uint64]keyState
	shift uint
	max   int
}

func (k *keyMap) keep(h uint64) bool { return h&((1<<k.shift)-1) == 0 }

func (k *keyMap) put(key uint64, st keyState) {
	if !k.keep(key) {
		return
	}
	k.m[key] = st
	for len(k.m) > k.max {
		k.shift++
		for h := range k.m {
			if !k.keep(h) {
				delete(k.m, h)
			}
		}
	}
}

func (k *keyMap) narrow(shift uint) {
	for k.shift < shift {
		k.shift++
	}
	for h := range k.m {
		if !k.keep(h) {
			delete(k.m, h)
		}
	}
}

// compareCompacted compares the newest value per key (compaction keeps no offsets to pair).
// Keys whose newest source record is not replicated yet are skipped; a tombstone matches an
// absent key (the target may have removed it).
func (s *state) compareCompacted(ctx context.Context, j job, fd Finding, src, tgt *partStream) (Finding, error) {
	read := func(st *partStream) (*keyMap, int64, error) {
		km := &keyMap{m: map[uint64]keyState{}, max: MaxKeys}
		var n int64
		st.recs = func(r *cluster.Record) {
			var kh uint64
			if r.Key != nil {
				kh = xxhash.Sum64(r.Key)
			}
			km.put(kh, keyState{value: RecordHash(&cluster.Record{Value: r.Value, Headers: r.Headers, Timestamp: r.Timestamp}, st.withTS), offset: r.Offset, tomb: r.Value == nil})
		}
		for {
			_, ok, err := st.Next(ctx)
			if err != nil {
				return nil, n, err
			}
			if !ok {
				return km, n, nil
			}
			n++
			if n%4096 == 0 {
				s.o.Progress.Add(4096)
			}
		}
	}
	sk, sn, err := read(src)
	if err != nil {
		return fd, err
	}
	tk, tn, err := read(tgt)
	if err != nil {
		return fd, err
	}
	shift := max(sk.shift, tk.shift)
	sk.narrow(shift)
	tk.narrow(shift)
	upTo := j.p.next()
	var missing, diverged, extra, inflight int64
	var first []string
	for h, sv := range sk.m {
		if j.p.stored >= 0 && sv.offset >= upTo || j.p.stored < 0 {
			inflight++
			continue
		}
		tv, ok := tk.m[h]
		switch {
		case !ok && !sv.tomb:
			missing++
			if len(first) < 3 {
				first = append(first, fmt.Sprintf("key of source offset %d missing", sv.offset))
			}
		case ok && (tv.value != sv.value || tv.tomb != sv.tomb):
			diverged++
			if len(first) < 3 {
				first = append(first, fmt.Sprintf("newest value of source offset %d differs from target offset %d", sv.offset, tv.offset))
			}
			if fd.SourceOffset == nil {
				fd.SourceOffset, fd.TargetOffset = P(sv.offset), P(tv.offset)
			}
		}
	}
	for h, tv := range tk.m {
		if _, ok := sk.m[h]; !ok && !tv.tomb {
			extra++
			if len(first) < 3 {
				first = append(first, fmt.Sprintf("key of target offset %d not on the source", tv.offset))
			}
		}
	}
	fd.Counts = map[string]int64{"source_records": sn, "target_records": tn, "keys_compared": int64(len(sk.m)) - inflight, "sample_shift": int64(shift),
		"missing": missing, "diverged": diverged, "extra": extra, "not_yet_replicated": inflight}
	sampled := ""
	if shift > 0 {
		sampled = fmt.Sprintf(", a 1/%d sample of the keys", 1<<shift)
	}
	if missing+diverged+extra > 0 {
		fd.Status = Fail
		fd.Reason = fmt.Sprintf("compacted, newest value per key%s: %d missing, %d extra, %d diverged: %s", sampled, missing, extra, diverged, strings.Join(first, "; "))
	} else {
		fd.Status = OK
		fd.Reason = fmt.Sprintf("compacted: newest value of %d key(s) identical%s", int64(len(sk.m))-inflight, sampled)
	}
	return fd, nil
}
