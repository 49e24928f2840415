package offsetsync

import (
	"cmp"
	"slices"
	"sort"
	"sync"
	"time"
)

// TP is a source (upstream) topic-partition, as named in the offset-sync key.
type TP struct {
	Topic     string
	Partition int32
}

// Sync says that the source record at Upstream landed at target offset Downstream.
type Sync struct {
	Upstream   int64
	Downstream int64
}

// Options tune a Store.
type Options struct {
	// MaxEntries caps the syncs kept per partition (16 bytes each). 0 means DefaultMaxEntries;
	// values below MinMaxEntries are raised to it.
	MaxEntries int
}

const (
	// DefaultMaxEntries is the default per-partition cap: 16 KiB of syncs per partition.
	DefaultMaxEntries = 1024
	// MinMaxEntries is the smallest cap accepted; thinning at the coarsest factor needs about
	// 2*log2(range) entries, at most ~130.
	MinMaxEntries = 128
	// initialShift is the starting thinning factor: spacing up to 1/128 of a sync's age.
	initialShift = 7
	// entryBytes is the memory of one kept sync.
	entryBytes = 16
	// partitionOverhead approximates the fixed memory of one partition (map entry, header).
	partitionOverhead = 128
)

// Change says what Add did with a sync.
type Change uint8

// Changes.
const (
	Appended         Change = iota // the sync became the newest of its partition
	First                          // the first sync of the partition
	Repeated                       // identical to the newest sync: ignored
	UpstreamRewind                 // u ≤ newest u (and not a repeat): history reset to this sync
	DownstreamRewind               // u advanced but d did not: history reset to this sync
	Rejected                       // negative offsets: ignored
)

var changeNames = [...]string{"appended", "first", "repeated", "upstream_rewind", "downstream_rewind", "rejected"}

func (c Change) String() string {
	if int(c) < len(changeNames) {
		return changeNames[c]
	}
	return "unknown"
}

// Status says whether a translation succeeded and, if not, why.
type Status uint8

// Statuses.
const (
	Translated Status = iota // Downstream is valid
	NotLoaded                // the store has not been marked loaded (MM2: initial read-to-end not done)
	NoSyncs                  // no sync is known for the partition
	TooOld                   // the offset is before the earliest kept sync (MM2 returns -1)
	Invalid                  // negative upstream offset (no committed offset)
)

var statusNames = [...]string{"translated", "not_loaded", "no_syncs", "too_old", "invalid"}

func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "unknown"
}

// Translation is the result of Translate.
type Translation struct {
	Status Status
	// Downstream is the committable target offset; -1 unless Status is Translated.
	Downstream int64
	// Exact is true when no record the group already consumed is delivered again (Bound == 0).
	Exact bool
	// Bound is the largest number of records already consumed on the source (offsets strictly
	// between Sync.Upstream and the group's offset) that a consumer started at Downstream may
	// receive again; 0 when exact, -1 when not translated.
	Bound int64
	// Sync is the sync the translation used (for TooOld: the earliest kept sync).
	Sync Sync
	// SyncTime is when the partition's newest sync was written (its record timestamp), the age
	// of the mapping; zero when unknown.
	SyncTime time.Time
}

// history is one partition's kept syncs, strictly increasing in both offsets.
type history struct {
	e      []Sync
	shift  uint8
	newest time.Time
	resets uint32
	thins  uint32
}

// Store is the mapping of every source partition of one flow. It is safe for concurrent use.
type Store struct {
	max   int
	mu    sync.RWMutex
	parts map[TP]*history
	LoadState
}

// NewStore returns an empty store.
func NewStore(opt Options) *Store {
	m := opt.MaxEntries
	if m == 0 {
		m = DefaultMaxEntries
	}
	if m < MinMaxEntries {
		m = MinMaxEntries
	}
	return &Store{max: m, parts: map[TP]*history{}}
}

// MaxEntries is the per-partition cap in effect.
func (s *Store) MaxEntries() int { return s.max }

