package offsetmap

import (
	"math/rand"
	"testing"
)

func TestOneToOne(t *testing.T) {
	var m Map
	if !m.Add(0, 0, 10) || m.Add(10, 10, 90) {
		t.Fatal("a contiguous run must extend the segment, the first must begin one")
	}
	if len(m.Segs) != 1 || m.Segs[0] != (Segment{Src: 0, Tgt: 0, N: 100, Span: 100}) || m.SourceGaps != 0 {
		t.Fatalf("%+v", m)
	}
	for _, g := range []int64{0, 1, 50, 99} {
		if tr := m.Translate(g, 100); !tr.Known || !tr.Exact || tr.Target != g || tr.Rereads != 0 {
			t.Errorf("g=%d: %+v", g, tr)
		}
	}
	// Caught up: the end of both.
	if tr := m.Translate(100, 100); !tr.Exact || tr.Target != 100 || tr.Rereads != 0 {
		t.Errorf("caught up: %+v", tr)
	}
	// Past what was copied (the group read records the target does not hold): the target's end.
	if tr := m.Translate(150, 100); !tr.Exact || tr.Target != 100 {
		t.Errorf("past the copy: %+v", tr)
	}
}

// A range copied twice (a restart from stored progress 149 after 199 was copied): the position
// is the last copy, the records met again are counted.
func TestRangeCopiedTwice(t *testing.T) {
	var m Map
	m.Add(0, 0, 200)
	if !m.Add(150, 200, 150) {
		t.Fatal("a rewind must begin a segment")
	}
	if tr := m.Translate(170, 350); !tr.Exact || tr.Target != 220 || tr.Rereads != 0 {
		t.Errorf("inside the second copy: %+v", tr)
	}
	if tr := m.Translate(120, 350); !tr.Exact || tr.Target != 120 || tr.Rereads != 50 {
		t.Errorf("before the range copied twice: %+v (want 120, 50 re-reads)", tr)
	}
	if m.SourceGaps != 0 {
		t.Errorf("a rewind is not a source gap: %d", m.SourceGaps)
	}
}

// Source offsets without a record (transaction markers): a segment each, exact positions.
func TestSourceGaps(t *testing.T) {
	var m Map
	m.Add(0, 0, 10)
	m.Add(11, 10, 10) // marker at 10
	m.Add(22, 20, 5)  // marker at 21
	if m.SourceGaps != 2 || len(m.Segs) != 3 {
		t.Fatalf("%+v", m)
	}
	for g, want := range map[int64]int64{0: 0, 9: 9, 10: 10, 11: 10, 15: 14, 21: 20, 22: 20, 26: 24, 27: 25} {
		if tr := m.Translate(g, 25); !tr.Exact || tr.Target != want || tr.Rereads != 0 {
			t.Errorf("g=%d: %+v, want %d", g, tr, want)
		}
	}
}

// Past MaxSegments, the oldest mergeable segments are merged: positions inside them are known
// within their gaps, never past the group's next record; the newest stay exact.
func TestBoundedBySegments(t *testing.T) {
	var m Map
	src, tgt := int64(0), int64(0)
	for i := 0; i < 3*MaxSegments; i++ {
		m.Add(src, tgt, 10)
		src, tgt = src+11, tgt+10 // a marker after every 10 records
	}
	if len(m.Segs) > MaxSegments || m.Trimmed {
		t.Fatalf("%d segments, trimmed %v", len(m.Segs), m.Trimmed)
	}
	last, _ := m.Last()
	if !last.Exact() || m.Segs[0].Exact() {
		t.Fatalf("the newest must stay exact, the oldest be merged: %+v ... %+v", m.Segs[0], last)
	}
	// A position in the merged (oldest) segment: record 5 of the 30th run is source 30*11+5 at
	// target 30*10+5.
	g := int64(30*11 + 5)
	tr := m.Translate(g, tgt)
	if !tr.Known || tr.Exact || tr.Target > 305 || tr.Target+tr.Rereads < 305 {
		t.Fatalf("merged: %+v (the copy is at 305)", tr)
	}
	// A position in the newest runs stays exact.
	g = int64((3*MaxSegments-2)*11 + 3)
	if tr := m.Translate(g, tgt); !tr.Exact || tr.Target != int64((3*MaxSegments-2)*10+3) {
		t.Fatalf("newest: %+v", tr)
	}
}

