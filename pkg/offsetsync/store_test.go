package offsetsync

import (
	"context"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/kmmproject/kmm/pkg/mm2wire"
)

var tp = TP{Topic: "topic1", Partition: 2}

func loaded(opt Options) *Store {
	s := NewStore(opt)
	s.MarkLoaded()
	return s
}

func TestTranslateRule(t *testing.T) {
	s := loaded(Options{})
	s.Add(tp, Sync{100, 200}, time.Time{})
	s.Add(tp, Sync{150, 251}, time.Time{})
	cases := []struct {
		name   string
		tp     TP
		g      int64
		status Status
		down   int64
		exact  bool
		bound  int64
	}{
		{"exact match on a sync", tp, 100, Translated, 200, true, 0},
		{"one past a sync: the next record is exactly d+1", tp, 101, Translated, 201, true, 0},
		{"between syncs: d+1 of the older one", tp, 120, Translated, 201, false, 19},
		{"just before the next sync", tp, 149, Translated, 201, false, 48},
		{"exact on the newest sync", tp, 150, Translated, 251, true, 0},
		{"caught up past the newest sync", tp, 151, Translated, 252, true, 0},
		{"far past the newest sync", tp, 10_000, Translated, 252, false, 9849},
		{"before the earliest sync: MM2's -1", tp, 99, TooOld, -1, false, -1},
		{"offset 0 before every sync", tp, 0, TooOld, -1, false, -1},
		{"no committed offset", tp, -1, Invalid, -1, false, -1},
		{"unknown partition", TP{"topic1", 3}, 120, NoSyncs, -1, false, -1},
		{"unknown topic", TP{"other", 2}, 120, NoSyncs, -1, false, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := s.Translate(c.tp, c.g)
			if got.Status != c.status || got.Downstream != c.down || got.Exact != c.exact || got.Bound != c.bound {
				t.Fatalf("Translate(%v, %d) = %+v; want status %v down %d exact %v bound %d", c.tp, c.g, got, c.status, c.down, c.exact, c.bound)
			}
		})
	}
}

// mm2Translate is MM2's rule over a given sync (OffsetSyncStore.translateDownstream).
func mm2Translate(sy Sync, g int64) int64 {
	if sy.Upstream > g {
		return -1
	}
	if g == sy.Upstream {
		return sy.Downstream
	}
	return sy.Downstream + 1
}

// Port of OffsetSyncStoreTest.testOffsetTranslation (Kafka 4.x). kmm gives the same answers for
// every assertion MM2 makes; the comment marks the one place kmm deliberately differs.
func TestMM2OffsetTranslation(t *testing.T) {
	s := loaded(Options{})
	want := func(g, down int64) {
		t.Helper()
		got := s.Translate(tp, g)
		if got.Downstream != down {
			t.Fatalf("translate(%d) = %+v, want %d", g, got, down)
		}
	}
	// Emit synced downstream offset without dead-reckoning.
	s.Add(tp, Sync{100, 200}, time.Time{})
	want(150, 201)
	// Translate exact offsets.
	s.Add(tp, Sync{150, 251}, time.Time{})
	want(150, 251)
	// Use old offset (5) prior to any sync -> can't translate.
	want(5, -1)
	// Downstream offsets reset.
	if c := s.Add(tp, Sync{200, 10}, time.Time{}); c != DownstreamRewind {
		t.Fatalf("downstream reset gave %v", c)
	}
	want(200, 10)
	// kmm difference: MM2 still translates 150 to 251, a target offset that belonged to the
	// target log before it was truncated or recreated; kmm dropped that history.
	want(150, -1)
	// Upstream offsets reset.
	if c := s.Add(tp, Sync{20, 20}, time.Time{}); c != UpstreamRewind {
		t.Fatalf("upstream reset gave %v", c)
	}
	want(20, 20)
}

