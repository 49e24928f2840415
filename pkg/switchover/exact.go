package switchover

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/lag"
	"github.com/kmmproject/kmm/pkg/offsetmap"
	"github.com/kmmproject/kmm/pkg/offsetsync"
)

// GroupOffset is a group's committed offset on the source.
type GroupOffset struct {
	Group    string
	TP       cluster.TP // source partition
	Offset   int64
	Metadata string
}

// CutPartition is one source partition at the cut: the source frozen and fully replicated.
type CutPartition struct {
	Source    cluster.TP
	Remote    cluster.TP
	SourceEnd int64
	TargetEnd int64
}

// ExactOffset is a group partition translated at the cut.
type ExactOffset struct {
	Group        string `json:"group"`
	Topic        string `json:"topic"`
	Partition    int32  `json:"partition"`
	RemoteTopic  string `json:"remote_topic"`
	SourceOffset int64  `json:"source_offset"`
	TargetOffset int64  `json:"target_offset"`
	Metadata     string `json:"metadata,omitempty"`
	// Exact: the record at TargetOffset on the target is the copy of the record at SourceOffset
	// on the source (or both are at the end): nothing read again at the position, 0 skipped.
	Exact bool `json:"exact"`
	// Rereads bounds the records the group reads again on the target (-1 unknown: JSON null):
	// copies of records it read, and records copied twice past TargetOffset (a range copied
	// again after a crash), so an exact position may still count some.
	Rereads int64 `json:"rereads"`
	// Skips is always 0: translation never moves past a record the group has not read.
	Skips int64 `json:"skips"`
	// Ahead (rehearsals): the group is this many records ahead of replication, not on the target
	// yet (0: not ahead).
	Ahead int64  `json:"ahead_of_replication,omitempty"`
	Why   string `json:"why"`
}

// MarshalJSON writes re-reads that are not known (-1 inside) as null, never as a number.
func (e ExactOffset) MarshalJSON() ([]byte, error) {
	type plain ExactOffset
	return lag.MarshalNoEscape(struct {
		plain
		Rereads *int64 `json:"rereads"`
	}{plain(e), lag.Known(e.Rereads)})
}

type digest [16]byte

type rec struct {
	off int64
	dig digest
}

func digestOf(r cluster.Record) digest {
	h := sha256.New()
	var b [8]byte
	write := func(p []byte) {
		binary.BigEndian.PutUint64(b[:], uint64(len(p)))
		h.Write(b[:])
		h.Write(p)
	}
	if r.Key == nil {
		h.Write([]byte{0})
	} else {
		h.Write([]byte{1})
		write(r.Key)
	}
	if r.Value == nil {
		h.Write([]byte{0})
	} else {
		h.Write([]byte{1})
		write(r.Value)
	}
	binary.BigEndian.PutUint64(b[:], uint64(r.Timestamp.UnixMilli()))
	h.Write(b[:])
	for _, hd := range cluster.WithoutOrigin(r.Headers) { // kmm's provenance header is not content
		write([]byte(hd.Key))
		write(hd.Value)
	}
	var d digest
	copy(d[:], h.Sum(nil))
	return d
}

// readRange reads the records of tp in [from, end) (end: the partition's end offset) and
// returns their offsets and digests. Offsets without a record (transaction markers, compaction)
// are simply absent; the read ends at the last offset or after idle without a record.
func readRange(ctx context.Context, c cluster.Cluster, tp cluster.TP, from, end int64) ([]rec, error) {
	if from >= end {
		return nil, nil
	}
	r, err := c.NewReader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if err := r.Assign(map[cluster.TP]int64{tp: from}); err != nil {
		return nil, err
	}
	var out []rec
	last := from - 1
	idleSince := time.Now()
	for last < end-1 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		recs, err := r.Poll(ctx, 5000, 300*time.Millisecond)
		if err != nil {
			return nil, err
		}
		if len(recs) == 0 {
			if time.Since(idleSince) > cluster.DefaultIdle {
				break // the remaining offsets hold no readable record
			}
			continue
		}
		idleSince = time.Now()
		for _, x := range recs {
			if x.Offset >= end {
				last = end
				break
			}
			if x.Offset > last {
				out = append(out, rec{off: x.Offset, dig: digestOf(x)})
				last = x.Offset
			}
		}
	}
	return out, nil
}