// Add records a sync for tp written at time at (the record timestamp; zero if unknown).
func (s *Store) Add(tp TP, sy Sync, at time.Time) Change {
	if sy.Upstream < 0 || sy.Downstream < 0 {
		return Rejected
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.parts[tp]
	if h == nil {
		h = &history{shift: initialShift, e: make([]Sync, 0, 8)}
		s.parts[tp] = h
		h.e = append(h.e, sy)
		h.touch(at)
		return First
	}
	last := h.e[len(h.e)-1]
	switch {
	case sy == last:
		h.touch(at)
		return Repeated
	case sy.Upstream > last.Upstream && sy.Downstream > last.Downstream:
		if len(h.e) == cap(h.e) {
			// Grow by doubling but never past the cap, so a partition never holds more than
			// MaxEntries*16 bytes.
			grown := make([]Sync, len(h.e), min(2*cap(h.e), s.max))
			copy(grown, h.e)
			h.e = grown
		}
		h.e = append(h.e, sy)
		h.touch(at)
		if len(h.e) >= s.max {
			h.compact(s.max)
		}
		return Appended
	}
	c := UpstreamRewind
	if sy.Upstream > last.Upstream {
		c = DownstreamRewind
	}
	if cap(h.e) > 64 {
		h.e = make([]Sync, 0, 8) // give a large history's memory back
	}
	h.e = append(h.e[:0], sy)
	h.shift = initialShift
	h.resets++
	h.touch(at)
	return c
}

func (h *history) touch(at time.Time) {
	if !at.IsZero() {
		h.newest = at
	}
}

// compact thins the history until it holds at most 3/4 of max entries, lowering the shift (a
// coarser relative spacing) only when needed. As a last resort (a cap too small for the range at
// the coarsest spacing) the oldest entries are dropped.
func (h *history) compact(max int) {
	target := max * 3 / 4
	h.thins++
	h.e = thin(h.e, h.shift)
	for len(h.e) > target && h.shift > 0 {
		h.shift--
		h.e = thin(h.e, h.shift)
	}
	if len(h.e) > target {
		n := copy(h.e, h.e[len(h.e)-target:])
		h.e = h.e[:n]
	}
}

// thin drops, in place, every sync whose removal keeps the gap between the kept syncs around it
// within (head - right neighbour) >> shift, where head is the newest sync. The oldest and the
// newest syncs are always kept. After thinning, for consecutive kept syncs a < b either they
// were adjacent before or b.Upstream-a.Upstream <= (head-b.Upstream)>>shift.
func thin(e []Sync, shift uint8) []Sync {
	n := len(e)
	if n <= 2 {
		return e
	}
	head := e[n-1].Upstream
	out := e[:1]
	k := e[0].Upstream
	for i := 1; i < n-1; i++ {
		next := e[i+1].Upstream
		if next-k <= (head-next)>>shift {
			continue // e[i] is not needed: its neighbours are close enough for their age
		}
		out = append(out, e[i])
		k = e[i].Upstream
	}
	return append(out, e[n-1])
}

// Translate translates a group's committed source offset on tp with MM2's 3.5+ rule.
func (s *Store) Translate(tp TP, upstream int64) Translation {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if !s.Loaded() { // translation is refused before the read-to-end, as in MM2
		return Translation{Status: NotLoaded, Downstream: -1, Bound: -1}
	}
	return s.parts[tp].translate(upstream)
}

func (h *history) translate(g int64) Translation {
	if g < 0 {
		return Translation{Status: Invalid, Downstream: -1, Bound: -1}
	}
	if h == nil || len(h.e) == 0 {
		return Translation{Status: NoSyncs, Downstream: -1, Bound: -1}
	}
	i := sort.Search(len(h.e), func(i int) bool { return h.e[i].Upstream > g }) - 1
	if i < 0 {
		return Translation{Status: TooOld, Downstream: -1, Bound: -1, Sync: h.e[0], SyncTime: h.newest}
	}
	sy := h.e[i]
	t := Translation{Status: Translated, Downstream: sy.Downstream, Sync: sy, SyncTime: h.newest}
	if g > sy.Upstream {
		t.Downstream++
		t.Bound = g - sy.Upstream - 1
	}
	t.Exact = t.Bound == 0
	return t
}

// Explain tells whether the target offset downstream is what the mapping would give (or would
// have given with a sync it still holds) for upstream, and with which bound. It serves to
// qualify checkpoints read from the checkpoints topic: ok is false when no kept sync accounts
// for the pair. It works whether or not the store is marked loaded.
func (s *Store) Explain(tp TP, upstream, downstream int64) (Translation, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	h := s.parts[tp]
	if h == nil || upstream < 0 || downstream < 0 {
		return Translation{}, false
	}
	e := h.e
	// The sync at downstream itself (exact: upstream must match), or at downstream-1 (then
	// upstream must be past it).
	for _, want := range []int64{downstream, downstream - 1} {
		i, found := slices.BinarySearchFunc(e, want, func(s Sync, d int64) int { return cmp.Compare(s.Downstream, d) })
		if !found {
			continue
		}
		sy := e[i]
		switch {
		case want == downstream && sy.Upstream == upstream:
			return Translation{Status: Translated, Downstream: downstream, Exact: true, Sync: sy, SyncTime: h.newest}, true
		case want == downstream-1 && sy.Upstream < upstream:
			b := upstream - sy.Upstream - 1
			return Translation{Status: Translated, Downstream: downstream, Exact: b == 0, Bound: b, Sync: sy, SyncTime: h.newest}, true
		}
	}
	return Translation{}, false
}

// Latest returns the newest sync of tp and when it was written.
func (s *Store) Latest(tp TP) (Sync, time.Time, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	h := s.parts[tp]
	if h == nil {
		return Sync{}, time.Time{}, false
	}
	return h.e[len(h.e)-1], h.newest, true
}

// Earliest returns the oldest kept sync of tp: offsets before its Upstream are not translated.
func (s *Store) Earliest(tp TP) (Sync, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	h := s.parts[tp]
	if h == nil {
		return Sync{}, false
	}
	return h.e[0], true
}

// History returns a copy of tp's kept syncs, oldest first.
func (s *Store) History(tp TP) []Sync {
	s.mu.RLock()
	defer s.mu.RUnlock()
	h := s.parts[tp]
	if h == nil {
		return nil
	}
	return slices.Clone(h.e)
}

// Partitions lists the partitions that have syncs, sorted.
func (s *Store) Partitions() []TP {
	s.mu.RLock()
	out := make([]TP, 0, len(s.parts))
	for tp := range s.parts {
		out = append(out, tp)
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b TP) int {
		if c := cmp.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return cmp.Compare(a.Partition, b.Partition)
	})
	return out
}

