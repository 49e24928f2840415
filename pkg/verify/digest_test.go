package verify

import (
	"context"
	"testing"
	"time"

	"github.com/kmmproject/kmm/pkg/cluster"
)

func items(base int64, hashes ...uint64) []Item {
	out := make([]Item, len(hashes))
	for i, h := range hashes {
		out[i] = Item{Offset: base + int64(i), Hash: h}
	}
	return out
}

func seq(from, to uint64) []uint64 {
	var out []uint64
	for h := from; h < to; h++ {
		out = append(out, 1000+h)
	}
	return out
}

func cat(parts ...[]uint64) []uint64 {
	var out []uint64
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestCompare(t *testing.T) {
	altered := seq(0, 50)
	altered[17] = 7
	cases := []struct {
		name     string
		src, tgt []uint64
		upTo     int64
		want     Result
		firstSrc int64
		firstTgt int64
	}{
		{"equal", seq(0, 10000), seq(0, 10000), -1, Result{Matched: 10000}, -1, -1},
		{"missing in the middle", seq(0, 100), cat(seq(0, 40), seq(45, 100)), -1, Result{Matched: 95, Missing: 5}, 40, -1},
		{"missing prefix", seq(0, 100), seq(30, 100), -1, Result{Matched: 70, Missing: 30}, 0, -1},
		{"extra on the target", seq(0, 100), cat(seq(0, 60), []uint64{1, 2}, seq(60, 100)), -1, Result{Matched: 100, Extra: 2}, -1, 60},
		{"diverged", seq(0, 50), altered, -1, Result{Matched: 49, Diverged: 1}, 17, 17},
		{"duplicates after a crash", seq(0, 100), cat(seq(0, 50), seq(40, 100)), -1, Result{Matched: 100, Duplicates: 10}, 40, 50},
		{"tail not replicated yet", seq(0, 100), seq(0, 80), 80, Result{Matched: 80, NotYetReplicated: 20}, -1, -1},
		{"tail missing below the replicated position", seq(0, 100), seq(0, 80), 90, Result{Matched: 80, Missing: 10, NotYetReplicated: 10}, 80, -1},
		{"extra at the end", seq(0, 10), cat(seq(0, 10), []uint64{5}), -1, Result{Matched: 10, Extra: 1}, -1, 10},
		{"a long replay", seq(0, 10000), cat(seq(0, 8000), seq(3000, 10000)), -1, Result{Matched: 10000, Duplicates: 5000}, 3000, 8000},
		{"differences in several ranges", seq(0, 1000), cat(seq(0, 100), seq(101, 500), []uint64{9}, seq(500, 1000)), -1, Result{Matched: 999, Missing: 1, Extra: 1}, 100, -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Comparer{Chunk: 64, ReplicatedUpTo: tc.upTo}
			got, err := c.Compare(context.Background(), &SliceStream{Items: items(0, tc.src...)}, &SliceStream{Items: items(0, tc.tgt...)})
			if err != nil {
				t.Fatal(err)
			}
			if got.Matched != tc.want.Matched || got.Missing != tc.want.Missing || got.Extra != tc.want.Extra || got.Diverged != tc.want.Diverged ||
				got.Duplicates != tc.want.Duplicates || got.NotYetReplicated != tc.want.NotYetReplicated {
				t.Fatalf("got %+v want %+v", got, tc.want)
			}
			if tc.firstSrc >= 0 || tc.firstTgt >= 0 {
				if len(got.Differences) == 0 {
					t.Fatalf("no difference recorded: %+v", got)
				}
				d := got.Differences[0]
				if (tc.firstSrc >= 0 && d.SourceOffset != tc.firstSrc) || (tc.firstTgt >= 0 && d.TargetOffset != tc.firstTgt) {
					t.Fatalf("first difference %+v, want source %d target %d", d, tc.firstSrc, tc.firstTgt)
				}
			}
			if got.SourceRecords != int64(len(tc.src)) || got.TargetRecords != int64(len(tc.tgt)) {
				t.Fatalf("read %d/%d records", got.SourceRecords, got.TargetRecords)
			}
		})
	}
}