// firstAtOrAfter is the index of the first record with offset ≥ off.
func firstAtOrAfter(rs []rec, off int64) int {
	return sort.Search(len(rs), func(i int) bool { return rs[i].off >= off })
}

// TranslateExact translates group offsets at the cut: with the source frozen and fully
// replicated, for each group partition with committed offset g it anchors on the newest offset
// sync (u, d) with u ≤ g (or the partitions' log starts when there is none), counts the source
// records in [u, g) and walks as many records on the target from d. It then proves the result:
// the record there must equal (key, value, timestamp, headers) the source record at g, or both
// must be at the end. When they differ (duplicates on the target from an earlier crash), it keeps
// the computed offset, which is at or before the true copy (never a skip), and bounds the
// re-reads by the distance to the first equal record after it.
//
// With maps (kmm's offset maps, pkg/offsetmap, by source partition), a position the map knows
// exactly is anchored on itself: only the record there is read on each side and compared (at
// any lag, a read of two records instead of the records between the nearest sync and it).
func TranslateExact(ctx context.Context, src, tgt cluster.Cluster, syncs *offsetsync.Store, cut map[cluster.TP]CutPartition, offs []GroupOffset) ([]ExactOffset, error) {
	return TranslateExactMaps(ctx, src, tgt, syncs, nil, cut, offs)
}

// TranslateExactMaps is TranslateExact with the offset maps as anchors where they are exact.
func TranslateExactMaps(ctx context.Context, src, tgt cluster.Cluster, syncs *offsetsync.Store, maps map[cluster.TP]*offsetmap.Map, cut map[cluster.TP]CutPartition, offs []GroupOffset) ([]ExactOffset, error) {
	byTP := map[cluster.TP][]GroupOffset{}
	for _, o := range offs {
		byTP[o.TP] = append(byTP[o.TP], o)
	}
	tps := make([]cluster.TP, 0, len(byTP))
	for tp := range byTP {
		tps = append(tps, tp)
	}
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
	for _, tp := range tps {
		if _, ok := cut[tp]; !ok {
			return nil, fmt.Errorf("%s[%d]: not a partition of the flow on the source", tp.Topic, tp.Partition)
		}
	}
	// Partitions are independent (their own offsets and records): partitionConcurrency at a time,
	// results in partition order.
	res := make([][]ExactOffset, len(tps))
	err := forEach(ctx, len(tps), partitionConcurrency, func(i int) error {
		var err error
		res[i], err = translatePartition(ctx, src, tgt, syncs, maps[tps[i]], tps[i], cut[tps[i]], byTP[tps[i]])
		return err
	})
	if err != nil {
		return nil, err
	}
	var out []ExactOffset
	for _, r := range res {
		out = append(out, r...)
	}
	return out, nil
}