// Port of testNoTranslationIfStoreNotStarted and testNoTranslationIfNoOffsetSync.
func TestNotLoaded(t *testing.T) {
	s := NewStore(Options{})
	for _, g := range []int64{0, 100, 200} {
		if got := s.Translate(tp, g); got.Status != NotLoaded || got.Downstream != -1 {
			t.Fatalf("before load: %+v", got)
		}
	}
	s.Add(tp, Sync{100, 200}, time.Time{})
	if got := s.Translate(tp, 100); got.Status != NotLoaded {
		t.Fatalf("during load: %+v", got)
	}
	s.MarkLoaded()
	for g, down := range map[int64]int64{0: -1, 100: 200, 200: 201} {
		if got := s.Translate(tp, g); got.Downstream != down {
			t.Fatalf("after load translate(%d) = %+v, want %d", g, got, down)
		}
	}
	if got := loaded(Options{}).Translate(tp, 0); got.Status != NoSyncs {
		t.Fatalf("no syncs: %+v", got)
	}
}

// Port of testPastOffsetTranslation. MM2 (3.5-3.7 and 3.8+ without a readable checkpoints
// topic) keeps only the last sync of the initial read, and later only ~log2 spaced syncs; kmm
// keeps them all (1001 syncs fit under the default cap), so every offset translates to within
// the sync spacing.
func TestPastOffsetTranslation(t *testing.T) {
	s := NewStore(Options{})
	const lag = 10
	off := int64(0)
	for ; off <= 1000; off += lag {
		s.Add(tp, Sync{off, off}, time.Time{})
	}
	s.MarkLoaded()
	for ; off <= 10000; off += lag {
		s.Add(tp, Sync{off, off}, time.Time{})
	}
	// MM2 cannot translate 999 (its oldest kept sync is 1000) and translates 4839 to 1001;
	// kmm translates both to just after the preceding sync.
	for g := int64(0); g <= 10001; g++ {
		got := s.Translate(tp, g)
		u := g / lag * lag
		if u > 10000 {
			u = 10000
		}
		if got.Downstream != mm2Translate(Sync{u, u}, g) || got.Bound != max(g-u-1, 0) {
			t.Fatalf("translate(%d) = %+v, want sync %d", g, got, u)
		}
		if got.Bound > lag-1 {
			t.Fatalf("translate(%d) bound %d > %d", g, got.Bound, lag-1)
		}
	}
	// Rewind upstream offsets clears all historical syncs (as in MM2).
	s.Add(tp, Sync{1500, 11000}, time.Time{})
	for g, down := range map[int64]int64{1499: -1, 1500: 11000, 2000: 11001} {
		if got := s.Translate(tp, g); got.Downstream != down {
			t.Fatalf("after rewind translate(%d) = %+v, want %d", g, got, down)
		}
	}
}

func TestAddChanges(t *testing.T) {
	s := loaded(Options{})
	steps := []struct {
		sy      Sync
		want    Change
		history []Sync
	}{
		{Sync{10, 100}, First, []Sync{{10, 100}}},
		{Sync{20, 110}, Appended, []Sync{{10, 100}, {20, 110}}},
		{Sync{20, 110}, Repeated, []Sync{{10, 100}, {20, 110}}},
		{Sync{30, 115}, Appended, []Sync{{10, 100}, {20, 110}, {30, 115}}},
		// Same upstream record landed again later: a restart re-copied it. Reset.
		{Sync{30, 200}, UpstreamRewind, []Sync{{30, 200}}},
		{Sync{40, 210}, Appended, []Sync{{30, 200}, {40, 210}}},
		// Upstream went back: restart from an older stored position. Reset (as MM2).
		{Sync{35, 300}, UpstreamRewind, []Sync{{35, 300}}},
		{Sync{45, 310}, Appended, []Sync{{35, 300}, {45, 310}}},
		// Downstream went back while upstream advanced: target truncated or recreated. Reset
		// (MM2 keeps the old syncs).
		{Sync{50, 5}, DownstreamRewind, []Sync{{50, 5}}},
		// Downstream equal while upstream advanced: impossible in one log, reset.
		{Sync{60, 5}, DownstreamRewind, []Sync{{60, 5}}},
		{Sync{-1, 5}, Rejected, []Sync{{60, 5}}},
		{Sync{70, -5}, Rejected, []Sync{{60, 5}}},
	}
	for i, st := range steps {
		if c := s.Add(tp, st.sy, time.Time{}); c != st.want {
			t.Fatalf("step %d: Add(%v) = %v, want %v", i, st.sy, c, st.want)
		}
		if h := s.History(tp); !equalSyncs(h, st.history) {
			t.Fatalf("step %d: history %v, want %v", i, h, st.history)
		}
	}
	if ps, _ := s.PartitionStats(tp); ps.Resets != 4 {
		t.Fatalf("resets = %d, want 4", ps.Resets)
	}
}