// Segments that cannot merge (rewinds) are dropped oldest first: before the map's history the
// position is not known.
func TestTrimmed(t *testing.T) {
	var m Map
	for i := int64(0); i < MaxSegments+5; i++ {
		m.Add(i*10, i*20, 20) // each run goes back 10 source offsets: a range copied twice
	}
	if !m.Trimmed || len(m.Segs) != MaxSegments {
		t.Fatalf("trimmed %v, %d segments", m.Trimmed, len(m.Segs))
	}
	if tr := m.Translate(5, -1); tr.Known {
		t.Fatalf("before the history: %+v", tr)
	}
}

// Target records after the newest segment (copies never acknowledged before a crash): their
// source offsets are not known, so the position stays before them.
func TestTail(t *testing.T) {
	var m Map
	m.Add(0, 0, 100)
	if tr := m.Translate(104, 110); tr.Exact || tr.Target != 100 || tr.Rereads != 10 {
		t.Errorf("tail: %+v (want 100, up to 10 read again)", tr)
	}
	if tr := m.Translate(200, 110); tr.Exact || tr.Target != 100 || tr.Rereads != 10 {
		t.Errorf("past the tail: %+v (want 100, up to 10 early)", tr)
	}
	if tr := m.Translate(100, 100); !tr.Exact || tr.Target != 100 || tr.Rereads != 0 {
		t.Errorf("at the map's end, no tail: %+v", tr)
	}
}

