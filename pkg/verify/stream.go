package verify

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/kmmproject/kmm/pkg/cluster"
)

// scanReaderOpener is a cluster that opens readers for long scans within a prefetch budget.
type scanReaderOpener interface {
	NewScanReader(prefetch int) (cluster.Reader, error)
}

// ScanBudget is the memory, in bytes, that the readers of a full-level scan may hold in
// prefetched records at once: it is divided among the readers open at the same time (two per
// partition compared, --parallel partitions), each getting at least MinReaderPrefetch (one
// default-sized fetch). With the default --parallel 4 that is 1 MiB per reader, which still
// keeps a local broker's fetches back to back (the readers drain a fetch in tens of
// milliseconds, a fetch takes one); the scan's memory does not grow with the topics' size or
// with the file's fetch settings. Measured on the 1 KB benchmark workload: 102 MiB peak RSS with
// this budget, 125 MiB with 16 MiB, 143 MiB with 32 MiB (the whole binary, Go heap included).
const (
	ScanBudget        = 8 << 20
	MinReaderPrefetch = 1 << 20
)

// pollBatch is the most records one poll of a scan hands over: they are hashed and dropped at
// once, so a small batch keeps the transient copies small.
const pollBatch = 256

// readers hands out one side's scan readers and takes them back for the next partition, so a
// scan opens at most --parallel readers per side whatever the number of partitions (opening a
// librdkafka client and connecting costs more than reassigning one).
type readers struct {
	c        cluster.Cluster
	prefetch int
	mu       sync.Mutex
	idle     []cluster.Reader
	keep     bool // put keeps readers for reuse (else closes them)
}

// newReaders returns a reusable pool of scan readers of c, each with prefetch bytes.
func newReaders(c cluster.Cluster, prefetch int) *readers {
	return &readers{c: c, prefetch: max(prefetch, MinReaderPrefetch), keep: true}
}

func (p *readers) get() (cluster.Reader, error) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		r := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return r, nil
	}
	p.mu.Unlock()
	if sc, ok := p.c.(scanReaderOpener); ok {
		return sc.NewScanReader(p.prefetch)
	}
	return p.c.NewReader()
}

// put takes a reader back: its partition is unassigned (its prefetched records are dropped)
// and it waits for the next one; a reader that cannot be unassigned is closed.
func (p *readers) put(r cluster.Reader) {
	if !p.keep || r.Assign(map[cluster.TP]int64{}) != nil {
		r.Close()
		return
	}
	p.mu.Lock()
	p.idle = append(p.idle, r)
	p.mu.Unlock()
}

// close closes the idle readers.
func (p *readers) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, r := range idle {
		r.Close()
	}
}

// streamIdle is how long a read waits without any record before it concludes that the rest of
// its range holds no readable record (transaction markers, aborted or compacted records).
const streamIdle = 10 * time.Second

// readAhead is how many poll batches of digests a stream's reader goroutine may hold ahead of
// the comparison (16 bytes a record: 128 KiB): enough for two of the comparison's chunks, so
// one side's reader keeps fetching while the comparison drains the other side.
const readAhead = 32

// partStream reads one partition range [from, end) through a cluster.Reader and yields record
// digests (records are dropped as soon as they are hashed). A goroutine per stream polls and
// hashes, so the source and target of a partition are read at the same time; it starts at the
// first Next. Offsets without a readable record (transaction markers, aborted records under
// read_committed, compacted records) are skipped; a read that sees nothing for idle while short
// of end concludes the range is done and says so (stalled), since a busy broker can also be
// that slow: the comparison then reports the unread tail as not verified rather than missing.
type partStream struct {
	r      cluster.Reader
	pool   *readers
	tp     cluster.TP
	end    int64
	withTS bool
	idle   time.Duration
	// recs, if set, receives each record read, on the reader goroutine (the compacted
	// comparison needs keys); what it builds may be read once Next has returned false.
	recs func(*cluster.Record)

	started bool
	ch      chan []Item   // batches of digests, closed at the end of the range or on error
	free    chan []Item   // batches handed back for reuse
	stop    func()        // stops the reader goroutine
	exited  chan struct{} // closed when the reader goroutine has returned
	cur     []Item        // the batch being handed out, cur[pos:] not yet
	pos     int
	done    bool

	// Set by the reader goroutine before it closes ch: read them once Next returned false.
	last    int64 // the last offset read
	err     error
	stalled bool // the read stopped by the idle rule short of end
}