func equalSyncs(a, b []Sync) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSyncTime(t *testing.T) {
	s := loaded(Options{})
	t1 := time.UnixMilli(1_700_000_000_000)
	s.Add(tp, Sync{1, 1}, t1)
	s.Add(tp, Sync{2, 2}, time.Time{}) // unknown time keeps the previous one
	if got := s.Translate(tp, 5); !got.SyncTime.Equal(t1) {
		t.Fatalf("SyncTime = %v", got.SyncTime)
	}
	if _, at, ok := s.Latest(tp); !ok || !at.Equal(t1) {
		t.Fatalf("Latest time = %v", at)
	}
}

func TestExplain(t *testing.T) {
	s := NewStore(Options{}) // Explain works before MarkLoaded
	s.Add(tp, Sync{100, 200}, time.Time{})
	s.Add(tp, Sync{150, 251}, time.Time{})
	cases := []struct {
		up, down int64
		ok       bool
		exact    bool
		bound    int64
	}{
		{100, 200, true, true, 0},
		{101, 201, true, true, 0},
		{140, 201, true, false, 39},
		{150, 251, true, true, 0},
		{170, 252, true, false, 19},
		{100, 201, false, false, 0}, // the old (≤3.4) rule or a foreign writer: not explained
		{150, 250, false, false, 0},
		{99, 200, false, false, 0},
		{300, 400, false, false, 0},
	}
	for _, c := range cases {
		got, ok := s.Explain(tp, c.up, c.down)
		if ok != c.ok || (ok && (got.Exact != c.exact || got.Bound != c.bound || got.Downstream != c.down)) {
			t.Fatalf("Explain(%d,%d) = %+v,%v; want ok %v exact %v bound %d", c.up, c.down, got, ok, c.ok, c.exact, c.bound)
		}
	}
	if _, ok := s.Explain(TP{"x", 0}, 1, 1); ok {
		t.Fatal("unknown partition explained")
	}
}

// mm2Store is MM2's OffsetSyncStore sync array (Kafka 3.6+ updateSyncArray), for comparing
// bounds with kmm's history.
type mm2Store struct{ syncs [64]Sync }

func newMM2Store(first Sync) *mm2Store {
	m := &mm2Store{}
	for i := range m.syncs {
		m.syncs[i] = first
	}
	return m
}

func (m *mm2Store) add(sy Sync) {
	if m.syncs[0].Upstream > sy.Upstream {
		for i := range m.syncs {
			m.syncs[i] = sy
		}
		return
	}
	m.syncs[0] = sy
	for i := 1; i < 64; i++ {
		mask := int64(^uint64(0)>>1) << i
		if (m.syncs[i].Upstream^sy.Upstream)&mask != 0 {
			m.syncs[i] = sy
		} else {
			break
		}
	}
}

func (m *mm2Store) lookup(g int64) Sync {
	for _, s := range m.syncs {
		if s.Upstream <= g {
			return s
		}
	}
	return m.syncs[63]
}

