// Package offsetmap is kmm's record of where every copied record landed on the target: per
// source partition, the segments of the copy in target order. A segment is a run of records
// copied in order from source offsets [Src, Src+Span) to target offsets [Tgt, Tgt+N): N == Span
// is a 1:1 copy (the target offset of source offset g is Tgt + g - Src); N < Span means the
// source held offsets without a readable record in that run (transaction markers, compaction),
// merged in only to bound the map's size, so a position inside it is known within Span - N.
// A new segment starts where the copy is not contiguous: a gap in the source offsets, a target
// offset that does not follow (another writer, records written but never acknowledged before a
// crash), or a source offset that goes back (a range copied twice after a restart).
//
// kmm replicate keeps the map of every partition from its acknowledgements and stores it on the
// target (Topic) with its progress, so that checkpoints, translate-offsets, lag and every
// failover mode translate a group's position exactly at any lag, without the source, where
// MM2's offset syncs only give the nearest older sync (docs/mm2-compat.md, "Offset map").
//
// The package is pure: maps are values, encoded to and decoded from the records of the topic;
// it reads and writes nothing.
package offsetmap

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaxSegments bounds a partition's map: past it, the oldest pair of segments that can be merged
// (the source advancing, the target contiguous) is merged into one with the source offsets
// between (its N < Span: positions inside are known within that many records); when no pair can
// be, the oldest segment is dropped (Trimmed: positions before the map's first segment are
// translated by other means).
const MaxSegments = 64

// Segment is a run of records copied in order from source offsets [Src, Src+Span) to target
// offsets [Tgt, Tgt+N).
type Segment struct {
	Src, Tgt int64
	N        int64 // records (target offsets)
	Span     int64 // source offsets covered, >= N
	// Hole: the Hole source offsets right before Src hold no readable record (the copy passed
	// them with the target contiguous: transaction markers, compaction).
	Hole int64
	// GapBound, for a segment that starts past the previous one's target end (target records
	// the map does not account for: copies written but never acknowledged before a crash):
	// every record in that gap is a copy of a source offset below GapBound (a source end the
	// replicator saw after it restarted: the gap was written before). 0: not known.
	GapBound int64
}

// SrcEnd is the source offset after the segment.
func (s Segment) SrcEnd() int64 { return s.Src + s.Span }

// TgtEnd is the target offset after the segment.
func (s Segment) TgtEnd() int64 { return s.Tgt + s.N }

// Exact reports whether the segment is a 1:1 copy (every source offset in it held a record).
func (s Segment) Exact() bool { return s.N == s.Span }

// Map is one source partition's segments, in target order.
type Map struct {
	Segs []Segment
	// Trimmed: older segments were dropped to bound the map.
	Trimmed bool
	// SourceGaps counts the gaps in the source offsets the copy has passed (offsets without a
	// readable record): 0 means every copied source offset held a record, a 1:1 copy.
	SourceGaps int64
}

// Add records a run of n records copied in order from source offsets src.. to target offsets
// tgt.. (both advancing by one per record). It reports whether a segment began (the map's
// stored copy must then be written before progress past src is).
func (m *Map) Add(src, tgt, n int64) (newSegment bool) {
	if n <= 0 {
		return false
	}
	if k := len(m.Segs); k > 0 {
		last := &m.Segs[k-1]
		if src == last.SrcEnd() && tgt == last.TgtEnd() {
			last.N += n
			last.Span += n
			return false
		}
		if tgt == last.TgtEnd() && src > last.SrcEnd() {
			m.SourceGaps++
			m.Segs = append(m.Segs, Segment{Src: src, Tgt: tgt, N: n, Span: n, Hole: src - last.SrcEnd()})
			m.bound()
			return true
		}
	}
	m.Segs = append(m.Segs, Segment{Src: src, Tgt: tgt, N: n, Span: n})
	m.bound()
	return true
}

// mergeable reports whether b follows a with the source advancing and the target contiguous.
func mergeable(a, b Segment) bool { return b.Tgt == a.TgtEnd() && b.Src >= a.SrcEnd() }