func TestEncodeDecodeAndKey(t *testing.T) {
	var m Map
	m.Add(0, 0, 10)
	m.Add(11, 10, 5)
	m.Add(3, 15, 2)
	m.Trimmed = true
	got, err := Decode(Encode(&m))
	if err != nil || len(got.Segs) != 3 || got.Segs[2] != m.Segs[2] || !got.Trimmed || got.SourceGaps != 1 {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := Decode([]byte(`{"v":2,"segments":[]}`)); err == nil {
		t.Fatal("a newer format must be refused")
	}
	if _, err := Decode([]byte(`{"v":1,"segments":[[0,0,5,3]]}`)); err == nil {
		t.Fatal("n > span must be refused")
	}
	topic, p, err := ParseKey(Key("a.b/c-d", 12))
	if err != nil || topic != "a.b/c-d" || p != 12 {
		t.Fatalf("%q %d %v", topic, p, err)
	}
	if _, _, err := ParseKey([]byte("nokey")); err == nil {
		t.Fatal("bad key accepted")
	}
	if Topic("A") != "kmm-offset-map.A.internal" {
		t.Fatal(Topic("A"))
	}
}

// A replication history simulated at random (transaction markers in the source, crashes that
// leave unacknowledged copies on the target and restart from the stored progress): for every
// group position, the translation never skips a record (every source record at or after it is
// at or after Target), an exact one holds the group's next record, and the records read again
// are at most Rereads.
func TestRandomHistories(t *testing.T) {
	for seed := int64(1); seed <= 800; seed++ {
		r := rand.New(rand.NewSource(seed))
		n := 50 + r.Intn(400)
		// The source: offsets 0..n-1, some without a record (markers).
		hasRec := make([]bool, n)
		for i := range hasRec {
			hasRec[i] = r.Intn(10) != 0 || seed%3 == 0 // a third of the histories are 1:1
		}
		var target []int64 // source offset of each target record
		var m Map
		pos, acked, stored := int64(0), int64(-1), int64(-1)
		// seen: the source end a restarted replicator sees (above every source offset copied
		// before the restart): what pkg/replicator bounds a crash's gap with (BoundGap).
		bounded, seen := seed%2 == 0, int64(0)
		for pos < int64(n) {
			// Copy a batch: records written, then acknowledged unless a crash comes first.
			batch := 1 + r.Intn(30)
			var wrote []int64
			for k := 0; k < batch && pos < int64(n); pos++ {
				if hasRec[pos] {
					wrote = append(wrote, pos)
					k++
				}
			}
			crash := r.Intn(8) == 0
			ackN := len(wrote)
			if crash {
				ackN = r.Intn(len(wrote) + 1)
			}
			for j, s := range wrote {
				target = append(target, s)
				if j < ackN {
					m.Add(s, int64(len(target)-1), 1)
					if bounded {
						m.BoundGap(seen)
					}
					acked = s
				}
			}
			if !crash && r.Intn(3) == 0 {
				stored = acked
			}
			if crash && r.Intn(4) == 0 {
				break // the replicator died and the source with it: a tail of unacknowledged copies
			}
			if crash { // restart from the stored progress
				for _, s := range target {
					seen = max(seen, s+1+int64(r.Intn(3)))
				}
				pos = stored + 1
				acked = stored
			}
		}
		end := int64(len(target))
		for g := int64(0); g <= int64(n); g++ {
			tr := m.Translate(g, end)
			if !tr.Known {
				continue // a trimmed history: the caller translates by other means
			}
			// No skip: every source record >= g on the target appears at or after Target.
			seenAfter := map[int64]bool{}
			for _, s := range target[min(tr.Target, end):] {
				seenAfter[s] = true
			}
			for _, s := range target {
				if s >= g && !seenAfter[s] {
					t.Fatalf("seed %d g=%d: %+v skips source %d (target %v, map %+v)", seed, g, tr, s, target, m.Segs)
				}
			}
			next := int64(-1) // the group's next record on the target
			for s := g; s < int64(n); s++ {
				if hasRec[s] && seenAfter[s] {
					next = s
					break
				}
			}
			if tr.Exact && tr.Target < end && next >= 0 && target[tr.Target] != next {
				t.Fatalf("seed %d g=%d: exact %+v but target[%d] is source %d, the group's next is %d (map %+v)", seed, g, tr, tr.Target, target[tr.Target], next, m.Segs)
			}
			// Records read again: copies of records before g, or records read twice.
			read, again := map[int64]bool{}, int64(0)
			for _, s := range target[min(tr.Target, end):] {
				if s < g || read[s] {
					again++
				}
				read[s] = true
			}
			if again > tr.Rereads {
				t.Fatalf("seed %d g=%d: %+v, but the group reads %d record(s) again (target %v, map %+v)", seed, g, tr, again, target, m.Segs)
			}
		}
	}
}

// A crash: progress and map stored up to source 99; source 100-119 written to target 100-119
// but never acknowledged; the restart copies 100-119 again to target 120-139. Without a bound
// on the gap's source offsets a group at 110 (or caught up, at 120) resumes before the gap;
// with the source end the restarted replicator saw (120), in the newest copy, exactly.
func TestCrashGapBounded(t *testing.T) {
	var m Map
	m.Add(0, 0, 100)
	m.Add(100, 120, 20)
	if tr := m.Translate(110, 140); tr.Target != 100 || tr.Exact || tr.Rereads != 30 {
		t.Errorf("unbounded gap, g=110: %+v (want 100, not exact, 30 re-reads at most)", tr)
	}
	if !m.BoundGap(120) || m.BoundGap(130) {
		t.Fatal("BoundGap: the first bound sets it, a second changes nothing")
	}
	for g, want := range map[int64]int64{110: 130, 120: 140, 100: 120} {
		if tr := m.Translate(g, 140); !tr.Exact || tr.Target != want || tr.Rereads != 0 {
			t.Errorf("bounded gap, g=%d: %+v (want %d, exact, 0 re-reads)", g, tr, want)
		}
	}
	if tr := m.Translate(50, 140); !tr.Exact || tr.Target != 50 || tr.Rereads != 20 {
		t.Errorf("before the gap, g=50: %+v (want 50, the range met twice counted: 20)", tr)
	}
	d, err := Decode(Encode(&m))
	if err != nil || d.Segs[1].GapBound != 120 || d.Segs[1].Hole != 0 {
		t.Fatalf("round trip: %+v, %v", d, err)
	}
	// A bound below the newest copy's end is not enough: before, the gap might hold more.
	var m2 Map
	m2.Add(0, 0, 100)
	m2.Add(100, 120, 10)
	m2.BoundGap(125)
	if tr := m2.Translate(105, 130); tr.Target != 100 {
		t.Errorf("gap bound 125 past the copy's end 110: %+v (want 100)", tr)
	}
}