// mapExact translates the group offsets the offset map knows exactly, and proves each: the
// record at the result on the target equals the record at the group's offset on the source, or
// both are at the end. The records are read once per side over the offsets' span. The offsets
// it could not prove are returned for the caller to walk.
func mapExact(ctx context.Context, src, tgt cluster.Cluster, om *offsetmap.Map, tp cluster.TP, c CutPartition, offs []GroupOffset) (done []ExactOffset, rest []GroupOffset, err error) {
	type cand struct {
		o  GroupOffset
		g  int64
		tr offsetmap.Translation
	}
	var cs []cand
	sLo, sHi, tLo, tHi := int64(-1), int64(-1), int64(-1), int64(-1)
	for _, o := range offs {
		g := min(o.Offset, c.SourceEnd)
		tr := om.Translate(g, c.TargetEnd)
		if !tr.Known || !tr.Exact || tr.Target > c.TargetEnd {
			rest = append(rest, o)
			continue
		}
		cs = append(cs, cand{o, g, tr})
		if g < c.SourceEnd {
			if sLo < 0 || g < sLo {
				sLo = g
			}
			sHi = max(sHi, g+1)
		}
		if tr.Target < c.TargetEnd {
			if tLo < 0 || tr.Target < tLo {
				tLo = tr.Target
			}
			tHi = max(tHi, tr.Target+1)
		}
	}
	if len(cs) == 0 {
		return nil, rest, nil
	}
	var sRecs, tRecs []rec
	if sLo >= 0 {
		// To the source's end at most: the first record at or after the highest offset.
		if sRecs, err = readRange(ctx, src, tp, sLo, c.SourceEnd); err != nil {
			return nil, nil, fmt.Errorf("reading %s[%d] on the source: %w", tp.Topic, tp.Partition, err)
		}
	}
	if tLo >= 0 {
		if tRecs, err = readRange(ctx, tgt, c.Remote, tLo, tHi); err != nil {
			return nil, nil, fmt.Errorf("reading %s[%d] on the target: %w", c.Remote.Topic, c.Remote.Partition, err)
		}
	}
	for _, x := range cs {
		e := ExactOffset{Group: x.o.Group, Topic: tp.Topic, Partition: tp.Partition, RemoteTopic: c.Remote.Topic, SourceOffset: x.o.Offset,
			Metadata: x.o.Metadata, TargetOffset: x.tr.Target, Exact: true, Rereads: x.tr.Rereads}
		si := firstAtOrAfter(sRecs, x.g)
		ti := firstAtOrAfter(tRecs, x.tr.Target)
		sEnd := x.g >= c.SourceEnd || si >= len(sRecs)
		tEnd := x.tr.Target >= c.TargetEnd || ti >= len(tRecs) || tRecs[ti].off != x.tr.Target
		switch {
		case sEnd && x.tr.Target >= c.TargetEnd:
			e.Why = fmt.Sprintf("caught up: the end of both partitions (%s)", x.tr.Why)
		case !sEnd && !tEnd && sRecs[si].dig == tRecs[ti].dig:
			e.Why = fmt.Sprintf("record at %d on the target equals the record at %d on the source (%s)", x.tr.Target, sRecs[si].off, x.tr.Why)
		default:
			rest = append(rest, x.o) // not proved: walk the records
			continue
		}
		if x.tr.Rereads > 0 {
			e.Why += fmt.Sprintf("; %d record(s) after it are copies the group reads again (a range copied twice)", x.tr.Rereads)
		}
		done = append(done, e)
	}
	return done, rest, nil
}

// partitionConcurrency is how many partitions TranslateExact reads at a time, and how many
// groups' offsets a failover reads at a time.
const partitionConcurrency = 8