// A long history (10M records, a sync every 100, 100k syncs) stays under the cap, keeps the
// oldest and newest syncs, and translates any lag L with a bound ≤ max(99, L*ErrorFactor). MM2's
// 64 slots are compared for the record.
func TestThinningBound(t *testing.T) {
	const step, n = 100, 10_000_000
	s := loaded(Options{})
	mm := newMM2Store(Sync{0, 0})
	for u := int64(0); u <= n; u += step {
		s.Add(tp, Sync{u, u}, time.Time{})
		mm.add(Sync{u, u})
		if h := s.History(tp); len(h) > s.MaxEntries() {
			t.Fatalf("%d entries > cap %d", len(h), s.MaxEntries())
		}
	}
	h := s.History(tp)
	if h[0] != (Sync{0, 0}) || h[len(h)-1] != (Sync{n, n}) {
		t.Fatalf("oldest %v newest %v", h[0], h[len(h)-1])
	}
	for i := 1; i < len(h); i++ {
		if h[i].Upstream <= h[i-1].Upstream || h[i].Downstream <= h[i-1].Downstream {
			t.Fatalf("history not strictly increasing at %d: %v %v", i, h[i-1], h[i])
		}
	}
	ps, _ := s.PartitionStats(tp)
	st := s.Stats()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, lag := range []int64{0, 1, 50, 99, 100, 1_000, 10_000, 100_000, 1_000_000, 5_000_000, 9_000_000} {
		var worst, worstMM2 int64
		for k := 0; k < 200; k++ {
			l := lag + rng.Int64N(lag/10+step)
			g := int64(n) + 1 - l
			if g < 0 {
				continue
			}
			got := s.Translate(tp, g)
			limit := max(step-1, int64(float64(l)*ps.ErrorFactor))
			if got.Status != Translated || got.Bound > limit {
				t.Fatalf("lag %d (g %d): %+v, bound limit %d", l, g, got, limit)
			}
			if want := mm2Translate(got.Sync, g); got.Downstream != want {
				t.Fatalf("g %d: %+v not the MM2 rule (%d)", g, got, want)
			}
			worst = max(worst, got.Bound)
			worstMM2 = max(worstMM2, g-mm.lookup(g).Upstream-1)
		}
		t.Logf("lag %8d..+%-7d worst bound: kmm %7d, MM2 64 slots %7d", lag, lag/10+step, worst, worstMM2)
	}
	t.Logf("10M records, 100k syncs: %d entries kept, error factor %.4f, %d bytes, %d thinnings", ps.Entries, ps.ErrorFactor, st.Bytes, ps.Thinnings)
	if st.Bytes > int64(s.MaxEntries())*entryBytes+partitionOverhead+64 {
		t.Fatalf("%d bytes held", st.Bytes)
	}
}

// Every sync of a gappy/compacted topic (a sync per record) still fits, and the bound stays
// relative to the lag.
func TestThinningEverySync(t *testing.T) {
	s := loaded(Options{MaxEntries: MinMaxEntries})
	var d int64
	for u := int64(0); u < 200_000; u += 1 + u%3 {
		s.Add(tp, Sync{u, d}, time.Time{})
		d++
	}
	head, _, _ := s.Latest(tp)
	ps, _ := s.PartitionStats(tp)
	if ps.Entries > MinMaxEntries {
		t.Fatalf("%d entries", ps.Entries)
	}
	for g := int64(0); g <= head.Upstream+1; g += 37 {
		got := s.Translate(tp, g)
		if got.Status != Translated {
			t.Fatalf("g %d: %+v", g, got)
		}
		if limit := max(2, int64(float64(head.Upstream+1-g)*ps.ErrorFactor)); got.Bound > limit {
			t.Fatalf("g %d: bound %d > %d (factor %v)", g, got.Bound, limit, ps.ErrorFactor)
		}
	}
	t.Logf("cap %d: %d entries, factor %v", MinMaxEntries, ps.Entries, ps.ErrorFactor)
}

