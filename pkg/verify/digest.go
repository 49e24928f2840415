package verify

import (
	"context"
	"encoding/binary"

	"github.com/cespare/xxhash/v2"

	"github.com/kmmproject/kmm/pkg/cluster"
)

// RecordHash is the content digest of one record: its key, value, headers in order and, when
// withTS, its timestamp (milliseconds). Batch CRCs cannot be compared (replicators re-batch), so
// every record is hashed from its fields; a null key or value differs from an empty one. A
// trailing provenance header (cluster.HeaderOrigin, added by kmm to copies) is not hashed.
func RecordHash(r *cluster.Record, withTS bool) uint64 {
	var d xxhash.Digest
	d.Reset()
	var b [9]byte
	lenPrefix := func(null bool, n int) {
		if null {
			b[0] = 0
			_, _ = d.Write(b[:1])
			return
		}
		b[0] = 1
		binary.BigEndian.PutUint64(b[1:], uint64(n))
		_, _ = d.Write(b[:9])
	}
	lenPrefix(r.Key == nil, len(r.Key))
	_, _ = d.Write(r.Key)
	lenPrefix(r.Value == nil, len(r.Value))
	_, _ = d.Write(r.Value)
	b[0] = 'h'
	hs := cluster.WithoutOrigin(r.Headers)
	binary.BigEndian.PutUint64(b[1:], uint64(len(hs)))
	_, _ = d.Write(b[:9])
	for _, h := range hs {
		lenPrefix(false, len(h.Key))
		_, _ = d.WriteString(h.Key)
		lenPrefix(h.Value == nil, len(h.Value))
		_, _ = d.Write(h.Value)
	}
	if withTS {
		b[0] = 't'
		binary.BigEndian.PutUint64(b[1:], uint64(r.Timestamp.UnixMilli()))
		_, _ = d.Write(b[:9])
	}
	return d.Sum64()
}

// Item is one record as the comparison sees it: its offset on its side and its digest.
type Item = cluster.Digest

// Stream yields the items of one partition range in offset order.
type Stream interface {
	Next(ctx context.Context) (Item, bool, error)
}

// SliceStream is a Stream over items in memory (tests).
type SliceStream struct {
	Items []Item
	i     int
}

// Next implements Stream.
func (s *SliceStream) Next(context.Context) (Item, bool, error) {
	if s.i >= len(s.Items) {
		return Item{}, false, nil
	}
	s.i++
	return s.Items[s.i-1], true, nil
}

// Difference kinds.
const (
	Missing   = "missing"   // a replicated source record is not on the target
	Extra     = "extra"     // a target record that no source record explains
	Diverged  = "diverged"  // paired records whose content differs
	Duplicate = "duplicate" // a target record repeating a source record already matched (at-least-once)
)

// Difference is one run of differing records: Count records of kind Kind starting at the given
// offsets (-1 where the kind has no record on that side).
type Difference struct {
	Kind         string `json:"kind"`
	SourceOffset int64  `json:"source_offset"`
	TargetOffset int64  `json:"target_offset"`
	Count        int64  `json:"count"`
}

// Result is the outcome of comparing one partition.
type Result struct {
	SourceRecords    int64 `json:"source_records"`
	TargetRecords    int64 `json:"target_records"`
	Matched          int64 `json:"matched"`
	Missing          int64 `json:"missing"`
	Extra            int64 `json:"extra"`
	Diverged         int64 `json:"diverged"`
	Duplicates       int64 `json:"duplicates"`
	NotYetReplicated int64 `json:"not_yet_replicated"`
	// RangesEqual counts the ranges whose digests matched at once; Bisections the mismatching
	// ranges narrowed down to their first differing record.
	RangesEqual int64        `json:"ranges_equal"`
	Bisections  int64        `json:"bisections"`
	Differences []Difference `json:"differences,omitempty"` // the first MaxDifferences runs
}

// MaxDifferences bounds the difference runs a Result keeps (counts are always complete).
const MaxDifferences = 20

func (r *Result) note(kind string, src, tgt, n int64) {
	switch kind {
	case Missing:
		r.Missing += n
	case Extra:
		r.Extra += n
	case Diverged:
		r.Diverged += n
	case Duplicate:
		r.Duplicates += n
	}
	if k := len(r.Differences); k > 0 {
		last := &r.Differences[k-1]
		if last.Kind == kind && (src < 0 || last.SourceOffset+last.Count == src || kind == Extra || kind == Duplicate) &&
			(tgt < 0 || last.TargetOffset+last.Count == tgt || kind == Missing) {
			last.Count += n
			return
		}
	}
	if len(r.Differences) < MaxDifferences {
		r.Differences = append(r.Differences, Difference{Kind: kind, SourceOffset: src, TargetOffset: tgt, Count: n})
	}
}