// A wholly different partition costs linear time: no range is bisected per differing record.
func TestCompareAllDifferent(t *testing.T) {
	var src, tgt []uint64
	for i := uint64(0); i < 200_000; i++ {
		src, tgt = append(src, 1_000_000+i), append(tgt, 9_000_000+i)
	}
	start := time.Now()
	got, err := (Comparer{Lookahead: 1000}).Compare(context.Background(), &SliceStream{Items: items(0, src...)}, &SliceStream{Items: items(0, tgt...)})
	if err != nil {
		t.Fatal(err)
	}
	if got.Diverged != 200_000 || got.Bisections != 1 {
		t.Fatalf("%+v", got)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("took %s", d)
	}
}

func TestRecordHash(t *testing.T) {
	ts := time.UnixMilli(1_700_000_000_000)
	base := cluster.Record{Key: []byte("k"), Value: []byte("v"), Headers: []cluster.Header{{Key: "a", Value: []byte("1")}, {Key: "b"}}, Timestamp: ts}
	h := RecordHash(&base, true)
	variants := map[string]cluster.Record{
		"null key":          {Key: nil, Value: []byte("v"), Headers: base.Headers, Timestamp: ts},
		"empty key":         {Key: []byte{}, Value: []byte("v"), Headers: base.Headers, Timestamp: ts},
		"tombstone":         {Key: []byte("k"), Headers: base.Headers, Timestamp: ts},
		"header dropped":    {Key: []byte("k"), Value: []byte("v"), Headers: base.Headers[:1], Timestamp: ts},
		"headers reordered": {Key: []byte("k"), Value: []byte("v"), Headers: []cluster.Header{base.Headers[1], base.Headers[0]}, Timestamp: ts},
		"timestamp":         {Key: []byte("k"), Value: []byte("v"), Headers: base.Headers, Timestamp: ts.Add(time.Millisecond)},
		"byte flipped":      {Key: []byte("k"), Value: []byte("w"), Headers: base.Headers, Timestamp: ts},
		"key/value shifted": {Key: []byte("kv"), Value: []byte{}, Headers: base.Headers, Timestamp: ts},
	}
	for name, r := range variants {
		if RecordHash(&r, true) == h {
			t.Errorf("%s: same digest", name)
		}
	}
	other := base
	other.Timestamp = ts.Add(time.Hour)
	if RecordHash(&other, false) != RecordHash(&base, false) {
		t.Error("without timestamps the digest depends on the timestamp")
	}
	// kmm's provenance header, last on a copy, is not content; anywhere else it is a header.
	copied := base
	copied.Headers = append(append([]cluster.Header(nil), base.Headers...), cluster.Header{Key: cluster.HeaderOrigin, Value: []byte("A")})
	if RecordHash(&copied, true) != h {
		t.Error("the copy with kmm's provenance header has another digest")
	}
	if recordDiff(&base, &copied, true) != "" {
		t.Errorf("the copy with kmm's provenance header differs: %s", recordDiff(&base, &copied, true))
	}
	first := base
	first.Headers = append([]cluster.Header{{Key: cluster.HeaderOrigin, Value: []byte("A")}}, base.Headers...)
	if RecordHash(&first, true) == h {
		t.Error("a provenance header before the others is ignored")
	}
}

// The compacted comparison's key map stays within its bound by keeping a deterministic sample
// of the keys, and two sides narrowed to the same sampling keep the same keys.
func TestKeyMapBounded(t *testing.T) {
	a := &keyMap{m: map[uint64]keyState{}, max: 1000}
	b := &keyMap{m: map[uint64]keyState{}, max: 1000}
	for i := uint64(0); i < 20_000; i++ {
		h := i * 0x9E3779B97F4A7C15
		a.put(h, keyState{value: i})
		if i < 5000 {
			b.put(h, keyState{value: i})
		}
	}
	if len(a.m) > 1000 || a.shift == 0 {
		t.Fatalf("a: %d keys, shift %d", len(a.m), a.shift)
	}
	shift := max(a.shift, b.shift)
	a.narrow(shift)
	b.narrow(shift)
	for h := range b.m {
		if _, ok := a.m[h]; !ok {
			t.Fatalf("key %x sampled on one side only", h)
		}
	}
	if len(b.m) == 0 || len(b.m) > len(a.m) {
		t.Fatalf("b kept %d keys, a %d", len(b.m), len(a.m))
	}
}