func (m *Map) bound() {
	for len(m.Segs) > MaxSegments {
		merged := false
		for i := 0; i+1 < len(m.Segs); i++ {
			a, b := m.Segs[i], m.Segs[i+1]
			if mergeable(a, b) {
				m.Segs[i] = Segment{Src: a.Src, Tgt: a.Tgt, N: a.N + b.N, Span: b.SrcEnd() - a.Src, Hole: a.Hole, GapBound: a.GapBound}
				m.Segs = append(m.Segs[:i+1], m.Segs[i+2:]...)
				merged = true
				break
			}
		}
		if !merged {
			m.Segs = append(m.Segs[:0], m.Segs[1:]...)
			m.Trimmed = true
		}
	}
}

// Clone returns a copy of m.
func (m *Map) Clone() *Map {
	if m == nil {
		return nil
	}
	c := *m
	c.Segs = append([]Segment(nil), m.Segs...)
	return &c
}

// Last returns the last segment (the copy's newest) and false when the map is empty.
func (m *Map) Last() (Segment, bool) {
	if m == nil || len(m.Segs) == 0 {
		return Segment{}, false
	}
	return m.Segs[len(m.Segs)-1], true
}

// Next is the source offset after the newest copied record (-1: nothing copied).
func (m *Map) Next() int64 {
	if s, ok := m.Last(); ok {
		return s.SrcEnd()
	}
	return -1
}

// Translation is where a consumer group whose next source offset is G resumes on the target.
type Translation struct {
	// Known: the map covers G (false: G is before the map's history, or nothing was copied;
	// translate by other means).
	Known bool
	// Target is the target offset to commit: every source record at or after G is at or after
	// it on the target (never a skip).
	Target int64
	// Exact: the record at Target is the copy of the group's next record (or both are at the
	// end of what was copied).
	Exact bool
	// Rereads is how many records the group reads again from Target on: copies of records before
	// G, records copied twice (a range copied again after a restart) and target records the map
	// does not account for (written but never acknowledged before a crash, or another
	// writer's), at most.
	Rereads int64
	// Why says how Target was found, for people.
	Why string
}

// Translate translates the group position g (the next source offset it reads). targetEnd is the
// target partition's end offset (-1 unknown): target records after the map's newest segment are
// written but their acknowledgement was never seen (a crash), or another writer's.
//
// The rule for records copied more than once (a range copied again after a restart): the last
// segment in target order that starts at or before g holds the position, since every source
// record at or after g appears after it; the copies the group meets again after Target are
// counted in Rereads. Never a skip.
func (m *Map) Translate(g, targetEnd int64) Translation {
	if m == nil || len(m.Segs) == 0 {
		return Translation{Why: "nothing copied yet"}
	}
	i, any := -1, false
	for j := len(m.Segs) - 1; j >= 0; j-- {
		if m.Segs[j].Src > g {
			continue
		}
		any = true
		if m.reach(j, g) >= m.maxEndBefore(j) {
			i = j
			break
		}
	}
	if any && i < 0 {
		return Translation{Why: fmt.Sprintf("source offset %d: the offset map's copies after it do not cover what earlier copies held", g)}
	}
	if i < 0 { // g is before every copied record
		if m.Trimmed {
			return Translation{Why: fmt.Sprintf("source offset %d is before the map's history (it keeps the newest %d segments)", g, MaxSegments)}
		}
		first := m.Segs[0]
		t := Translation{Known: true, Target: first.Tgt, Exact: true,
			Why: fmt.Sprintf("before the first copied record (source %d at target %d): nothing between was copied", first.Src, first.Tgt)}
		t.Rereads = m.rereadsAfter(0, g, first.Tgt, targetEnd)
		return t
	}
	s := m.Segs[i]
	var t Translation
	t.Known = true
	switch {
	case g < s.SrcEnd() && s.Exact():
		t.Target, t.Exact = s.Tgt+(g-s.Src), true
		t.Why = fmt.Sprintf("offset map: source %d at target %d, a 1:1 run from %d->%d", g, t.Target, s.Src, s.Tgt)
	case g < s.SrcEnd():
		gaps := s.Span - s.N
		lo := s.Tgt + max(0, (g-s.Src)-gaps)
		hi := s.Tgt + min(g-s.Src, s.N)
		t.Target, t.Rereads = lo, hi-lo
		t.Why = fmt.Sprintf("offset map: source %d in a run %d->%d with %d source offset(s) without a record (merged to bound the map): target %d, up to %d record(s) early", g, s.Src, s.Tgt, gaps, lo, hi-lo)
	default: // g is past the segment: the records after it come after the segment
		t.Target, t.Exact = s.TgtEnd(), true
		t.Why = fmt.Sprintf("offset map: no record of source offsets [%d, %d) was copied after the run %d->%d: target %d", s.SrcEnd(), g, s.Src, s.Tgt, t.Target)
		if i == len(m.Segs)-1 && targetEnd > s.TgtEnd() {
			// Target records after the newest segment: copies whose acknowledgement was never
			// seen (a crash), or another writer's. Their source offsets follow the segment's
			// but are not known (the source may hold offsets without a record among them): the
			// position stays before them, early by up to their number.
			tail := targetEnd - s.TgtEnd()
			t.Exact, t.Rereads = false, tail
			t.Why = fmt.Sprintf("past the offset map's newest run %d->%d, %d target record(s) not in the map (copies not acknowledged before the replicator stopped): target %d, up to %d record(s) read again", s.Src, s.Tgt, tail, t.Target, tail)
			return t
		}
		if i < len(m.Segs)-1 && m.Segs[i+1].Tgt > s.TgtEnd() {
			// The records right after it are not in the map (copies never acknowledged before a
			// crash): the position is early by up to their number, counted as re-reads.
			t.Exact = false
			t.Why += fmt.Sprintf("; the %d target record(s) after it are not in the map (copies not acknowledged before a restart)", m.Segs[i+1].Tgt-s.TgtEnd())
		}
	}
	t.Rereads += m.rereadsAfter(i, g, t.Target, targetEnd)
	return t
}

