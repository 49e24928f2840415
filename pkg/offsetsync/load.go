package offsetsync

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/kmmproject/kmm/pkg/mm2wire"
)

// Record is one record read from an MM2 internal topic (offset syncs or checkpoints).
type Record struct {
	Offset    int64
	Key       []byte
	Value     []byte // nil for a tombstone
	Timestamp time.Time
}

// Iterator yields the records of one topic partition in offset order. Next returns ok == false
// at the end (the end offset seen when reading started); an error ends the iteration.
type Iterator interface {
	Next(ctx context.Context) (rec Record, ok bool, err error)
}

// SliceIterator iterates over records held in memory.
type SliceIterator struct {
	Records []Record
	i       int
}

// Next implements Iterator.
func (it *SliceIterator) Next(ctx context.Context) (Record, bool, error) {
	if err := ctx.Err(); err != nil {
		return Record{}, false, err
	}
	if it.i >= len(it.Records) {
		return Record{}, false, nil
	}
	it.i++
	return it.Records[it.i-1], true, nil
}

// LoadState is the flag both of kmm's stores of MM2 records carry (this package's Store and
// checkpoint.Store): MM2 uses neither its offset syncs nor its checkpoints before the initial
// read of the topic has reached its end, and neither does kmm.
type LoadState struct{ loaded atomic.Bool }

// MarkLoaded declares the initial read done (or given up, e.g. no READ permission: MM2 then
// starts empty too).
func (l *LoadState) MarkLoaded() { l.loaded.Store(true) }

// Loaded reports whether MarkLoaded was called.
func (l *LoadState) Loaded() bool { return l.loaded.Load() }

// ReplayStats counts what Replay read.
type ReplayStats struct {
	Records     int // records read
	Undecodable int // records apply refused (skipped)
	// FirstUndecodable is apply's error for the first refused record.
	FirstUndecodable string
	LastOffset       int64 // offset of the last record read, -1 if none
}

// Replay is the load loop of both stores: it hands every record of it to apply in order,
// counting (and skipping) those apply refuses, until the iterator ends. An iterator error ends
// it with that error.
func Replay(ctx context.Context, it Iterator, apply func(Record) error) (ReplayStats, error) {
	st := ReplayStats{LastOffset: -1}
	for {
		r, ok, err := it.Next(ctx)
		if err != nil {
			return st, err
		}
		if !ok {
			return st, nil
		}
		st.Records++
		st.LastOffset = r.Offset
		if err := apply(r); err != nil {
			if st.Undecodable == 0 {
				st.FirstUndecodable = err.Error()
			}
			st.Undecodable++
		}
	}
}

// LoadStats summarises a Load.
type LoadStats struct {
	Records     int // records read
	Applied     int // syncs that changed the mapping (appended, first, or reset)
	Undecodable int // records skipped because they do not decode (or are tombstones)
	// FirstUndecodable describes the first skipped record ("offset 12: ...").
	FirstUndecodable string
	Resets           int   // rewinds that reset a partition's history
	LastOffset       int64 // offset of the last record read, -1 if none
}

// ApplyRecord decodes an offset-sync record and adds it to the store. Records that do not
// decode are returned as errors and change nothing (MM2 logs and skips them too).
func (s *Store) ApplyRecord(r Record) (Change, error) {
	if r.Value == nil {
		return Rejected, fmt.Errorf("offset %d: tombstone in the offset-syncs topic", r.Offset)
	}
	os, err := mm2wire.DecodeOffsetSync(r.Key, r.Value)
	if err != nil {
		return Rejected, fmt.Errorf("offset %d: %w", r.Offset, err)
	}
	c := s.Add(TP{Topic: os.Topic, Partition: os.Partition}, Sync{Upstream: os.UpstreamOffset, Downstream: os.DownstreamOffset}, r.Timestamp)
	if c == Rejected {
		return c, fmt.Errorf("offset %d: negative offsets in sync %s[%d] %d->%d", r.Offset, os.Topic, os.Partition, os.UpstreamOffset, os.DownstreamOffset)
	}
	return c, nil
}

// Load reads every record of it into s (syncs written by kmm or by Apache MM2: the format is
// the same), then marks s loaded. Undecodable records are counted and skipped. On an iterator
// error s keeps what was read and is not marked loaded.
func Load(ctx context.Context, it Iterator, s *Store) (LoadStats, error) {
	var applied, resets int
	rs, err := Replay(ctx, it, func(r Record) error {
		c, err := s.ApplyRecord(r)
		switch {
		case err != nil:
		case c == Appended || c == First:
			applied++
		case c == UpstreamRewind || c == DownstreamRewind:
			applied++
			resets++
		}
		return err
	})
	st := LoadStats{Records: rs.Records, Applied: applied, Undecodable: rs.Undecodable, FirstUndecodable: rs.FirstUndecodable,
		Resets: resets, LastOffset: rs.LastOffset}
	if err != nil {
		return st, err
	}
	s.MarkLoaded()
	return st, nil
}