// Topics lists the source topics that have syncs, sorted.
func (s *Store) Topics() []string {
	var out []string
	for _, tp := range s.Partitions() {
		if len(out) == 0 || out[len(out)-1] != tp.Topic {
			out = append(out, tp.Topic)
		}
	}
	return out
}

// PartitionStats describes one partition's history.
type PartitionStats struct {
	Entries int
	// ErrorFactor is the relative spacing thinning allows for old syncs (2^-shift): a group
	// lagging L records behind the newest sync translates with a bound of at most
	// max(original spacing, L*ErrorFactor).
	ErrorFactor float64
	Resets      int // history resets (rewinds) seen
	Thinnings   int // times the history was thinned
}

// Stats is the memory and shape of the whole store.
type Stats struct {
	Partitions int
	Entries    int
	Bytes      int64 // approximate memory held
	// WorstErrorFactor is the largest ErrorFactor over partitions.
	WorstErrorFactor float64
	Resets           int
}

// PartitionStats returns the stats of tp.
func (s *Store) PartitionStats(tp TP) (PartitionStats, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	h := s.parts[tp]
	if h == nil {
		return PartitionStats{}, false
	}
	return PartitionStats{Entries: len(h.e), ErrorFactor: 1 / float64(uint64(1)<<h.shift), Resets: int(h.resets), Thinnings: int(h.thins)}, true
}

// Stats returns the store's size.
func (s *Store) Stats() Stats {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := Stats{Partitions: len(s.parts)}
	for tp, h := range s.parts {
		st.Entries += len(h.e)
		st.Bytes += int64(cap(h.e))*entryBytes + partitionOverhead + int64(len(tp.Topic))
		if f := 1 / float64(uint64(1)<<h.shift); f > st.WorstErrorFactor {
			st.WorstErrorFactor = f
		}
		st.Resets += int(h.resets)
	}
	return st
}