// reach is how far, from source offset g on, the copy from segment i (starting at g inside it, or
// after it) to the newest covers every source offset without a gap the map cannot explain: a
// group resuming there meets every record in [g, reach).
func (m *Map) reach(i int, g int64) int64 {
	r := g
	if s := m.Segs[i]; s.SrcEnd() > g {
		r = s.SrcEnd()
	}
	for _, s := range m.Segs[i+1:] {
		if s.Src-s.Hole > r {
			break
		}
		r = max(r, s.SrcEnd())
	}
	return r
}

// maxEndBefore is the furthest source offset the copies before segment i may have reached: the
// segments' ends, and past a segment followed by target records the map does not account for
// (copies written but never acknowledged before a crash) the bound the next segment holds for
// them (GapBound), or none when it holds none.
func (m *Map) maxEndBefore(i int) int64 {
	var e int64
	for j, s := range m.Segs[:i] {
		if next := m.Segs[j+1]; next.Tgt > s.TgtEnd() {
			if next.GapBound <= 0 {
				return math.MaxInt64
			}
			e = max(e, next.GapBound)
		}
		e = max(e, s.SrcEnd())
	}
	return e
}

// BoundGap gives the newest segment, when target records the map does not account for come
// before it, the bound of their source offsets (see Segment.GapBound): srcEnd, a source end
// seen after those records were written. It reports whether the map changed.
func (m *Map) BoundGap(srcEnd int64) bool {
	k := len(m.Segs) - 1
	if k < 1 || srcEnd <= 0 || m.Segs[k].GapBound > 0 || m.Segs[k].Tgt <= m.Segs[k-1].TgtEnd() {
		return false
	}
	m.Segs[k].GapBound = srcEnd
	return true
}