func openStream(pool *readers, tp cluster.TP, from, end int64, withTS bool) (*partStream, error) {
	s := &partStream{tp: tp, end: end, last: from - 1, withTS: withTS, idle: streamIdle, pool: pool}
	if end <= from {
		s.done = true
		return s, nil
	}
	r, err := pool.get()
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

// Close stops the reader goroutine and gives the reader back to its pool.
func (s *partStream) Close() {
	if s.started {
		s.stop()
		<-s.exited
		s.started = false
	}
	if s.r != nil {
		s.pool.put(s.r)
		s.r = nil
	}
}

// Next implements Stream.
func (s *partStream) Next(ctx context.Context) (Item, bool, error) {
	for s.pos == len(s.cur) {
		if s.done {
			return Item{}, false, nil
		}
		if !s.started {
			s.start(ctx)
		}
		if s.cur != nil {
			select {
			case s.free <- s.cur[:0]:
			default:
			}
		}
		s.cur, s.pos = nil, 0
		select {
		case b, ok := <-s.ch:
			if !ok {
				s.done = true
				if s.err != nil {
					return Item{}, false, s.err
				}
				return Item{}, false, nil
			}
			s.cur = b
		case <-ctx.Done():
			return Item{}, false, ctx.Err()
		}
	}
	s.pos++
	return s.cur[s.pos-1], true, nil
}

func (s *partStream) start(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	s.started, s.stop = true, cancel
	s.ch, s.free, s.exited = make(chan []Item, readAhead), make(chan []Item, readAhead+2), make(chan struct{})
	go func() {
		defer close(s.exited)
		defer close(s.ch)
		s.err = s.read(ctx)
	}()
}

// digestPoller is a reader that hashes records where they are (pkg/rdkafka: in C, on its
// librdkafka queue) and hands over only offsets and digests (RecordHash).
type digestPoller interface {
	PollDigests(ctx context.Context, tp cluster.TP, after, end int64, withTS bool, out []cluster.Digest, wait time.Duration) (n, seen int, err error)
}

// digestBatch is the most digests one PollDigests hands over (16 KiB).
const digestBatch = 1024

// read polls the range to its end (or the idle rule, or an error) and sends the digests: through
// the reader's own hashing where it has it (digestPoller), else Poll + RecordHash.
func (s *partStream) read(ctx context.Context) error {
	poll := s.pollRecords
	if dp, ok := s.r.(digestPoller); ok && s.recs == nil && !GoDigests {
		poll = func(ctx context.Context) ([]Item, int, error) { return s.pollDigests(ctx, dp) }
	}
	quiet, any := time.Now(), false
	for {
		b, seen, err := poll(ctx)
		if err != nil {
			return fmt.Errorf("reading %s[%d]: %w", s.tp.Topic, s.tp.Partition, err)
		}
		if len(b) > 0 {
			s.last = b[len(b)-1].Offset
			select {
			case s.ch <- b:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if s.last >= s.end-1 {
			return nil
		}
		idle := s.idle
		if !any {
			idle = 3 * s.idle // the first fetch also connects and finds the leader
		}
		if seen > 0 {
			// After the send: time spent waiting for the comparison is not idle time.
			quiet, any = time.Now(), true
		} else if time.Since(quiet) >= idle {
			s.stalled = true
			return nil
		}
	}
}

// batch is an empty batch of capacity n or more, reused from the comparison when it can be.
func (s *partStream) batch(n int) []Item {
	select {
	case b := <-s.free:
		if cap(b) >= n {
			return b[:0]
		}
	default:
	}
	return make([]Item, 0, n)
}

// pollRecords polls up to pollBatch records and hashes those of the range in Go; seen counts
// every record polled.
func (s *partStream) pollRecords(ctx context.Context) ([]Item, int, error) {
	recs, err := s.r.Poll(ctx, pollBatch, 200*time.Millisecond)
	if err != nil {
		return nil, 0, err
	}
	b := s.batch(pollBatch)
	last := s.last
	for i := range recs {
		r := &recs[i]
		if r.Topic != s.tp.Topic || r.Partition != s.tp.Partition || r.Offset >= s.end || r.Offset <= last {
			continue
		}
		last = r.Offset
		if s.recs != nil {
			s.recs(r)
		}
		b = append(b, Item{Offset: r.Offset, Hash: RecordHash(r, s.withTS)})
	}
	return b, len(recs), nil
}

// GoDigests makes full scans hash records in Go (Poll + RecordHash) even where the reader can
// hash them itself: the benchmark's comparison of the two paths (KMM_VERIFY_GO_DIGESTS=1).
var GoDigests = os.Getenv("KMM_VERIFY_GO_DIGESTS") == "1"

// pollDigests is pollRecords through a digestPoller: the records are hashed by the reader.
func (s *partStream) pollDigests(ctx context.Context, dp digestPoller) ([]Item, int, error) {
	b := s.batch(digestBatch)
	n, seen, err := dp.PollDigests(ctx, s.tp, s.last, s.end, s.withTS, b[:cap(b)], 200*time.Millisecond)
	if err != nil {
		return nil, 0, err
	}
	return b[:n], seen, nil
}
