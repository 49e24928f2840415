package verify

import (
	"context"
	"fmt"
	"time"

	"github.com/kmmproject/kmm/pkg/cluster"
)

// scanReaderOpener is a cluster that opens readers tuned for long scans (bounded prefetch).
type scanReaderOpener interface {
	NewScanReader() (cluster.Reader, error)
}

// streamIdle is how long a read waits without any record before it concludes that the rest of
// its range holds no readable record (transaction markers, aborted or compacted records).
const streamIdle = 10 * time.Second

// partStream reads one partition range [from, end) through a cluster.Reader and yields record
// digests (records are dropped as soon as they are hashed). Offsets without a readable record
// (transaction markers, aborted records under read_committed, compacted records) are skipped;
// a read that sees nothing for idle while short of end concludes the range is done and says so
// (stalled), since a busy broker can also be that slow: the comparison then reports the unread
// tail as not verified rather than missing.
type partStream struct {
	r      cluster.Reader
	tp     cluster.TP
	end    int64
	last   int64
	withTS bool
	idle   time.Duration
	buf    []Item
	done   bool
	any    bool // a record was read
	// stalled is set when the read stopped by the idle rule short of end.
	stalled bool
	// recs, if set, receives each record read (the compacted comparison needs keys).
	recs func(*cluster.Record)
}

func openStream(c cluster.Cluster, tp cluster.TP, from, end int64, withTS bool) (*partStream, error) {
	s := &partStream{tp: tp, end: end, last: from - 1, withTS: withTS, idle: streamIdle}
	if end <= from {
		s.done = true
		return s, nil
	}
	var r cluster.Reader
	var err error
	if sc, ok := c.(scanReaderOpener); ok {
		r, err = sc.NewScanReader()
	} else {
		r, err = c.NewReader()
	}
	if err != nil {
		return nil, err
	}
	if err := r.Assign(map[cluster.TP]int64{tp: from}); err != nil {
		r.Close()
		return nil, err
	}
	s.r = r
	return s, nil
}

func (s *partStream) Close() {
	if s.r != nil {
		s.r.Close()
		s.r = nil
	}
}

// Next implements Stream.
func (s *partStream) Next(ctx context.Context) (Item, bool, error) {
	quiet := time.Now()
	for len(s.buf) == 0 {
		if s.done {
			return Item{}, false, nil
		}
		recs, err := s.r.Poll(ctx, 5000, 200*time.Millisecond)
		if err != nil {
			return Item{}, false, fmt.Errorf("reading %s[%d]: %w", s.tp.Topic, s.tp.Partition, err)
		}
		for i := range recs {
			r := &recs[i]
			if r.Topic != s.tp.Topic || r.Partition != s.tp.Partition || r.Offset >= s.end || r.Offset <= s.last {
				continue
			}
			s.last = r.Offset
			if s.recs != nil {
				s.recs(r)
			}
			s.buf = append(s.buf, Item{Offset: r.Offset, Hash: RecordHash(r, s.withTS)})
		}
		if s.last >= s.end-1 {
			s.done = true
		}
		idle := s.idle
		if !s.any {
			idle = 3 * s.idle // the first fetch also connects and finds the leader
		}
		if len(recs) > 0 {
			quiet, s.any = time.Now(), true
		} else if time.Since(quiet) >= idle {
			s.done, s.stalled = true, true
		}
	}
	it := s.buf[0]
	s.buf = s.buf[1:]
	return it, true, nil
}