// Comparer compares a source and a target stream of one partition: range digests of Chunk
// records at a time, a mismatching range bisected (by record count: offsets differ between the
// sides) down to its first differing record, which is then classified as a duplicate (it repeats
// one of the last Window source records already matched), missing source records (the target
// record is found within Lookahead source records ahead), extra target records (the source
// record is found within Lookahead target records ahead) or a divergence. Memory is bounded by
// Chunk+Lookahead items per side plus the Window: 16 bytes each.
type Comparer struct {
	Chunk     int
	Lookahead int
	Window    int
	// ReplicatedUpTo: source records at or beyond this offset that the target does not have
	// yet are not yet replicated (lag), not missing. -1: every source record is expected.
	ReplicatedUpTo int64
	// Progress, if set, is called with the records read on each side since its last call.
	Progress func(src, tgt int64)
}

// Defaults of a Comparer.
const (
	DefaultChunk     = 4096
	DefaultLookahead = 100_000
	DefaultWindow    = 100_000
	// lookaheadBudget: after this many divergences, records are paired one to one (no more
	// searching ahead), so a wholly different partition costs linear time.
	lookaheadBudget = 1000
)

type ibuf struct {
	s     Stream
	items []Item
	head  int
	eof   bool
	read  int64
}

func (b *ibuf) len() int      { return len(b.items) - b.head }
func (b *ibuf) at(i int) Item { return b.items[b.head+i] }
func (b *ibuf) drop(n int)    { b.head += n; b.compact() }
func (b *ibuf) fill(ctx context.Context, n int) error {
	for !b.eof && b.len() < n {
		it, ok, err := b.s.Next(ctx)
		if err != nil {
			return err
		}
		if !ok {
			b.eof = true
			break
		}
		b.items = append(b.items, it)
		b.read++
	}
	return nil
}

func (b *ibuf) compact() {
	if b.head > 4096 && b.head*2 > len(b.items) {
		n := copy(b.items, b.items[b.head:])
		b.items = b.items[:n]
		b.head = 0
	}
}

func digest(b *ibuf, lo, hi int) uint64 {
	var d xxhash.Digest
	d.Reset()
	var w [8]byte
	for i := lo; i < hi; i++ {
		binary.BigEndian.PutUint64(w[:], b.at(i).Hash)
		_, _ = d.Write(w[:])
	}
	return d.Sum64()
}

