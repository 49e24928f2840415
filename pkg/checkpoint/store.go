package checkpoint

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/kmmproject/kmm/pkg/mm2wire"
	"github.com/kmmproject/kmm/pkg/offsetsync"
)

// TP is a topic-partition. In a checkpoint it is the downstream (target, renamed) one.
type TP = offsetsync.TP

// Entry is a stored checkpoint with the time it was computed (its record timestamp; zero when
// unknown).
type Entry struct {
	mm2wire.Checkpoint
	Time time.Time
}

// TP returns the checkpoint's downstream topic-partition.
func (e Entry) TP() TP { return TP{Topic: e.Topic, Partition: e.Partition} }

// Store holds the latest checkpoint per group and downstream topic-partition. It is safe for
// concurrent use.
type Store struct {
	mu                   sync.RWMutex
	groups               map[string]map[TP]Entry
	offsetsync.LoadState // MarkLoaded, Loaded: Compute emits nothing before the initial read is done
}

// NewStore returns an empty store.
func NewStore() *Store { return &Store{groups: map[string]map[TP]Entry{}} }

// Put stores e, replacing the checkpoint of the same key.
func (s *Store) Put(e Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[e.Group]
	if g == nil {
		g = map[TP]Entry{}
		s.groups[e.Group] = g
	}
	g[e.TP()] = e
}

// Delete removes a key.
func (s *Store) Delete(group string, tp TP) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g := s.groups[group]; g != nil {
		delete(g, tp)
		if len(g) == 0 {
			delete(s.groups, group)
		}
	}
}

// Get returns the checkpoint of group on downstream tp.
func (s *Store) Get(group string, tp TP) (Entry, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.groups[group][tp]
	return e, ok
}

// Group returns a copy of group's checkpoints.
func (s *Store) Group(group string) map[TP]Entry {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return maps.Clone(s.groups[group])
}

// Entries returns group's checkpoints sorted by topic and partition.
func (s *Store) Entries(group string) []Entry {
	s.mu.RLock()
	out := slices.Collect(maps.Values(s.groups[group]))
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b Entry) int { return compareTP(a.TP(), b.TP()) })
	return out
}

// Groups lists the groups that have checkpoints, sorted.
func (s *Store) Groups() []string {
	s.mu.RLock()
	out := slices.Collect(maps.Keys(s.groups))
	s.mu.RUnlock()
	slices.Sort(out)
	return out
}

// Len is the number of stored checkpoints.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := 0
	for _, g := range s.groups {
		n += len(g)
	}
	return n
}

func compareTP(a, b TP) int {
	if c := cmp.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return cmp.Compare(a.Partition, b.Partition)
}

// ApplyRecord applies one record of the checkpoints topic: a checkpoint replaces the one of its
// key; a tombstone deletes its key. A record that does not decode changes nothing and is
// returned as an error (MM2 logs "Ignored invalid checkpoint record" and goes on). keep, if not
// nil, limits the store to some groups (MM2 keeps only its task's groups).
func (s *Store) ApplyRecord(r offsetsync.Record, keep func(group string) bool) error {
	if r.Value == nil {
		g, t, p, err := mm2wire.DecodeCheckpointKey(r.Key)
		if err != nil {
			return fmt.Errorf("offset %d: tombstone: %w", r.Offset, err)
		}
		s.Delete(g, TP{Topic: t, Partition: p})
		return nil
	}
	cp, err := mm2wire.DecodeCheckpoint(r.Key, r.Value)
	if err != nil {
		return fmt.Errorf("offset %d: %w", r.Offset, err)
	}
	if keep != nil && !keep(cp.Group) {
		return nil
	}
	s.Put(Entry{Checkpoint: cp, Time: r.Timestamp})
	return nil
}

// LoadStats summarises a Load.
type LoadStats struct {
	Records          int // records read
	Undecodable      int // skipped
	FirstUndecodable string
	Groups           int   // groups with checkpoints after the load
	Checkpoints      int   // checkpoints after the load
	LastOffset       int64 // -1 if none
}

// Load reads every record of it (the checkpoints topic, partition 0, from the beginning) into s
// and marks s loaded. On an iterator error s keeps what was read and is not marked loaded.
func Load(ctx context.Context, it offsetsync.Iterator, s *Store, keep func(group string) bool) (LoadStats, error) {
	rs, err := offsetsync.Replay(ctx, it, func(r offsetsync.Record) error { return s.ApplyRecord(r, keep) })
	st := LoadStats{Records: rs.Records, Undecodable: rs.Undecodable, FirstUndecodable: rs.FirstUndecodable, LastOffset: rs.LastOffset}
	if err != nil {
		return st, err
	}
	s.MarkLoaded()
	st.Groups = len(s.Groups())
	st.Checkpoints = s.Len()
	return st, nil
}
