package offsetsync

import (
	"context"
	"fmt"
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
	st := LoadStats{LastOffset: -1}
	for {
		r, ok, err := it.Next(ctx)
		if err != nil {
			return st, err
		}
		if !ok {
			break
		}
		st.Records++
		st.LastOffset = r.Offset
		c, err := s.ApplyRecord(r)
		if err != nil {
			if st.Undecodable == 0 {
				st.FirstUndecodable = err.Error()
			}
			st.Undecodable++
			continue
		}
		switch c {
		case Appended, First:
			st.Applied++
		case UpstreamRewind, DownstreamRewind:
			st.Applied++
			st.Resets++
		}
	}
	s.MarkLoaded()
	return st, nil
}