// rereadsAfter counts, from segment i on (the group resuming at target offset from, position
// g), the records the group reads twice, at most: later segments' copies of source offsets
// already covered, and target records the map does not account for (between segments, and after
// the newest up to targetEnd).
func (m *Map) rereadsAfter(i int, g, from, targetEnd int64) int64 {
	covered, prevEnd, start := g, from, i // source offsets below covered are read (or skipped as read)
	if s := m.Segs[i]; s.Src <= g {
		covered, prevEnd, start = max(g, s.SrcEnd()), s.TgtEnd(), i+1
	}
	var n int64
	for _, s := range m.Segs[start:] {
		if s.Tgt > prevEnd {
			n += s.Tgt - prevEnd // unaccounted target records between segments
		}
		if s.Src < covered {
			dup := min(covered, s.SrcEnd()) - s.Src
			if !s.Exact() {
				dup = min(dup, s.N)
			}
			n += dup
		}
		covered = max(covered, s.SrcEnd())
		prevEnd = max(prevEnd, s.TgtEnd())
	}
	if targetEnd > prevEnd {
		n += targetEnd - prevEnd // target records after the newest segment: copies of anything, at most
	}
	return n
}

// TargetOf is the inverse for a target offset t inside the map: the source offset of the record
// at t (ok false when t is not in a segment, or in one with source gaps).
func (m *Map) TargetOf(t int64) (src int64, ok bool) {
	for j := len(m.Segs) - 1; j >= 0; j-- {
		s := m.Segs[j]
		if t >= s.Tgt && t < s.TgtEnd() && s.Exact() {
			return s.Src + (t - s.Tgt), true
		}
	}
	return 0, false
}

// Topic is the compacted topic on the target where kmm replicate keeps the maps of the flow from
// the cluster whose alias is sourceAlias.
func Topic(sourceAlias string) string { return "kmm-offset-map." + sourceAlias + ".internal" }

// Key is the record key of a source partition's map.
func Key(topic string, partition int32) []byte {
	return []byte(topic + "/" + strconv.Itoa(int(partition)))
}

// ParseKey is the inverse of Key.
func ParseKey(k []byte) (topic string, partition int32, err error) {
	s := string(k)
	i := strings.LastIndexByte(s, '/')
	if i <= 0 {
		return "", 0, fmt.Errorf("offset map key %q: not topic/partition", s)
	}
	p, err := strconv.ParseInt(s[i+1:], 10, 32)
	if err != nil || p < 0 {
		return "", 0, fmt.Errorf("offset map key %q: not topic/partition", s)
	}
	return s[:i], int32(p), nil
}

// record is the JSON of a stored map.
type record struct {
	V          int       `json:"v"`
	Segs       [][]int64 `json:"segments"` // [src, tgt, n, span] or [src, tgt, n, span, hole]
	Trimmed    bool      `json:"trimmed,omitempty"`
	SourceGaps int64     `json:"source_gaps,omitempty"`
}

// Encode is the record value of m.
func Encode(m *Map) []byte {
	r := record{V: 1, Segs: make([][]int64, len(m.Segs)), Trimmed: m.Trimmed, SourceGaps: m.SourceGaps}
	for i, s := range m.Segs {
		r.Segs[i] = []int64{s.Src, s.Tgt, s.N, s.Span}
		if s.Hole > 0 || s.GapBound > 0 {
			r.Segs[i] = append(r.Segs[i], s.Hole)
		}
		if s.GapBound > 0 {
			r.Segs[i] = append(r.Segs[i], s.GapBound)
		}
	}
	b, _ := json.Marshal(r)
	return b
}

// Decode is the inverse of Encode; a format newer than this kmm knows is an error.
func Decode(b []byte) (*Map, error) {
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("offset map: %w", err)
	}
	if r.V != 1 {
		return nil, fmt.Errorf("offset map: format v%d (this kmm knows v1)", r.V)
	}
	m := &Map{Trimmed: r.Trimmed, SourceGaps: r.SourceGaps}
	for _, s := range r.Segs {
		if len(s) < 4 || len(s) > 6 || s[2] < 0 || s[3] < s[2] || s[0] < 0 || s[1] < 0 {
			return nil, fmt.Errorf("offset map: segment %v is not [src, tgt, n, span(, hole(, gap bound))] with 0 <= n <= span", s)
		}
		seg := Segment{Src: s[0], Tgt: s[1], N: s[2], Span: s[3]}
		if len(s) >= 5 {
			seg.Hole = s[4]
		}
		if len(s) == 6 {
			seg.GapBound = s[5]
		}
		m.Segs = append(m.Segs, seg)
	}
	return m, nil
}