// forEach calls f(0..n-1), up to width at a time, and returns the first error (the calls not
// started yet are not started once one has failed).
func forEach(ctx context.Context, n, width int, f func(i int) error) error {
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	next := make(chan int)
	for w := 0; w < min(width, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		mu.Lock()
		stop := first != nil
		mu.Unlock()
		if stop || ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return first
}

// translatePartition translates the group offsets offs of one source partition tp exactly (see
// TranslateExact).
func translatePartition(ctx context.Context, src, tgt cluster.Cluster, syncs *offsetsync.Store, om *offsetmap.Map, tp cluster.TP, c CutPartition, offs []GroupOffset) ([]ExactOffset, error) {
	var out []ExactOffset
	if om != nil { // the offset map's exact positions, each proved by the record there
		done, rest, err := mapExact(ctx, src, tgt, om, tp, c, offs)
		if err != nil {
			return nil, err
		}
		out = append(out, done...)
		if offs = rest; len(offs) == 0 {
			return out, nil
		}
	}
	{
		starts, err := src.ListOffsets(ctx, []cluster.TP{tp}, cluster.Earliest)
		if err != nil {
			return nil, err
		}
		tstarts, err := tgt.ListOffsets(ctx, []cluster.TP{c.Remote}, cluster.Earliest)
		if err != nil {
			return nil, err
		}
		var hist []offsetsync.Sync
		if syncs != nil {
			hist = syncs.History(offsetsync.TP{Topic: tp.Topic, Partition: tp.Partition})
		}
		type anchored struct {
			o    GroupOffset
			u, d int64
			how  string
		}
		var as []anchored
		sFrom, sTo, tFrom := int64(-1), int64(0), int64(-1)
		for _, o := range offs {
			g := min(max(o.Offset, starts[tp].Offset), c.SourceEnd)
			a := anchored{o: o, u: starts[tp].Offset, d: tstarts[c.Remote].Offset, how: "log starts"}
			for _, s := range hist { // oldest first
				if s.Upstream <= g && s.Upstream >= starts[tp].Offset && s.Downstream >= tstarts[c.Remote].Offset {
					a.u, a.d, a.how = s.Upstream, s.Downstream, fmt.Sprintf("offset sync %d->%d", s.Upstream, s.Downstream)
				}
			}
			a.o.Offset = g
			as = append(as, a)
			if sFrom < 0 || a.u < sFrom {
				sFrom = a.u
			}
			sTo = max(sTo, min(g+1, c.SourceEnd))
			if tFrom < 0 || a.d < tFrom {
				tFrom = a.d
			}
		}
		sRecs, err := readRange(ctx, src, tp, sFrom, sTo)
		if err != nil {
			return nil, fmt.Errorf("reading %s[%d] on the source: %w", tp.Topic, tp.Partition, err)
		}
		tRecs, err := readRange(ctx, tgt, c.Remote, tFrom, c.TargetEnd)
		if err != nil {
			return nil, fmt.Errorf("reading %s[%d] on the target: %w", c.Remote.Topic, c.Remote.Partition, err)
		}
		for _, a := range as {
			g := a.o.Offset
			n := firstAtOrAfter(sRecs, g) - firstAtOrAfter(sRecs, a.u)
			k := firstAtOrAfter(tRecs, a.d) + n
			e := ExactOffset{Group: a.o.Group, Topic: tp.Topic, Partition: tp.Partition, RemoteTopic: c.Remote.Topic, SourceOffset: a.o.Offset,
				Metadata: a.o.Metadata, TargetOffset: c.TargetEnd}
			if k < len(tRecs) {
				e.TargetOffset = tRecs[k].off
			}
			si := firstAtOrAfter(sRecs, g)
			sAtEnd := si >= len(sRecs) || g >= c.SourceEnd
			tAtEnd := k >= len(tRecs)
			switch {
			case sAtEnd && tAtEnd:
				e.Exact, e.Why = true, fmt.Sprintf("caught up: the end of both partitions (anchor: %s, %d records walked)", a.how, n)
			case !sAtEnd && !tAtEnd && sRecs[si].dig == tRecs[k].dig:
				e.Exact, e.Why = true, fmt.Sprintf("record at %d on the target equals the record at %d on the source (anchor: %s, %d records walked)", e.TargetOffset, g, a.how, n)
			default:
				e.Rereads = -1
				e.Why = "the record at the computed offset is not the copy of the group's next record"
				if !sAtEnd {
					for j := k; j < len(tRecs); j++ {
						if tRecs[j].dig == sRecs[si].dig {
							e.Rereads = int64(j - k)
							e.Why = fmt.Sprintf("duplicates on the target between the anchor and the group's offset: the copy is %d records later; kept the earlier offset (re-reads ≤ %d, no skip)", j-k, j-k)
							break
						}
					}
				} else {
					e.Rereads = int64(len(tRecs) - k)
					e.Why = fmt.Sprintf("caught up, but the target holds %d more records than the source after the anchor (duplicates): kept the earlier offset (re-reads ≤ %d)", e.Rereads, e.Rereads)
				}
			}
			out = append(out, e)
		}
	}
	return out, nil
}