// firstDiff returns the first index in [0,n) where the two buffers differ, bisecting range
// digests; [0,n) is known to differ.
func firstDiff(a, b *ibuf, n int) int {
	lo, hi := 0, n
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if digest(a, lo, mid) == digest(b, lo, mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// window remembers the digests of the last source records matched: a ring, indexed by a map
// only once a partition shows its first difference (clean partitions never pay for the map).
type window struct {
	max     int
	ring    []Item
	pos     int
	indexed bool
	m       map[uint64]int64
}

func (w *window) add(it Item) {
	if w.max <= 0 {
		return
	}
	if len(w.ring) < w.max {
		w.ring = append(w.ring, it)
	} else {
		old := w.ring[w.pos]
		if w.indexed && w.m[old.Hash] == old.Offset {
			delete(w.m, old.Hash)
		}
		w.ring[w.pos] = it
		w.pos = (w.pos + 1) % w.max
	}
	if w.indexed {
		w.m[it.Hash] = it.Offset
	}
}

// lookup returns the source offset of a matched record with digest h.
func (w *window) lookup(h uint64) (int64, bool) {
	if !w.indexed {
		w.indexed = true
		w.m = make(map[uint64]int64, len(w.ring))
		// Oldest first, so the newest offset of a repeated digest wins.
		for i := range w.ring {
			it := w.ring[(w.pos+i)%len(w.ring)]
			w.m[it.Hash] = it.Offset
		}
	}
	off, ok := w.m[h]
	return off, ok
}

// Compare runs the comparison to the end of both streams.
func (c Comparer) Compare(ctx context.Context, src, tgt Stream) (Result, error) {
	if c.Chunk <= 0 {
		c.Chunk = DefaultChunk
	}
	if c.Lookahead <= 0 {
		c.Lookahead = DefaultLookahead
	}
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	var res Result
	s, t := &ibuf{s: src}, &ibuf{s: tgt}
	w := &window{max: c.Window}
	var lastS, lastT int64
	dirty := false
	progress := func() {
		if c.Progress != nil && (s.read-lastS+t.read-lastT) > 0 {
			c.Progress(s.read-lastS, t.read-lastT)
			lastS, lastT = s.read, t.read
		}
	}
	match := func(n int) {
		for i := 0; i < n; i++ {
			w.add(s.at(i))
		}
		res.Matched += int64(n)
		s.drop(n)
		t.drop(n)
	}
	for {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if err := s.fill(ctx, c.Chunk); err != nil {
			return res, err
		}
		if err := t.fill(ctx, c.Chunk); err != nil {
			return res, err
		}
		progress()
		n := min(s.len(), t.len())
		if n == 0 {
			break
		}
		if dirty {
			// Right after a difference, walk pair by pair to the next one: bisecting every range
			// again would cost a range per differing record (a long run of duplicates or a wholly
			// different partition). Back in step for a whole range, digests take over again.
			i := 0
			for i < n && s.at(i).Hash == t.at(i).Hash {
				i++
			}
			match(i)
			if i == n {
				dirty = false
				continue
			}
		} else {
			if digest(s, 0, n) == digest(t, 0, n) {
				res.RangesEqual++
				match(n)
				continue
			}
			res.Bisections++
			match(firstDiff(s, t, n))
		}
		dirty = true
		if err := c.classify(ctx, s, t, w, &res); err != nil {
			return res, err
		}
	}
	// One side ended: what is left on the other.
	for s.len() > 0 || !s.eof {
		if err := s.fill(ctx, c.Chunk); err != nil {
			return res, err
		}
		for i := 0; i < s.len(); i++ {
			it := s.at(i)
			if c.ReplicatedUpTo >= 0 && it.Offset >= c.ReplicatedUpTo {
				res.NotYetReplicated++
			} else {
				res.note(Missing, it.Offset, -1, 1)
			}
		}
		s.drop(s.len())
	}
	for t.len() > 0 || !t.eof {
		if err := t.fill(ctx, c.Chunk); err != nil {
			return res, err
		}
		for i := 0; i < t.len(); i++ {
			it := t.at(i)
			if off, ok := w.lookup(it.Hash); ok {
				res.note(Duplicate, off, it.Offset, 1)
			} else {
				res.note(Extra, -1, it.Offset, 1)
			}
		}
		t.drop(t.len())
	}
	progress()
	res.SourceRecords, res.TargetRecords = s.read, t.read
	return res, nil
}

// classify explains the first pair of differing records (both buffers non-empty).
func (c Comparer) classify(ctx context.Context, s, t *ibuf, w *window, res *Result) error {
	si, ti := s.at(0), t.at(0)
	if off, ok := w.lookup(ti.Hash); ok {
		res.note(Duplicate, off, ti.Offset, 1)
		t.drop(1)
		return nil
	}
	if res.Diverged < lookaheadBudget {
		if err := s.fill(ctx, c.Lookahead); err != nil {
			return err
		}
		if err := t.fill(ctx, c.Lookahead); err != nil {
			return err
		}
		js, jt := -1, -1
		for j := 1; j < s.len(); j++ {
			if s.at(j).Hash == ti.Hash {
				js = j
				break
			}
		}
		for k := 1; k < t.len(); k++ {
			if t.at(k).Hash == si.Hash {
				jt = k
				break
			}
		}
		// The nearer explanation wins: a few missing records, or a few extra ones.
		if js > 0 && (jt < 0 || js <= jt) {
			for j := 0; j < js; j++ {
				res.note(Missing, s.at(j).Offset, -1, 1)
			}
			s.drop(js)
			return nil
		}
		if jt > 0 {
			for k := 0; k < jt; k++ {
				it := t.at(k)
				if off, ok := w.lookup(it.Hash); ok {
					res.note(Duplicate, off, it.Offset, 1)
				} else {
					res.note(Extra, -1, it.Offset, 1)
				}
			}
			t.drop(jt)
			return nil
		}
	}
	res.note(Diverged, si.Offset, ti.Offset, 1)
	w.add(si)
	s.drop(1)
	t.drop(1)
	return nil
}
