package verify

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/kmmproject/kmm/pkg/cluster"
	"github.com/kmmproject/kmm/pkg/offsetsync"
)

type anchor struct {
	p    *part
	sync offsetsync.Sync
}

// anchors picks up to n offset syncs of p whose records exist on both sides and were
// replicated, with a generator seeded by seed and the partition (reproducible).
func anchors(p *part, hist []offsetsync.Sync, n int, seed uint64) []offsetsync.Sync {
	var ok []offsetsync.Sync
	for _, sy := range hist {
		if sy.Upstream >= p.srcStart && sy.Upstream < p.srcEnd && (p.stored < 0 || sy.Upstream < p.next()) && sy.Downstream >= p.tgtStart && sy.Downstream < p.tgtEnd {
			ok = append(ok, sy)
		}
	}
	if len(ok) <= n {
		return ok
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", p.tp.Topic, p.tp.Partition)
	rng := rand.New(rand.NewPCG(seed, h.Sum64()))
	idx := rng.Perm(len(ok))[:n]
	slices.Sort(idx)
	out := make([]offsetsync.Sync, n)
	for i, j := range idx {
		out[i] = ok[j]
	}
	return out
}

// sample compares, for up to o.Samples offset-sync anchors per partition, the source record at
// the anchor's upstream offset with the target record at its downstream offset: the exact
// mapping a failover translates group offsets with.
func (s *state) sample(ctx context.Context) error {
	var rounds [][]anchor
	total := 0
	for _, p := range s.parts {
		if !p.hasRemote {
			continue
		}
		as := anchors(p, s.syncs.History(offsetsync.TP{Topic: p.tp.Topic, Partition: p.tp.Partition}), s.o.Samples, s.o.Seed)
		if len(as) == 0 {
			if p.stored >= 0 {
				s.add(Finding{Check: CheckSample, Status: Warn, Topic: p.tp.Topic, RemoteTopic: p.remote.Topic, Partition: P(p.tp.Partition),
					Reason: "no offset sync whose records still exist on both sides: nothing to sample"})
			}
			continue
		}
		for i, a := range as {
			if len(rounds) <= i {
				rounds = append(rounds, nil)
			}
			rounds[i] = append(rounds[i], anchor{p: p, sync: a})
			total++
		}
	}
	s.o.Progress.Start("sample: anchors", int64(total))
	defer s.o.Progress.Done()
	bad := map[*part][]string{}
	firstBad := map[*part]offsetsync.Sync{}
	checked := map[*part]int{}
	for _, round := range rounds {
		sa, ta := map[cluster.TP]int64{}, map[cluster.TP]int64{}
		for _, a := range round {
			sa[a.p.tp], ta[a.p.remote] = a.sync.Upstream, a.sync.Downstream
		}
		srcRecs, err := fetchAt(ctx, s.src, sa)
		if err != nil {
			return err
		}
		tgtRecs, err := fetchAt(ctx, s.tgt, ta)
		if err != nil {
			return err
		}
		for _, a := range round {
			sr, sok := srcRecs[a.p.tp]
			tr, tok := tgtRecs[a.p.remote]
			if a.p.compacted && (!sok || sr.Offset != a.sync.Upstream || !tok || tr.Offset != a.sync.Downstream) {
				continue // compaction removed one of the pair: nothing to compare
			}
			checked[a.p]++
			var why string
			switch {
			case !sok || sr.Offset != a.sync.Upstream:
				why = fmt.Sprintf("source record %d not readable", a.sync.Upstream)
			case !tok || tr.Offset != a.sync.Downstream:
				why = fmt.Sprintf("target record %d not readable", a.sync.Downstream)
			default:
				if d := recordDiff(&sr, &tr, !a.p.logTime); d != "" {
					why = fmt.Sprintf("source %d / target %d: %s", a.sync.Upstream, a.sync.Downstream, d)
				}
			}
			if why != "" {
				if len(bad[a.p]) == 0 {
					firstBad[a.p] = a.sync
				}
				bad[a.p] = append(bad[a.p], why)
			}
		}
		s.o.Progress.Add(int64(len(round)))
	}
	for _, p := range s.parts {
		if checked[p] == 0 {
			continue
		}
		fd := Finding{Check: CheckSample, Topic: p.tp.Topic, RemoteTopic: p.remote.Topic, Partition: P(p.tp.Partition),
			Counts: map[string]int64{"anchors": int64(checked[p]), "differing": int64(len(bad[p]))}}
		if len(bad[p]) > 0 {
			sy := firstBad[p]
			fd.Status, fd.SourceOffset, fd.TargetOffset = Fail, P(sy.Upstream), P(sy.Downstream)
			fd.Reason = fmt.Sprintf("%d of %d anchor(s) differ: %s", len(bad[p]), checked[p], strings.Join(bad[p], "; "))
		} else {
			fd.Status, fd.Reason = OK, fmt.Sprintf("%d anchor(s) identical (key, value, headers, timestamp)", checked[p])
		}
		s.add(fd)
	}
	return nil
}

// recordDiff names the fields in which two records differ ("" when equal).
func recordDiff(a, b *cluster.Record, withTS bool) string {
	var d []string
	if !bytes.Equal(a.Key, b.Key) || (a.Key == nil) != (b.Key == nil) {
		d = append(d, "key differs")
	}
	if !bytes.Equal(a.Value, b.Value) || (a.Value == nil) != (b.Value == nil) {
		d = append(d, "value differs")
	}
	ah, bh := cluster.WithoutOrigin(a.Headers), cluster.WithoutOrigin(b.Headers) // kmm's provenance header is not content
	if len(ah) != len(bh) {
		d = append(d, fmt.Sprintf("%d header(s) on the source, %d on the target", len(ah), len(bh)))
	} else {
		for i := range ah {
			if ah[i].Key != bh[i].Key || !bytes.Equal(ah[i].Value, bh[i].Value) {
				d = append(d, fmt.Sprintf("header %d (%s) differs", i, ah[i].Key))
				break
			}
		}
	}
	if withTS && !a.Timestamp.Equal(b.Timestamp) {
		d = append(d, fmt.Sprintf("timestamp %d on the source, %d on the target", a.Timestamp.UnixMilli(), b.Timestamp.UnixMilli()))
	}
	return strings.Join(d, ", ")
}

// fetchAt reads the first record at or after each given offset.
func fetchAt(ctx context.Context, c cluster.Cluster, at map[cluster.TP]int64) (map[cluster.TP]cluster.Record, error) {
	out := map[cluster.TP]cluster.Record{}
	if len(at) == 0 {
		return out, nil
	}
	r, err := c.NewReader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if err := r.Assign(at); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(15 * time.Second)
	for len(out) < len(at) && time.Now().Before(deadline) {
		recs, err := r.Poll(ctx, 1000, 300*time.Millisecond)
		if err != nil {
			return nil, err
		}
		for _, rec := range recs {
			tp := cluster.TP{Topic: rec.Topic, Partition: rec.Partition}
			if _, seen := out[tp]; !seen && rec.Offset >= at[tp] {
				out[tp] = rec
			}
		}
	}
	return out, nil
}