func TestMaxEntriesOption(t *testing.T) {
	if got := NewStore(Options{MaxEntries: 3}).MaxEntries(); got != MinMaxEntries {
		t.Fatalf("small cap raised to %d", got)
	}
	if got := NewStore(Options{}).MaxEntries(); got != DefaultMaxEntries {
		t.Fatalf("default cap %d", got)
	}
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

func TestLoad(t *testing.T) {
	rec := func(off int64, topic string, p int32, u, d int64) Record {
		os := mm2wire.OffsetSync{Topic: topic, Partition: p, UpstreamOffset: u, DownstreamOffset: d}
		k, err := os.AppendKey(nil)
		if err != nil {
			t.Fatal(err)
		}
		return Record{Offset: off, Key: k, Value: os.AppendValue(nil), Timestamp: time.UnixMilli(1000 + off)}
	}
	recs := []Record{
		// The spec's example bytes (§2.3), as MM2 writes them: orders[3] 9 -> 109.
		{Offset: 0, Key: mustHex("00 06 6f 72 64 65 72 73 00 00 00 03"), Value: mustHex("00 00 00 00 00 00 00 09 00 00 00 00 00 00 00 6d")},
		rec(1, "orders", 3, 20, 120),
		{Offset: 2, Key: []byte{0, 9, 'x'}, Value: make([]byte, 16)}, // truncated key
		{Offset: 3, Key: mustHex("00 06 6f 72 64 65 72 73 00 00 00 03"), Value: nil},
		// Trailing bytes are ignored, as Java does.
		{Offset: 4, Key: append(mustHex("00 06 6f 72 64 65 72 73 00 00 00 03"), 0xff), Value: append(mustHex("00 00 00 00 00 00 00 1e 00 00 00 00 00 00 00 82"), 1, 2)},
		rec(5, "orders", 0, 5, 5),
		rec(6, "orders", 3, 25, 10), // downstream rewind
		{Offset: 7, Key: mustHex("00 06 6f 72 64 65 72 73 00 00 00 03"), Value: []byte{1, 2, 3}}, // short value
	}
	s := NewStore(Options{})
	st, err := Load(context.Background(), &SliceIterator{Records: recs}, s)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Loaded() {
		t.Fatal("not marked loaded")
	}
	if st.Records != 8 || st.Applied != 5 || st.Undecodable != 3 || st.Resets != 1 || st.LastOffset != 7 {
		t.Fatalf("stats %+v", st)
	}
	if !strings.HasPrefix(st.FirstUndecodable, "offset 2:") {
		t.Fatalf("first undecodable %q", st.FirstUndecodable)
	}
	if h := s.History(TP{"orders", 3}); !equalSyncs(h, []Sync{{25, 10}}) {
		t.Fatalf("orders[3] history %v", h)
	}
	if got := s.Topics(); len(got) != 1 || got[0] != "orders" {
		t.Fatalf("topics %v", got)
	}
	if got := s.Partitions(); len(got) != 2 || got[0] != (TP{"orders", 0}) {
		t.Fatalf("partitions %v", got)
	}

	// Before the rewind, the spec's record and the lenient one were kept.
	s2 := NewStore(Options{})
	if _, err := Load(context.Background(), &SliceIterator{Records: recs[:5]}, s2); err != nil {
		t.Fatal(err)
	}
	if h := s2.History(TP{"orders", 3}); !equalSyncs(h, []Sync{{9, 109}, {20, 120}, {30, 130}}) {
		t.Fatalf("history %v", h)
	}

	// An iterator error is returned and the store is not marked loaded.
	s3 := NewStore(Options{})
	boom := errors.New("boom")
	if _, err := Load(context.Background(), failingIter{boom}, s3); !errors.Is(err, boom) || s3.Loaded() {
		t.Fatalf("err %v loaded %v", err, s3.Loaded())
	}
}

type failingIter struct{ err error }

func (f failingIter) Next(context.Context) (Record, bool, error) { return Record{}, false, f.err }
